/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: the module's collectives, blocking and non-blocking.
 */
#ifndef AMCOMP_COLLS_H
#define AMCOMP_COLLS_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

/* Sets mod's function of each collective whose bit (AMCM_*) is set: in
 * colls_b its blocking form, in colls_nb its non-blocking and persistent
 * ones (coll_amcoll_colls' "i" names cover both). The others
 * stay NULL, so Open MPI keeps the previous module's. */
void amcomp_colls_set(mca_coll_base_module_t *mod, unsigned colls_b, unsigned colls_nb);

#endif /* AMCOMP_COLLS_H */
