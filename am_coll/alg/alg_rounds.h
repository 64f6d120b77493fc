/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collectives that run on the barrier's rounds rather than on a
 * schedule (am_coll/barrier/ctrl_coll.c): which ones, who sends at N=2, and
 * the name of the pattern they run, for the engines and their messages
 * alike.
 */
#ifndef AMC_ALG_ROUNDS_H
#define AMC_ALG_ROUNDS_H

#include "am_coll/sched/sched.h"

/* The rooted ones, and scan and exscan: at N=2 one message from the rank
 * that holds the data to the one that needs it (the root's to the other
 * for bcast, scatter and scatterv, the other's to the root for reduce,
 * gather and gatherv, rank 0's to rank 1 for the scans), whatever the
 * algorithm; past N=2 the non-vector ones on the barrier's partners
 * (amc_alg_rounds_tree). */
static inline int amc_alg_rounds_rooted(unsigned coll)
{
    return (coll == AMC_COLL_BCAST) || (coll == AMC_COLL_REDUCE) || (coll == AMC_COLL_GATHER) ||
           (coll == AMC_COLL_SCATTER) || (coll == AMC_COLL_SCAN) || (coll == AMC_COLL_EXSCAN) ||
           (coll == AMC_COLL_GATHERV) || (coll == AMC_COLL_SCATTERV);
}

/* The vector forms that run there, at N=2 only: gatherv and scatterv (one
 * message, as gather and scatter), allgatherv, alltoallv and
 * reduce_scatter (one exchange, whose two directions may carry different
 * lengths). */
static inline int amc_alg_rounds_vector(unsigned coll)
{
    return (coll == AMC_COLL_GATHERV) || (coll == AMC_COLL_SCATTERV) ||
           (coll == AMC_COLL_ALLGATHERV) || (coll == AMC_COLL_ALLTOALLV) ||
           (coll == AMC_COLL_REDUCE_SCATTER);
}

/* Whether coll combines operands with its op's kernel on the rounds. */
static inline int amc_alg_rounds_reduces(unsigned coll)
{
    return (coll == AMC_COLL_ALLREDUCE) || (coll == AMC_COLL_REDUCE_SCATTER_BLOCK) ||
           (coll == AMC_COLL_REDUCE_SCATTER) || (coll == AMC_COLL_REDUCE) ||
           (coll == AMC_COLL_SCAN) || (coll == AMC_COLL_EXSCAN);
}

/* Whether coll runs on the rounds of a communicator of 2 ranks only. */
static inline int amc_alg_rounds_at_2(unsigned coll)
{
    return amc_alg_rounds_vector(coll);
}

/* Whether coll runs past N=2 as a tree on the barrier's partners
 * (am_coll/barrier/ctrl_tree.h): bcast, scatter, gather and reduce
 * binomially, scan and exscan Hillis and Steele's way, every rank sending
 * each round (a message of no bytes where it has nothing to pass). */
static inline int amc_alg_rounds_tree(unsigned coll, int size)
{
    return (size > 2) && amc_alg_rounds_rooted(coll) && !amc_alg_rounds_vector(coll);
}

/* Whether a tree's call of bytes per rank fits its rounds, max the most a
 * round carries (AMC_FAST_MAX, at most 1024 bytes): a gather's, reduce's
 * or scatter's N blocks kept in twice that (a round carries at most N/2 of
 * them), a bcast's or a scan's one. */
static inline int amc_alg_rounds_tree_fits(unsigned coll, size_t bytes, int size, size_t max)
{
    if (max > 1024) {
        max = 1024; /* AMC_CTRL_PAY_MAX */
    }
    if (!amc_alg_rounds_tree(coll, size) || (bytes == 0)) {
        return 0;
    }
    if ((coll == AMC_COLL_GATHER) || (coll == AMC_COLL_REDUCE) || (coll == AMC_COLL_SCATTER)) {
        return bytes * (size_t)size <= 2 * max;
    }
    return bytes <= max;
}

/* A rooted one's root at N=2 from its call's (root -1: the scans', whose
 * messages go from rank 0). */
static inline int amc_alg_rounds_root(int root)
{
    return (root >= 0) ? root : 0;
}

/* Whether rank (of 2) sends a rooted one's message. */
static inline int amc_alg_rounds_sends(unsigned coll, int rank, int root)
{
    switch (coll) {
    case AMC_COLL_BCAST:
    case AMC_COLL_SCATTER:
    case AMC_COLL_SCATTERV: return rank == root;
    case AMC_COLL_REDUCE:
    case AMC_COLL_GATHER:
    case AMC_COLL_GATHERV:  return rank != root;
    default:                return rank == 0; /* scan, exscan */
    }
}

/* Whether the exchanges (allreduce, allgather, alltoall) of a communicator
 * of size ranks run Bruck's way on the rounds: round r's message to rank +
 * 2^r and from rank - 2^r, the barrier's own partners, where size is not a
 * power of two and rank XOR 2^r may be no rank. */
static inline int amc_alg_rounds_bruck(int size)
{
    return (size & (size - 1)) != 0;
}

/* Whether round r of coll (0: the barrier) goes to rank + 2^r and comes
 * from rank - 2^r, the barrier's partners: the barrier, Bruck's exchanges
 * and the trees; the exchanges on a power of two go with rank XOR 2^r. */
static inline int amc_alg_rounds_passes(unsigned coll, int size)
{
    return (coll == 0) || amc_alg_rounds_bruck(size) || amc_alg_rounds_tree(coll, size);
}

/* Whether the wire's coll is one of them. */
static inline int amc_alg_rounds_is(unsigned coll)
{
    return (coll == AMC_COLL_ALLREDUCE) || (coll == AMC_COLL_ALLGATHER) ||
           (coll == AMC_COLL_ALLTOALL) || (coll == AMC_COLL_REDUCE_SCATTER_BLOCK) ||
           amc_alg_rounds_rooted(coll) || amc_alg_rounds_vector(coll);
}

/* The pattern coll runs on the rounds, for messages that name it. */
static inline const char *amc_alg_rounds_name(unsigned coll)
{
    return (coll == AMC_COLL_ALLTOALL)               ? "hypercube exchange or Bruck"
           : (coll == AMC_COLL_REDUCE_SCATTER_BLOCK) ? "recursive_halving or Bruck"
           : amc_alg_rounds_rooted(coll)              ? "one message at N=2, binomial or "
                                                       "hillis_steele past it"
           : amc_alg_rounds_vector(coll)              ? "one exchange at N=2"
                                                     : "recursive_doubling or Bruck";
}

#endif
