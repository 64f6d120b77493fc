/* SPDX-License-Identifier: BSD-3-Clause */
/* Public data collectives: argument checks, then a schedule started on the
 * communicator; the blocking form is the non-blocking one plus a wait. */
#include "am_coll/api/api.h"
#include "am_coll/api/api_memo.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/op.h"
#include "am_coll/context/request.h"
#include "am_coll/api/coll_start.h"
#include "am_coll/context/wait.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Which buffer may be AMC_IN_PLACE, as MPI allows it. */
enum {
    AMC_IN_PLACE_NEVER,
    AMC_IN_PLACE_SEND,          /* sendbuf on every rank */
    AMC_IN_PLACE_SEND_AT_ROOT,  /* sendbuf at the root */
    AMC_IN_PLACE_RECV_AT_ROOT   /* recvbuf at the root */
};

/* The checks and the start every public call shares, inlined into each:
 * the constants of its call (which buffer may be in place, whether it
 * blocks) fold, and a call crosses one frame where it crossed four
 * (callgrind, an 8 B allreduce at N=2: 942 -> 855 instructions a call). */
#define AMC_API_STEP static inline __attribute__((always_inline))

static void amc_api_args_init(amc_coll_args_t *a, int coll, const void *sendbuf, void *recvbuf,
                              size_t count, amc_datatype_t dt, amc_op_t op, int root)
{
    memset(a, 0, sizeof(*a));
    a->coll    = (uint8_t)coll;
    a->sendbuf = sendbuf;
    a->recvbuf = recvbuf;
    a->count   = count;
    a->dt      = dt;
    a->op      = op;
    a->root    = root;
}

/* Checks what every data collective shares; fills dt_size, commutative and
 * in_place. blocks: how many count-sized blocks the larger buffer holds.
 * *own is set when the error is in an argument only this rank's call
 * carries (its buffers, AMC_IN_PLACE, the root's larger buffer): the other
 * ranks cannot see it and must be told (amc_api_coll_go). Communicator,
 * datatype, root, count and op are the same in every rank's call: an error
 * there every rank finds alike, and the call leaves no trace. */
AMC_API_STEP int amc_api_coll_check(amc_comm_t comm, amc_coll_args_t *a, int in_place_rule,
                                   size_t blocks, int send_used, int recv_used, int *own)
{
    size_t bytes;
    int    status = amc_api_check_comm(comm);
    int    at_root;

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (amc_datatype_size(a->dt, &a->dt_size) != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "%s: unknown datatype %d", amc_coll_name(a->coll), (int)a->dt);
        return AMC_ERR_ARG;
    }
    if ((a->root != -1) && ((a->root < 0) || (a->root >= comm->size))) {
        amc_error(&comm->ctx->log, "%s: root %d out of range (size %d)", amc_coll_name(a->coll),
                  a->root, comm->size);
        return AMC_ERR_ARG;
    }
    if (amc_count_bytes(a->count, a->dt, &bytes) != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "%s: count %zu overflows", amc_coll_name(a->coll), a->count);
        return AMC_ERR_ARG;
    }
    if (a->op != -1) {
        if (amc_op_check(a->op, a->dt) != AMC_SUCCESS) {
            amc_error(&comm->ctx->log, "%s: op %s does not apply to %s", amc_coll_name(a->coll),
                      amc_op_name(a->op), amc_datatype_name(a->dt));
            return AMC_ERR_ARG;
        }
        a->commutative = amc_op_is_commutative(a->op);
    }

    /* from here on: this rank's own arguments */
    *own = 1;
    if ((blocks > 0) && (bytes > SIZE_MAX / blocks)) {
        amc_error(&comm->ctx->log, "%s: count %zu times %zu blocks overflows",
                  amc_coll_name(a->coll), a->count, blocks);
        return AMC_ERR_ARG;
    }
    at_root = (a->root == -1) || (comm->rank == a->root);
    if ((a->sendbuf == AMC_IN_PLACE) || (a->recvbuf == AMC_IN_PLACE)) {
        int ok = ((in_place_rule == AMC_IN_PLACE_SEND) && (a->sendbuf == AMC_IN_PLACE)) ||
                 ((in_place_rule == AMC_IN_PLACE_SEND_AT_ROOT) && at_root &&
                  (a->sendbuf == AMC_IN_PLACE)) ||
                 ((in_place_rule == AMC_IN_PLACE_RECV_AT_ROOT) && at_root &&
                  (a->recvbuf == AMC_IN_PLACE));
        if (!ok) {
            amc_error(&comm->ctx->log, "%s: AMC_IN_PLACE is not allowed here",
                      amc_coll_name(a->coll));
            return AMC_ERR_ARG;
        }
        a->in_place = 1;
    }
    if (bytes > 0) {
        if (send_used && !a->in_place && (a->sendbuf == NULL)) {
            amc_error(&comm->ctx->log, "%s: NULL send buffer for %zu bytes",
                      amc_coll_name(a->coll), bytes);
            return AMC_ERR_ARG;
        }
        if (recv_used && (a->recvbuf == NULL || a->recvbuf == AMC_IN_PLACE) &&
            !(a->in_place && (in_place_rule == AMC_IN_PLACE_RECV_AT_ROOT))) {
            amc_error(&comm->ctx->log, "%s: no receive buffer for %zu bytes",
                      amc_coll_name(a->coll), bytes);
            return AMC_ERR_ARG;
        }
    }
    *own = 0;
    return AMC_SUCCESS;
}

/* How a checked call runs: blocking (wait here, the request on the stack),
 * non-blocking (amc_iX), or persistent (amc_X_init: kept, started by amc_start). */
enum {
    AMC_API_BLOCKING,
    AMC_API_NONBLOCKING,
    AMC_API_PERSISTENT
};

AMC_API_STEP int amc_api_coll_run(amc_comm_t comm, amc_coll_args_t *a, amc_request_t *req_p,
                                 int mode)
{
    struct amc_request  stack_req, *req;
    const void         *sendbuf = a->sendbuf, *recvbuf = a->recvbuf; /* as passed */
    int                 status, rounds;

    /* the sentinel is no address: the schedule reads the other buffer */
    if (a->recvbuf == AMC_IN_PLACE) {
        a->recvbuf = NULL;
    }
    if (a->sendbuf == AMC_IN_PLACE) {
        a->sendbuf = NULL;
    }
    if (mode == AMC_API_PERSISTENT) {
        return amc_request_persistent_new(comm, a, req_p);
    }
    if (mode == AMC_API_BLOCKING) {
        amc_request_init(&stack_req, comm, 0);
        status = amc_coll_start_rounds(comm, a, &stack_req, &rounds);
        if (rounds) {
            amc_api_memo_keep(comm, sendbuf, recvbuf, a);
        }
        return (status == AMC_SUCCESS) ? amc_request_wait_one(&stack_req) : status;
    }
    req = amc_request_alloc(comm);
    if (req == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    amc_request_begin_nb(req);
    status = amc_coll_start(comm, a, req);
    amc_request_end_start(req, status);
    if (status != AMC_SUCCESS) {
        amc_request_release(req);
        return status;
    }
    *req_p = req;
    return AMC_SUCCESS;
}

/* The end of every data collective's call: run it, or return the error of
 * its checks. An error in this rank's own arguments (own) still takes the
 * instance's place in the communicator's order and tells the other ranks,
 * whose calls fail with AMC_ERR_ARG instead of waiting for this one (a
 * scatterv whose root passed bad counts hung every other rank). A
 * persistent call (amc_X_init) starts nothing yet: a bad one is only
 * refused. */
AMC_API_STEP int amc_api_coll_go(amc_comm_t comm, amc_coll_args_t *a, int status, int own,
                                amc_request_t *req_p, int mode)
{
    if ((status == AMC_SUCCESS) && (mode != AMC_API_BLOCKING) && (req_p == NULL)) {
        /* only this rank's call carries its handle: the others are told */
        amc_error(&comm->ctx->log, "%s: NULL request pointer", amc_coll_name(a->coll));
        status = AMC_ERR_ARG;
        own    = (mode != AMC_API_PERSISTENT);
    }
    if (status == AMC_SUCCESS) {
        return amc_api_coll_run(comm, a, req_p, mode);
    }
    if (own && (mode != AMC_API_PERSISTENT)) {
        amc_coll_start_failed(comm, a, status);
    }
    return status;
}

/* A blocking call whose memo amc_api_memo_find or amc_api_memo_find_v
 * found (m): run as that one ran (1, *status its result); 0 where none. In
 * the public blocking call itself, before the frame of its checks (whose
 * saved registers cost 19 of the 8 B allreduce's instructions). */
AMC_API_STEP int amc_api_memo_ran(amc_comm_t comm, const amc_api_memo_t *m, int *status)
{
    if (m == NULL) {
        return 0;
    }
    *status = amc_api_memo_run(comm, m);
    return 1;
}

static int amc_api_bcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm,
                         amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_BCAST, buf, buf, count, dt, -1, root);
    if (root == -1) {
        a.root = -2; /* -1 means unrooted to the checks */
    }
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_NEVER, 1, 0, 1, &own);
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_bcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_BCAST, buf, buf, count, dt, -1,
                                           (root == -1) ? -2 : root),
                         &status)) {
        return status;
    }
    return amc_api_bcast(buf, count, dt, root, comm, NULL, 0);
}

int amc_ibcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm,
               amc_request_t *req)
{
    return amc_api_bcast(buf, count, dt, root, comm, req, 1);
}

static int amc_api_reduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                          amc_op_t op, int root, amc_comm_t comm, amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status, is_root;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_REDUCE, sendbuf, recvbuf, count, dt, op,
                      (root == -1) ? -2 : root);
    if (op == -1) {
        a.op = -2; /* -1 means "no op" to the checks */
    }
    is_root = (amc_comm_check(comm) == AMC_SUCCESS) && (comm->rank == root);
    status  = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND_AT_ROOT, 1, 1, is_root, &own);
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_reduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
               int root, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_REDUCE, sendbuf, recvbuf, count, dt,
                                           (op == -1) ? -2 : op, (root == -1) ? -2 : root),
                         &status)) {
        return status;
    }
    return amc_api_reduce(sendbuf, recvbuf, count, dt, op, root, comm, NULL, 0);
}

int amc_ireduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
                int root, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce(sendbuf, recvbuf, count, dt, op, root, comm, req, 1);
}

static int amc_api_allreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                             amc_op_t op, amc_comm_t comm, amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, (op == -1) ? -2 : op,
                      -1);
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, 1, 1, 1, &own);
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_allreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_op_t op, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt,
                                           (op == -1) ? -2 : op, -1),
                         &status)) {
        return status;
    }
    return amc_api_allreduce(sendbuf, recvbuf, count, dt, op, comm, NULL, 0);
}

int amc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                   amc_op_t op, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_allreduce(sendbuf, recvbuf, count, dt, op, comm, req, 1);
}

static int amc_api_rooted(int coll, const void *sendbuf, void *recvbuf, size_t count,
                          amc_datatype_t dt, int root, amc_comm_t comm, amc_request_t *req,
                          int nb)
{
    amc_coll_args_t a;
    int             status, is_root, gather = (coll == AMC_COLL_GATHER);
    int             own = 0;

    amc_api_args_init(&a, coll, sendbuf, recvbuf, count, dt, -1, (root == -1) ? -2 : root);
    is_root = (amc_comm_check(comm) == AMC_SUCCESS) && (comm->rank == root);
    status  = amc_api_coll_check(comm, &a,
                                 gather ? AMC_IN_PLACE_SEND_AT_ROOT : AMC_IN_PLACE_RECV_AT_ROOT,
                                 is_root ? (size_t)comm->size : 1,
                                 gather ? 1 : is_root, gather ? is_root : 1, &own);
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_gather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
               amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_GATHER, sendbuf, recvbuf, count, dt, -1,
                                           (root == -1) ? -2 : root),
                         &status)) {
        return status;
    }
    return amc_api_rooted(AMC_COLL_GATHER, sendbuf, recvbuf, count, dt, root, comm, NULL, 0);
}

int amc_igather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                amc_comm_t comm, amc_request_t *req)
{
    return amc_api_rooted(AMC_COLL_GATHER, sendbuf, recvbuf, count, dt, root, comm, req, 1);
}

int amc_scatter(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_SCATTER, sendbuf, recvbuf, count, dt, -1,
                                           (root == -1) ? -2 : root),
                         &status)) {
        return status;
    }
    return amc_api_rooted(AMC_COLL_SCATTER, sendbuf, recvbuf, count, dt, root, comm, NULL, 0);
}

int amc_iscatter(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                 amc_comm_t comm, amc_request_t *req)
{
    return amc_api_rooted(AMC_COLL_SCATTER, sendbuf, recvbuf, count, dt, root, comm, req, 1);
}

static int amc_api_all(int coll, const void *sendbuf, void *recvbuf, size_t count,
                       amc_datatype_t dt, amc_comm_t comm, amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status, size = (amc_comm_check(comm) == AMC_SUCCESS) ? comm->size : 1;
    int             own = 0;

    amc_api_args_init(&a, coll, sendbuf, recvbuf, count, dt, -1, -1);
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, (size_t)size, 1, 1, &own);
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_allgather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_ALLGATHER, sendbuf, recvbuf, count, dt,
                                           -1, -1),
                         &status)) {
        return status;
    }
    return amc_api_all(AMC_COLL_ALLGATHER, sendbuf, recvbuf, count, dt, comm, NULL, 0);
}

int amc_iallgather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                   amc_comm_t comm, amc_request_t *req)
{
    return amc_api_all(AMC_COLL_ALLGATHER, sendbuf, recvbuf, count, dt, comm, req, 1);
}

int amc_alltoall(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                 amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, -1,
                                           -1),
                         &status)) {
        return status;
    }
    return amc_api_all(AMC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, comm, NULL, 0);
}

int amc_ialltoall(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm, amc_request_t *req)
{
    return amc_api_all(AMC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, comm, req, 1);
}

static int amc_api_reduce_any(int coll, const void *sendbuf, void *recvbuf, size_t count,
                              amc_datatype_t dt, amc_op_t op, amc_comm_t comm,
                              amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status, live = (amc_comm_check(comm) == AMC_SUCCESS), recv_used = 1;
    int             own = 0;
    size_t          blocks = 1;

    amc_api_args_init(&a, coll, sendbuf, recvbuf, count, dt, (op == -1) ? -2 : op, -1);
    if (live && (coll == AMC_COLL_REDUCE_SCATTER_BLOCK)) {
        blocks = (size_t)comm->size; /* the input: one block per rank */
    }
    if (live && (coll == AMC_COLL_EXSCAN) && (comm->rank == 0) && (sendbuf != AMC_IN_PLACE)) {
        recv_used = 0; /* MPI: rank 0's result is undefined, its recvbuf not significant */
    }
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, blocks, 1, recv_used, &own);
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count,
                             amc_datatype_t dt, amc_op_t op, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf,
                                           count, dt, (op == -1) ? -2 : op, -1),
                         &status)) {
        return status;
    }
    return amc_api_reduce_any(AMC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dt, op,
                              comm, NULL, 0);
}

int amc_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count,
                              amc_datatype_t dt, amc_op_t op, amc_comm_t comm,
                              amc_request_t *req)
{
    return amc_api_reduce_any(AMC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dt, op,
                              comm, req, 1);
}

int amc_scan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
             amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_SCAN, sendbuf, recvbuf, count, dt,
                                           (op == -1) ? -2 : op, -1),
                         &status)) {
        return status;
    }
    return amc_api_reduce_any(AMC_COLL_SCAN, sendbuf, recvbuf, count, dt, op, comm, NULL, 0);
}

int amc_iscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
              amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce_any(AMC_COLL_SCAN, sendbuf, recvbuf, count, dt, op, comm, req, 1);
}

int amc_exscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
               amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find(comm, AMC_COLL_EXSCAN, sendbuf, recvbuf, count, dt,
                                           (op == -1) ? -2 : op, -1),
                         &status)) {
        return status;
    }
    return amc_api_reduce_any(AMC_COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, NULL, 0);
}

int amc_iexscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                amc_op_t op, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce_any(AMC_COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, req, 1);
}

/* Vector forms. amc_api_coll_check sees count 0 (comm, datatype, root, op
 * and AMC_IN_PLACE); the helpers below check the counts and buffers. */

/* A count in elements: its bytes, or AMC_ERR_ARG if they overflow. */
static int amc_api_count_check(amc_comm_t comm, const amc_coll_args_t *a, size_t count,
                               size_t *bytes)
{
    if (amc_count_bytes(count, a->dt, bytes) != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "%s: count %zu overflows", amc_coll_name(a->coll), count);
        return AMC_ERR_ARG;
    }
    return AMC_SUCCESS;
}

/* A per-rank count array and, with displs, its displacements: present, and
 * the end of every non-empty block and the sum of all representable in
 * bytes; *bytes is that sum. */
static int amc_api_vector_check(amc_comm_t comm, const amc_coll_args_t *a, const size_t *counts,
                                const size_t *displs, int with_displs, size_t *bytes)
{
    size_t limit = amc_datatype_elems(SIZE_MAX, a->dt_size), total = 0;
    int    i;

    if ((counts == NULL) || (with_displs && (displs == NULL))) {
        return AMC_ERR_ARG;
    }
    for (i = 0; i < comm->size; i++) {
        if ((counts[i] > limit - total) ||
            (with_displs && (counts[i] > 0) && (displs[i] > limit - counts[i]))) {
            amc_error(&comm->ctx->log, "%s: count %zu of rank %d overflows",
                      amc_coll_name(a->coll), counts[i], i);
            return AMC_ERR_ARG;
        }
        total += counts[i];
    }
    *bytes = total * a->dt_size;
    return AMC_SUCCESS;
}

/* A buffer that must hold bytes: neither NULL nor the sentinel unless empty. */
static int amc_api_buf_check(const void *buf, size_t bytes)
{
    return ((bytes > 0) && ((buf == NULL) || (buf == AMC_IN_PLACE))) ? AMC_ERR_ARG : AMC_SUCCESS;
}

/* One side of a call: count elements (vector: counts[] at displs[]) and the
 * buffer that holds them. */
static int amc_api_side_check(amc_comm_t comm, const amc_coll_args_t *a, int vector,
                              const size_t *counts, const size_t *displs, size_t count,
                              const void *buf)
{
    size_t bytes;
    int    status = vector ? amc_api_vector_check(comm, a, counts, displs, 1, &bytes)
                           : amc_api_count_check(comm, a, count, &bytes);

    return (status == AMC_SUCCESS) ? amc_api_buf_check(buf, bytes) : status;
}

/* The block a rank sends itself: both sides must agree, as between ranks. */
static int amc_api_own_check(amc_comm_t comm, const amc_coll_args_t *a, size_t scount,
                             size_t rcount)
{
    if (scount != rcount) {
        amc_error(&comm->ctx->log, "%s: rank %d sends itself %zu elements but expects %zu",
                  amc_coll_name(a->coll), comm->rank, scount, rcount);
        return AMC_ERR_TRUNCATE;
    }
    return AMC_SUCCESS;
}

static int amc_api_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                           const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                           int root, amc_comm_t comm, amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_GATHERV, sendbuf, recvbuf, 0, dt, -1,
                      (root == -1) ? -2 : root);
    a.scount  = sendcount;
    a.rcounts = recvcounts;
    a.rdispls = displs;
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND_AT_ROOT, 1, 0, 0, &own);
    own   |= (status == AMC_SUCCESS); /* what is checked below is this rank's own */
    if ((status == AMC_SUCCESS) && !a.in_place) {
        status = amc_api_side_check(comm, &a, 0, NULL, NULL, sendcount, sendbuf);
    }
    if ((status == AMC_SUCCESS) && (comm->rank == root)) {
        status = amc_api_side_check(comm, &a, 1, recvcounts, displs, 0, recvbuf);
        if ((status == AMC_SUCCESS) && !a.in_place) {
            status = amc_api_own_check(comm, &a, sendcount, recvcounts[root]);
        }
    }
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t recvcounts[],
                const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find_v(comm, AMC_COLL_GATHERV, sendbuf, recvbuf, sendcount, 0,
                                             NULL, NULL, recvcounts, displs, dt, -1,
                                             (root == -1) ? -2 : root),
                         &status)) {
        return status;
    }
    return amc_api_gatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dt, root, comm,
                           NULL, 0);
}

int amc_igatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t recvcounts[],
                 const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm,
                 amc_request_t *req)
{
    return amc_api_gatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dt, root, comm,
                           req, 1);
}

static int amc_api_scatterv(const void *sendbuf, const size_t sendcounts[],
                            const size_t displs[], void *recvbuf, size_t recvcount,
                            amc_datatype_t dt, int root, amc_comm_t comm, amc_request_t *req,
                            int nb)
{
    amc_coll_args_t a;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_SCATTERV, sendbuf, recvbuf, 0, dt, -1,
                      (root == -1) ? -2 : root);
    a.scounts = sendcounts;
    a.sdispls = displs;
    a.rcount  = recvcount;
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_RECV_AT_ROOT, 1, 0, 0, &own);
    own   |= (status == AMC_SUCCESS); /* what is checked below is this rank's own */
    if ((status == AMC_SUCCESS) && !a.in_place) {
        status = amc_api_side_check(comm, &a, 0, NULL, NULL, recvcount, recvbuf);
    }
    if ((status == AMC_SUCCESS) && (comm->rank == root)) {
        status = amc_api_side_check(comm, &a, 1, sendcounts, displs, 0, sendbuf);
        if ((status == AMC_SUCCESS) && !a.in_place) {
            status = amc_api_own_check(comm, &a, sendcounts[root], recvcount);
        }
    }
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_scatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                 void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find_v(comm, AMC_COLL_SCATTERV, sendbuf, recvbuf, 0,
                                             recvcount, sendcounts, displs, NULL, NULL, dt, -1,
                                             (root == -1) ? -2 : root),
                         &status)) {
        return status;
    }
    return amc_api_scatterv(sendbuf, sendcounts, displs, recvbuf, recvcount, dt, root, comm,
                            NULL, 0);
}

int amc_iscatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                  void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm,
                  amc_request_t *req)
{
    return amc_api_scatterv(sendbuf, sendcounts, displs, recvbuf, recvcount, dt, root, comm,
                            req, 1);
}

static int amc_api_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                              const size_t recvcounts[], const size_t displs[],
                              amc_datatype_t dt, amc_comm_t comm, amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_ALLGATHERV, sendbuf, recvbuf, 0, dt, -1, -1);
    a.scount  = sendcount;
    a.rcounts = recvcounts;
    a.rdispls = displs;
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, 1, 0, 0, &own);
    own   |= (status == AMC_SUCCESS); /* what is checked below is this rank's own */
    if (status == AMC_SUCCESS) {
        status = amc_api_side_check(comm, &a, 1, recvcounts, displs, 0, recvbuf);
    }
    if ((status == AMC_SUCCESS) && !a.in_place) {
        status = amc_api_side_check(comm, &a, 0, NULL, NULL, sendcount, sendbuf);
        if (status == AMC_SUCCESS) {
            status = amc_api_own_check(comm, &a, sendcount, recvcounts[comm->rank]);
        }
    }
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                   const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                   amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find_v(comm, AMC_COLL_ALLGATHERV, sendbuf, recvbuf, sendcount,
                                             0, NULL, NULL, recvcounts, displs, dt, -1, -1),
                         &status)) {
        return status;
    }
    return amc_api_allgatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dt, comm, NULL, 0);
}

int amc_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                    const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                    amc_comm_t comm, amc_request_t *req)
{
    return amc_api_allgatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dt, comm, req, 1);
}

/* With AMC_IN_PLACE the blocks to send are the receive blocks (MPI), so
 * sendcounts and sdispls are ignored. */
static int amc_api_alltoallv(const void *sendbuf, const size_t sendcounts[],
                             const size_t sdispls[], void *recvbuf, const size_t recvcounts[],
                             const size_t rdispls[], amc_datatype_t dt, amc_comm_t comm,
                             amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_ALLTOALLV, sendbuf, recvbuf, 0, dt, -1, -1);
    a.scounts = sendcounts;
    a.sdispls = sdispls;
    a.rcounts = recvcounts;
    a.rdispls = rdispls;
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, 1, 0, 0, &own);
    own   |= (status == AMC_SUCCESS); /* what is checked below is this rank's own */
    if (status == AMC_SUCCESS) {
        status = amc_api_side_check(comm, &a, 1, recvcounts, rdispls, 0, recvbuf);
    }
    if ((status == AMC_SUCCESS) && !a.in_place) {
        status = amc_api_side_check(comm, &a, 1, sendcounts, sdispls, 0, sendbuf);
        if (status == AMC_SUCCESS) {
            status = amc_api_own_check(comm, &a, sendcounts[comm->rank], recvcounts[comm->rank]);
        }
    }
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                  void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                  amc_datatype_t dt, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find_v(comm, AMC_COLL_ALLTOALLV, sendbuf, recvbuf, 0, 0,
                                             sendcounts, sdispls, recvcounts, rdispls, dt, -1, -1),
                         &status)) {
        return status;
    }
    return amc_api_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dt,
                             comm, NULL, 0);
}

int amc_ialltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                   void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                   amc_datatype_t dt, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dt,
                             comm, req, 1);
}

/* With AMC_IN_PLACE the input, the whole vector, is in recvbuf (MPI). */
static int amc_api_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                  amc_datatype_t dt, amc_op_t op, amc_comm_t comm,
                                  amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    size_t          total, rbytes;
    int             status;
    int             own = 0;

    amc_api_args_init(&a, AMC_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, dt,
                      (op == -1) ? -2 : op, -1);
    a.rcounts = recvcounts;
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, 1, 0, 0, &own);
    own   |= (status == AMC_SUCCESS); /* what is checked below is this rank's own */
    if (status == AMC_SUCCESS) {
        status = amc_api_vector_check(comm, &a, recvcounts, NULL, 0, &total);
    }
    if (status == AMC_SUCCESS) {
        rbytes = a.in_place ? total : recvcounts[comm->rank] * a.dt_size;
        status = amc_api_buf_check(recvbuf, rbytes);
        if ((status == AMC_SUCCESS) && !a.in_place) {
            status = amc_api_buf_check(sendbuf, total);
        }
    }
    return amc_api_coll_go(comm, &a, status, own, req, nb);
}

int amc_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                       amc_datatype_t dt, amc_op_t op, amc_comm_t comm)
{
    int status;

    if (amc_api_memo_ran(comm,
                         amc_api_memo_find_v(comm, AMC_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, 0,
                                             NULL, NULL, recvcounts, NULL, dt, (op == -1) ? -2 : op,
                                             -1),
                         &status)) {
        return status;
    }
    return amc_api_reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm, NULL, 0);
}

int amc_ireduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                        amc_datatype_t dt, amc_op_t op, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm, req, 1);
}

/* Persistent forms (MPI-4 style): checked once here, started by amc_start. */

int amc_bcast_init(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm,
                   amc_request_t *req)
{
    return amc_api_bcast(buf, count, dt, root, comm, req, AMC_API_PERSISTENT);
}

int amc_reduce_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                    amc_op_t op,
                    int root, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce(sendbuf, recvbuf, count, dt, op, root, comm, req, AMC_API_PERSISTENT);
}

int amc_allreduce_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                       amc_op_t op, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_allreduce(sendbuf, recvbuf, count, dt, op, comm, req, AMC_API_PERSISTENT);
}

int amc_gather_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                    amc_comm_t comm, amc_request_t *req)
{
    return amc_api_rooted(AMC_COLL_GATHER, sendbuf, recvbuf, count, dt, root, comm, req,
                          AMC_API_PERSISTENT);
}

int amc_scatter_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                     amc_comm_t comm, amc_request_t *req)
{
    return amc_api_rooted(AMC_COLL_SCATTER, sendbuf, recvbuf, count, dt, root, comm, req,
                          AMC_API_PERSISTENT);
}

int amc_allgather_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                       amc_comm_t comm, amc_request_t *req)
{
    return amc_api_all(AMC_COLL_ALLGATHER, sendbuf, recvbuf, count, dt, comm, req,
                       AMC_API_PERSISTENT);
}

int amc_alltoall_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                      amc_comm_t comm, amc_request_t *req)
{
    return amc_api_all(AMC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, comm, req,
                       AMC_API_PERSISTENT);
}

int amc_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, size_t count,
                                  amc_datatype_t dt, amc_op_t op, amc_comm_t comm,
                                  amc_request_t *req)
{
    return amc_api_reduce_any(AMC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dt, op,
                              comm, req, AMC_API_PERSISTENT);
}

int amc_scan_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
                  amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce_any(AMC_COLL_SCAN, sendbuf, recvbuf, count, dt, op, comm, req,
                              AMC_API_PERSISTENT);
}

int amc_exscan_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                    amc_op_t op, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce_any(AMC_COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, req,
                              AMC_API_PERSISTENT);
}

int amc_gatherv_init(const void *sendbuf, size_t sendcount, void *recvbuf,
                     const size_t recvcounts[],
                     const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm,
                     amc_request_t *req)
{
    return amc_api_gatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dt, root, comm,
                           req, AMC_API_PERSISTENT);
}

int amc_scatterv_init(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                      void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm,
                      amc_request_t *req)
{
    return amc_api_scatterv(sendbuf, sendcounts, displs, recvbuf, recvcount, dt, root, comm,
                            req, AMC_API_PERSISTENT);
}

int amc_allgatherv_init(const void *sendbuf, size_t sendcount, void *recvbuf,
                        const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                        amc_comm_t comm, amc_request_t *req)
{
    return amc_api_allgatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dt, comm, req,
                              AMC_API_PERSISTENT);
}

int amc_alltoallv_init(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                       void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                       amc_datatype_t dt, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dt,
                             comm, req, AMC_API_PERSISTENT);
}

int amc_reduce_scatter_init(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                            amc_datatype_t dt, amc_op_t op, amc_comm_t comm, amc_request_t *req)
{
    return amc_api_reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm, req,
                                  AMC_API_PERSISTENT);
}
