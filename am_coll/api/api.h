/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI-like API's default context and its life cycle. */
#ifndef AMC_API_H
#define AMC_API_H

#include "amcoll.h"
#include "am_coll/context/context.h"

typedef enum {
    AMC_API_UNINITIALIZED,
    AMC_API_INITIALIZED,
    AMC_API_FINALIZED
} amc_api_state_t;

amc_api_state_t amc_api_state(void);

/* Checks a communicator argument: AMC_ERR_NOT_INITIALIZED after amc_finalize
 * (or for a NULL one before amc_init), AMC_ERR_COMM for a bad handle. */
int amc_api_check_comm(amc_comm_t comm);

/* AMC_ERR_NOT_INITIALIZED after amc_finalize, else AMC_SUCCESS. */
int amc_api_check_live(void);

#endif
