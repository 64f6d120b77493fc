/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI-4 persistent collectives, where the MPI library has them: Open
 * MPI 4.1 declares them as MPIX_*_init in mpi-ext.h (extension pcollreq), an
 * MPI-4 library as MPI_*_init. P_(Bcast_init) names the one there is;
 * HAVE_P says whether there is one. For tests/mpi and bench programs.
 */
#ifndef AMC_MPI_PCOLL_H
#define AMC_MPI_PCOLL_H

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define P_(x) MPIX_##x
#define HAVE_P 1
#elif MPI_VERSION >= 4
#define P_(x) MPI_##x
#define HAVE_P 1
#else
#define HAVE_P 0
#endif

#endif /* AMC_MPI_PCOLL_H */
