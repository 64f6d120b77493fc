/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A communicator's life on this rank (am_coll/context/comm_life.c).
 */
#ifndef AMC_COMM_LIFE_H
#define AMC_COMM_LIFE_H

#include "am_coll/context/comm.h"

#include <stdint.h>

struct amc_request;

/* Memory for a communicator: everything a creation can fail on locally, so
 * that it is known before the members agree; a split's member array for up
 * to max_size ranks (0: none). Logged when it fails. */
int  amc_comm_alloc(amc_context_t *ctx, int max_size, amc_comm_t *comm_p);

/* Makes allocated memory the communicator of rank in size with id cid;
 * nothing here can fail. */
void amc_comm_setup(amc_comm_t comm, int rank, int size, uint64_t cid);

/* Gives back what amc_comm_alloc gave, set up or not; the struct becomes a
 * tombstone. */
void amc_comm_unalloc(amc_comm_t comm, int set_up);

/* Enters a set-up communicator into the context's table and dispatches the
 * messages that arrived for it before (AMC_ERR_COMM: its id is in use). */
int  amc_comm_insert(amc_comm_t comm);

/* A communicator of every transport rank, with the world context id. */
int  amc_comm_create_world(amc_context_t *ctx, amc_comm_t *comm_p);


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


#endif
