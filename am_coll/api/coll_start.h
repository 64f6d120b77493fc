/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which engine runs a call (am_coll/api/coll_start.c): the barrier's rounds
 * for the small ones whose algorithm says so, a schedule for the rest.
 */
#ifndef AMC_COLL_START_H
#define AMC_COLL_START_H

#include "am_coll/alg/coll_args.h"

struct amc_comm;
struct amc_request;

/* Starts a collective on comm; req completes when this rank's part is done. */
int amc_coll_start(struct amc_comm *comm, const amc_coll_args_t *args, struct amc_request *req);

/* amc_coll_start, where *rounds says whether it ran on the barrier's rounds
 * by the choice the communicator kept for the same call (the usual call of
 * a loop: am_coll/api/api_memo.h remembers it). */
int amc_coll_start_rounds(struct amc_comm *comm, const amc_coll_args_t *args,
                          struct amc_request *req, int *rounds);

#endif
