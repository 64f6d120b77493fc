/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/stats.h"
#include "amcoll.h"

#include <stdio.h>
#include <string.h>

typedef struct amc_stat_entry {
    const char          *name;
    unsigned long long (*read)(amc_context_t *ctx);
} amc_stat_entry_t;

static unsigned long long amc_stat_endpoints(amc_context_t *ctx)
{
    return __atomic_load_n(&ctx->tp->eps_created, __ATOMIC_RELAXED);
}

static unsigned long long amc_stat_mailboxes_out(amc_context_t *ctx)
{
    return __atomic_load_n(&ctx->tp->mboxes_out, __ATOMIC_RELAXED);
}

static unsigned long long amc_stat_mailboxes_in(amc_context_t *ctx)
{
    return __atomic_load_n(&ctx->tp->mboxes_in, __ATOMIC_RELAXED);
}

static unsigned long long amc_stat_flow_peers(amc_context_t *ctx)
{
    return amc_flow_peers(&ctx->flow);
}

static unsigned long long amc_stat_flow_bytes(amc_context_t *ctx)
{
    return amc_flow_bytes(&ctx->flow);
}

static unsigned long long amc_stat_within_done(amc_context_t *ctx)
{
    return __atomic_load_n(&ctx->within_done, __ATOMIC_RELAXED);
}

static unsigned long long amc_stat_within_left(amc_context_t *ctx)
{
    return __atomic_load_n(&ctx->within_left, __ATOMIC_RELAXED);
}

static unsigned long long amc_stat_api_memo(amc_context_t *ctx)
{
    return __atomic_load_n(&ctx->api_memo, __ATOMIC_RELAXED);
}

static unsigned long long amc_stat_ranks(amc_context_t *ctx)
{
    return (unsigned long long)ctx->tp->size;
}

/* The names amcoll.h documents at amc_stat_get. */
static const amc_stat_entry_t amc_stat_table[] = {
    { "ranks",      amc_stat_ranks },
    { "endpoints",  amc_stat_endpoints },
    { "mailboxes_out", amc_stat_mailboxes_out },
    { "mailboxes_in",  amc_stat_mailboxes_in },
    { "flow_peers", amc_stat_flow_peers },
    { "flow_bytes", amc_stat_flow_bytes },
    { "within_done", amc_stat_within_done },
    { "within_left", amc_stat_within_left },
    { "api_memo",   amc_stat_api_memo },
};

#define AMC_STAT_COUNT (sizeof(amc_stat_table) / sizeof(amc_stat_table[0]))

int amc_context_stat(amc_context_t *ctx, const char *name, unsigned long long *value_p)
{
    size_t i;

    for (i = 0; i < AMC_STAT_COUNT; i++) {
        if (strcmp(name, amc_stat_table[i].name) == 0) {
            *value_p = amc_stat_table[i].read(ctx);
            return AMC_SUCCESS;
        }
    }
    return AMC_ERR_ARG;
}

void amc_context_stats_line(amc_context_t *ctx, char *buf, size_t len)
{
    size_t i, o;
    int    n;

    n = snprintf(buf, len, "amcoll stats rank %d:", ctx->tp->rank);
    o = (n > 0) ? (size_t)n : 0;
    for (i = 0; (i < AMC_STAT_COUNT) && (o < len); i++) {
        n = snprintf(buf + o, len - o, " %s %llu", amc_stat_table[i].name,
                     amc_stat_table[i].read(ctx));
        o += (n > 0) ? (size_t)n : 0;
    }
}
