/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/topo.h"

#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"

#include <stdlib.h>

typedef struct {
    int key;
    int member;
} amc_topo_pair_t;

static int amc_topo_pair_cmp(const void *pa, const void *pb)
{
    const amc_topo_pair_t *a = pa, *b = pb;

    if (a->key != b->key) {
        return (a->key < b->key) ? -1 : 1;
    }
    return (a->member > b->member) - (a->member < b->member);
}

static int amc_topo_leader_cmp(const void *pa, const void *pb)
{
    const amc_topo_pair_t *a = pa, *b = pb;

    /* pairs of (group start, leader): by leader */
    return (a->member > b->member) - (a->member < b->member);
}

/* nodes as a product of at most max factors of at most cap each, the
 * largest divisor first: how many, or 0 */
static int amc_topo_factor(int nodes, int cap, int *k, int max)
{
    int rest = nodes, n = 0, f;

    while ((rest > 1) && (n < max)) {
        for (f = (rest < cap) ? rest : cap; (f > 1) && (rest % f); f--) {
        }
        if (f < 2) {
            return 0;
        }
        k[n++] = f;
        rest /= f;
    }
    return (rest == 1) ? n : 0;
}

int amc_topo_radices(int nodes, int cap, int *k, int max)
{
    int rounds = amc_topo_factor(nodes, cap, k, max), c;

    for (c = 2; (rounds > 0) && (c < cap); c++) {
        if (amc_topo_factor(nodes, c, k, rounds) == rounds) {
            return rounds;
        }
    }
    return (rounds > 0) ? amc_topo_factor(nodes, cap, k, max) : 0;
}

/* what selection asks of every call across nodes, worked out once */
static void amc_topo_lanes(amc_topo_t *topo)
{
    int k[32];

    topo->lane_rounds = (topo->nnodes > 1) ? amc_topo_radices(topo->nnodes, topo->min_node + 1,
                                                              k, 32) : 0;
    topo->lane_radix  = (topo->lane_rounds > 0) ? k[0] : 0;
}

int amc_topo_create(int size, int (*key)(void *arg, int r), void *arg, amc_topo_t **topo_p)
{
    amc_topo_pair_t *pairs = NULL, *groups = NULL;
    amc_topo_t      *topo;
    int              r, g, ngroups = 0, j;

    topo = calloc(1, sizeof(*topo));
    if (topo == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    topo->size     = size;
    topo->nnodes   = (size > 0) ? 1 : 0;
    topo->min_node = size;
    if (size <= 1) {
        *topo_p = topo;
        return AMC_SUCCESS;
    }
    pairs  = malloc((size_t)size * sizeof(*pairs));
    groups = malloc((size_t)size * sizeof(*groups));
    topo->node = malloc((size_t)size * sizeof(*topo->node));
    if ((pairs == NULL) || (groups == NULL) || (topo->node == NULL)) {
        goto err;
    }
    /* group the members by key; a group's first pair after the sort is its
     * lowest member, the leader */
    for (r = 0; r < size; r++) {
        pairs[r].key    = key(arg, r);
        pairs[r].member = r;
    }
    qsort(pairs, (size_t)size, sizeof(*pairs), amc_topo_pair_cmp);
    for (r = 0; r < size; r++) {
        if ((r == 0) || (pairs[r].key != pairs[r - 1].key)) {
            groups[ngroups].key    = r;             /* where the group starts in pairs */
            groups[ngroups].member = pairs[r].member;
            ngroups++;
        }
    }
    /* nodes numbered in their leaders' order */
    qsort(groups, (size_t)ngroups, sizeof(*groups), amc_topo_leader_cmp);
    topo->min_node = size;
    for (g = 0; g < ngroups; g++) {
        for (j = groups[g].key; (j < size) && (pairs[j].key == pairs[groups[g].key].key); j++) {
            topo->node[pairs[j].member] = g;
        }
        topo->min_node = (j - groups[g].key < topo->min_node) ? j - groups[g].key
                                                              : topo->min_node;
    }
    topo->nnodes = ngroups;
    if (ngroups == 1) {
        free(topo->node);
        topo->node = NULL;
    }
    amc_topo_lanes(topo);
    free(pairs);
    free(groups);
    *topo_p = topo;
    return AMC_SUCCESS;

err:
    free(pairs);
    free(groups);
    amc_topo_free(topo);
    return AMC_ERR_NO_MEMORY;
}

int amc_topo_create_block(int size, int block, amc_topo_t **topo_p)
{
    amc_topo_t *topo = calloc(1, sizeof(*topo));

    if (topo == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    topo->size     = size;
    topo->nnodes   = (size > 0) ? 1 : 0;
    topo->min_node = size;
    if ((block > 0) && (block < size)) {
        topo->nnodes   = (size + block - 1) / block;
        topo->block    = block;
        topo->min_node = (size % block) ? size % block : block;
    }
    amc_topo_lanes(topo);
    *topo_p = topo;
    return AMC_SUCCESS;
}

void amc_topo_free(amc_topo_t *topo)
{
    if (topo != NULL) {
        free(topo->node);
        free(topo);
    }
}

int amc_context_node_of(const amc_context_t *ctx, int world_rank)
{
    if (ctx->cfg.node_size > 0) {
        return world_rank / (int)ctx->cfg.node_size;
    }
    return amc_node_map_node(&ctx->tp->nodes, world_rank);
}

static int amc_comm_topo_key(void *arg, int r)
{
    amc_comm_t comm = arg;

    return amc_context_node_of(comm->ctx, amc_comm_peer(comm, r));
}

const amc_topo_t *amc_comm_topo(amc_comm_t comm)
{
    amc_topo_t *topo = __atomic_load_n(&comm->topo, __ATOMIC_ACQUIRE), *expected = NULL;
    int         status;

    if (topo != NULL) {
        return topo;
    }
    /* member r is world rank r: AMC_NODE_SIZE's blocks, or an empty node
     * map's one node, are the topology without a sort or an array */
    if ((comm->group == NULL) && ((comm->ctx->cfg.node_size > 0) ||
                                  (comm->ctx->tp->nodes.nruns == 0))) {
        status = amc_topo_create_block(comm->size, (int)comm->ctx->cfg.node_size, &topo);
    } else {
        status = amc_topo_create(comm->size, amc_comm_topo_key, comm, &topo);
    }
    if (status != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "no memory for the node layout of communicator 0x%llx",
                  (unsigned long long)comm->cid);
        return NULL;
    }
    /* two threads may race to make it: the first one's stays */
    if (!__atomic_compare_exchange_n(&comm->topo, &expected, topo, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        amc_topo_free(topo);
        return expected;
    }
    amc_debug(&comm->ctx->log, "communicator 0x%llx: %d ranks on %d node%s%s",
              (unsigned long long)comm->cid, topo->size, topo->nnodes,
              (topo->nnodes == 1) ? "" : "s",
              amc_topo_spans(topo) ? ": node-aware algorithms" : "");
    return topo;
}
