/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/loop_bench: a loop of one blocking collective on AMC_COMM_WORLD,
 * for counting its instructions a call under valgrind --tool=callgrind on
 * every rank (bench/run_rounds_cg.sh): lb_call is the call alone, waits
 * included, so its inclusive cost over the calls is what a call costs.
 *
 *   mpirun -np N bench/loop_bench COLL BYTES [CALLS]
 *
 * COLL: barrier, allreduce (doubles, sum), allgather, alltoall,
 * reduce_scatter_block (doubles, sum), bcast, reduce (doubles, sum), gather,
 * scatter (root 0), scan, exscan (doubles, sum);
 * BYTES per rank or block (a multiple of 8 for the reductions); CALLS
 * (default 2000) after 100 not counted. Rank 0 prints one line.
 */
#include <amcoll.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LB_MAX_BYTES (64 * 1024)

static double g_s[LB_MAX_BYTES / 8], g_r[LB_MAX_BYTES / 8];

static const char *const lb_names[] = {
    "barrier", "allreduce", "allgather", "alltoall", "reduce_scatter_block", "bcast", "reduce",
    "gather", "scatter", "scan", "exscan"
};

/* One call of collective which (lb_names' order), the comparisons of its
 * name made once outside. */
static __attribute__((noinline)) int lb_call(int which, size_t bytes)
{
    size_t n = bytes / 8;

    switch (which) {
    case 0:  return amc_barrier(AMC_COMM_WORLD);
    case 1:  return amc_allreduce(g_s, g_r, n, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
    case 2:  return amc_allgather(g_s, g_r, bytes, AMC_BYTE, AMC_COMM_WORLD);
    case 3:  return amc_alltoall(g_s, g_r, bytes, AMC_BYTE, AMC_COMM_WORLD);
    case 4:  return amc_reduce_scatter_block(g_s, g_r, n, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
    case 5:  return amc_bcast(g_r, bytes, AMC_BYTE, 0, AMC_COMM_WORLD);
    case 6:  return amc_reduce(g_s, g_r, n, AMC_DOUBLE, AMC_SUM, 0, AMC_COMM_WORLD);
    case 7:  return amc_gather(g_s, g_r, bytes, AMC_BYTE, 0, AMC_COMM_WORLD);
    case 8:  return amc_scatter(g_s, g_r, bytes, AMC_BYTE, 0, AMC_COMM_WORLD);
    case 9:  return amc_scan(g_s, g_r, n, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
    default: return amc_exscan(g_s, g_r, n, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    size_t bytes;
    long   calls = 2000, i;
    int    rank, size, rc, which;

    if (argc < 3) {
        fprintf(stderr, "usage: loop_bench COLL BYTES [CALLS]\n");
        return 2;
    }
    for (which = 0; which < (int)(sizeof(lb_names) / sizeof(lb_names[0])); which++) {
        if (!strcmp(argv[1], lb_names[which])) {
            break;
        }
    }
    if (which == (int)(sizeof(lb_names) / sizeof(lb_names[0]))) {
        fprintf(stderr, "loop_bench: unknown collective %s\n", argv[1]);
        return 2;
    }
    bytes = (size_t)strtoul(argv[2], NULL, 10);
    if (argc > 3) {
        calls = atol(argv[3]);
    }
    if (amc_init(&argc, &argv) != AMC_SUCCESS) {
        return 1;
    }
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    amc_comm_size(AMC_COMM_WORLD, &size);
    if ((bytes * (size_t)size > LB_MAX_BYTES) || (calls < 1)) {
        fprintf(stderr, "loop_bench: at most %d bytes in all, one call or more\n", LB_MAX_BYTES);
        amc_finalize();
        return 2;
    }
    memset(g_s, 0, sizeof(g_s));
    for (i = 0; i < calls + 100; i++) {
        rc = lb_call(which, bytes);
        if (rc != AMC_SUCCESS) {
            fprintf(stderr, "loop_bench rank %d: %s %zu B: %s\n", rank, argv[1], bytes,
                    amc_strerror(rc));
            amc_finalize();
            return 1;
        }
    }
    if (rank == 0) {
        printf("loop_bench N=%d %s %zu B: %ld calls\n", size, argv[1], bytes, calls + 100);
    }
    amc_finalize();
    return 0;
}
