/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators made from others (am_coll/api/comm_create.c): dup, split,
 * their non-blocking form, the group creation of amcoll.h, and free.
 */
#ifndef AMC_COMM_CREATE_H
#define AMC_COMM_CREATE_H

#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"

#include <stdint.h>

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
