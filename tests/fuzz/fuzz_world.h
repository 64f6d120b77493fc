/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The legitimate side of the fuzz target (tests/fuzz/fuzz_coll.c): a world
 * of N ranks over the unthreaded fake transport that runs a small program of
 * non-blocking collectives, every rank the same calls in the same order but
 * each starting them when the fuzzer says. It owns every buffer, knows what
 * each call must produce, and tears the world down whatever state the calls
 * are in (a forged message may strand an instance for ever).
 */
#ifndef AMC_FUZZ_WORLD_H
#define AMC_FUZZ_WORLD_H

#include "tests/unit/harness.h"

#include <stddef.h>

#define AMC_FUZZ_MAX_N     8
#define AMC_FUZZ_MAX_COLLS 6
#define AMC_FUZZ_MAX_COUNT 40   /* ints per rank (and per block) */

enum {
    AMC_FUZZ_BARRIER,
    AMC_FUZZ_BCAST,
    AMC_FUZZ_REDUCE,
    AMC_FUZZ_ALLREDUCE,
    AMC_FUZZ_ALLGATHER,
    AMC_FUZZ_ALLTOALL,
    AMC_FUZZ_SCATTERV,
    AMC_FUZZ_GATHERV,
    AMC_FUZZ_SCAN,
    AMC_FUZZ_KINDS
};

/* One collective of the program, the same on every rank. */
typedef struct amc_fuzz_coll {
    int      kind;     /* AMC_FUZZ_* */
    int      root;
    size_t   count;    /* ints per rank, per block, or in the bcast */
    amc_op_t op;       /* AMC_SUM or AMC_MAX */
    size_t   counts[AMC_FUZZ_MAX_N];  /* scatterv / gatherv: rank j's part */
    size_t   displs[AMC_FUZZ_MAX_N];  /* its place at the root (with gaps) */
} amc_fuzz_coll_t;

/* A call's progress. */
enum {
    AMC_FUZZ_IDLE,     /* not started */
    AMC_FUZZ_RUNNING,
    AMC_FUZZ_DONE,     /* status holds its result */
    AMC_FUZZ_FREED     /* amc_request_free while running: its result is nobody's */
};

/* One rank's call of one collective. */
typedef struct amc_fuzz_call {
    amc_request_t req;
    int           state;   /* AMC_FUZZ_IDLE .. */
    int           status;
    int          *send;
    int          *recv;
    size_t        send_len, recv_len;   /* ints */
} amc_fuzz_call_t;

typedef struct amc_fuzz_world {
    amc_test_world_t tw;
    int              n;
    int              ncolls;
    amc_fuzz_coll_t  coll[AMC_FUZZ_MAX_COLLS];
    amc_fuzz_call_t  call[AMC_FUZZ_MAX_N][AMC_FUZZ_MAX_COLLS];
    int              next[AMC_FUZZ_MAX_N];   /* the collective each rank starts next */
} amc_fuzz_world_t;

/* w->n, w->ncolls and w->coll[] set by the caller; creates the contexts and
 * the buffers (filled with what each rank sends). */
int  amc_fuzz_world_create(amc_fuzz_world_t *w, amc_fake_completion_t completion,
                           const amc_config_t *cfg);

/* Starts rank's next collective; 0 if it has started them all. A start that
 * fails is a finished call with that status. */
int  amc_fuzz_start_next(amc_fuzz_world_t *w, int rank);

/* Tests rank's running calls; returns how many finished now. */
int  amc_fuzz_test_rank(amc_fuzz_world_t *w, int rank);

/* Frees rank's oldest running request (detaches it); 0 if none runs. */
int  amc_fuzz_free_one(amc_fuzz_world_t *w, int rank);

/* Calls started and not finished (freed ones count as finished). */
int  amc_fuzz_running(const amc_fuzz_world_t *w);

/* Calls that finished with AMC_SUCCESS and a wrong result; each is printed
 * with what differs. */
int  amc_fuzz_wrong_results(const amc_fuzz_world_t *w);

/* Prints every call's state and status (for a finding's report). */
void amc_fuzz_world_print(const amc_fuzz_world_t *w);

/* Frees the requests still running, destroys the contexts and the fabric,
 * frees the buffers. */
void amc_fuzz_world_destroy(amc_fuzz_world_t *w);

#endif
