/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: the module, one per intracommunicator it takes (its
 * data: prev.h).
 */
#ifndef AMCOMP_MODULE_H
#define AMCOMP_MODULE_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

#include "ompi/prev.h"

/* A module for comm with the functions coll_amcoll_colls names. */
amcomp_module_t *amcomp_module_new(struct ompi_communicator_t *comm);

#endif /* AMCOMP_MODULE_H */
