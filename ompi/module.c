/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: the module of one intracommunicator. Its enable saves
 * the previous module of every collective it replaces (retained until the
 * module is destroyed) and makes amcoll's communicator beside Open MPI's;
 * its destruct frees both. A communicator whose amcoll side cannot be made
 * on some member is dropped by every member (they agree), so its calls all
 * stay with the previous modules.
 */
#include "ompi/module.h"
#include "ompi/boot.h"
#include "ompi/colls.h"
#include "ompi/params.h"
#include "mpi/comms.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void amcomp_module_construct(amcomp_module_t *m)
{
    memset(&m->comm, 0, sizeof(*m) - offsetof(amcomp_module_t, comm));
}

#define AMCOMP_RELEASE_ONE(fn)                                                                 \
    if (m->prev.fn##_module != NULL) {                                                         \
        OBJ_RELEASE(m->prev.fn##_module);                                                      \
    }
#define AMCOMP_RELEASE_PREV(name, idx)                                                         \
    AMCOMP_RELEASE_ONE(name) AMCOMP_RELEASE_ONE(i##name) AMCOMP_RELEASE_ONE(name##_init)

static void amcomp_module_destruct(amcomp_module_t *m)
{
    if (m->mapped) {
        if (m->comm == &ompi_mpi_comm_world.comm) {
            amcomp_shutdown(); /* the last of MPI_Finalize that can still use PMIx */
        } else {
            amcm_comm_drop(m->comm); /* a no-op once amcoll is down */
        }
    }
    AMCOMP_COLLS(AMCOMP_RELEASE_PREV)
    if (m->agree.module != NULL) {
        OBJ_RELEASE(m->agree.module);
    }
}

OBJ_CLASS_INSTANCE(amcomp_module_t, mca_coll_base_module_t, amcomp_module_construct,
                   amcomp_module_destruct);

/* The previous module of each collective this module replaces: its calls
 * that amcoll does not run go there. */
#define AMCOMP_SAVE_ONE(fn)                                                                    \
    if (m->super.coll_##fn != NULL) {                                                          \
        m->prev.fn          = comm->c_coll->coll_##fn;                                         \
        m->prev.fn##_module = comm->c_coll->coll_##fn##_module;                                \
        if (m->prev.fn##_module != NULL) {                                                     \
            OBJ_RETAIN(m->prev.fn##_module);                                                   \
        }                                                                                      \
        if (m->prev.fn == NULL) {                                                              \
            missing = #fn;                                                                     \
        }                                                                                      \
    }
#define AMCOMP_SAVE_PREV(name, idx)                                                            \
    AMCOMP_SAVE_ONE(name) AMCOMP_SAVE_ONE(i##name) AMCOMP_SAVE_ONE(name##_init)

/* amcoll's communicator for a communicator other than the world: its
 * members alone make it (amc_comm_create_group), from an id rank 0
 * reserves and a maximum over the members passes on, then agree that every
 * member made it. The module below carries both (agree.h): the
 * communicator is not usable for anything else yet. */
static int amcomp_module_map(amcomp_module_t *m)
{
    struct ompi_communicator_t *comm = m->comm;
    int        n = ompi_comm_size(comm), rank = ompi_comm_rank(comm), i, rc;
    int       *seq = NULL, *ranks = malloc(2 * (size_t)n * sizeof(int));
    uint64_t   x[2] = {0, 0}; /* failed here, the id */
    int        ok;
    amc_comm_t ac = AMC_COMM_NULL;

    if (ranks == NULL) {
        x[0] = 1;
    } else {
        seq = ranks + n;
        for (i = 0; i < n; i++) {
            seq[i] = i;
        }
        if (ompi_group_translate_ranks(comm->c_local_group, n, seq,
                                       ompi_mpi_comm_world.comm.c_local_group, ranks) !=
            OMPI_SUCCESS) {
            x[0] = 1;
        }
    }
    if ((rank == 0) && (x[0] == 0) && (amc_comm_id_reserve(AMC_COMM_WORLD, &x[1]) != AMC_SUCCESS)) {
        x[0] = 1;
    }
    rc = amcomp_agree(&m->agree, x, 2, MPI_UINT64_T, MPI_MAX);
    ok = (rc == OMPI_SUCCESS) && (x[0] == 0);
    if (ok) {
        rc = amc_comm_create_group(AMC_COMM_WORLD, ranks, n, x[1], &ac);
        ok = (rc == AMC_SUCCESS) && (amcm_comm_add(comm, ac) == MPI_SUCCESS);
        if (!ok && (ac != AMC_COMM_NULL)) {
            amc_comm_free(&ac);
        }
        /* the creation is local: whether every member made it is not */
        rc = amcomp_agree(&m->agree, &ok, 1, MPI_INT, MPI_MIN);
        if ((rc != OMPI_SUCCESS) || !ok) {
            amcm_comm_drop(comm); /* frees ac if it was mapped here */
            ok = 0;
        }
    }
    free(ranks);
    return ok ? OMPI_SUCCESS : OMPI_ERROR;
}

static int amcomp_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    amcomp_module_t *m       = (amcomp_module_t *)module;
    const char      *missing = NULL;
    int              rc;

    m->comm = comm;
    AMCOMP_COLLS(AMCOMP_SAVE_PREV)
    m->agree.comm   = comm;
    m->agree.fn     = comm->c_coll->coll_iallreduce;
    m->agree.module = comm->c_coll->coll_iallreduce_module;
    if (m->agree.module != NULL) {
        OBJ_RETAIN(m->agree.module);
    }
    if ((missing != NULL) || (m->agree.fn == NULL)) {
        /* the same modules below on every rank: the same answer */
        if (amcomp_params.verbose > 0) {
            fprintf(stderr, "coll/amcoll: communicator %s: no module below for %s: not taken\n",
                    comm->c_name, missing ? missing : "iallreduce");
        }
        return OMPI_ERROR;
    }
    if (comm == &ompi_mpi_comm_world.comm) {
        rc = amcomp_boot(&m->agree);
    } else {
        rc = amcomp_module_map(m);
    }
    if (rc != OMPI_SUCCESS) {
        return rc; /* on every member: the release of the module puts the previous back */
    }
    m->mapped = 1;
    if ((amcomp_params.verbose > 0) && (ompi_comm_rank(comm) == 0)) {
        fprintf(stderr, "coll/amcoll: took communicator %s (cid %u, %d ranks)\n", comm->c_name,
                (unsigned)comm->c_contextid, ompi_comm_size(comm));
    }
    return OMPI_SUCCESS;
}

amcomp_module_t *amcomp_module_new(struct ompi_communicator_t *comm)
{
    amcomp_module_t *m = OBJ_NEW(amcomp_module_t);

    (void)comm;
    if (m == NULL) {
        return NULL;
    }
    m->super.coll_module_enable = amcomp_module_enable;
    amcomp_colls_set(&m->super, amcomp_params.colls_b,
                     amcomp_params.colls_nb);
    return m;
}
