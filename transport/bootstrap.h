/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the job started, as the transport needs it: this rank and the job's
 * size, the ranks on this node, a way to tell the peers what reaches this
 * rank and to read theirs, and a barrier for the teardown. Two kinds:
 * PMIx's (transport/pmix_boot.c, the default: Open MPI's mpirun, Slurm's
 * srun --mpi=pmix, PRRTE) and one whose exchange the caller gives
 * (transport/user_boot.c, amc_init_boot: an MPI library's world under
 * MPICH's Hydra or srun --mpi=pmi2, any runtime with an allgather).
 */
#ifndef AMC_BOOTSTRAP_H
#define AMC_BOOTSTRAP_H

#include "transport/node_map.h"

#include <stddef.h>

/* Called while a barrier is in flight, so the caller's transport keeps
 * moving; non-zero gives the barrier up (a peer that will never join it
 * died). */
typedef int (*amc_boot_progress_fn_t)(void *arg);

/* A peer the launcher says died (on the launcher's thread: only marks). */
typedef void (*amc_boot_dead_fn_t)(void *arg, int rank);

typedef struct amc_bootstrap amc_bootstrap_t;

typedef struct amc_bootstrap_ops {
    /* Publishes val under key for every rank and, if local_key is not
     * NULL, local_val under local_key for the ranks of this node; after it
     * every rank has published, so get answers without waiting. */
    int  (*publish)(amc_bootstrap_t *bs, const char *key, const void *val, size_t len,
                    const char *local_key, const void *local_val, size_t local_len);
    /* rank's value of key, malloc'd into *val_p. */
    int  (*get)(amc_bootstrap_t *bs, int rank, const char *key, void **val_p, size_t *len_p);
    /* The ranks on this node, this one included, malloc'd into *ranks_p. */
    int  (*local_peers)(amc_bootstrap_t *bs, int **ranks_p, int *n_p);
    /* Each rank's node into map, which must be empty (left empty: one node). */
    void (*node_map)(amc_bootstrap_t *bs, amc_node_map_t *map);
    /* A barrier that calls progress(arg) while it waits, until deadline
     * (amc_clock_sec; 0: none): AMC_ERR_TIMEOUT then, or AMC_ERR_PEER when
     * progress says to give up. */
    int  (*fence)(amc_bootstrap_t *bs, amc_boot_progress_fn_t progress, void *arg,
                  double deadline);
    /* fn(arg, rank) for each peer the launcher reports dead, from now until
     * unwatch (a launcher that reports none: nothing). */
    void (*watch)(amc_bootstrap_t *bs, amc_boot_dead_fn_t fn, void *arg);
    void (*unwatch)(amc_bootstrap_t *bs);
    void (*finalize)(amc_bootstrap_t *bs);
} amc_bootstrap_ops_t;

struct amc_bootstrap {
    const amc_bootstrap_ops_t *ops;
    const char *kind;        /* for the log: "PMIx", "the caller's exchange" */
    const char *job;         /* the job's name (names the inbox's memfd) */
    int         rank;
    int         size;
    int         local_size;  /* ranks on this node */
    int         singleton;   /* a job of one: nobody to exchange with */
};

#endif
