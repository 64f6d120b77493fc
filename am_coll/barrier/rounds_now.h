/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A blocking call on the barrier's rounds that runs within its call, with
 * no slot, at every N (am_coll/barrier/rounds_now.c).
 */
#ifndef AMC_ROUNDS_NOW_H
#define AMC_ROUNDS_NOW_H

#include "am_coll/alg/coll_args.h"

#include <stddef.h>

struct amc_comm;
struct amc_request;

/* The barrier (args NULL) or a small collective on the barrier's rounds,
 * blocking, whose messages go by the mailboxes: 1 where the call was run
 * here (ended within it, or handed on to the machine where it stopped),
 * *status its start's; 0 where nothing was done (the machine runs it). A
 * rooted one's sender at N=2 is amc_ctrl_coll_send_now's. */
int amc_rounds_now(struct amc_comm *comm, struct amc_request *req, const amc_coll_args_t *args,
                   int *status);

#endif
