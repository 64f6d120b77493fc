/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters of one context, by name: what a rank holds per peer and how many
 * endpoints it made (doc/design.md, "Scale"). amc_stat_get reads the default
 * context's; AMC_STATS=1 prints them at amc_finalize; tests read any
 * context's.
 */
#ifndef AMC_STATS_H
#define AMC_STATS_H

#include "am_coll/context/context.h"

#include <stddef.h>

/* AMC_ERR_ARG for an unknown name. */
int  amc_context_stat(amc_context_t *ctx, const char *name, unsigned long long *value_p);

/* One line (no newline) naming every counter and its value. */
void amc_context_stats_line(amc_context_t *ctx, char *buf, size_t len);

#endif
