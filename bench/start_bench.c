/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What starting a collective costs: the blocking call, amc_iX + amc_wait,
 * and a persistent request (amc_X_init once) with amc_start + amc_wait,
 * interleaved in one job; plus the start call alone (amc_iX against
 * amc_start, the wait not timed), which is where a persistent request saves
 * its argument checks, schedule lookup and request allocation.
 *
 *   mpirun -np N start_bench [reps]
 *
 * Rank 0 prints one table row per collective and size, and RESULT lines:
 * "RESULT N=.. coll=.. bytes=.. blocking_us=.. iwait_us=.. persist_us=..
 *  istart_us=.. pstart_us=..": medians over reps of the slowest rank's mean.
 */
#include "bench/bench_util.h"
#include "amcoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SB_ITERS   200   /* calls per timed block */
#define SB_DEFREPS 31
#define SB_MAXREPS 1001

enum { SB_BARRIER, SB_ALLREDUCE, SB_BCAST, SB_ALLTOALL, SB_NCOLLS };
enum { SB_BLOCKING, SB_IWAIT, SB_PERSIST, SB_ISTART, SB_PSTART, SB_NWAYS };

static const char *const sb_names[SB_NCOLLS] = { "barrier", "allreduce", "bcast", "alltoall" };

typedef struct {
    int            coll;
    size_t         bytes;   /* per rank (alltoall: per peer) */
    int            size;
    unsigned char *sbuf;
    unsigned char *rbuf;
} sb_cell_t;

static size_t sb_count(const sb_cell_t *c)
{
    return (c->coll == SB_ALLREDUCE) ? c->bytes / sizeof(double) : c->bytes;
}

static int sb_blocking(const sb_cell_t *c)
{
    switch (c->coll) {
    case SB_BARRIER:   return amc_barrier(AMC_COMM_WORLD);
    case SB_ALLREDUCE: return amc_allreduce(c->sbuf, c->rbuf, sb_count(c), AMC_DOUBLE, AMC_SUM,
                                            AMC_COMM_WORLD);
    case SB_BCAST:     return amc_bcast(c->rbuf, sb_count(c), AMC_BYTE, 0, AMC_COMM_WORLD);
    default:           return amc_alltoall(c->sbuf, c->rbuf, sb_count(c), AMC_BYTE,
                                           AMC_COMM_WORLD);
    }
}

static int sb_istart(const sb_cell_t *c, amc_request_t *req)
{
    switch (c->coll) {
    case SB_BARRIER:   return amc_ibarrier(AMC_COMM_WORLD, req);
    case SB_ALLREDUCE: return amc_iallreduce(c->sbuf, c->rbuf, sb_count(c), AMC_DOUBLE, AMC_SUM,
                                             AMC_COMM_WORLD, req);
    case SB_BCAST:     return amc_ibcast(c->rbuf, sb_count(c), AMC_BYTE, 0, AMC_COMM_WORLD, req);
    default:           return amc_ialltoall(c->sbuf, c->rbuf, sb_count(c), AMC_BYTE,
                                            AMC_COMM_WORLD, req);
    }
}

static int sb_init(const sb_cell_t *c, amc_request_t *req)
{
    switch (c->coll) {
    case SB_BARRIER:   return amc_barrier_init(AMC_COMM_WORLD, req);
    case SB_ALLREDUCE: return amc_allreduce_init(c->sbuf, c->rbuf, sb_count(c), AMC_DOUBLE,
                                                 AMC_SUM, AMC_COMM_WORLD, req);
    case SB_BCAST:     return amc_bcast_init(c->rbuf, sb_count(c), AMC_BYTE, 0, AMC_COMM_WORLD,
                                             req);
    default:           return amc_alltoall_init(c->sbuf, c->rbuf, sb_count(c), AMC_BYTE,
                                                AMC_COMM_WORLD, req);
    }
}

static void sb_ok(int rc, const char *what)
{
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "start_bench: rank %d: %s: %s\n", bu_rank, what, amc_strerror(rc));
        bu_abort(1);
    }
}

/* Mean seconds per call of one way over SB_ITERS calls; for the start-only
 * ways only the start call is timed. */
static double sb_block(const sb_cell_t *c, int way, amc_request_t persist)
{
    amc_request_t req;
    double        t0, spent = 0.0;
    int           i;

    sb_ok(amc_barrier(AMC_COMM_WORLD), "barrier");
    t0 = bu_now();
    for (i = 0; i < SB_ITERS; i++) {
        switch (way) {
        case SB_BLOCKING:
            sb_ok(sb_blocking(c), "blocking call");
            break;
        case SB_IWAIT:
            sb_ok(sb_istart(c, &req), "i-start");
            sb_ok(amc_wait(&req), "wait");
            break;
        case SB_PERSIST:
            sb_ok(amc_start(&persist), "start");
            sb_ok(amc_wait(&persist), "wait");
            break;
        case SB_ISTART:
        case SB_PSTART: {
            double s = bu_now();

            if (way == SB_ISTART) {
                sb_ok(sb_istart(c, &req), "i-start");
            } else {
                req = persist;
                sb_ok(amc_start(&req), "start");
            }
            spent += bu_now() - s;
            sb_ok(amc_wait(&req), "wait");
            break;
        }
        default:
            break;
        }
    }
    if ((way != SB_ISTART) && (way != SB_PSTART)) {
        spent = bu_now() - t0;
    }
    return spent / SB_ITERS;
}

static void sb_cell(sb_cell_t *c, int reps)
{
    amc_request_t persist = AMC_REQUEST_NULL;
    double       *t = calloc((size_t)reps * SB_NWAYS, sizeof(*t)), med[SB_NWAYS], *col;
    int           rep, w, j;

    col = calloc((size_t)reps, sizeof(*col));
    if ((t == NULL) || (col == NULL)) {
        bu_abort(1);
    }
    sb_ok(sb_init(c, &persist), "init");
    for (w = 0; w < SB_NWAYS; w++) {
        (void)sb_block(c, w, persist); /* warm-up: schedules cached, pages touched */
    }
    for (rep = 0; rep < reps; rep++) {
        for (j = 0; j < SB_NWAYS; j++) {
            w                       = (rep + j) % SB_NWAYS; /* rotate the order */
            t[rep * SB_NWAYS + w] = sb_block(c, w, persist);
        }
    }
    sb_ok(amc_request_free(&persist), "request_free");
    if (bu_allmax(t, reps * SB_NWAYS) != 0) {
        bu_abort(1);
    }
    if (bu_rank == 0) {
        for (w = 0; w < SB_NWAYS; w++) {
            for (rep = 0; rep < reps; rep++) {
                col[rep] = t[rep * SB_NWAYS + w] * 1e6;
            }
            med[w] = bu_median(col, reps);
        }
        printf("| %s | %zu | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |\n",
               sb_names[c->coll], c->bytes, c->size, med[SB_BLOCKING], med[SB_IWAIT],
               med[SB_PERSIST], med[SB_ISTART], med[SB_PSTART], med[SB_PSTART] / med[SB_ISTART]);
        printf("RESULT N=%d coll=%s bytes=%zu blocking_us=%.3f iwait_us=%.3f persist_us=%.3f "
               "istart_us=%.3f pstart_us=%.3f\n", c->size, sb_names[c->coll], c->bytes,
               med[SB_BLOCKING], med[SB_IWAIT], med[SB_PERSIST], med[SB_ISTART], med[SB_PSTART]);
        fflush(stdout);
    }
    free(col);
    free(t);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 8, 65536 };
    sb_cell_t           c;
    long                reps = SB_DEFREPS;
    int                 rank, size, coll;
    unsigned            i;

    bu_prog = "start_bench";
    if ((argc > 1) && (bu_parse_long("reps", argv[1], 1, SB_MAXREPS, &reps) != 0)) {
        return 2;
    }
    bu_init(&argc, &argv, &rank, &size);
    memset(&c, 0, sizeof(c));
    c.size = size;
    c.sbuf = calloc((size_t)size, 65536);
    c.rbuf = calloc((size_t)size, 65536);
    if ((c.sbuf == NULL) || (c.rbuf == NULL)) {
        bu_abort(1);
    }
    if (rank == 0) {
        printf("| coll | bytes | N | amc_X µs | amc_iX + wait µs | start + wait µs | amc_iX call "
               "µs | amc_start call µs | start / iX call |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    for (coll = 0; coll < SB_NCOLLS; coll++) {
        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            if ((coll == SB_BARRIER) && (i > 0)) {
                break;
            }
            c.coll  = coll;
            c.bytes = (coll == SB_BARRIER) ? 0 : sizes[i];
            sb_cell(&c, (int)reps);
        }
    }
    free(c.sbuf);
    free(c.rbuf);
    bu_finalize();
    return 0;
}
