/*
 * mca_coll_amcoll: amcoll as a coll component of Open MPI (issue 35).
 * The component's public instance and its parameters.
 */
#ifndef AMCOMP_COMP_H
#define AMCOMP_COMP_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

/* The component's public instance: the one symbol Open MPI looks up. */
typedef struct {
    mca_coll_base_component_2_0_0_t super;
    /* parameters (coll_amcoll_*) */
    bool  enable;
    int   priority;
    int   np;
    char *colls_text;
    int   verbose;
    int   test_fail_rank; /* tests only: this world rank acts as if amcoll failed */
    /* coll_amcoll_colls parsed: a bit per AMCM_* collective, blocking and
     * non-blocking forms apart */
    unsigned colls_b, colls_nb;
    /* MPI_THREAD_MULTIPLE asked for (collm_init_query) */
    bool     mt;
} amcomp_component_t;

OMPI_DECLSPEC extern amcomp_component_t mca_coll_amcoll_component;

#endif /* AMCOMP_COMP_H */
