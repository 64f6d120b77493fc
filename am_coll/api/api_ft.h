/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amc_comm_revoke, _agree, _shrink and _failed (am_coll/api/api_ft.c) over
 * the agreement of am_coll/coll/coll_ft.h. The shrink comes in halves, so
 * that tests on the unthreaded fake fabric deliver between them.
 */
#ifndef AMC_API_FT_H
#define AMC_API_FT_H

#include "am_coll/coll/coll_ft.h"

/* Makes the shrunk communicator from a finished agreement (status: what
 * amc_ft_agree_test returned): the ranks of op->comm not in the decided
 * failed set, in order, with the id the leader reserved. */
int amc_ft_shrink_end(amc_ft_agree_t *op, int status, amc_comm_t *newcomm_p);

#endif
