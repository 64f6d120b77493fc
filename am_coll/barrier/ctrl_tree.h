/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rooted collectives and the scans past N=2 on the barrier's own
 * rounds: round r's message to rank + 2^r, from rank - 2^r, as the
 * barrier's, every rank sending one each round (the barrier's
 * synchronization and run-ahead, so no tokens are needed), a message that
 * carries nothing where the pattern has nothing to pass there. The
 * patterns, in the ranks counted from the root:
 *
 *  - bcast: u = rank - root (mod N). Round r: u < 2^r passes the data on to
 *    u + 2^r (a binomial tree).
 *  - scatter: the same tree; u's message carries the blocks of the ranks
 *    below u + 2^r in it, those at u + 2^r + k 2^(r+1).
 *  - gather and reduce: w = root - rank (mod N), so rank + 2^r is
 *    w - 2^r. Round r: w whose low r+1 bits are 2^r sends the blocks it
 *    gathered, those of w .. w + 2^r - 1, to w - 2^r (a binomial tree
 *    towards the root). A reduce gathers its operands so and reduces them
 *    at the root in rank order, as Bruck's allreduce does: the same
 *    operands in the same order whatever the root.
 *  - scan and exscan: round r's partial result (ranks rank - 2^r + 1 ..
 *    rank) to rank + 2^r where there is one (Hillis and Steele); the lower
 *    ranks' operand on the left. An exscan keeps what came (the lower
 *    ranks') apart from its own.
 *
 * Where each rank's blocks live (work, the same in the slot and within the
 * call, so that either may hand over to the other): a gather's and a
 * reduce's position k holds rank - k's block (Bruck's allgather layout),
 * a scatter's position k the block bound for rank + k, a bcast's and a
 * scan's the data or partial result, an exscan's then what came.
 */
#ifndef AMC_CTRL_TREE_H
#define AMC_CTRL_TREE_H

#include "am_coll/alg/alg_rounds.h"
#include "am_coll/barrier/ctrl_blocks.h"
#include "am_coll/coll/coll.h"
#include "ctrl/coll_ctrl.h"

#include <stddef.h>
#include <stdint.h>

/* One rank's view of a call on the tree: what every function below needs. */
typedef struct {
    uint8_t coll;
    int     rank;
    int     size;
    int     root;   /* -1 for the scans */
    size_t  bytes;  /* per rank: a block, an operand */
} amc_ctrl_tree_t;

/* The rank counted from the root the way the data flows: from it (u, bcast
 * and scatter) or towards it (w, gather and reduce). */
static inline int amc_ctrl_tree_from_root(const amc_ctrl_tree_t *t)
{
    return amc_ctrl_blocks_wrap(t->rank - t->root, t->size);
}

static inline int amc_ctrl_tree_to_root(const amc_ctrl_tree_t *t)
{
    return amc_ctrl_blocks_wrap(t->root - t->rank, t->size);
}

/* A scatter's blocks for the rank v of the tree that hears in round r: its
 * own and those of the ranks below it, v + k 2^(r+1). */
static inline size_t amc_ctrl_tree_scattered(int size, int v, int round)
{
    return ((size_t)(size - v) + ((size_t)2 << round) - 1) >> (round + 1);
}

/* Bytes of round r's message this rank sends (out 1) or takes (out 0):
 * inline, as the rounds ask it twice a round. */
static inline size_t amc_ctrl_tree_len(const amc_ctrl_tree_t *t, int round, int out)
{
    int d = 1 << round, v, low;

    switch (t->coll) {
    case AMC_COLL_BCAST:
    case AMC_COLL_SCATTER:
        v = amc_ctrl_tree_from_root(t);
        if (out) {
            if ((v >= d) || (v + d >= t->size)) {
                return 0;
            }
            v += d; /* the one it passes on to */
        } else if ((v < d) || (v >= 2 * d)) {
            return 0;
        }
        return (t->coll == AMC_COLL_BCAST) ? t->bytes
                                           : t->bytes * amc_ctrl_tree_scattered(t->size, v, round);
    case AMC_COLL_GATHER:
    case AMC_COLL_REDUCE:
        v   = amc_ctrl_tree_to_root(t);
        low = v & (2 * d - 1);
        if (out) {
            return (low == d) ? t->bytes * (size_t)((d < t->size - v) ? d : t->size - v) : 0;
        }
        if ((low != 0) || (v + d >= t->size)) {
            return 0;
        }
        return t->bytes * (size_t)((d < t->size - v - d) ? d : t->size - v - d);
    default: /* scan, exscan */
        if (out) {
            return (t->rank + d < t->size) ? t->bytes : 0;
        }
        return (t->rank >= d) ? t->bytes : 0;
    }
}


/* Bytes of work the call keeps. */
size_t amc_ctrl_tree_work_len(const amc_ctrl_tree_t *t);

/* At the entry: the call's data into work. */
void amc_ctrl_tree_load(const amc_ctrl_tree_t *t, const amc_coll_args_t *args, uint8_t *work);

/* Round r's message: where its amc_ctrl_tree_len(t, r, 1) bytes are (in
 * work, or made in msg, whose room is AMC_CTRL_PAY_MAX). */
const uint8_t *amc_ctrl_tree_out(const amc_ctrl_tree_t *t, int round, uint8_t *work,
                                 uint8_t *msg);

/* Round r's message (amc_ctrl_tree_len(t, r, 0) bytes) into work. */
void amc_ctrl_tree_in(const amc_ctrl_tree_t *t, int round, uint8_t *work, const void *msg,
                      amc_ctrl_kernel_t kernel, size_t count);

/* After the last round: the result from work into the caller's buffer
 * (only where the rank has one: the root's gather and reduce). */
void amc_ctrl_tree_result(const amc_ctrl_tree_t *t, const uint8_t *work, void *recvbuf,
                          amc_ctrl_kernel_t kernel, size_t count);

#endif
