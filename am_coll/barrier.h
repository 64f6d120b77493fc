/* The dissemination barrier: entry point and diagnostics. */
#ifndef AMC_BARRIER_H
#define AMC_BARRIER_H

#include "amcoll.h"
#include "ctrl/coll_ctrl.h"

#include <stddef.h>

struct amc_request;

/* Starts a barrier: the fast path, or the engine if AMC_BARRIER_ALG says so. */
int  amc_barrier_start(amc_comm_t comm, struct amc_request *req);

/* Enters barrier instance seq_next on comm; req completes when it finishes. */
int  amc_barrier_post(amc_comm_t comm, struct amc_request *req);

/* With ctrl->lock held: what the instance waits for, for a timeout message. */
void amc_barrier_describe(amc_comm_t comm, const amc_coll_slot_t *slot, char *buf, size_t len);

#endif
