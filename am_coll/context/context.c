/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/context.h"
#include "base/status.h"

struct amc_comm *amc_context_world(amc_context_t *ctx)
{
    return ctx->world;
}

void amc_context_sleep(void *arg, int timeout_ms)
{
    amc_context_t *ctx = arg;

    ctx->tp->ops->sleep(ctx->tp, timeout_ms);
}

void amc_context_set_error(amc_context_t *ctx, int status)
{
    int expected = AMC_SUCCESS;

    __atomic_compare_exchange_n(&ctx->pending_err, &expected, status, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int amc_context_take_error(amc_context_t *ctx)
{
    if (__atomic_load_n(&ctx->pending_err, __ATOMIC_ACQUIRE) == AMC_SUCCESS) {
        return AMC_SUCCESS;
    }
    return __atomic_exchange_n(&ctx->pending_err, AMC_SUCCESS, __ATOMIC_ACQ_REL);
}

void amc_context_release_desc(void *arg, void *desc)
{
    amc_context_t *ctx = arg;

    if (amc_defer_release(&ctx->defer, desc) == AMC_SUCCESS) {
        return;
    }
    if (!amc_lock_live(ctx->lock_live_p)) {
        ctx->tp->ops->release(ctx->tp, desc); /* one thread: no lock order to break */
        return;
    }
    amc_error(&ctx->log, "out of memory: a rendezvous message is dropped without releasing "
              "it; its sender may wait until AMC_TIMEOUT");
}

void amc_context_flush_slow(amc_context_t *ctx)
{
    if (__atomic_load_n(&ctx->defer.closed, __ATOMIC_ACQUIRE)) {
        return; /* finalizing: the transport is gone */
    }
    amc_defer_run(&ctx->defer, ctx->tp);
    amc_flow_flush(&ctx->flow);
}

int amc_context_cid_reserve(amc_context_t *ctx, uint64_t *num_p)
{
    /* atomic: application threads may create on different parents at once */
    uint64_t num = __atomic_fetch_add(&ctx->cid_next, 1, __ATOMIC_RELAXED);

    if (num >= ctx->cid_limit) {
        amc_error(&ctx->log, "out of context ids: this rank took part in %llu communicator "
                  "creations", (unsigned long long)num);
        return AMC_ERR_NO_MEMORY;
    }
    *num_p = num;
    return AMC_SUCCESS;
}

uint64_t amc_context_cid_make(amc_context_t *ctx, uint64_t num, int leader)
{
    /* a bijection of (num, leader): num < cid_limit keeps it below 2^64, and
     * 0 and the world's 1 are never made */
    return AMC_CID_WORLD + 1 + num * (uint64_t)ctx->tp->size + (uint64_t)leader;
}
