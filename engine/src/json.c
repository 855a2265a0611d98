/* iolab-bench: JSON writer (see json.h). */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void iolab_json_init(iolab_json_t *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->count[0] = 0;
}

static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* Comma, newline and indentation before a member, then its key. */
static void member(iolab_json_t *j, const char *key)
{
    if (j->depth > 0) {
        fputs(j->count[j->depth]++ ? ",\n" : "\n", j->out);
        fprintf(j->out, "%*s", 2 * j->depth, "");
    }
    if (key) {
        put_string(j->out, key);
        fputs(": ", j->out);
    }
}

static void open_(iolab_json_t *j, const char *key, char c)
{
    member(j, key);
    fputc(c, j->out);
    if (j->depth + 1 < IOLAB_JSON_DEPTH)
        j->count[++j->depth] = 0;
}

void iolab_json_obj(iolab_json_t *j, const char *key) { open_(j, key, '{'); }
void iolab_json_arr(iolab_json_t *j, const char *key) { open_(j, key, '['); }

void iolab_json_end(iolab_json_t *j, char close)
{
    int had = j->count[j->depth];
    j->depth--;
    if (had)
        fprintf(j->out, "\n%*s", 2 * j->depth, "");
    fputc(close, j->out);
    if (j->depth == 0)
        fputc('\n', j->out);
}

void iolab_json_str(iolab_json_t *j, const char *key, const char *v)
{
    member(j, key);
    if (v)
        put_string(j->out, v);
    else
        fputs("null", j->out);
}

void iolab_json_num(iolab_json_t *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v))
        fprintf(j->out, "%.9g", v);
    else
        fputs("null", j->out);
}

void iolab_json_int(iolab_json_t *j, const char *key, int64_t v)
{
    member(j, key);
    fprintf(j->out, "%" PRId64, v);
}

void iolab_json_uint(iolab_json_t *j, const char *key, uint64_t v)
{
    member(j, key);
    fprintf(j->out, "%" PRIu64, v);
}

void iolab_json_bool(iolab_json_t *j, const char *key, int v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->out);
}

void iolab_json_null(iolab_json_t *j, const char *key)
{
    member(j, key);
    fputs("null", j->out);
}
