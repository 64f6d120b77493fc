/*
 * PMIx bootstrap: who am I, how many are we, and the exchange of opaque
 * transport addresses. Without a PMIx server the job is a singleton (size 1).
 */
#ifndef AMC_PMIX_BOOT_H
#define AMC_PMIX_BOOT_H

#include <stddef.h>

typedef struct amc_pmix_boot amc_pmix_boot_t;

/* Called while a fence is in flight, so the caller's transport keeps moving. */
typedef void (*amc_boot_progress_fn_t)(void *arg);

int  amc_pmix_boot_init(amc_pmix_boot_t **boot_p);
int  amc_pmix_boot_rank(const amc_pmix_boot_t *boot);
int  amc_pmix_boot_size(const amc_pmix_boot_t *boot);
int  amc_pmix_boot_local_size(const amc_pmix_boot_t *boot);  /* ranks on this node */
int  amc_pmix_boot_is_singleton(const amc_pmix_boot_t *boot);

/* Publishes addr under key, fences with data collection, and returns every
 * rank's value in addrs[size] (each malloc'd; free with amc_pmix_boot_free_addrs). */
int  amc_pmix_boot_exchange(amc_pmix_boot_t *boot, const char *key,
                            const void *addr, size_t len,
                            void ***addrs_p, size_t **lens_p);
void amc_pmix_boot_free_addrs(amc_pmix_boot_t *boot, void **addrs, size_t *lens);

/* A barrier over PMIx that calls progress(arg) while it waits. */
int  amc_pmix_boot_fence(amc_pmix_boot_t *boot, amc_boot_progress_fn_t progress, void *arg);

void amc_pmix_boot_finalize(amc_pmix_boot_t *boot);

#endif
