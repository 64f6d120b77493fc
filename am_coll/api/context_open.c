/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/api/context_open.h"
#include "am_coll/coll/timeline.h"
#include "am_coll/alg/alg.h"
#include "am_coll/alg/tuning.h"
#include "am_coll/barrier/barrier.h"
#include "am_coll/coll/coll.h"
#include "am_coll/coll/coll_ft.h"
#include "am_coll/context/comm_life.h"
#include "am_coll/context/comm_table.h"
#include "am_coll/context/request.h"
#include "am_coll/context/progress_thread.h"
#include "am_coll/context/dispatch.h"

#include <stdlib.h>
#include <string.h>

/* Messages a pass takes from a mailbox ring where ranks share cores
 * (amc_transport_t.poll_batch): at N=8 on 2 cores, scatter 8 and 64 B took
 * 10-25% longer with one a pass than with this (OSU's method, both orders,
 * 9 runs), where at N=2 with a core each one a pass is 20% faster. */
#define AMC_CONTEXT_POLL_BATCH_SHARED 32u

static void amc_context_free_list(struct amc_comm *comm)
{
    struct amc_comm *next;

    for (; comm != NULL; comm = next) {
        next = comm->list_next;
        free(comm);
    }
}

/* Arrivals while a failed creation tears its transport down. */
static void amc_context_drop_recv(void *arg, const void *hdr, size_t hdr_len, const void *data,
                                  size_t len, void *desc)
{
    (void)arg;
    (void)hdr;
    (void)hdr_len;
    (void)data;
    (void)len;
    (void)desc; /* the transport is going: nothing waits for it */
}

/* The engines as the context's room calls them: set here, above both, so
 * that the context includes neither (am_coll/context/engines.h). */
static void amc_context_engines_set(amc_engines_t *engines)
{
    engines->barrier_arrival  = amc_barrier_on_arrival;
    engines->coll_arrival     = amc_coll_on_arrival;
    engines->ft_arrival       = amc_ft_on_arrival;
    engines->peer_dead        = amc_coll_notify_dead;
    engines->inst_discard     = amc_coll_inst_discard;
    engines->sched_release    = amc_coll_sched_release;
    engines->inst_fail        = amc_coll_fail_request;
    engines->barrier_describe = amc_barrier_describe;
}

int amc_context_create(const amc_config_t *cfg, amc_transport_t *tp, int threaded,
                       amc_context_t **ctx_p)
{
    amc_context_t *ctx;
    amc_comm_t     world;
    int            status;

    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        status = AMC_ERR_NO_MEMORY;
        goto err_destroy_tp;
    }
    ctx->cfg       = *cfg;
    amc_alg_resolve(&ctx->cfg, ctx->alg_forced);
    tp->poll_batch = amc_node_oversubscribed(tp->local_size) ? AMC_CONTEXT_POLL_BATCH_SHARED : 1;
    if (ctx->cfg.wait.spin_count == AMC_SPIN_AUTO) {
        /* the automatic spin is a time: passes of this transport's cost */
        ctx->cfg.wait.spin_count = amc_wait_spin_auto(tp->local_size) *
                                   ((tp->pass_scale > 0) ? tp->pass_scale : 1);
    }
    /* every rank must choose alike: where the launcher says the job spans
     * nodes but not which, no rank takes its own node's crowding (ranks per
     * core, which differ between nodes) for the job's */
    if (!amc_node_oversubscribed(tp->local_size) ||
        ((tp->nodes.nruns == 0) && (tp->local_size < tp->size))) {
        ctx->cfg.oversub_linear_max_ranks = 0;
    }
    ctx->log.level = cfg->log_level;
    ctx->log.rank  = tp->rank;
    ctx->tp        = tp;
    ctx->cid_limit = (UINT64_MAX - AMC_CID_WORLD - 1) / (uint64_t)tp->size;
    ctx->multiple  = threaded;
    ctx->threaded  = threaded || cfg->progress_thread;
    /* up until the progress thread first parks, it may run handlers */
    ctx->lock_live   = ctx->threaded;
    ctx->lock_live_p = ctx->threaded ? &ctx->lock_live : NULL;
    tp->lock_live    = ctx->lock_live_p;
    amc_spinlock_init(&ctx->lock, ctx->lock_live_p);
    amc_spinlock_init(&ctx->notice_lock, ctx->lock_live_p);
    amc_defer_init(&ctx->defer, ctx->lock_live_p);
    amc_context_engines_set(&ctx->engines);
    amc_dispatch_init(ctx);
    amc_transport_set_recv(tp, amc_am_recv, &ctx->am);

    status = amc_tuning_load(&ctx->tuning, ctx->cfg.tuning_file, (int)ctx->cfg.tuning_builtin,
                             &ctx->log);
    if (status != AMC_SUCCESS) {
        goto err_free_ctx; /* logged with file:line */
    }
    status = amc_flow_init(&ctx->flow, tp, tp->size, ctx->cfg.eager_tokens,
                           ctx->cfg.rndv_thresh, ctx->lock_live_p);
    if (status != AMC_SUCCESS) {
        goto err_tuning;
    }
    status = amc_peer_set_init(&ctx->dead_told, tp->size);
    if (status == AMC_SUCCESS) {
        status = amc_peer_set_init(&ctx->dead_passed, tp->size);
    }
    if (status != AMC_SUCCESS) {
        goto err_dead_sets;
    }
    status = amc_comm_create_world(ctx, &world);
    if (status != AMC_SUCCESS) {
        goto err_dead_sets;
    }
    ctx->world = world;
    status     = amc_timeline_context_init(ctx);
    if (status != AMC_SUCCESS) {
        goto err_world;
    }
    if (ctx->cfg.progress_thread) {
        status = amc_progress_thread_start(ctx, &ctx->pt);
        if (status != AMC_SUCCESS) {
            goto err_world;
        }
    }
    *ctx_p     = ctx;
    return AMC_SUCCESS;

err_world:
    amc_comm_destroy(world);
    amc_context_free_list(ctx->tomb_head);
err_dead_sets:
    amc_peer_set_cleanup(&ctx->dead_passed);
    amc_peer_set_cleanup(&ctx->dead_told);
    amc_flow_cleanup(&ctx->flow);
err_tuning:
    amc_tuning_free(&ctx->tuning);
err_free_ctx:
    amc_spinlock_destroy(&ctx->notice_lock);
    amc_spinlock_destroy(&ctx->lock);
    /* the transport's teardown must not reach into the freed context */
    amc_transport_set_recv(tp, amc_context_drop_recv, NULL);
    tp->lock_live = NULL;
    free(ctx);
err_destroy_tp:
    tp->ops->destroy(tp);
    return status;
}

void amc_context_destroy(amc_context_t *ctx)
{
    struct amc_comm *comm;
    amc_orphan_t    *orphan;
    int              i;

    if (ctx->pt != NULL) {
        amc_progress_thread_stop(ctx->pt); /* before anything it touches goes */
        ctx->pt = NULL;
    }
    amc_context_flush(ctx);
    /* transport first: its teardown may still run send completions that
     * touch the communicators */
    ctx->tp->ops->destroy(ctx->tp);
    amc_defer_close(&ctx->defer); /* descriptors died with the transport */
    amc_coll_notices_free(ctx);     /* and the completions of notices in flight */

    for (i = 0; i < AMC_CID_BUCKETS; i++) {
        while ((comm = ctx->table[i]) != NULL) {
            amc_comm_destroy(comm);
        }
    }
    amc_context_free_list(ctx->tomb_head);

    while ((orphan = ctx->orphans) != NULL) {
        ctx->orphans = orphan->next;
        free(orphan);
    }
    amc_request_free_list(ctx); /* after the communicators: teardown drops requests into it */
    amc_timeline_context_fini(ctx);
    amc_peer_set_cleanup(&ctx->dead_passed);
    amc_peer_set_cleanup(&ctx->dead_told);
    amc_flow_cleanup(&ctx->flow);
    amc_tuning_free(&ctx->tuning);
    amc_spinlock_destroy(&ctx->notice_lock);
    amc_spinlock_destroy(&ctx->lock);
    free(ctx);
}
