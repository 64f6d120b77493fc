/*
 * mca_coll_amcoll: the component (what Open MPI loads from
 * mca_coll_amcoll.so): its version, its parameters, and the query that
 * gives a communicator a module.
 */
#include "ompi/comp.h"

#include "opal/mca/base/mca_base_var.h"

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
    return OMPI_SUCCESS;
}

static int amcomp_init_query(bool threads, bool mpi_threads)
{
    (void)threads;
    (void)mpi_threads;
    return OMPI_SUCCESS;
}

static mca_coll_base_module_t *amcomp_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    (void)comm;
    *priority = -1;
    return NULL;
}
