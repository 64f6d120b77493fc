/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: what waits for MPI_Init's end. With parameter checks on,
 * MPI_Type_size and MPI_Add_error_code abort before MPI_Init returns, and
 * amcoll starts inside it: the named types' table and the error codes are
 * made by the first collective that needs them.
 */
#ifndef AMCOMP_LATE_H
#define AMCOMP_LATE_H

extern volatile int amcomp_late_done;
void amcomp_late_init(void);

static inline void amcomp_ready(void)
{
    if (__builtin_expect(!amcomp_late_done, 0)) {
        amcomp_late_init();
    }
}

/* An amcoll code of a call on comm as an MPI error code of amcoll's
 * message, for Open MPI to hand to comm's error handler. Under
 * MPI_ERRORS_ARE_FATAL it is said here first: Open MPI's own report can
 * be lost when ranks abort at once. */
struct ompi_communicator_t;
int amcomp_code(struct ompi_communicator_t *comm, int amc_rc);

#endif /* AMCOMP_LATE_H */
