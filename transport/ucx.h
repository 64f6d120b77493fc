/* The UCX active-message transport: one UCP worker per context. */
#ifndef AMC_UCX_H
#define AMC_UCX_H

#include "am_coll/log.h"
#include "transport/pmix_boot.h"
#include "transport/transport.h"

/* Takes ownership of boot: finalized when the transport is destroyed, or at
 * once if creation fails. serialized selects UCS_THREAD_MODE_SERIALIZED. */
int amc_ucx_transport_create(amc_pmix_boot_t *boot, int serialized, const amc_log_t *log,
                             amc_transport_t **tp_p);

#endif
