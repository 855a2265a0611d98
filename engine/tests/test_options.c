/* ctest: the option table: sizes with suffixes, overflow, enums, lists, defaults, errors. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "options.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL line %d: ", __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

int main(void)
{
    uint64_t v = 0;
    CHECK(iolab_size_parse("4K", &v) == 0 && v == 4096, "4K -> %llu", (unsigned long long)v);
    CHECK(iolab_size_parse("1m", &v) == 0 && v == 1048576, "1m");
    CHECK(iolab_size_parse("2GiB", &v) == 0 && v == 2147483648ull, "2GiB");
    CHECK(iolab_size_parse("100", &v) == 0 && v == 100, "100");
    CHECK(iolab_size_parse("17000000T", &v) != 0, "overflow accepted");
    CHECK(iolab_size_parse("99999999999999999999", &v) != 0, "overflow accepted");
    CHECK(iolab_size_parse("-1", &v) != 0, "negative accepted");
    CHECK(iolab_size_parse("4X", &v) != 0, "bad suffix accepted");
    CHECK(iolab_size_parse("", &v) != 0, "empty accepted");

    iolab_cfg_t cfg;
    memset(&cfg, 0, sizeof cfg);
    iolab_optgroup_t g = {"core", iolab_config_options, &cfg};
    char err[512] = "";
    const char *action = NULL;
    CHECK(iolab_options_defaults(&g, 1, err, sizeof err) == 0, "defaults: %s", err);
    CHECK(cfg.transfer == 1048576 && cfg.block == 4194304 && cfg.reps == 1, "default sizes");
    char *argv[] = {"x", "--transfer", "64K", "--block=1M", "--layout", "strided", "--verify",
                    "--hint", "a=1", "--hint", "b=2", "--group-files", "shared", "--reps", "3"};
    int argc = (int)(sizeof argv / sizeof *argv);
    CHECK(iolab_options_parse(&g, 1, argc, argv, &action, err, sizeof err) == 0, "%s", err);
    CHECK(cfg.transfer == 65536 && cfg.block == 1048576, "sizes");
    CHECK(cfg.layout == IOLAB_LAYOUT_STRIDED, "layout");
    CHECK(cfg.verify, "verify");
    CHECK(cfg.hint.n == 2 && strcmp(cfg.hint.items[1], "b=2") == 0, "hints");
    CHECK(cfg.group_files == IOLAB_GROUP_FILES_SHARED && cfg.reps == 3, "enum, int");
    CHECK(action == NULL, "no action");

    char *bad1[] = {"x", "--layout", "diagonal"};
    CHECK(iolab_options_parse(&g, 1, 3, bad1, &action, err, sizeof err) != 0 &&
          strstr(err, "fpp|segmented") != NULL, "bad enum: %s", err);
    char *bad2[] = {"x", "--no-such"};
    CHECK(iolab_options_parse(&g, 1, 2, bad2, &action, err, sizeof err) != 0 &&
          strstr(err, "unknown option") != NULL, "unknown option: %s", err);
    char *bad3[] = {"x", "--transfer"};
    CHECK(iolab_options_parse(&g, 1, 2, bad3, &action, err, sizeof err) != 0 &&
          strstr(err, "needs a value") != NULL, "missing value: %s", err);
    char *bad4[] = {"x", "--block", "1Q"};
    CHECK(iolab_options_parse(&g, 1, 3, bad4, &action, err, sizeof err) != 0, "bad size");
    char *act[] = {"x", "--list-options"};
    CHECK(iolab_options_parse(&g, 1, 2, act, &action, err, sizeof err) == 0 && action &&
          strcmp(action, "list-options") == 0, "action");
    for (const iolab_option_t *o = iolab_config_options; o->name; o++)
        CHECK(o->help && *o->help && (o->type == IOLAB_OPT_ACTION || o->key),
              "option %s lacks help or key", o->name);
    iolab_options_free(&g, 1);
    printf("options: %d failures\n", failures);
    return failures ? 1 : 0;
}
