/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Run-time configuration: AMC_* environment variables, read once through one
 * table (config.c) that amc_info prints with defaults, values and docs.
 */
#ifndef AMC_CONFIG_H
#define AMC_CONFIG_H

#include "base/log.h"
#include "am_coll/context/progress.h"
#include "am_coll/sched/sched.h"

#include <stdio.h>

#define AMC_ALG_NAME_MAX 24

typedef struct amc_config {
    int               log_level;
    double            timeout_sec;   /* 0: waits never time out */
    amc_wait_policy_t wait;
    unsigned          early_max;     /* instances held per communicator beyond the window */
    unsigned          orphan_max;    /* messages held for communicators not created yet */
    /* AMC_<COLL>_ALG: an algorithm's name, or "auto" for the size-based choice */
    char              alg[AMC_COLL_LAST][AMC_ALG_NAME_MAX];
    unsigned          bcast_pipeline_min;   /* bytes from which bcast is segmented */
    unsigned          bcast_segment;        /* its segment size in bytes */
    unsigned          allreduce_ring_min;   /* bytes from which allreduce uses the ring */
    unsigned          fast_max;   /* message bytes up to which the small ones run on
                                             * the barrier's rounds (am_coll/barrier/ctrl_coll.h) */
    unsigned          allgather_bruck_max;  /* total bytes up to which allgather uses Bruck */
    unsigned          alltoallv_bruck_block; /* alltoallv bruck: largest block in its steps */
    unsigned          alltoall_linear_max;  /* block bytes up to which alltoall is linear */
    unsigned          lanes_barrier;        /* multi-lane barrier across nodes where it pays */
    unsigned          lanes_allreduce;      /* multi-lane allreduce likewise, */
    unsigned          lanes_allreduce_bytes; /* up to these bytes of nodes x message */
    unsigned          linear_max_ranks;     /* communicators this small use linear algorithms */
    unsigned          oversub_linear_max_ranks; /* the same within one oversubscribed node
                                                  * (0 once the context found its node is not) */
    unsigned          linear_max_bytes;     /* ... for messages up to this size */
    unsigned          node_size;            /* k: every k world ranks form a node; 0: launcher's */
    unsigned          rndv_thresh;          /* messages from this size are pulled by the receiver */
    unsigned          rndv_thresh_node;     /* ... to a rank of this node (launcher's map) */
    unsigned          defer_bytes;          /* copies from this size wait for ready sends to be posted */
    unsigned          eager_tokens;         /* eager data messages in flight per peer */
    unsigned          progress_thread;      /* 1: a thread per context runs the handlers */
    unsigned          progress_yield_usec;  /* the thread's yielding before it sleeps */
    double            finalize_timeout;     /* seconds the teardown may wait for peers */
    unsigned          ucx_err_mode_peer;    /* 1: UCX endpoints in PEER error mode */
    unsigned          shm;                  /* 1: mailboxes for the ranks on this node */
    unsigned          shm_pull;             /* 1: rendezvous data to them by pull */
    char              timeline[256];        /* AMC_TIMELINE: record acts, write PREFIX.RANK.tl */
    char              tuning_file[256];     /* AMC_TUNING_FILE: rules read at context creation */
    unsigned          tuning_builtin;       /* 1: the built-in rules follow the file's */
    unsigned          stats;                /* 1: amc_finalize prints the counters */
} amc_config_t;

/* Filled from the environment by am_coll/api/config_read.h (which checks
 * algorithm names against the algorithms, a room above). */

#endif
