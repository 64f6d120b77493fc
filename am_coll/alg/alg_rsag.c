/* SPDX-License-Identifier: BSD-3-Clause */
/* Rabenseifner's pieces, shared by the allreduce (alg_allreduce_rsag.c) and
 * the reduce (alg_reduce_large.c): the pairs that fold N down to a power of
 * two, the blocks, and the reduce-scatter by recursive halving over the
 * places that remain (the method is described in alg_allreduce_rsag.c). */
#include "am_coll/alg/alg.h"

/* The rank that takes part for the pair (2i, 2i + 1): the root if it is
 * one of them (so that it is never folded away), else the odd one. */
static int amc_rsag_keeper(const amc_rsag_t *r, int pair)
{
    return (r->root == 2 * pair) ? 2 * pair : 2 * pair + 1;
}

int amc_rsag_rank(const amc_rsag_t *r, int place)
{
    return (place < r->rem) ? amc_rsag_keeper(r, place) : place + r->rem;
}

size_t amc_rsag_off(const amc_rsag_t *r, int block)
{
    size_t base = r->count / (size_t)r->pof2, extra = r->count % (size_t)r->pof2;
    size_t i    = (size_t)block;

    return (i * base + ((i < extra) ? i : extra)) * r->dt_size;
}

void amc_rsag_init(amc_rsag_t *r, const amc_coll_args_t *a, int rank, int size, int root,
                   int work, int mine)
{
    r->pof2 = 1;
    while (r->pof2 * 2 <= size) {
        r->pof2 *= 2;
    }
    r->rem     = size - r->pof2;
    r->root    = root;
    r->rank    = rank;
    r->count   = a->count;
    r->dt_size = a->dt_size;
    r->work    = work;
    r->mine    = mine;
    r->have    = (work == mine);
    if (rank >= 2 * r->rem) {
        r->place = rank - r->rem;
        r->pair  = -1;
    } else {
        r->place = (amc_rsag_keeper(r, rank / 2) == rank) ? rank / 2 : -1;
        r->pair  = rank ^ 1;
    }
}

/* The partner's copy of [off, off + bytes) combined into the work buffer:
 * straight from the message once the work buffer holds this rank's part of
 * the result there; the first time, received into place and this rank's own
 * vector reduced in, which spares copying it into the work buffer first.
 * low: the partner holds lower blocks (or ranks): its data is the left
 * operand. */
static void amc_rsag_take(amc_sched_builder_t *b, amc_rsag_t *r, int peer, size_t off,
                          size_t bytes, int low)
{
    if (bytes > 0) {
        if (r->have) {
            amc_sb_recv_reduce(b, peer, r->work, off, bytes, !low);
        } else {
            amc_sb_recv(b, peer, r->work, off, bytes);
            amc_sb_round(b);
            amc_sb_reduce(b, r->work, off, r->mine, off, bytes, low);
        }
    }
    /* an empty range here leaves every later one empty too (they lie in it) */
    r->have = 1;
}

/* Messages of empty ranges are left out; both ends compute the same
 * ranges, so they leave out the same ones. */
void amc_rsag_send(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes)
{
    if (bytes > 0) {
        amc_sb_send(b, peer, buf, off, bytes);
    }
}

void amc_rsag_recv(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes)
{
    if (bytes > 0) {
        amc_sb_recv(b, peer, buf, off, bytes);
    }
}

void amc_rsag_fold(amc_sched_builder_t *b, amc_rsag_t *r)
{
    size_t bytes = r->count * r->dt_size;

    if (r->pair < 0) {
        return;
    }
    amc_sb_round(b);
    if (r->place < 0) {
        amc_rsag_send(b, r->pair, r->mine, 0, bytes);
    } else {
        amc_rsag_take(b, r, r->pair, 0, bytes, r->pair < r->rank);
    }
}

void amc_rsag_halve(amc_sched_builder_t *b, amc_rsag_t *r)
{
    int    lo = 0, mask, peer, keep, give;
    size_t koff, goff;

    if (r->place < 0) {
        return;
    }
    for (mask = r->pof2 / 2; mask >= 1; mask /= 2) {
        peer = r->place ^ mask;
        keep = (r->place & mask) ? lo + mask : lo;
        give = (r->place & mask) ? lo : lo + mask;
        koff = amc_rsag_off(r, keep);
        goff = amc_rsag_off(r, give);
        amc_sb_round(b);
        amc_rsag_send(b, amc_rsag_rank(r, peer), r->have ? r->work : r->mine, goff,
                      amc_rsag_off(r, give + mask) - goff);
        amc_rsag_take(b, r, amc_rsag_rank(r, peer), koff, amc_rsag_off(r, keep + mask) - koff,
                      peer < r->place);
        lo = keep;
    }
}
