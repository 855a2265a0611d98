/* iolab-bench: a small streaming JSON writer (commas, nesting, escaping, indentation). */
#ifndef IOLAB_JSON_H
#define IOLAB_JSON_H

#include <stdint.h>
#include <stdio.h>

#define IOLAB_JSON_DEPTH 32

typedef struct iolab_json {
    FILE *out;
    int depth;
    int count[IOLAB_JSON_DEPTH];  /* members written at each level */
} iolab_json_t;

/* key is NULL inside arrays. */
void iolab_json_init(iolab_json_t *j, FILE *out);
void iolab_json_obj(iolab_json_t *j, const char *key);
void iolab_json_arr(iolab_json_t *j, const char *key);
void iolab_json_end(iolab_json_t *j, char close);  /* '}' or ']' */
void iolab_json_str(iolab_json_t *j, const char *key, const char *v);  /* NULL -> null */
void iolab_json_num(iolab_json_t *j, const char *key, double v);      /* non-finite -> null */
void iolab_json_int(iolab_json_t *j, const char *key, int64_t v);
void iolab_json_uint(iolab_json_t *j, const char *key, uint64_t v);
void iolab_json_bool(iolab_json_t *j, const char *key, int v);
void iolab_json_null(iolab_json_t *j, const char *key);

#endif
