/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: its parameters (coll_amcoll_*, registered with Open
 * MPI's variable system, so ompi_info lists them) and their values.
 */
#ifndef AMCOMP_PARAMS_H
#define AMCOMP_PARAMS_H

#include "ompi_config.h"
#include "opal/mca/mca.h"

typedef struct {
    bool  enable;
    int   priority;
    int   np;
    char *colls_text;
    int   verbose;
    int   test_fail_rank; /* tests only: this world rank acts as if amcoll failed */
    /* coll_amcoll_colls parsed: a bit per AMCM_* collective, blocking and
     * non-blocking forms apart */
    unsigned colls_b, colls_nb;
} amcomp_params_t;

extern amcomp_params_t amcomp_params;

int  amcomp_params_register(const mca_base_component_t *c);
/* coll_amcoll_colls' text into the two sets; unknown names reported by
 * world rank 0 */
void amcomp_params_parse_colls(const char *text, unsigned *b, unsigned *nb);

#endif /* AMCOMP_PARAMS_H */
