/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/api/api.h"
#include "am_coll/api/context_open.h"
#include "am_coll/api/config_read.h"
#include "base/clock.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/stats.h"
#include "transport/pmix_boot.h"
#include "transport/user_boot.h"
#include "transport/ucx.h"

#include <stddef.h>
#include <stdio.h>

/* The only global state of the library: the default context behind the API. */
static amc_context_t  *amc_default_ctx;
static amc_api_state_t amc_default_state = AMC_API_UNINITIALIZED;

amc_api_state_t amc_api_state(void)
{
    return amc_default_state;
}

int amc_api_check_live(void)
{
    return (amc_default_state == AMC_API_FINALIZED) ? AMC_ERR_NOT_INITIALIZED : AMC_SUCCESS;
}

int amc_api_check_comm(amc_comm_t comm)
{
    if (amc_default_state == AMC_API_FINALIZED) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    if ((comm == NULL) && (amc_default_state == AMC_API_UNINITIALIZED)) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    return amc_comm_check(comm);
}

int amc_init(int *argc, char ***argv)
{
    int provided;

    return amc_init_thread(argc, argv, AMC_THREAD_SINGLE, &provided);
}

/* amc_init_thread over PMIx (user NULL) or the caller's exchange. */
static int amc_init_with(int required, int *provided, const amc_boot_t *user)
{
    amc_log_t        log = amc_log_from_env();
    amc_config_t     cfg;
    amc_bootstrap_t *boot;
    amc_transport_t *tp;
    amc_ucx_params_t params;
    int              granted, status;

    if (amc_default_state == AMC_API_INITIALIZED) {
        amc_error(&log, "amc_init called twice");
        return AMC_ERR_ARG;
    }
    if (amc_default_state == AMC_API_FINALIZED) {
        amc_error(&log, "amc_init called after amc_finalize");
        return AMC_ERR_NOT_INITIALIZED;
    }
    if ((provided == NULL) || (required < AMC_THREAD_SINGLE) || (required > AMC_THREAD_MULTIPLE)) {
        amc_error(&log, "amc_init_thread: invalid thread level %d or NULL provided", required);
        return AMC_ERR_ARG;
    }

    status = amc_config_read(&cfg, &log);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    log.level = cfg.log_level;

    /* 1 (MPI's FUNNELED, which api.md leaves out) gets SERIALIZED, the next
     * level up. Threads meet inside the library with MULTIPLE (locks always
     * on, worker MULTI) or with the progress thread alone (locks and a worker
     * guard only while it is not parked: doc/design.md, Locking and threads). */
    granted  = (required == AMC_THREAD_SINGLE + 1) ? AMC_THREAD_SERIALIZED : required;
    params.threads = (granted == AMC_THREAD_MULTIPLE) ? AMC_UCX_THREADS_MULTI
                     : cfg.progress_thread            ? AMC_UCX_THREADS_GUARDED
                     : (granted == AMC_THREAD_SINGLE) ? AMC_UCX_THREADS_SINGLE
                                                       : AMC_UCX_THREADS_SERIALIZED;
    params.err_mode_peer    = (int)cfg.ucx_err_mode_peer;
    params.finalize_timeout = cfg.finalize_timeout;
    params.shm              = (int)cfg.shm;
    params.shm_pull         = (int)cfg.shm_pull;

    status = (user != NULL) ? amc_user_bootstrap(user, &log, &boot) : amc_pmix_bootstrap(&boot);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    log.rank = boot->rank;

    status = amc_ucx_transport_create(boot, &params, &log, &tp);
    if (status != AMC_SUCCESS) {
        goto err; /* the transport owns boot from here, also on failure */
    }

    status = amc_context_create(&cfg, tp, granted == AMC_THREAD_MULTIPLE, &amc_default_ctx);
    if (status != AMC_SUCCESS) {
        goto err; /* the context destroyed tp */
    }

    *provided         = granted;
    amc_default_state = AMC_API_INITIALIZED;
    amc_info(&log, "initialized: rank %d of %d over %s, started by %s", tp->rank, tp->size,
             tp->name, (user != NULL) ? "the caller's exchange" : "PMIx");
    return AMC_SUCCESS;

err:
    return status;
}

int amc_init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    return amc_init_with(required, provided, NULL);
}

int amc_init_boot(int *argc, char ***argv, int required, int *provided, const amc_boot_t *boot)
{
    (void)argc;
    (void)argv;
    if (boot == NULL) {
        amc_log_t log = amc_log_from_env();

        amc_error(&log, "amc_init_boot: boot is NULL");
        return AMC_ERR_ARG;
    }
    return amc_init_with(required, provided, boot);
}

int amc_finalize(void)
{
    char line[256];

    if (amc_default_state != AMC_API_INITIALIZED) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    if (amc_default_ctx->cfg.stats) {
        amc_context_stats_line(amc_default_ctx, line, sizeof(line));
        fprintf(stderr, "%s\n", line);
    }
    amc_context_destroy(amc_default_ctx);
    amc_default_ctx   = NULL;
    amc_default_state = AMC_API_FINALIZED;
    return AMC_SUCCESS;
}

int amc_stat_get(const char *name, unsigned long long *value)
{
    if ((name == NULL) || (value == NULL)) {
        return AMC_ERR_ARG;
    }
    if (amc_default_state != AMC_API_INITIALIZED) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    return amc_context_stat(amc_default_ctx, name, value);
}

int amc_initialized(int *flag)
{
    if (flag == NULL) {
        return AMC_ERR_ARG;
    }
    *flag = (amc_default_state == AMC_API_INITIALIZED);
    return AMC_SUCCESS;
}

double amc_wtime(void)
{
    return amc_clock_sec();
}

int amc_wait_policy_current(amc_wait_policy_t *policy)
{
    if (amc_default_state != AMC_API_INITIALIZED) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    *policy = amc_default_ctx->cfg.wait;
    return AMC_SUCCESS;
}

int amc_set_idle_hook(void (*fn)(void *arg), void *arg)
{
    if (amc_default_state != AMC_API_INITIALIZED) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    amc_default_ctx->cfg.wait.idle_arg = arg;
    amc_default_ctx->cfg.wait.idle_fn  = fn;
    return AMC_SUCCESS;
}

amc_comm_t amc_comm_world(void)
{
    return (amc_default_state == AMC_API_INITIALIZED) ? amc_context_world(amc_default_ctx)
                                                       : AMC_COMM_NULL;
}
