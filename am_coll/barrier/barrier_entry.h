/* SPDX-License-Identifier: BSD-3-Clause */
/* The entries of the barrier and of the small collectives on its rounds:
 * which path a call takes (am_coll/barrier/barrier_entry.c). */
#ifndef AMC_BARRIER_ENTRY_H
#define AMC_BARRIER_ENTRY_H

#include "amcoll.h"

struct amc_request;
struct amc_coll_args;

/* Starts a barrier: the fast path, or the engine where AMC_BARRIER_ALG, a
 * tuning rule or the layout says so (amc_barrier_on_engine). */
int amc_barrier_start(amc_comm_t comm, struct amc_request *req);

/* Enters barrier instance seq_next on comm; req completes when it finishes. */
int amc_barrier_post(amc_comm_t comm, struct amc_request *req);

/* The same with red a small collective's call on the barrier's rounds
 * (am_coll/barrier/ctrl_coll.h), NULL for a barrier: within the call where
 * it can, else on the barrier's machine. */
int amc_barrier_enter(amc_comm_t comm, struct amc_request *req, const struct amc_coll_args *red);

#endif
