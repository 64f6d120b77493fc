/* SPDX-License-Identifier: BSD-3-Clause */
#include "transport/node_map.h"

#include "base/status.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

static int amc_node_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

int amc_node_map_from_ids(amc_node_map_t *map, const int *node_of_rank, int nranks,
                          int *nnodes_p)
{
    int *sorted;
    int  r, nnodes, status = AMC_SUCCESS;

    if (nranks < 1) {
        return AMC_ERR_ARG;
    }
    /* launcher ids need not be dense: count them by sorting a copy */
    sorted = malloc((size_t)nranks * sizeof(*sorted));
    if (sorted == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < nranks; r++) {
        if (node_of_rank[r] < 0) {
            status = AMC_ERR_ARG;
            goto out;
        }
        sorted[r] = node_of_rank[r];
    }
    qsort(sorted, (size_t)nranks, sizeof(*sorted), amc_node_int_cmp);
    for (r = 1, nnodes = 1; r < nranks; r++) {
        nnodes += (sorted[r] != sorted[r - 1]);
    }
    for (r = 0; r < nranks; r++) {
        status = amc_node_map_add(map, r, node_of_rank[r]);
        if (status != AMC_SUCCESS) {
            amc_node_map_free(map);
            goto out;
        }
    }
    *nnodes_p = nnodes;
out:
    free(sorted);
    return status;
}

int amc_node_list_parse(amc_node_list_t *list, const char *text)
{
    const char *p;
    char       *name, *next, *end;
    size_t      len = strlen(text);
    int         max = 1;

    for (p = text; *p != '\0'; p++) {
        max += (*p == ',');
    }
    list->n     = 0;
    list->buf   = malloc(len + 1);
    list->names = malloc((size_t)max * sizeof(*list->names));
    if ((list->buf == NULL) || (list->names == NULL)) {
        amc_node_list_free(list);
        return AMC_ERR_NO_MEMORY;
    }
    memcpy(list->buf, text, len + 1);
    for (name = list->buf; name != NULL; name = next) {
        next = strchr(name, ',');
        if (next != NULL) {
            *next++ = '\0';
        }
        while (isspace((unsigned char)*name)) {
            name++;
        }
        end = name + strlen(name);
        while ((end > name) && isspace((unsigned char)end[-1])) {
            *--end = '\0';
        }
        if (*name != '\0') {
            list->names[list->n++] = name;
        }
    }
    return AMC_SUCCESS;
}

void amc_node_list_free(amc_node_list_t *list)
{
    free(list->names);
    free(list->buf);
    list->names = NULL;
    list->buf   = NULL;
    list->n     = 0;
}

const char *amc_node_ids_from_hosts(int *node_of_rank, int nranks, const int *const *host_ranks,
                                    const int *host_nranks, int nhosts, int *rank_p)
{
    int h, i, r;

    for (r = 0; r < nranks; r++) {
        node_of_rank[r] = -1;
    }
    for (h = 0; h < nhosts; h++) {
        for (i = 0; i < host_nranks[h]; i++) {
            r       = host_ranks[h][i];
            *rank_p = r;
            if ((r < 0) || (r >= nranks)) {
                return "is out of range";
            }
            if (node_of_rank[r] >= 0) {
                return "is listed twice";
            }
            node_of_rank[r] = h;
        }
    }
    for (r = 0; r < nranks; r++) {
        if (node_of_rank[r] < 0) {
            *rank_p = r;
            return "is on no host";
        }
    }
    return NULL;
}

typedef struct amc_node_name {
    const char *name;
    int         rank;
} amc_node_name_t;

static int amc_node_name_cmp(const void *a, const void *b)
{
    const amc_node_name_t *x = a, *y = b;
    int                    c = strcmp(x->name, y->name);

    return (c != 0) ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

int amc_node_ids_from_names(int *node_of_rank, const char *const *names, int nranks)
{
    amc_node_name_t *by_name;
    int              i, r, lead = 0, next = 0;

    /* sorted, not compared pairwise: thousands of nodes times as many ranks */
    by_name = malloc(((size_t)nranks + 1) * sizeof(*by_name));
    if (by_name == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < nranks; r++) {
        by_name[r].name = names[r];
        by_name[r].rank = r;
    }
    qsort(by_name, (size_t)nranks, sizeof(*by_name), amc_node_name_cmp);
    /* first each rank's host's lowest rank, which the sort puts first */
    for (i = 0; i < nranks; i++) {
        if ((i == 0) || (strcmp(by_name[i].name, by_name[i - 1].name) != 0)) {
            lead = by_name[i].rank;
        }
        node_of_rank[by_name[i].rank] = lead;
    }
    free(by_name);
    /* then the hosts numbered by those lowest ranks: a lower lead is already
     * renumbered when a rank after it looks it up */
    for (r = 0; r < nranks; r++) {
        node_of_rank[r] = (node_of_rank[r] == r) ? next++ : node_of_rank[node_of_rank[r]];
    }
    return AMC_SUCCESS;
}
