/*
 * The dissemination barrier's handlers, as in the patent: the header handler
 * records an arrival in the instance's bit vector and advances cur_val; the
 * completion step sends the rounds the new synchronization point releases;
 * the send completion handler counts send_complete. The instance finishes
 * when cur_val passed the last round and every send it posted completed.
 */
#ifndef AMC_BARRIER_HANDLER_H
#define AMC_BARRIER_HANDLER_H

#include "ctrl/coll_ctrl.h"
#include "handlers/wire.h"

struct amc_comm;

/* Header handler for a barrier message. */
void amc_barrier_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr);

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
