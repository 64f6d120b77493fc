/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: amcoll's start inside Open MPI's job and its end.
 *
 * amcoll starts when MPI_COMM_WORLD's module is enabled, inside MPI_Init,
 * where every rank is: its PMIx bootstrap joins the job's PMIx, which Open
 * MPI has up already. Whether it started is then agreed over the world with
 * the previous module's allreduce, so that every rank takes amcoll's path
 * or none does. It ends when the world's module is destroyed, in
 * MPI_Finalize, before Open MPI closes PMIx.
 */
#ifndef AMCOMP_BOOT_H
#define AMCOMP_BOOT_H

#include "ompi/agree.h"

/* At the world module's enable (world: its agreement): OMPI_SUCCESS if
 * amcoll runs on every rank, else an error on every rank (the module is
 * then dropped everywhere). */
int  amcomp_boot(const amcomp_agree_t *world);
/* amcoll up and agreed: the same answer on every rank */
int  amcomp_on(void);
/* At the world module's destruct: the statistics, then amcoll's end. */
void amcomp_shutdown(void);

#endif /* AMCOMP_BOOT_H */
