/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: which MPI communicators have an amcoll communicator.
 *
 * A communicator is mapped when it is created, inside the MPI call that
 * creates it: that call is collective over the parent, so every member makes
 * the amcoll creation (a dup, or a split of the parent) at the same point of
 * the parent's collective order. The members then agree (an MPI allreduce
 * over the new communicator) that amcoll's ranks are MPI's; a communicator
 * mapped on one member is mapped on all, which is what lets every rank of a
 * collective make the same routing choice. Communicators made any other way
 * (intercommunicators, MPI_Intercomm_merge, MPI_Comm_create_group of a
 * subgroup, spawned or connected ones) are not in the table: their
 * collectives fall through to MPI.
 */
#include "mpi/comms.h"
#include "mpi/requests.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ creation */

enum { AMCM_HOW_DUP, AMCM_HOW_SPLIT };

/* Called by every member of parent pe's communicator, right after the MPI
 * creation returned newcomm (MPI_COMM_NULL where this rank is in none). */
static void amcm_adopt(amcm_comm_t *pe, MPI_Comm newcomm, int how, int colour, int key)
{
    amc_comm_t ac = AMC_COMM_NULL;
    int        rc, ok, added, r = -1, s = -1, ar = -2, as = -2, inter = 0;

    if (how == AMCM_HOW_DUP) {
        rc = amc_comm_dup(pe->ac, &ac);
    } else {
        rc = amc_comm_split(pe->ac, colour, key, &ac);
    }
    if (newcomm == MPI_COMM_NULL) {
        if (ac != AMC_COMM_NULL) {
            amc_comm_free(&ac);
        }
        return;
    }
    PMPI_Comm_test_inter(newcomm, &inter);
    ok = (rc == AMC_SUCCESS) && (ac != AMC_COMM_NULL) && !inter;
    if (ok) {
        PMPI_Comm_rank(newcomm, &r);
        PMPI_Comm_size(newcomm, &s);
        amc_comm_rank(ac, &ar);
        amc_comm_size(ac, &as);
        ok = (r == ar) && (s == as);
    }
    added = ok = ok && (amcm_comm_add(newcomm, ac) == MPI_SUCCESS);
    if (!inter) {
        PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, newcomm);
    }
    if (!ok) {
        if (added) {
            amcm_comm_drop(newcomm); /* frees ac */
        } else if (ac != AMC_COMM_NULL) {
            amc_comm_free(&ac);
        }
    }
}

/* The colour of a general creation: the parent rank of the new
 * communicator's rank 0, the same on its members, different between new
 * communicators; the key is the rank in the new communicator. */
static void amcm_adopt_general(amcm_comm_t *pe, MPI_Comm parent, MPI_Comm newcomm)
{
    MPI_Group pg, ng;
    int       zero = 0, leader = 0, key = 0;

    if (newcomm == MPI_COMM_NULL) {
        amcm_adopt(pe, newcomm, AMCM_HOW_SPLIT, AMC_UNDEFINED, 0);
        return;
    }
    PMPI_Comm_group(parent, &pg);
    PMPI_Comm_group(newcomm, &ng);
    PMPI_Group_translate_ranks(ng, 1, &zero, pg, &leader);
    PMPI_Group_free(&pg);
    PMPI_Group_free(&ng);
    PMPI_Comm_rank(newcomm, &key);
    if (leader == MPI_UNDEFINED || leader < 0) {
        leader = AMC_UNDEFINED; /* cannot happen for a creation over the parent */
    }
    amcm_adopt(pe, newcomm, AMCM_HOW_SPLIT, leader, key);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Comm_dup(comm, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt(pe, *newcomm, AMCM_HOW_DUP, 0, 0);
    }
    return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Comm_dup_with_info(comm, info, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt(pe, *newcomm, AMCM_HOW_DUP, 0, 0);
    }
    return rc;
}

/* MPI_Comm_idup on a mapped communicator: amcoll's dup starts here, in the
 * parent's order like any routed collective (amc_comm_idup), before MPI's;
 * both complete in the background, driven by whatever tests or waits on the
 * request (requests.c), and the new communicator is mapped when both have.
 * MPI's idup completes only once every member has called it, so by then
 * every member has started amcoll's too. amcoll's agreement fails on every
 * member alike, so the new communicator is mapped everywhere or nowhere
 * without an agreement of our own. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    amcm_req_t  *r;
    int          rc;

    if ((pe == NULL) || !amcm_g.on || (newcomm == NULL) || (request == NULL)) {
        return PMPI_Comm_idup(comm, newcomm, request);
    }
    if ((r = amcm_req_get()) == NULL) {
        return amcm_raise(comm, AMC_ERR_NO_MEMORY);
    }
    amcm_req_head(r, offsetof(amcm_req_t, pack), AMCM_IDUP, AMCM_NONBLOCKING, comm, pe);
    r->newcomm = newcomm;
    r->inner   = MPI_REQUEST_NULL;
    r->newac   = AMC_COMM_NULL;
    r->mpirc   = MPI_SUCCESS;
    rc         = amcm_issue_retry(r, 0);
    if (rc != AMC_SUCCESS) {
        amcm_req_free(r);
        return amcm_raise(comm, rc);
    }
    rc = PMPI_Comm_idup(comm, newcomm, &r->inner);
    if (rc != MPI_SUCCESS) {
        amc_request_free(&r->areq); /* runs on detached; its communicator is never used */
        amcm_req_free(r);
        return rc;
    }
    r->active = 1;
    return amcm_req_register(r, request);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Comm_split(comm, color, key, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt(pe, *newcomm, AMCM_HOW_SPLIT, (color == MPI_UNDEFINED) ? AMC_UNDEFINED : color,
                   key);
    }
    return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Comm_create(comm, group, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

/* Only the group's members call it: mapped when that is the whole parent
 * (every member of the parent then takes part in the amcoll split); the
 * group's size is the same on all callers, so they all decide alike. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Comm_create_group(comm, group, tag, newcomm), gsize = -1;

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        PMPI_Group_size(group, &gsize);
        if (gsize == pe->size) {
            amcm_adopt_general(pe, comm, *newcomm);
        }
    }
    return rc;
}

/* Topologies: collective over the parent, so mapped the same way (their
 * neighbourhood collectives are not intercepted and stay on MPI). */
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Cart_sub(comm, remain_dims, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                             destinations, destweights, info, reorder, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *newcomm)
{
    amcm_comm_t *pe = amcm_comm_find(comm);
    int          rc = PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights,
                                             info, reorder, newcomm);

    if ((rc == MPI_SUCCESS) && (pe != NULL)) {
        amcm_adopt_general(pe, comm, *newcomm);
    }
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if ((comm != NULL) && (*comm != MPI_COMM_WORLD) && (*comm != MPI_COMM_SELF)) {
        amcm_comm_drop(*comm);
    }
    return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    if ((comm != NULL) && (*comm != MPI_COMM_WORLD) && (*comm != MPI_COMM_SELF)) {
        amcm_comm_drop(*comm);
    }
    return PMPI_Comm_disconnect(comm);
}
