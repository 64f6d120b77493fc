/* SPDX-License-Identifier: BSD-3-Clause */
/* Hillis-Steele scan and exscan: in step k rank r sends its partial x (the
 * reduction of ranks (r - 2^k, r]) to r + 2^k and receives the partial of
 * r - 2^k, which covers the ranks just below its own, so the received value
 * is always the left operand and MPI's order holds for any op. Unlike the
 * recursive-doubling exchange (alg_scan.c) nothing flows downwards: rank r
 * sends only while r + 2^k < N and receives only while r >= 2^k, so rank 0
 * finishes once its sends are out, and at N = 2 the whole scan is one
 * message. ceil(log2 N) steps, at most one send and one receive each.
 *
 * Exscan keeps two values: x (inclusive, what is sent) in scratch, and the
 * exclusive prefix e in the receive buffer, which takes every received value
 * on the left: e = q (op) e. Rank 0 receives nothing and leaves its receive
 * buffer untouched. The received value lands in Q and is combined at the
 * start of the next step, once the send of x (which reads it) completed.
 *
 * Nothing is copied that need not be: the first step sends the caller's
 * vector where it is, and is a stage, so the scan's copy of it into the
 * receive buffer runs once that send is posted; exscan keeps x in scratch
 * only on ranks that receive before a later send, and (not in place) takes
 * its first value straight into the receive buffer. At N = 2 an exscan is
 * one transfer and no copy. */
#include "am_coll/alg/alg.h"

/* Combines the value received in the previous step (Q) into what this rank
 * keeps: x when it is still to be sent, and (exscan) e. */
static void amc_alg_doubling_combine(amc_sched_builder_t *b, int x_buf, size_t x_off,
                                     size_t q_off, size_t bytes, int update_x, int exclusive,
                                     int *first)
{
    if (exclusive) {
        if (*first) {
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, q_off, bytes);
            *first = 0;
        } else {
            amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, q_off, bytes, 0);
        }
    }
    if (update_x) {
        amc_sb_reduce(b, x_buf, x_off, AMC_BUF_TMP, q_off, bytes, 0);
    }
}

static int amc_alg_scan_doubling_any(amc_sched_builder_t *b, const amc_coll_args_t *a,
                                     int rank, int size, int exclusive)
{
    size_t bytes = a->count * a->dt_size;
    int    src   = amc_alg_src_buf(a);
    /* exscan keeps x in scratch only where it changes before a later send:
     * a rank that receives in the first step and still sends afterwards;
     * elsewhere x is the rank's own vector, sent from where it is */
    int    own_x = exclusive && ((rank == 0) || (rank + 2 >= size));
    int    x_buf = exclusive ? (own_x ? src : AMC_BUF_TMP) : AMC_BUF_RECV;
    /* exscan: the first value received is e itself: straight into the
     * receive buffer, unless that buffer is also what the first send reads */
    int    direct = exclusive && !a->in_place;
    /* scan, a commutative op and a pulled first value: that value straight
     * into the receive buffer too, the own vector reduced into it after,
     * instead of copying the own vector first (which the pull and its
     * sender would wait behind) and pulling into scratch */
    int    fold  = !exclusive && !a->in_place && a->commutative && (rank >= 1) &&
                   amc_alg_pulled(a, bytes);
    size_t q_off = exclusive ? bytes : 0;
    int    first = 1, got = 0, dist;

    /* The first step is a stage: its send reads the caller's vector, so it
     * need not wait for the copies, which run once it is posted (the engine
     * defers big copies behind ready sends). */
    amc_sb_stage(b);
    if (!exclusive && !a->in_place && !fold) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
    }
    if (size == 1) {
        return AMC_SUCCESS;
    }
    amc_sb_tmp(b, q_off + bytes);
    if (exclusive && !own_x) {
        amc_sb_copy(b, AMC_BUF_TMP, 0, src, 0, bytes);
    }
    if (rank + 1 < size) {
        amc_sb_send(b, rank + 1, src, 0, bytes); /* x is still the rank's own vector */
    }
    if (rank >= 1) {
        if (direct || fold) {
            amc_sb_recv(b, rank - 1, AMC_BUF_RECV, 0, bytes);
            first = 0;
        } else {
            amc_sb_recv(b, rank - 1, AMC_BUF_TMP, q_off, bytes);
        }
    }
    got = (rank >= 1);

    for (dist = 2; dist < size; dist <<= 1) {
        int sends = (rank + dist < size), recvs = (rank >= dist);

        if (!sends && !recvs) {
            break;
        }
        amc_sb_round(b);
        if (got && direct && (dist == 2)) {
            /* e took the first value in place; x = q (op) x reads it there */
            if (sends && !own_x) {
                amc_sb_reduce(b, x_buf, 0, AMC_BUF_RECV, 0, bytes, 0);
            }
        } else if (got && fold && (dist == 2)) {
            amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes, 0);
        } else if (got) {
            /* scan: x is the result; exscan: x only while it is still sent */
            amc_alg_doubling_combine(b, x_buf, 0, q_off, bytes, !exclusive || (sends && !own_x),
                                     exclusive, &first);
        }
        if (sends) {
            amc_sb_send(b, rank + dist, x_buf, 0, bytes);
        }
        got = recvs;
        if (recvs) {
            amc_sb_recv(b, rank - dist, AMC_BUF_TMP, q_off, bytes);
        }
    }
    if (got && fold && (dist == 2)) {
        amc_sb_round(b);
        amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes, 0);
    } else if (got && !(direct && (dist == 2))) {
        amc_sb_round(b);
        amc_alg_doubling_combine(b, x_buf, 0, q_off, bytes, !exclusive, exclusive, &first);
    }
    return AMC_SUCCESS;
}

int amc_alg_scan_doubling(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    return amc_alg_scan_doubling_any(b, a, rank, size, 0);
}

int amc_alg_exscan_doubling(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size)
{
    return amc_alg_scan_doubling_any(b, a, rank, size, 1);
}
