/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware (two-level) algorithms: an intra-node step, one rank per node
 * across nodes, an intra-node step, so that each node sends and receives
 * O(log nodes) messages across the network instead of O(members x log N).
 * The nodes come from amc_coll_args_t.topo (am_coll/context/topo.h), the same on
 * every member; a NULL topology is one node, where they reduce to their
 * intra-node trees.
 *
 * Every node has a head: its leader (lowest member), except that in a
 * rooted collective the root heads its own node, which saves the hop
 * between root and leader. Intra-node steps are binomial trees over the
 * node's members in communicator order, rooted at the head; the heads talk
 * in node order (node i's head is heads[i]).
 *
 * reduce and allreduce combine within nodes first, so a rank's contribution
 * meets the others in an order that depends on the layout: they are for
 * commutative ops only (AMC_ALG_FLAG_COMMUTATIVE; alg_select.c falls back
 * to the flat ones otherwise).
 */
#include "am_coll/alg/alg.h"

#include "am_coll/context/topo.h"

#include <stdlib.h>

typedef struct {
    int  nnodes;
    int  node;     /* this rank's */
    int *local;    /* [nlocal] this node's members in communicator order */
    int  nlocal;
    int  me;       /* this rank's index in local */
    int  lhead;    /* the head's index in local */
    int *heads;    /* [nnodes] */
} amc_hier_t;

/* Nodes of block consecutive members: no pass over all of them, which at
 * 65,536 ranks would be most of a schedule's cost. */
static void amc_hier_init_block(amc_hier_t *h, int block, int rank, int size, int root)
{
    int first = h->node * block, i;

    for (i = 0; i < h->nnodes; i++) {
        h->heads[i] = i * block;
    }
    for (i = first; (i < first + block) && (i < size); i++) {
        h->local[h->nlocal++] = i;
    }
    h->me = rank - first;
    if (root >= 0) {
        h->heads[root / block] = root;
    }
    h->lhead = h->heads[h->node] - first;
}

static int amc_hier_init(amc_hier_t *h, const amc_coll_args_t *a, int rank, int size, int root)
{
    const amc_topo_t *topo = a->topo;
    int               r, n, i, block;

    if ((topo != NULL) && (topo->size != size)) {
        return AMC_ERR_ARG; /* a topology of another communicator: a bug */
    }
    h->nnodes = ((topo != NULL) && (topo->nnodes > 0)) ? topo->nnodes : 1;
    h->node   = amc_topo_node(topo, rank);
    h->nlocal = 0;
    h->me     = 0;
    h->lhead  = 0;
    block     = ((topo != NULL) && (topo->block > 0)) ? topo->block : 0;
    h->local  = malloc((size_t)((block ? block : size) + h->nnodes) * sizeof(int));
    if (h->local == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    h->heads = h->local + (block ? block : size);
    if (block) {
        amc_hier_init_block(h, block, rank, size, root);
        return AMC_SUCCESS;
    }
    for (i = 0; i < h->nnodes; i++) {
        h->heads[i] = -1;
    }
    for (r = 0; r < size; r++) {
        n = amc_topo_node(topo, r);
        if (h->heads[n] < 0) {
            h->heads[n] = r;
        }
        if (n == h->node) {
            if (r == rank) {
                h->me = h->nlocal;
            }
            h->local[h->nlocal++] = r;
        }
    }
    if (root >= 0) {
        h->heads[amc_topo_node(topo, root)] = root;
    }
    for (i = 0; i < h->nlocal; i++) {
        if (h->local[i] == h->heads[h->node]) {
            h->lhead = i;
        }
    }
    return AMC_SUCCESS;
}

static void amc_hier_cleanup(amc_hier_t *h)
{
    free(h->local);
}

/* In a binomial tree over cnt positions rooted at 0, the lowest set bit of
 * vr (its parent is vr - that bit), or for the root the power of two that
 * covers cnt; its children are vr + m for the powers of two m below it. */
static int amc_hier_lowbit(int vr, int cnt)
{
    int mask = 1;

    while ((mask < cnt) && !(vr & mask)) {
        mask <<= 1;
    }
    return mask;
}

/* Member at tree position v of list m (cnt long) rooted at index lr. */
static int amc_hier_at(const int *m, int cnt, int lr, int v)
{
    return m[(v + lr) % cnt];
}

/* The sends of a tree bcast from position vr to its children. */
static void amc_hier_children_send(amc_sched_builder_t *b, const int *m, int cnt, int lr, int vr,
                                   size_t bytes)
{
    int mask;

    for (mask = amc_hier_lowbit(vr, cnt) >> 1; mask > 0; mask >>= 1) {
        if (vr + mask < cnt) {
            amc_sb_send(b, amc_hier_at(m, cnt, lr, vr + mask), AMC_BUF_RECV, 0, bytes);
        }
    }
}

/* A tree reduce to position 0 into acc: each position adds its children's
 * partial results in turn, then sends its own to its parent. */
static void amc_hier_tree_reduce(amc_sched_builder_t *b, const int *m, int cnt, int lr, int vr,
                                 int acc, size_t bytes)
{
    int mask;

    for (mask = 1; mask < cnt; mask <<= 1) {
        if (vr & mask) {
            amc_sb_round(b);
            amc_sb_send(b, amc_hier_at(m, cnt, lr, vr - mask), acc, 0, bytes);
            return;
        }
        if ((vr | mask) < cnt) {
            amc_sb_round(b);
            amc_sb_recv_reduce(b, amc_hier_at(m, cnt, lr, vr | mask), acc, 0, bytes, 1);
        }
    }
}

/* Barrier: the node's members check in with the leader up a binomial tree
 * (a rank reports once its whole subtree has), the leaders run the
 * dissemination barrier, and the leader releases its node down the tree. */
int amc_alg_barrier_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_hier_t h;
    int        mask, vr, nn, li, dist, status;

    status = amc_hier_init(&h, a, rank, size, -1);
    if (status != AMC_SUCCESS) {
        return status;
    }
    vr = h.me; /* rooted at the leader, local[0] */
    amc_sb_round(b);
    for (mask = amc_hier_lowbit(vr, h.nlocal) >> 1; mask > 0; mask >>= 1) {
        if (vr + mask < h.nlocal) {
            amc_sb_recv(b, h.local[vr + mask], AMC_BUF_RECV, 0, 0);
        }
    }
    if (vr != 0) {
        mask = amc_hier_lowbit(vr, h.nlocal);
        amc_sb_round(b);
        amc_sb_send(b, h.local[vr - mask], AMC_BUF_RECV, 0, 0);
        amc_sb_round(b);
        amc_sb_recv(b, h.local[vr - mask], AMC_BUF_RECV, 0, 0);
    } else {
        nn = h.nnodes;
        li = h.node;
        for (dist = 1; dist < nn; dist *= 2) {
            amc_sb_round(b);
            amc_sb_send(b, h.heads[(li + dist) % nn], AMC_BUF_RECV, 0, 0);
            amc_sb_recv(b, h.heads[(li - dist + nn) % nn], AMC_BUF_RECV, 0, 0);
        }
    }
    amc_sb_round(b);
    amc_hier_children_send(b, h.local, h.nlocal, 0, vr, 0);
    amc_hier_cleanup(&h);
    return AMC_SUCCESS;
}

/* Bcast: a binomial tree over the heads rooted at the root's node, then one
 * inside each node rooted at its head. A head forwards across nodes first,
 * then into its node, all as soon as the data is in. */
int amc_alg_bcast_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t     bytes = a->count * a->dt_size;
    amc_hier_t h;
    int        rnode, ivr = -1, lvr, status;

    status = amc_hier_init(&h, a, rank, size, a->root);
    if (status != AMC_SUCCESS) {
        return status;
    }
    rnode = amc_topo_node(a->topo, a->root);
    lvr   = amc_alg_rel(h.me, h.lhead, h.nlocal);
    if (lvr == 0) {
        ivr = amc_alg_rel(h.node, rnode, h.nnodes);
        if (ivr != 0) {
            amc_sb_round(b);
            amc_sb_recv(b, amc_hier_at(h.heads, h.nnodes, rnode,
                                       ivr - amc_hier_lowbit(ivr, h.nnodes)),
                        AMC_BUF_RECV, 0, bytes);
        }
    } else {
        amc_sb_round(b);
        amc_sb_recv(b, amc_hier_at(h.local, h.nlocal, h.lhead,
                                   lvr - amc_hier_lowbit(lvr, h.nlocal)),
                    AMC_BUF_RECV, 0, bytes);
    }
    amc_sb_round(b);
    if (ivr >= 0) {
        amc_hier_children_send(b, h.heads, h.nnodes, rnode, ivr, bytes);
    }
    amc_hier_children_send(b, h.local, h.nlocal, h.lhead, lvr, bytes);
    amc_hier_cleanup(&h);
    return AMC_SUCCESS;
}

/* Reduce (commutative ops): a binomial reduce inside each node to its head,
 * then one over the heads to the root, which accumulates in its receive
 * buffer; every other rank in scratch. */
int amc_alg_reduce_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t     bytes = a->count * a->dt_size;
    int        mine  = (a->in_place && (rank == a->root)) ? AMC_BUF_RECV : AMC_BUF_SEND;
    int        acc   = (rank == a->root) ? AMC_BUF_RECV : AMC_BUF_TMP;
    amc_hier_t h;
    int        lvr, status;

    status = amc_hier_init(&h, a, rank, size, a->root);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if (acc == AMC_BUF_TMP) {
        amc_sb_tmp(b, bytes);
    }
    amc_sb_round(b);
    if (mine != acc) {
        amc_sb_copy(b, acc, 0, mine, 0, bytes);
    }
    lvr = amc_alg_rel(h.me, h.lhead, h.nlocal);
    amc_hier_tree_reduce(b, h.local, h.nlocal, h.lhead, lvr, acc, bytes);
    if (lvr == 0) {
        int rnode = amc_topo_node(a->topo, a->root);

        amc_hier_tree_reduce(b, h.heads, h.nnodes, rnode, amc_alg_rel(h.node, rnode, h.nnodes),
                             acc, bytes);
    }
    amc_hier_cleanup(&h);
    return AMC_SUCCESS;
}

/* Recursive-doubling allreduce on the receive buffer among the cnt ranks
 * m[] (this rank is m[me]), receiving into scratch buffer tmp (as in
 * alg_allreduce.c, over a list instead of the communicator). The lower
 * rank's value is always the left operand, so every member ends with the
 * same bits. */
void amc_alg_recdbl_among(amc_sched_builder_t *b, const int *m, int cnt, int me, int tmp,
                          size_t bytes)
{
    int pof2 = 1, rem, newrank, newdst, dst, mask;

    while (pof2 * 2 <= cnt) {
        pof2 *= 2;
    }
    rem = cnt - pof2;
    if (me < 2 * rem) {
        amc_sb_round(b);
        if ((me % 2) == 0) {
            amc_sb_send(b, m[me + 1], AMC_BUF_RECV, 0, bytes);
            newrank = -1;
        } else {
            amc_sb_recv_reduce(b, m[me - 1], AMC_BUF_RECV, 0, bytes, 0);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (newrank >= 0) {
        for (mask = 1; mask < pof2; mask <<= 1) {
            newdst = newrank ^ mask;
            dst    = (newdst < rem) ? newdst * 2 + 1 : newdst + rem;
            amc_sb_round(b);
            amc_sb_send(b, m[dst], AMC_BUF_RECV, 0, bytes);
            amc_sb_recv(b, m[dst], tmp, 0, bytes);
            amc_sb_round(b);
            amc_sb_reduce(b, AMC_BUF_RECV, 0, tmp, 0, bytes, dst > me);
        }
    }
    if (me < 2 * rem) {
        amc_sb_round(b);
        if ((me % 2) == 0) {
            amc_sb_recv(b, m[me + 1], AMC_BUF_RECV, 0, bytes);
        } else {
            amc_sb_send(b, m[me - 1], AMC_BUF_RECV, 0, bytes);
        }
    }
}

/* Allreduce (commutative ops): a binomial reduce inside each node to its
 * leader, recursive doubling among the leaders, a binomial bcast inside
 * each node. Every rank accumulates in its receive buffer, which the bcast
 * overwrites with the result. */
int amc_alg_allreduce_hier(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t     bytes = a->count * a->dt_size;
    amc_hier_t h;
    int        status;

    status = amc_hier_init(&h, a, rank, size, -1);
    if (status != AMC_SUCCESS) {
        return status;
    }
    amc_sb_tmp(b, bytes);
    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
    }
    amc_hier_tree_reduce(b, h.local, h.nlocal, 0, h.me, AMC_BUF_RECV, bytes);
    if (h.me == 0) {
        amc_alg_recdbl_among(b, h.heads, h.nnodes, h.node, AMC_BUF_TMP, bytes);
    } else {
        amc_sb_round(b);
        amc_sb_recv(b, h.local[h.me - amc_hier_lowbit(h.me, h.nlocal)], AMC_BUF_RECV, 0, bytes);
    }
    amc_sb_round(b);
    amc_hier_children_send(b, h.local, h.nlocal, 0, h.me, bytes);
    amc_hier_cleanup(&h);
    return AMC_SUCCESS;
}
