/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rooted call's sender at N=2 that ends within its call, with no slot
 * (am_coll/barrier/ctrl_send_now.c).
 */
#ifndef AMC_CTRL_SEND_NOW_H
#define AMC_CTRL_SEND_NOW_H

#include "am_coll/alg/coll_args.h"

struct amc_comm;
struct amc_request;

/* A rooted call's sender at N=2 on the barrier's rounds whose message goes
 * now, on a token, before anything came for its instance: it ends here,
 * with no slot (amc_coll_ctrl_pass), and req completes: 1. 0: nothing was
 * done, the barrier's machine runs it. */
int amc_ctrl_coll_send_now(struct amc_comm *comm, struct amc_request *req,
                           const amc_coll_args_t *args);

#endif
