/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: what differs between the MPI libraries mpi/ is built
 * against, in one place. Open MPI's mpi.h makes libamcoll_mpi and
 * mca_coll_amcoll; MPICH's makes libamcoll_mpich (the ABI Intel MPI,
 * MVAPICH and Cray MPICH keep). Handles need nothing here: pointers in
 * Open MPI, ints in MPICH, map.h keys both. Includes no other module.
 */
#ifndef AMCM_IMPL_H
#define AMCM_IMPL_H

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

/* The library's name in its messages and statistics lines. */
#if defined(MPICH_VERSION)
#define AMCM_LIB "amcoll_mpich"
#else
#define AMCM_LIB "amcoll_mpi"
#endif

/* The communicator whose probe runs MPI's progress while amcoll waits
 * (init.c): MPICH's ch4 answers a probe on a communicator of one itself,
 * without its progress engine (MPID_Iprobe, self communicators), so there
 * it is a duplicate of the world; Open MPI progresses on any probe. */
#if defined(MPICH_VERSION)
#define AMCM_POKE_PARENT MPI_COMM_WORLD
#else
#define AMCM_POKE_PARENT MPI_COMM_SELF
#endif

/* Errors. Open MPI gives a code added to a predefined class the string
 * added to it: amcoll's message reaches MPI_Error_string and the fatal
 * handler's report. MPICH 4.0.2 makes such a code without its dynamic bit
 * (MPIR_Add_error_code_impl), so MPI_Error_string reads it as one of its
 * own generic messages, an unrelated one ("Network type AF_INET invalid in
 * call to inet_pton" for a truncation): there the class itself is the
 * code, with MPICH's own string, as its own truncation reports. A peer
 * lost is MPICH's process-failure class (MPIX_ERR_PROC_FAILED, what its
 * collectives raise with MPIR_CVAR_ENABLE_FT); Open MPI 4.1 has none
 * outside ULFM builds. */
#if defined(MPICH_VERSION)
#define AMCM_ADD_ERROR_CODES 0
#define AMCM_ERR_PEER_CLASS  MPIX_ERR_PROC_FAILED
#else
#define AMCM_ADD_ERROR_CODES 1
#define AMCM_ERR_PEER_CLASS  MPI_ERR_OTHER
#endif

/* MPI_CHAR takes every integer op, as the platform's char, in both
 * libraries, beyond MPI's reduction groups: Open MPI as an extension,
 * MPICH 4 in its C_INTEGER_EXTRA group (mpir_op_util.h). Measured with
 * MPICH 4.0.2: MPI_SUM, MAX, LAND, BAND, LXOR on MPI_CHAR succeed, signed
 * on x86. Another MPI keeps to MPI's groups: MPI_CHAR is data only there. */
#if (defined(OPEN_MPI) && OPEN_MPI) || defined(MPICH_VERSION)
#define AMCM_CHAR_REDUCES 1
#else
#define AMCM_CHAR_REDUCES 0
#endif

/* The MPI-4 persistent collectives: Open MPI 4.1 declares them as
 * MPIX_*_init in mpi-ext.h (extension pcollreq), MPICH 4 and any MPI-4
 * library as MPI_*_init. AMCM_PN(x) names the one there is. */
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define AMCM_PERSISTENT_API 1
#define AMCM_PN(x)  MPIX_##x
#define AMCM_PPN(x) PMPIX_##x
#elif MPI_VERSION >= 4
#define AMCM_PERSISTENT_API 1
#define AMCM_PN(x)  MPI_##x
#define AMCM_PPN(x) PMPI_##x
#endif

#endif /* AMCM_IMPL_H */
