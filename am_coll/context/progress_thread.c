/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/progress_thread.h"
#include "am_coll/context/context.h"
#include "am_coll/context/peer_watch.h"
#include "base/status.h"

#include <stdlib.h>

static int amc_progress_thread_idle(amc_progress_thread_t *pt)
{
    /* seq_cst pairs with the stores in begin/leave_wait (Dekker): either the
     * thread sees the new work or the other side sees parked and signals */
    return (__atomic_load_n(&pt->outstanding, __ATOMIC_SEQ_CST) == 0) ||
           (__atomic_load_n(&pt->waiting, __ATOMIC_SEQ_CST) > 0);
}

/* Parked, the thread holds no lock and touches nothing. Only the
 * application unparks it (go), so without AMC_THREAD_MULTIPLE the one
 * application thread knows that nobody else is inside while the thread is
 * parked, and takes no lock (lock_live down). A spurious wake-up does not
 * count: only go does. */
static void amc_progress_thread_park(amc_progress_thread_t *pt)
{
    amc_context_t *ctx = pt->ctx;

    pthread_mutex_lock(&pt->mutex);
    __atomic_store_n(&pt->parked, 1, __ATOMIC_SEQ_CST);
    if (!amc_progress_thread_idle(pt)) {
        /* work came between the look at the loop's top and parked */
        __atomic_store_n(&pt->parked, 0, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&pt->mutex);
        return;
    }
    if (!ctx->multiple) {
        __atomic_store_n(&ctx->lock_live, 0, __ATOMIC_SEQ_CST);
    }
    while (!__atomic_load_n(&pt->stop, __ATOMIC_ACQUIRE) && !pt->go) {
        pthread_cond_wait(&pt->cond, &pt->mutex);
    }
    pt->go = 0;
    __atomic_store_n(&pt->parked, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pt->mutex);
}

/* The waker raises lock_live itself, before the thread runs: from its next
 * call on, the application takes the locks. */
static void amc_progress_thread_wake(amc_progress_thread_t *pt)
{
    if (__atomic_load_n(&pt->parked, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&pt->mutex);
        if (__atomic_load_n(&pt->parked, __ATOMIC_SEQ_CST) && !pt->go) {
            __atomic_store_n(&pt->ctx->lock_live, 1, __ATOMIC_SEQ_CST);
            pt->go = 1;
            pthread_cond_signal(&pt->cond);
        }
        pthread_mutex_unlock(&pt->mutex);
    }
}

static void *amc_progress_thread_main(void *arg)
{
    amc_progress_thread_t *pt  = arg;
    amc_context_t         *ctx = pt->ctx;
    amc_transport_t       *tp  = ctx->tp;
    amc_wait_policy_t      policy;
    amc_waiter_t           waiter;
    int                    progressed;

    /* A helper's latency matters only while the application computes, and
     * then a spinning helper takes the application's core (or a peer rank's):
     * no spin, a short yield at most, then the wakeup fd. */
    policy.spin_count = 0;
    policy.yield_usec = ctx->cfg.progress_yield_usec;
    policy.sleep_msec = ctx->cfg.wait.sleep_msec;
    policy.idle_fn    = NULL; /* the layer above's progress is its own threads' */
    policy.idle_arg   = NULL;
    amc_waiter_init(&waiter, &policy);
    while (!__atomic_load_n(&pt->stop, __ATOMIC_ACQUIRE)) {
        if (amc_progress_thread_idle(pt)) {
            amc_progress_thread_park(pt);
            amc_waiter_init(&waiter, &policy);
            continue;
        }
        progressed = tp->ops->progress(tp);
        amc_context_flush(ctx);
        if (progressed) {
            __atomic_add_fetch(&pt->passes, 1, __ATOMIC_RELAXED);
        } else {
            amc_peer_watch_poll(ctx); /* idle: a look for dead peers now and then */
        }
        amc_waiter_pass(&waiter, progressed, amc_context_sleep, ctx);
    }
    return NULL;
}

int amc_progress_thread_start(amc_context_t *ctx, amc_progress_thread_t **pt_p)
{
    amc_progress_thread_t *pt;
    int                    rc;

    pt = calloc(1, sizeof(*pt));
    if (pt == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    pt->ctx = ctx;
    if (pthread_mutex_init(&pt->mutex, NULL) != 0) {
        goto err_free;
    }
    if (pthread_cond_init(&pt->cond, NULL) != 0) {
        goto err_mutex;
    }
    rc = pthread_create(&pt->thread, NULL, amc_progress_thread_main, pt);
    if (rc != 0) {
        amc_error(&ctx->log, "AMC_PROGRESS_THREAD: pthread_create failed (%d)", rc);
        goto err_cond;
    }
    *pt_p = pt;
    return AMC_SUCCESS;

err_cond:
    pthread_cond_destroy(&pt->cond);
err_mutex:
    pthread_mutex_destroy(&pt->mutex);
err_free:
    free(pt);
    return AMC_ERR_NO_MEMORY;
}

void amc_progress_thread_stop(amc_progress_thread_t *pt)
{
    amc_transport_t *tp = pt->ctx->tp;

    pthread_mutex_lock(&pt->mutex);
    __atomic_store_n(&pt->stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&pt->ctx->lock_live, pt->ctx->threaded, __ATOMIC_SEQ_CST);
    pthread_cond_signal(&pt->cond);
    pthread_mutex_unlock(&pt->mutex);
    tp->ops->wake(tp); /* out of a sleep on the wakeup fd */
    pthread_join(pt->thread, NULL);
    pthread_cond_destroy(&pt->cond);
    pthread_mutex_destroy(&pt->mutex);
    free(pt);
}

void amc_progress_thread_begin(amc_progress_thread_t *pt)
{
    __atomic_add_fetch(&pt->outstanding, 1, __ATOMIC_SEQ_CST);
}

void amc_progress_thread_kick(amc_progress_thread_t *pt)
{
    amc_progress_thread_wake(pt);
}

void amc_progress_thread_end(amc_progress_thread_t *pt)
{
    __atomic_sub_fetch(&pt->outstanding, 1, __ATOMIC_SEQ_CST);
}

void amc_progress_thread_enter_wait(amc_progress_thread_t *pt)
{
    __atomic_add_fetch(&pt->waiting, 1, __ATOMIC_SEQ_CST);
}

void amc_progress_thread_leave_wait(amc_progress_thread_t *pt)
{
    if ((__atomic_sub_fetch(&pt->waiting, 1, __ATOMIC_SEQ_CST) == 0) &&
        (__atomic_load_n(&pt->outstanding, __ATOMIC_SEQ_CST) > 0)) {
        amc_progress_thread_wake(pt);
    }
}
