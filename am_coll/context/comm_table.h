/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context's communicators by context id (am_coll/context/comm_table.c).
 */
#ifndef AMC_COMM_TABLE_H
#define AMC_COMM_TABLE_H

#include "am_coll/context/context.h"

#include <stddef.h>
#include <stdint.h>

struct amc_comm;

/* Communicator table (locks internally). Insert hands back the messages
 * held for the communicator, oldest first, for the caller to dispatch
 * (amc_comm_insert, am_coll/context/comm_life.h). A found communicator
 * (other than the world) cannot be destroyed until the caller, a handler,
 * is done with it and calls unlookup. */
struct amc_comm *amc_context_lookup(amc_context_t *ctx, uint64_t cid);
void amc_context_unlookup(amc_context_t *ctx, struct amc_comm *comm);
int  amc_context_insert(amc_context_t *ctx, struct amc_comm *comm, amc_orphan_t **held_p);
void amc_context_remove(amc_context_t *ctx, struct amc_comm *comm);
int  amc_context_cid_is_dead(amc_context_t *ctx, uint64_t cid);

/* Destroyed communicators: kept in a FIFO so that a stale handle reads as
 * freed; take gives the oldest back for reuse once more than AMC_TOMBSTONES
 * wait, else NULL. */
void             amc_context_tomb_push(amc_context_t *ctx, struct amc_comm *comm);
struct amc_comm *amc_context_tomb_take(amc_context_t *ctx);

/* Holds a message whose communicator is unknown; AMC_ERR_PROTOCOL when full.
 * If the communicator was created meanwhile, *created is set and the caller
 * dispatches the message to it instead. */
int  amc_context_hold_orphan(amc_context_t *ctx, uint64_t cid, const void *hdr,
                             size_t hdr_len, const void *data, size_t len, void *desc,
                             struct amc_comm **created);
unsigned amc_context_orphans(amc_context_t *ctx);

/* A user-freed communicator with instances still running. */
void amc_context_add_zombie(amc_context_t *ctx, struct amc_comm *comm);

#endif
