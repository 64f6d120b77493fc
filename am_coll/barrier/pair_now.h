/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A blocking exchange at N=2 that runs within its call, with no slot
 * (am_coll/barrier/pair_now.c).
 */
#ifndef AMC_PAIR_NOW_H
#define AMC_PAIR_NOW_H

#include "am_coll/alg/coll_args.h"

struct amc_comm;
struct amc_request;

enum {
    AMC_PAIR_NOT,  /* nothing done: the barrier's machine runs the call */
    AMC_PAIR_SENT, /* round 0 went: the machine runs the rest (amc_barrier_enter) */
    AMC_PAIR_DONE  /* the call ended here, req complete */
};

/* The barrier (args NULL) or a small collective on the barrier's rounds
 * whose rank waits for the peer's message (an exchange, a rooted one's
 * receiver), blocking, on 2 ranks whose messages go by the mailboxes:
 * AMC_PAIR_*. */
int amc_pair_now(struct amc_comm *comm, struct amc_request *req, const amc_coll_args_t *args);

#endif
