/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dead peers, as the collectives see them. The transport marks the ranks it
 * finds dead (tp->dead: a PMIx event, a UCX endpoint error, a local peer's
 * pid gone); this file makes every communicator that contains one broken,
 * for good: its outstanding requests complete with AMC_ERR_PEER when they are
 * next tested or waited for, and every later start on it fails at once with
 * AMC_ERR_PEER (amc_comm_enter). Communicators without the dead rank are not
 * touched. Nothing here runs in a handler or on the hot path: the wait
 * loop's idle checks, amc_test, starts, and the progress thread's idle
 * passes look at one counter and do the rest only when it moved.
 */
#ifndef AMC_PEER_WATCH_H
#define AMC_PEER_WATCH_H

#include "am_coll/context/context.h"

struct amc_comm;

/* How often the idle paths ask the transport to look (pid checks cost a
 * system call); the sleep's poll set and the PMIx event wake waiters sooner. */
#define AMC_PEER_WATCH_USEC 100000u

/* Marks of the transport not yet applied to the communicators: one load. */
static inline int amc_peer_watch_news(amc_context_t *ctx)
{
    return amc_peer_set_count(&ctx->tp->dead) !=
           __atomic_load_n(&ctx->dead_seen, __ATOMIC_ACQUIRE);
}

/* The idle paths' look: asks the transport to check its peers, at most every
 * AMC_PEER_WATCH_USEC, then applies what is new. Takes the context lock:
 * never with a control lock held. */
void amc_peer_watch_poll(amc_context_t *ctx);

/* Breaks every communicator that contains a rank marked dead, logging once
 * per communicator. Takes the context lock. */
void amc_peer_watch_apply(amc_context_t *ctx);

/* A communicator just set up: broken at once if a member is already dead
 * (it was agreed on before this rank heard of the death). No lock. */
void amc_peer_watch_comm_new(struct amc_comm *comm);

/* A collective on comm failed in the transport: AMC_ERR_PEER if a member is
 * dead by now (the transport is asked to look first; no amcoll lock is
 * taken, so it may run under the control lock), else AMC_ERR_TRANSPORT. */
int  amc_peer_watch_transport_error(struct amc_comm *comm);

#endif
