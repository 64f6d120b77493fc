/*
 * bench/interpose_bench: the cost of libamcoll_mpi's interposition, measured
 * in one job so that both sides see the same machine state. Run under
 *   mpirun -x LD_PRELOAD=.libs/libamcoll_mpi.so -np N bench/interpose_bench
 * MPI_Init starts amcoll (the library does); the program then alternates
 * blocks of the same collective called directly (amc_bcast on AMC_COMM_WORLD)
 * and through MPI (MPI_Bcast on MPI_COMM_WORLD, routed by the library to the
 * same amcoll communicator), each call timed alone between barriers as OSU
 * does, and prints the median over blocks of the mean per call (rank 0), and
 * the ratio. Sizes: 8 bytes (2 ints for the reductions).
 *   interpose_bench [BLOCKS [CALLS]]   (default 31 2000; fewer under
 *   valgrind --tool=callgrind, whose instruction counts per call are the
 *   steady metric on a shared machine)
 */
#include <amcoll.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXBLOCKS 101

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    static const char *names[] = {"bcast", "allreduce", "reduce", "gather", "scatter",
                                  "allgather", "alltoall", "barrier"};
    int    rank, size, flag = 0, c, b, i, k;
    int    sb[64], rb[1024];
    double t, med[2][MAXBLOCKS];
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
    if (!flag) {
        if (rank == 0) {
            fprintf(stderr, "interpose_bench: run it under LD_PRELOAD=libamcoll_mpi.so\n");
        }
        MPI_Finalize();
        return 1;
    }
    memset(sb, 1, sizeof(sb));
    if (rank == 0) {
        printf("# N=%d, 8 B, median over %d blocks of %d calls, us per call (rank 0)\n", size,
               nblocks, iters);
        printf("| coll | N | amcoll direct | via MPI (libamcoll_mpi) | ratio |\n|---|---:|---:|---:|---:|\n");
    }
    for (c = 0; c < 8; c++) {
        for (b = 0; b < nblocks; b++) {
            for (k = 0; k < 2; k++) {
                double tot = 0;
                int    via = (b + k) & 1; /* alternate which goes first */
                for (i = 0; i < iters + 100; i++) {
                    amc_barrier(AMC_COMM_WORLD);
                    t = MPI_Wtime();
                    switch (c) {
                    case 0: via ? MPI_Bcast(sb, 8, MPI_BYTE, 0, MPI_COMM_WORLD)
                                : amc_bcast(sb, 8, AMC_BYTE, 0, AMC_COMM_WORLD); break;
                    case 1: via ? MPI_Allreduce(sb, rb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                                : amc_allreduce(sb, rb, 2, AMC_INT, AMC_SUM, AMC_COMM_WORLD); break;
                    case 2: via ? MPI_Reduce(sb, rb, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD)
                                : amc_reduce(sb, rb, 2, AMC_INT, AMC_SUM, 0, AMC_COMM_WORLD); break;
                    case 3: via ? MPI_Gather(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, 0, MPI_COMM_WORLD)
                                : amc_gather(sb, rb, 8, AMC_BYTE, 0, AMC_COMM_WORLD); break;
                    case 4: via ? MPI_Scatter(rb, 8, MPI_BYTE, sb, 8, MPI_BYTE, 0, MPI_COMM_WORLD)
                                : amc_scatter(rb, sb, 8, AMC_BYTE, 0, AMC_COMM_WORLD); break;
                    case 5: via ? MPI_Allgather(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, MPI_COMM_WORLD)
                                : amc_allgather(sb, rb, 8, AMC_BYTE, AMC_COMM_WORLD); break;
                    case 6: via ? MPI_Alltoall(rb + 256, 8, MPI_BYTE, rb, 8, MPI_BYTE, MPI_COMM_WORLD)
                                : amc_alltoall(rb + 256, rb, 8, AMC_BYTE, AMC_COMM_WORLD); break;
                    default: via ? MPI_Barrier(MPI_COMM_WORLD) : amc_barrier(AMC_COMM_WORLD);
                    }
                    if (i >= 100) {
                        tot += MPI_Wtime() - t;
                    }
                }
                med[via][b] = tot / iters * 1e6;
            }
        }
        qsort(med[0], nblocks, sizeof(double), cmp);
        qsort(med[1], nblocks, sizeof(double), cmp);
        if (rank == 0) {
            printf("| %s | %d | %.3f | %.3f | %.3f |\n", names[c], size, med[0][nblocks / 2],
                   med[1][nblocks / 2], med[1][nblocks / 2] / med[0][nblocks / 2]);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
