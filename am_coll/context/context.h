/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A context holds everything one rank's library instance owns: the
 * configuration, the transport, and the communicators by context id.
 * The public API is a thin layer over one default context (api.c); a test
 * can create many contexts in one process over the fake transport.
 */
#ifndef AMC_CONTEXT_H
#define AMC_CONTEXT_H

#include "am_coll/context/config.h"
#include "am_coll/context/defer.h"
#include "am_coll/context/engines.h"
#include "am_coll/context/flow.h"
#include "am_coll/context/tuning_rules.h"
#include "base/log.h"
#include "base/spinlock.h"
#include "handlers/am_handler.h"
#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

#define AMC_CID_WORLD   1u   /* the world communicator's context id */
#define AMC_CID_BUCKETS 64   /* power of two */
#define AMC_DEAD_CIDS   64   /* freed context ids remembered to reject late messages */
#define AMC_TOMBSTONES  64   /* destroyed communicators kept before their memory is reused */

struct amc_comm;
struct amc_coll_inst;

/* A message for a communicator this rank has not created yet. */
typedef struct amc_orphan {
    struct amc_orphan *next;
    uint64_t           cid;
    void              *desc;       /* rendezvous data still at the sender */
    size_t             hdr_len;
    size_t             len;
    unsigned char      bytes[];  /* header, then data */
} amc_orphan_t;

typedef struct amc_context {
    amc_config_t     cfg;
    amc_am_table_t   am;           /* the header handler's dispatch table */
    amc_engines_t    engines;      /* the engines' handlers and hooks (engines.h) */
    const struct amc_alg *alg_forced[AMC_COLL_LAST]; /* AMC_<COLL>_ALG resolved (NULL: auto) */
    amc_tuning_t     tuning;       /* AMC_TUNING_FILE's rules, resolved */
    amc_log_t        log;
    amc_transport_t *tp;
    int              multiple;     /* AMC_THREAD_MULTIPLE: application threads meet */
    int              threaded;     /* threads may ever meet: multiple or a progress thread */
    int              lock_live;    /* threads may meet now: locks are taken (spinlock.h) */
    const int       *lock_live_p;  /* &lock_live, or NULL when threads never meet */
    /* blocking calls on the barrier's rounds that ended within their call,
     * and those that began there and went on the machine
     * (am_coll/barrier/rounds_now.c; written only while threads cannot meet) */
    unsigned long long within_done, within_left;
    /* blocking calls that were their communicator's last one again, run
     * without its checks (am_coll/api/api_memo.h; the same rule) */
    unsigned long long api_memo;
    amc_spinlock_t   lock;         /* the tables below */
    struct amc_comm *table[AMC_CID_BUCKETS];
    struct amc_comm *world;
    struct amc_comm *zombies;      /* freed by the user, instances still running */
    struct amc_request *req_free;  /* non-blocking requests to reuse (am_coll/context/request.c) */
    unsigned         req_free_count;
    struct amc_comm *tomb_head;    /* destroyed, oldest first: a stale handle reads as freed */
    struct amc_comm *tomb_tail;    /* until its memory is reused (amc_context_tomb_take) */
    unsigned         tomb_count;
    uint64_t         cid_next;     /* context ids: this rank's next number (amc_context_cid_reserve) */
    uint64_t         cid_limit;    /* numbers from here on do not fit a 64-bit id */
    unsigned         fail_allocs;  /* tests only: communicator allocations that fail next */
    amc_orphan_t    *orphans;
    unsigned         orphan_count;
    uint64_t         dead_cids[AMC_DEAD_CIDS];
    unsigned         dead_next;
    int              pending_err;  /* an error no communicator could take */
    unsigned         dead_seen;    /* tp->dead's count when last applied (peer_watch.c) */
    amc_peer_set_t   dead_told;    /* deaths a peer's notice told this rank of (dispatch.c) */
    amc_peer_set_t   dead_passed;  /* deaths this rank told the job of (peer_watch.c) */
    uint64_t         peer_check_next; /* usec: the idle paths' next look for dead peers */
    amc_flow_t       flow;         /* eager tokens per peer */
    amc_defer_queue_t defer;       /* transport calls decided on under a lock */
    struct amc_progress_thread *pt; /* AMC_PROGRESS_THREAD=1, else NULL */
    amc_spinlock_t   notice_lock;  /* a leaf: the abort notices in flight */
    struct amc_coll_notice *notices; /* am_coll/coll/coll_notice.c; freed at destruction */
    /* Told when an act of a scheduled collective becomes ready and when it
     * is done (AMC_ACT_TRACE_*, am_coll/coll/coll.h): tests check the order the
     * engine runs a graph in, the timeline recorder records it; NULL
     * otherwise (the engine pays one branch per act). */
    void           (*act_trace)(void *arg, const struct amc_coll_inst *inst, uint32_t act,
                                int event);
    void            *act_trace_arg;
    struct amc_timeline *timeline; /* the recorder on that hook (am_coll/coll/timeline.c), or NULL */
} amc_context_t;

/* Made and torn down by am_coll/api/context_open.h, above everything a
 * context wires together (engines, algorithms, timelines, the progress
 * thread). */

struct amc_comm *amc_context_world(amc_context_t *ctx);

/* amc_sleep_fn_t for amc_waiter_t */
void amc_context_sleep(void *ctx, int timeout_ms);

/* First error wins; take returns and clears it. */
void amc_context_set_error(amc_context_t *ctx, int status);
int  amc_context_take_error(amc_context_t *ctx);

/* Context ids (doc/design.md, "Context ids"): each creation takes the id
 * number reserved by one member, its leader, and makes the id from that
 * number and the leader's transport rank: distinct in the whole job for as
 * long as it runs, never reused. Reserve gives a number no other creation
 * gets from this rank, or AMC_ERR_NO_MEMORY once they are used up. */
int      amc_context_cid_reserve(amc_context_t *ctx, uint64_t *num_p);
uint64_t amc_context_cid_make(amc_context_t *ctx, uint64_t num, int leader);

/* amc_early_release_fn_t: gives an unread rendezvous descriptor back (queued:
 * may be called under a lock; amc_context_flush makes the call). */
void amc_context_release_desc(void *ctx, void *desc);

/* Makes the transport calls that handlers queued under their locks (defer.h)
 * and sends credits that fell due. Call with no amcoll lock held. */
void amc_context_flush_slow(amc_context_t *ctx);

/* Counts one on a counter of the context that only this thread writes
 * now (threads cannot meet: within_done, within_left, api_memo): no locked add. */
static inline void amc_context_count(unsigned long long *n)
{
    __atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static inline void amc_context_flush(amc_context_t *ctx)
{
    if (amc_defer_pending(&ctx->defer) || __atomic_load_n(&ctx->flow.any_due, __ATOMIC_RELAXED)) {
        amc_context_flush_slow(ctx);
    }
}

#endif
