/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/comm.h"
#include "base/clock.h"

/* The communicator rank of a dead member, or -1. */
static int amc_peer_watch_find(struct amc_comm *comm)
{
    const amc_peer_set_t *dead = &comm->ctx->tp->dead;
    int                   i;

    for (i = 0; i < comm->size; i++) {
        if (amc_peer_set_test(dead, amc_comm_peer(comm, i))) {
            return i;
        }
    }
    return -1;
}

/* Sticky: once a member is dead the communicator stays broken. */
static int amc_peer_watch_break(struct amc_comm *comm)
{
    int dead = amc_peer_watch_find(comm);

    if (dead < 0) {
        return 0;
    }
    comm->dead_rank = dead;
    __atomic_or_fetch(&comm->broken, AMC_COMM_BROKEN_PEER, __ATOMIC_RELEASE);
    return 1;
}

static void amc_peer_watch_log(struct amc_comm *comm)
{
    amc_error(&comm->ctx->log, "rank %d of communicator 0x%llx (job rank %d) died: every "
              "collective on it fails with AMC_ERR_PEER from now on",
              comm->dead_rank, (unsigned long long)comm->cid, amc_comm_peer(comm, comm->dead_rank));
}

/* Deaths this rank found itself and has not told the job of yet: told now
 * (am_coll/coll/coll_notice.c). Not under a lock: the notices go at the flush. */
static void amc_peer_watch_pass_on(amc_context_t *ctx)
{
    amc_transport_t *tp = ctx->tp;
    int              r, told = 0;

    for (r = 0; r < tp->size; r++) {
        if (amc_peer_set_test(&tp->dead, r) && !amc_peer_set_test(&ctx->dead_told, r) &&
            amc_peer_set_mark(&ctx->dead_passed, r)) {
            ctx->engines.peer_dead(ctx, r);
            told = 1;
        }
    }
    if (told) {
        amc_context_flush(ctx);
    }
}

void amc_peer_watch_apply(amc_context_t *ctx)
{
    struct amc_comm *comm, *broken[16];
    unsigned         seen, nbroken = 0, more = 0, i;

    amc_spin_lock(&ctx->lock);
    /* read before the scan: a rank marked during it is news next time */
    seen = amc_peer_set_count(&ctx->tp->dead);
    for (i = 0; i < AMC_CID_BUCKETS; i++) {
        for (comm = ctx->table[i]; comm != NULL; comm = comm->next) {
            if ((__atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE) & AMC_COMM_BROKEN_PEER) ||
                !amc_peer_watch_break(comm)) {
                continue;
            }
            if (nbroken < sizeof(broken) / sizeof(broken[0])) {
                broken[nbroken++] = comm;
            } else {
                more++;
            }
        }
    }
    __atomic_store_n(&ctx->dead_seen, seen, __ATOMIC_RELEASE);
    /* logged while the lock keeps them in the table */
    for (i = 0; i < nbroken; i++) {
        amc_peer_watch_log(broken[i]);
    }
    amc_spin_unlock(&ctx->lock);
    if (more > 0) {
        amc_error(&ctx->log, "and %u more communicators with a dead rank", more);
    }
    amc_peer_watch_pass_on(ctx);
}

void amc_peer_watch_poll(amc_context_t *ctx)
{
    amc_transport_t *tp = ctx->tp;
    uint64_t         now, next;

    if ((tp->ops->check_peers != NULL) && (tp->size > 1)) {
        now  = amc_clock_usec();
        next = __atomic_load_n(&ctx->peer_check_next, __ATOMIC_RELAXED);
        /* one thread looks per interval */
        if ((now >= next) &&
            __atomic_compare_exchange_n(&ctx->peer_check_next, &next, now + AMC_PEER_WATCH_USEC,
                                        0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            (void)tp->ops->check_peers(tp);
        }
    }
    if (amc_peer_watch_news(ctx)) {
        amc_peer_watch_apply(ctx);
    }
}

void amc_peer_watch_comm_new(struct amc_comm *comm)
{
    if ((amc_peer_set_count(&comm->ctx->tp->dead) > 0) && amc_peer_watch_break(comm)) {
        amc_peer_watch_log(comm);
    }
}

int amc_peer_watch_transport_error(struct amc_comm *comm)
{
    amc_transport_t *tp = comm->ctx->tp;

    if (tp->ops->check_peers != NULL) {
        (void)tp->ops->check_peers(tp);
    }
    return (amc_peer_watch_find(comm) >= 0) ? AMC_ERR_PEER : AMC_ERR_TRANSPORT;
}
