/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMIx bootstrap: who am I, how many are we, and the exchange of opaque
 * transport addresses. Without a PMIx server the job is a singleton (size 1).
 */
#ifndef AMC_PMIX_BOOT_H
#define AMC_PMIX_BOOT_H

#include "transport/bootstrap.h"
#include "transport/node_map.h"

#include <stddef.h>

typedef struct amc_pmix_boot amc_pmix_boot_t;

int  amc_pmix_boot_init(amc_pmix_boot_t **boot_p);
/* The same, as the transport takes it (transport/bootstrap.h); its
 * finalize frees it. */
int  amc_pmix_bootstrap(amc_bootstrap_t **bs_p);
int  amc_pmix_boot_rank(const amc_pmix_boot_t *boot);
int  amc_pmix_boot_size(const amc_pmix_boot_t *boot);
int  amc_pmix_boot_local_size(const amc_pmix_boot_t *boot);  /* ranks on this node */
int  amc_pmix_boot_is_singleton(const amc_pmix_boot_t *boot);
const char *amc_pmix_boot_nspace(const amc_pmix_boot_t *boot);  /* the job's name */

/* Each rank's node from the launcher into map, which must be empty: from
 * PMIX_NODEID (ORTE, PRRTE), else PMIx_Resolve_nodes and _peers (Slurm's
 * plugin), else PMIX_HOSTNAME, job-level data every rank reads alike. A
 * launcher that says none of them leaves it empty, one node: the
 * collectives stay flat. Logs at debug level which source decided. */
void amc_pmix_boot_node_map(amc_pmix_boot_t *boot, amc_node_map_t *map);

/* Every rank's value at once, for the benchmark's layered baseline (the
 * library connects lazily, below): publishes addr under key, fences with
 * data collection, and returns every rank's value in addrs[size] (each
 * malloc'd; free with amc_pmix_boot_free_addrs). */
int  amc_pmix_boot_exchange(amc_pmix_boot_t *boot, const char *key,
                            const void *addr, size_t len,
                            void ***addrs_p, size_t **lens_p);
void amc_pmix_boot_free_addrs(amc_pmix_boot_t *boot, void **addrs, size_t *lens);

/* Publishes val under key (PMIX_GLOBAL) and, if local_key is not NULL,
 * local_val under local_key (PMIX_LOCAL: for the ranks on this node only),
 * commits, and fences without data collection: nothing of the peers is read
 * here. After it every rank has committed, so amc_pmix_boot_get answers
 * without waiting for a peer (doc/design.md, "Scale"). */
int  amc_pmix_boot_publish(amc_pmix_boot_t *boot, const char *key, const void *val, size_t len,
                           const char *local_key, const void *local_val, size_t local_len);

/* rank's value of key (direct modex: a question to the local PMIx server,
 * which fetches it from the peer's node if it must), malloc'd into *val_p. */
int  amc_pmix_boot_get(amc_pmix_boot_t *boot, int rank, const char *key, void **val_p,
                       size_t *len_p);

/* The ranks of this job on this node (PMIX_LOCAL_PEERS), this one included,
 * malloc'd into *ranks_p. */
int  amc_pmix_boot_local_peers(amc_pmix_boot_t *boot, int **ranks_p, int *n_p);

/* A barrier over PMIx that calls progress(arg) while it waits, until
 * deadline (amc_clock_sec; 0: none): AMC_ERR_TIMEOUT then, or AMC_ERR_PEER
 * when progress says to give up; the fence is then left to PMIx. */
int  amc_pmix_boot_fence(amc_pmix_boot_t *boot, amc_boot_progress_fn_t progress, void *arg,
                         double deadline);


/* Registers for PMIx's process-termination events (delivered by PRRTE and
 * Slurm; Open MPI 4.1's ORTE sends none). Until unwatch, fn(arg, rank) may
 * run at any time on PMIx's thread. A failure is only logged: the other
 * detectors still work. */
void amc_pmix_boot_watch(amc_pmix_boot_t *boot, amc_boot_dead_fn_t fn, void *arg);
void amc_pmix_boot_unwatch(amc_pmix_boot_t *boot);

void amc_pmix_boot_finalize(amc_pmix_boot_t *boot);

#endif
