/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What Bruck's alltoall and alltoallv share: which blocks move in a step,
 * and copies that grow into runs so that neighbouring blocks move as one act.
 * Blocks are numbered by distance: block i of rank r is the one for rank
 * r + i; in the step of distance k every block whose i has bit k set moves
 * k ranks on. It first moves at the lowest set bit of i, last at the
 * highest.
 */
#ifndef AMC_ALG_BRUCK_H
#define AMC_ALG_BRUCK_H

#include "am_coll/sched/sched.h"

#include <stddef.h>

/* A copy being extended while the next one continues it in both buffers. */
typedef struct {
    int    dst, src;
    size_t dst_off, src_off, len;
} amc_bruck_run_t;

static inline void amc_bruck_flush(amc_sched_builder_t *b, amc_bruck_run_t *run)
{
    if (run->len > 0) {
        amc_sb_copy(b, run->dst, run->dst_off, run->src, run->src_off, run->len);
    }
    run->len = 0;
}

static inline void amc_bruck_copy(amc_sched_builder_t *b, amc_bruck_run_t *run, int dst,
                                  size_t dst_off, int src, size_t src_off, size_t len)
{
    if ((run->len > 0) && (run->dst == dst) && (run->src == src) &&
        (run->dst_off + run->len == dst_off) && (run->src_off + run->len == src_off)) {
        run->len += len;
        return;
    }
    amc_bruck_flush(b, run);
    run->dst     = dst;
    run->dst_off = dst_off;
    run->src     = src;
    run->src_off = src_off;
    run->len     = len;
}

/* Blocks that move in the step of distance k. */
static inline int amc_bruck_moving(int k, int size)
{
    int i, n = 0;

    for (i = 1; i < size; i++) {
        n += (i & k) != 0;
    }
    return n;
}

/* The most blocks any step moves. */
static inline int amc_bruck_most(int size)
{
    int k, n, most = 0;

    for (k = 1; k < size; k <<= 1) {
        n    = amc_bruck_moving(k, size);
        most = (n > most) ? n : most;
    }
    return most;
}

static inline int amc_bruck_lowest(int i)
{
    return i & -i;
}

static inline int amc_bruck_highest(int i)
{
    while (i & (i - 1)) {
        i &= i - 1;
    }
    return i;
}

/* Packs the blocks that move at distance k, or unpacks those that came. */
typedef void (*amc_bruck_move_fn_t)(amc_sched_builder_t *b, const void *t, int k);

/* Bruck's steps, from the round the caller is in: at each distance k the
 * blocks that came in the step before are unpacked, those that move now
 * packed, sent k ranks on and received from k ranks back, each block taking
 * slot bytes of the message (scratch offsets pack and unpack); a last round
 * unpacks the last step. exact: a step message of another length aborts
 * the instance (amc_sb_exact). */
static inline void amc_bruck_steps(amc_sched_builder_t *b, int rank, int size, size_t slot,
                                   size_t pack, size_t unpack, amc_bruck_move_fn_t pack_fn,
                                   amc_bruck_move_fn_t unpack_fn, const void *t, int exact)
{
    size_t n;
    int    k, prev = 0;

    for (k = 1; k < size; k <<= 1) {
        if (k > 1) {
            amc_sb_round(b);
        }
        if (prev > 0) {
            unpack_fn(b, t, prev);
        }
        pack_fn(b, t, k);
        n = (size_t)amc_bruck_moving(k, size) * slot;
        amc_sb_send(b, (rank + k) % size, AMC_BUF_TMP, pack, n);
        amc_sb_recv(b, (rank - k + size) % size, AMC_BUF_TMP, unpack, n);
        if (exact) {
            amc_sb_exact(b, amc_sb_last(b));
        }
        prev = k;
    }
    amc_sb_round(b);
    unpack_fn(b, t, prev);
}

#endif
