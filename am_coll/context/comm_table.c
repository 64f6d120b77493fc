/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context's communicators by context id: the handlers' lookup, the
 * messages held for a communicator not created yet, the ids of freed ones,
 * and the lists of freed communicators (zombies still running, tombstones
 * whose memory a stale handle may still read).
 */
#include "am_coll/context/comm_table.h"
#include "am_coll/context/comm.h"
#include "base/status.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static inline unsigned amc_context_bucket(uint64_t cid)
{
    return (unsigned)((cid ^ (cid >> 17) ^ (cid >> 41)) & (AMC_CID_BUCKETS - 1));
}

struct amc_comm *amc_context_lookup(amc_context_t *ctx, uint64_t cid)
{
    struct amc_comm *comm;

    /* the world lives as long as the context: no lock for the common case */
    if ((ctx->world != NULL) && (ctx->world->cid == cid)) {
        return ctx->world;
    }
    amc_spin_lock(&ctx->lock);
    for (comm = ctx->table[amc_context_bucket(cid)]; comm != NULL; comm = comm->next) {
        if (comm->cid == cid) {
            /* a locked add only while another thread may free it meanwhile */
            (void)amc_live_add_u32(&comm->in_handlers, 1, ctx->lock_live_p);
            break;
        }
    }
    amc_spin_unlock(&ctx->lock);
    return comm;
}

void amc_context_unlookup(amc_context_t *ctx, struct amc_comm *comm)
{
    if (comm != ctx->world) {
        (void)amc_live_add_u32(&comm->in_handlers, UINT32_MAX, ctx->lock_live_p); /* -1 */
    }
}

int amc_context_cid_is_dead(amc_context_t *ctx, uint64_t cid)
{
    int i, dead = 0;

    amc_spin_lock(&ctx->lock);
    for (i = 0; i < AMC_DEAD_CIDS; i++) {
        if (ctx->dead_cids[i] == cid) {
            dead = 1;
            break;
        }
    }
    amc_spin_unlock(&ctx->lock);
    return dead;
}

int amc_context_insert(amc_context_t *ctx, struct amc_comm *comm, amc_orphan_t **held_p)
{
    amc_orphan_t **link, *orphan, *mine = NULL, **mine_tail = &mine;
    unsigned       bucket = amc_context_bucket(comm->cid);
    struct amc_comm *other;

    amc_spin_lock(&ctx->lock);
    for (other = ctx->table[bucket]; other != NULL; other = other->next) {
        if (other->cid == comm->cid) {
            amc_spin_unlock(&ctx->lock);
            amc_error(&ctx->log, "context id 0x%llx is already in use",
                      (unsigned long long)comm->cid);
            return AMC_ERR_COMM;
        }
    }
    comm->next          = ctx->table[bucket];
    ctx->table[bucket]  = comm;

    /* take this communicator's orphans, in arrival order */
    for (link = &ctx->orphans; (orphan = *link) != NULL;) {
        if (orphan->cid != comm->cid) {
            link = &orphan->next;
            continue;
        }
        *link        = orphan->next;
        orphan->next = NULL;
        *mine_tail   = orphan;
        mine_tail    = &orphan->next;
        ctx->orphan_count--;
    }
    amc_spin_unlock(&ctx->lock);
    *held_p = mine;
    return AMC_SUCCESS;
}

void amc_context_remove(amc_context_t *ctx, struct amc_comm *comm)
{
    struct amc_comm **link;
    unsigned          spins = 0;

    amc_spin_lock(&ctx->lock);
    for (link = &ctx->table[amc_context_bucket(comm->cid)]; *link != NULL;
         link = &(*link)->next) {
        if (*link == comm) {
            *link = comm->next;
            break;
        }
    }
    ctx->dead_cids[ctx->dead_next++ % AMC_DEAD_CIDS] = comm->cid;
    amc_spin_unlock(&ctx->lock);

    /* no new lookup finds it now; a handler still dispatching to it (the
     * progress thread's, say) finishes before its storage goes. Handlers
     * never block, so this is short. */
    while (__atomic_load_n(&comm->in_handlers, __ATOMIC_ACQUIRE) > 0) {
        if (++spins > 100) {
            sched_yield();
        }
    }
}

int amc_context_hold_orphan(amc_context_t *ctx, uint64_t cid, const void *hdr,
                            size_t hdr_len, const void *data, size_t len, void *desc,
                            struct amc_comm **created)
{
    amc_orphan_t    *orphan, **link;
    struct amc_comm *comm;

    if (__atomic_load_n(&ctx->orphan_count, __ATOMIC_RELAXED) >= ctx->cfg.orphan_max) {
        return AMC_ERR_PROTOCOL;
    }
    orphan = malloc(sizeof(*orphan) + hdr_len + ((desc != NULL) ? 0 : len));
    if (orphan == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    orphan->next    = NULL;
    orphan->cid     = cid;
    orphan->desc    = desc;
    orphan->hdr_len = hdr_len;
    orphan->len     = len;
    memcpy(orphan->bytes, hdr, hdr_len);
    if ((desc == NULL) && (len > 0)) {
        memcpy(orphan->bytes + hdr_len, data, len);
    }

    /* the lookup and the append are one step against amc_context_insert,
     * which replays only what it finds held: a communicator created since
     * this handler's lookup takes the message directly */
    amc_spin_lock(&ctx->lock);
    for (comm = ctx->table[amc_context_bucket(cid)]; comm != NULL; comm = comm->next) {
        if (comm->cid == cid) {
            __atomic_add_fetch(&comm->in_handlers, 1, __ATOMIC_ACQ_REL);
            break;
        }
    }
    if (comm == NULL) {
        for (link = &ctx->orphans; *link != NULL; link = &(*link)->next) {
        }
        *link = orphan;
        ctx->orphan_count++;
    }
    amc_spin_unlock(&ctx->lock);
    *created = comm;
    if (comm != NULL) {
        free(orphan);
    }
    return AMC_SUCCESS;
}

unsigned amc_context_orphans(amc_context_t *ctx)
{
    unsigned count;

    amc_spin_lock(&ctx->lock);
    count = ctx->orphan_count;
    amc_spin_unlock(&ctx->lock);
    return count;
}

void amc_context_tomb_push(amc_context_t *ctx, struct amc_comm *comm)
{
    amc_spin_lock(&ctx->lock);
    comm->list_next = NULL;
    if (ctx->tomb_tail != NULL) {
        ctx->tomb_tail->list_next = comm;
    } else {
        ctx->tomb_head = comm;
    }
    ctx->tomb_tail = comm;
    ctx->tomb_count++;
    amc_spin_unlock(&ctx->lock);
}

struct amc_comm *amc_context_tomb_take(amc_context_t *ctx)
{
    struct amc_comm *comm = NULL;

    amc_spin_lock(&ctx->lock);
    if (ctx->tomb_count > AMC_TOMBSTONES) {
        comm           = ctx->tomb_head;
        ctx->tomb_head = comm->list_next;
        if (ctx->tomb_head == NULL) {
            ctx->tomb_tail = NULL;
        }
        ctx->tomb_count--;
    }
    amc_spin_unlock(&ctx->lock);
    return comm;
}

void amc_context_add_zombie(amc_context_t *ctx, struct amc_comm *comm)
{
    amc_spin_lock(&ctx->lock);
    comm->list_next = ctx->zombies;
    ctx->zombies    = comm;
    amc_spin_unlock(&ctx->lock);
}
