/*
 * mca_coll_amcoll: what waits for MPI_Init's end (late.h).
 */
#include "ompi/late.h"
#include "mpi/dtype.h"
#include "mpi/state.h"

#include <pthread.h>

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

int amcomp_code(int amc_rc)
{
    if (amc_rc == AMC_SUCCESS) {
        return MPI_SUCCESS;
    }
    amcomp_ready(); /* the error codes with amcoll's messages */
    return amcm_mpi_code(amc_rc);
}
