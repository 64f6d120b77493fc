/* SPDX-License-Identifier: BSD-3-Clause */
/* Scatter-allgather broadcast (van de Geijn) for large messages: the root's
 * message is cut into N blocks of whole elements, block i for relative rank
 * i (the first count % N blocks one element larger, so count < N leaves
 * some empty). A binomial scatter gives each rank the blocks of its subtree,
 * then an allgather gives everyone the rest: recursive doubling when N is a
 * power of two, a ring otherwise. Every byte leaves the root about once and
 * each rank sends about the message's size in all, against log2(N) times
 * the message along a binomial tree's paths.
 *
 * After the scatter, relative rank v holds the blocks [v, v + lowbit(v))
 * (the root all of them); no message carries a block its receiver holds
 * already, or nothing at all (empty blocks, count 0), and both ends know it
 * alike. Messages carry this algorithm's id, so a rank that has not called
 * bcast yet keeps them for its call rather than forwarding them (only the
 * binomial tree's are forwarded, am_coll/coll/coll_engine.c). */
#include "am_coll/alg/alg.h"

#include <stdint.h>

typedef struct {
    size_t q;     /* elements of every block */
    size_t rem;   /* the first rem blocks have one more */
    size_t dt;    /* bytes per element */
    int    size;
    int    root;
} amc_vdg_t;

/* Byte offset of block i (i <= size: size gives the end). */
static size_t amc_vdg_off(const amc_vdg_t *v, int i)
{
    size_t n = (size_t)i;

    return (n * v->q + ((n < v->rem) ? n : v->rem)) * v->dt;
}

/* Bytes of blocks [from, to), clipped to the communicator. */
static size_t amc_vdg_span(const amc_vdg_t *v, int from, int to)
{
    if (to > v->size) {
        to = v->size;
    }
    return (to > from) ? amc_vdg_off(v, to) - amc_vdg_off(v, from) : 0;
}

/* The subtree of relative rank vr in the binomial tree: its size in ranks
 * (lowest set bit; the whole communicator for the root). */
static int amc_vdg_subtree(int vr, int size)
{
    return (vr == 0) ? size : (vr & -vr);
}

/* Whether relative rank vr holds block blk once the scatter is done. */
static int amc_vdg_holds(int vr, int blk, int size)
{
    return (blk >= vr) && (blk - vr < amc_vdg_subtree(vr, size));
}

static void amc_vdg_send(amc_sched_builder_t *b, const amc_vdg_t *v, int to, int from_blk,
                         int to_blk)
{
    size_t bytes = amc_vdg_span(v, from_blk, to_blk);

    if (bytes > 0) {
        amc_sb_send(b, amc_alg_abs(to, v->root, v->size), AMC_BUF_RECV,
                    amc_vdg_off(v, from_blk), bytes);
    }
}

static void amc_vdg_recv(amc_sched_builder_t *b, const amc_vdg_t *v, int from, int from_blk,
                         int to_blk)
{
    size_t bytes = amc_vdg_span(v, from_blk, to_blk);

    if (bytes > 0) {
        amc_sb_recv(b, amc_alg_abs(from, v->root, v->size), AMC_BUF_RECV,
                    amc_vdg_off(v, from_blk), bytes);
    }
}

/* Binomial scatter: the subtree's blocks from the parent, then each child's
 * subtree to it, the largest first. */
static void amc_vdg_scatter(amc_sched_builder_t *b, const amc_vdg_t *v, int vr)
{
    int sub = amc_vdg_subtree(vr, v->size), mask;

    if (vr != 0) {
        amc_sb_round(b);
        amc_vdg_recv(b, v, vr - sub, vr, vr + sub);
    }
    amc_sb_round(b);
    /* the largest child: the highest power of two below sub */
    mask = 1;
    while (mask < sub) {
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < v->size) {
            amc_vdg_send(b, v, vr + mask, vr + mask, vr + 2 * mask);
        }
    }
}

/* Recursive doubling (N a power of two): before the step of distance m,
 * relative rank v holds at least the m blocks of its aligned group; it
 * trades them with v ^ m. A rank whose subtree holds the partner's group
 * only sends, its partner (a child) only receives. */
static void amc_vdg_recdbl(amc_sched_builder_t *b, const amc_vdg_t *v, int vr)
{
    int low = amc_vdg_subtree(vr, v->size), m, peer, mine, theirs;

    for (m = 1; m < v->size; m <<= 1) {
        peer   = vr ^ m;
        mine   = vr & ~(m - 1);
        theirs = peer & ~(m - 1);
        amc_sb_round(b);
        /* low > m: the partner is the child vr + m, which lacks this group;
         * low == m: the partner is the parent, which holds it; low < m:
         * neither subtree holds the other's group, a plain exchange */
        if (low != m) {
            amc_vdg_send(b, v, peer, mine, mine + m);
        }
        if (low <= m) {
            amc_vdg_recv(b, v, peer, theirs, theirs + m);
        }
    }
}

/* Ring: in step s relative rank v passes block v - s to v + 1 and gets
 * block v - s - 1 from v - 1, unless the receiver holds it already (it
 * still sends it on from its own copy in the next step). */
static void amc_vdg_ring(amc_sched_builder_t *b, const amc_vdg_t *v, int vr)
{
    int n = v->size, next = (vr + 1) % n, prev = (vr - 1 + n) % n, s, out, in;

    for (s = 0; s < n - 1; s++) {
        out = (vr - s + n) % n;
        in  = (vr - s - 1 + n) % n;
        amc_sb_round(b);
        if (!amc_vdg_holds(next, out, n)) {
            amc_vdg_send(b, v, next, out, out + 1);
        }
        if (!amc_vdg_holds(vr, in, n)) {
            amc_vdg_recv(b, v, prev, in, in + 1);
        }
    }
}

int amc_alg_bcast_scatter_allgather(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                    int size)
{
    amc_vdg_t v;
    int       vr = amc_alg_rel(rank, a->root, size);

    v.q    = a->count / (size_t)size;
    v.rem  = a->count % (size_t)size;
    v.dt   = a->dt_size;
    v.size = size;
    v.root = a->root;
    if (size == 1) {
        return AMC_SUCCESS;
    }
    amc_vdg_scatter(b, &v, vr);
    if ((size & (size - 1)) == 0) {
        amc_vdg_recdbl(b, &v, vr);
    } else {
        amc_vdg_ring(b, &v, vr);
    }
    return AMC_SUCCESS;
}
