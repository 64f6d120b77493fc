/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: its routed requests as MPI handles (generalized requests),
 * the pool, the completion calls, and the progress of both engines.
 */
#ifndef AMCM_REQUESTS_H
#define AMCM_REQUESTS_H

#include "mpi/req.h"

#pragma GCC visibility push(hidden)

amcm_req_t *amcm_req_get_slow(void);
void        amcm_req_free_slow(amcm_req_t *r);
int         amcm_req_register_slow(amcm_req_t *r, MPI_Request *request);
amcm_req_t *amcm_req_lookup(MPI_Request req);
void        amcm_req_pool_drain(void);

/* A request for a call: mreq is kept from its last use or MPI_REQUEST_NULL,
 * the rest is for the caller to set up. Single-threaded, the common cases
 * of these four are inline (a routed non-blocking call and its wait are a
 * few hundred instructions in all): one from the pool, one without
 * temporaries back to it, one whose handle was made by an earlier use, the
 * last one registered. */
static inline amcm_req_t *amcm_req_get(void)
{
    if (!amcm_g.mt && (amcm_g.npool > 0)) {
        return amcm_g.pool[--amcm_g.npool];
    }
    return amcm_req_get_slow();
}

/* Releases r's temporaries and keeps r (with its handle) or frees it. */
static inline void amcm_req_free(amcm_req_t *r)
{
    if (!amcm_g.mt && ((r->npack | r->nunpack | r->nmem) == 0) && (r->ubind == NULL) &&
        (r->mode != AMCM_PERSISTENT) && amcm_g.inited &&
        (amcm_g.npool < AMCM_POOL_MAX)) {
        amcm_g.pool[amcm_g.npool++] = r;
        return;
    }
    amcm_req_free_slow(r);
}

/* r started: hands its handle out (it is live until completed or freed). */
static inline int amcm_req_register(amcm_req_t *r, MPI_Request *request)
{
    if (!amcm_g.mt && (r->mreq != MPI_REQUEST_NULL)) {
        r->live = 1;
        amcm_g.nactive++;
        amcm_g.last_req = r;
        *request        = r->mreq;
        return MPI_SUCCESS;
    }
    return amcm_req_register_slow(r, request);
}

/* The live routed request of a handle, or NULL (MPI's own). */
static inline amcm_req_t *amcm_req_find(MPI_Request req)
{
    amcm_req_t *r = amcm_g.last_req;

    if (amcm_g.nactive == 0) {
        return NULL;
    }
    if ((r != NULL) && (r->mreq == req) && r->live) {
        return r;
    }
    return amcm_req_lookup(req);
}

/* Routed requests are live on this rank: a wait for MPI's own requests must
 * run amcoll's progress too (requests.c, "MPI's own requests"). */
static inline int amcm_routed_live(void)
{
    return (amcm_g.nactive != 0) || (amcm_g.detached != NULL);
}
/* MPI_Wait / MPI_Waitall on MPI's own requests, amcoll progressing meanwhile */
int  amcm_native_wait(MPI_Request *request, MPI_Status *status);
int  amcm_native_waitall(int count, MPI_Request reqs[], MPI_Status sts[]);
/* a pass of such a wait that found nothing: amcoll's progress, then the core away */
void amcm_native_idle(void);

int  amcm_issue_retry(amcm_req_t *r, int start);
void amcm_progress_all(void);
void amcm_detached_poll(int wait);

#pragma GCC visibility pop

#endif /* AMCM_REQUESTS_H */
