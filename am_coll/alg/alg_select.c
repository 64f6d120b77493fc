/* SPDX-License-Identifier: BSD-3-Clause */
/* Which algorithm runs a call. One per collective for now; the table is
 * where size- and count-dependent choices and AMC_<COLL>_ALG overrides go. */
#include "am_coll/alg/alg.h"
#include "am_coll/alg/alg_rounds.h"

#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "am_coll/context/topo.h"
#include "am_coll/context/tuning_rules.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Indexes into the table, for the size-based defaults: no name is looked up
 * on the call path. */
enum {
    AMC_ALG_I_BCAST_BINOMIAL,
    AMC_ALG_I_REDUCE_BINOMIAL,
    AMC_ALG_I_ALLREDUCE_RECDBL,
    AMC_ALG_I_GATHER_LINEAR,
    AMC_ALG_I_SCATTER_LINEAR,
    AMC_ALG_I_ALLGATHER_RING,
    AMC_ALG_I_ALLTOALL_PAIRWISE,
    AMC_ALG_I_GATHERV_LINEAR,
    AMC_ALG_I_SCATTERV_LINEAR,
    AMC_ALG_I_ALLGATHERV_RING,
    AMC_ALG_I_ALLTOALLV_PAIRWISE,
    AMC_ALG_I_RSB_REDUCE_LINEAR,
    AMC_ALG_I_RS_REDUCE_LINEAR,
    AMC_ALG_I_SCAN_RECDBL,
    AMC_ALG_I_EXSCAN_RECDBL,
    AMC_ALG_I_BCAST_PIPELINE,
    AMC_ALG_I_BARRIER_DISSEMINATION,
    AMC_ALG_I_ALLREDUCE_RING,
    AMC_ALG_I_ALLREDUCE_LINEAR,
    AMC_ALG_I_ALLGATHER_BRUCK,
    AMC_ALG_I_RSB_DIRECT,
    AMC_ALG_I_RS_DIRECT,
    AMC_ALG_I_SCAN_DOUBLING,
    AMC_ALG_I_EXSCAN_DOUBLING,
    AMC_ALG_I_BARRIER_HIER,
    AMC_ALG_I_BCAST_HIER,
    AMC_ALG_I_REDUCE_HIER,
    AMC_ALG_I_ALLREDUCE_HIER,
    AMC_ALG_I_ALLTOALL_LINEAR,
    AMC_ALG_I_ALLTOALLV_LINEAR,
    AMC_ALG_I_BCAST_LINEAR,
    AMC_ALG_I_REDUCE_LINEAR,
    AMC_ALG_I_ALLGATHER_LINEAR,
    AMC_ALG_I_ALLGATHERV_LINEAR,
    AMC_ALG_I_BARRIER_LANES,
    AMC_ALG_I_ALLREDUCE_LANES,
    AMC_ALG_I_BCAST_KNOMIAL,
    AMC_ALG_I_REDUCE_KNOMIAL,
    AMC_ALG_I_REDUCE_RABENSEIFNER,
    AMC_ALG_I_ALLREDUCE_RABENSEIFNER,
    AMC_ALG_I_ALLREDUCE_KNOMIAL,
    AMC_ALG_I_RSB_HALVING,
    AMC_ALG_I_RS_HALVING,
    AMC_ALG_I_RSB_RING,
    AMC_ALG_I_RS_RING,
    AMC_ALG_I_RSB_PAIRWISE,
    AMC_ALG_I_RS_PAIRWISE,
    AMC_ALG_I_ALLGATHER_RECDBL,
    AMC_ALG_I_ALLGATHER_NEIGHBOR,
    AMC_ALG_I_BARRIER_KNOMIAL,
    AMC_ALG_I_BARRIER_LINEAR,
    AMC_ALG_I_BCAST_SCATTER_ALLGATHER,
    AMC_ALG_I_ALLTOALL_BRUCK,
    AMC_ALG_I_GATHER_BINOMIAL,
    AMC_ALG_I_SCATTER_BINOMIAL,
    AMC_ALG_I_SCAN_LINEAR,
    AMC_ALG_I_EXSCAN_LINEAR,
    AMC_ALG_I_ALLGATHERV_RECDBL,
    AMC_ALG_I_ALLGATHERV_BRUCK,
    AMC_ALG_I_ALLGATHERV_NEIGHBOR,
    AMC_ALG_I_SCAN_PIPELINE,
    AMC_ALG_I_EXSCAN_PIPELINE,
    AMC_ALG_I_ALLTOALLV_BRUCK,
    AMC_ALG_COUNT
};

static const amc_alg_t amc_alg_table[AMC_ALG_COUNT] = {
    [AMC_ALG_I_BCAST_BINOMIAL]     = { AMC_COLL_BCAST,     1, "binomial",           amc_alg_bcast_binomial, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_REDUCE_BINOMIAL]    = { AMC_COLL_REDUCE,    1, "binomial",           amc_alg_reduce_binomial, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_ALLREDUCE_RECDBL]   = { AMC_COLL_ALLREDUCE, 1, "recursive_doubling", amc_alg_allreduce_recdbl, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_GATHER_LINEAR]      = { AMC_COLL_GATHER,    1, "linear",             amc_alg_gather_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_SCATTER_LINEAR]     = { AMC_COLL_SCATTER,   1, "linear",             amc_alg_scatter_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLGATHER_RING]     = { AMC_COLL_ALLGATHER, 1, "ring",               amc_alg_allgather_ring, 0 },
    [AMC_ALG_I_ALLTOALL_PAIRWISE]  = { AMC_COLL_ALLTOALL,  1, "pairwise",           amc_alg_alltoall_pairwise, 0 },
    [AMC_ALG_I_GATHERV_LINEAR]     = { AMC_COLL_GATHERV,    1, "linear",            amc_alg_gatherv_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_SCATTERV_LINEAR]    = { AMC_COLL_SCATTERV,   1, "linear",            amc_alg_scatterv_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLGATHERV_RING]    = { AMC_COLL_ALLGATHERV, 1, "ring",              amc_alg_allgatherv_ring, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLTOALLV_PAIRWISE] = { AMC_COLL_ALLTOALLV,  1, "pairwise",          amc_alg_alltoallv_pairwise, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_RSB_REDUCE_LINEAR]  = { AMC_COLL_REDUCE_SCATTER_BLOCK, 1, "reduce_linear", amc_alg_reduce_scatter_reduce_linear, 0 },
    [AMC_ALG_I_RS_REDUCE_LINEAR]   = { AMC_COLL_REDUCE_SCATTER,       1, "reduce_linear", amc_alg_reduce_scatter_reduce_linear, 0 },
    [AMC_ALG_I_SCAN_RECDBL]        = { AMC_COLL_SCAN,       1, "recursive_doubling", amc_alg_scan_recdbl, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_EXSCAN_RECDBL]      = { AMC_COLL_EXSCAN,     1, "recursive_doubling", amc_alg_exscan_recdbl, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_BCAST_PIPELINE]     = { AMC_COLL_BCAST,     2, "pipeline",           amc_alg_bcast_pipeline, 0 },
    [AMC_ALG_I_BARRIER_DISSEMINATION] = { AMC_COLL_BARRIER, 1, "dissemination",     amc_alg_barrier_dissemination, 0 },
    [AMC_ALG_I_ALLREDUCE_RING]     = { AMC_COLL_ALLREDUCE, 2, "ring",               amc_alg_allreduce_ring, AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_ALLREDUCE_LINEAR]   = { AMC_COLL_ALLREDUCE, 3, "linear",             amc_alg_allreduce_linear, 0 },
    [AMC_ALG_I_ALLGATHER_BRUCK]    = { AMC_COLL_ALLGATHER, 2, "bruck",              amc_alg_allgather_bruck, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_BARRIER_HIER]       = { AMC_COLL_BARRIER,   2, "hierarchical",       amc_alg_barrier_hier, AMC_ALG_FLAG_NODES },
    [AMC_ALG_I_BCAST_HIER]         = { AMC_COLL_BCAST,     3, "hierarchical",       amc_alg_bcast_hier, AMC_ALG_FLAG_NODES },
    [AMC_ALG_I_REDUCE_HIER]        = { AMC_COLL_REDUCE,    2, "hierarchical",       amc_alg_reduce_hier, AMC_ALG_FLAG_NODES | AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_ALLREDUCE_HIER]     = { AMC_COLL_ALLREDUCE, 4, "hierarchical",       amc_alg_allreduce_hier, AMC_ALG_FLAG_NODES | AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_RSB_DIRECT]         = { AMC_COLL_REDUCE_SCATTER_BLOCK, 2, "direct",  amc_alg_reduce_scatter_direct, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_RS_DIRECT]          = { AMC_COLL_REDUCE_SCATTER,       2, "direct",  amc_alg_reduce_scatter_direct, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_SCAN_DOUBLING]      = { AMC_COLL_SCAN,       2, "hillis_steele",     amc_alg_scan_doubling, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_EXSCAN_DOUBLING]    = { AMC_COLL_EXSCAN,     2, "hillis_steele",     amc_alg_exscan_doubling, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_ALLTOALL_LINEAR]    = { AMC_COLL_ALLTOALL,   2, "linear",            amc_alg_alltoall_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLTOALLV_LINEAR]   = { AMC_COLL_ALLTOALLV,  2, "linear",            amc_alg_alltoallv_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLTOALLV_BRUCK]    = { AMC_COLL_ALLTOALLV,  3, "bruck",             amc_alg_alltoallv_bruck, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_BCAST_LINEAR]       = { AMC_COLL_BCAST,      4, "linear",            amc_alg_bcast_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_REDUCE_LINEAR]      = { AMC_COLL_REDUCE,     3, "linear",            amc_alg_reduce_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLGATHER_LINEAR]   = { AMC_COLL_ALLGATHER,  3, "linear",            amc_alg_allgather_linear, 0 },
    [AMC_ALG_I_ALLGATHERV_LINEAR]  = { AMC_COLL_ALLGATHERV, 2, "linear",            amc_alg_allgatherv_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_BARRIER_LANES]      = { AMC_COLL_BARRIER,    3, "multi_lane",        amc_alg_barrier_lanes, AMC_ALG_FLAG_NODES },
    [AMC_ALG_I_ALLREDUCE_LANES]    = { AMC_COLL_ALLREDUCE,  5, "multi_lane",        amc_alg_allreduce_lanes, AMC_ALG_FLAG_NODES | AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_BCAST_KNOMIAL]      = { AMC_COLL_BCAST,      5, "knomial",           amc_alg_bcast_knomial, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_REDUCE_KNOMIAL]     = { AMC_COLL_REDUCE,     4, "knomial",           amc_alg_reduce_knomial, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_REDUCE_RABENSEIFNER] = { AMC_COLL_REDUCE,    5, "rabenseifner",      amc_alg_reduce_rabenseifner, AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_ALLREDUCE_RABENSEIFNER] = { AMC_COLL_ALLREDUCE, 6, "rabenseifner",   amc_alg_allreduce_rabenseifner, AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_ALLREDUCE_KNOMIAL]  = { AMC_COLL_ALLREDUCE,  7, "knomial",           amc_alg_allreduce_knomial, 0 },
    [AMC_ALG_I_RSB_HALVING]        = { AMC_COLL_REDUCE_SCATTER_BLOCK, 3, "recursive_halving", amc_alg_reduce_scatter_halving, AMC_ALG_FLAG_COMMUTATIVE | AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_RS_HALVING]         = { AMC_COLL_REDUCE_SCATTER,       3, "recursive_halving", amc_alg_reduce_scatter_halving, AMC_ALG_FLAG_COMMUTATIVE | AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_RSB_RING]           = { AMC_COLL_REDUCE_SCATTER_BLOCK, 4, "ring",    amc_alg_reduce_scatter_ring, AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_RS_RING]            = { AMC_COLL_REDUCE_SCATTER,       4, "ring",    amc_alg_reduce_scatter_ring, AMC_ALG_FLAG_COMMUTATIVE },
    [AMC_ALG_I_RSB_PAIRWISE]       = { AMC_COLL_REDUCE_SCATTER_BLOCK, 5, "pairwise", amc_alg_reduce_scatter_pairwise, 0 },
    [AMC_ALG_I_RS_PAIRWISE]        = { AMC_COLL_REDUCE_SCATTER,       5, "pairwise", amc_alg_reduce_scatter_pairwise, 0 },
    [AMC_ALG_I_ALLGATHER_RECDBL]   = { AMC_COLL_ALLGATHER,  4, "recursive_doubling", amc_alg_allgather_recdbl, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_ALLGATHER_NEIGHBOR] = { AMC_COLL_ALLGATHER,  5, "neighbor_exchange", amc_alg_allgather_neighbor, 0 },
    [AMC_ALG_I_BARRIER_KNOMIAL]    = { AMC_COLL_BARRIER,    4, "knomial",           amc_alg_barrier_knomial, 0 },
    [AMC_ALG_I_BARRIER_LINEAR]     = { AMC_COLL_BARRIER,    5, "linear",            amc_alg_barrier_linear, 0 },
    [AMC_ALG_I_BCAST_SCATTER_ALLGATHER] = { AMC_COLL_BCAST, 6, "scatter_allgather", amc_alg_bcast_scatter_allgather, 0 },
    [AMC_ALG_I_ALLTOALL_BRUCK]     = { AMC_COLL_ALLTOALL,   3, "bruck",             amc_alg_alltoall_bruck, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_GATHER_BINOMIAL]    = { AMC_COLL_GATHER,     2, "binomial",          amc_alg_gather_binomial, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_SCATTER_BINOMIAL]   = { AMC_COLL_SCATTER,    2, "binomial",          amc_alg_scatter_binomial, AMC_ALG_FLAG_CTRL },
    [AMC_ALG_I_SCAN_LINEAR]        = { AMC_COLL_SCAN,       3, "linear",            amc_alg_scan_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_EXSCAN_LINEAR]      = { AMC_COLL_EXSCAN,     3, "linear",            amc_alg_exscan_linear, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLGATHERV_RECDBL]  = { AMC_COLL_ALLGATHERV, 3, "recursive_doubling", amc_alg_allgatherv_recdbl, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLGATHERV_BRUCK]   = { AMC_COLL_ALLGATHERV, 4, "bruck",             amc_alg_allgatherv_bruck, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_ALLGATHERV_NEIGHBOR] = { AMC_COLL_ALLGATHERV, 5, "neighbor_exchange", amc_alg_allgatherv_neighbor, AMC_ALG_FLAG_CTRL | AMC_ALG_FLAG_CTRL_AT_2 },
    [AMC_ALG_I_SCAN_PIPELINE]      = { AMC_COLL_SCAN,       4, "pipeline",          amc_alg_scan_pipeline, 0 },
    [AMC_ALG_I_EXSCAN_PIPELINE]    = { AMC_COLL_EXSCAN,     4, "pipeline",          amc_alg_exscan_pipeline, 0 },
};


const amc_alg_t *amc_alg_find(int coll, const char *name)
{
    size_t i;

    for (i = 0; i < AMC_ALG_COUNT; i++) {
        if ((amc_alg_table[i].coll == coll) && (strcmp(amc_alg_table[i].name, name) == 0)) {
            return &amc_alg_table[i];
        }
    }
    return NULL;
}

const char *amc_alg_name(int coll, unsigned id)
{
    size_t i;

    for (i = 0; i < AMC_ALG_COUNT; i++) {
        if ((amc_alg_table[i].coll == coll) && (amc_alg_table[i].id == id)) {
            return amc_alg_table[i].name;
        }
    }
    return "unknown";
}

const char *amc_alg_config_hint(int coll)
{
    switch (coll) {
    case AMC_COLL_BCAST:
        return "AMC_BCAST_ALG (or a size threshold such as AMC_BCAST_PIPELINE_MIN, "
               "AMC_BCAST_SEGMENT or AMC_LINEAR_MAX_*, or AMC_NODE_SIZE) differs between ranks, or their counts "
               "differ";
    case AMC_COLL_ALLREDUCE:
        return "AMC_ALLREDUCE_ALG (or a size threshold such as AMC_ALLREDUCE_RING_MIN or "
               "AMC_LINEAR_MAX_*, or AMC_NODE_SIZE) differs between ranks, or their counts "
               "or ops differ";
    case AMC_COLL_ALLGATHER:
        return "AMC_ALLGATHER_ALG (or the size threshold AMC_ALLGATHER_BRUCK_MAX or "
               "AMC_LINEAR_MAX_*) differs "
               "between ranks, or their counts differ";
    case AMC_COLL_BARRIER:
        return "AMC_BARRIER_ALG (or AMC_NODE_SIZE) differs between ranks";
    case AMC_COLL_REDUCE:
        return "AMC_REDUCE_ALG (or AMC_NODE_SIZE) differs between ranks, or their ops differ";
    case AMC_COLL_GATHER:
        return "AMC_GATHER_ALG differs between ranks";
    case AMC_COLL_SCATTER:
        return "AMC_SCATTER_ALG differs between ranks";
    case AMC_COLL_ALLTOALL:
        return "AMC_ALLTOALL_ALG (or the size threshold AMC_ALLTOALL_LINEAR_MAX) differs "
               "between ranks";
    case AMC_COLL_ALLTOALLV:
        return "AMC_ALLTOALLV_ALG differs between ranks";
    case AMC_COLL_ALLGATHERV:
        return "AMC_ALLGATHERV_ALG differs between ranks";
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        return "AMC_REDUCE_SCATTER_BLOCK_ALG differs between ranks, or their counts or ops differ";
    case AMC_COLL_REDUCE_SCATTER:
        return "AMC_REDUCE_SCATTER_ALG differs between ranks, or their counts or ops differ";
    case AMC_COLL_SCAN:
        return "AMC_SCAN_ALG differs between ranks, or their counts differ";
    case AMC_COLL_EXSCAN:
        return "AMC_EXSCAN_ALG differs between ranks, or their counts differ";
    default:
        /* one algorithm and no variable: only another build chooses otherwise */
        return "no AMC_ variable chooses it: do the ranks run the same amcoll library?";
    }
}

size_t amc_alg_count(void)
{
    return AMC_ALG_COUNT;
}

const amc_alg_t *amc_alg_at(size_t i)
{
    return (i < AMC_ALG_COUNT) ? &amc_alg_table[i] : NULL;
}

size_t amc_alg_index(const amc_alg_t *alg)
{
    uintptr_t at = (uintptr_t)alg, first = (uintptr_t)&amc_alg_table[0];

    if ((at < first) || (at >= (uintptr_t)&amc_alg_table[AMC_ALG_COUNT]) ||
        ((at - first) % sizeof(amc_alg_t) != 0)) {
        return AMC_ALG_COUNT;
    }
    return (at - first) / sizeof(amc_alg_t);
}

void amc_alg_print_names(FILE *stream, int coll)
{
    size_t i;

    for (i = 0; i < AMC_ALG_COUNT; i++) {
        if (amc_alg_table[i].coll == coll) {
            fprintf(stream, ", %s", amc_alg_table[i].name);
        }
    }
}

/* The ring adds contributions in ring order, the node-aware ones node by
 * node: only for ops whose order does not matter, whatever was asked for. */
int amc_alg_usable(const amc_alg_t *alg, const amc_coll_args_t *args)
{
    return !((alg->flags & AMC_ALG_FLAG_COMMUTATIVE) && !args->commutative);
}

const amc_alg_t *amc_alg_bcast_forwarding(void)
{
    return &amc_alg_table[AMC_ALG_I_BCAST_BINOMIAL];
}

void amc_alg_resolve(const amc_config_t *cfg, const amc_alg_t **forced)
{
    int coll;

    /* collectives without an AMC_<COLL>_ALG entry have "" here: auto too */
    for (coll = 0; coll < AMC_COLL_LAST; coll++) {
        forced[coll] = ((cfg->alg[coll][0] != '\0') && (strcmp(cfg->alg[coll], "auto") != 0))
                           ? amc_alg_find(coll, cfg->alg[coll]) : NULL;
    }
}

/* Direct reduce-scatter (every rank sends N-1 blocks at once) against the
 * reduce + scatter. Measured here (OSU's method, same job, ratio to Open MPI
 * direct / reduce + scatter): N <= 4 direct wins at every size (8 B to
 * 1 MiB, up to 5x); N = 8 with blocks of 64 B to 4 KiB 0.34-0.89 against
 * 0.64-1.30 (an earlier rule kept N = 8 off direct there, measured while the
 * bench timed UCX's wire-up); N = 16 direct wins at 8 B (0.63 against 0.89)
 * and loses at 512 B and 4 KiB (2.5-4.2 against 0.6), and wins again from
 * 64 KiB. recvcounts are equal on every rank (MPI), so every rank chooses
 * alike. */
static int amc_alg_rs_direct(const amc_coll_args_t *args, int size)
{
    size_t block = args->count, i;

    if (args->coll == AMC_COLL_REDUCE_SCATTER) {
        block = 0;
        for (i = 0; i < (size_t)size; i++) {
            block += args->rcounts[i];
        }
        block /= (size_t)size;
    }
    block *= args->dt_size;
    return (size <= 8) || (block <= 48) || (block >= 65536);
}

/* The size-based default. */
/* Linear algorithms for messages up to linear_max_bytes on communicators
 * of up to linear_max_ranks, or of up to oversub_linear_max_ranks within one
 * node that has more ranks than cores: every member sees the same (its
 * node's ranks and cores). */
static int amc_alg_linear_ok(const amc_config_t *cfg, size_t bytes, int size, int apart)
{
    return (bytes <= cfg->linear_max_bytes) &&
           ((size <= (int)cfg->linear_max_ranks) ||
            (!apart && (size <= (int)cfg->oversub_linear_max_ranks)));
}

/* Scan and exscan as a chain (one transfer and one reduction per rank)
 * instead of Hillis-Steele's log2(N) of each: on a node with more ranks than
 * cores the work, not the depth, decides, from about 64 KiB. Measured at
 * N = 4 and 8, OSU's method: scan 64 KiB 43 / 145 us against 58 / 246, 1 MiB
 * 426 / 1060 against 620 / 2099; exscan 1 MiB at N = 8 758 against 1355.
 * Below, and at N = 8 for small vectors (56 against 38 us), the doubling
 * wins. */
#define AMC_ALG_SCAN_CHAIN_MIN_BYTES 65536
#define AMC_ALG_SHARED_MAX_RANKS     8

/* Up to 8 ranks where the linear algorithms' rank rule holds
 * (AMC_LINEAR_MAX_RANKS, or one node with more ranks than cores): where the
 * large-message choices below were measured. */
static int amc_alg_few_shared(const amc_config_t *cfg, int size, int apart)
{
    return !apart && (size <= AMC_ALG_SHARED_MAX_RANKS) &&
           ((size <= (int)cfg->linear_max_ranks) || (size <= (int)cfg->oversub_linear_max_ranks));
}

/* 7 or 8 ranks sharing cores, blocks of 256 B to 4 KiB: the linear
 * allgather's 56 messages in flight at once measured 1.5-2.5x slower than
 * recursive doubling's log2(N) exchanges (N = 8, us: 256 B 228 against 93,
 * 1 KiB 142 against 98, 4 KiB 170 against 151; at 128 B and 8 KiB, and at
 * N = 6, linear stays ahead). */
static int amc_alg_allgather_doubling_ok(const amc_config_t *cfg, size_t block, int size,
                                         int apart)
{
    return (size >= 7) && (block > 128) && (block <= 4096) &&
           amc_alg_few_shared(cfg, size, apart);
}

static int amc_alg_scan_chain(const amc_config_t *cfg, size_t bytes, int size, int apart)
{
    return (bytes >= AMC_ALG_SCAN_CHAIN_MIN_BYTES) && amc_alg_few_shared(cfg, size, apart);
}

/* Barrier latency, back to back, slowest rank (bench/barrier_bench), N = 4 /
 * 8 / 16 / 32 on this 2-core machine, us: linear 13.9 / 40.4 / 82.4 / 197,
 * dissemination 12.8 / 63.6 / 177 / 540, Open MPI 12.4-13.1 / 70-71 /
 * 171-187 / 514-535. Its root also leaves first, so a rooted collective
 * right after finds its peers waiting rather than late. */
int amc_alg_barrier_linear_pays(const amc_config_t *cfg, int size, const amc_topo_t *topo)
{
    int apart = amc_topo_apart(topo);

    return !amc_topo_spans(topo) && (size >= 3) &&
           ((size <= (int)cfg->linear_max_ranks) ||
            (!apart && (size <= (int)cfg->oversub_linear_max_ranks)));
}

/* Allreduce past the linear bound there: the ring's 2(N-1) steps each need
 * every rank scheduled. The k-nomial reduce + bcast up to 256 KiB, then
 * Rabenseifner (commutative ops). Measured at N = 4 / 8, OSU's method, us:
 * 128 KiB k-nomial 87-99 / 217-257, Rabenseifner 123-133 / 460-487, ring
 * 176-238 / 1025-1029; 1 MiB Rabenseifner 407 / 1235-1328, k-nomial
 * 514-639 / 1366-1890, ring 492-689 / 1795-2129; 4 MiB Rabenseifner
 * 2179-2258 / 6292-6976, ring 2702-2783 / 6805-7506. */
#define AMC_ALG_ALLREDUCE_KNOMIAL_MAX 262144

static const amc_alg_t *amc_alg_allreduce_shared(const amc_config_t *cfg,
                                                 const amc_coll_args_t *args, size_t bytes,
                                                 int size, int apart)
{
    if (!amc_alg_few_shared(cfg, size, apart) || (size < 3)) {
        return NULL;
    }
    if (bytes <= AMC_ALG_ALLREDUCE_KNOMIAL_MAX) {
        return &amc_alg_table[AMC_ALG_I_ALLREDUCE_KNOMIAL];
    }
    if (args->commutative && (args->count >= (size_t)size)) {
        return &amc_alg_table[AMC_ALG_I_ALLREDUCE_RABENSEIFNER];
    }
    return NULL;
}

/* The allgather sends N-1 messages per rank: measured slower than Bruck at
 * N = 16 and 32 for blocks up to 1 KiB, faster than the ring beyond Bruck's
 * range. total: all ranks' blocks; allgatherv passes its mean block, as
 * every rank has the same counts. */
static int amc_alg_allgather_linear_ok(const amc_config_t *cfg, size_t block, size_t total,
                                       int size, int apart)
{
    return amc_alg_linear_ok(cfg, block, size, apart) &&
           ((size <= 8) || (total > cfg->allgather_bruck_max));
}

static size_t amc_alg_vtotal(const amc_coll_args_t *args, int size)
{
    size_t total = 0;
    int    i;

    for (i = 0; i < size; i++) {
        total += args->rcounts[i];
    }
    return total * args->dt_size;
}

/* Nodes each member of the smallest node sends to across nodes in the
 * multi-lane algorithms' one step (am_coll/alg/alg_lanes.c): that many
 * overheads at both ends, against the log2(nodes) hops it saves. */
static int amc_alg_lanes_share(const amc_topo_t *topo)
{
    int lanes = (topo->min_node > 0) ? topo->min_node : 1;

    return (topo->nnodes + lanes - 1) / lanes;
}

static int amc_alg_log2(int64_t n)
{
    int r = 0;

    while (((int64_t)1 << r) < n) {
        r++;
    }
    return r;
}

/* Whether the multi-lane algorithms are predicted faster than flat, by the
 * simulator's costs in units of 0.2 us (this machine's shared memory and
 * an InfiniBand network, doc/design.md, "Node-aware collectives"): a hop
 * inside a node 3, across 5, another message of a member's share 2. With
 * a = log2(members of a node), b = log2(nodes), flat costs 3a + 5b. The
 * barrier: one step across (share c <= 8) 6a + 5 + 2(c - 1), or R rounds
 * of radix W + 1, each with a node barrier, 3a(R + 1) + 5R. The allreduce
 * adds to the node's own recursive doubling (3a) a gather among the lanes
 * (3 log2 of them) after each step across: one step 5 + 2(c - 1) +
 * 3 log2 W for a share of 2 or more, or R rounds of 5 + 3 log2(k0 - 1),
 * k0 its largest radix, and a hop to the members past the lanes. Checked
 * against amc_sim at 2 to 1,024 nodes of 2 to 64: it picks the faster one,
 * or one within 2 %, but for 4 nodes of 4 (flat barrier 3.59 us against
 * multi-lane 3.34). */
int amc_alg_barrier_lanes_pay(const amc_config_t *cfg, const amc_topo_t *topo)
{
    int     a, b, c, rounds = 0;
    int64_t reach = 1;

    if (!cfg->lanes_barrier || !amc_topo_spans(topo)) {
        return 0;
    }
    a = amc_alg_log2((topo->size + topo->nnodes - 1) / topo->nnodes);
    b = amc_alg_log2(topo->nnodes);
    c = amc_alg_lanes_share(topo);
    if (c <= AMC_LANES_ONE_STEP_MAX) {
        return 6 * a + 5 + 2 * (c - 1) <= 3 * a + 5 * b;
    }
    while (reach < topo->nnodes) {
        reach *= (int64_t)topo->min_node + 1;
        rounds++;
    }
    return 3 * a * (rounds + 1) + 5 * rounds <= 3 * a + 5 * b;
}

static int amc_alg_allreduce_lanes_pay(const amc_config_t *cfg, const amc_coll_args_t *args,
                                       size_t bytes)
{
    const amc_topo_t *topo = args->topo;
    int               b, c, cost;

    if (!cfg->lanes_allreduce || !args->commutative ||
        ((size_t)topo->nnodes * bytes > cfg->lanes_allreduce_bytes)) {
        return 0;
    }
    b = amc_alg_log2(topo->nnodes);
    c = amc_alg_lanes_share(topo);
    if (c <= AMC_LANES_ALLREDUCE_ONE_STEP) {
        cost = 5 + 2 * (c - 1) + 3 * amc_alg_log2(topo->min_node);
        return (c >= 2) && (cost <= 5 * b);
    }
    if (topo->lane_rounds == 0) {
        return 0;
    }
    cost = topo->lane_rounds * (5 + 3 * amc_alg_log2(topo->lane_radix - 1)) + 3;
    return cost <= 5 * b;
}

static const amc_alg_t *amc_alg_auto(const amc_config_t *cfg, const amc_coll_args_t *args,
                                     int size)
{
    size_t bytes = args->count * args->dt_size;
    /* a communicator across nodes: the node-aware algorithms for what is
     * latency-bound (small messages), the flat ones for bandwidth */
    int    nodes = amc_topo_spans(args->topo);
    int    apart = amc_topo_apart(args->topo);

    int    linear = amc_alg_linear_ok(cfg, bytes, size, apart);
    size_t vtotal;

    switch (args->coll) {
    case AMC_COLL_BARRIER:
        /* only where amc_barrier_start asked for the engine */
        if (amc_alg_barrier_linear_pays(cfg, size, args->topo)) {
            return &amc_alg_table[AMC_ALG_I_BARRIER_LINEAR];
        }
        return amc_alg_barrier_lanes_pay(cfg, args->topo) ? &amc_alg_table[AMC_ALG_I_BARRIER_LANES]
                                                          : NULL;
    case AMC_COLL_BCAST:
        if (linear || amc_alg_few_shared(cfg, size, apart)) {
            /* past the linear bound too: the pipeline's segments each need
             * the inner ranks scheduled (N = 4 / 8, 1 MiB: 192-224 / 211-301
             * us linear against 386-447 / 861-874 pipelined) */
            return &amc_alg_table[AMC_ALG_I_BCAST_LINEAR];
        }
        if ((bytes >= cfg->bcast_pipeline_min) && (bytes > cfg->bcast_segment) && (size > 2)) {
            return &amc_alg_table[AMC_ALG_I_BCAST_PIPELINE];
        }
        return &amc_alg_table[nodes ? AMC_ALG_I_BCAST_HIER : AMC_ALG_I_BCAST_BINOMIAL];
    case AMC_COLL_REDUCE:
        if (linear) {
            return &amc_alg_table[AMC_ALG_I_REDUCE_LINEAR];
        }
        return (nodes && args->commutative) ? &amc_alg_table[AMC_ALG_I_REDUCE_HIER] : NULL;
    case AMC_COLL_ALLREDUCE:
        if (linear) {
            return &amc_alg_table[AMC_ALG_I_ALLREDUCE_LINEAR];
        }
        if (amc_alg_allreduce_shared(cfg, args, bytes, size, apart) != NULL) {
            return amc_alg_allreduce_shared(cfg, args, bytes, size, apart);
        }
        if (args->commutative && (bytes >= cfg->allreduce_ring_min) &&
            (args->count >= (size_t)size)) {
            return &amc_alg_table[AMC_ALG_I_ALLREDUCE_RING];
        }
        if (nodes && amc_alg_allreduce_lanes_pay(cfg, args, bytes)) {
            return &amc_alg_table[AMC_ALG_I_ALLREDUCE_LANES];
        }
        /* the leaders' two-level allreduce is predicted slower than recursive
         * doubling at every layout simulated: with nodes in blocks its
         * exchanges are already log2(members) inside and log2(nodes) across */
        return &amc_alg_table[AMC_ALG_I_ALLREDUCE_RECDBL];
    case AMC_COLL_ALLGATHER:
        if (amc_alg_allgather_doubling_ok(cfg, bytes, size, apart)) {
            return &amc_alg_table[AMC_ALG_I_ALLGATHER_RECDBL];
        }
        /* past the linear bound too where ranks share cores (N = 4 / 8,
         * 1 MiB: 763-788 / 4052-4556 us linear against 1001-1094 /
         * 4736-5637 ring) */
        if (amc_alg_allgather_linear_ok(cfg, bytes, (size_t)size * bytes, size, apart) ||
            amc_alg_few_shared(cfg, size, apart)) {
            return &amc_alg_table[AMC_ALG_I_ALLGATHER_LINEAR];
        }
        return &amc_alg_table[((size_t)size * bytes <= cfg->allgather_bruck_max)
                                  ? AMC_ALG_I_ALLGATHER_BRUCK : AMC_ALG_I_ALLGATHER_RING];
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        return &amc_alg_table[amc_alg_rs_direct(args, size) ? AMC_ALG_I_RSB_DIRECT
                                                            : AMC_ALG_I_RSB_REDUCE_LINEAR];
    case AMC_COLL_REDUCE_SCATTER:
        return &amc_alg_table[amc_alg_rs_direct(args, size) ? AMC_ALG_I_RS_DIRECT
                                                            : AMC_ALG_I_RS_REDUCE_LINEAR];
    case AMC_COLL_ALLTOALL:
        /* linear measured 1.3-5x faster than pairwise here at N = 4 and 8 for
         * blocks of 8 B to 1 MiB (shared memory, ranks sharing cores): the
         * threshold keeps pairwise for larger blocks, where a fabric may
         * congest; alltoallv follows (its counts differ between ranks, so
         * no size can choose alike on every rank) */
        return &amc_alg_table[(bytes <= cfg->alltoall_linear_max) ? AMC_ALG_I_ALLTOALL_LINEAR
                                                                   : AMC_ALG_I_ALLTOALL_PAIRWISE];
    case AMC_COLL_ALLTOALLV:
        return &amc_alg_table[AMC_ALG_I_ALLTOALLV_LINEAR];
    case AMC_COLL_ALLGATHERV:
        vtotal = amc_alg_vtotal(args, size);
        return (amc_alg_allgather_linear_ok(cfg, vtotal / (size_t)size, vtotal, size, apart) ||
                amc_alg_few_shared(cfg, size, apart))
                   ? &amc_alg_table[AMC_ALG_I_ALLGATHERV_LINEAR] : NULL;
    case AMC_COLL_GATHER:
    case AMC_COLL_SCATTER:
        /* past N=2 a call whose N blocks fit the barrier's rounds goes
         * binomially on them (am_coll/barrier/ctrl_tree.h): log2(N) rounds
         * within the call where the linear one's root takes N - 1 */
        if (!linear && amc_alg_rounds_tree_fits(args->coll, bytes, size, cfg->fast_max)) {
            return &amc_alg_table[(args->coll == AMC_COLL_GATHER) ? AMC_ALG_I_GATHER_BINOMIAL
                                                                  : AMC_ALG_I_SCATTER_BINOMIAL];
        }
        return NULL;
    case AMC_COLL_SCAN:
        return &amc_alg_table[amc_alg_scan_chain(cfg, bytes, size, apart)
                                  ? AMC_ALG_I_SCAN_LINEAR : AMC_ALG_I_SCAN_DOUBLING];
    case AMC_COLL_EXSCAN:
        return &amc_alg_table[amc_alg_scan_chain(cfg, bytes, size, apart)
                                  ? AMC_ALG_I_EXSCAN_LINEAR : AMC_ALG_I_EXSCAN_DOUBLING];
    default:
        return NULL;
    }
}

/* The bytes a rules-file rule compares: per rank, as amc_alg_auto counts
 * them, so that every rank finds the same. The v-forms whose counts differ
 * between ranks (gatherv, scatterv, alltoallv) count 0, as there. */
size_t amc_alg_rule_bytes(const amc_coll_args_t *args, int size)
{
    switch (args->coll) {
    case AMC_COLL_ALLGATHERV:
        return amc_alg_vtotal(args, size) / (size_t)size;
    case AMC_COLL_REDUCE_SCATTER:
        /* amc_alg_rs_direct's block: the mean count, rounded down, in bytes */
        return amc_alg_vtotal(args, size) / args->dt_size / (size_t)size * args->dt_size;
    default:
        return args->count * args->dt_size;
    }
}

/* Every rank of a call must run the same algorithm, so this reads only what
 * each of them has alike: the collective, the communicator's size and
 * nodes, the op's commutativity, per-rank bytes (0 for the v-forms whose
 * counts differ between ranks) and the configuration (AMC_* and rules files
 * must be the same on every rank, as the README says); never a rank's own
 * state. */
const amc_alg_t *amc_alg_select(struct amc_comm *comm, const amc_coll_args_t *args)
{
    const amc_context_t *ctx = comm->ctx;
    const amc_alg_t     *alg = ctx->alg_forced[args->coll];
    size_t               i;

    if ((alg != NULL) && amc_alg_usable(alg, args)) {
        return alg;
    }
    if (ctx->tuning.n[args->coll] != 0) {
        alg = amc_tuning_match(&ctx->tuning, args->coll, comm->size,
                               amc_alg_rule_bytes(args, comm->size));
        if ((alg != NULL) && amc_alg_usable(alg, args)) {
            return alg;
        }
    }
    alg = amc_alg_auto(&ctx->cfg, args, comm->size);
    if ((alg != NULL) && amc_alg_usable(alg, args)) {
        return alg;
    }
    for (i = 0; i < AMC_ALG_COUNT; i++) {
        if ((amc_alg_table[i].coll == args->coll) && amc_alg_usable(&amc_alg_table[i], args)) {
            return &amc_alg_table[i];
        }
    }
    return NULL;
}
