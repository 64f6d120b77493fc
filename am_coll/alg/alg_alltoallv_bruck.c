/* SPDX-License-Identifier: BSD-3-Clause */
/* Bruck alltoallv for small blocks, hybrid as UCC's: the blocks of up to
 * a->bruck_block bytes take Bruck's ceil(log2 N) steps (alg_alltoall_bruck.c
 * tells how blocks move and where they are kept), the larger ones go straight
 * to their destination, all of them from the start.
 *
 * A rank that passes a block on knows neither its sender's count nor its
 * receiver's, so the steps carry every block in a slot of the same size: a
 * stamp, then up to bruck_block bytes (padding, for blocks that are
 * shorter). The stamp says the block's length, or that it goes straight.
 * Both ends of a block know its size from their own counts and so choose
 * alike which way it goes; where their counts disagree (an erroneous call),
 * the receiver's check of the stamp says so, and the instance gives up at
 * once (AMC_ERR_TRUNCATE, the other ranks told) rather than wait for a
 * message that went the other way.
 *
 * Scratch: [staging (in place): the receive buffer][slots: N][pack][unpack],
 * pack and unpack as many slots as the largest step moves. */
#include "am_coll/alg/alg.h"
#include "am_coll/alg/alg_bruck.h"

typedef struct {
    const amc_coll_args_t *a;
    int           rank, size;
    size_t        max;     /* the largest block that travels in steps */
    size_t        slot;    /* stamp + max, whole stamps */
    int           orig;    /* where the blocks to send are: the send buffer, or
                            * in place the staging area at scratch offset 0 */
    const size_t *scounts; /* their layout there */
    const size_t *sdispls;
    size_t        slots;   /* scratch offsets */
    size_t        pack;
    size_t        unpack;
} amc_vbruck_t;

static size_t amc_vbruck_bytes(const amc_vbruck_t *t, const size_t *counts, int i)
{
    return counts[i] * t->a->dt_size;
}

/* 0 for an empty block: the buffer may be NULL */
static size_t amc_vbruck_off(const amc_vbruck_t *t, const size_t *counts, const size_t *displs,
                             int i)
{
    return (counts[i] > 0) ? displs[i] * t->a->dt_size : 0;
}

static int amc_vbruck_dst(const amc_vbruck_t *t, int i)
{
    return (t->rank + i) % t->size;
}

static int amc_vbruck_src(const amc_vbruck_t *t, int i)
{
    return (t->rank - i + t->size) % t->size;
}

/* Into pack slot at: this rank's block i (stamped) the first time it moves,
 * else what is kept in slot i. */
static void amc_vbruck_pack(amc_sched_builder_t *b, const void *arg, int k)
{
    const amc_vbruck_t *t   = arg;
    amc_bruck_run_t     run = { 0, 0, 0, 0, 0 };
    size_t              at  = t->pack, len;
    int                 i, dst;

    for (i = 1; i < t->size; i++) {
        if (!(i & k)) {
            continue;
        }
        if (amc_bruck_lowest(i) != k) {
            amc_bruck_copy(b, &run, AMC_BUF_TMP, at, AMC_BUF_TMP, t->slots + (size_t)i * t->slot,
                           t->slot);
            at += t->slot;
            continue;
        }
        amc_bruck_flush(b, &run);
        dst = amc_vbruck_dst(t, i);
        len = amc_vbruck_bytes(t, t->scounts, dst);
        if (len > t->max) {
            amc_sb_stamp(b, AMC_BUF_TMP, at, AMC_SCHED_STAMP_ELSEWHERE);
        } else {
            amc_sb_stamp(b, AMC_BUF_TMP, at, len);
            amc_sb_copy(b, AMC_BUF_TMP, at + AMC_SCHED_STAMP_BYTES, t->orig,
                        amc_vbruck_off(t, t->scounts, t->sdispls, dst), len);
        }
        at += t->slot;
    }
    amc_bruck_flush(b, &run);
}

/* Out of the unpack area: a block at its destination is checked and copied
 * into place, one still on its way is kept in its slot. */
static void amc_vbruck_unpack(amc_sched_builder_t *b, const void *arg, int k)
{
    const amc_vbruck_t    *t   = arg;
    const amc_coll_args_t *a   = t->a;
    amc_bruck_run_t        run = { 0, 0, 0, 0, 0 };
    size_t                 at  = t->unpack, len;
    int                    i, src;

    for (i = 1; i < t->size; i++) {
        if (!(i & k)) {
            continue;
        }
        if (amc_bruck_highest(i) != k) {
            amc_bruck_copy(b, &run, AMC_BUF_TMP, t->slots + (size_t)i * t->slot, AMC_BUF_TMP, at,
                           t->slot);
            at += t->slot;
            continue;
        }
        amc_bruck_flush(b, &run);
        src = amc_vbruck_src(t, i);
        len = amc_vbruck_bytes(t, a->rcounts, src);
        if (len > t->max) {
            amc_sb_check(b, AMC_BUF_TMP, at, AMC_SCHED_STAMP_ELSEWHERE, src);
        } else {
            amc_sb_check(b, AMC_BUF_TMP, at, len, src);
            amc_sb_copy(b, AMC_BUF_RECV, amc_vbruck_off(t, a->rcounts, a->rdispls, src),
                        AMC_BUF_TMP, at + AMC_SCHED_STAMP_BYTES, len);
        }
        at += t->slot;
    }
    amc_bruck_flush(b, &run);
}

/* The blocks too large for the steps, straight between their two ends; in
 * place after the staging copy (act stage), which reads the places they land
 * on. */
static void amc_vbruck_direct(amc_sched_builder_t *b, const amc_vbruck_t *t, int stage)
{
    const amc_coll_args_t *a = t->a;
    int                    i, peer;

    amc_sb_stage(b);
    for (i = 1; i < t->size; i++) {
        peer = amc_vbruck_dst(t, i);
        if (amc_vbruck_bytes(t, t->scounts, peer) > t->max) {
            amc_sb_send(b, peer, t->orig, amc_vbruck_off(t, t->scounts, t->sdispls, peer),
                        amc_vbruck_bytes(t, t->scounts, peer));
            if (stage >= 0) {
                amc_sb_requires(b, amc_sb_last(b), stage);
            }
        }
    }
    for (i = 1; i < t->size; i++) {
        peer = amc_vbruck_src(t, i);
        if (amc_vbruck_bytes(t, a->rcounts, peer) > t->max) {
            amc_sb_recv(b, peer, AMC_BUF_RECV, amc_vbruck_off(t, a->rcounts, a->rdispls, peer),
                        amc_vbruck_bytes(t, a->rcounts, peer));
            if (stage >= 0) {
                amc_sb_requires(b, amc_sb_last(b), stage);
            }
        }
    }
}

/* Bytes of the receive buffer that blocks cover (its staging copy in place). */
static size_t amc_vbruck_extent(const amc_vbruck_t *t)
{
    size_t end, most = 0;
    int    i;

    for (i = 0; i < t->size; i++) {
        end  = amc_vbruck_off(t, t->a->rcounts, t->a->rdispls, i) +
               amc_vbruck_bytes(t, t->a->rcounts, i);
        most = (end > most) ? end : most;
    }
    return most;
}

int amc_alg_alltoallv_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_vbruck_t t;
    size_t       staged = 0, most;
    int          stage = -1;

    t.a       = a;
    t.rank    = rank;
    t.size    = size;
    t.max     = (a->bruck_block < AMC_ALLTOALLV_BRUCK_BLOCK_MAX) ? a->bruck_block
                                                                 : AMC_ALLTOALLV_BRUCK_BLOCK_MAX;
    t.slot    = AMC_SCHED_STAMP_BYTES +
                (t.max + AMC_SCHED_STAMP_BYTES - 1) / AMC_SCHED_STAMP_BYTES *
                    AMC_SCHED_STAMP_BYTES;
    t.orig    = a->in_place ? AMC_BUF_TMP : AMC_BUF_SEND;
    t.scounts = a->in_place ? a->rcounts : a->scounts;
    t.sdispls = a->in_place ? a->rdispls : a->sdispls;

    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, amc_vbruck_off(&t, a->rcounts, a->rdispls, rank),
                    AMC_BUF_SEND, amc_vbruck_off(&t, a->scounts, a->sdispls, rank),
                    amc_vbruck_bytes(&t, a->rcounts, rank));
    }
    if (size == 1) {
        return AMC_SUCCESS;
    }
    if (a->in_place) {
        staged = amc_vbruck_extent(&t);
        amc_sb_copy(b, AMC_BUF_TMP, 0, AMC_BUF_RECV, 0, staged);
        stage  = (staged > 0) ? amc_sb_last(b) : -1;
        staged = (staged + AMC_SCHED_STAMP_BYTES - 1) / AMC_SCHED_STAMP_BYTES *
                 AMC_SCHED_STAMP_BYTES;
    }
    most     = (size_t)amc_bruck_most(size);
    t.slots  = staged;
    t.pack   = t.slots + (size_t)size * t.slot;
    t.unpack = t.pack + most * t.slot;
    amc_sb_tmp(b, t.unpack + most * t.slot);
    /* a sender whose slots differ (AMC_ALLTOALLV_BRUCK_BLOCK) would have
     * every stamp after its first read from the wrong place */
    amc_bruck_steps(b, rank, size, t.slot, t.pack, t.unpack, amc_vbruck_pack, amc_vbruck_unpack,
                    &t, 1);
    amc_vbruck_direct(b, &t, stage);
    return AMC_SUCCESS;
}
