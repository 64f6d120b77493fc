/* SPDX-License-Identifier: BSD-3-Clause */
/* The vector forms: the same schedules as their fixed-size counterparts
 * (linear gather and scatter, ring allgather, pairwise alltoall), with each
 * block's size and place taken from the count and displacement arrays. Both
 * ends of a message compute its size from their own arrays, so ranks that
 * disagree get AMC_ERR_TRUNCATE as with the fixed forms. An empty block is
 * still sent (a zero-length message) so that a disagreement shows; its
 * offset is 0, because the buffer may be NULL. */
#include "am_coll/alg/alg.h"

#include <stdlib.h>

/* Bytes of block i and their offset in a buffer laid out by counts/displs. */
static size_t amc_alg_vbytes(const amc_coll_args_t *a, const size_t *counts, int i)
{
    return counts[i] * a->dt_size;
}

static size_t amc_alg_voff(const amc_coll_args_t *a, const size_t *counts, const size_t *displs,
                           int i)
{
    return (counts[i] > 0) ? displs[i] * a->dt_size : 0;
}

int amc_alg_gatherv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t own, off;
    int    late = 0, i;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_send(b, a->root, AMC_BUF_SEND, 0, a->scount * a->dt_size);
        return AMC_SUCCESS;
    }
    own = amc_alg_vbytes(a, a->rcounts, rank);
    off = amc_alg_voff(a, a->rcounts, a->rdispls, rank);
    for (i = 0; i < size; i++) {
        late |= (i != rank) && amc_alg_pulled(a, amc_alg_vbytes(a, a->rcounts, i));
    }
    if (!a->in_place && !late) {
        amc_sb_copy(b, AMC_BUF_RECV, off, AMC_BUF_SEND, 0, own);
    }
    for (i = 0; i < size; i++) {
        if (i != rank) {
            amc_sb_recv(b, i, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, i),
                        amc_alg_vbytes(a, a->rcounts, i));
        }
    }
    amc_alg_own_block_late(b, a, late, AMC_BUF_RECV, off, AMC_BUF_SEND, 0, own);
    return AMC_SUCCESS;
}

int amc_alg_scatterv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    int i;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_recv(b, a->root, AMC_BUF_RECV, 0, a->rcount * a->dt_size);
        return AMC_SUCCESS;
    }
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, amc_alg_voff(a, a->scounts, a->sdispls, rank),
                    amc_alg_vbytes(a, a->scounts, rank));
    }
    for (i = 0; i < size; i++) {
        if (i != rank) {
            amc_sb_send(b, i, AMC_BUF_SEND, amc_alg_voff(a, a->scounts, a->sdispls, i),
                        amc_alg_vbytes(a, a->scounts, i));
        }
    }
    return AMC_SUCCESS;
}

/* Ring: in step k rank r forwards block r-k and receives block r-k-1; MPI
 * forbids overlapping receive blocks, so the two never overlap. */
int amc_alg_allgatherv_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size, k, out, in;

    /* the first step is a stage, as in alg_allgather.c */
    amc_sb_stage(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, rank), AMC_BUF_SEND,
                    0, amc_alg_vbytes(a, a->rcounts, rank));
    }
    for (k = 0; k < size - 1; k++) {
        out = (rank - k + size) % size;
        in  = (rank - k - 1 + 2 * size) % size;
        if (k > 0) {
            amc_sb_round(b);
        }
        if ((k == 0) && !a->in_place) {
            amc_sb_send(b, right, AMC_BUF_SEND, 0, amc_alg_vbytes(a, a->rcounts, out));
        } else {
            amc_sb_send(b, right, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, out),
                        amc_alg_vbytes(a, a->rcounts, out));
        }
        amc_sb_recv(b, left, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, in),
                    amc_alg_vbytes(a, a->rcounts, in));
    }
    return AMC_SUCCESS;
}

/* Linear: every rank's block to every other rank at once (alg_allgather.c). */
int amc_alg_allgatherv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size)
{
    size_t off = amc_alg_voff(a, a->rcounts, a->rdispls, rank);
    size_t len = amc_alg_vbytes(a, a->rcounts, rank);
    int    k, peer;

    /* a stage: the sends read the caller's block, the copy of it runs
     * once they are posted (alg_allgather.c) */
    amc_sb_stage(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, off, AMC_BUF_SEND, 0, len);
    }
    for (k = 1; k < size; k++) {
        amc_sb_send(b, (rank + k) % size, a->in_place ? AMC_BUF_RECV : AMC_BUF_SEND,
                    a->in_place ? off : 0, len);
    }
    for (k = 1; k < size; k++) {
        peer = (rank - k + size) % size;
        amc_sb_recv(b, peer, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, peer),
                    amc_alg_vbytes(a, a->rcounts, peer));
    }
    return AMC_SUCCESS;
}

/* Pairwise exchange: in step k rank r sends to r+k and receives from r-k;
 * linear: the same messages all in one step (see alg_alltoall.c). In place
 * (MPI: the blocks to send are the receive blocks, and counts must be
 * symmetric) every block is first packed into scratch, since the block for
 * r+k would be overwritten in an earlier step otherwise. */
static int amc_alg_alltoallv_steps(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                   int size, int pairwise)
{
    const size_t *scounts = a->scounts, *sdispls = a->sdispls;
    size_t        packed = 0, *pack = NULL;
    int           from = AMC_BUF_SEND, k, dst, src;

    amc_sb_round(b);
    if (a->in_place) {
        pack = malloc((size_t)size * sizeof(*pack));
        if (pack == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        for (k = 0; k < size; k++) {
            pack[k] = packed / a->dt_size;
            if (k != rank) {
                amc_sb_copy(b, AMC_BUF_TMP, packed, AMC_BUF_RECV,
                            amc_alg_voff(a, a->rcounts, a->rdispls, k),
                            amc_alg_vbytes(a, a->rcounts, k));
                packed += amc_alg_vbytes(a, a->rcounts, k);
            }
        }
        amc_sb_tmp(b, packed);
        from    = AMC_BUF_TMP;
        scounts = a->rcounts;
        sdispls = pack;
    } else {
        amc_sb_copy(b, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, rank), AMC_BUF_SEND,
                    amc_alg_voff(a, a->scounts, a->sdispls, rank),
                    amc_alg_vbytes(a, a->rcounts, rank));
    }
    for (k = 1; k < size; k++) {
        dst = (rank + k) % size;
        src = (rank - k + size) % size;
        if (pairwise && (k > 1)) {
            amc_sb_round(b);
        }
        amc_sb_send(b, dst, from, amc_alg_voff(a, scounts, sdispls, dst),
                    amc_alg_vbytes(a, scounts, dst));
        amc_sb_recv(b, src, AMC_BUF_RECV, amc_alg_voff(a, a->rcounts, a->rdispls, src),
                    amc_alg_vbytes(a, a->rcounts, src));
    }
    free(pack);
    return AMC_SUCCESS;
}

int amc_alg_alltoallv_pairwise(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                               int size)
{
    return amc_alg_alltoallv_steps(b, a, rank, size, 1);
}

int amc_alg_alltoallv_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    return amc_alg_alltoallv_steps(b, a, rank, size, 0);
}
