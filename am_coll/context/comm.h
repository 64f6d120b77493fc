/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicators: a group of ranks, a context id, and the control structure. */
#ifndef AMC_COMM_H
#define AMC_COMM_H

#include "am_coll/context/context.h"
#include "ctrl/coll_ctrl.h"
#include "amcoll.h"

#include <stdint.h>

#define AMC_COMM_MAGIC_ALIVE 0x434f4d4du  /* "COMM" */
#define AMC_COMM_MAGIC_DEAD  0xdeadc044u


/* The members of a split, shared with its dups (reference counted): one
 * array per distinct membership, not one per communicator. World and its
 * dups have none: their rank i is transport rank i (doc/design.md, "Scale"). */
typedef struct amc_comm_group {
    unsigned refs;      /* atomic: communicators (and creations) holding it */
    int      size;
    int      ranks[];   /* communicator rank -> transport rank */
} amc_comm_group_t;

struct amc_comm {
    uint32_t         magic;
    uint32_t         gen;          /* uses of this memory so far: a persistent request
                                      remembers it, so a reused struct is not its comm */
    int              rank;
    int              size;
    int              nrounds;      /* dissemination rounds: ceil(log2 size) */
    amc_comm_group_t *group;       /* NULL: the identity map (world and its dups) */
    uint64_t         cid;          /* agreed by the members at creation (context.h) */
    amc_context_t   *ctx;
    amc_coll_ctrl_t  ctrl;
    struct amc_sched *sched_cache; /* schedules by shape, most recent first */
    struct amc_topo *topo;         /* its nodes, made at first use (am_coll/context/topo.h) */
    int              barrier_path; /* 0 not chosen yet, 1 the fast path, 2 the engine: fixed
                                    * once chosen (amc_barrier_on_engine) */
    struct amc_comm *next;         /* context hash chain */
    struct amc_comm *list_next;    /* zombie or tombstone list */
    uint32_t         in_handlers;  /* arrivals being dispatched to it (context.h) */
    int              broken;       /* AMC_COMM_BROKEN_* bits, for good: a member died
                                    * (peer_watch.h), the communicator was revoked
                                    * (am_coll/coll/coll_ft.h) */
    int              dead_rank;    /* that member's rank here, once broken */
    int              never_now;    /* the transport never sends to a member now
                                    * (AMC_SEND_NEVER, AMC_TAKE_NEVER: its messages go
                                    * by UCX): the calls within them are not tried
                                    * (am_coll/barrier/rounds_now.c) */
    void           **now_chans;    /* per member, the transport's channel to it for
                                    * those sends and the takes (chan_get), once it
                                    * has one (am_coll/barrier/round_hdr.h); made at
                                    * the first ask, freed with the communicator */
    uint64_t         choice[AMC_COLL_LAST]; /* the last call's algorithm per collective
                                    * (am_coll/api/coll_start.c); 0: none yet */
    void            *api_memo;     /* the last blocking call on the barrier's rounds, as
                                    * checked (am_coll/api/api_memo.h): the API's,
                                    * malloc'd there, freed with the communicator */
    struct amc_ft   *ft;           /* revoke and agreement state, made at first use
                                    * (am_coll/coll/coll_ft.c), freed with it; last, so
                                    * that the fields above keep their places */
};

#define AMC_COMM_BROKEN_PEER    1
#define AMC_COMM_BROKEN_REVOKED 2

/* What a broken communicator's calls end with: a revoked one says so first. */
static inline int amc_comm_broken_status(const struct amc_comm *comm)
{
    return (__atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE) & AMC_COMM_BROKEN_REVOKED)
               ? AMC_ERR_REVOKED
               : AMC_ERR_PEER;
}

/* The transport rank of communicator rank i. */
static inline int amc_comm_peer(const struct amc_comm *comm, int i)
{
    return (comm->group != NULL) ? comm->group->ranks[i] : i;
}

/* amc_early_release_fn_t of every communicator's control structure: gives a
 * dropped early message's descriptor or token back. arg is the comm. */
void amc_comm_drop_early(void *arg, amc_early_msg_t *msg);

/* Drops a reference to a split's member array (freed with the last). */
void amc_comm_group_release(amc_comm_group_t *group);

/* AMC_SUCCESS if comm is a live communicator handle, else AMC_ERR_COMM. */
int  amc_comm_check(amc_comm_t comm);

/* Takes (and clears) the error a handler left on this communicator or its
 * context, AMC_SUCCESS if none. */
int  amc_comm_take_error(amc_comm_t comm);

#endif
