/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tuning rules a context holds (amc_context_t.tuning), and the match that
 * selection runs on every call. Read, checked and resolved to algorithms by
 * am_coll/alg/tuning.h (which documents the file); here only what the
 * context embeds, so that the context does not depend on the algorithms.
 */
#ifndef AMC_TUNING_RULES_H
#define AMC_TUNING_RULES_H

#include "am_coll/sched/sched.h"

#include <stddef.h>

struct amc_alg;

typedef struct amc_tuning_rule {
    int              min_ranks;
    int              max_ranks;
    size_t           min_bytes;
    size_t           max_bytes;
    const struct amc_alg *alg; /* resolved at load: no name is compared on a call */
    unsigned         line;     /* in the file, for amc_info */
    int              builtin;  /* a built-in rule (line: of tuning_builtin.rules) */
} amc_tuning_rule_t;

/* n first: every call reads n[coll], next to the context's alg_forced */
typedef struct amc_tuning {
    unsigned           n[AMC_COLL_LAST];     /* coll's rules: rules[first .. first + n), */
    unsigned           first[AMC_COLL_LAST]; /* in file order */
    amc_tuning_rule_t *rules;                /* one allocation, grouped by collective */
    unsigned           count;
} amc_tuning_t;

/* The first rule of coll that holds ranks and bytes, or NULL. Call only
 * where t->n[coll] != 0: a collective without rules pays that test alone. */
static inline const struct amc_alg *amc_tuning_match(const amc_tuning_t *t, int coll,
                                                     int ranks, size_t bytes)
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
