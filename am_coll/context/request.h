/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests: the handle of one running collective instance. */
#ifndef AMC_REQUEST_H
#define AMC_REQUEST_H

#include "amcoll.h"
#include "ctrl/coll_ctrl.h"

#include <stdint.h>

#define AMC_REQUEST_MAGIC 0x52455155u  /* "REQU" */

struct amc_context;

struct amc_request {
    uint32_t         magic;
    int              complete;     /* set by a handler under the ctrl lock, read lock-free */
    int              status;
    int              heap;         /* malloc'd by amc_i*, else the caller's stack */
    struct amc_comm *comm;
    amc_coll_slot_t *slot;         /* valid while !complete, under ctrl->lock */
    double           deadline;     /* AMC_TIMEOUT from the first test or wait; 0 unset */
    int              persistent;   /* amc_X_init: restarted by amc_start, kept when done */
    int              active;       /* persistent: started, not yet completed by test/wait */
    struct amc_coll_args *args;    /* persistent data collective: the call; NULL: barrier */
    int              tracked;      /* counted by the progress thread until complete */
    uint32_t         comm_gen;     /* persistent: comm->gen when made (amc_start checks) */
    struct amc_comm_create *create; /* amc_comm_idup: the creation this agreement ends */
    struct amc_comm **create_out;  /* amc_comm_idup: the caller's handle */
};

void amc_request_init(struct amc_request *req, struct amc_comm *comm, int heap);

/* A request for a non-blocking call on comm (heap), from the context's free
 * list: no malloc per call; NULL without memory. */
struct amc_request *amc_request_alloc(struct amc_comm *comm);

/* Gives a heap request (and its persistent call) back. */
void amc_request_release(struct amc_request *req);

/* Frees the context's free list (at its destruction). */
void amc_request_free_list(struct amc_context *ctx);

/* A persistent request for the call (args NULL: a barrier), inactive. */
int  amc_request_persistent_new(struct amc_comm *comm, const struct amc_coll_args *args,
                                struct amc_request **req_p);

/* Unhooks a request from its running instance, which finishes unobserved. */
void amc_request_detach(struct amc_request *req);

/* Teardown with the request still running: a heap request is freed (its
 * handle dies with the context), a stack one is marked failed. */
void amc_request_drop(struct amc_request *req);

/* Non-blocking starts: call begin before the start (the request may complete
 * inside it), then end with the start's status (amc_request_end_start,
 * am_coll/context/wait.h). They hand the request to the progress thread, if
 * there is one. */
void amc_request_begin_nb(struct amc_request *req);

/* The progress thread no longer counts it (nobody waits for it any more). */
void amc_request_untrack(struct amc_request *req);

/* Called by the collective with ctrl->lock held. */
void amc_request_complete(struct amc_request *req, int status);

int  amc_request_is_complete(const struct amc_request *req);

#endif
