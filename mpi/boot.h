/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi, libamcoll_mpich: how amcoll starts inside MPI_Init. Over
 * the job's PMIx (amc_init_thread) where a PMIx server is: Open MPI's
 * mpirun, PRRTE, srun --mpi=pmix. Elsewhere (MPICH's Hydra, srun
 * --mpi=pmi2) over MPI's own exchange: amc_init_boot on a private
 * duplicate of MPI_COMM_WORLD. AMCOLL_MPI_BOOT=pmix or mpi forces one.
 */
#ifndef AMCM_BOOT_H
#define AMCM_BOOT_H

#include "mpi/state.h"

#pragma GCC visibility push(hidden)

/* The way, from the environment, agreed over MPI_COMM_WORLD (collective):
 * where one rank sees no PMIx server, every rank takes MPI's exchange. */
void amcm_boot_choose(void);

/* amcoll started the chosen way: amcoll's code. Over MPI's exchange a
 * failure on one rank fails the start on every rank; amcm_boot_failure
 * then says whose it was. */
int amcm_boot_start(int *argc, char ***argv, int required, int *provided);
enum {
    AMCM_BOOT_FAIL_HERE,     /* this rank's: it says why */
    AMCM_BOOT_FAIL_SAID,     /* this rank's, said already (AMCOLL_MPI_TEST_FAIL) */
    AMCM_BOOT_FAIL_ELSEWHERE /* another rank's start failed first: nothing to say */
};
int amcm_boot_failure(void);
/* AMCOLL_MPI_TEST_FAIL after the start (tests only): 0 on the rank it
 * names, which says so; else ok. */
int amcm_boot_test_fail(int ok);

/* 1 on every rank when ok is 1 on every rank: over MPI_COMM_WORLD, or the
 * exchange's communicator, in step with ranks whose start failed midway.
 * From a 1 on, the teardown's barriers are real ones; rank 0 says which way
 * amcoll started when AMC_LOG_LEVEL asks for info. */
int amcm_boot_agree(int ok);

/* The exchange's communicator freed; after amc_finalize, whose barriers
 * use it. */
void amcm_boot_free(void);

#pragma GCC visibility pop

#endif /* AMCM_BOOT_H */
