/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A communicator's last blocking call that ran on the barrier's rounds, as
 * checked: the same call again (a loop's next) skips the checks, the
 * argument struct's fill and the choice's key, and goes to the rounds as
 * that one did.
 *
 * Why: at N=2 a small collective's call is on the critical path twice
 * (both ranks' sends wait for it), and those steps were ~120 of an 8 B
 * allreduce's ~760 instructions a call (callgrind), the rounds' own work
 * ~500.
 *
 * Why it is the same call: the checks and the choice read only the call's
 * arguments compared here (collective, both buffers as passed, count,
 * datatype, op, root; a vector form's own count, its arrays as passed and
 * the values it reads of them, which the caller may rewrite between calls),
 * the communicator's size and rank and the configuration, fixed for its
 * life, and whether the API is live, tested again. The rounds only take
 * predefined ops and datatypes, whose checks never change, and vector
 * forms at 2 ranks only: two values an array. Only while threads cannot
 * meet (as the rounds' sends at the entry): nothing else reads or writes
 * the memo then.
 */
#ifndef AMC_API_MEMO_H
#define AMC_API_MEMO_H

#include "am_coll/alg/alg_rounds.h"
#include "am_coll/api/api.h"
#include "am_coll/barrier/barrier_entry.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"
#include "am_coll/context/wait.h"
#include "base/spinlock.h"
#include "base/status.h"

#include <stdlib.h>

/* A vector form's arrays, in the memo's order. */
enum {
    AMC_API_MEMO_SCOUNTS,
    AMC_API_MEMO_SDISPLS,
    AMC_API_MEMO_RCOUNTS,
    AMC_API_MEMO_RDISPLS,
    AMC_API_MEMO_NVEC
};

typedef struct amc_api_memo {
    const void     *sendbuf; /* as the call passed them (AMC_IN_PLACE kept) */
    const void     *recvbuf;
    const size_t   *vec_p[AMC_API_MEMO_NVEC]; /* a vector form's arrays as passed */
    size_t          vec[AMC_API_MEMO_NVEC][2]; /* their values, where vec_read says */
    unsigned        vec_read; /* bit i: the call reads vec_p[i] (its checks, the rounds) */
    amc_coll_args_t args;     /* as checked and started (the sentinel made NULL) */
} amc_api_memo_t;

/* The arrays a vector form's call reads at 2 ranks: the root's of a
 * gatherv or scatterv (the other rank's are not significant and may be
 * anything), every rank's of the others (alltoallv's send side unless in
 * place). */
static inline unsigned amc_api_memo_vec_read(amc_comm_t comm, const amc_coll_args_t *a)
{
    const unsigned s = (1u << AMC_API_MEMO_SCOUNTS) | (1u << AMC_API_MEMO_SDISPLS);
    const unsigned r = (1u << AMC_API_MEMO_RCOUNTS) | (1u << AMC_API_MEMO_RDISPLS);

    switch (a->coll) {
    case AMC_COLL_GATHERV:   return (comm->rank == a->root) ? r : 0;
    case AMC_COLL_SCATTERV:  return (comm->rank == a->root) ? s : 0;
    case AMC_COLL_ALLTOALLV: return r | (a->in_place ? 0 : s);
    case AMC_COLL_ALLGATHERV: return r;
    default:                 return 1u << AMC_API_MEMO_RCOUNTS; /* reduce_scatter */
    }
}

/* comm's memo where it is this call (op and root as amc_api_args_init's
 * caller sets them), else NULL. */
static inline __attribute__((always_inline)) amc_api_memo_t *
amc_api_memo_find(amc_comm_t comm, uint8_t coll, const void *sendbuf, const void *recvbuf,
                  size_t count, amc_datatype_t dt, amc_op_t op, int root)
{
    amc_api_memo_t *m;

    if ((amc_api_check_comm(comm) != AMC_SUCCESS) || ((m = comm->api_memo) == NULL) ||
        amc_lock_live(comm->ctx->lock_live_p)) {
        return NULL;
    }
    return ((m->args.coll == coll) && (m->sendbuf == sendbuf) && (m->recvbuf == recvbuf) &&
            (m->args.count == count) && (m->args.dt == dt) && (m->args.op == op) &&
            (m->args.root == root)) ? m : NULL;
}

/* amc_api_memo_find of a vector form: also its own counts (0 where it has
 * none), its arrays as passed and the values it reads of them. */
static inline __attribute__((always_inline)) amc_api_memo_t *
amc_api_memo_find_v(amc_comm_t comm, uint8_t coll, const void *sendbuf, const void *recvbuf,
                    size_t scount, size_t rcount, const size_t *scounts, const size_t *sdispls,
                    const size_t *rcounts, const size_t *rdispls, amc_datatype_t dt,
                    amc_op_t op, int root)
{
    amc_api_memo_t *m = amc_api_memo_find(comm, coll, sendbuf, recvbuf, 0, dt, op, root);
    const size_t   *p[AMC_API_MEMO_NVEC] = { scounts, sdispls, rcounts, rdispls };
    int             i;

    if ((m == NULL) || (m->args.scount != scount) || (m->args.rcount != rcount)) {
        return NULL;
    }
    for (i = 0; i < AMC_API_MEMO_NVEC; i++) {
        if ((p[i] != m->vec_p[i]) ||
            (((m->vec_read >> i) & 1) &&
             ((p[i][0] != m->vec[i][0]) || (p[i][1] != m->vec[i][1])))) {
            return NULL;
        }
    }
    return m;
}

/* The memo's call again, blocking: amc_api_coll_run's, its start known. */
static inline __attribute__((always_inline)) int amc_api_memo_run(amc_comm_t comm,
                                                                  const amc_api_memo_t *m)
{
    struct amc_request req;
    int                status;

    amc_request_init(&req, comm, 0);
    amc_context_count(&comm->ctx->api_memo);
    status = amc_barrier_enter(comm, &req, &m->args);
    return (status == AMC_SUCCESS) ? amc_request_wait_one(&req) : status;
}

/* A blocking call that ran on the rounds by the kept choice: remembered
 * (where memory for it is short, it is not). */
static inline void amc_api_memo_keep(amc_comm_t comm, const void *sendbuf, const void *recvbuf,
                                     const amc_coll_args_t *a)
{
    amc_api_memo_t *m = comm->api_memo;
    int             i;

    if ((amc_alg_rounds_vector(a->coll) && (comm->size != 2)) ||
        amc_lock_live(comm->ctx->lock_live_p)) {
        return; /* (a vector form runs on the rounds at 2 ranks only) */
    }
    if (m == NULL) {
        m = malloc(sizeof(*m));
        if (m == NULL) {
            return;
        }
        comm->api_memo = m;
    }
    m->sendbuf  = sendbuf;
    m->recvbuf  = recvbuf;
    m->args     = *a;
    m->vec_p[AMC_API_MEMO_SCOUNTS] = a->scounts;
    m->vec_p[AMC_API_MEMO_SDISPLS] = a->sdispls;
    m->vec_p[AMC_API_MEMO_RCOUNTS] = a->rcounts;
    m->vec_p[AMC_API_MEMO_RDISPLS] = a->rdispls;
    m->vec_read = amc_alg_rounds_vector(a->coll) ? amc_api_memo_vec_read(comm, a) : 0;
    for (i = 0; i < AMC_API_MEMO_NVEC; i++) {
        if ((m->vec_read >> i) & 1) {
            m->vec[i][0] = m->vec_p[i][0];
            m->vec[i][1] = m->vec_p[i][1];
        }
    }
}

#endif
