/* iolab-bench: hints (see hints.h). */
#include "hints.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    return 0;
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
