/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: a stand-in for Open MPI's Fortran integer conversion
 * header, which ompi/op/op.h includes but Debian's libopenmpi-dev does not
 * ship. op.h uses only OMPI_INT_2_FINT; a Fortran INTEGER holds a C int on
 * every platform Open MPI builds its Fortran bindings for. Found after Open
 * MPI's own include folders, so a complete installation's header wins.
 */
#ifndef AMCOMP_SHIM_FINT_2_INT_H
#define AMCOMP_SHIM_FINT_2_INT_H

#ifndef OMPI_INT_2_FINT
#define OMPI_INT_2_FINT(a) ((MPI_Fint)(a))
#endif
#ifndef OMPI_FINT_2_INT
#define OMPI_FINT_2_INT(a) ((int)(a))
#endif

#endif /* AMCOMP_SHIM_FINT_2_INT_H */
