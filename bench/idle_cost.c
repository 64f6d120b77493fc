/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What ranks that wait cost a rank that computes, on a node whose ranks
 * share cores: rank 0 runs a fixed loop while the others wait in
 * MPI_Barrier, three times; rank 0 prints how long its loop took each
 * time. Alone on a core the loop takes the same whatever the waiters do;
 * where they share its core, a waiter that spins or yields takes its
 * share of it, one that sleeps does not. Plain MPI, built apart
 * (bench/run_idle_cost.sh):
 *
 *   idle_cost ITERATIONS
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static double ic_work(long n)
{
    double s = 0.0;
    long   i;

    for (i = 0; i < n; i++) {
        s += (double)(i % 7) * 1e-9;
    }
    return s;
}

int main(int argc, char **argv)
{
    long   iters = (argc > 1) ? atol(argv[1]) : 300000000L;
    int    rank, rep;
    double t0, t1, s = 0.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    for (rep = 0; rep < 3; rep++) {
        t0 = MPI_Wtime();
        if (rank == 0) {
            s = ic_work(iters);
        }
        t1 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("compute %.3f s (%g)\n", t1 - t0, s);
        }
    }
    MPI_Finalize();
    return 0;
}
