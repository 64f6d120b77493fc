/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithms: one builder per file (am_coll/alg_*.c), and the table that
 * chooses among them by communicator size and message size.
 */
#ifndef AMC_ALG_H
#define AMC_ALG_H

#include "am_coll/alg/coll_args.h"
#include "am_coll/context/config.h"

#include <stdio.h>

struct amc_comm;

/* The algorithm for a call (size, count, AMC_* overrides). */
const amc_alg_t *amc_alg_select(struct amc_comm *comm, const amc_coll_args_t *args);

/* The algorithm of coll called name, or NULL. */
const amc_alg_t *amc_alg_find(int coll, const char *name);

/* The name of coll's algorithm id ("unknown" if none), for messages. */
const char *amc_alg_name(int coll, unsigned id);

/* Which configuration makes ranks choose different algorithms for coll,
 * for the message that reports it: "AMC_<COLL>_ALG (or ...) differs ...". */
const char *amc_alg_config_hint(int coll);

/* The binomial bcast, which a rank forwards before it called bcast itself. */
const amc_alg_t *amc_alg_bcast_forwarding(void);

/* What each AMC_<COLL>_ALG forces (NULL: auto), resolved once per context so
 * that no call compares names. */
void amc_alg_resolve(const amc_config_t *cfg, const amc_alg_t **forced);

/* The table by index (i < amc_alg_count()), for tests that check every
 * algorithm without knowing their names. */
size_t           amc_alg_count(void);
const amc_alg_t *amc_alg_at(size_t i);
/* alg's index in the table (amc_alg_at's inverse), or amc_alg_count() for
 * an algorithm that is not in it. */
size_t           amc_alg_index(const amc_alg_t *alg);

/* ", name" for every algorithm of coll, for amc_info. */
void amc_alg_print_names(FILE *stream, int coll);

/* Builders; each fills the schedule of one rank. */
int amc_alg_barrier_dissemination(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size);
#define AMC_BARRIER_KNOMIAL_RADIX 4 /* a constant: every rank builds the same tree */
int amc_alg_barrier_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_barrier_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_bcast_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_bcast_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
#define AMC_BCAST_KNOMIAL_RADIX 4 /* a constant: every rank builds the same tree */
int amc_alg_bcast_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_bcast_scatter_allgather(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                    int size);
int amc_alg_alltoall_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_alltoallv_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size);
/* Its slots' payload: AMC_ALLTOALLV_BRUCK_BLOCK, at most this (every block
 * travels padded to it, N of them kept per rank) */
#define AMC_ALLTOALLV_BRUCK_BLOCK_MAX 65536
int amc_alg_gather_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size);
int amc_alg_scatter_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size);
int amc_alg_scan_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_exscan_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_scan_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_exscan_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size);
int amc_alg_allreduce_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allreduce_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allgather_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_reduce_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allreduce_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_gather_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_scatter_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allgather_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_alltoall_pairwise(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_alltoall_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_gatherv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_scatterv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allgatherv_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_alltoallv_pairwise(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                               int size);
int amc_alg_alltoallv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size);
int amc_alg_reduce_scatter_reduce_linear(amc_sched_builder_t *b, const amc_coll_args_t *a,
                                         int rank, int size);
void amc_alg_reduce_chain(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size,
                          int from, int acc, size_t bytes, int prev);
int amc_alg_allgather_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size);
int amc_alg_allgatherv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size);
int amc_alg_reduce_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_bcast_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_reduce_scatter_direct(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size);
/* am_coll/alg/alg_reduce_scatter_more.c: reduce_scatter and _block alike */
int amc_alg_reduce_scatter_halving(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                   int size);
int amc_alg_reduce_scatter_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                int size);
int amc_alg_reduce_scatter_pairwise(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                    int size);
/* am_coll/alg/alg_allgather_more.c */
int amc_alg_allgather_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size);
int amc_alg_allgather_neighbor(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                               int size);
/* am_coll/alg/alg_allgatherv_more.c */
int amc_alg_allgatherv_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size);
int amc_alg_allgatherv_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size);
int amc_alg_allgatherv_neighbor(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                int size);
int amc_alg_scan_doubling(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_exscan_doubling(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size);
int amc_alg_scan_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_exscan_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
/* Large-vector and k-nomial reductions (am_coll/alg/alg_reduce_large.c,
 * am_coll/alg/alg_allreduce_rsag.c). */
int amc_alg_reduce_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_reduce_rabenseifner(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                int size);
int amc_alg_allreduce_rabenseifner(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                   int size);
int amc_alg_allreduce_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size);
/* The k-nomial tree (radix AMC_BCAST_KNOMIAL_RADIX) rooted at top reducing
 * into acc, from this rank's own vector in mine; top ends with the result
 * in acc. In rank order when top is 0. */
void amc_alg_knomial_up(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size,
                        int top, int acc, int mine);
/* Rabenseifner's pieces: the pairs that fold N down to a power of two and
 * the reduce-scatter by recursive halving over what remains. */
typedef struct amc_rsag {
    int    pof2;    /* the ranks that take part: the largest power of two <= N */
    int    rem;     /* N - pof2: the pairs (2i, 2i + 1) that fold into one */
    int    root;    /* kept when its pair folds; -1: none */
    int    rank;
    int    place;   /* this rank's among the pof2, or -1: folded into its pair */
    int    pair;    /* the other rank of its pair, or -1 */
    size_t count;
    size_t dt_size;
    int    work;    /* the buffer the blocks are reduced in */
    int    mine;    /* this rank's own vector */
    int    have;    /* work holds this rank's part already (else mine does) */
} amc_rsag_t;
void   amc_rsag_init(amc_rsag_t *r, const amc_coll_args_t *a, int rank, int size, int root,
                     int work, int mine);
int    amc_rsag_rank(const amc_rsag_t *r, int place);  /* the rank at a place */
size_t amc_rsag_off(const amc_rsag_t *r, int block);   /* where block starts, in bytes */
void   amc_rsag_fold(amc_sched_builder_t *b, amc_rsag_t *r);
void   amc_rsag_halve(amc_sched_builder_t *b, amc_rsag_t *r); /* place p ends with block p */
void   amc_rsag_send(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes);
void   amc_rsag_recv(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes);
/* Node-aware (am_coll/alg/alg_hier.c): read a->topo */
int amc_alg_barrier_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_bcast_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_reduce_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allreduce_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
void amc_alg_recdbl_among(amc_sched_builder_t *b, const int *m, int cnt, int me, int tmp,
                          size_t bytes);
/* Every member of a node in the exchange across nodes (am_coll/alg/alg_lanes.c).
 * Up to this many nodes per member (the share), the barrier crosses in one
 * step; beyond, in rounds (a constant, not a setting: every rank must build
 * the same schedule). */
#define AMC_LANES_ONE_STEP_MAX       8
#define AMC_LANES_ALLREDUCE_ONE_STEP 4 /* the same for the allreduce */
int amc_alg_barrier_lanes(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);
int amc_alg_allreduce_lanes(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size);

/* Whether a barrier on a communicator across nodes runs the multi-lane one
 * on the engine (else the flat fast path). */
struct amc_topo;
int amc_alg_barrier_lanes_pay(const amc_config_t *cfg, const struct amc_topo *topo);
/* Whether a barrier on size ranks of one node that has more ranks than
 * cores (or within AMC_LINEAR_MAX_RANKS) runs the linear one on the engine:
 * every rank but the first is scheduled once to send and once to be
 * released, where the dissemination barrier needs each of them in every
 * round. */
int amc_alg_barrier_linear_pays(const amc_config_t *cfg, int size, const struct amc_topo *topo);

/* The per-rank bytes the rules of AMC_TUNING_FILE compare for a call on
 * size ranks (the quantity amc_alg_auto chooses by). */
size_t amc_alg_rule_bytes(const amc_coll_args_t *args, int size);

/* Whether alg may run a call with these arguments (the order-sensitive
 * ops exclude the algorithms that combine in an order of their own). */
int amc_alg_usable(const amc_alg_t *alg, const amc_coll_args_t *args);

/* Helpers shared by builders. */
static inline int amc_alg_rel(int rank, int root, int size)
{
    return (rank - root + size) % size;
}

static inline int amc_alg_abs(int rel, int root, int size)
{
    return (rel + root) % size;
}

/* The buffer and offset a rank's own contribution is read from: the send
 * buffer, or with AMC_IN_PLACE its place in the receive buffer. */
static inline int amc_alg_src_buf(const amc_coll_args_t *a)
{
    return a->in_place ? AMC_BUF_RECV : AMC_BUF_SEND;
}

/* Whether a block of bytes may go by rendezvous, its sender waiting until
 * the receiver pulled it: then a receiver's own local work is better done
 * after the pull than before it. */
static inline int amc_alg_pulled(const amc_coll_args_t *a, size_t bytes)
{
    return (bytes > 0) && (bytes >= a->pull_bytes);
}

/* A root's copy of its own block where the others' are pulled: after the
 * pulls, in a round of its own, for each sender waits until its block is
 * pulled, and a copy ahead of the pulls would add its time to theirs (the
 * mean over ranks pays it twice). Blocks that come eagerly cost their
 * senders nothing to wait for: there the copy goes first, in the time
 * before they land. */
static inline void amc_alg_own_block_late(amc_sched_builder_t *b, const amc_coll_args_t *a,
                                          int late, int dst, size_t dst_off, int src,
                                          size_t src_off, size_t bytes)
{
    if (late && !a->in_place) {
        amc_sb_round(b);
        amc_sb_copy(b, dst, dst_off, src, src_off, bytes);
    }
}

/* The pipelines' segment: AMC_BCAST_SEGMENT bytes in whole elements, at
 * least one element; and the length of the one at off of bytes. */
static inline size_t amc_alg_segment(const amc_coll_args_t *a)
{
    size_t seg = a->segment - a->segment % a->dt_size;

    return (seg == 0) ? a->dt_size : seg;
}

static inline size_t amc_alg_segment_len(size_t bytes, size_t off, size_t seg)
{
    return (bytes - off < seg) ? bytes - off : seg;
}

/* Neighbour exchange's step i >= 1 (even size; amc_alg_allgather_neighbor
 * explains the pattern): the neighbour in *peer, the returned pair the one
 * received from it. */
static inline int amc_alg_nx_step(int rank, int size, int i, int *peer)
{
    int npairs = size / 2, p = rank / 2, odd = rank % 2, got;

    if ((i % 2) != odd) {
        /* odd step of an even rank, even step of an odd one: to the left */
        *peer = (rank - 1 + size) % size;
        got   = odd ? p - i / 2 : p - (i + 1) / 2;
    } else {
        *peer = (rank + 1) % size;
        got   = odd ? p + (i + 1) / 2 : p + i / 2;
    }
    return ((got % npairs) + npairs) % npairs;
}

#endif
