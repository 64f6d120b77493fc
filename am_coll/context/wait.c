/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting on a request: the blocking wait's hot loop (spin, yield, sleep:
 * am_coll/context/progress.h), the non-blocking start's first passes, and
 * what a wait finds besides completion (a dead peer, a handler's error, the
 * timeout).
 */
#include "am_coll/context/wait.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context_progress.h"
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/progress_thread.h"
#include "base/clock.h"
#include "base/compiler.h"
#include "base/status.h"

/* Progress passes a non-blocking start makes before it hands its request to
 * the progress thread. */
#define AMC_REQUEST_START_PASSES 32u

/* Idle passes between two looks at handler errors and the timeout. */
#define AMC_REQUEST_IDLE_CHECK_EVERY 16u

void amc_request_end_start(struct amc_request *req, int start_status)
{
    amc_context_t         *ctx = req->comm->ctx;
    amc_progress_thread_t *pt  = ctx->pt;
    unsigned               pass;

    if (pt == NULL) {
        return;
    }
    if (start_status != AMC_SUCCESS) {
        amc_request_untrack(req);
        return;
    }
    /* Waking the thread costs a system call and a context switch (~2 us):
     * more than a small collective whose peers are there takes. So the start
     * first progresses a few passes itself, when ranks have cores to spin on. */
    for (pass = 0; (pass < AMC_REQUEST_START_PASSES) && (pass < ctx->cfg.wait.spin_count) &&
                   !amc_request_is_complete(req);
         pass++) {
        (void)amc_context_progress(ctx);
    }
    if (!amc_request_is_complete(req)) {
        amc_progress_thread_kick(pt);
    }
}

/* Completes the request with an error. A data collective's instance is
 * cancelled (its engine's inst_fail): its other ranks fail too, and nothing
 * writes into the caller's buffers once the request is complete, which may
 * be a little later (a pull in flight). A fast-path barrier has no buffers:
 * its slot runs on detached, so the sequence numbers stay in step. */
static void amc_request_fail(struct amc_request *req, int status, int timed_out)
{
    amc_coll_ctrl_t     *ctrl    = &req->comm->ctrl;
    const amc_engines_t *engines = &req->comm->ctx->engines;
    int                  flush   = 0;
    char                 why[512];

    why[0] = '\0';
    amc_spin_lock(&ctrl->lock);
    if (!req->complete) {
        if ((req->slot != NULL) && (req->slot->inst != NULL)) {
            flush = engines->inst_fail(req->slot->inst, req, status, timed_out, why,
                                       sizeof(why));
        } else {
            if (req->slot != NULL) {
                if (timed_out) {
                    engines->barrier_describe(req->comm, req->slot, why, sizeof(why));
                }
                req->slot->req = NULL;
            }
            amc_request_complete(req, status);
        }
    }
    amc_spin_unlock(&ctrl->lock);
    if (flush) {
        amc_context_flush(req->comm->ctx); /* the abort notices */
    }

    if (timed_out && (why[0] != '\0')) {
        amc_error(&req->comm->ctx->log, "timed out after %g s (AMC_TIMEOUT): %s",
                  req->comm->ctx->cfg.timeout_sec, why);
    }
}

/* amc_request_poll without the look for dead peers (a clock read): the
 * first check of a blocking wait, which every collective pays. */
static int amc_request_check(struct amc_request *req)
{
    double timeout = req->comm->ctx->cfg.timeout_sec;
    double now;
    int    status;

    if (amc_request_is_complete(req)) {
        return req->status;
    }

    if (amc_peer_watch_news(req->comm->ctx)) {
        amc_peer_watch_apply(req->comm->ctx);
    }
    if (__atomic_load_n(&req->comm->broken, __ATOMIC_ACQUIRE)) {
        /* every request of a broken communicator, not only the first
         * (a pending error is taken once) */
        amc_request_fail(req, amc_comm_broken_status(req->comm), 0);
        return amc_request_is_complete(req) ? req->status : AMC_INPROGRESS;
    }

    status = amc_comm_take_error(req->comm);
    if (status != AMC_SUCCESS) {
        amc_request_fail(req, status, 0);
    } else if (timeout > 0.0) {
        now = amc_clock_sec();
        if (req->deadline == 0.0) {
            req->deadline = now + timeout;
        } else if (now > req->deadline) {
            amc_request_fail(req, AMC_ERR_TIMEOUT, 1);
        }
    }
    /* a failed request whose pull is in flight completes a little later */
    return amc_request_is_complete(req) ? req->status : AMC_INPROGRESS;
}

int amc_request_poll(struct amc_request *req)
{
    if (amc_request_is_complete(req)) {
        return req->status;
    }
    amc_peer_watch_poll(req->comm->ctx);
    return amc_request_check(req);
}

static int amc_request_wait_loop(struct amc_request *req);

/* amc_request_wait_one of a request not complete yet. */
static __attribute__((noinline)) int amc_request_wait_long(struct amc_request *req)
{
    amc_progress_thread_t *pt = req->comm->ctx->pt;
    int                    status;

    if ((pt == NULL) || !amc_progress_thread_busy(pt)) {
        /* a parked thread stays parked while this thread waits: only a
         * non-blocking start unparks it (two locked instructions saved per
         * blocking collective) */
        return amc_request_wait_loop(req);
    }
    /* the caller progresses: the thread parks instead of contending */
    amc_progress_thread_enter_wait(pt);
    status = amc_request_wait_loop(req);
    amc_progress_thread_leave_wait(pt);
    return status;
}

/* A blocking call that ended within it (am_coll/barrier/rounds_now.c)
 * finds its request complete: the look, inlined into the call. */
AMC_INLINE_ACROSS int amc_request_wait_one(struct amc_request *req)
{
    return amc_request_is_complete(req) ? req->status : amc_request_wait_long(req);
}

static int amc_request_wait_loop(struct amc_request *req)
{
    amc_context_t   *ctx = req->comm->ctx;
    amc_transport_t *tp  = ctx->tp;
    int            (*progress)(amc_transport_t *) = tp->ops->progress;
    amc_waiter_t     waiter;
    unsigned         idle_checks = 0;
    int              status;

    status = amc_request_check(req);
    if (status != AMC_INPROGRESS) {
        return status;
    }

    /* The hot loop: with many ranks per core a barrier takes ~170 passes per
     * rank, so a pass is one progress call and one load. Errors and the
     * timeout are looked at when something happened or the loop goes idle. */
    amc_waiter_init(&waiter, &ctx->cfg.wait);
    for (;;) {
        if (progress(tp)) {
            if (amc_request_is_complete(req)) {
                return req->status;
            }
            waiter.idle_passes = 0;
            if (__atomic_load_n(&req->comm->ctrl.pending_err, __ATOMIC_RELAXED) ||
                __atomic_load_n(&ctx->pending_err, __ATOMIC_RELAXED) ||
                amc_peer_watch_news(ctx)) {
                status = amc_request_check(req);
                if (status != AMC_INPROGRESS) {
                    return status;
                }
            }
            continue;
        }
        if (amc_request_is_complete(req)) {
            return req->status;
        }
        if (waiter.idle_passes < waiter.policy->spin_count) {
            waiter.idle_passes++;
            continue;
        }
        /* the timeout has second granularity: look now and then; a death
         * that woke the sleep is looked at on the next pass */
        if (((++idle_checks % AMC_REQUEST_IDLE_CHECK_EVERY) == 0) || amc_peer_watch_news(ctx)) {
            if ((__atomic_load_n(&ctx->zombies, __ATOMIC_RELAXED) != NULL) ||
                amc_defer_pending(&ctx->defer)) {
                amc_context_progress(ctx);
            }
            status = amc_request_poll(req);
            if (status != AMC_INPROGRESS) {
                return status;
            }
        }
        amc_waiter_pass(&waiter, 0, amc_context_sleep, ctx);
    }
}
