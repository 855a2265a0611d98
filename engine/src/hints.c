/* iolab-bench: hints (see hints.h). */
#include "hints.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int put(iolab_hint_t **v, size_t *n, const char *k, const char *val, const char *src)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].key, k) == 0) {
            free((*v)[i].value);
            (*v)[i].value = strdup(val);
            (*v)[i].source = src;
            return 0;
        }
    iolab_hint_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return -1;
    *v = nv;
    nv[*n] = (iolab_hint_t){strdup(k), strdup(val), src};
    (*n)++;
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Lines "key value" (ROMIO_HINTS format) or "key=value"; '#' starts a comment. */
static int read_file(iolab_hints_t *h, const char *path, const char *src, int must_exist,
                     char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (!must_exist)
            return 0;
        snprintf(err, errlen, "cannot read hints file %s: %s; give an existing file to "
                 "--hints-file", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        size_t klen = strcspn(s, " \t=");
        if (!s[klen]) {
            snprintf(err, errlen, "hints file %s line %d: '%s' has no value; write 'key value'",
                     path, lineno, s);
            rc = -1;
            break;
        }
        s[klen] = '\0';
        char *val = trim(s + klen + 1);
        if (*val == '=')
            val = trim(val + 1);
        put(&h->req, &h->nreq, s, val, src);
    }
    fclose(f);
    return rc;
}

/* Hints whose values have a fixed form: ROMIO's, Cray MPICH's, PnetCDF's, generated from the
 * settings catalogue (hint_forms.def; src/iolab/settings/c_table.py writes it). A wrong value
 * is not an error to the libraries (ROMIO's atoi reads "abc" as 0 and "1m" as 1), so it would
 * run, be stored and mislead; others pass unchecked (ROMIO reports unknown keys as ignored). */
static const struct {
    const char *key, *form;  /* form NULL: a whole number ... */
    unsigned long long least, multiple; /* ... of at least `least`, a multiple of `multiple` */
    const char *domain;      /* ... as the catalogue says it (NULL for words) */
} value_forms[] = {
#define IOLAB_HINT_FORM(key, form, least, multiple, domain) {key, form, least, multiple, domain},
#include "hint_forms.def"
#undef IOLAB_HINT_FORM
};

/* 1 when value is one of the '|'-separated choices (any case). */
static int one_of(const char *value, const char *choices)
{
    size_t n = strlen(value);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncasecmp(p, value, n) == 0)
            return 1;
        p = bar ? bar + 1 : p + len;
    }
    return 0;
}

/* 1 when the digits of v are a number in the domain (at least `least`, a multiple of
 * `multiple`); a number too large for 64 bits is not (no library reads it whole). */
static int in_domain(const char *v, unsigned long long least, unsigned long long multiple)
{
    errno = 0;
    unsigned long long n = strtoull(v, NULL, 10);
    return errno != ERANGE && n >= least && (multiple <= 1 || n % multiple == 0);
}

/* Each requested hint of a known key has a value of its form, and a number one of its
 * domain (cb_nodes=0, striping_unit=1000: the library ignores or misreads it). Returns 0, or
 * -1 with err. */
static int check_values(const iolab_hints_t *h, char *err, size_t errlen)
{
    for (size_t i = 0; i < h->nreq; i++)
        for (size_t k = 0; k < sizeof value_forms / sizeof *value_forms; k++) {
            const char *v = h->req[i].value, *form = value_forms[k].form;
            if (strcmp(h->req[i].key, value_forms[k].key) != 0)
                continue;
            int number = !form && v[0] && strspn(v, "0123456789") == strlen(v);
            if (form ? one_of(v, form)
                     : number && in_domain(v, value_forms[k].least, value_forms[k].multiple))
                break;
            char what[256];
            if (form)
                snprintf(what, sizeof what, "one of %s", form);
            else if (number)
                snprintf(what, sizeof what, "%s (no suffix)", value_forms[k].domain);
            else
                snprintf(what, sizeof what, "a whole number (bytes or a count, no suffix)");
            snprintf(err, errlen, "hint %s=%s (from the %s): %s takes %s; the library would "
                     "take it silently and measure something else", h->req[i].key, v,
                     h->req[i].source, h->req[i].key, what);
            return -1;
        }
    return 0;
}

int iolab_hints_collect(iolab_hints_t *h, const iolab_cfg_t *cfg, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    const char *env = getenv("ROMIO_HINTS");
    /* ROMIO itself skips a missing ROMIO_HINTS file silently; so do we. */
    if (env && *env && read_file(h, env, "ROMIO_HINTS", 0, err, errlen) != 0)
        return -1;
    if (cfg->hints_file && read_file(h, cfg->hints_file, "hints file", 1, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < cfg->hint.n; i++) {
        const char *kv = cfg->hint.items[i], *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            snprintf(err, errlen, "--hint %s: expected key=value, e.g. --hint "
                     "cb_buffer_size=16777216", kv);
            return -1;
        }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        put(&h->req, &h->nreq, key, eq + 1, "command line");
    }
    return check_values(h, err, errlen);
}

MPI_Info iolab_hints_info(const iolab_hints_t *h)
{
    if (h->nreq == 0)
        return MPI_INFO_NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    for (size_t i = 0; i < h->nreq; i++)
        MPI_Info_set(info, h->req[i].key, h->req[i].value);
    return info;
}

void iolab_hints_set_effective(iolab_hints_t *h, MPI_Info info, const char *library)
{
    h->have_effective = 1;
    h->verifiable = strstr(library, "Open MPI") == NULL;
    if (info == MPI_INFO_NULL)
        return;
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            put(&h->eff, &h->neff, key, val, NULL);
    }
}

int iolab_hints_ignored(const iolab_hints_t *h, size_t i)
{
    for (size_t j = 0; j < h->neff; j++)
        if (strcmp(h->eff[j].key, h->req[i].key) == 0)
            return strcmp(h->eff[j].value, h->req[i].value) != 0;
    return 1;
}

void iolab_hints_free(iolab_hints_t *h)
{
    for (size_t i = 0; i < h->nreq; i++) {
        free(h->req[i].key);
        free(h->req[i].value);
    }
    for (size_t i = 0; i < h->neff; i++) {
        free(h->eff[i].key);
        free(h->eff[i].value);
    }
    free(h->req);
    free(h->eff);
    memset(h, 0, sizeof *h);
}
