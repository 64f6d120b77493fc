/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware collectives need to know, per communicator, which members share
 * a node. A communicator's topology numbers its nodes 0.. in the order of
 * each node's lowest member (its leader), so it is derived from facts every
 * member holds alike (the launcher's node ids or AMC_NODE_SIZE, and the
 * member order) and is the same on all of them.
 */
#ifndef AMC_TOPO_H
#define AMC_TOPO_H

#include <stddef.h>
#include <stdint.h>

struct amc_comm;
struct amc_context;

typedef struct amc_topo {
    int      size;    /* members */
    int      nnodes;
    int32_t *node;    /* [size] each member's node; NULL when nnodes == 1 or block */
    int      block;   /* > 0: member r is on node r / block, and no array is kept
                       * (a world or its dups with AMC_NODE_SIZE: at 65,536 ranks
                       * an array would cost each rank 256 KiB per communicator) */
    int      min_node; /* the smallest node's members (the multi-lane algorithms'
                        * lanes, am_coll/alg/alg_lanes.c) */
    int      lane_rounds; /* rounds of the multi-lane allreduce's radix form:
                           * amc_topo_radices(nnodes, min_node + 1); 0: none */
    int      lane_radix;  /* and its first (largest) radix */
} amc_topo_t;

/* nodes as a product of radices of at most cap each, in as few rounds as
 * possible and among those with the smallest largest radix (first in k):
 * how many, at most max, or 0 if there is no such product. */
int amc_topo_radices(int nodes, int cap, int *k, int max);

/* Member r's node: 0 .. nnodes-1; a NULL topology is one node. */
static inline int amc_topo_node(const amc_topo_t *topo, int r)
{
    if ((topo == NULL) || ((topo->node == NULL) && (topo->block <= 0))) {
        return 0;
    }
    return (topo->block > 0) ? r / topo->block : topo->node[r];
}

/* Whether the node-aware algorithms have anything to gain: more than one
 * node, and some node with more than one member. */
static inline int amc_topo_spans(const amc_topo_t *topo)
{
    return (topo != NULL) && (topo->nnodes > 1) && (topo->nnodes < topo->size);
}

/* Whether the members are on more than one node (spanning or one each):
 * then no node's crowding is every member's, and no choice may rest on it. */
static inline int amc_topo_apart(const amc_topo_t *topo)
{
    return (topo != NULL) && (topo->nnodes > 1);
}

/* A topology of size members where member r is on node key(arg, r), any
 * integer: members with equal keys share a node. AMC_SUCCESS or
 * AMC_ERR_NO_MEMORY. */
int  amc_topo_create(int size, int (*key)(void *arg, int r), void *arg, amc_topo_t **topo_p);
void amc_topo_free(amc_topo_t *topo);

/* Members 0 .. size-1 in nodes of block consecutive ones, the last maybe
 * fewer; no per-member memory. */
int  amc_topo_create_block(int size, int block, amc_topo_t **topo_p);

/* World rank's node id in ctx: AMC_NODE_SIZE's blocks or the transport's map. */
int  amc_context_node_of(const struct amc_context *ctx, int world_rank);

/* comm's topology, made at its first use and kept until comm is freed; NULL
 * when there was no memory for it (logged). Any thread. */
const amc_topo_t *amc_comm_topo(struct amc_comm *comm);

#endif
