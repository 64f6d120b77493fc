/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: amcoll as a coll component of Open MPI.
 * The component's public instance (its parameters: params.h).
 */
#ifndef AMCOMP_COMP_H
#define AMCOMP_COMP_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

/* The component's public instance: the one symbol Open MPI looks up. */
typedef struct {
    mca_coll_base_component_2_0_0_t super;
} amcomp_component_t;

OMPI_DECLSPEC extern amcomp_component_t mca_coll_amcoll_component;

#endif /* AMCOMP_COMP_H */
