/* IOLAB_BUFFER parsing.  Syntax, in the spirit of Cray's IOBUF_PARAMS:
 *   IOLAB_BUFFER='ENTRY[,ENTRY...]'    ENTRY = PATTERN[:KEY[=VALUE]...]
 * PATTERN is an fnmatch glob on the path given to open/fopen, or %stdout / %stderr;
 * an empty pattern means '*'.  KEY: size=N[K|M|G], count=N, prefetch=N|auto,
 * verbose[=FILE].
 * The first entry that matches a path wins.  An empty variable means one entry '*' with
 * the defaults. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iolab_buffer.h"

iolab_buffer_config_t iolab_buffer_cfg;

/* "64M" -> 67108864; returns 0 or -1 on junk. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    unsigned long long mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1ULL << 10; end++; break;
    case 'M': mul = 1ULL << 20; end++; break;
    case 'G': mul = 1ULL << 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v > (1ULL << 40) / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* One KEY[=VALUE] of an entry. */
static int parse_key(char *kv, iolab_buffer_rule_t *r, iolab_buffer_config_t *cfg, char *err,
                     size_t errlen)
{
    char *val = strchr(kv, '=');
    if (val)
        *val++ = '\0';
    if (strcmp(kv, "verbose") == 0) {
        cfg->verbose = 1;
        if (val && strlen(val) >= sizeof cfg->verbose_path) {
            snprintf(err, errlen, "verbose file name too long");
            return -1;
        }
        snprintf(cfg->verbose_path, sizeof cfg->verbose_path, "%s", val ? val : "");
        return 0;
    }
    if (!val) {
        snprintf(err, errlen, "'%s' needs a value (e.g. size=64M)", kv);
        return -1;
    }
    if (strcmp(kv, "size") == 0) {
        if (parse_size(val, &r->size) == 0 && r->size >= 512 && r->size <= ((size_t)1 << 30))
            return 0;
        snprintf(err, errlen, "size=%s: expected 512 to 1G, e.g. size=64M", val);
    } else if (strcmp(kv, "count") == 0) {
        if (parse_int(val, 1, IOLAB_BUFFER_MAX_COUNT, &r->count) == 0)
            return 0;
        snprintf(err, errlen, "count=%s: expected 1 to %d", val, IOLAB_BUFFER_MAX_COUNT);
    } else if (strcmp(kv, "prefetch") == 0) {
        if (strcmp(val, "auto") == 0) {
            r->prefetch = IOLAB_BUFFER_DEFAULT_PREFETCH;
            r->prefetch_auto = 1;
            return 0;
        }
        if (parse_int(val, 0, IOLAB_BUFFER_MAX_COUNT - 1, &r->prefetch) == 0) {
            r->prefetch_auto = 0; /* an explicit depth reads ahead on every file system */
            return 0;
        }
        snprintf(err, errlen, "prefetch=%s: expected auto or 0 to %d", val,
                 IOLAB_BUFFER_MAX_COUNT - 1);
    } else {
        snprintf(err, errlen, "unknown key '%s' (size, count, prefetch, verbose)", kv);
    }
    return -1;
}

/* One ENTRY: PATTERN[:KEY=VALUE...]. */
static int parse_entry(char *entry, iolab_buffer_config_t *cfg, char *err, size_t errlen)
{
    if (cfg->nrules == (int)(sizeof cfg->rules / sizeof cfg->rules[0])) {
        snprintf(err, errlen, "too many entries");
        return -1;
    }
    iolab_buffer_rule_t *r = &cfg->rules[cfg->nrules];
    r->size = IOLAB_BUFFER_DEFAULT_SIZE;
    r->count = IOLAB_BUFFER_DEFAULT_COUNT;
    r->prefetch = IOLAB_BUFFER_DEFAULT_PREFETCH;
    r->prefetch_auto = IOLAB_BUFFER_DEFAULT_PREFETCH_AUTO;
    char *save = NULL;
    char *pat = entry;
    char *colon = strchr(entry, ':');
    if (colon)
        *colon = '\0';
    if (strlen(pat) >= sizeof r->pattern) {
        snprintf(err, errlen, "pattern too long");
        return -1;
    }
    snprintf(r->pattern, sizeof r->pattern, "%s", pat[0] ? pat : "*");
    if (r->pattern[0] == '%' && strcmp(r->pattern, "%stdout") && strcmp(r->pattern, "%stderr")) {
        snprintf(err, errlen, "'%s': only %%stdout and %%stderr are special", r->pattern);
        return -1;
    }
    if (colon) {
        for (char *kv = strtok_r(colon + 1, ":", &save); kv; kv = strtok_r(NULL, ":", &save))
            if (parse_key(kv, r, cfg, err, errlen) < 0)
                return -1;
    }
    if (r->prefetch >= r->count && r->prefetch > 0)
        r->prefetch = r->count - 1; /* the window holds the buffer being read + prefetch */
    cfg->nrules++;
    return 0;
}

int iolab_buffer_config_parse(const char *spec, iolab_buffer_config_t *cfg, char *err,
                              size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    char copy[4096];
    if (strlen(spec) >= sizeof copy) {
        snprintf(err, errlen, "value too long");
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", spec);
    char *save = NULL;
    int n = 0;
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save), n++)
        if (parse_entry(e, cfg, err, errlen) < 0) {
            memset(cfg, 0, sizeof *cfg);
            return -1;
        }
    if (n == 0) {
        char dflt[] = "*";
        parse_entry(dflt, cfg, err, errlen);
    }
    cfg->enabled = 1;
    return 0;
}

static const iolab_buffer_rule_t *match_one(const iolab_buffer_config_t *cfg, const char *path)
{
    for (int i = 0; i < cfg->nrules; i++)
        if (cfg->rules[i].pattern[0] != '%' && fnmatch(cfg->rules[i].pattern, path, 0) == 0)
            return &cfg->rules[i];
    return NULL;
}

/* The path as the program gave it, else (relative paths) as an absolute path: patterns
 * written from a Darshan log (iolab diagnose) name files absolutely. */
const iolab_buffer_rule_t *iolab_buffer_config_match(const iolab_buffer_config_t *cfg,
                                                     const char *path)
{
    if (!cfg->enabled || !path)
        return NULL;
    const iolab_buffer_rule_t *r = match_one(cfg, path);
    if (r || path[0] == '/')
        return r;
    char abs[4096];
    if (!getcwd(abs, sizeof abs))
        return NULL;
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    size_t n = strlen(abs);
    if (n + 1 + strlen(path) >= sizeof abs)
        return NULL;
    snprintf(abs + n, sizeof abs - n, "%s%s", n > 1 ? "/" : "", path);
    return match_one(cfg, abs);
}
