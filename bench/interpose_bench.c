/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/interpose_bench: the cost of libamcoll_mpi's interposition, measured
 * in one job so that both sides see the same machine state. Run under
 *   mpirun -x LD_PRELOAD=.libs/libamcoll_mpi.so -np N bench/interpose_bench
 * MPI_Init starts amcoll (the library does); the program then alternates
 * blocks of the same collective called directly (amc_bcast on AMC_COMM_WORLD)
 * and through MPI (MPI_Bcast on MPI_COMM_WORLD, routed by the library to the
 * same amcoll communicator), each call timed alone between barriers as OSU
 * does, and prints the median over blocks of the mean per call, on rank 0
 * and averaged over the ranks (OSU's latency: each rank's mean, then their
 * mean), and the ratios. Rank 0 alone is the stricter measure: a root's
 * non-blocking call completes locally in a fraction of a microsecond, while
 * the others' time includes the wait for its message. Sizes: 8 bytes per rank (2 ints for the reductions). Every
 * collective in its blocking form (bcast ...), non-blocking form plus a wait
 * (ibcast ...) and persistent form, started and waited (pbcast ...).
 *   interpose_bench [BLOCKS [CALLS [NAME...]]]   (default 31 2000, every
 *   case; fewer under valgrind --tool=callgrind, whose instruction counts per
 *   call are the steady metric on a shared machine: each case is a pair of
 *   functions d_NAME (direct) and v_NAME (via MPI), so their inclusive costs
 *   compare one to one, bench/run_interpose_cg.sh)
 */
#include <amcoll.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_pcoll.h"

#define MAXBLOCKS 101
#define MAXRANKS  64
#define NOINLINE  __attribute__((noinline))
#define AC        AMC_COMM_WORLD
#define MC        MPI_COMM_WORLD

static int    sb[1024], rb[1024];
static int    icnt[MAXRANKS], idsp[MAXRANKS], icnt2[MAXRANKS];
static size_t zcnt[MAXRANKS], zdsp[MAXRANKS], zcnt2[MAXRANKS];

/* blocking: the call */
#define B_(name, dcall, vcall)                                                                 \
    static NOINLINE void d_##name(void) { dcall; }                                             \
    static NOINLINE void v_##name(void) { vcall; }
/* non-blocking: the call and a wait */
#define I_(name, dcall, vcall)                                                                 \
    static NOINLINE void d_i##name(void)                                                       \
    {                                                                                          \
        amc_request_t areq_;                                                                   \
        dcall;                                                                                 \
        amc_wait(&areq_);                                                                      \
    }                                                                                          \
    static NOINLINE void v_i##name(void)                                                       \
    {                                                                                          \
        MPI_Request mreq_;                                                                     \
        vcall;                                                                                 \
        MPI_Wait(&mreq_, MPI_STATUS_IGNORE);                                                   \
    }
/* persistent: made once (on the first call), freed at the end */
static amc_request_t *pdirect[32];
static MPI_Request   *pvia[32];
static int            npdirect, npvia;
/* persistent: made once (on the first call), then started and waited */
#if HAVE_P
#define P__(name, dcall, vcall)                                                                \
    static amc_request_t preq_d_##name;                                                        \
    static MPI_Request   preq_v_##name = MPI_REQUEST_NULL;                                     \
    static NOINLINE void d_p##name(void)                                                       \
    {                                                                                          \
        amc_request_t *areq_ = &preq_d_##name;                                                 \
        if (*areq_ == AMC_REQUEST_NULL) {                                                      \
            dcall;                                                                             \
            pdirect[npdirect++] = areq_;                                                       \
        }                                                                                      \
        amc_start(areq_);                                                                      \
        amc_wait(areq_);                                                                       \
    }                                                                                          \
    static NOINLINE void v_p##name(void)                                                       \
    {                                                                                          \
        MPI_Request *mreq_ = &preq_v_##name;                                                   \
        if (*mreq_ == MPI_REQUEST_NULL) {                                                      \
            vcall;                                                                             \
            pvia[npvia++] = mreq_;                                                             \
        }                                                                                      \
        MPI_Start(mreq_);                                                                      \
        MPI_Wait(mreq_, MPI_STATUS_IGNORE);                                                    \
    }
#else
#define P__(name, dcall, vcall)                                                                \
    static void d_p##name(void) {}                                                             \
    static void v_p##name(void) {}
#endif

/* every form of one collective (name, MPI's capitalised name): its arguments,
 * direct then via MPI */
#define UNPACK_(...) __VA_ARGS__
#define ALL(name, Name, dargs, vargs)                                                          \
    B_(name, amc_##name dargs, MPI_##Name vargs)                                               \
    I_(name, amc_i##name(UNPACK_ dargs, &areq_), MPI_I##name(UNPACK_ vargs, &mreq_))           \
    P__(name, amc_##name##_init(UNPACK_ dargs, areq_),                                         \
        P_(Name##_init)(UNPACK_ vargs, MPI_INFO_NULL, mreq_))

/* 8 B per rank; reductions: 2 ints, sum */
ALL(barrier, Barrier, (AC), (MC))
ALL(bcast, Bcast, (sb, 8, AMC_BYTE, 0, AC), (sb, 8, MPI_BYTE, 0, MC))
ALL(reduce, Reduce, (sb, rb, 2, AMC_INT, AMC_SUM, 0, AC), (sb, rb, 2, MPI_INT, MPI_SUM, 0, MC))
ALL(allreduce, Allreduce, (sb, rb, 2, AMC_INT, AMC_SUM, AC), (sb, rb, 2, MPI_INT, MPI_SUM, MC))
ALL(gather, Gather, (sb, rb, 8, AMC_BYTE, 0, AC), (sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, 0, MC))
ALL(scatter, Scatter, (rb, sb, 8, AMC_BYTE, 0, AC), (rb, 8, MPI_BYTE, sb, 8, MPI_BYTE, 0, MC))
ALL(allgather, Allgather, (sb, rb, 8, AMC_BYTE, AC), (sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, MC))
ALL(alltoall, Alltoall, (rb + 256, rb, 8, AMC_BYTE, AC),
    (rb + 256, 8, MPI_BYTE, rb, 8, MPI_BYTE, MC))
ALL(gatherv, Gatherv, (sb, 8, rb, zcnt, zdsp, AMC_BYTE, 0, AC),
    (sb, 8, MPI_BYTE, rb, icnt, idsp, MPI_BYTE, 0, MC))
ALL(scatterv, Scatterv, (rb, zcnt, zdsp, sb, 8, AMC_BYTE, 0, AC),
    (rb, icnt, idsp, MPI_BYTE, sb, 8, MPI_BYTE, 0, MC))
ALL(allgatherv, Allgatherv, (sb, 8, rb, zcnt, zdsp, AMC_BYTE, AC),
    (sb, 8, MPI_BYTE, rb, icnt, idsp, MPI_BYTE, MC))
ALL(alltoallv, Alltoallv, (rb + 256, zcnt, zdsp, rb, zcnt, zdsp, AMC_BYTE, AC),
    (rb + 256, icnt, idsp, MPI_BYTE, rb, icnt, idsp, MPI_BYTE, MC))
ALL(scan, Scan, (sb, rb, 2, AMC_INT, AMC_SUM, AC), (sb, rb, 2, MPI_INT, MPI_SUM, MC))
ALL(exscan, Exscan, (sb, rb, 2, AMC_INT, AMC_SUM, AC), (sb, rb, 2, MPI_INT, MPI_SUM, MC))
ALL(reduce_scatter_block, Reduce_scatter_block, (sb, rb, 2, AMC_INT, AMC_SUM, AC),
    (sb, rb, 2, MPI_INT, MPI_SUM, MC))
ALL(reduce_scatter, Reduce_scatter, (sb, rb, zcnt2, AMC_INT, AMC_SUM, AC),
    (sb, rb, icnt2, MPI_INT, MPI_SUM, MC))

typedef struct {
    const char *name;
    void (*d)(void), (*v)(void);
} case_t;

#define C3(n) {#n, d_##n, v_##n}, {"i" #n, d_i##n, v_i##n}, {"p" #n, d_p##n, v_p##n}
static const case_t cases[] = {
    C3(bcast), C3(allreduce), C3(reduce), C3(gather), C3(scatter), C3(allgather),
    C3(alltoall), C3(barrier), C3(gatherv), C3(scatterv), C3(allgatherv), C3(alltoallv),
    C3(scan), C3(exscan), C3(reduce_scatter_block), C3(reduce_scatter)};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int wanted(int c, int argc, char **argv)
{
    int i;

    if (argc <= 3) {
        return HAVE_P || (cases[c].name[0] != 'p');
    }
    for (i = 3; i < argc; i++) {
        if (!strcmp(argv[i], cases[c].name)) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int    rank, size, flag = 0, c, b, i, k;
    double t, med[2][MAXBLOCKS], osu[2][MAXBLOCKS], mean;
    int    nblocks = 31, iters = 2000;

    MPI_Init(&argc, &argv);
    if (argc > 1) {
        nblocks = atoi(argv[1]);
        nblocks = (nblocks < 1) ? 1 : (nblocks > MAXBLOCKS) ? MAXBLOCKS : nblocks;
    }
    if (argc > 2) {
        iters = (atoi(argv[2]) > 0) ? atoi(argv[2]) : iters;
    }
    amc_initialized(&flag);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!flag || (size > MAXRANKS)) {
        if (rank == 0) {
            fprintf(stderr, "interpose_bench: run it under LD_PRELOAD=libamcoll_mpi.so, "
                            "at most %d ranks\n", MAXRANKS);
        }
        MPI_Finalize();
        return 1;
    }
    memset(sb, 1, sizeof(sb));
    for (i = 0; i < size; i++) {
        icnt[i]  = 8;
        idsp[i]  = 8 * i;
        icnt2[i] = 2;
        zcnt[i]  = 8;
        zdsp[i]  = 8 * (size_t)i;
        zcnt2[i] = 2;
    }
    if (rank == 0) {
        printf("# N=%d, 8 B, median over %d blocks of %d calls, us per call\n", size,
               nblocks, iters);
        printf("| coll | N | rank 0: amcoll direct | via MPI (libamcoll_mpi) | ratio "
               "| mean over ranks: direct | via MPI | ratio |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    for (c = 0; c < NCASES; c++) {
        if (!wanted(c, argc, argv)) {
            continue;
        }
        for (b = 0; b < nblocks; b++) {
            for (k = 0; k < 2; k++) {
                double tot = 0;
                int    via = (b + k) & 1; /* alternate which goes first */
                for (i = 0; i < iters + 100; i++) {
                    amc_barrier(AMC_COMM_WORLD);
                    t = MPI_Wtime();
                    (via ? cases[c].v : cases[c].d)();
                    if (i >= 100) {
                        tot += MPI_Wtime() - t;
                    }
                }
                med[via][b] = tot / iters * 1e6;
                /* outside the timed calls: OSU's mean over ranks */
                amc_allreduce(&med[via][b], &mean, 1, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
                osu[via][b] = mean / size;
            }
        }
        qsort(med[0], nblocks, sizeof(double), cmp);
        qsort(med[1], nblocks, sizeof(double), cmp);
        qsort(osu[0], nblocks, sizeof(double), cmp);
        qsort(osu[1], nblocks, sizeof(double), cmp);
        if (rank == 0) {
            printf("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", cases[c].name, size,
                   med[0][nblocks / 2], med[1][nblocks / 2],
                   med[1][nblocks / 2] / med[0][nblocks / 2], osu[0][nblocks / 2],
                   osu[1][nblocks / 2], osu[1][nblocks / 2] / osu[0][nblocks / 2]);
            fflush(stdout);
        }
    }
    for (i = 0; i < npdirect; i++) {
        amc_request_free(pdirect[i]);
    }
    for (i = 0; i < npvia; i++) {
        MPI_Request_free(pvia[i]);
    }
    MPI_Finalize();
    return 0;
}
