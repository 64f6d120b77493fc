/* SPDX-License-Identifier: BSD-3-Clause */
/* The dissemination barrier as a schedule on the engine: in round r every
 * rank sends a zero-byte message to rank + 2^r and waits for the one from
 * rank - 2^r. The same algorithm as the barrier's own fast path
 * (am_coll/barrier/barrier.c); AMC_BARRIER_ALG=dissemination selects this
 * one, so the two can be timed against each other. */
#include "am_coll/alg/alg.h"

int amc_alg_barrier_dissemination(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size)
{
    int dist;

    (void)a;
    for (dist = 1; dist < size; dist *= 2) {
        amc_sb_round(b);
        amc_sb_send(b, (rank + dist) % size, AMC_BUF_RECV, 0, 0);
        amc_sb_recv(b, (rank - dist + size) % size, AMC_BUF_RECV, 0, 0);
    }
    return AMC_SUCCESS;
}

/* k-nomial barrier (radix AMC_BARRIER_KNOMIAL_RADIX): rank r's parent is
 * r less its lowest nonzero base-k digit, its children r + d k^j for every
 * lower position j and digit d = 1..k-1 (the tree of the k-nomial bcast,
 * rooted at 0). Every rank waits for its children, tells its parent and
 * waits for the parent's release, then releases its children: 2 ceil(log_k
 * N) hops along the deepest path, k - 1 messages per level, and 2 (N - 1)
 * messages in all against dissemination's N ceil(log2 N). */
int amc_alg_barrier_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    const int64_t k = AMC_BARRIER_KNOMIAL_RADIX;
    int64_t       m = 1, d, digit = 0, top;

    (void)a;
    while (m < size) {
        digit = (rank / m) % k;
        if (digit != 0) {
            break;
        }
        m *= k;
    }
    top = m; /* the children lie below this position */

    amc_sb_round(b);
    for (m = top / k; m > 0; m /= k) {
        for (d = 1; d < k; d++) {
            if (rank + d * m < size) {
                amc_sb_recv(b, (int)(rank + d * m), AMC_BUF_RECV, 0, 0);
            }
        }
    }
    if (rank != 0) {
        /* the release is posted with the arrival: it cannot come first */
        amc_sb_round(b);
        amc_sb_send(b, (int)(rank - digit * top), AMC_BUF_RECV, 0, 0);
        amc_sb_recv(b, (int)(rank - digit * top), AMC_BUF_RECV, 0, 0);
    }
    amc_sb_round(b);
    for (m = top / k; m > 0; m /= k) {
        for (d = k - 1; d >= 1; d--) {
            if (rank + d * m < size) {
                amc_sb_send(b, (int)(rank + d * m), AMC_BUF_RECV, 0, 0);
            }
        }
    }
    return AMC_SUCCESS;
}

/* Linear barrier: every rank tells rank 0 and waits for its release; rank
 * 0 releases everyone once all have come. Two hops, but rank 0 handles
 * 2 (N - 1) messages: for small communicators. */
int amc_alg_barrier_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    int i;

    (void)a;
    amc_sb_round(b);
    if (rank != 0) {
        amc_sb_send(b, 0, AMC_BUF_RECV, 0, 0);
        amc_sb_recv(b, 0, AMC_BUF_RECV, 0, 0);
        return AMC_SUCCESS;
    }
    for (i = 1; i < size; i++) {
        amc_sb_recv(b, i, AMC_BUF_RECV, 0, 0);
    }
    amc_sb_round(b);
    for (i = 1; i < size; i++) {
        amc_sb_send(b, i, AMC_BUF_RECV, 0, 0);
    }
    return AMC_SUCCESS;
}
