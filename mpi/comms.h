/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: which MPI communicators have an amcoll communicator
 * (the table; the library or the component decides when one is added).
 */
#ifndef AMCM_COMMS_H
#define AMCM_COMMS_H

#include "mpi/state.h"

#pragma GCC visibility push(hidden)

typedef struct amcm_comm {
    MPI_Comm   comm;
    amc_comm_t ac;
    int        rank, size;
} amcm_comm_t;


amcm_comm_t *amcm_comm_lookup(MPI_Comm comm);
/* The world, or the communicator of the previous call, without a lookup. */
static inline amcm_comm_t *amcm_comm_find(MPI_Comm comm)
{
    amcm_comm_t *e = amcm_g.last;

    if (comm == MPI_COMM_WORLD) {
        return amcm_g.world;
    }
    return ((e != NULL) && (e->comm == comm)) ? e : amcm_comm_lookup(comm);
}
int          amcm_comm_add(MPI_Comm comm, amc_comm_t ac);
void         amcm_comm_forget_all(void);
/* Out of the table, its amcoll communicator freed (not the world's). */
void         amcm_comm_drop(MPI_Comm comm);

#pragma GCC visibility pop

#endif /* AMCM_COMMS_H */
