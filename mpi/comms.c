/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: the communicator table.
 */
#include "mpi/comms.h"
#include "mpi/map.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the table */

static amcm_map_t amcm_comms;

/* A program calls collectives on one communicator many times in a row: the
 * entry found is remembered (amcm_comm_find), unless threads may free it
 * under a reader. */
amcm_comm_t *amcm_comm_lookup(MPI_Comm comm)
{
    amcm_comm_t *e;

    amcm_lock();
    e = amcm_map_get(&amcm_comms, AMCM_KEY(comm));
    amcm_unlock();
    if ((e != NULL) && !amcm_g.mt) {
        amcm_g.last = e;
    }
    return e;
}

int amcm_comm_add(MPI_Comm comm, amc_comm_t ac)
{
    amcm_comm_t *e = calloc(1, sizeof(*e));
    int          rc;

    if (e == NULL) {
        return MPI_ERR_NO_MEM;
    }
    e->comm = comm;
    e->ac   = ac;
    amc_comm_rank(ac, &e->rank);
    amc_comm_size(ac, &e->size);
    amcm_lock();
    rc = amcm_map_put(&amcm_comms, AMCM_KEY(comm), e);
    amcm_unlock();
    if (rc != 0) {
        free(e);
        return MPI_ERR_NO_MEM;
    }
    if (comm == MPI_COMM_WORLD) {
        amcm_g.world = e;
    }
    return MPI_SUCCESS;
}

void amcm_comm_drop(MPI_Comm comm)
{
    amcm_comm_t *e;

    if (!amcm_g.inited) {
        return;
    }
    amcm_lock();
    e = amcm_map_del(&amcm_comms, AMCM_KEY(comm));
    amcm_unlock();
    if (amcm_g.last == e) {
        amcm_g.last = NULL; /* its handle may come back for another communicator */
    }
    if (e != NULL) {
        if (e->ac != AMC_COMM_WORLD) {
            amc_comm_free(&e->ac); /* local; collectives still running finish first */
        }
        free(e);
    }
}

void amcm_comm_forget_all(void)
{
    size_t i;

    amcm_lock();
    for (i = 0; i < amcm_comms.cap; i++) {
        free(amcm_comms.vals[i]); /* amc_finalize releases the amcoll side */
    }
    amcm_map_clear(&amcm_comms);
    amcm_g.world = NULL;
    amcm_g.last  = NULL;
    amcm_unlock();
}
