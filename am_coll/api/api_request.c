/* SPDX-License-Identifier: BSD-3-Clause */
/* Public request calls: test, wait and their array forms. */
#include "am_coll/api/api.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/progress_thread.h"
#include "am_coll/context/request.h"
#include "base/status.h"
#include "am_coll/api/comm_create.h"
#include "am_coll/context/context_progress.h"
#include "am_coll/context/wait.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int amc_api_check_request(amc_request_t req)
{
    return ((req == NULL) || (req->magic == AMC_REQUEST_MAGIC)) ? AMC_SUCCESS : AMC_ERR_ARG;
}

/* Releases a finished request and clears the caller's handle; a persistent
 * one only turns inactive and stays. */
static int amc_api_request_release(amc_request_t *req_p)
{
    amc_request_t req    = *req_p;
    int           status = req->status;

    if (req->persistent) {
        req->active = 0;
        req->status = AMC_SUCCESS; /* an inactive request tests as done and fine */
        return status;
    }
    if (req->create != NULL) {
        *req_p = AMC_REQUEST_NULL;
        return amc_comm_idup_end(req, status);
    }
    if (req->heap) {
        amc_request_release(req);
    } else {
        req->magic = 0;
    }
    *req_p = AMC_REQUEST_NULL;
    return status;
}

static int amc_api_request_cmp(const void *pa, const void *pb)
{
    uintptr_t a = (uintptr_t)*(const amc_request_t *)pa;
    uintptr_t b = (uintptr_t)*(const amc_request_t *)pb;

    return (a > b) - (a < b);
}

/* Arrays up to this size are compared pairwise; larger ones are sorted. */
#define AMC_API_DUP_PAIRWISE_MAX 32

/* A request other than REQUEST_NULL that appears twice, or NULL. Completing
 * the array would release it twice (a double free), and a persistent one
 * would be handed back inactive in one slot while reported done in the other. */
static amc_request_t amc_api_requests_repeat(int n, const amc_request_t reqs[])
{
    amc_request_t *sorted, repeat = NULL;
    int            i, j;

    if (n > AMC_API_DUP_PAIRWISE_MAX) {
        sorted = malloc((size_t)n * sizeof(*sorted));
        if (sorted != NULL) {
            memcpy(sorted, reqs, (size_t)n * sizeof(*sorted));
            qsort(sorted, (size_t)n, sizeof(*sorted), amc_api_request_cmp);
            for (i = 1; (i < n) && (repeat == NULL); i++) {
                if (sorted[i] == sorted[i - 1]) {
                    repeat = sorted[i];
                }
            }
            free(sorted);
            return repeat;
        }
        /* no memory for the copy: the slow way still answers */
    }
    for (i = 0; (i < n) && (repeat == NULL); i++) {
        for (j = i + 1; (j < n) && (reqs[i] != NULL); j++) {
            if (reqs[i] == reqs[j]) {
                repeat = reqs[i];
                break;
            }
        }
    }
    return repeat;
}

static int amc_api_check_requests(const char *what, int n, amc_request_t reqs[])
{
    amc_request_t repeat;
    int           i;

    if (amc_api_check_live() != AMC_SUCCESS) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    if ((n < 0) || ((n > 0) && (reqs == NULL))) {
        return AMC_ERR_ARG;
    }
    for (i = 0; i < n; i++) {
        if (amc_api_check_request(reqs[i]) != AMC_SUCCESS) {
            return AMC_ERR_ARG;
        }
    }
    /* before anything is progressed, completed or released */
    if ((n > 1) && ((repeat = amc_api_requests_repeat(n, reqs)) != NULL)) {
        amc_error(&repeat->comm->ctx->log, "%s: request %p appears more than once in the "
                  "array; nothing was completed", what, (void *)repeat);
        return AMC_ERR_ARG;
    }
    return AMC_SUCCESS;
}

/* One progress pass over the contexts of the requests still running. */
static int amc_api_progress_requests(int n, amc_request_t reqs[])
{
    amc_context_t *last = NULL;
    int            i, progressed = 0;

    for (i = 0; i < n; i++) {
        if ((reqs[i] == NULL) || amc_request_is_complete(reqs[i]) ||
            (reqs[i]->comm->ctx == last)) {
            continue;
        }
        last        = reqs[i]->comm->ctx;
        progressed |= amc_context_progress(last);
    }
    return progressed;
}

/* Polls every request; returns how many are still running. */
static int amc_api_poll_requests(int n, amc_request_t reqs[])
{
    int i, running = 0;

    for (i = 0; i < n; i++) {
        running += (reqs[i] != NULL) && (amc_request_poll(reqs[i]) == AMC_INPROGRESS);
    }
    return running;
}

/* Releases every request; returns the first error among them. */
static int amc_api_release_requests(int n, amc_request_t reqs[])
{
    int i, status, first_error = AMC_SUCCESS;

    for (i = 0; i < n; i++) {
        if (reqs[i] == NULL) {
            continue;
        }
        status = amc_api_request_release(&reqs[i]);
        if ((status != AMC_SUCCESS) && (first_error == AMC_SUCCESS)) {
            first_error = status;
        }
    }
    return first_error;
}

int amc_test(amc_request_t *req_p, int *flag)
{
    if (flag == NULL) {
        return (amc_api_check_live() != AMC_SUCCESS) ? AMC_ERR_NOT_INITIALIZED : AMC_ERR_ARG;
    }
    *flag = 0;
    if (req_p == NULL) {
        return (amc_api_check_live() != AMC_SUCCESS) ? AMC_ERR_NOT_INITIALIZED : AMC_ERR_ARG;
    }
    return amc_testall(1, req_p, flag);
}

int amc_wait(amc_request_t *req_p)
{
    if (req_p == NULL) {
        return (amc_api_check_live() != AMC_SUCCESS) ? AMC_ERR_NOT_INITIALIZED : AMC_ERR_ARG;
    }
    return amc_waitall(1, req_p);
}

int amc_testall(int n, amc_request_t reqs[], int *flag)
{
    int status = amc_api_check_requests("amc_testall", n, reqs);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (flag == NULL) {
        return AMC_ERR_ARG;
    }
    amc_api_progress_requests(n, reqs);
    if (amc_api_poll_requests(n, reqs) > 0) {
        *flag = 0;
        return AMC_SUCCESS;
    }
    *flag = 1;
    return amc_api_release_requests(n, reqs);
}

/* The caller progresses while it waits: the progress thread parks. */
static int amc_api_wait_enter(amc_context_t *ctx)
{
    if ((ctx->pt != NULL) && amc_progress_thread_busy(ctx->pt)) {
        amc_progress_thread_enter_wait(ctx->pt);
        return 1;
    }
    return 0;
}

static void amc_api_wait_leave(amc_context_t *ctx, int entered)
{
    if (entered) {
        amc_progress_thread_leave_wait(ctx->pt);
    }
}

int amc_waitany(int n, amc_request_t reqs[], int *index)
{
    amc_context_t *ctx = NULL;
    amc_waiter_t   waiter;
    int            status = amc_api_check_requests("amc_waitany", n, reqs);
    int            i, progressed, entered;

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (index == NULL) {
        return AMC_ERR_ARG;
    }
    *index = AMC_UNDEFINED;
    for (i = 0; i < n; i++) {
        /* null and inactive persistent requests do not count, as in MPI */
        if ((reqs[i] != NULL) && (!reqs[i]->persistent || reqs[i]->active)) {
            ctx = reqs[i]->comm->ctx;
            break;
        }
    }
    if (ctx == NULL) {
        return AMC_SUCCESS;
    }

    entered = amc_api_wait_enter(ctx);
    amc_waiter_init(&waiter, &ctx->cfg.wait);
    while (*index == AMC_UNDEFINED) {
        progressed = amc_api_progress_requests(n, reqs);
        for (i = 0; i < n; i++) {
            if ((reqs[i] == NULL) || (reqs[i]->persistent && !reqs[i]->active)) {
                continue;
            }
            if (amc_request_poll(reqs[i]) != AMC_INPROGRESS) {
                *index = i;
                break;
            }
        }
        if (*index == AMC_UNDEFINED) {
            amc_waiter_pass(&waiter, progressed, amc_context_sleep, ctx);
        }
    }
    amc_api_wait_leave(ctx, entered);
    return amc_api_request_release(&reqs[*index]);
}

int amc_waitall(int n, amc_request_t reqs[])
{
    amc_context_t *ctx = NULL;
    amc_waiter_t   waiter;
    int            status = amc_api_check_requests("amc_waitall", n, reqs);
    int            i, progressed, entered;

    if (status != AMC_SUCCESS) {
        return status;
    }
    for (i = 0; (i < n) && (ctx == NULL); i++) {
        ctx = (reqs[i] != NULL) ? reqs[i]->comm->ctx : NULL;
    }
    if (ctx == NULL) {
        return AMC_SUCCESS; /* all null */
    }

    entered = amc_api_wait_enter(ctx);
    amc_waiter_init(&waiter, &ctx->cfg.wait);
    for (;;) {
        progressed = amc_api_progress_requests(n, reqs);
        if (amc_api_poll_requests(n, reqs) == 0) {
            break;
        }
        amc_waiter_pass(&waiter, progressed, amc_context_sleep, ctx);
    }
    amc_api_wait_leave(ctx, entered);
    return amc_api_release_requests(n, reqs);
}
