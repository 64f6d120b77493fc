/* SPDX-License-Identifier: BSD-3-Clause */
/* The UCX active-message transport: one UCP worker per context. */
#ifndef AMC_UCX_H
#define AMC_UCX_H

#include "base/log.h"
#include "transport/bootstrap.h"
#include "transport/transport.h"

/* Which threads may call the worker: it is created in the matching UCX
 * thread mode (SINGLE, SERIALIZED, MULTI). GUARDED: one application thread
 * at a time plus the progress thread; the worker is SERIALIZED and the
 * transport takes a lock of its own around UCX calls, only while the
 * context's lock_live flag says the two may meet (it is down while the
 * progress thread is parked, so blocking collectives pay for no lock). */
typedef enum {
    AMC_UCX_THREADS_SINGLE,
    AMC_UCX_THREADS_SERIALIZED,
    AMC_UCX_THREADS_MULTI,
    AMC_UCX_THREADS_GUARDED
} amc_ucx_threads_t;

/* AMC_UCX_ERR_MODE_PEER's values: which endpoints have UCX's peer failure mode */
enum {
    AMC_UCX_ERR_MODE_NONE     = 0,
    AMC_UCX_ERR_MODE_ALL      = 1,
    AMC_UCX_ERR_MODE_OFF_NODE = 2
};

typedef struct amc_ucx_params {
    amc_ucx_threads_t threads;
    /* AMC_UCX_ERR_MODE_PEER (AMC_UCX_ERR_MODE_*): endpoints with
     * UCP_ERR_HANDLING_MODE_PEER, whose failures UCX reports (keepalive); it
     * moves shared-memory traffic to TCP unless UCX_MM_ERROR_HANDLING=y, so
     * by default only endpoints to other nodes (doc/design.md, "Dead peers") */
    int               err_mode_peer;
    /* AMC_FINALIZE_TIMEOUT: seconds the teardown may wait for peers; 0: no bound */
    double            finalize_timeout;
    /* AMC_SHM: mailboxes for the peers on this node (transport/shm.h) */
    int               shm;
    /* AMC_SHM_PULL: rendezvous data to them by pull (transport/shm_pull.c) */
    int               shm_pull;
} amc_ucx_params_t;

/* Takes ownership of boot: finalized when the transport is destroyed, or at
 * once if creation fails. */
int amc_ucx_transport_create(amc_bootstrap_t *boot, const amc_ucx_params_t *params,
                             const amc_log_t *log, amc_transport_t **tp_p);

#endif
