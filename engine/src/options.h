/* iolab-bench: the declarative option table.
 *
 * Every option of the engine (core and backends) is one row of a table. The command-line
 * parser, --help, --list-options (JSON, read by Python and by the docs generator) and the
 * "config" object of the result JSON all walk these rows; nothing else declares an option. */
#ifndef IOLAB_OPTIONS_H
#define IOLAB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    IOLAB_OPT_BOOL,   /* bool; "--x" sets true, "--x=false" clears */
    IOLAB_OPT_INT,    /* int64_t */
    IOLAB_OPT_SIZE,   /* uint64_t bytes, K/M/G/T suffixes (binary) */
    IOLAB_OPT_COUNT,  /* uint64_t count, K/M/G suffixes allowed */
    IOLAB_OPT_DOUBLE, /* double */
    IOLAB_OPT_STR,    /* char * (owned by the option set, NULL when unset) */
    IOLAB_OPT_ENUM,   /* int: index into the '|'-separated choices */
    IOLAB_OPT_LIST,   /* iolab_strlist_t: repeatable */
    IOLAB_OPT_ACTION  /* no value, no storage: --help, --list-options, --version */
} iolab_opt_type_t;

/* One option. Backend options are namespaced "<backend>.<name>". */
typedef struct iolab_option {
    const char *name;     /* command-line name without "--" */
    const char *key;      /* key in the result JSON's "config" object */
    iolab_opt_type_t type;
    const char *def;      /* default, as it would be typed; NULL = unset */
    const char *unit;     /* "bytes", "count", "us", ... or NULL */
    const char *choices;  /* ENUM: "a|b|c"; NULL otherwise */
    const char *help;     /* one line */
    size_t offset;        /* offsetof the value in the struct this table fills */
} iolab_option_t;

/* A growable list of strings (the values of a repeatable option). */
typedef struct iolab_strlist {
    char **items;
    size_t n;
} iolab_strlist_t;

/* A table bound to the struct it fills. */
typedef struct iolab_optgroup {
    const char *owner;           /* "core" or a backend name */
    const iolab_option_t *table; /* terminated by a row with name == NULL */
    void *base;                  /* struct the offsets point into */
} iolab_optgroup_t;

/* Fill every option of the groups with its default. Returns 0, or -1 with a message in err. */
int iolab_options_defaults(iolab_optgroup_t *groups, size_t ngroups, char *err, size_t errlen);

/* Take values from the environment: option "posix.mode" from IOLAB_BENCH_POSIX_MODE (prefix
 * + name upper-cased, '-' and '.' as '_'); a list option's value is split at commas. Applied
 * after the defaults and before argv, so the command line wins. Returns 0, or -1 with err. */
int iolab_options_env(iolab_optgroup_t *groups, size_t ngroups, const char *prefix, char *err,
                      size_t errlen);

/* Parse argv (argv[0] is skipped) into the groups. An ACTION option found is returned through
 * *action (its name, or NULL). Returns 0, or -1 with one line in err (what, how to fix). */
int iolab_options_parse(iolab_optgroup_t *groups, size_t ngroups, int argc, char **argv,
                        const char **action, char *err, size_t errlen);

/* Parse "4K", "1M", "2g", "100" into bytes. Returns 0, or -1 on bad syntax/overflow. */
int iolab_size_parse(const char *s, uint64_t *out);

/* Print the table as a JSON array of {name, type, default, unit, choices, help}. The api
 * option's choices are replaced by api_choices when not NULL. */
void iolab_options_list_json(const iolab_optgroup_t *groups, size_t ngroups,
                             const char *api_choices, FILE *out);

/* Print --help text generated from the table. */
void iolab_options_help(const iolab_optgroup_t *groups, size_t ngroups, FILE *out);

/* Free strings and lists the parser allocated. */
void iolab_options_free(iolab_optgroup_t *groups, size_t ngroups);

/* Append a copy of s to the list. Returns 0 or -1 (out of memory). */
int iolab_strlist_add(iolab_strlist_t *l, const char *s);
void iolab_strlist_free(iolab_strlist_t *l);

/* Name of choice number idx of an ENUM option ("" when out of range); buf gets the copy. */
const char *iolab_option_choice(const iolab_option_t *o, int idx, char *buf, size_t buflen);

#endif
