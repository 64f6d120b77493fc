/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A communicator's life on this rank: its memory (reused from tombstones),
 * its control structure, its entry into the context's table (with the
 * messages that arrived for it before), the sequence number each call
 * takes, and its teardown.
 */
#include "am_coll/context/comm_life.h"
#include "am_coll/context/comm_table.h"
#include "am_coll/context/dispatch.h"
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/request.h"
#include "am_coll/context/topo.h"
#include "base/status.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
static int amc_comm_rounds(int size)
{
    int rounds = 0;

    while (((int64_t)1 << rounds) < size) {
        rounds++;
    }
    return rounds;
}

/* Memory for a communicator: everything a creation can fail on locally, so
 * that it is known before the members agree; a split's member array for up
 * to max_size ranks (0: none, the communicator will share or need none).
 * The oldest tombstone is reused once enough wait (context.h). */
int amc_comm_alloc(amc_context_t *ctx, int max_size, amc_comm_t *comm_p)
{
    amc_comm_t comm;
    uint32_t   gen;

    if (ctx->fail_allocs > 0) {
        ctx->fail_allocs--; /* a test stands in for malloc */
        goto err;
    }
    comm = amc_context_tomb_take(ctx);
    if (comm != NULL) {
        gen = comm->gen;
        memset(comm, 0, sizeof(*comm));
        comm->gen = gen + 1;
    } else {
        comm = calloc(1, sizeof(*comm));
        if (comm == NULL) {
            goto err;
        }
    }
    comm->ctx = ctx;
    if (max_size > 0) {
        comm->group = malloc(sizeof(*comm->group) + (size_t)max_size * sizeof(int));
        if (comm->group == NULL) {
            comm->magic = AMC_COMM_MAGIC_DEAD;
            amc_context_tomb_push(ctx, comm);
            goto err;
        }
        comm->group->refs = 1;
        comm->group->size = max_size;
    }
    *comm_p = comm;
    return AMC_SUCCESS;

err:
    amc_error(&ctx->log, "out of memory creating a communicator of up to %d ranks", max_size);
    return AMC_ERR_NO_MEMORY;
}

/* Makes allocated memory a communicator; nothing here can fail. */
void amc_comm_setup(amc_comm_t comm, int rank, int size, uint64_t cid)
{
    comm->magic   = AMC_COMM_MAGIC_ALIVE;
    comm->rank    = rank;
    comm->size    = size;
    comm->nrounds = amc_comm_rounds(size);
    comm->cid     = cid;
    amc_coll_ctrl_init(&comm->ctrl, comm->ctx->cfg.early_max, comm->ctx->lock_live_p,
                       amc_comm_drop_early, comm, (unsigned)comm->nrounds,
                       amc_coll_ctrl_carries_data(size));
    comm->ctrl.ahead_max = amc_coll_ctrl_ahead_max(comm->ctx->cfg.early_max, size,
                                                   comm->ctx->cfg.eager_tokens);
    comm->broken    = 0;
    comm->dead_rank = -1;
    comm->ft        = NULL;
    amc_peer_watch_comm_new(comm);
}

/* What a communicator holds besides its struct goes, and the struct reads
 * as freed: a tombstone, memory a stale handle may still point to. */
static void amc_comm_bury(amc_context_t *ctx, amc_comm_t comm)
{
    amc_comm_group_release(comm->group);
    comm->group = NULL;
    amc_topo_free(comm->topo);
    comm->topo  = NULL;
    free(comm->api_memo);
    comm->api_memo = NULL;
    free(comm->now_chans);
    comm->now_chans = NULL;
    free(comm->ft); /* one block (am_coll/coll/coll_ft.c) */
    comm->ft       = NULL;
    comm->magic    = AMC_COMM_MAGIC_DEAD;
    amc_context_tomb_push(ctx, comm);
}

/* Gives back what amc_comm_alloc gave, set up or not. The struct becomes a
 * tombstone too: it may be memory a stale handle still points to. */
void amc_comm_unalloc(amc_comm_t comm, int set_up)
{
    if (set_up) {
        amc_coll_ctrl_cleanup(&comm->ctrl, NULL);
    }
    amc_comm_bury(comm->ctx, comm);
}

/* Teardown with an instance still in its slot. */
static void amc_comm_drop_slot(amc_coll_slot_t *slot)
{
    if (slot->req != NULL) {
        amc_request_drop(slot->req);
        slot->req = NULL;
    }
    if (slot->inst != NULL) {
        slot->comm->ctx->engines.inst_discard(slot->inst);
        slot->inst = NULL;
    }
}

static void amc_comm_free_schedules(amc_comm_t comm)
{
    amc_sched_t *sched, *next;

    for (sched = comm->sched_cache; sched != NULL; sched = next) {
        next = sched->next;
        comm->ctx->engines.sched_release(sched);
    }
    comm->sched_cache = NULL;
}

int amc_comm_insert(amc_comm_t comm)
{
    amc_context_t *ctx = comm->ctx;
    amc_orphan_t  *held, *orphan;
    int            status;

    status = amc_context_insert(ctx, comm, &held);
    if (status != AMC_SUCCESS) {
        return status;
    }
    while ((orphan = held) != NULL) {
        held = orphan->next;
        amc_dispatch_replay(ctx, comm, orphan->bytes, orphan->bytes + orphan->hdr_len,
                            orphan->len, orphan->desc);
        free(orphan);
    }
    return AMC_SUCCESS;
}

int amc_comm_create_world(amc_context_t *ctx, amc_comm_t *comm_p)
{
    amc_comm_t comm;
    int        status;

    /* no member array: rank i is transport rank i */
    status = amc_comm_alloc(ctx, 0, &comm);
    if (status != AMC_SUCCESS) {
        return status;
    }
    amc_comm_setup(comm, ctx->tp->rank, ctx->tp->size, AMC_CID_WORLD);
    status = amc_comm_insert(comm);
    if (status != AMC_SUCCESS) {
        amc_comm_unalloc(comm, 1);
        return status;
    }
    *comm_p = comm;
    return AMC_SUCCESS;
}

/* Takes the next sequence number for a call. Every rank gives its n-th call
 * on a communicator the n-th number: a call refused here for this rank's
 * own reasons (back-pressure, no memory) takes none, so its retry is in
 * step; a call that fails here for a reason all ranks share (a dead peer,
 * the instance already failed everywhere) fails alike on every rank. */
int amc_comm_enter(amc_comm_t comm, struct amc_request *req, const char *what,
                   amc_coll_slot_t **slot_p)
{
    amc_coll_ctrl_t  *ctrl = &comm->ctrl;
    amc_coll_lookup_t found = AMC_CTRL_NO_ROOM;
    amc_coll_slot_t  *slot;
    uint64_t          seq, base;
    int               logged;

    if (amc_peer_watch_news(comm->ctx)) {
        amc_peer_watch_apply(comm->ctx);
    }
    if (__atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE)) {
        /* nothing started, no sequence number taken: the peers that are
         * left fail the same call the same way */
        if (amc_comm_broken_status(comm) == AMC_ERR_REVOKED) {
            amc_debug(&comm->ctx->log, "%s on communicator 0x%llx: revoked", what,
                      (unsigned long long)comm->cid);
            return AMC_ERR_REVOKED;
        }
        amc_error(&comm->ctx->log, "%s on communicator 0x%llx: rank %d (job rank %d) died; "
                  "AMC_ERR_PEER", what, (unsigned long long)comm->cid, comm->dead_rank,
                  amc_comm_peer(comm, comm->dead_rank));
        return AMC_ERR_PEER;
    }
    amc_spin_lock(&ctrl->lock);
    /* back-pressure: refused before the sequence number is taken, so the
     * next start is this one again and the ranks stay in step */
    if (amc_coll_ctrl_may_start(ctrl)) {
        found = amc_coll_ctrl_slot(ctrl, ctrl->seq_next, comm, &slot);
    }
    if ((found == AMC_CTRL_OLDER) || ((found == AMC_CTRL_FOUND) && slot->done)) {
        /* A handler finished this rank's next instance before its call: a
         * bcast it forwarded ended on a mismatch (am_coll/coll/coll_engine.c,
         * amc_coll_abort), and its slot is done or already gone. The call
         * fails as the mismatch failed the instance, and takes the sequence
         * number, so that the next call is in step with the peers again. */
        ctrl->seq_next++;
        amc_spin_unlock(&ctrl->lock);
        amc_error(&comm->ctx->log, "%s on communicator 0x%llx: this rank already saw the "
                  "instance fail (ranks call different collectives)", what,
                  (unsigned long long)comm->cid);
        return AMC_ERR_PROTOCOL;
    }
    if (found != AMC_CTRL_FOUND) {
        seq    = ctrl->seq_next;
        base   = ctrl->seq_base;
        logged = ctrl->full_logged;
        ctrl->full_logged = (found == AMC_CTRL_NO_ROOM);
        amc_spin_unlock(&ctrl->lock);
        if (found != AMC_CTRL_NO_ROOM) {
            amc_error(&comm->ctx->log, "cannot start %s %llu on communicator 0x%llx: out of "
                      "memory", what, (unsigned long long)seq, (unsigned long long)comm->cid);
        } else if (!logged) {
            /* once until a start succeeds again: a caller that retries
             * after completing requests would repeat it many times */
            amc_error(&comm->ctx->log, "cannot start %s %llu on communicator 0x%llx: %llu "
                      "instances from the oldest one not finished here (%llu), at most %u "
                      "(8 + AMC_EARLY_MAX); nothing started: complete outstanding requests "
                      "and make this call again", what, (unsigned long long)seq,
                      (unsigned long long)comm->cid, (unsigned long long)(seq - base),
                      (unsigned long long)base, AMC_CTRL_WINDOW + ctrl->early_max);
        }
        return AMC_ERR_NO_MEMORY;
    }
    ctrl->full_logged = 0;
    ctrl->seq_next++;
    req->slot = slot;
    slot->req = req;
    *slot_p   = slot;
    return AMC_SUCCESS;
}

void amc_comm_destroy(amc_comm_t comm)
{
    amc_context_t *ctx = comm->ctx;

    amc_context_remove(ctx, comm);
    amc_coll_ctrl_cleanup(&comm->ctrl, amc_comm_drop_slot);
    amc_comm_free_schedules(comm);
    /* the small struct stays a while, so a stale handle reads as freed, not
     * as garbage */
    amc_comm_bury(ctx, comm);
    amc_context_flush(ctx); /* descriptors its early store gave back */
}
