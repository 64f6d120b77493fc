/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: requests. A routed non-blocking or persistent collective is
 * handed back as a generalized request (MPI_Grequest_start), a real handle
 * of the MPI library, looked up here in a table; every completion call
 * (MPI_Wait*, MPI_Test*, MPI_Request_get_status, MPI_Request_free,
 * MPI_Start*) finds its routed requests there and drives them with amcoll,
 * and hands the others to the MPI library. Arrays may mix both: they are
 * progressed together, so neither kind waits on the other.
 */
#include "mpi/requests.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static amcm_map_t amcm_reqs;

/* ------------------------------------------------------------------ generalized requests */

static inline void amcm_status_empty(MPI_Status *st, int err)
{
    if ((st == MPI_STATUS_IGNORE) || (st == NULL)) {
        return;
    }
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG    = MPI_ANY_TAG;
    st->MPI_ERROR  = err;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
}

static int amcm_greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    amcm_status_empty(st, MPI_SUCCESS);
    return MPI_SUCCESS;
}

static int amcm_greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int amcm_greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* a collective cannot be cancelled */
}

static void amcm_greq_release(MPI_Request *mreq)
{
    PMPI_Grequest_complete(*mreq);
    PMPI_Request_free(mreq);
}

/* ------------------------------------------------------------------ table */

/* A request's generalized request enters the table when it is made and
 * leaves it when it is released (amcm_req_free, amcm_req_pool_drain): a
 * pooled request stays in, not live, so a routed call and its completion
 * cost no insertion and deletion. nactive counts the live ones. */
int amcm_req_register_slow(amcm_req_t *r, MPI_Request *request)
{
    int rc = MPI_SUCCESS;

    if (r->mreq == MPI_REQUEST_NULL) {
        rc = PMPI_Grequest_start(amcm_greq_query, amcm_greq_free, amcm_greq_cancel, r, &r->mreq);
        if (rc == MPI_SUCCESS) {
            amcm_lock();
            if (amcm_map_put(&amcm_reqs, AMCM_KEY(r->mreq), r) != 0) {
                rc = MPI_ERR_NO_MEM;
            }
            amcm_unlock();
            if (rc != MPI_SUCCESS) {
                amcm_greq_release(&r->mreq); /* leaves MPI_REQUEST_NULL */
            }
        }
    }
    if (rc != MPI_SUCCESS) {
        /* the collective runs: finish it here rather than lose it */
        MPI_Comm comm = r->comm;
        if (r->areq != AMC_REQUEST_NULL) {
            if (r->active) {
                amc_wait(&r->areq);
            }
            amc_request_free(&r->areq);
        }
        amcm_req_free(r);
        *request = MPI_REQUEST_NULL;
        PMPI_Comm_call_errhandler(comm, rc);
        return rc;
    }
    amcm_lock();
    r->live = 1;
    amcm_g.nactive++;
    amcm_unlock();
    if (!amcm_g.mt) {
        amcm_g.last_req = r;
    }
    *request = r->mreq;
    return MPI_SUCCESS;
}

amcm_req_t *amcm_req_lookup(MPI_Request req)
{
    amcm_req_t *r;

    if (req == MPI_REQUEST_NULL) {
        return NULL;
    }
    amcm_lock();
    r = amcm_map_get(&amcm_reqs, AMCM_KEY(req));
    amcm_unlock();
    /* not live: a pooled request's handle, used after its completion */
    return ((r != NULL) && r->live) ? r : NULL;
}

static inline void amcm_req_unregister(amcm_req_t *r)
{
    amcm_lock();
    r->live = 0;
    amcm_g.nactive--;
    amcm_unlock();
}

/* Out of the table, and MPI's generalized request released. */
static void amcm_req_destroy(amcm_req_t *r)
{
    if (r->mreq != MPI_REQUEST_NULL) {
        amcm_lock();
        amcm_map_del(&amcm_reqs, AMCM_KEY(r->mreq));
        amcm_unlock();
        amcm_greq_release(&r->mreq);
    }
    if (amcm_g.last_req == r) {
        amcm_g.last_req = NULL;
    }
    free(r);
}

/* Requests done with, each with its generalized request: a routed
 * non-blocking call takes one instead of a malloc and an
 * MPI_Grequest_start, and its completion gives it back instead of an
 * MPI_Grequest_complete, MPI_Request_free and free (together 600-700
 * instructions of a sub-microsecond collective). A pooled request stays in
 * the table, not live: its handle, which MPI cannot give to anything else
 * while the generalized request lives, reaches us again only from a
 * program that uses a handle after completing it (erroneous), and is
 * handed to MPI as not ours. Its own lock, as a release that finds the
 * pool full takes the tables' lock. */
static pthread_mutex_t amcm_pool_lock = PTHREAD_MUTEX_INITIALIZER;

amcm_req_t *amcm_req_get_slow(void)
{
    amcm_req_t *r = NULL;

    if (amcm_g.mt) {
        pthread_mutex_lock(&amcm_pool_lock);
    }
    if (amcm_g.npool > 0) {
        r = amcm_g.pool[--amcm_g.npool];
    }
    if (amcm_g.mt) {
        pthread_mutex_unlock(&amcm_pool_lock);
    }
    if ((r == NULL) && ((r = malloc(sizeof(*r))) != NULL)) {
        r->mreq = MPI_REQUEST_NULL;
        r->live = 0;
    }
    return r;
}

void amcm_req_free_slow(amcm_req_t *r)
{
    int kept = 0;

    amcm_req_release(r);
    if (amcm_g.mt) {
        pthread_mutex_lock(&amcm_pool_lock);
    }
    if (amcm_g.inited && (amcm_g.npool < AMCM_POOL_MAX)) {
        amcm_g.pool[amcm_g.npool++] = r;
        kept                        = 1;
    }
    if (amcm_g.mt) {
        pthread_mutex_unlock(&amcm_pool_lock);
    }
    if (!kept) {
        amcm_req_destroy(r);
    }
}

/* Before MPI_Finalize: MPI must see every generalized request completed. */
void amcm_req_pool_drain(void)
{
    int n = amcm_g.npool;

    amcm_g.npool = 0;
    while (n > 0) {
        amcm_req_destroy(amcm_g.pool[--n]);
    }
}

/* ------------------------------------------------------------------ progress */

int amcm_issue_retry(amcm_req_t *r, int start)
{
    int rc;

    for (;;) {
        rc = start ? amc_start(&r->areq) : amcm_issue(r);
        /* amcoll refuses a start while too many collectives are outstanding
         * on the communicator: complete some of ours and try again */
        if ((rc != AMC_ERR_NO_MEMORY) || ((amcm_g.nactive == 0) && (amcm_g.detached == NULL))) {
            return rc;
        }
        amcm_progress_all();
        sched_yield();
    }
}

/* amcoll finished r (rc): its output into the user's buffers. */
static inline void amcm_complete(amcm_req_t *r, int rc)
{
    r->done = 1;
    if ((rc == AMC_SUCCESS) && r->nunpack) {
        rc = amcm_req_run_jobs(r, 1);
    }
    r->rc = rc;
}

/* An MPI_Comm_idup (comm_map.c): 1 once MPI's and amcoll's halves are both
 * done and the new communicator is mapped. */
static int amcm_idup_poll(amcm_req_t *r)
{
    int flag = 0, rc;

    if (r->areq != AMC_REQUEST_NULL) {
        rc = amc_test(&r->areq, &flag); /* on completion it writes r->newac */
        if ((rc != AMC_SUCCESS) && !flag) {
            amc_request_free(&r->areq); /* cannot be tested: left unmapped */
            r->newac = AMC_COMM_NULL;
        }
    }
    if (r->inner != MPI_REQUEST_NULL) {
        flag     = 0;
        r->mpirc = PMPI_Test(&r->inner, &flag, MPI_STATUS_IGNORE);
        if (r->mpirc != MPI_SUCCESS) {
            r->inner = MPI_REQUEST_NULL;
        }
    }
    if ((r->areq != AMC_REQUEST_NULL) || (r->inner != MPI_REQUEST_NULL)) {
        return 0;
    }
    r->done = 1;
    r->rc   = AMC_SUCCESS;
    if (r->newac != AMC_COMM_NULL) {
        if ((r->mpirc != MPI_SUCCESS) || (*r->newcomm == MPI_COMM_NULL)) {
            amc_comm_free(&r->newac);
        } else if (amcm_comm_add(*r->newcomm, r->newac) != MPI_SUCCESS) {
            amc_comm_free(&r->newac);
            r->rc = AMC_ERR_NO_MEMORY; /* mapped on the others: never silent */
        }
    }
    return 1;
}

/* 1 when r needs nothing more (done, or an inactive persistent request) */
static int amcm_poll(amcm_req_t *r)
{
    int flag = 0, rc;

    if (!r->active || r->done) {
        return 1;
    }
    if (r->coll == AMCM_IDUP) {
        return amcm_idup_poll(r);
    }
    rc = amc_test(&r->areq, &flag);
    if ((rc != AMC_SUCCESS) || flag) {
        amcm_complete(r, rc);
        return 1;
    }
    return 0;
}

static inline void amcm_wait1(amcm_req_t *r)
{
    if (r->coll == AMCM_IDUP) {
        while (!amcm_poll(r)) {
            amcm_test_idle();
        }
        return;
    }
    if (r->active && !r->done) {
        amcm_complete(r, amc_wait(&r->areq));
    }
}

void amcm_progress_all(void)
{
    amcm_req_t *list[64];
    size_t      i, n = 0;

    amcm_lock();
    for (i = 0; (i < amcm_reqs.cap) && (n < 64); i++) {
        amcm_req_t *r = amcm_reqs.vals[i];
        if ((r != NULL) && r->live && r->active && !r->done) {
            list[n++] = r;
        }
    }
    amcm_unlock();
    for (i = 0; i < n; i++) {
        amcm_poll(list[i]);
    }
    amcm_detached_poll(0);
}

/* Requests freed by the user while running: finished in the background,
 * released once the list's lock is dropped (a release may take it). */
void amcm_detached_poll(int wait)
{
    amcm_req_t **pp, *r, *gone = NULL;

    amcm_lock();
    pp = &amcm_g.detached;
    while ((r = *pp) != NULL) {
        if (wait) {
            amcm_wait1(r);
        } else {
            amcm_poll(r);
        }
        if (r->done || !r->active) {
            *pp              = r->next_detached;
            r->next_detached = gone;
            gone             = r;
        } else {
            pp = &r->next_detached;
        }
    }
    amcm_unlock();
    while ((r = gone) != NULL) {
        gone = r->next_detached;
        if (r->areq != AMC_REQUEST_NULL) {
            amc_request_free(&r->areq);
        }
        amcm_req_free(r);
    }
}

/* The completion of a done (or inactive) r for the user: its status, its
 * handle (freed, or back to inactive), its error through the handler. */
static inline int amcm_finish(amcm_req_t *r, MPI_Request *slot, MPI_Status *st)
{
    MPI_Comm comm = r->comm;
    int      rc   = r->active ? r->rc : AMC_SUCCESS;
    int      code = amcm_mpi_code(rc);
    int      mrc  = (r->coll == AMCM_IDUP) ? r->mpirc : MPI_SUCCESS;

    amcm_status_empty(st, (code != MPI_SUCCESS) ? code : mrc);
    if (r->mode == AMCM_PERSISTENT) {
        r->active = 0;
        r->done   = 0;
        r->rc     = 0;
    } else {
        amcm_req_unregister(r);
        amcm_req_free(r); /* with its generalized request, for the next call */
        *slot = MPI_REQUEST_NULL;
    }
    if (rc != AMC_SUCCESS) {
        return amcm_raise(comm, rc);
    }
    return mrc; /* MPI's own error: its handler has been called */
}

/* ------------------------------------------------------------------ MPI's own requests */

/* Two progress engines live in the process: MPI's and amcoll's. A rank
 * that waits in one must keep the other going, or a peer that waits for
 * this rank in the other never gets what it needs (a routed collective's
 * handlers here, or MPI's messages). amcoll's waits call MPI's progress
 * through the idle hook (init.c); here MPI's own requests, waited for while
 * routed requests are live on this rank, are tested in a loop that runs
 * amcoll's progress between the tests instead of blocking inside MPI. */
static inline void amcm_progress_if_live(void)
{
    if (amcm_routed_live()) {
        amcm_progress_all();
    }
}

void amcm_native_idle(void)
{
    amcm_progress_all();
    sched_yield();
}

int amcm_native_wait(MPI_Request *request, MPI_Status *status)
{
    int flag = 0, rc;

    if (!amcm_routed_live()) {
        return PMPI_Wait(request, status);
    }
    for (;;) {
        rc = PMPI_Test(request, &flag, status);
        if (flag || (rc != MPI_SUCCESS)) {
            return rc;
        }
        amcm_native_idle();
    }
}

int amcm_native_waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
    int flag = 0, rc;

    if (!amcm_routed_live()) {
        return PMPI_Waitall(count, reqs, sts);
    }
    for (;;) {
        rc = PMPI_Testall(count, reqs, &flag, sts);
        if (flag || (rc != MPI_SUCCESS)) {
            return rc;
        }
        amcm_native_idle();
    }
}

/* ------------------------------------------------------------------ single requests */

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    amcm_req_t *r = (request != NULL) ? amcm_req_find(*request) : NULL;

    if (r == NULL) {
        return amcm_native_wait(request, status);
    }
    amcm_wait1(r);
    return amcm_finish(r, request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    amcm_req_t *r = (request != NULL) ? amcm_req_find(*request) : NULL;

    if (r == NULL) {
        amcm_progress_if_live();
        return PMPI_Test(request, flag, status);
    }
    if (!amcm_poll(r)) {
        *flag = 0;
        amcm_test_idle();
        return MPI_SUCCESS;
    }
    *flag = 1;
    return amcm_finish(r, request, status);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    amcm_req_t *r = amcm_req_find(request);

    if (r == NULL) {
        return PMPI_Request_get_status(request, flag, status);
    }
    *flag = amcm_poll(r);
    if (*flag) {
        amcm_status_empty(status, r->active ? amcm_mpi_code(r->rc) : MPI_SUCCESS);
    }
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request)
{
    amcm_req_t *r = (request != NULL) ? amcm_req_find(*request) : NULL;

    if (r == NULL) {
        return PMPI_Request_free(request);
    }
    amcm_req_unregister(r); /* its generalized request stays with it, for reuse */
    *request = MPI_REQUEST_NULL;
    if (r->active && !r->done) {
        /* still running on buffers that must see its result: finish it later */
        amcm_lock();
        r->detached      = 1;
        r->next_detached = amcm_g.detached;
        amcm_g.detached  = r;
        amcm_unlock();
        return MPI_SUCCESS;
    }
    if (r->areq != AMC_REQUEST_NULL) {
        amc_request_free(&r->areq);
    }
    amcm_req_free(r);
    return MPI_SUCCESS;
}

static inline int amcm_start1(amcm_req_t *r)
{
    int rc;

    if (r->active) { /* started twice: erroneous in MPI */
        PMPI_Comm_call_errhandler(r->comm, MPI_ERR_REQUEST);
        return MPI_ERR_REQUEST;
    }
    rc = (r->npack > 0) ? amcm_req_run_jobs(r, 0) : AMC_SUCCESS;
    if (rc == AMC_SUCCESS) {
        rc = amc_start(&r->areq);
        if (rc == AMC_ERR_NO_MEMORY) {
            rc = amcm_issue_retry(r, 1); /* back-pressure: nothing started */
        }
    }
    if (rc != AMC_SUCCESS) {
        return amcm_raise(r->comm, rc);
    }
    r->active = 1;
    r->done   = 0;
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request)
{
    amcm_req_t *r = (request != NULL) ? amcm_req_find(*request) : NULL;

    return (r == NULL) ? PMPI_Start(request) : amcm_start1(r);
}

int MPI_Startall(int count, MPI_Request requests[])
{
    int i, rc, ret = MPI_SUCCESS;

    if ((amcm_g.nactive == 0) || (count <= 0) || (requests == NULL)) {
        return PMPI_Startall(count, requests);
    }
    for (i = 0; i < count; i++) {
        amcm_req_t *r = amcm_req_find(requests[i]);
        rc = (r == NULL) ? PMPI_Start(&requests[i]) : amcm_start1(r);
        if (rc != MPI_SUCCESS && ret == MPI_SUCCESS) {
            ret = rc;
        }
    }
    return ret;
}

/* ------------------------------------------------------------------ arrays */

/* The routed requests of an array, and a copy of it with them replaced by
 * MPI_REQUEST_NULL for the MPI library. */
typedef struct {
    int          n, nours;
    amcm_req_t **ours;
    MPI_Request *mreqs;
    amcm_req_t  *ours_s[16];
    MPI_Request  mreqs_s[16];
} amcm_arr_t;

static int amcm_arr_init(amcm_arr_t *a, int n, MPI_Request reqs[])
{
    int i;

    a->n     = n;
    a->nours = 0;
    if ((amcm_g.nactive == 0) || (n <= 0) || (reqs == NULL)) {
        return 0;
    }
    if (n <= 16) {
        a->ours  = a->ours_s;
        a->mreqs = a->mreqs_s;
    } else {
        a->ours  = malloc((size_t)n * sizeof(*a->ours));
        a->mreqs = malloc((size_t)n * sizeof(*a->mreqs));
        if (!a->ours || !a->mreqs) {
            free(a->ours);
            free(a->mreqs);
            return 0; /* then nothing is ours to the caller: it lets MPI see them */
        }
    }
    for (i = 0; i < n; i++) {
        a->ours[i]  = amcm_req_find(reqs[i]);
        a->mreqs[i] = a->ours[i] ? MPI_REQUEST_NULL : reqs[i];
        a->nours += (a->ours[i] != NULL);
    }
    if (a->nours == 0 && n > 16) {
        free(a->ours);
        free(a->mreqs);
    }
    return a->nours;
}

static void amcm_arr_done(amcm_arr_t *a, MPI_Request reqs[])
{
    int i;

    for (i = 0; i < a->n; i++) {
        if (a->ours[i] == NULL) {
            reqs[i] = a->mreqs[i];
        }
    }
    if (a->n > 16) {
        free(a->ours);
        free(a->mreqs);
    }
}

static MPI_Status *amcm_st(MPI_Status sts[], int i)
{
    return (sts == MPI_STATUSES_IGNORE) ? MPI_STATUS_IGNORE : &sts[i];
}

/* Does the MPI part of the array have an active request left? */
static int amcm_mpi_active(amcm_arr_t *a)
{
    int i;

    for (i = 0; i < a->n; i++) {
        if (a->mreqs[i] != MPI_REQUEST_NULL) {
            return 1; /* inactive persistent ones count as done for MPI's calls */
        }
    }
    return 0;
}

/* Completes (finishes) our done requests of the array for the caller,
 * recording the first error; statuses of the array forms carry errors. */
static int amcm_arr_finish_ours(amcm_arr_t *a, MPI_Request reqs[], MPI_Status sts[], int *err)
{
    int i, rc;

    for (i = 0; i < a->n; i++) {
        if (a->ours[i] != NULL) {
            rc = amcm_finish(a->ours[i], &reqs[i], amcm_st(sts, i));
            if ((rc != MPI_SUCCESS) && (*err == MPI_SUCCESS)) {
                *err = rc;
            }
        }
    }
    return 0;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
    amcm_arr_t a;
    int        i, flag, all, mrc = MPI_SUCCESS, err = MPI_SUCCESS, mpi_done = 0;

    if (!amcm_arr_init(&a, count, reqs)) {
        return amcm_native_waitall(count, reqs, sts);
    }
    for (;;) {
        all = 1;
        for (i = 0; i < count; i++) {
            if (a.ours[i] && !amcm_poll(a.ours[i])) {
                all = 0;
            }
        }
        if (!mpi_done) {
            if (all || !amcm_mpi_active(&a)) {
                /* only one kind left: wait for it the efficient way */
                if (all) {
                    mrc = amcm_native_waitall(count, a.mreqs, sts);
                    mpi_done = 1;
                }
            } else {
                flag = 0;
                mrc  = PMPI_Testall(count, a.mreqs, &flag, sts);
                mpi_done = flag || (mrc != MPI_SUCCESS);
            }
            if (!amcm_mpi_active(&a)) {
                mpi_done = 1;
            }
        }
        if (all && mpi_done) {
            break;
        }
        if (mpi_done) {
            for (i = 0; i < count; i++) {
                if (a.ours[i]) {
                    amcm_wait1(a.ours[i]);
                }
            }
            continue;
        }
        sched_yield();
    }
    amcm_arr_finish_ours(&a, reqs, sts, &err);
    amcm_arr_done(&a, reqs);
    if (err != MPI_SUCCESS) {
        return (sts == MPI_STATUSES_IGNORE) ? err : MPI_ERR_IN_STATUS;
    }
    return mrc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    amcm_arr_t a;
    int        i, all = 1, mrc = MPI_SUCCESS, err = MPI_SUCCESS;

    if (!amcm_arr_init(&a, count, reqs)) {
        amcm_progress_if_live();
        return PMPI_Testall(count, reqs, flag, sts);
    }
    for (i = 0; i < count; i++) {
        if (a.ours[i] && !amcm_poll(a.ours[i])) {
            all = 0;
        }
    }
    *flag = 0;
    if (!all) {
        amcm_test_idle();
    }
    if (all) {
        mrc = PMPI_Testall(count, a.mreqs, flag, sts);
        if (*flag) {
            amcm_arr_finish_ours(&a, reqs, sts, &err);
        }
    } else {
        /* MPI must progress too (the routed ones may depend on peers that
         * wait for these), but nothing may complete: no request changes */
        for (i = 0; i < count; i++) {
            if (a.mreqs[i] != MPI_REQUEST_NULL) {
                int f;
                PMPI_Request_get_status(a.mreqs[i], &f, MPI_STATUS_IGNORE);
            }
        }
    }
    amcm_arr_done(&a, reqs);
    if (err != MPI_SUCCESS) {
        return (sts == MPI_STATUSES_IGNORE) ? err : MPI_ERR_IN_STATUS;
    }
    return mrc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    amcm_arr_t a;
    int        i, ours_active = 0, rc, mi = MPI_UNDEFINED, mf = 0;

    if (!amcm_arr_init(&a, count, reqs)) {
        amcm_progress_if_live();
        return PMPI_Testany(count, reqs, index, flag, st);
    }
    for (i = 0; i < count; i++) {
        amcm_req_t *r = a.ours[i];
        if ((r != NULL) && r->active) {
            if (amcm_poll(r)) {
                *index = i;
                *flag  = 1;
                a.ours[i] = NULL;      /* amcm_finish below sets reqs[i] */
                a.mreqs[i] = reqs[i];
                rc = amcm_finish(r, &a.mreqs[i], st);
                amcm_arr_done(&a, reqs);
                return rc;
            }
            ours_active = 1;
        }
    }
    rc = PMPI_Testany(count, a.mreqs, &mi, &mf, st);
    amcm_arr_done(&a, reqs);
    if (mf && (mi != MPI_UNDEFINED)) {
        *index = mi;
        *flag  = 1;
        return rc;
    }
    *index = MPI_UNDEFINED;
    *flag  = ours_active ? 0 : mf;
    if (!*flag) {
        amcm_test_idle();
    }
    if (*flag) {
        amcm_status_empty(st, MPI_SUCCESS);
    }
    return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *st)
{
    int flag = 0, rc;

    if (!amcm_routed_live() || (count <= 0)) {
        return PMPI_Waitany(count, reqs, index, st);
    }
    for (;;) {
        rc = MPI_Testany(count, reqs, index, &flag, st);
        if (flag || (rc != MPI_SUCCESS)) {
            return rc;
        }
        sched_yield();
    }
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status sts[])
{
    amcm_arr_t  a;
    int         i, k = 0, any_active = 0, mout = 0, rc = MPI_SUCCESS, err = MPI_SUCCESS;
    int        *midx;
    MPI_Status *msts = MPI_STATUSES_IGNORE;

    if (!amcm_arr_init(&a, incount, reqs)) {
        amcm_progress_if_live();
        return PMPI_Testsome(incount, reqs, outcount, indices, sts);
    }
    /* ours first */
    for (i = 0; i < incount; i++) {
        amcm_req_t *r = a.ours[i];
        if ((r != NULL) && r->active) {
            any_active = 1;
            if (amcm_poll(r)) {
                int e = amcm_finish(r, &reqs[i], amcm_st(sts, k));
                if ((e != MPI_SUCCESS) && (err == MPI_SUCCESS)) {
                    err = e;
                }
                indices[k++] = i; /* a.ours[i] stays set: reqs[i] is not overwritten */
            }
        }
    }
    midx = malloc((size_t)incount * sizeof(int));
    if ((sts != MPI_STATUSES_IGNORE) && (midx != NULL)) {
        msts = malloc((size_t)incount * sizeof(MPI_Status));
    }
    if (midx != NULL && (sts == MPI_STATUSES_IGNORE || msts != NULL)) {
        rc = PMPI_Testsome(incount, a.mreqs, &mout, midx, msts);
        if (mout == MPI_UNDEFINED) {
            mout = 0;
        } else {
            any_active = 1;
        }
        for (i = 0; i < mout; i++) {
            if (sts != MPI_STATUSES_IGNORE) {
                sts[k] = msts[i];
            }
            indices[k++] = midx[i];
        }
    }
    free(midx);
    if (msts != MPI_STATUSES_IGNORE) {
        free(msts);
    }
    amcm_arr_done(&a, reqs);
    *outcount = any_active ? k : MPI_UNDEFINED;
    if (err != MPI_SUCCESS) {
        return (sts == MPI_STATUSES_IGNORE) ? err : MPI_ERR_IN_STATUS;
    }
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status sts[])
{
    int rc;

    if (!amcm_routed_live() || (incount <= 0)) {
        return PMPI_Waitsome(incount, reqs, outcount, indices, sts);
    }
    for (;;) {
        rc = MPI_Testsome(incount, reqs, outcount, indices, sts);
        if ((rc != MPI_SUCCESS) || (*outcount != 0)) {
            return rc;
        }
        sched_yield();
    }
}
