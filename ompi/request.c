/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: non-blocking collectives as Open MPI requests, and the
 * progress that completes them.
 *
 * Two progress engines share the process. Open MPI's loop (opal_progress)
 * runs amcomp_progress, which tests amcoll's live requests; amcoll's waits
 * run Open MPI's loop through the idle hook, so a peer that needs this
 * rank's point-to-point progress is not held up while this rank waits in
 * amcoll. The hook marks its thread, so amcomp_progress called from inside
 * it leaves amcoll alone (amcoll is not re-entered from its own wait).
 */
#include "ompi/request.h"
#include "ompi/late.h"
#include "mpi/state.h"

#include "opal/runtime/opal_progress.h"

#include <sched.h>
#include <stdlib.h>

OBJ_CLASS_INSTANCE(amcomp_request_t, ompi_coll_base_nbc_request_t, NULL, NULL);

static amcomp_request_t *amcomp_live;  /* started, not yet completed */
static volatile long     amcomp_nlive;
static pthread_mutex_t   amcomp_live_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int      amcomp_in_idle;

amcomp_request_t *amcomp_request_get(void)
{
    amcomp_request_t *q = OBJ_NEW(amcomp_request_t);

    if (q != NULL) {
        q->next       = NULL;
        q->freed      = 0;
        q->persistent = 0;
    }
    return q;
}

void amcomp_request_put(amcomp_request_t *q)
{
    amcm_req_release(&q->r);
    OBJ_RELEASE(q);
}

static void amcomp_request_destroy(amcomp_request_t *q)
{
    amcm_req_release(&q->r);
    if (q->r.areq != AMC_REQUEST_NULL) {
        amc_request_free(&q->r.areq);
    }
    OMPI_REQUEST_FINI(&q->super.super);
    OBJ_RELEASE(q);
}

/* MPI_Wait's or MPI_Request_free's release of the handle. */
static int amcomp_request_free(ompi_request_t **rp)
{
    amcomp_request_t *q = (amcomp_request_t *)*rp;
    int               live;

    pthread_mutex_lock(&amcomp_live_lock);
    live = !REQUEST_COMPLETE(&q->super.super);
    if (live) {
        q->freed = 1; /* amcomp_progress finishes it, then destroys it */
    }
    pthread_mutex_unlock(&amcomp_live_lock);
    if (!live) {
        amcomp_request_destroy(q);
    }
    *rp = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int amcomp_request_cancel(ompi_request_t *req, int complete)
{
    (void)req;
    (void)complete;
    return OMPI_SUCCESS; /* a collective cannot be cancelled */
}

/* amcoll's call of r (start: amc_start of its persistent request),
 * retried while amcoll refuses it for back-pressure and requests of ours
 * can complete. */
static int amcomp_issue_or_start(amcm_req_t *r, int start)
{
    int rc;

    for (;;) {
        rc = start ? amc_start(&r->areq) : amcm_issue(r);
        /* amcoll refuses a start while too many collectives are outstanding
         * on the communicator: complete some of ours and try again */
        if ((rc != AMC_ERR_NO_MEMORY) || (amcomp_nlive == 0)) {
            return rc;
        }
        amcomp_progress();
        sched_yield();
    }
}

int amcomp_issue(amcm_req_t *r)
{
    return amcomp_issue_or_start(r, 0);
}

/* Open MPI's request fields for a start of q (active, pending). */
static void amcomp_request_arm(amcomp_request_t *q, struct ompi_communicator_t *comm)
{
    q->super.super.req_type              = OMPI_REQUEST_COLL;
    q->super.super.req_state             = OMPI_REQUEST_ACTIVE;
    q->super.super.req_complete          = REQUEST_PENDING;
    q->super.super.req_mpi_object.comm   = comm;
    q->super.super.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    q->super.super.req_status.MPI_TAG    = MPI_ANY_TAG;
    q->super.super.req_status.MPI_ERROR  = OMPI_SUCCESS;
    q->super.super.req_status._cancelled = 0;
    q->super.super.req_status._ucount    = 0;
}

static void amcomp_request_go_live(amcomp_request_t *q)
{
    q->r.active = 1;
    pthread_mutex_lock(&amcomp_live_lock);
    q->next     = amcomp_live;
    amcomp_live = q;
    amcomp_nlive++;
    pthread_mutex_unlock(&amcomp_live_lock);
}

int amcomp_request_start(amcomp_request_t *q, int prep, struct ompi_communicator_t *comm,
                         ompi_request_t **request)
{
    int rc = (prep >= AMCM_FAIL) ? prep - AMCM_FAIL : AMC_SUCCESS;

    if (rc == AMC_SUCCESS) {
        rc = amcm_req_run_jobs(&q->r, 0);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcomp_issue(&q->r);
    }
    if (rc != AMC_SUCCESS) {
        amcomp_request_put(q);
        return amcomp_code(comm, rc);
    }
    OMPI_REQUEST_INIT(&q->super.super, false);
    q->super.super.req_free   = amcomp_request_free;
    q->super.super.req_cancel = amcomp_request_cancel;
    amcomp_request_arm(q, comm);
    amcm_bump(&amcm_g.routed[q->r.coll][AMCM_NONBLOCKING]);
    amcomp_request_go_live(q);
    *request = &q->super.super;
    return OMPI_SUCCESS;
}

static void amcomp_request_finish(amcomp_request_t *q, int rc);

/* MPI_Start / MPI_Startall of persistent ones: each packs its input and
 * starts amcoll's request again; one that cannot start completes at once
 * with its error. */
static int amcomp_request_start_p(size_t count, ompi_request_t **reqs)
{
    size_t i;

    for (i = 0; i < count; i++) {
        amcomp_request_t *q  = (amcomp_request_t *)reqs[i];
        int               rc = amcm_req_run_jobs(&q->r, 0);

        if (rc == AMC_SUCCESS) {
            rc = amcomp_issue_or_start(&q->r, 1);
        }
        amcomp_request_arm(q, q->super.super.req_mpi_object.comm);
        if (rc != AMC_SUCCESS) {
            q->r.active = 0;
            amcomp_request_finish(q, rc);
            continue;
        }
        amcomp_request_go_live(q);
    }
    return OMPI_SUCCESS;
}

int amcomp_request_persist(amcomp_request_t *q, int prep, struct ompi_communicator_t *comm,
                           ompi_request_t **request)
{
    int rc = (prep >= AMCM_FAIL) ? prep - AMCM_FAIL : AMC_SUCCESS;

    if (rc == AMC_SUCCESS) {
        rc = amcomp_issue(&q->r); /* amc_X_init: made, not started */
    }
    if (rc != AMC_SUCCESS) {
        amcomp_request_put(q);
        return amcomp_code(comm, rc);
    }
    q->persistent = 1;
    OMPI_REQUEST_INIT(&q->super.super, true); /* inactive until MPI_Start */
    q->super.super.req_type            = OMPI_REQUEST_COLL;
    q->super.super.req_mpi_object.comm = comm;
    q->super.super.req_start           = amcomp_request_start_p;
    q->super.super.req_free            = amcomp_request_free;
    q->super.super.req_cancel          = amcomp_request_cancel;
    amcm_bump(&amcm_g.routed[q->r.coll][AMCM_PERSISTENT]);
    *request = &q->super.super;
    return OMPI_SUCCESS;
}

/* amcoll finished q (rc): its output into the user's buffers, then the
 * completion Open MPI's waits see. */
static void amcomp_request_finish(amcomp_request_t *q, int rc)
{
    if ((rc == AMC_SUCCESS) && q->r.nunpack) {
        rc = amcm_req_run_jobs(&q->r, 1);
    }
    if (!q->persistent) {
        amcm_req_release(&q->r); /* a persistent one keeps its temporaries */
    }
    q->super.super.req_status.MPI_ERROR = amcomp_code(q->super.super.req_mpi_object.comm, rc);
    pthread_mutex_lock(&amcomp_live_lock);
    if (q->freed) {
        pthread_mutex_unlock(&amcomp_live_lock);
        amcomp_request_destroy(q);
        return;
    }
    ompi_request_complete(&q->super.super, true);
    pthread_mutex_unlock(&amcomp_live_lock);
}

int amcomp_progress(void)
{
    amcomp_request_t **pp, *q, *done = NULL;
    int                flag, rc, n = 0;

    if ((amcomp_nlive == 0) || amcomp_in_idle) {
        return 0;
    }
    /* one thread at a time tests; the others have nothing to add */
    if (pthread_mutex_trylock(&amcomp_live_lock) != 0) {
        return 0;
    }
    pp = &amcomp_live;
    while ((q = *pp) != NULL) {
        flag = 0;
        rc   = amc_test(&q->r.areq, &flag);
        if ((rc != AMC_SUCCESS) || flag) {
            *pp       = q->next;
            q->next   = done;
            q->r.rc   = rc;
            done      = q;
            amcomp_nlive--;
        } else {
            pp = &q->next;
        }
    }
    pthread_mutex_unlock(&amcomp_live_lock);
    while ((q = done) != NULL) {
        done = q->next;
        amcomp_request_finish(q, q->r.rc);
        n++;
    }
    return n;
}

void amcomp_idle(void *arg)
{
    (void)arg;
    amcomp_in_idle = 1;
    opal_progress();
    amcomp_in_idle = 0;
}

void amcomp_request_drain(void)
{
    while (amcomp_nlive > 0) {
        if (amcomp_progress() == 0) {
            sched_yield();
        }
    }
}
