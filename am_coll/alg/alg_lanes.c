/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware algorithms in which every member of a node takes part in the
 * exchange across nodes ("multi-lane", after Traff and Hunold, "Decomposing
 * MPI collectives for exploiting multi-lane communication", 2020), for the
 * latency-bound barrier and small allreduce.
 *
 * A leader-based two-level algorithm (alg_hier.c) pays a tree inside the
 * node twice and log2(nodes) hops across; with nodes laid out in blocks,
 * the flat dissemination barrier and recursive doubling already cost
 * log2(members) hops inside and log2(nodes) across, so the leaders gain
 * nothing. Here the hops across nodes collapse into one: after a step
 * inside the node, each node's members split the other nodes among them
 * and send to all of them at once, then a second step inside the node
 * combines what each member heard.
 *
 * Lanes: W = the smallest node's member count; member j < W of every node
 * is lane j. Lane j hears from the nodes [j c, (j + 1) c) (c = ceil(nodes /
 * W)); a node's message to node n leaves from its lane n mod W. So each
 * member sends and receives about nodes / W messages across, and the nodes
 * a lane hears from are a contiguous range of node ids, which keeps the
 * allreduce's slots in node order.
 */
#include "am_coll/alg/alg.h"

#include "am_coll/context/topo.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct {
    int  nnodes;
    int  node;     /* this rank's */
    int  me;       /* this rank's index among its node's members */
    int  nlocal;   /* its node's members */
    int  lanes;    /* W */
    int  per_lane; /* c: nodes a lane hears from */
    int  block;    /* > 0: node i is members [i block, (i + 1) block) */
    int  size;
    int *start;    /* else: [nnodes + 1] each node's first place in members */
    int *members;  /* [size] the members by node, in communicator order within */
} amc_lanes_t;

static int amc_lanes_node_size(const amc_lanes_t *l, int node)
{
    if (l->block > 0) {
        int rest = l->size - node * l->block;

        return (rest < l->block) ? rest : l->block;
    }
    return l->start[node + 1] - l->start[node];
}

/* The j-th member of node */
static int amc_lanes_member(const amc_lanes_t *l, int node, int j)
{
    return (l->block > 0) ? node * l->block + j : l->members[l->start[node] + j];
}

static int amc_lanes_init(amc_lanes_t *l, const amc_coll_args_t *a, int rank, int size)
{
    const amc_topo_t *topo = a->topo;
    int               r, n, *fill;

    if ((topo != NULL) && (topo->size != size)) {
        return AMC_ERR_ARG; /* a topology of another communicator: a bug */
    }
    l->size    = size;
    l->start   = NULL;
    l->members = NULL;
    l->nnodes  = ((topo != NULL) && (topo->nnodes > 0)) ? topo->nnodes : 1;
    if (l->nnodes == 1) {
        l->block = size;
    } else if (topo->block > 0) {
        l->block = topo->block;
    } else {
        /* a counting sort of the members by node: O(size), as any schedule */
        l->block = 0;
        l->start = calloc((size_t)(l->nnodes + 1) + (size_t)size, sizeof(int));
        if (l->start == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        l->members = l->start + l->nnodes + 1;
        for (r = 0; r < size; r++) {
            l->start[amc_topo_node(topo, r) + 1]++;
        }
        for (n = 0; n < l->nnodes; n++) {
            l->start[n + 1] += l->start[n];
        }
        fill = malloc((size_t)l->nnodes * sizeof(int));
        if (fill == NULL) {
            free(l->start);
            return AMC_ERR_NO_MEMORY;
        }
        for (n = 0; n < l->nnodes; n++) {
            fill[n] = l->start[n];
        }
        for (r = 0; r < size; r++) {
            l->members[fill[amc_topo_node(topo, r)]++] = r;
        }
        free(fill);
    }
    l->node  = amc_topo_node(topo, rank);
    l->me    = 0;
    if (l->block > 0) {
        l->me = rank - l->node * l->block;
    } else {
        while (amc_lanes_member(l, l->node, l->me) != rank) {
            l->me++;
        }
    }
    l->nlocal   = amc_lanes_node_size(l, l->node);
    l->lanes    = (l->nnodes > 1) ? topo->min_node : size;
    l->per_lane = (l->nnodes + l->lanes - 1) / l->lanes;
    return AMC_SUCCESS;
}

static void amc_lanes_cleanup(amc_lanes_t *l)
{
    free(l->start);
}

/* The dissemination barrier among this node's members. */
static void amc_lanes_node_barrier(amc_sched_builder_t *b, const amc_lanes_t *l)
{
    int d;

    for (d = 1; d < l->nlocal; d *= 2) {
        amc_sb_round(b);
        amc_sb_send(b, amc_lanes_member(l, l->node, (l->me + d) % l->nlocal), AMC_BUF_RECV, 0,
                    0);
        amc_sb_recv(b, amc_lanes_member(l, l->node, (l->me - d + l->nlocal) % l->nlocal),
                    AMC_BUF_RECV, 0, 0);
    }
}

/* The one step across nodes: this lane sends bytes of sbuf to the nodes it
 * serves and receives node m's into rbuf at m * bytes (all at 0 when bytes
 * is 0). Members past the lanes have no part in it. */
static void amc_lanes_across(amc_sched_builder_t *b, const amc_lanes_t *l, int sbuf, int rbuf,
                             size_t bytes)
{
    int m, hi;

    if (l->me >= l->lanes) {
        return;
    }
    for (m = l->me; m < l->nnodes; m += l->lanes) {
        if (m != l->node) {
            amc_sb_send(b, amc_lanes_member(l, m, l->node / l->per_lane), sbuf, 0, bytes);
        }
    }
    hi = (l->me + 1) * l->per_lane;
    hi = (hi < l->nnodes) ? hi : l->nnodes;
    for (m = l->me * l->per_lane; m < hi; m++) {
        if (m != l->node) {
            amc_sb_recv(b, amc_lanes_member(l, m, l->node % l->lanes), rbuf, (size_t)m * bytes,
                        bytes);
        }
    }
}

/* Barrier: the node's members meet; each lane tells the nodes it serves
 * and hears from its own; the members meet again, so that each has heard,
 * through the others, from every node. When a lane's share is over
 * AMC_LANES_ONE_STEP_MAX nodes, the step across becomes the rounds of a
 * dissemination barrier over the nodes of radix W + 1 (in round r lane j
 * tells node + (j + 1) (W + 1)^r), the members meeting after each round so
 * that each round passes on all that the node has heard. */
int amc_alg_barrier_lanes(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_lanes_t l;
    int64_t     dist, t;
    int         status;

    status = amc_lanes_init(&l, a, rank, size);
    if (status != AMC_SUCCESS) {
        return status;
    }
    amc_lanes_node_barrier(b, &l);
    if ((l.nnodes > 1) && (l.per_lane <= AMC_LANES_ONE_STEP_MAX)) {
        amc_sb_round(b);
        amc_lanes_across(b, &l, AMC_BUF_RECV, AMC_BUF_RECV, 0);
        amc_lanes_node_barrier(b, &l);
    } else if (l.nnodes > 1) {
        for (dist = 1; dist < l.nnodes; dist *= (int64_t)l.lanes + 1) {
            amc_sb_round(b);
            t = (int64_t)(l.me + 1) * dist;
            if ((l.me < l.lanes) && (t < l.nnodes)) {
                amc_sb_send(b, amc_lanes_member(&l, (int)((l.node + t) % l.nnodes), l.me),
                            AMC_BUF_RECV, 0, 0);
                amc_sb_recv(b,
                            amc_lanes_member(&l, (int)((l.node - t + l.nnodes) % l.nnodes),
                                             l.me),
                            AMC_BUF_RECV, 0, 0);
            }
            amc_lanes_node_barrier(b, &l);
        }
    }
    amc_lanes_cleanup(&l);
    return AMC_SUCCESS;
}

/* Which slots of the scratch lane j brings to the gather: in the one step,
 * the nodes it heard from ([j c, (j + 1) c), node order); in a round of
 * radix k, slot j, where it received (from digit - j - 1; lanes past k - 1
 * bring none, slot k - 1 is the node's own). [*lo, *hi) */
typedef struct {
    int radix;  /* 0: the one step */
    int digit;
} amc_lanes_slots_t;

static void amc_lanes_slots_of(const amc_lanes_t *l, const amc_lanes_slots_t *sl, int j,
                               int *lo, int *hi)
{
    if (sl->radix == 0) {
        *lo = j * l->per_lane;
        *hi = (*lo + l->per_lane < l->nnodes) ? *lo + l->per_lane : l->nnodes;
    } else if (j < sl->radix - 1) {
        *lo = j;
        *hi = j + 1;
    } else {
        *lo = *hi = 0;
    }
}

#define AMC_LANES_MAX_PIECES 2

/* Lanes [first, first + cnt) mod W as byte ranges of the slots, adjacent
 * ones merged (both maps ascend and wrap at most once: two pieces at
 * most). Returns how many. */
static int amc_lanes_pieces(const amc_lanes_t *l, const amc_lanes_slots_t *sl, int nl,
                            int first, int cnt, size_t bytes, size_t off[], size_t len[])
{
    int n = 0, i, lo, hi, plo = 0, phi = 0;

    for (i = 0; i < cnt; i++) {
        amc_lanes_slots_of(l, sl, (first + i) % nl, &lo, &hi);
        if (hi <= lo) {
            continue;
        }
        if ((n > 0) && (phi == lo)) {
            phi = hi;
        } else {
            if (n == AMC_LANES_MAX_PIECES) {
                break; /* cannot happen with these maps */
            }
            n++;
            plo = lo;
            phi = hi;
        }
        off[n - 1] = (size_t)plo * bytes;
        len[n - 1] = (size_t)(phi - plo) * bytes;
    }
    return n;
}

/* The gather of the slots among lanes [0, nl) (dissemination: in the round
 * of distance d, lane j passes what it holds of lanes [j, j + d) to lane
 * j - d). */
static void amc_lanes_gather(amc_sched_builder_t *b, const amc_lanes_t *l,
                             const amc_lanes_slots_t *sl, int nl, const int *local, size_t bytes)
{
    size_t off[AMC_LANES_MAX_PIECES], len[AMC_LANES_MAX_PIECES];
    int    d, k, np, j;

    for (d = 1; d < nl; d *= 2) {
        k = (d < nl - d) ? d : nl - d;
        amc_sb_round(b);
        np = amc_lanes_pieces(l, sl, nl, l->me, k, bytes, off, len);
        for (j = 0; j < np; j++) {
            amc_sb_send(b, local[(l->me - d + nl) % nl], AMC_BUF_TMP, off[j], len[j]);
        }
        np = amc_lanes_pieces(l, sl, nl, (l->me + d) % nl, k, bytes, off, len);
        for (j = 0; j < np; j++) {
            amc_sb_recv(b, local[(l->me + d) % nl], AMC_BUF_TMP, off[j], len[j]);
        }
    }
}

/* Slots [0, n) folded in one fixed tree (halves, lower ones on the left)
 * into the receive buffer: the same bits wherever the slots are equal. */
static void amc_lanes_fold(amc_sched_builder_t *b, int n, size_t bytes)
{
    int h;

    for (; n > 1; n -= h) {
        h = n / 2;
        amc_sb_round(b);
        amc_sb_reduce(b, AMC_BUF_TMP, 0, AMC_BUF_TMP, (size_t)(n - h) * bytes, (size_t)h * bytes,
                      1);
    }
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, bytes);
}

/* A round's k slots folded in digit order (slot j holds digit digit - j - 1,
 * slot k - 1 the node's own): the same tree over digits as amc_lanes_fold,
 * one act per pair, so every node of the group gets the same bits. */
static void amc_lanes_fold_digits(amc_sched_builder_t *b, int k, int digit, size_t bytes)
{
    int n, h, i;

#define AMC_LANES_POS(x) ((size_t)((digit - 1 - (x) + 2 * k) % k) * bytes)
    for (n = k; n > 1; n -= h) {
        h = n / 2;
        amc_sb_round(b);
        for (i = 0; i < h; i++) {
            amc_sb_reduce(b, AMC_BUF_TMP, AMC_LANES_POS(i), AMC_BUF_TMP, AMC_LANES_POS(n - h + i),
                          bytes, 1);
        }
    }
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, AMC_LANES_POS(0), bytes);
#undef AMC_LANES_POS
}

/* Allreduce (commutative ops, small vectors): recursive doubling inside
 * the node gives every member the node's result. One step across (a
 * lane's share up to AMC_LANES_ALLREDUCE_ONE_STEP nodes): the lanes send it
 * to the nodes they serve and put the results they hear into the scratch,
 * one slot per node in node order; they gather all slots and each folds
 * them in the same fixed tree over node order. Beyond, rounds of radix k_i
 * over the digits of the node ids (nodes whose ids differ only in digit i
 * form a group): in round i lane j sends the node's value to the group
 * member at digit + j + 1 and receives the one at digit - j - 1 into slot
 * j, the lanes gather the k_i slots and fold them in digit
 * order, so every member of a group, and after the last round every rank
 * of the job, has the same bits. Members past the lanes (in the radix
 * form, past its first radix) get the result from their lane. */
int amc_alg_allreduce_lanes(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t            bytes = a->count * a->dt_size;
    amc_lanes_t       l;
    amc_lanes_slots_t sl = { 0, 0 };
    int              *local, partner, status, i, r, nr, radix[32], stride, base, t, nl;

    status = amc_lanes_init(&l, a, rank, size);
    if (status != AMC_SUCCESS) {
        return status;
    }
    local   = malloc((size_t)l.nlocal * sizeof(int));
    partner = amc_sb_buffer(b, bytes);
    if (local == NULL) {
        amc_lanes_cleanup(&l);
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < l.nlocal; i++) {
        local[i] = amc_lanes_member(&l, l.node, i);
    }
    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
    }
    amc_alg_recdbl_among(b, local, l.nlocal, l.me, partner, bytes);
    nr = (l.per_lane > AMC_LANES_ALLREDUCE_ONE_STEP) ? amc_topo_radices(l.nnodes, l.lanes + 1,
                                                                        radix, 32) : 0;
    if ((l.nnodes > 1) && (nr == 0)) {
        amc_sb_tmp(b, (size_t)l.nnodes * bytes);
        amc_sb_round(b);
        if ((l.me < l.lanes) && (l.node / l.per_lane == l.me)) {
            amc_sb_copy(b, AMC_BUF_TMP, (size_t)l.node * bytes, AMC_BUF_RECV, 0, bytes);
        }
        amc_lanes_across(b, &l, AMC_BUF_RECV, AMC_BUF_TMP, bytes);
        if (l.me < l.lanes) {
            amc_lanes_gather(b, &l, &sl, l.lanes, local, bytes);
            amc_lanes_fold(b, l.nnodes, bytes);
        }
    }
    /* the radix form's lanes: one fewer than its first (largest) radix (the
     * node's own value needs no lane) */
    nl = (nr > 0) ? radix[0] - 1 : l.lanes;
    for (r = 0, stride = 1; r < nr; stride *= radix[r], r++) {
        sl.radix = radix[r];
        sl.digit = (l.node / stride) % sl.radix;
        base     = l.node - sl.digit * stride;
        if (r == 0) {
            amc_sb_tmp(b, (size_t)radix[0] * bytes);
        }
        amc_sb_round(b);
        if (l.me >= nl) {
            continue;
        }
        amc_sb_copy(b, AMC_BUF_TMP, (size_t)(sl.radix - 1) * bytes, AMC_BUF_RECV, 0, bytes);
        if (l.me < sl.radix - 1) {
            t = l.me + 1;
            amc_sb_send(b, amc_lanes_member(&l, base + ((sl.digit + t) % sl.radix) * stride, l.me),
                        AMC_BUF_RECV, 0, bytes);
            amc_sb_recv(b,
                        amc_lanes_member(&l, base + ((sl.digit - t + sl.radix) % sl.radix) *
                                                        stride, l.me),
                        AMC_BUF_TMP, (size_t)l.me * bytes, bytes);
        }
        amc_lanes_gather(b, &l, &sl, nl, local, bytes);
        amc_lanes_fold_digits(b, sl.radix, sl.digit, bytes);
    }
    if ((l.nnodes > 1) && (l.nlocal > nl)) {
        amc_sb_round(b);
        if (l.me < nl) {
            for (i = l.me + nl; i < l.nlocal; i += nl) {
                amc_sb_send(b, local[i], AMC_BUF_RECV, 0, bytes);
            }
        } else {
            amc_sb_recv(b, local[l.me % nl], AMC_BUF_RECV, 0, bytes);
        }
    }
    free(local);
    amc_lanes_cleanup(&l);
    return AMC_SUCCESS;
}
