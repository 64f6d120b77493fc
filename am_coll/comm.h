/* Communicators: a group of ranks, a context id, and the control structure. */
#ifndef AMC_COMM_H
#define AMC_COMM_H

#include "am_coll/context.h"
#include "ctrl/coll_ctrl.h"
#include "amcoll.h"

#include <stdint.h>

#define AMC_COMM_MAGIC_ALIVE 0x434f4d4du  /* "COMM" */
#define AMC_COMM_MAGIC_DEAD  0xdeadc044u

#define AMC_CID_WORLD 1u

struct amc_comm {
    uint32_t         magic;
    int              rank;
    int              size;
    int              nrounds;      /* dissemination rounds: ceil(log2 size) */
    int             *peers;        /* communicator rank -> transport rank */
    uint64_t         cid;
    uint64_t         children;     /* dups and splits so far: their ids derive from it */
    amc_context_t   *ctx;
    amc_coll_ctrl_t  ctrl;
    struct amc_sched *sched_cache; /* schedules by shape, most recent first */
    struct amc_comm *next;         /* context hash chain */
    struct amc_comm *list_next;    /* zombie or graveyard list */
    unsigned         in_handlers;  /* arrivals being dispatched to it (context.h) */
};

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
 * structure: AMC_SUCCESS with ctrl->lock held, or AMC_ERR_NO_MEMORY with it
 * released and the reason (what could not start) logged. */
int  amc_comm_enter(amc_comm_t comm, struct amc_request *req, const char *what,
                    amc_coll_slot_t **slot_p);

/* Frees the control structure; the struct itself goes to the graveyard. */
void amc_comm_destroy(amc_comm_t comm);

/* Context id of the n-th child of parent: the same on every rank, no messages. */
uint64_t amc_comm_child_cid(uint64_t parent_cid, uint64_t n);

/* Collective over comm in the MPI sense (every rank calls it, same order),
 * but no messages: the child's context id derives from the parent's. */
int amc_comm_dup_internal(amc_comm_t comm, amc_comm_t *newcomm_p);

/* Collective over comm: an allgather of (color, key), then each color's
 * members ordered by key (ties by rank in comm). AMC_UNDEFINED gives
 * AMC_COMM_NULL. The child's id derives from the parent's, its child counter
 * and the color: the same on every member, distinct between siblings. */
int amc_comm_split_internal(amc_comm_t comm, int color, int key, amc_comm_t *newcomm_p);

/* The handle dies now; the communicator when its last instance finishes. */
int amc_comm_free_internal(amc_comm_t comm);

#endif
