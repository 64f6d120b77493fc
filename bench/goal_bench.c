/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL's overhead: a GOAL-written barrier and allreduce against the
 * built-ins, in the same job, interleaved in blocks so that both see the
 * same machine. The GOAL versions are the built-in algorithms' schedules
 * written out as GOAL text (amc_goal export --data), parsed back and
 * compiled: the same messages and order, run through amc_goal_start.
 *
 *   mpirun -np N bench/goal_bench [ITERS] [BYTES]
 *
 * Prints per collective: the built-in's and the GOAL version's time per
 * call (the slowest rank's, best block of 5) and their ratio; then the
 * same from calls interleaved one by one (median per kind), which a
 * loaded machine disturbs less. The built-in
 * barrier is the dedicated fast path unless AMC_BARRIER_ALG=dissemination
 * (then the engine runs it, as it runs the GOAL version).
 */
#include "am_coll/goal/goal.h"
#include "amcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 5

static amc_goal_t goal_of(const char *coll, const char *alg, int n, size_t bytes)
{
    amc_goal_t g = NULL, g2 = NULL;
    char       err[512], *text = NULL;
    size_t     len = 0;
    FILE      *f;

    if (amc_goal_from_builtin(coll, alg, n, bytes, 0, 1, &g, err, sizeof(err)) != AMC_SUCCESS) {
        fprintf(stderr, "goal_bench: %s\n", err);
        exit(1);
    }
    f = open_memstream(&text, &len);
    amc_goal_write(g, f);
    fclose(f);
    amc_goal_free(&g);
    if ((amc_goal_parse(text, len, coll, &g2, err, sizeof(err)) != AMC_SUCCESS) ||
        (amc_goal_compile(g2) != AMC_SUCCESS)) {
        fprintf(stderr, "goal_bench: %s %s\n", err, g2 ? amc_goal_error(g2) : "");
        exit(1);
    }
    free(text);
    return g2;
}

/* The slowest rank's time per call over iters calls of one kind. */
static double block(int kind, amc_goal_t g, int iters, int *in, int *out, size_t count)
{
    amc_request_t req;
    double        t0, t, tmax;
    int           i;

    if (iters < 0) {
        iters = 1; /* one call, untimed here (paired) */
    } else {
        amc_barrier(AMC_COMM_WORLD);
    }
    t0 = amc_wtime();
    for (i = 0; i < iters; i++) {
        switch (kind) {
        case 0:
            amc_barrier(AMC_COMM_WORLD);
            break;
        case 1:
            amc_allreduce(in, out, count, AMC_INT32, AMC_SUM, AMC_COMM_WORLD);
            break;
        default:
            if ((amc_goal_start(g, in, out, AMC_COMM_WORLD, &req) != AMC_SUCCESS) ||
                (amc_wait(&req) != AMC_SUCCESS)) {
                fprintf(stderr, "goal_bench: GOAL run failed\n");
                exit(1);
            }
            break;
        }
    }
    t = (amc_wtime() - t0) / iters;
    if (iters == 1) {
        return t;
    }
    amc_allreduce(&t, &tmax, 1, AMC_DOUBLE, AMC_MAX, AMC_COMM_WORLD);
    return tmax;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Interleaved call by call, built-in then GOAL: each call timed alone,
 * the median per kind (robust to bursts of load from other processes),
 * the slowest rank's. */
static void paired(int kind, amc_goal_t g, int iters, int *in, int *out, size_t count,
                   double *med_builtin, double *med_goal)
{
    double *tb = malloc((size_t)iters * sizeof(*tb)), *tg = malloc((size_t)iters * sizeof(*tg));
    double  t0, m[2], mx[2];
    int     i;

    for (i = 0; i < iters; i++) {
        t0    = amc_wtime();
        block(kind, NULL, -1, in, out, count);
        tb[i] = amc_wtime() - t0;
        t0    = amc_wtime();
        block(2, g, -1, in, out, count);
        tg[i] = amc_wtime() - t0;
    }
    qsort(tb, (size_t)iters, sizeof(*tb), cmp_double);
    qsort(tg, (size_t)iters, sizeof(*tg), cmp_double);
    m[0] = tb[iters / 2];
    m[1] = tg[iters / 2];
    amc_allreduce(m, mx, 2, AMC_DOUBLE, AMC_MAX, AMC_COMM_WORLD);
    *med_builtin = mx[0];
    *med_goal    = mx[1];
    free(tb);
    free(tg);
}

int main(int argc, char **argv)
{
    int        iters = (argc > 1) ? atoi(argv[1]) : 2000;
    size_t     bytes = (argc > 2) ? (size_t)strtoull(argv[2], NULL, 0) : 64;
    size_t     count = bytes / sizeof(int);
    amc_goal_t gb, ga;
    int        rank, n, b, i, *in, *out;
    double     best[4] = { 1e9, 1e9, 1e9, 1e9 }, med[4], t;

    amc_init(&argc, &argv);
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    amc_comm_size(AMC_COMM_WORLD, &n);
    gb  = goal_of("barrier", "dissemination", n, 0);
    ga  = goal_of("allreduce", "recursive_doubling", n, bytes);
    in  = calloc(count + 1, sizeof(int));
    out = calloc(count + 1, sizeof(int));
    for (i = 0; i < (int)count; i++) {
        in[i] = rank + i;
    }
    block(0, NULL, iters / 10 + 1, in, out, count); /* warm up */
    block(2, gb, iters / 10 + 1, in, out, count);
    block(1, NULL, iters / 10 + 1, in, out, count);
    block(2, ga, iters / 10 + 1, in, out, count);
    for (b = 0; b < BLOCKS; b++) {
        t = block(0, NULL, iters, in, out, count);
        best[0] = (t < best[0]) ? t : best[0];
        t = block(2, gb, iters, in, out, count);
        best[1] = (t < best[1]) ? t : best[1];
        t = block(1, NULL, iters, in, out, count);
        best[2] = (t < best[2]) ? t : best[2];
        t = block(2, ga, iters, in, out, count);
        best[3] = (t < best[3]) ? t : best[3];
    }
    paired(0, gb, iters, in, out, count, &med[0], &med[1]);
    paired(1, ga, iters, in, out, count, &med[2], &med[3]);
    if (rank == 0) {
        printf("# goal_bench N=%d iters=%d allreduce bytes=%zu (best of %d blocks, slowest "
               "rank, us per call)\n", n, iters, count * sizeof(int), BLOCKS);
        printf("barrier   built-in %8.2f  GOAL %8.2f  ratio %.3f\n", best[0] * 1e6,
               best[1] * 1e6, best[1] / best[0]);
        printf("allreduce built-in %8.2f  GOAL %8.2f  ratio %.3f\n", best[2] * 1e6,
               best[3] * 1e6, best[3] / best[2]);
        printf("# interleaved call by call, median of %d calls per kind, slowest rank\n", iters);
        printf("barrier   built-in %8.2f  GOAL %8.2f  ratio %.3f\n", med[0] * 1e6,
               med[1] * 1e6, med[1] / med[0]);
        printf("allreduce built-in %8.2f  GOAL %8.2f  ratio %.3f\n", med[2] * 1e6,
               med[3] * 1e6, med[3] / med[2]);
    }
    amc_goal_free(&gb);
    amc_goal_free(&ga);
    free(in);
    free(out);
    amc_finalize();
    return 0;
}
