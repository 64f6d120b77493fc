/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timeline recorder (am_coll/coll/timeline.h). It sits on the engine's act
 * hook; while it is off the hook is NULL and the engine pays one branch
 * per act. Recording takes a mutex of its own: instances of different
 * communicators run under different locks.
 */
#include "am_coll/coll/timeline.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "base/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t inst;
    uint64_t seq;
    uint32_t act;
    uint32_t by;
    uint8_t  by_type;
} amc_tl_release_t;

typedef struct amc_timeline {
    pthread_mutex_t   lock;
    double            t0;
    int               rank;
    amc_tl_rec_t     *recs;
    size_t            n;
    size_t            cap;
    amc_tl_release_t *rel;    /* made ready, not started yet: who released them */
    size_t            nrel;
    size_t            caprel;
} amc_timeline_t;

void *amc_tl_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    size_t c = *cap ? *cap : 256;
    void  *g;

    while (c < need) {
        c *= 2;
    }
    if (c == *cap) {
        return p;
    }
    g = realloc(p, c * elem);
    if (g != NULL) {
        *cap = c;
    }
    return g;
}

static void amc_timeline_hook(void *arg, const amc_coll_inst_t *inst, uint32_t index, int event)
{
    amc_timeline_t        *tl  = arg;
    const amc_sched_act_t *act = &inst->sched->acts[index];
    double                 now = amc_clock_sec() - tl->t0;
    uint64_t               key = (uint64_t)(uintptr_t)inst, seq = inst->slot->seq;
    size_t                 i;
    void                  *g;

    pthread_mutex_lock(&tl->lock);
    if (event == AMC_ACT_TRACE_READY) {
        g = amc_tl_grow(tl->recs, &tl->cap, tl->n + 1, sizeof(*tl->recs));
        if (g == NULL) {
            goto out; /* a timeline with holes, not a failed collective */
        }
        tl->recs = g;
        amc_tl_rec_t *r = &tl->recs[tl->n++];

        memset(r, 0, sizeof(*r));
        r->start       = now;
        r->end         = -1.0;
        r->cid         = inst->comm->cid;
        r->seq         = seq;
        r->inst        = key;
        r->act         = index;
        r->type        = act->type;
        r->coll        = inst->coll;
        r->rank        = inst->comm->rank;
        r->released_by = UINT32_MAX;
        if ((act->type == AMC_ACT_SEND) || (act->type <= AMC_ACT_RECV_REDUCE_R)) {
            r->peer  = act->peer;
            r->tag   = act->tag;
            r->bytes = act->bytes;
        } else {
            r->peer  = -1;
            r->bytes = act->bytes;
        }
        for (i = tl->nrel; i > 0; i--) {
            if ((tl->rel[i - 1].inst == key) && (tl->rel[i - 1].seq == seq) &&
                (tl->rel[i - 1].act == index)) {
                r->released_by   = tl->rel[i - 1].by;
                r->released_type = tl->rel[i - 1].by_type;
                tl->rel[i - 1]   = tl->rel[--tl->nrel];
                break;
            }
        }
        goto out;
    }
    /* done: its successors that wait for nothing else are released by it */
    for (i = 0; i < act->nsucc; i++) {
        uint32_t s = inst->sched->succ[act->succ + i];

        if (inst->pending[s] == 1) {
            g = amc_tl_grow(tl->rel, &tl->caprel, tl->nrel + 1, sizeof(*tl->rel));
            if (g == NULL) {
                break;
            }
            tl->rel = g;
            tl->rel[tl->nrel].inst    = key;
            tl->rel[tl->nrel].seq     = seq;
            tl->rel[tl->nrel].act     = s;
            tl->rel[tl->nrel].by      = index;
            tl->rel[tl->nrel].by_type = act->type;
            tl->nrel++;
        }
    }
    for (i = tl->n; i > 0; i--) {
        amc_tl_rec_t *r = &tl->recs[i - 1];

        if ((r->inst == key) && (r->seq == seq) && (r->act == index) && (r->end < 0)) {
            r->end = now;
            break;
        }
    }
out:
    pthread_mutex_unlock(&tl->lock);
}

int amc_timeline_on(amc_context_t *ctx, int on)
{
    amc_timeline_t *tl = ctx->timeline;

    if (on && (tl == NULL)) {
        tl = calloc(1, sizeof(*tl));
        if (tl == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        pthread_mutex_init(&tl->lock, NULL);
        /* AMC_TIMELINE: the clock as it is, alike for the ranks of a host;
         * amc_goal run: from when it turns recording on, after a barrier */
        tl->t0              = (ctx->cfg.timeline[0] != '\0') ? 0.0 : amc_clock_sec();
        tl->rank            = ctx->tp->rank;
        ctx->timeline       = tl;
    }
    ctx->act_trace_arg = tl;
    /* the hook is read by handlers without a common lock: a plain store
     * is what they see next */
    __atomic_store_n(&ctx->act_trace, on ? amc_timeline_hook : NULL, __ATOMIC_RELEASE);
    return AMC_SUCCESS;
}

int amc_timeline_context_init(amc_context_t *ctx)
{
    return (ctx->cfg.timeline[0] != '\0') ? amc_timeline_on(ctx, 1) : AMC_SUCCESS;
}

static void amc_timeline_free(amc_timeline_t *tl)
{
    pthread_mutex_destroy(&tl->lock);
    free(tl->recs);
    free(tl->rel);
    free(tl);
}

void amc_timeline_context_fini(amc_context_t *ctx)
{
    amc_timeline_t *tl = ctx->timeline;
    char            path[512];
    FILE           *f;

    if (tl == NULL) {
        return;
    }
    if (ctx->act_trace == amc_timeline_hook) {
        ctx->act_trace     = NULL;
        ctx->act_trace_arg = NULL;
    }
    if (ctx->cfg.timeline[0] != '\0') {
        snprintf(path, sizeof(path), "%s.%d.tl", ctx->cfg.timeline, tl->rank);
        f = fopen(path, "wb");
        if ((f == NULL) || (fwrite(tl->recs, sizeof(*tl->recs), tl->n, f) != tl->n)) {
            amc_error(&ctx->log, "AMC_TIMELINE: cannot write %s", path);
        }
        if (f != NULL) {
            fclose(f);
        }
    }
    ctx->timeline = NULL;
    amc_timeline_free(tl);
}

const amc_tl_rec_t *amc_timeline_records(const amc_context_t *ctx, size_t *n)
{
    const amc_timeline_t *tl = ctx->timeline;

    *n = (tl != NULL) ? tl->n : 0;
    return (tl != NULL) ? tl->recs : NULL;
}
