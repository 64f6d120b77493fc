/* SPDX-License-Identifier: BSD-3-Clause */
/* Bruck alltoall for small blocks: ceil(log2 N) messages per rank instead
 * of N - 1, each carrying about half the blocks, so it trades bandwidth for
 * fewer message overheads. Number the blocks of rank r by distance: block i
 * is the one for rank r + i. In the step of distance k (k = 1, 2, 4, ...)
 * every block whose i has bit k set moves k ranks on, to r + k, keeping its
 * i; after the last step block i has moved i ranks and sits at its
 * destination, where it came from rank r - i.
 *
 * Bruck's local rotations (before the steps: block i to slot i; after:
 * slot i to rank r - i's place) are folded into the packing copies that a
 * step needs anyway, as its blocks are not contiguous: a block is packed
 * straight from the send buffer the first time it moves (its lowest set
 * bit) and unpacked straight into its place in the receive buffer the last
 * time (its highest), and kept in scratch slot i in between. Block 0 is
 * this rank's own and only copied. In place, the receive buffer is staged in
 * scratch first, as later blocks land on places not sent yet.
 *
 * Scratch: [staging (in place): N blocks][slots: N blocks][pack][unpack],
 * pack and unpack as large as the largest step. */
#include "am_coll/alg/alg.h"
#include "am_coll/alg/alg_bruck.h"

typedef struct {
    int    rank, size;
    size_t bytes;     /* per block */
    int    orig;      /* where the blocks are before they move: the send buffer, or
                       * in place the staging area at scratch offset 0 */
    size_t slots;     /* scratch offsets */
    size_t pack;
    size_t unpack;
} amc_bruck_t;

/* The blocks that move at distance k into the pack area, in order of i. */
static void amc_bruck_pack(amc_sched_builder_t *b, const void *arg, int k)
{
    const amc_bruck_t *t   = arg;
    amc_bruck_run_t    run = { 0, 0, 0, 0, 0 };
    size_t             at  = t->pack;
    int                i;

    for (i = 1; i < t->size; i++) {
        if (!(i & k)) {
            continue;
        }
        if (amc_bruck_lowest(i) == k) {
            amc_bruck_copy(b, &run, AMC_BUF_TMP, at, t->orig,
                           (size_t)((t->rank + i) % t->size) * t->bytes, t->bytes);
        } else {
            amc_bruck_copy(b, &run, AMC_BUF_TMP, at, AMC_BUF_TMP,
                           t->slots + (size_t)i * t->bytes, t->bytes);
        }
        at += t->bytes;
    }
    amc_bruck_flush(b, &run);
}

/* The blocks received at distance k out of the unpack area: into their
 * slots, or where they belong when this was their last move. */
static void amc_bruck_unpack(amc_sched_builder_t *b, const void *arg, int k)
{
    const amc_bruck_t *t   = arg;
    amc_bruck_run_t    run = { 0, 0, 0, 0, 0 };
    size_t             at  = t->unpack;
    int                i;

    for (i = 1; i < t->size; i++) {
        if (!(i & k)) {
            continue;
        }
        if (amc_bruck_highest(i) == k) {
            amc_bruck_copy(b, &run, AMC_BUF_RECV,
                           (size_t)((t->rank - i + t->size) % t->size) * t->bytes, AMC_BUF_TMP,
                           at, t->bytes);
        } else {
            amc_bruck_copy(b, &run, AMC_BUF_TMP, t->slots + (size_t)i * t->bytes, AMC_BUF_TMP,
                           at, t->bytes);
        }
        at += t->bytes;
    }
    amc_bruck_flush(b, &run);
}

int amc_alg_alltoall_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_bruck_t t;
    size_t      all = (size_t)size * a->count * a->dt_size, most;

    t.rank     = rank;
    t.size     = size;
    t.bytes    = a->count * a->dt_size;
    t.orig     = a->in_place ? AMC_BUF_TMP : AMC_BUF_SEND;
    most     = (size_t)amc_bruck_most(size);
    t.slots  = a->in_place ? all : 0;
    t.pack   = t.slots + all;
    t.unpack = t.pack + most * t.bytes;

    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * t.bytes, AMC_BUF_SEND,
                    (size_t)rank * t.bytes, t.bytes);
    }
    if (size == 1) {
        return AMC_SUCCESS;
    }
    amc_sb_tmp(b, t.unpack + most * t.bytes);
    if (a->in_place) {
        amc_sb_copy(b, AMC_BUF_TMP, 0, AMC_BUF_RECV, 0, all);
    }
    amc_bruck_steps(b, rank, size, t.bytes, t.pack, t.unpack, amc_bruck_pack, amc_bruck_unpack,
                    &t, 0);
    return AMC_SUCCESS;
}
