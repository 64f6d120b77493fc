/* SPDX-License-Identifier: BSD-3-Clause */
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

/* Fills map, which must be empty, from each rank's node id (>= 0), in any
 * placement: a cyclic one is a run per rank. *nnodes_p: how many distinct
 * ids. AMC_ERR_ARG (nranks < 1, an id < 0) or AMC_ERR_NO_MEMORY leave the
 * map empty. */
int  amc_node_map_from_ids(amc_node_map_t *map, const int *node_of_rank, int nranks,
                           int *nnodes_p);

/* The host names of a comma-separated list (PMIx_Resolve_nodes), blanks
 * around a name dropped and empty entries skipped, so that "n1,,n2 ," is
 * two hosts: names[n] point into buf, one allocation the list owns. */
typedef struct amc_node_list {
    int    n;
    char **names;
    char  *buf;
} amc_node_list_t;

int  amc_node_list_parse(amc_node_list_t *list, const char *text);  /* or AMC_ERR_NO_MEMORY */
void amc_node_list_free(amc_node_list_t *list);

/* node_of_rank[r] = h for the host h whose ranks (host_ranks[h], of
 * host_nranks[h]) hold r: NULL once every rank of nranks is on exactly one
 * host, else why not ("is out of range", "is listed twice", "is on no
 * host") with the rank in *rank_p. A launcher's answer is checked, not
 * trusted: a gap or an overlap would split the job differently on
 * different ranks. */
const char *amc_node_ids_from_hosts(int *node_of_rank, int nranks, const int *const *host_ranks,
                                    const int *host_nranks, int nhosts, int *rank_p);

/* node_of_rank[r] = the order in which names[r] first appears among the
 * ranks (rank 0's host is node 0): the same on every rank that reads the
 * same names. AMC_SUCCESS or AMC_ERR_NO_MEMORY. */
int  amc_node_ids_from_names(int *node_of_rank, const char *const *names, int nranks);

#endif
