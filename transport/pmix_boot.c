#include "transport/pmix_boot.h"
#include "base/log.h"
#include "amcoll.h"

#include <pmix.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct amc_pmix_boot {
    pmix_proc_t myproc;
    int         rank;
    int         size;
    int         local_size;
    int         singleton;   /* no PMIx server: a job of one */
    int         initialized; /* PMIx_Init succeeded and needs PMIx_Finalize */
    amc_log_t   log;
};

/* Job-level integer keys live on the wildcard rank only (ucx-pmix-notes §4). */
static int amc_pmix_get_job_int(amc_pmix_boot_t *boot, const char *key, int *size_p)
{
    pmix_proc_t   wildcard;
    pmix_value_t *value = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&wildcard, boot->myproc.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wildcard, key, NULL, 0, &value);
    if ((rc != PMIX_SUCCESS) || (value == NULL)) {
        amc_error(&boot->log, "PMIx_Get(%s) failed: %s", key, PMIx_Error_string(rc));
        return AMC_ERR_TRANSPORT;
    }
    switch (value->type) {
    case PMIX_UINT32: *size_p = (int)value->data.uint32; break;
    case PMIX_INT:    *size_p = value->data.integer;     break;
    case PMIX_UINT16: *size_p = (int)value->data.uint16; break;
    default:
        amc_error(&boot->log, "%s has unexpected type %d", key, (int)value->type);
        PMIX_VALUE_RELEASE(value);
        return AMC_ERR_TRANSPORT;
    }
    PMIX_VALUE_RELEASE(value);
    return AMC_SUCCESS;
}

int amc_pmix_boot_init(amc_pmix_boot_t **boot_p)
{
    amc_pmix_boot_t *boot;
    pmix_status_t    rc;
    int              status;

    boot = calloc(1, sizeof(*boot));
    if (boot == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    boot->log = amc_log_from_env();

    rc = PMIx_Init(&boot->myproc, NULL, 0);
    if ((rc == PMIX_ERR_UNREACH) || (rc == PMIX_ERR_NOT_FOUND)) {
        /* started without a launcher: PMIx still fills a singleton identity */
        boot->initialized = PMIx_Initialized();
        boot->singleton   = 1;
        boot->rank        = 0;
        boot->size        = 1;
        boot->local_size  = 1;
        *boot_p           = boot;
        return AMC_SUCCESS;
    }
    if (rc != PMIX_SUCCESS) {
        amc_error(&boot->log, "PMIx_Init failed: %s", PMIx_Error_string(rc));
        status = AMC_ERR_TRANSPORT;
        goto err_free;
    }
    boot->initialized = 1;
    boot->rank        = (int)boot->myproc.rank;
    boot->log.rank    = boot->rank;

    status = amc_pmix_get_job_int(boot, PMIX_JOB_SIZE, &boot->size);
    if (status != AMC_SUCCESS) {
        goto err_finalize;
    }
    /* only a hint for the wait policy: assume the job is on one node without it */
    if (amc_pmix_get_job_int(boot, PMIX_LOCAL_SIZE, &boot->local_size) != AMC_SUCCESS) {
        boot->local_size = boot->size;
    }
    if ((boot->size < 1) || (boot->rank < 0) || (boot->rank >= boot->size)) {
        amc_error(&boot->log, "PMIx gave rank %d of job size %d", boot->rank, boot->size);
        status = AMC_ERR_TRANSPORT;
        goto err_finalize;
    }
    *boot_p = boot;
    return AMC_SUCCESS;

err_finalize:
    PMIx_Finalize(NULL, 0);
err_free:
    free(boot);
    return status;
}

int amc_pmix_boot_rank(const amc_pmix_boot_t *boot)
{
    return boot->rank;
}

int amc_pmix_boot_size(const amc_pmix_boot_t *boot)
{
    return boot->size;
}

int amc_pmix_boot_local_size(const amc_pmix_boot_t *boot)
{
    return boot->local_size;
}

int amc_pmix_boot_is_singleton(const amc_pmix_boot_t *boot)
{
    return boot->singleton;
}

int amc_pmix_boot_exchange(amc_pmix_boot_t *boot, const char *key,
                           const void *addr, size_t len,
                           void ***addrs_p, size_t **lens_p)
{
    pmix_value_t  value, *got;
    pmix_info_t   info;
    pmix_proc_t   peer;
    pmix_status_t rc;
    bool          collect = true;
    void        **addrs;
    size_t       *lens;
    int           i, status;

    addrs = calloc((size_t)boot->size, sizeof(*addrs));
    lens  = calloc((size_t)boot->size, sizeof(*lens));
    if ((addrs == NULL) || (lens == NULL)) {
        status = AMC_ERR_NO_MEMORY;
        goto err;
    }

    if (boot->singleton) {
        /* nobody to talk to: our own address is the whole table */
        addrs[0] = malloc(len);
        if (addrs[0] == NULL) {
            status = AMC_ERR_NO_MEMORY;
            goto err;
        }
        memcpy(addrs[0], addr, len);
        lens[0] = len;
        goto out;
    }

    value.type          = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)addr;
    value.data.bo.size  = len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &value); /* copies the value */
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Commit();
    }
    if (rc == PMIX_SUCCESS) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
    }
    if (rc != PMIX_SUCCESS) {
        amc_error(&boot->log, "publishing %s through PMIx failed: %s", key, PMIx_Error_string(rc));
        status = AMC_ERR_TRANSPORT;
        goto err;
    }

    for (i = 0; i < boot->size; i++) {
        PMIX_LOAD_PROCID(&peer, boot->myproc.nspace, (pmix_rank_t)i);
        got = NULL;
        rc  = PMIx_Get(&peer, key, NULL, 0, &got);
        if ((rc != PMIX_SUCCESS) || (got == NULL) || (got->type != PMIX_BYTE_OBJECT)) {
            amc_error(&boot->log, "PMIx_Get(%s) of rank %d failed: %s", key, i,
                      PMIx_Error_string(rc));
            if (got != NULL) {
                PMIX_VALUE_RELEASE(got);
            }
            status = AMC_ERR_TRANSPORT;
            goto err;
        }
        addrs[i] = malloc(got->data.bo.size);
        if (addrs[i] == NULL) {
            PMIX_VALUE_RELEASE(got);
            status = AMC_ERR_NO_MEMORY;
            goto err;
        }
        memcpy(addrs[i], got->data.bo.bytes, got->data.bo.size);
        lens[i] = got->data.bo.size;
        PMIX_VALUE_RELEASE(got);
    }

out:
    *addrs_p = addrs;
    *lens_p  = lens;
    return AMC_SUCCESS;

err:
    amc_pmix_boot_free_addrs(boot, addrs, lens);
    return status;
}

void amc_pmix_boot_free_addrs(amc_pmix_boot_t *boot, void **addrs, size_t *lens)
{
    int i;

    if (addrs != NULL) {
        for (i = 0; i < boot->size; i++) {
            free(addrs[i]);
        }
    }
    free(addrs);
    free(lens);
}

static void amc_pmix_fence_done(pmix_status_t status, void *cbdata)
{
    int *done = cbdata;

    /* runs on PMIx's own thread */
    __atomic_store_n(done, (status == PMIX_SUCCESS) ? 1 : -1, __ATOMIC_RELEASE);
}

int amc_pmix_boot_fence(amc_pmix_boot_t *boot, amc_boot_progress_fn_t progress, void *arg)
{
    pmix_status_t rc;
    int           done = 0;

    if (boot->singleton) {
        return AMC_SUCCESS;
    }
    rc = PMIx_Fence_nb(NULL, 0, NULL, 0, amc_pmix_fence_done, &done);
    if (rc != PMIX_SUCCESS) {
        amc_error(&boot->log, "PMIx_Fence_nb failed: %s", PMIx_Error_string(rc));
        return AMC_ERR_TRANSPORT;
    }
    /* peers may need our progress (e.g. to flush) before they reach the fence */
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 0) {
        if (progress != NULL) {
            progress(arg);
        }
        sched_yield();
    }
    return (__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 1) ? AMC_SUCCESS : AMC_ERR_TRANSPORT;
}

void amc_pmix_boot_finalize(amc_pmix_boot_t *boot)
{
    if (boot == NULL) {
        return;
    }
    if (boot->initialized) {
        PMIx_Finalize(NULL, 0);
    }
    free(boot);
}
