/*
 * Selection by measurement: the rules file AMC_TUNING_FILE names, read once
 * when a context is created (bench/amc_tune.sh writes one), followed by the
 * library's built-in rules (am_coll/alg/tuning_builtin.rules, compiled in: the
 * defaults measured here; AMC_TUNING_BUILTIN=0 leaves them out). A rule says
 * which algorithm a collective runs for a range of communicator sizes and
 * bytes:
 *
 *   COLL  MIN_RANKS  MAX_RANKS  MIN_BYTES  MAX_BYTES  ALGORITHM
 *
 * bounds inclusive, the first matching rule wins, '#' starts a comment.
 * Precedence: a forced AMC_<COLL>_ALG, then the file's rules, then the
 * built-in ones, then amc_alg_auto.
 */
#ifndef AMC_TUNING_H
#define AMC_TUNING_H

#include "am_coll/alg/coll_args.h"
#include "base/log.h"

#include <stddef.h>
#include <stdio.h>

typedef struct amc_tuning_rule {
    int              min_ranks;
    int              max_ranks;
    size_t           min_bytes;
    size_t           max_bytes;
    const amc_alg_t *alg;      /* resolved at load: no name is compared on a call */
    unsigned         line;     /* in the file, for amc_info */
    int              builtin;  /* a built-in rule (line: of tuning_builtin.rules) */
} amc_tuning_rule_t;

/* The built-in rules' text (am_coll/alg/tuning_builtin.c, made from
 * am_coll/alg/tuning_builtin.rules by the build). */
extern const char amc_tuning_builtin_text[];

/* n first: every call reads n[coll], next to the context's alg_forced */
typedef struct amc_tuning {
    unsigned           n[AMC_COLL_LAST];     /* coll's rules: rules[first .. first + n), */
    unsigned           first[AMC_COLL_LAST]; /* in file order */
    amc_tuning_rule_t *rules;                /* one allocation, grouped by collective */
    unsigned           count;
} amc_tuning_t;

/* Reads path ("" : no file), then, if builtin, the built-in rules. A file
 * that cannot be read, an unknown collective or algorithm, a malformed line
 * or a MIN above its MAX is AMC_ERR_ARG, logged once here with file:line.
 * *t is empty on failure. */
int  amc_tuning_load(amc_tuning_t *t, const char *path, int builtin, const amc_log_t *log);
void amc_tuning_free(amc_tuning_t *t);

/* One line per rule in effect, or one saying there is none (amc_info). */
void amc_tuning_print(FILE *stream, const amc_tuning_t *t, const char *path);

/* The first rule of coll that holds ranks and bytes, or NULL. Call only
 * where t->n[coll] != 0: a collective without rules pays that test alone. */
static inline const amc_alg_t *amc_tuning_match(const amc_tuning_t *t, int coll, int ranks,
                                                size_t bytes)
{
    const amc_tuning_rule_t *r   = &t->rules[t->first[coll]];
    const amc_tuning_rule_t *end = r + t->n[coll];

    for (; r < end; r++) {
        if ((ranks >= r->min_ranks) && (ranks <= r->max_ranks) && (bytes >= r->min_bytes) &&
            (bytes <= r->max_bytes)) {
            return r->alg;
        }
    }
    return NULL;
}

#endif
