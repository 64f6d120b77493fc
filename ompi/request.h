/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: a non-blocking collective as an Open MPI request. The
 * request is an ompi_request_t, so MPI_Wait, MPI_Test and their array
 * forms treat it as any other; it is completed from Open MPI's progress
 * loop (opal_progress), where amcoll's requests live are tested.
 */
#ifndef AMCOMP_REQUEST_H
#define AMCOMP_REQUEST_H

#include "ompi_config.h"
#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/request/request.h"

#include "mpi/req.h"

/* Open MPI's non-blocking collective bindings take every collective
 * request for an ompi_coll_base_nbc_request_t (they keep the call's
 * derived datatypes and op alive in it until completion), so ours is one. */
typedef struct amcomp_request {
    ompi_coll_base_nbc_request_t super;
    amcm_req_t             r;      /* the prepared call (mpi/req.h) */
    struct amcomp_request *next;   /* in the list of live ones */
    int                    freed;  /* MPI_Request_free came before the completion */
    int                    persistent; /* MPI_X_init: started again and again */
} amcomp_request_t;

OBJ_CLASS_DECLARATION(amcomp_request_t);

/* A request for a call, or NULL (no memory). */
amcomp_request_t *amcomp_request_get(void);
/* One that never started (its call went to the previous module). */
void amcomp_request_put(amcomp_request_t *q);
/* Starts q's prepared call (prep: its preparation's answer) and hands it
 * out in *request: an MPI error code; on failure q is gone. */
int  amcomp_request_start(amcomp_request_t *q, int prep, struct ompi_communicator_t *comm,
                          ompi_request_t **request);
/* Makes q's prepared persistent call (MPIX_X_init) and hands it out,
 * inactive, in *request: an MPI error code; on failure q is gone. */
int  amcomp_request_persist(amcomp_request_t *q, int prep, struct ompi_communicator_t *comm,
                            ompi_request_t **request);
/* The amcoll call of r, retried while amcoll refuses it for back-pressure
 * and requests of ours can complete: amcoll code. */
int  amcomp_issue(amcm_req_t *r);

/* opal_progress callback: tests the live requests. */
int  amcomp_progress(void);
/* amcoll's idle hook: Open MPI's progress while a thread waits in amcoll,
 * without re-entering amcoll from amcomp_progress. */
void amcomp_idle(void *arg);
/* Before amcoll ends: every live request completed. */
void amcomp_request_drain(void);

#endif /* AMCOMP_REQUEST_H */
