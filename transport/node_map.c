#include "transport/node_map.h"

#include "base/status.h"

#include <stdlib.h>

int amc_node_map_add(amc_node_map_t *map, int rank, int node)
{
    amc_node_run_t *runs;
    int             cap;

    if ((map->nruns > 0) && (map->runs[map->nruns - 1].node == node)) {
        return AMC_SUCCESS;
    }
    if (map->nruns == map->cap) {
        cap  = (map->cap > 0) ? 2 * map->cap : 8;
        runs = realloc(map->runs, (size_t)cap * sizeof(*runs));
        if (runs == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        map->runs = runs;
        map->cap  = cap;
    }
    map->runs[map->nruns].first = rank;
    map->runs[map->nruns].node  = node;
    map->nruns++;
    return AMC_SUCCESS;
}

int amc_node_map_node(const amc_node_map_t *map, int rank)
{
    int lo = 0, hi = map->nruns - 1, mid;

    if (map->nruns == 0) {
        return 0;
    }
    /* the last run whose first is <= rank */
    while (lo < hi) {
        mid = (lo + hi + 1) / 2;
        if (map->runs[mid].first <= rank) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return map->runs[lo].node;
}

void amc_node_map_free(amc_node_map_t *map)
{
    free(map->runs);
    map->runs  = NULL;
    map->nruns = 0;
    map->cap   = 0;
}
