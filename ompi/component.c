/*
 * mca_coll_amcoll: the component (what Open MPI loads from
 * mca_coll_amcoll.so): its version, its parameters, and the query that
 * gives a communicator a module.
 */
#include "ompi/comp.h"
#include "ompi/boot.h"
#include "ompi/module.h"
#include "mpi/state.h"

#include "ompi/communicator/communicator.h"
#include "opal/mca/base/mca_base_var.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int amcomp_register(void);
static int amcomp_init_query(bool threads, bool mpi_threads);
static mca_coll_base_module_t *amcomp_comm_query(struct ompi_communicator_t *comm, int *priority);

amcomp_component_t mca_coll_amcoll_component = {
    .super = {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "amcoll",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_register_component_params = amcomp_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = amcomp_init_query,
        .collm_comm_query = amcomp_comm_query,
    },
    .enable   = false,
    .priority = 50,
    .np       = 2,
    .verbose  = 0,
    .test_fail_rank = -1,
};

static int amcomp_register(void)
{
    const mca_base_component_t *c = &mca_coll_amcoll_component.super.collm_version;

    mca_coll_amcoll_component.colls_text = "all";
    (void)mca_base_component_var_register(c, "enable",
        "Run collectives on amcoll (0: off, the default; 1: on)", MCA_BASE_VAR_TYPE_BOOL, NULL,
        0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_amcoll_component.enable);
    (void)mca_base_component_var_register(c, "priority",
        "Priority of coll/amcoll when enabled (above tuned and han)", MCA_BASE_VAR_TYPE_INT, NULL,
        0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_amcoll_component.priority);
    (void)mca_base_component_var_register(c, "np",
        "Smallest communicator size coll/amcoll takes", MCA_BASE_VAR_TYPE_INT, NULL, 0, 0,
        OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_amcoll_component.np);
    (void)mca_base_component_var_register(c, "colls",
        "Collectives coll/amcoll runs: 'all', or a comma list (bcast,allreduce,ibarrier: an "
        "'i' prefix names the non-blocking form), or '^' then the ones it leaves to others",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_amcoll_component.colls_text);
    (void)mca_base_component_var_register(c, "verbose",
        "1: say on stderr which communicators coll/amcoll took, and at finalize how many calls "
        "it ran and passed on", MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_amcoll_component.verbose);
    (void)mca_base_component_var_register(c, "test_fail_rank",
        "For tests: the MPI_COMM_WORLD rank that acts as if amcoll could not start there (-1: "
        "none), to check that every rank then leaves the collectives to the others",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_amcoll_component.test_fail_rank);
    return OMPI_SUCCESS;
}

/* coll_amcoll_colls: "all" (or empty), a list of names (an "i" prefix names
 * the non-blocking form), or "^" and the list of those left to the others.
 * The same text on every rank, so the same functions everywhere. */
static void amcomp_parse_colls(const char *text, unsigned *b, unsigned *nb)
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

static int amcomp_init_query(bool threads, bool mpi_threads)
{
    amcomp_component_t *c = &mca_coll_amcoll_component;

    (void)threads;
    if (!c->enable) {
        return OMPI_ERR_NOT_AVAILABLE; /* opt-in: closed, as if not installed */
    }
    c->mt = mpi_threads;
    amcomp_parse_colls(c->colls_text, &c->colls_b, &c->colls_nb);
    return OMPI_SUCCESS;
}

/* Every member asks alike: the parameters, the communicator's kind and
 * size, and whether amcoll started (agreed at MPI_COMM_WORLD's enable). */
static mca_coll_base_module_t *amcomp_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    amcomp_component_t *c = &mca_coll_amcoll_component;
    amcomp_module_t    *m;

    *priority = -1;
    if (!c->enable || OMPI_COMM_IS_INTER(comm) || (ompi_comm_size(comm) < c->np) ||
        ((c->colls_b | c->colls_nb) == 0)) {
        return NULL;
    }
    /* the world's enable starts amcoll; every other communicator comes after */
    if ((comm != &ompi_mpi_comm_world.comm) && !amcomp_on()) {
        return NULL;
    }
    if ((m = amcomp_module_new(comm)) == NULL) {
        return NULL;
    }
    *priority = c->priority;
    return &m->super;
}
