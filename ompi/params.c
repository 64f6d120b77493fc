/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: its parameters (params.h).
 */
#include "ompi/params.h"
#include "mpi/state.h"

#include "ompi/constants.h"
#include "opal/mca/base/mca_base_var.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

amcomp_params_t amcomp_params = {
    .enable         = false,
    .priority       = 50,
    .np             = 2,
    .verbose        = 0,
    .test_fail_rank = -1,
};

int amcomp_params_register(const mca_base_component_t *c)
{
    amcomp_params.colls_text = "all";
    (void)mca_base_component_var_register(c, "enable",
        "Run collectives on amcoll (0: off, the default; 1: on)", MCA_BASE_VAR_TYPE_BOOL, NULL,
        0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY, &amcomp_params.enable);
    (void)mca_base_component_var_register(c, "priority",
        "Priority of coll/amcoll when enabled (above tuned and han)", MCA_BASE_VAR_TYPE_INT, NULL,
        0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &amcomp_params.priority);
    (void)mca_base_component_var_register(c, "np",
        "Smallest communicator size coll/amcoll takes", MCA_BASE_VAR_TYPE_INT, NULL, 0, 0,
        OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &amcomp_params.np);
    (void)mca_base_component_var_register(c, "colls",
        "Collectives coll/amcoll runs: 'all', or a comma list (bcast,allreduce,ibarrier: an "
        "'i' prefix names the non-blocking form), or '^' then the ones it leaves to others",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &amcomp_params.colls_text);
    (void)mca_base_component_var_register(c, "verbose",
        "1: say on stderr which communicators coll/amcoll took, and at finalize how many calls "
        "it ran and passed on", MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_READONLY, &amcomp_params.verbose);
    (void)mca_base_component_var_register(c, "test_fail_rank",
        "For tests: the MPI_COMM_WORLD rank that acts as if amcoll could not start there (-1: "
        "none), to check that every rank then leaves the collectives to the others",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &amcomp_params.test_fail_rank);
    return OMPI_SUCCESS;
}

/* coll_amcoll_colls: "all" (or empty), a list of names (an "i" prefix names
 * the non-blocking form), or "^" and the list of those left to the others.
 * The same text on every rank, so the same functions everywhere. */
void amcomp_params_parse_colls(const char *text, unsigned *b, unsigned *nb)
{
    const char *s = text;
    const char *rank0 = getenv("OMPI_COMM_WORLD_RANK");
    unsigned    all = (1u << AMCM_NCOLL) - 1, lb = 0, lnb = 0;
    int         exclude = 0, i;
    char        name[64];

    if ((s == NULL) || (*s == '\0') || (strcmp(s, "all") == 0)) {
        *b = *nb = all;
        return;
    }
    if (*s == '^') {
        exclude = 1;
        s++;
    }
    while (*s != '\0') {
        size_t len = strcspn(s, ", ");
        if ((len > 0) && (len < sizeof(name))) {
            const char *n = name;
            unsigned   *bits = &lb;
            memcpy(name, s, len);
            name[len] = '\0';
            if ((name[0] == 'i') && (name[1] != '\0')) {
                n    = name + 1;
                bits = &lnb;
            }
            for (i = 0; i < AMCM_NCOLL; i++) {
                if (strcmp(n, amcm_coll_names[i]) == 0) {
                    *bits |= 1u << i;
                    break;
                }
            }
            if ((i == AMCM_NCOLL) && (rank0 != NULL) && (strcmp(rank0, "0") == 0)) {
                fprintf(stderr, "coll/amcoll: coll_amcoll_colls: unknown collective '%s' "
                                "ignored\n", name);
            }
        }
        s += len;
        s += strspn(s, ", ");
    }
    *b  = exclude ? (all & ~lb) : lb;
    *nb = exclude ? (all & ~lnb) : lnb;
}
