/* iolab-bench: parsing, defaults, --help and --list-options from the option tables. */
#include "options.h"

#include <errno.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FIELD(base, o, type) ((type *)((char *)(base) + (o)->offset))

static const char *const type_names[] = {"bool", "int", "size", "count", "double",
                                         "string", "enum", "list", "action"};

int iolab_size_parse(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0')
        return -1;
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int iolab_strlist_add(iolab_strlist_t *l, const char *s)
{
    char **n = realloc(l->items, (l->n + 1) * sizeof *n);
    if (!n)
        return -1;
    l->items = n;
    if (!(l->items[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

void iolab_strlist_free(iolab_strlist_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

const char *iolab_option_choice(const iolab_option_t *o, int idx, char *buf, size_t buflen)
{
    buf[0] = '\0';
    const char *p = o->choices;
    for (int i = 0; p && *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (i == idx) {
            if (len >= buflen)
                len = buflen - 1;
            memcpy(buf, p, len);
            buf[len] = '\0';
            return buf;
        }
        p = bar ? bar + 1 : p + len;
    }
    return buf;
}

static int enum_index(const iolab_option_t *o, const char *v)
{
    char buf[64];
    for (int i = 0;; i++) {
        iolab_option_choice(o, i, buf, sizeof buf);
        if (!buf[0])
            return -1;
        if (strcasecmp(buf, v) == 0)
            return i;
    }
}

static int parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
        !strcasecmp(v, "on")) {
        *out = true;
        return 0;
    }
    if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
        !strcasecmp(v, "off")) {
        *out = false;
        return 0;
    }
    return -1;
}

/* Store value v into the row's field. Returns 0 or -1 with err filled. */
static int set_value(const iolab_option_t *o, void *base, const char *v, char *err, size_t errlen)
{
    char *end = NULL;
    switch (o->type) {
    case IOLAB_OPT_BOOL:
        if (parse_bool(v, FIELD(base, o, bool)) == 0)
            return 0;
        snprintf(err, errlen, "--%s=%s: not a boolean; use true or false", o->name, v);
        return -1;
    case IOLAB_OPT_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end) {
            snprintf(err, errlen, "--%s %s: not an integer", o->name, v);
            return -1;
        }
        *FIELD(base, o, int64_t) = x;
        return 0;
    }
    case IOLAB_OPT_SIZE:
    case IOLAB_OPT_COUNT:
        if (iolab_size_parse(v, FIELD(base, o, uint64_t)) == 0)
            return 0;
        snprintf(err, errlen, "--%s %s: not a %s (a whole number with an optional K, M, G or T "
                 "suffix, below 2^64)", o->name, v, o->type == IOLAB_OPT_SIZE ? "size" : "count");
        return -1;
    case IOLAB_OPT_DOUBLE:
        errno = 0;
        *FIELD(base, o, double) = strtod(v, &end);
        if (errno || end == v || *end) {
            snprintf(err, errlen, "--%s %s: not a number", o->name, v);
            return -1;
        }
        return 0;
    case IOLAB_OPT_STR: {
        char **s = FIELD(base, o, char *);
        free(*s);
        *s = strdup(v);
        return *s ? 0 : -1;
    }
    case IOLAB_OPT_ENUM: {
        int i = enum_index(o, v);
        if (i < 0) {
            snprintf(err, errlen, "--%s %s: unknown value; choose one of %s", o->name, v,
                     o->choices);
            return -1;
        }
        *FIELD(base, o, int) = i;
        return 0;
    }
    case IOLAB_OPT_LIST:
        return iolab_strlist_add(FIELD(base, o, iolab_strlist_t), v);
    case IOLAB_OPT_ACTION:
        return 0;
    }
    return -1;
}

int iolab_options_defaults(iolab_optgroup_t *groups, size_t ngroups, char *err, size_t errlen)
{
    for (size_t g = 0; g < ngroups; g++)
        for (const iolab_option_t *o = groups[g].table; o && o->name; o++)
            if (o->def && o->type != IOLAB_OPT_ACTION && o->type != IOLAB_OPT_LIST &&
                set_value(o, groups[g].base, o->def, err, errlen) != 0)
                return -1;
    return 0;
}

int iolab_options_env(iolab_optgroup_t *groups, size_t ngroups, const char *prefix, char *err,
                      size_t errlen)
{
    for (size_t g = 0; g < ngroups; g++)
        for (const iolab_option_t *o = groups[g].table; o && o->name; o++) {
            char var[128];
            int n = snprintf(var, sizeof var, "%s", prefix);
            for (const char *c = o->name; *c && n < (int)sizeof var - 1; c++)
                var[n++] = *c == '-' || *c == '.' ? '_' : (char)toupper((unsigned char)*c);
            var[n] = '\0';
            const char *v = getenv(var);
            if (!v || o->type == IOLAB_OPT_ACTION)
                continue;
            char *copy = strdup(v), *save = NULL;
            int rc = 0;
            if (o->type == IOLAB_OPT_LIST) {
                for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save))
                    rc = set_value(o, groups[g].base, t, err, errlen);
            } else {
                rc = set_value(o, groups[g].base, copy, err, errlen);
            }
            free(copy);
            if (rc) {
                size_t used = strlen(err);
                snprintf(err + used, errlen - used, " (from the environment: %s)", var);
                return -1;
            }
        }
    return 0;
}

static const iolab_option_t *find(iolab_optgroup_t *groups, size_t ngroups, const char *name,
                                  size_t namelen, void **base)
{
    for (size_t g = 0; g < ngroups; g++)
        for (const iolab_option_t *o = groups[g].table; o && o->name; o++)
            if (strlen(o->name) == namelen && strncmp(o->name, name, namelen) == 0) {
                *base = groups[g].base;
                return o;
            }
    return NULL;
}

int iolab_options_parse(iolab_optgroup_t *groups, size_t ngroups, int argc, char **argv,
                        const char **action, char *err, size_t errlen)
{
    *action = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s'; options start with -- "
                     "(see --help)", a);
            return -1;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t namelen = eq ? (size_t)(eq - name) : strlen(name);
        void *base = NULL;
        const iolab_option_t *o = find(groups, ngroups, name, namelen, &base);
        if (!o) {
            snprintf(err, errlen, "unknown option '--%.*s'; see --help or --list-options",
                     (int)namelen, name);
            return -1;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (o->type == IOLAB_OPT_ACTION) {
            *action = o->name;
            continue;
        }
        if (!v && o->type == IOLAB_OPT_BOOL)
            v = "true";
        if (!v) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "--%s needs a value (%s)", o->name, o->help);
                return -1;
            }
            v = argv[++i];
        }
        if (set_value(o, base, v, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static void json_str(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

void iolab_options_list_json(const iolab_optgroup_t *groups, size_t ngroups,
                             const char *api_choices, FILE *out)
{
    int first = 1;
    fputs("[\n", out);
    for (size_t g = 0; g < ngroups; g++)
        for (const iolab_option_t *o = groups[g].table; o && o->name; o++) {
            fputs(first ? "  {" : ",\n  {", out);
            first = 0;
            fputs("\"name\": ", out);
            json_str(out, o->name);
            fputs(", \"key\": ", out);
            json_str(out, o->key);
            fprintf(out, ", \"type\": \"%s\", \"owner\": ", type_names[o->type]);
            json_str(out, groups[g].owner);
            fputs(", \"default\": ", out);
            json_str(out, o->def);
            fputs(", \"unit\": ", out);
            json_str(out, o->unit);
            fputs(", \"choices\": ", out);
            const char *ch = (api_choices && strcmp(o->name, "api") == 0) ? api_choices
                                                                           : o->choices;
            if (!ch) {
                fputs("null", out);
            } else {
                fputc('[', out);
                for (const char *p = ch; *p;) {
                    const char *bar = strchr(p, '|');
                    size_t len = bar ? (size_t)(bar - p) : strlen(p);
                    fprintf(out, "%s\"%.*s\"", p == ch ? "" : ", ", (int)len, p);
                    p = bar ? bar + 1 : p + len;
                }
                fputc(']', out);
            }
            fputs(", \"help\": ", out);
            json_str(out, o->help);
            fputc('}', out);
        }
    fputs("\n]\n", out);
}

void iolab_options_help(const iolab_optgroup_t *groups, size_t ngroups, FILE *out)
{
    fputs("usage: iolab-bench [options]   (run under mpirun or srun)\n", out);
    for (size_t g = 0; g < ngroups; g++) {
        if (!groups[g].table || !groups[g].table->name)
            continue;
        fprintf(out, "\n%s options:\n", groups[g].owner);
        for (const iolab_option_t *o = groups[g].table; o->name; o++) {
            char left[64];
            const char *arg = o->type == IOLAB_OPT_BOOL || o->type == IOLAB_OPT_ACTION
                                  ? "" : (o->choices ? o->choices : type_names[o->type]);
            snprintf(left, sizeof left, "--%s %s", o->name, arg);
            fprintf(out, "  %-30s %s", left, o->help);
            if (o->def && o->type != IOLAB_OPT_BOOL)
                fprintf(out, " [%s]", o->def);
            fputc('\n', out);
        }
    }
}

void iolab_options_free(iolab_optgroup_t *groups, size_t ngroups)
{
    for (size_t g = 0; g < ngroups; g++)
        for (const iolab_option_t *o = groups[g].table; o && o->name; o++) {
            if (o->type == IOLAB_OPT_STR) {
                char **s = FIELD(groups[g].base, o, char *);
                free(*s);
                *s = NULL;
            } else if (o->type == IOLAB_OPT_LIST) {
                iolab_strlist_free(FIELD(groups[g].base, o, iolab_strlist_t));
            }
        }
}
