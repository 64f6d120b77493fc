/* Public data collectives: argument checks, then a schedule started on the
 * communicator; the blocking form is the non-blocking one plus a wait. */
#include "am_coll/api.h"
#include "am_coll/coll.h"
#include "am_coll/comm.h"
#include "am_coll/datatype.h"
#include "am_coll/op.h"
#include "am_coll/request.h"

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
 * in_place. blocks: how many count-sized blocks the larger buffer holds. */
static int amc_api_coll_check(amc_comm_t comm, amc_coll_args_t *a, int in_place_rule,
                              size_t blocks, int send_used, int recv_used)
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
    if ((amc_count_bytes(a->count, a->dt, &bytes) != AMC_SUCCESS) ||
        ((blocks > 0) && (bytes > SIZE_MAX / blocks))) {
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
            return AMC_ERR_ARG;
        }
        if (recv_used && (a->recvbuf == NULL || a->recvbuf == AMC_IN_PLACE) &&
            !(a->in_place && (in_place_rule == AMC_IN_PLACE_RECV_AT_ROOT))) {
            return AMC_ERR_ARG;
        }
    }
    return AMC_SUCCESS;
}

/* Starts the checked call; with req_p NULL waits for it (request on the stack). */
static int amc_api_coll_run(amc_comm_t comm, amc_coll_args_t *a, amc_request_t *req_p)
{
    struct amc_request  stack_req, *req;
    int                 status;

    /* the sentinel is no address: the schedule reads the other buffer */
    if (a->recvbuf == AMC_IN_PLACE) {
        a->recvbuf = NULL;
    }
    if (a->sendbuf == AMC_IN_PLACE) {
        a->sendbuf = NULL;
    }
    if (req_p == NULL) {
        amc_request_init(&stack_req, comm, 0);
        status = amc_coll_start(comm, a, &stack_req);
        return (status == AMC_SUCCESS) ? amc_request_wait_one(&stack_req) : status;
    }
    req = malloc(sizeof(*req));
    if (req == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    amc_request_init(req, comm, 1);
    status = amc_coll_start(comm, a, req);
    if (status != AMC_SUCCESS) {
        free(req);
        return status;
    }
    *req_p = req;
    return AMC_SUCCESS;
}

#define AMC_API_REQ_CHECK(_req_p, _nb) \
    if ((_nb) && ((_req_p) == NULL)) { \
        return (amc_api_check_live() != AMC_SUCCESS) ? AMC_ERR_NOT_INITIALIZED : AMC_ERR_ARG; \
    }

static int amc_api_bcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm,
                         amc_request_t *req, int nb)
{
    amc_coll_args_t a;
    int             status;

    AMC_API_REQ_CHECK(req, nb);
    amc_api_args_init(&a, AMC_COLL_BCAST, buf, buf, count, dt, -1, root);
    if (root == -1) {
        a.root = -2; /* -1 means unrooted to the checks */
    }
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_NEVER, 1, 0, 1);
    return (status == AMC_SUCCESS) ? amc_api_coll_run(comm, &a, nb ? req : NULL) : status;
}

int amc_bcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm)
{
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

    AMC_API_REQ_CHECK(req, nb);
    amc_api_args_init(&a, AMC_COLL_REDUCE, sendbuf, recvbuf, count, dt, op, (root == -1) ? -2 : root);
    if (op == -1) {
        a.op = -2; /* -1 means "no op" to the checks */
    }
    is_root = (amc_comm_check(comm) == AMC_SUCCESS) && (comm->rank == root);
    status  = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND_AT_ROOT, 1, 1, is_root);
    return (status == AMC_SUCCESS) ? amc_api_coll_run(comm, &a, nb ? req : NULL) : status;
}

int amc_reduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
               int root, amc_comm_t comm)
{
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

    AMC_API_REQ_CHECK(req, nb);
    amc_api_args_init(&a, AMC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, (op == -1) ? -2 : op, -1);
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, 1, 1, 1);
    return (status == AMC_SUCCESS) ? amc_api_coll_run(comm, &a, nb ? req : NULL) : status;
}

int amc_allreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_op_t op, amc_comm_t comm)
{
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

    AMC_API_REQ_CHECK(req, nb);
    amc_api_args_init(&a, coll, sendbuf, recvbuf, count, dt, -1, (root == -1) ? -2 : root);
    is_root = (amc_comm_check(comm) == AMC_SUCCESS) && (comm->rank == root);
    status  = amc_api_coll_check(comm, &a,
                                 gather ? AMC_IN_PLACE_SEND_AT_ROOT : AMC_IN_PLACE_RECV_AT_ROOT,
                                 is_root ? (size_t)comm->size : 1,
                                 gather ? 1 : is_root, gather ? is_root : 1);
    return (status == AMC_SUCCESS) ? amc_api_coll_run(comm, &a, nb ? req : NULL) : status;
}

int amc_gather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
               amc_comm_t comm)
{
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

    AMC_API_REQ_CHECK(req, nb);
    amc_api_args_init(&a, coll, sendbuf, recvbuf, count, dt, -1, -1);
    status = amc_api_coll_check(comm, &a, AMC_IN_PLACE_SEND, (size_t)size, 1, 1);
    return (status == AMC_SUCCESS) ? amc_api_coll_run(comm, &a, nb ? req : NULL) : status;
}

int amc_allgather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm)
{
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
    return amc_api_all(AMC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, comm, NULL, 0);
}

int amc_ialltoall(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm, amc_request_t *req)
{
    return amc_api_all(AMC_COLL_ALLTOALL, sendbuf, recvbuf, count, dt, comm, req, 1);
}
