/* SPDX-License-Identifier: BSD-3-Clause */
/* Public revoke, agree, shrink and failed calls: checks, and the waits. */
#include "am_coll/api/api_ft.h"
#include "am_coll/api/api.h"
#include "am_coll/api/comm_create.h"
#include "am_coll/context/progress.h"
#include "am_coll/context/progress_thread.h"
#include "base/clock.h"

#include <stdlib.h>
#include <string.h>

/* Waits as a collective's wait does (spin, yield, sleep), advancing the
 * agreement after every pass: its steps are this thread's to take. */
static int amc_ft_wait_loop(amc_ft_agree_t *op)
{
    amc_context_t   *ctx     = op->comm->ctx;
    amc_transport_t *tp      = ctx->tp;
    double           timeout = ctx->cfg.timeout_sec;
    double           deadline = (timeout > 0.0) ? amc_clock_sec() + timeout : 0.0;
    amc_waiter_t     waiter;
    int              status, progressed;

    amc_waiter_init(&waiter, &ctx->cfg.wait);
    for (;;) {
        status = amc_ft_agree_test(op);
        if (status != AMC_INPROGRESS) {
            return status;
        }
        progressed = tp->ops->progress(tp);
        if (!progressed && (deadline > 0.0) && (amc_clock_sec() > deadline)) {
            amc_error(&ctx->log, "agreement %llu on communicator 0x%llx timed out after %g s "
                      "(AMC_TIMEOUT)", (unsigned long long)op->epoch,
                      (unsigned long long)op->comm->cid, timeout);
            return AMC_ERR_TIMEOUT;
        }
        amc_waiter_pass(&waiter, progressed, amc_context_sleep, ctx);
    }
}

static int amc_ft_wait(amc_ft_agree_t *op)
{
    amc_progress_thread_t *pt = op->comm->ctx->pt;
    int                    status;

    if ((pt == NULL) || !amc_progress_thread_busy(pt)) {
        return amc_ft_wait_loop(op);
    }
    amc_progress_thread_enter_wait(pt);
    status = amc_ft_wait_loop(op);
    amc_progress_thread_leave_wait(pt);
    return status;
}

int amc_comm_revoke(amc_comm_t comm)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_ft_revoke(comm);
}

int amc_comm_agree(amc_comm_t comm, int *flag)
{
    amc_ft_agree_t op;
    int            status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (flag == NULL) {
        return AMC_ERR_ARG;
    }
    status = amc_ft_agree_begin(comm, *flag, &op);
    if (status != AMC_SUCCESS) {
        return status;
    }
    status = amc_ft_wait(&op);
    if ((status == AMC_SUCCESS) || (status == AMC_ERR_PEER)) {
        *flag = op.result.flag;
    }
    return status;
}

int amc_ft_shrink_end(amc_ft_agree_t *op, int status, amc_comm_t *newcomm_p)
{
    amc_comm_t comm = op->comm;
    int       *ranks;
    int        i, n = 0;

    *newcomm_p = AMC_COMM_NULL;
    if ((status != AMC_SUCCESS) && (status != AMC_ERR_PEER)) {
        return status;
    }
    if (op->result.num == UINT64_MAX) {
        amc_error(&comm->ctx->log, "shrink of communicator 0x%llx: the leader had no id left",
                  (unsigned long long)comm->cid);
        return AMC_ERR_NO_MEMORY;
    }
    ranks = malloc((size_t)comm->size * sizeof(int));
    if (ranks == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < comm->size; i++) {
        if (!amc_ft_bit(op->result.failed, i)) {
            ranks[n++] = i;
        }
    }
    /* the leader reserved the number, so the id is the job's one of this
     * creation, as a split's leader's is */
    status = amc_comm_create_group_internal(
        comm, ranks, n, amc_context_cid_make(comm->ctx, op->result.num, op->result.leader),
        newcomm_p);
    free(ranks);
    return status;
}

int amc_comm_shrink(amc_comm_t comm, amc_comm_t *newcomm)
{
    amc_ft_agree_t op;
    int            status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (newcomm == NULL) {
        return AMC_ERR_ARG;
    }
    *newcomm = AMC_COMM_NULL;
    status   = amc_ft_agree_begin(comm, 1, &op);
    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_ft_shrink_end(&op, amc_ft_wait(&op), newcomm);
}

int amc_comm_failed(amc_comm_t comm, int *ranks, int max, int *count)
{
    uint64_t bits[AMC_FT_WORDS];
    int      i, n = 0, status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((count == NULL) || (max < 0) || ((ranks == NULL) && (max > 0))) {
        return AMC_ERR_ARG;
    }
    if (comm->size > AMC_FT_MAX_RANKS) {
        return AMC_ERR_UNSUPPORTED;
    }
    amc_ft_failed(comm, bits);
    for (i = 0; i < comm->size; i++) {
        if (amc_ft_bit(bits, i)) {
            if (n < max) {
                ranks[n] = i;
            }
            n++;
        }
    }
    *count = n;
    return AMC_SUCCESS;
}
