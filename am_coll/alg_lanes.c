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
#include "am_coll/alg.h"

#include "am_coll/topo.h"

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
    int               r, n, i, *fill;

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
    l->nlocal = amc_lanes_node_size(l, l->node);
    l->lanes  = l->nlocal;
    if (l->block > 0) {
        i = amc_lanes_node_size(l, l->nnodes - 1); /* only the last may be smaller */
        l->lanes = (i < l->block) ? i : l->block;
    } else {
        for (n = 0; n < l->nnodes; n++) {
            i = amc_lanes_node_size(l, n);
            l->lanes = (i < l->lanes) ? i : l->lanes;
        }
    }
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
 * through the others, from every node. */
int amc_alg_barrier_lanes(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_lanes_t l;
    int         status;

    status = amc_lanes_init(&l, a, rank, size);
    if (status != AMC_SUCCESS) {
        return status;
    }
    amc_lanes_node_barrier(b, &l);
    if (l.nnodes > 1) {
        amc_sb_round(b);
        amc_lanes_across(b, &l, AMC_BUF_RECV, AMC_BUF_RECV, 0);
        amc_lanes_node_barrier(b, &l);
    }
    amc_lanes_cleanup(&l);
    return AMC_SUCCESS;
}

/* Lanes [first, first + k) mod W as byte ranges of the node-ordered slots
 * (nodes [j c, (j + 1) c) are lane j's): at most two pieces, empty ones
 * left out. Returns how many. */
static int amc_lanes_pieces(const amc_lanes_t *l, int first, int k, size_t bytes,
                            size_t off[2], size_t len[2])
{
    int    n = 0, run;
    size_t lo, hi;

    while (k > 0) {
        run = (k < l->lanes - first) ? k : l->lanes - first;
        lo  = (size_t)first * (size_t)l->per_lane;
        hi  = (size_t)(first + run) * (size_t)l->per_lane;
        hi  = (hi < (size_t)l->nnodes) ? hi : (size_t)l->nnodes;
        if (hi > lo) {
            off[n] = lo * bytes;
            len[n] = (hi - lo) * bytes;
            n++;
        }
        k    -= run;
        first = 0;
    }
    return n;
}

/* Allreduce (commutative ops, small vectors): recursive doubling inside
 * the node gives every member the node's result; the lanes send it to the
 * nodes they serve and put the results they hear into the scratch, one
 * slot per node in node order; the lanes gather all slots (dissemination,
 * lane j passing on the ranges it holds); each folds the slots in the same
 * fixed tree over node order, so every rank of the job gets the same bits;
 * members past the lanes get the result from their lane. */
int amc_alg_allreduce_lanes(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t      bytes = a->count * a->dt_size, off[2], len[2];
    amc_lanes_t l;
    int        *local, partner, status, i, k, d, np, m, h, j;

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
    if (l.nnodes > 1) {
        amc_sb_tmp(b, (size_t)l.nnodes * bytes);
        amc_sb_round(b);
        if ((l.me < l.lanes) && (l.node / l.per_lane == l.me)) {
            amc_sb_copy(b, AMC_BUF_TMP, (size_t)l.node * bytes, AMC_BUF_RECV, 0, bytes);
        }
        amc_lanes_across(b, &l, AMC_BUF_RECV, AMC_BUF_TMP, bytes);
        if (l.me < l.lanes) {
            for (d = 1; d < l.lanes; d *= 2) {
                k = (d < l.lanes - d) ? d : l.lanes - d;
                amc_sb_round(b);
                np = amc_lanes_pieces(&l, l.me, k, bytes, off, len);
                for (j = 0; j < np; j++) {
                    amc_sb_send(b, local[(l.me - d + l.lanes) % l.lanes], AMC_BUF_TMP, off[j],
                                len[j]);
                }
                np = amc_lanes_pieces(&l, (l.me + d) % l.lanes, k, bytes, off, len);
                for (j = 0; j < np; j++) {
                    amc_sb_recv(b, local[(l.me + d) % l.lanes], AMC_BUF_TMP, off[j], len[j]);
                }
            }
            for (m = l.nnodes; m > 1; m -= h) {
                h = m / 2;
                amc_sb_round(b);
                amc_sb_reduce(b, AMC_BUF_TMP, 0, AMC_BUF_TMP, (size_t)(m - h) * bytes,
                              (size_t)h * bytes, 1);
            }
            amc_sb_round(b);
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, bytes);
        }
        if (l.nlocal > l.lanes) {
            amc_sb_round(b);
            if (l.me < l.lanes) {
                for (i = l.me + l.lanes; i < l.nlocal; i += l.lanes) {
                    amc_sb_send(b, local[i], AMC_BUF_RECV, 0, bytes);
                }
            } else {
                amc_sb_recv(b, local[l.me % l.lanes], AMC_BUF_RECV, 0, bytes);
            }
        }
    }
    free(local);
    amc_lanes_cleanup(&l);
    return AMC_SUCCESS;
}
