/* Communicators: a group of ranks, a context id, and the control structure. */
#ifndef AMC_COMM_H
#define AMC_COMM_H

#include "am_coll/context/context.h"
#include "am_coll/context/request.h"
#include "ctrl/coll_ctrl.h"
#include "amcoll.h"

#include <stdint.h>

#define AMC_COMM_MAGIC_ALIVE 0x434f4d4du  /* "COMM" */
#define AMC_COMM_MAGIC_DEAD  0xdeadc044u

#define AMC_CID_WORLD 1u

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
    unsigned         in_handlers;  /* arrivals being dispatched to it (context.h) */
    int              broken;       /* a member died: AMC_ERR_PEER for good (peer_watch.h) */
    int              dead_rank;    /* that member's rank here, once broken */
};

/* The transport rank of communicator rank i. */
static inline int amc_comm_peer(const struct amc_comm *comm, int i)
{
    return (comm->group != NULL) ? comm->group->ranks[i] : i;
}

/* amc_early_release_fn_t of every communicator's control structure: gives a
 * dropped early message's descriptor or token back. arg is the comm. */
void amc_comm_drop_early(void *arg, amc_early_msg_t *msg);

/* A communicator of every transport rank, with the world context id. */
int  amc_comm_create_world(amc_context_t *ctx, amc_comm_t *comm_p);

/* AMC_SUCCESS if comm is a live communicator handle, else AMC_ERR_COMM. */
int  amc_comm_check(amc_comm_t comm);

/* Takes (and clears) the error a handler left on this communicator or its
 * context, AMC_SUCCESS if none. */
int  amc_comm_take_error(amc_comm_t comm);

/* Gives req the slot of comm's next instance and locks the control
 * structure: AMC_SUCCESS with ctrl->lock held, or an error with it released
 * and the reason (what could not start) logged: AMC_ERR_PEER when a member
 * died (am_coll/context/peer_watch.h), AMC_ERR_NO_MEMORY, or
 * AMC_ERR_PROTOCOL when the instance already failed here (a bcast this
 * rank forwarded before its call ended on a mismatch). */
int  amc_comm_enter(amc_comm_t comm, struct amc_request *req, const char *what,
                    amc_coll_slot_t **slot_p);

/* Frees the control structure; the struct itself becomes a tombstone
 * (context.h), so a stale handle reads as freed until its memory is reused. */
void amc_comm_destroy(amc_comm_t comm);

/* Collective over comm: an allreduce (max) of the leader's (rank 0's) id
 * number and of every rank's failure so far. Fails with the same code on
 * every rank when any rank could not create it (doc/design.md, "Context
 * ids"). */
int amc_comm_dup_internal(amc_comm_t comm, amc_comm_t *newcomm_p);

/* Collective over comm: an allgather of (color, key, failure so far, id
 * number), then each color's members ordered by key (ties by rank in comm);
 * the first member in comm's order is the leader whose number makes the id.
 * AMC_UNDEFINED gives AMC_COMM_NULL. A failure on any rank fails the split
 * on every rank of comm with the same code. */
int amc_comm_split_internal(amc_comm_t comm, int color, int key, amc_comm_t *newcomm_p);

/* amc_comm_id_reserve / amc_comm_create_group (amcoll.h): an id of this
 * rank's as a leader, and a communicator made by its members alone from an
 * id they agreed on by other means; local, nothing sent. */
int amc_comm_id_reserve_internal(amc_comm_t comm, uint64_t *id_p);
int amc_comm_create_group_internal(amc_comm_t parent, const int ranks[], int n, uint64_t id,
                                   amc_comm_t *newcomm_p);

/* amc_comm_idup: begins the dup; *req_p is the agreement's request, whose
 * completion (test, wait) calls amc_comm_idup_end with its status: that
 * writes the caller's handle and frees the creation, request included. A
 * request freed first is abandoned instead: a complete agreement's
 * communicator is freed, a running one runs on detached. */
struct amc_request;
int  amc_comm_idup_internal(amc_comm_t comm, amc_comm_t *newcomm_p, struct amc_request **req_p);
int  amc_comm_idup_end(struct amc_request *req, int status);
void amc_comm_idup_abandon(struct amc_request *req);

/* What each rank gives a split's allgather. */
typedef struct amc_comm_split_rec {
    int32_t  color;
    int32_t  key;
    int32_t  status;   /* the sender's failure so far, AMC_SUCCESS if none */
    int32_t  rank;     /* the sender's rank in the parent: filled in on receipt */
    uint64_t num;      /* the sender's reserved id number, if its color is defined */
} amc_comm_split_rec_t;

/* A dup or split in two halves around its agreement collective, which runs
 * like a non-blocking collective on the parent: the blocking calls wait for
 * it in between; a test on the unthreaded fake fabric delivers its messages
 * (tests/unit/harness.h). The struct must stay put while req runs. */
typedef struct amc_comm_create {
    amc_comm_t            parent;
    amc_comm_t            newcomm;   /* allocated before the agreement, or NULL */
    int                   split;     /* else a dup */
    int                   color;
    int                   failed;    /* this rank's own failure before the agreement */
    int                   nb;        /* amc_comm_idup: a non-blocking start */
    struct amc_request    req;       /* the agreement collective */
    void                 *xbuf;      /* the agreement's buffers, one heap block: */
    uint64_t             *mine;      /* dup: the leader's id number, the failure */
    uint64_t             *agreed;    /* dup: their maxima over the parent */
    amc_comm_split_rec_t *rec;       /* split: this rank's record */
    amc_comm_split_rec_t *recs;      /* split: every rank's, in parent order */
} amc_comm_create_t;

/* Does what can fail locally (memory, an id number) and starts the
 * agreement, which carries that failure to every rank. AMC_SUCCESS: wait
 * for op->req to complete, then call end with its status. An error: the
 * agreement could not even start here; nothing to end. */
int amc_comm_create_begin(amc_comm_create_t *op, amc_comm_t parent, int split, int color,
                          int key);

/* The agreed outcome: the new communicator (AMC_COMM_NULL for
 * AMC_UNDEFINED), or the error some rank reported, the same on every rank. */
int amc_comm_create_end(amc_comm_create_t *op, int status, amc_comm_t *newcomm_p);

/* The handle dies now; the communicator when its last instance finishes. */
int amc_comm_free_internal(amc_comm_t comm);

#endif
