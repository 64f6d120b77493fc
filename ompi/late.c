/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: what waits for MPI_Init's end (late.h).
 */
#include "ompi/late.h"
#include "mpi/dtype.h"
#include "mpi/state.h"

#include "ompi/communicator/communicator.h"

#include <pthread.h>
#include <stdio.h>

volatile int           amcomp_late_done;
static pthread_mutex_t amcomp_late_lock = PTHREAD_MUTEX_INITIALIZER;

void amcomp_late_init(void)
{
    pthread_mutex_lock(&amcomp_late_lock);
    if (!amcomp_late_done) {
        amcm_dtype_init();
        amcm_errors_init();
        amcomp_late_done = 1;
    }
    pthread_mutex_unlock(&amcomp_late_lock);
}

int amcomp_code(struct ompi_communicator_t *comm, int amc_rc)
{
    if (amc_rc == AMC_SUCCESS) {
        return MPI_SUCCESS;
    }
    amcomp_ready(); /* the error codes with amcoll's messages */
    if ((comm != NULL) && (comm->error_handler == MPI_ERRORS_ARE_FATAL)) {
        fprintf(stderr, "coll/amcoll: rank %d: collective failed: amcoll: %s (fatal)\n",
                amcm_g.world_rank, amc_strerror(amc_rc));
        fflush(stderr);
    }
    return amcm_mpi_code(amc_rc);
}
