/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: amcoll's start and end inside Open MPI's job (boot.h).
 */
#include "ompi/boot.h"
#include "ompi/dtypes.h"
#include "ompi/params.h"
#include "ompi/ops.h"
#include "ompi/request.h"
#include "mpi/comms.h"
#include "mpi/dtype.h"
#include "mpi/state.h"

#include "ompi/communicator/communicator.h"
#include "ompi/runtime/mpiruntime.h"
#include "opal/runtime/opal_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int amcomp_on(void)
{
    return amcm_g.on;
}

/* Whether amcoll started here and its world is MPI's: this rank's answer. */
static int amcomp_start_here(struct ompi_communicator_t *world, int need)
{
    int rank = ompi_comm_rank(world), size = ompi_comm_size(world);
    int arank = -1, asize = -1, prov = 0, rc;

    rc = amc_init_thread(NULL, NULL, need, &prov);
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "coll/amcoll: rank %d: amc_init failed (%s): collectives stay with "
                        "Open MPI's components\n", rank, amc_strerror(rc));
        return 0;
    }
    amcm_g.inited = 1;
    amc_comm_rank(AMC_COMM_WORLD, &arank);
    amc_comm_size(AMC_COMM_WORLD, &asize);
    if ((arank != rank) || (asize != size)) {
        fprintf(stderr, "coll/amcoll: rank %d of %d in MPI_COMM_WORLD is rank %d of %d in amcoll "
                        "(no common PMIx job?): collectives stay with Open MPI's components\n",
                rank, size, arank, asize);
        return 0;
    }
    if (prov < need) {
        fprintf(stderr, "coll/amcoll: rank %d: amcoll gives thread level %d < %d: collectives "
                        "stay with Open MPI's components\n", rank, prov, need);
        return 0;
    }
    if (rank == amcomp_params.test_fail_rank) {
        fprintf(stderr, "coll/amcoll: rank %d: coll_amcoll_test_fail_rank: acting as if amcoll "
                        "could not start\n", rank);
        return 0;
    }
    return amcm_comm_add(world, AMC_COMM_WORLD) == MPI_SUCCESS;
}

int amcomp_boot(const amcomp_agree_t *w)
{
    struct ompi_communicator_t *world = w->comm;
    int ok, all = 0, rc;

    amcm_g.world_rank = ompi_comm_rank(world);
    amcm_g.mt         = (ompi_mpi_thread_provided == MPI_THREAD_MULTIPLE);
    /* which collectives is each module's choice (its functions), so the
     * core's own filter lets all through */
    amcm_g.colls      = (1u << AMCM_NCOLL) - 1;
    ok = amcomp_start_here(world, amcm_thread_level(ompi_mpi_thread_provided));
    /* every rank takes amcoll's path or none does */
    all = ok;
    rc  = amcomp_agree(w, &all, 1, MPI_INT, MPI_MIN);
    if ((rc != OMPI_SUCCESS) || !all) {
        if (ok && (amcm_g.world_rank == 0)) {
            fprintf(stderr, "coll/amcoll: another rank could not start amcoll: collectives stay "
                            "with Open MPI's components\n");
        }
        amcm_comm_forget_all();
        if (amcm_g.inited) {
            amc_finalize();
            amcm_g.inited = 0;
        }
        return OMPI_ERROR;
    }
    amc_set_idle_hook(amcomp_idle, NULL);
    opal_progress_register(amcomp_progress);
    amcm_op_set_resolver(amcomp_op_resolve);
    amcm_dt_set_opaque(amcomp_dt_opaque);
    amcm_g.on = 1;
    return OMPI_SUCCESS;
}

void amcomp_shutdown(void)
{
    if (!amcm_g.inited) {
        return;
    }
    amcomp_request_drain();
    if (amcomp_params.verbose > 0) {
        amcm_stats_print("coll/amcoll");
    }
    amcm_g.on = 0;
    opal_progress_unregister(amcomp_progress);
    amc_set_idle_hook(NULL, NULL);
    amcm_comm_forget_all();
    amc_finalize();
    amcm_g.inited = 0;
}
