/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/fuzz/fuzz_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rank r contributes at element i of collective c: small and positive,
 * so a sum over 8 ranks cannot overflow and -1 marks "never written". */
static int amc_fuzz_value(int r, int c, size_t i)
{
    return (int)(((size_t)r * 37u + (size_t)c * 11u + i * 5u) % 997u) + 1;
}

static int amc_fuzz_reduce(amc_op_t op, int a, int b)
{
    return (op == AMC_MAX) ? ((a > b) ? a : b) : a + b;
}

/* The reduction of element i over ranks 0..last. */
static int amc_fuzz_reduced(const amc_fuzz_coll_t *coll, int c, int last, size_t i)
{
    int r, acc = amc_fuzz_value(0, c, i);

    for (r = 1; r <= last; r++) {
        acc = amc_fuzz_reduce(coll->op, acc, amc_fuzz_value(r, c, i));
    }
    return acc;
}

/* Ints the root's side of a v-form spans (gaps included). */
static size_t amc_fuzz_vspan(const amc_fuzz_world_t *w, const amc_fuzz_coll_t *coll)
{
    return coll->displs[w->n - 1] + coll->counts[w->n - 1];
}

static int *amc_fuzz_alloc(size_t len)
{
    int   *buf = malloc((len ? len : 1) * sizeof(int));
    size_t i;

    for (i = 0; (buf != NULL) && (i < len); i++) {
        buf[i] = -1;
    }
    return buf;
}

/* Sizes of rank's buffers for collective c. */
static void amc_fuzz_sizes(const amc_fuzz_world_t *w, int c, int rank, size_t *send_len,
                           size_t *recv_len)
{
    const amc_fuzz_coll_t *coll = &w->coll[c];
    size_t                 n    = (size_t)w->n;

    *send_len = 0;
    *recv_len = 0;
    switch (coll->kind) {
    case AMC_FUZZ_BCAST:
        *recv_len = coll->count;
        break;
    case AMC_FUZZ_REDUCE:
    case AMC_FUZZ_ALLREDUCE:
    case AMC_FUZZ_SCAN:
        *send_len = *recv_len = coll->count;
        break;
    case AMC_FUZZ_ALLGATHER:
        *send_len = coll->count;
        *recv_len = n * coll->count;
        break;
    case AMC_FUZZ_ALLTOALL:
        *send_len = *recv_len = n * coll->count;
        break;
    case AMC_FUZZ_SCATTERV:
        *send_len = (rank == coll->root) ? amc_fuzz_vspan(w, coll) : 0;
        *recv_len = coll->counts[rank];
        break;
    case AMC_FUZZ_GATHERV:
        *send_len = coll->counts[rank];
        *recv_len = (rank == coll->root) ? amc_fuzz_vspan(w, coll) : 0;
        break;
    default:
        break;
    }
}

static int amc_fuzz_fill(amc_fuzz_world_t *w, int c, int rank)
{
    const amc_fuzz_coll_t *coll = &w->coll[c];
    amc_fuzz_call_t       *call = &w->call[rank][c];
    size_t                 i;

    amc_fuzz_sizes(w, c, rank, &call->send_len, &call->recv_len);
    call->send = amc_fuzz_alloc(call->send_len);
    call->recv = amc_fuzz_alloc(call->recv_len);
    if ((call->send == NULL) || (call->recv == NULL)) {
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < call->send_len; i++) {
        call->send[i] = amc_fuzz_value(rank, c, i);
    }
    if ((coll->kind == AMC_FUZZ_BCAST) && (rank == coll->root)) {
        for (i = 0; i < call->recv_len; i++) {
            call->recv[i] = amc_fuzz_value(rank, c, i);
        }
    }
    call->req    = AMC_REQUEST_NULL;
    call->state  = AMC_FUZZ_IDLE;
    call->status = AMC_SUCCESS;
    return AMC_SUCCESS;
}

int amc_fuzz_world_create(amc_fuzz_world_t *w, amc_fake_completion_t completion,
                          const amc_config_t *cfg)
{
    int rank, c, status;

    memset(w->call, 0, sizeof(w->call));
    memset(w->next, 0, sizeof(w->next));
    for (rank = 0; rank < w->n; rank++) {
        for (c = 0; c < w->ncolls; c++) {
            if (amc_fuzz_fill(w, c, rank) != AMC_SUCCESS) {
                w->tw.n = 0; /* no contexts yet: destroy frees the buffers only */
                w->tw.ctx = NULL;
                w->tw.fabric = NULL;
                return AMC_ERR_NO_MEMORY;
            }
        }
    }
    status = amc_test_world_create(&w->tw, w->n, completion, cfg);
    if (status != AMC_SUCCESS) {
        w->tw.n = 0; /* the harness cleaned up after itself */
        w->tw.ctx = NULL;
        w->tw.fabric = NULL;
    }
    return status;
}

static int amc_fuzz_start(amc_fuzz_world_t *w, int c, int rank)
{
    const amc_fuzz_coll_t *coll = &w->coll[c];
    amc_fuzz_call_t       *call = &w->call[rank][c];
    amc_comm_t             comm = amc_test_world_comm(&w->tw, rank);
    amc_request_t         *req  = &call->req;
    const int             *sendbuf = call->send_len ? call->send : NULL;

    switch (coll->kind) {
    case AMC_FUZZ_BARRIER:
        return amc_ibarrier(comm, req);
    case AMC_FUZZ_BCAST:
        return amc_ibcast(call->recv, coll->count, AMC_INT, coll->root, comm, req);
    case AMC_FUZZ_REDUCE:
        return amc_ireduce(call->send, call->recv, coll->count, AMC_INT, coll->op, coll->root,
                           comm, req);
    case AMC_FUZZ_ALLREDUCE:
        return amc_iallreduce(call->send, call->recv, coll->count, AMC_INT, coll->op, comm, req);
    case AMC_FUZZ_ALLGATHER:
        return amc_iallgather(call->send, call->recv, coll->count, AMC_INT, comm, req);
    case AMC_FUZZ_ALLTOALL:
        return amc_ialltoall(call->send, call->recv, coll->count, AMC_INT, comm, req);
    case AMC_FUZZ_SCATTERV:
        /* a non-root passes no send side, as MPI allows */
        return amc_iscatterv(sendbuf, coll->counts, coll->displs, call->recv,
                             coll->counts[rank], AMC_INT, coll->root, comm, req);
    case AMC_FUZZ_GATHERV:
        return amc_igatherv(call->send, coll->counts[rank],
                            (rank == coll->root) ? call->recv : NULL, coll->counts,
                            coll->displs, AMC_INT, coll->root, comm, req);
    case AMC_FUZZ_SCAN:
        return amc_iscan(call->send, call->recv, coll->count, AMC_INT, coll->op, comm, req);
    default:
        return AMC_ERR_ARG;
    }
}

int amc_fuzz_start_next(amc_fuzz_world_t *w, int rank)
{
    amc_fuzz_call_t *call;
    int              c = w->next[rank], status;

    if (c >= w->ncolls) {
        return 0;
    }
    call   = &w->call[rank][c];
    status = amc_fuzz_start(w, c, rank);
    if (status == AMC_SUCCESS) {
        call->state = AMC_FUZZ_RUNNING;
    } else {
        call->state  = AMC_FUZZ_DONE;
        call->status = status;
    }
    w->next[rank]++;
    return 1;
}

int amc_fuzz_test_rank(amc_fuzz_world_t *w, int rank)
{
    amc_fuzz_call_t *call;
    int              c, flag, status, finished = 0;

    for (c = 0; c < w->next[rank]; c++) {
        call = &w->call[rank][c];
        if (call->state != AMC_FUZZ_RUNNING) {
            continue;
        }
        flag   = 0;
        status = amc_test(&call->req, &flag);
        if (flag || (status != AMC_SUCCESS)) {
            call->state  = AMC_FUZZ_DONE;
            call->status = status;
            finished++;
        }
    }
    return finished;
}

int amc_fuzz_free_one(amc_fuzz_world_t *w, int rank)
{
    amc_fuzz_call_t *call;
    int              c;

    for (c = 0; c < w->next[rank]; c++) {
        call = &w->call[rank][c];
        if (call->state == AMC_FUZZ_RUNNING) {
            (void)amc_request_free(&call->req);
            call->state = AMC_FUZZ_FREED;
            return 1;
        }
    }
    return 0;
}

int amc_fuzz_running(const amc_fuzz_world_t *w)
{
    int rank, c, running = 0;

    for (rank = 0; rank < w->n; rank++) {
        for (c = 0; c < w->next[rank]; c++) {
            running += (w->call[rank][c].state == AMC_FUZZ_RUNNING);
        }
    }
    return running;
}

/* Element i of what rank's call of c must hold after success, or -1 (a
 * gap the call must not write). Only where the call delivers data. */
static int amc_fuzz_expected(const amc_fuzz_world_t *w, int c, int rank, size_t i)
{
    const amc_fuzz_coll_t *coll  = &w->coll[c];
    size_t                 count = coll->count, j;

    switch (coll->kind) {
    case AMC_FUZZ_BCAST:
        return amc_fuzz_value(coll->root, c, i);
    case AMC_FUZZ_REDUCE:
    case AMC_FUZZ_ALLREDUCE:
        return amc_fuzz_reduced(coll, c, w->n - 1, i);
    case AMC_FUZZ_SCAN:
        return amc_fuzz_reduced(coll, c, rank, i);
    case AMC_FUZZ_ALLGATHER:
        return amc_fuzz_value((int)(i / count), c, i % count);
    case AMC_FUZZ_ALLTOALL:
        return amc_fuzz_value((int)(i / count), c, (size_t)rank * count + i % count);
    case AMC_FUZZ_SCATTERV:
        return amc_fuzz_value(coll->root, c, coll->displs[rank] + i);
    case AMC_FUZZ_GATHERV:
        for (j = 0; j < (size_t)w->n; j++) {
            if ((i >= coll->displs[j]) && (i < coll->displs[j] + coll->counts[j])) {
                return amc_fuzz_value((int)j, c, i - coll->displs[j]);
            }
        }
        return -1;
    default:
        return -1;
    }
}

int amc_fuzz_wrong_results(const amc_fuzz_world_t *w)
{
    const amc_fuzz_call_t *call;
    int                    rank, c, want, wrong = 0;
    size_t                 i;

    for (rank = 0; rank < w->n; rank++) {
        for (c = 0; c < w->ncolls; c++) {
            call = &w->call[rank][c];
            if ((call->state != AMC_FUZZ_DONE) || (call->status != AMC_SUCCESS)) {
                continue;
            }
            if ((w->coll[c].kind == AMC_FUZZ_REDUCE) && (rank != w->coll[c].root)) {
                continue; /* its receive buffer is not its business */
            }
            for (i = 0; i < call->recv_len; i++) {
                want = amc_fuzz_expected(w, c, rank, i);
                if (call->recv[i] != want) {
                    fprintf(stderr, "fuzz: rank %d collective %d (kind %d, count %zu, root %d): "
                            "element %zu is %d, not %d\n", rank, c, w->coll[c].kind,
                            w->coll[c].count, w->coll[c].root, i, call->recv[i], want);
                    wrong++;
                    break;
                }
            }
        }
    }
    return wrong;
}

void amc_fuzz_world_print(const amc_fuzz_world_t *w)
{
    static const char *const states[] = { "idle", "running", "done", "freed" };
    const amc_fuzz_call_t   *call;
    int                      rank, c;

    fprintf(stderr, "fuzz: N=%d, %d collectives\n", w->n, w->ncolls);
    for (c = 0; c < w->ncolls; c++) {
        fprintf(stderr, "fuzz:   collective %d: kind %d count %zu root %d op %d\n", c,
                w->coll[c].kind, w->coll[c].count, w->coll[c].root, (int)w->coll[c].op);
    }
    for (rank = 0; rank < w->n; rank++) {
        for (c = 0; c < w->ncolls; c++) {
            call = &w->call[rank][c];
            fprintf(stderr, "fuzz:   rank %d collective %d: %s, status %d\n", rank, c,
                    states[call->state], call->status);
        }
    }
}

void amc_fuzz_world_destroy(amc_fuzz_world_t *w)
{
    int rank, c;

    for (rank = 0; rank < w->tw.n; rank++) {
        for (c = 0; c < w->ncolls; c++) {
            if (w->call[rank][c].state == AMC_FUZZ_RUNNING) {
                /* a stranded instance: detached, then torn down with its context */
                (void)amc_request_free(&w->call[rank][c].req);
                w->call[rank][c].state = AMC_FUZZ_FREED;
            }
        }
    }
    if (w->tw.ctx != NULL) {
        amc_test_world_destroy(&w->tw);
    }
    /* after the contexts: an instance may write into these until then */
    for (rank = 0; rank < w->n; rank++) {
        for (c = 0; c < w->ncolls; c++) {
            free(w->call[rank][c].send);
            free(w->call[rank][c].recv);
        }
    }
}
