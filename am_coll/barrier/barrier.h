/* SPDX-License-Identifier: BSD-3-Clause */
/* The dissemination barrier (and the small collectives on its rounds): entry
 * point, handlers and diagnostics. */
#ifndef AMC_BARRIER_H
#define AMC_BARRIER_H

#include "amcoll.h"
#include "ctrl/coll_ctrl.h"
#include "handlers/wire.h"

#include <stddef.h>

struct amc_request;
struct amc_comm;

/* Whether amc_barrier_start (am_coll/barrier/barrier_entry.h) runs comm's barriers on the engine (*engine = 1)
 * or on the fast path (0): AMC_BARRIER_ALG, a rule, or the layout asks for
 * the engine. AMC_ERR_NO_MEMORY (logged) if the layout cannot be made. */
int  amc_barrier_on_engine(amc_comm_t comm, int *engine);

/* Where a call within it stopped (am_coll/barrier/rounds_now.c), for the
 * machine to go on from (amc_barrier_enter_left): rounds 0 .. round-1 taken, round's message
 * made (sent or not); for round > 0 that message and an alltoall's or
 * reduce_scatter_block's blocks as they are. */
typedef struct amc_now_left {
    int            round;
    int            sent;
    const void    *out;
    size_t         out_len;
    const void    *work;
    size_t         work_len;
} amc_now_left_t;

/* A barrier (red NULL) or a small collective's call (am_coll/barrier/ctrl_coll.h)
 * on the machine: a slot for instance seq_next, entered where a call
 * within it left it (left NULL: from the start); req completes when it
 * finishes. */
struct amc_coll_args;
int  amc_barrier_enter_left(amc_comm_t comm, struct amc_request *req,
                            const struct amc_coll_args *red, const amc_now_left_t *left);

/* With ctrl->lock held: what the instance waits for, for a timeout message. */
void amc_barrier_describe(amc_comm_t comm, const amc_coll_slot_t *slot, char *buf, size_t len);

/* Header handler for a message of the barrier's rounds: len bytes of data
 * (a small collective's partial result or blocks; none for a barrier). */
void amc_barrier_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                            size_t len);

/* Send completion handler; comp is the slot's send_comp. */
void amc_barrier_on_send_complete(amc_completion_t *comp, int status);

/* With ctrl->lock held, after a bit was set: claims the rounds that may now
 * be sent (*first, *count) and notifies the request if the instance is done. */
void amc_barrier_advance(struct amc_comm *comm, amc_coll_slot_t *slot,
                         int *first, int *count);

/* Without the lock: sends rounds first .. first+count-1 of the instance. */
void amc_barrier_send_rounds(struct amc_comm *comm, amc_coll_slot_t *slot,
                             int first, int count);

#endif
