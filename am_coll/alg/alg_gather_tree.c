/* SPDX-License-Identifier: BSD-3-Clause */
/* Binomial gather and scatter: ceil(log2 N) steps instead of the linear
 * algorithms' N - 1 messages at the root, for small blocks. Relative rank v
 * (the root is 0) has the subtree [v, v + lowbit(v)), clipped to N; its
 * children are v + m for m = 1, 2, 4, ... below lowbit(v), the child v + m
 * with the subtree [v + m, v + 2m). An inner rank keeps its subtree's
 * blocks in scratch in relative-rank order, so that each subtree travels as
 * one message. At the root relative order is rank order rotated by the
 * root: a child's blocks land straight in the user buffer unless they wrap
 * past rank N - 1 (at most one child's do), which go through scratch in
 * two pieces. The scatter is the gather run backwards. */
#include "am_coll/alg/alg.h"

/* Ranks in relative rank vr's subtree. */
static int amc_tree_sub(int vr, int size)
{
    int low = vr & -vr;

    return (vr == 0) ? size : (low < size - vr) ? low : size - vr;
}

/* The root's side of child vr's subtree (cnt blocks from relative vr):
 * whether they lie contiguous in the user buffer (not wrapping past rank
 * N - 1), and where they start there, in blocks. */
static int amc_tree_direct(const amc_coll_args_t *a, int vr, int cnt, int size, int *at)
{
    *at = amc_alg_abs(vr, a->root, size);
    return *at + cnt <= size;
}

/* The root's copies between a wrapped subtree in scratch and the user
 * buffer: the blocks up to rank N - 1, then from rank 0. to_user: gather. */
static void amc_tree_unwrap(amc_sched_builder_t *b, int user, size_t user_off, int at, int cnt,
                            int size, size_t bytes, int to_user)
{
    size_t head = (size_t)(size - at) * bytes, tail = (size_t)(cnt - (size - at)) * bytes;

    if (to_user) {
        amc_sb_copy(b, user, user_off + (size_t)at * bytes, AMC_BUF_TMP, 0, head);
        amc_sb_copy(b, user, user_off, AMC_BUF_TMP, head, tail);
    } else {
        amc_sb_copy(b, AMC_BUF_TMP, 0, user, user_off + (size_t)at * bytes, head);
        amc_sb_copy(b, AMC_BUF_TMP, head, user, user_off, tail);
    }
}

static void amc_tree_gather_root(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                 int size, size_t bytes)
{
    int m, cnt, at, wrap_at = 0, wrap_cnt = 0, late = 0;

    for (m = 1; m < size; m <<= 1) {
        late |= amc_alg_pulled(a, (size_t)amc_tree_sub(m, size) * bytes);
    }
    amc_sb_round(b);
    if (!a->in_place && !late) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    }
    for (m = 1; m < size; m <<= 1) {
        cnt = amc_tree_sub(m, size);
        if (amc_tree_direct(a, m, cnt, size, &at)) {
            amc_sb_recv(b, amc_alg_abs(m, a->root, size), AMC_BUF_RECV, (size_t)at * bytes,
                        (size_t)cnt * bytes);
        } else {
            amc_sb_tmp(b, (size_t)cnt * bytes);
            amc_sb_recv(b, amc_alg_abs(m, a->root, size), AMC_BUF_TMP, 0, (size_t)cnt * bytes);
            wrap_at  = at;
            wrap_cnt = cnt;
        }
    }
    if (wrap_cnt > 0) {
        amc_sb_round(b);
        amc_tree_unwrap(b, AMC_BUF_RECV, 0, wrap_at, wrap_cnt, size, bytes, 1);
    }
    amc_alg_own_block_late(b, a, late, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
}

int amc_alg_gather_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size)
{
    size_t bytes = a->count * a->dt_size;
    int    vr    = amc_alg_rel(rank, a->root, size);
    int    sub   = amc_tree_sub(vr, size), parent, m;

    if (vr == 0) {
        amc_tree_gather_root(b, a, rank, size, bytes);
        return AMC_SUCCESS;
    }
    parent = amc_alg_abs(vr - (vr & -vr), a->root, size);
    amc_sb_round(b);
    if (sub == 1) {
        amc_sb_send(b, parent, AMC_BUF_SEND, 0, bytes);
        return AMC_SUCCESS;
    }
    amc_sb_tmp(b, (size_t)sub * bytes);
    amc_sb_copy(b, AMC_BUF_TMP, 0, AMC_BUF_SEND, 0, bytes);
    for (m = 1; m < sub; m <<= 1) {
        amc_sb_recv(b, amc_alg_abs(vr + m, a->root, size), AMC_BUF_TMP, (size_t)m * bytes,
                    (size_t)amc_tree_sub(vr + m, size) * bytes);
    }
    amc_sb_round(b);
    amc_sb_send(b, parent, AMC_BUF_TMP, 0, (size_t)sub * bytes);
    return AMC_SUCCESS;
}

static void amc_tree_scatter_root(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size, size_t bytes)
{
    int m, cnt, at;

    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, (size_t)rank * bytes, bytes);
    }
    for (m = 1; m < size; m <<= 1) {
        cnt = amc_tree_sub(m, size);
        if (!amc_tree_direct(a, m, cnt, size, &at)) {
            amc_sb_tmp(b, (size_t)cnt * bytes);
            amc_tree_unwrap(b, AMC_BUF_SEND, 0, at, cnt, size, bytes, 0);
        }
    }
    /* the largest subtree first: it has the most forwarding ahead of it */
    for (m >>= 1; m > 0; m >>= 1) {
        cnt = amc_tree_sub(m, size);
        if (amc_tree_direct(a, m, cnt, size, &at)) {
            amc_sb_send(b, amc_alg_abs(m, a->root, size), AMC_BUF_SEND, (size_t)at * bytes,
                        (size_t)cnt * bytes);
        } else {
            amc_sb_send(b, amc_alg_abs(m, a->root, size), AMC_BUF_TMP, 0, (size_t)cnt * bytes);
        }
    }
}

int amc_alg_scatter_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    size_t bytes = a->count * a->dt_size;
    int    vr    = amc_alg_rel(rank, a->root, size);
    int    sub   = amc_tree_sub(vr, size), parent, m;

    if (vr == 0) {
        amc_tree_scatter_root(b, a, rank, size, bytes);
        return AMC_SUCCESS;
    }
    parent = amc_alg_abs(vr - (vr & -vr), a->root, size);
    amc_sb_round(b);
    if (sub == 1) {
        amc_sb_recv(b, parent, AMC_BUF_RECV, 0, bytes);
        return AMC_SUCCESS;
    }
    amc_sb_tmp(b, (size_t)sub * bytes);
    amc_sb_recv(b, parent, AMC_BUF_TMP, 0, (size_t)sub * bytes);
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, bytes);
    /* children from the largest: the highest power of two below sub */
    for (m = 1; 2 * m < sub; m <<= 1) {
        continue;
    }
    for (; m > 0; m >>= 1) {
        amc_sb_send(b, amc_alg_abs(vr + m, a->root, size), AMC_BUF_TMP, (size_t)m * bytes,
                    (size_t)amc_tree_sub(vr + m, size) * bytes);
    }
    return AMC_SUCCESS;
}
