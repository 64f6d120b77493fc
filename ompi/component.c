/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: the component (what Open MPI loads from
 * mca_coll_amcoll.so): its version, its parameters, and the query that
 * gives a communicator a module.
 */
#include "ompi/comp.h"
#include "ompi/boot.h"
#include "ompi/module.h"
#include "ompi/params.h"

#include "ompi/communicator/communicator.h"

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
};

static int amcomp_register(void)
{
    return amcomp_params_register(&mca_coll_amcoll_component.super.collm_version);
}

static int amcomp_init_query(bool threads, bool mpi_threads)
{
    const amcomp_params_t *c = &amcomp_params;

    (void)threads;
    if (!c->enable) {
        return OMPI_ERR_NOT_AVAILABLE; /* opt-in: closed, as if not installed */
    }
    (void)mpi_threads; /* the level Open MPI grants is read at the start (boot.c) */
    amcomp_params_parse_colls(amcomp_params.colls_text, &amcomp_params.colls_b,
                              &amcomp_params.colls_nb);
    return OMPI_SUCCESS;
}

/* Every member asks alike: the parameters, the communicator's kind and
 * size, and whether amcoll started (agreed at MPI_COMM_WORLD's enable). */
static mca_coll_base_module_t *amcomp_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    const amcomp_params_t *c = &amcomp_params;
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
