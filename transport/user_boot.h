/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bootstrap of amc_init_boot: the caller's rank, size, node and
 * exchange (include/amcoll.h, amc_boot_t) as the transport takes a
 * bootstrap (transport/bootstrap.h).
 */
#ifndef AMC_USER_BOOT_H
#define AMC_USER_BOOT_H

#include "transport/bootstrap.h"
#include "base/log.h"
#include "amcoll.h"

/* Checks user and runs its first allgather (each rank's node, and that
 * every rank tells the same size and sits at its rank). AMC_ERR_ARG with
 * an error logged: a bad field, or ranks that disagree. */
int amc_user_bootstrap(const amc_boot_t *user, const amc_log_t *log, amc_bootstrap_t **bs_p);

#endif
