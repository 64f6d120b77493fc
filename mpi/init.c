/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi, libamcoll_mpich: MPI_Init / MPI_Init_thread / MPI_Finalize
 * start and stop amcoll inside the MPI library's own calls (how it starts,
 * PMIx or MPI's exchange: boot.c); the controls (AMCOLL_MPI,
 * AMCOLL_MPI_COLLS, AMCOLL_MPI_STATS).
 */
#include "mpi/boot.h"
#include "mpi/comms.h"
#include "mpi/dtype.h"
#include "mpi/requests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ controls */

/* amcoll's idle hook: one pass of MPI's progress while this rank waits in
 * amcoll (requests.c, "MPI's own requests", says why). An Iprobe on a
 * communicator of our own matches nothing and runs the progress engine
 * (which communicator: mpi/impl.h). */
static void amcm_mpi_poke(void *arg)
{
    int flag;

    (void)arg;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, amcm_g.poke_comm, &flag, MPI_STATUS_IGNORE);
}

/* After PMPI_Init*: start amcoll, check that its world is MPI's, agree. */
static void amcm_start(int *argc, char ***argv, int mpi_provided)
{
    const char *env = getenv("AMCOLL_MPI");
    int         wrank = 0, wsize = 1, ok, all = 0, rc, arank = -1, asize = -1, prov = 0;
    int         need = amcm_thread_level(mpi_provided);
    amc_comm_t  self = AMC_COMM_NULL;

    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    amcm_g.world_rank = wrank;
    amcm_g.mt         = (mpi_provided == MPI_THREAD_MULTIPLE);
    env               = getenv("AMCOLL_MPI_STATS");
    amcm_g.stats      = (env != NULL) && (atoi(env) != 0);
    env               = getenv("AMCOLL_MPI_COLLS");
    amcm_g.colls      = (env != NULL) ? amcm_parse_colls(env) : (1u << AMCM_NCOLL) - 1;
    env               = getenv("AMCOLL_MPI");
    if ((env != NULL) && (strcmp(env, "0") == 0)) {
        return; /* off: not a single extra call (the same value on every rank) */
    }
    amcm_errors_init();
    amcm_dtype_init();
    {
        /* ranks on this node, as the launcher tells (Open MPI, MPICH) */
        const char *l = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        long        cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (l == NULL) {
            l = getenv("MPI_LOCALNRANKS");
        }
        amcm_g.oversub = (l != NULL) && (cores > 0) && (atol(l) > cores);
    }

    ok = 1;
    amcm_boot_choose();
    rc = amcm_boot_start(argc, argv, need, &prov);
    if (rc != AMC_SUCCESS) {
        if (amcm_boot_failure() == AMCM_BOOT_FAIL_HERE) {
            fprintf(stderr, AMCM_LIB ": rank %d: amc_init failed (%s): collectives stay on MPI\n",
                    wrank, amc_strerror(rc));
        }
        ok = 0;
    } else {
        amcm_g.inited = 1;
        amc_comm_rank(AMC_COMM_WORLD, &arank);
        amc_comm_size(AMC_COMM_WORLD, &asize);
        if ((arank != wrank) || (asize != wsize)) {
            fprintf(stderr,
                    AMCM_LIB ": rank %d of %d in MPI_COMM_WORLD is rank %d of %d in amcoll "
                    "(no common PMIx job?): collectives stay on MPI\n",
                    wrank, wsize, arank, asize);
            ok = 0;
        } else if (prov < need) {
            fprintf(stderr,
                    AMCM_LIB ": amcoll gives thread level %d < %d: collectives stay on MPI\n",
                    prov, need);
            ok = 0;
        }
        ok = amcm_boot_test_fail(ok);
    }
    /* every rank routes or none does */
    all = amcm_boot_agree(ok);
    if (!all) {
        if ((ok || (amcm_boot_failure() == AMCM_BOOT_FAIL_ELSEWHERE)) && (wrank == 0)) {
            fprintf(stderr, AMCM_LIB ": another rank could not start amcoll: collectives stay "
                            "on MPI\n");
        }
        if (amcm_g.inited) {
            amc_finalize();
            amcm_g.inited = 0;
        }
        amcm_boot_free();
        return;
    }
    if (amcm_comm_add(MPI_COMM_WORLD, AMC_COMM_WORLD) != MPI_SUCCESS) {
        /* only memory can fail here; keep every rank alike */
        ok = 0;
    }
    /* MPI_COMM_SELF: a split of the world with one member per colour, made
     * here where every rank is */
    rc = amc_comm_split(AMC_COMM_WORLD, wrank, 0, &self);
    if ((rc == AMC_SUCCESS) && (self != AMC_COMM_NULL)) {
        amcm_comm_add(MPI_COMM_SELF, self);
    }
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        amcm_comm_forget_all();
    } else if (PMPI_Comm_dup(AMCM_POKE_PARENT, &amcm_g.poke_comm) == MPI_SUCCESS) {
        amc_set_idle_hook(amcm_mpi_poke, NULL);
    }
    amcm_g.on = all;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;

    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        amcm_start(argc, argv, provided);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);

    if (rc == MPI_SUCCESS) {
        amcm_start(argc, argv, *provided);
    }
    return rc;
}

int MPI_Finalize(void)
{
    if (amcm_g.inited) {
        amcm_detached_poll(1);
        if (amcm_g.stats) {
            amcm_stats_print(AMCM_LIB);
        }
        amcm_g.on = 0;
        amcm_comm_forget_all();
        if (amcm_g.poke_comm != MPI_COMM_NULL) {
            amc_set_idle_hook(NULL, NULL);
            PMPI_Comm_free(&amcm_g.poke_comm);
        }
        amc_finalize();
        amcm_g.inited = 0;
        amcm_boot_free(); /* amc_finalize's barriers were over it */
        amcm_req_pool_drain();
    } else if (amcm_g.stats) {
        amcm_stats_print(AMCM_LIB);
    }
    return PMPI_Finalize();
}
