/*
 * Which node each rank of the job runs on, as the launcher says: runs of
 * consecutive ranks on one node, so a job placed by slot (the common case)
 * costs one entry per node, not one per rank. An empty map means one node.
 */
#ifndef AMC_NODE_MAP_H
#define AMC_NODE_MAP_H

#include <stdint.h>

typedef struct amc_node_run {
    int32_t first;  /* the run's first rank; it lasts until the next run's first */
    int32_t node;   /* the launcher's node id, the same on every rank */
} amc_node_run_t;

typedef struct amc_node_map {
    int             nruns;
    int             cap;
    amc_node_run_t *runs;  /* by first, increasing */
} amc_node_map_t;

/* Records that rank is on node; ranks come in increasing order. A rank on
 * the node of the rank before it only extends that run. AMC_SUCCESS or
 * AMC_ERR_NO_MEMORY. */
int  amc_node_map_add(amc_node_map_t *map, int rank, int node);

/* rank's node id: O(log runs); 0 for every rank of an empty map. */
int  amc_node_map_node(const amc_node_map_t *map, int rank);

void amc_node_map_free(amc_node_map_t *map);

#endif
