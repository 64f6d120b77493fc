/* SPDX-License-Identifier: BSD-3-Clause */
/* Pipelined scan and exscan: the chain of the linear ones (alg_scan_linear.c),
 * with the vector cut into segments of a->segment bytes (whole elements, at
 * least one). Rank r combines segment j as soon as it lands and forwards it
 * to r + 1 while segment j + 1 is still on its way, so the chain's N - 1
 * steps are paid once per segment's latency, not once per vector. Per-segment
 * requires edges, not rounds: a late segment does not hold up the ones
 * after it. The combination keeps MPI's order (prefix (op) own), so any op.
 *
 * Exscan: the received prefix is rank r's result as it is; what goes on is
 * prefix (op) own, combined in scratch where the own value was copied first
 * (in place the prefix lands on the own value, so every receive waits for
 * that copy). Rank 0 only sends and leaves its receive buffer untouched. */
#include "am_coll/alg/alg.h"

/* Bytes per segment: whole elements, at least one. A non-commutative op
 * moves as one segment (the linear chain): MPI lets a user function see any
 * run of whole elements, but user functions that take several elements as
 * one operand exist (test_coll's 2x2 matrices over uint32), and the schedule
 * key knows commutativity, not the op, so a predefined op and a user one
 * cannot be told apart here; every predefined op is commutative. */
static size_t amc_alg_scan_seg(const amc_coll_args_t *a)
{
    return a->commutative ? amc_alg_segment(a) : a->count * a->dt_size;
}

/* Rank 0 of either: its value goes out segment by segment from where it is. */
static void amc_alg_scan_pipe_first(amc_sched_builder_t *b, const amc_coll_args_t *a,
                                    size_t bytes, size_t seg)
{
    size_t off;

    for (off = 0; off < bytes; off += seg) {
        amc_sb_send(b, 1, amc_alg_src_buf(a), off, amc_alg_segment_len(bytes, off, seg));
    }
}

int amc_alg_scan_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    size_t seg   = amc_alg_scan_seg(a), off, len;
    int    copy  = -1, recv;

    if (bytes == 0) {
        return amc_alg_scan_linear(b, a, rank, size);
    }
    amc_sb_stage(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
        copy = amc_sb_last(b);
    }
    if (rank == 0) {
        /* sends read the send buffer (or, in place, the receive buffer that
         * holds its result already): nothing to wait for */
        if (size > 1) {
            amc_alg_scan_pipe_first(b, a, bytes, seg);
        }
        return AMC_SUCCESS;
    }
    for (off = 0; off < bytes; off += seg) {
        len = amc_alg_segment_len(bytes, off, seg);
        /* the message is the left operand: prefix (op) own, on the own
         * value once it was copied there */
        amc_sb_recv_reduce(b, rank - 1, AMC_BUF_RECV, off, len, 0);
        recv = amc_sb_last(b);
        if (copy >= 0) {
            amc_sb_requires(b, recv, copy);
        }
        if (rank + 1 < size) {
            amc_sb_send(b, rank + 1, AMC_BUF_RECV, off, len);
            amc_sb_requires(b, amc_sb_last(b), recv);
        }
    }
    return AMC_SUCCESS;
}

int amc_alg_exscan_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    size_t seg   = amc_alg_scan_seg(a), off, len;
    int    next  = (rank + 1 < size);
    int    copy  = -1, recv, red;

    if ((bytes == 0) || (size == 1)) {
        return amc_alg_exscan_linear(b, a, rank, size);
    }
    amc_sb_stage(b);
    if (rank == 0) {
        amc_alg_scan_pipe_first(b, a, bytes, seg);
        return AMC_SUCCESS;
    }
    if (next) {
        amc_sb_tmp(b, bytes);
        amc_sb_copy(b, AMC_BUF_TMP, 0, amc_alg_src_buf(a), 0, bytes);
        copy = amc_sb_last(b);
    }
    for (off = 0; off < bytes; off += seg) {
        len = amc_alg_segment_len(bytes, off, seg);
        amc_sb_recv(b, rank - 1, AMC_BUF_RECV, off, len);
        recv = amc_sb_last(b);
        if (!next) {
            continue;
        }
        /* in place the prefix overwrites the own value: copied first */
        amc_sb_requires(b, recv, copy);
        /* scratch = prefix (op) own */
        amc_sb_reduce(b, AMC_BUF_TMP, off, AMC_BUF_RECV, off, len, 0);
        red = amc_sb_last(b);
        amc_sb_requires(b, red, recv);
        amc_sb_send(b, rank + 1, AMC_BUF_TMP, off, len);
        amc_sb_requires(b, amc_sb_last(b), red);
    }
    return AMC_SUCCESS;
}
