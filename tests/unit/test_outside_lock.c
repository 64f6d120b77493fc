/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies and reductions outside the control lock (am_coll/coll/coll_engine.c): a
 * reduction of AMC_DEFER_BYTES or more runs with the communicator's lock
 * released, whether it is local work (an allreduce's at N=2), a received
 * message's that was pulled (rendezvous), one that found its receive ready
 * (eager, in the arrival handler), or one that came early (from its copy);
 * a smaller one runs under the lock. And an instance cancelled while such a
 * reduction runs does not complete its request until the reduction ended:
 * the caller's buffer is written until then.
 *
 * A user op (commutative, aligned: eligible) records, for every call, whether
 * the reducing rank's control lock was held. The world is unthreaded, so the
 * test makes the locks live itself to see them taken.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"

#include <stdlib.h>
#include <string.h>

#define N     2
#define BIG   4096 /* ints: 16 KiB, pulled at the default AMC_RNDV_THRESH */
#define MID   2048 /* ints: 8 KiB, eager */
#define SMALL 16

enum { CASE_ALLREDUCE, CASE_REDUCE }; /* a local reduce act; receive-and-reduce */
enum { ORDER_TOGETHER, ORDER_EARLY };  /* every rank starts before delivery; the
                                        * reducing rank starts after its data came */

static amc_comm_t    g_comm[N];
static int32_t      *g_out[N];
static size_t        g_count;
static unsigned long g_big_locked, g_big_free, g_small_locked, g_small_free;
static amc_request_t g_cancel_req;  /* the one cancelled from inside the op */
static int           g_cancel_rank = -1, g_complete_inside = -1;
static const int     g_live        = 1;

static int lock_held(amc_spinlock_t *l)
{
#ifdef AMC_SPINLOCK_IS_MUTEX
    if (pthread_mutex_trylock(&l->mutex) != 0) {
        return 1;
    }
    pthread_mutex_unlock(&l->mutex);
    return 0;
#else
    return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) != 0;
#endif
}

static void sum_fn(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const int32_t *a = in;
    int32_t       *b = inout;
    int            rank, held = 0;
    size_t         i;

    (void)dt;
    for (rank = 0; rank < N; rank++) {
        if ((b >= g_out[rank]) && (b < g_out[rank] + g_count)) {
            held = lock_held(&g_comm[rank]->ctrl.lock);
            break;
        }
    }
    CHECK(rank < N, "the op reduces into a rank's receive buffer");
    if (count * sizeof(int32_t) >= 4096) {
        held ? g_big_locked++ : g_big_free++;
    } else {
        held ? g_small_locked++ : g_small_free++;
    }
    if ((rank == g_cancel_rank) && !held) {
        /* a timeout or an error cancels the instance meanwhile */
        amc_coll_ctrl_t *ctrl = &g_comm[rank]->ctrl;
        amc_coll_slot_t *slot;

        /* the newest instance: the reduction may run inside the start call,
         * before the test has its request */
        amc_spin_lock(&ctrl->lock);
        slot = ctrl->window[(ctrl->seq_next - 1) & (AMC_CTRL_WINDOW - 1)];
        CHECK((slot != NULL) && (slot->inst != NULL) && (slot->req != NULL), "the instance");
        if ((slot != NULL) && (slot->inst != NULL) && (slot->req != NULL)) {
            g_cancel_req = slot->req;
            amc_coll_cancel(slot->inst, AMC_ERR_TIMEOUT);
            g_complete_inside = (slot->req == NULL) || amc_request_is_complete(g_cancel_req);
        }
        amc_spin_unlock(&ctrl->lock);
        g_cancel_rank = -1;
    }
    for (i = 0; i < count; i++) {
        b[i] += a[i];
    }
}

static void make_world(amc_test_world_t *w)
{
    amc_config_t cfg;
    int          rank;

    amc_config_defaults(&cfg);
    cfg.log_level = -1;
    /* the binomial tree's root 0, in place, receives-and-reduces its child */
    strcpy(cfg.alg[AMC_COLL_REDUCE], "binomial");
    CHECK(amc_test_world_create(w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        g_comm[rank]                 = amc_test_world_comm(w, rank);
        g_comm[rank]->ctrl.lock.live = &g_live;
    }
}

static void start(int kind, int rank, int32_t **in, amc_op_t op, amc_request_t *req)
{
    int rc;

    if (kind == CASE_ALLREDUCE) {
        rc = amc_iallreduce(in[rank], g_out[rank], g_count, AMC_INT32, op, g_comm[rank], req);
    } else {
        rc = amc_ireduce((rank == 0) ? AMC_IN_PLACE : in[rank], (rank == 0) ? g_out[0] : NULL,
                         g_count, AMC_INT32, op, 0, g_comm[rank], req);
    }
    CHECK(rc == AMC_SUCCESS, "start on rank %d: %s", rank, amc_strerror(rc));
}

/* One collective; cancel: the reducing rank's instance is cancelled from
 * inside its first reduction outside the lock. */
static void run_case(int kind, int order, size_t count, int cancel)
{
    static const char *const kinds[]  = { "allreduce", "reduce (receive-and-reduce)" };
    static const char *const orders[] = { "together", "data early" };
    amc_test_world_t         w;
    amc_request_t            reqs[N];
    amc_op_t                 op;
    int32_t                 *in[N];
    int                      status[N], rank, late = (kind == CASE_ALLREDUCE) ? 1 : 0;
    size_t                   i;

    make_world(&w);
    CHECK(amc_op_create(sum_fn, 1, &op) == AMC_SUCCESS, "op");
    g_count = count;
    for (rank = 0; rank < N; rank++) {
        in[rank]    = malloc(count * sizeof(int32_t));
        g_out[rank] = malloc(count * sizeof(int32_t));
        for (i = 0; i < count; i++) {
            in[rank][i]    = (int32_t)(i * 3 + (size_t)rank);
            g_out[rank][i] = in[rank][i]; /* the in-place root's vector */
        }
    }
    g_big_locked = g_big_free = g_small_locked = g_small_free = 0;
    g_complete_inside = -1;
    g_cancel_rank     = cancel ? late : -1;

    /* the reducing rank ("late") starts last */
    start(kind, 1 - late, in, op, &reqs[1 - late]);
    if (order == ORDER_EARLY) {
        while (amc_fake_deliver(w.fabric, 0) > 0) {
        }
    }
    start(kind, late, in, op, &reqs[late]);
    CHECK(amc_test_world_drive(&w, reqs, status), "%s, %s, %zu ints: did not finish",
          kinds[kind], orders[order], count);

    if (cancel) {
        CHECK(g_complete_inside == 0, "%s, %s, %zu ints: cancelled while reducing outside the "
              "lock, the request %s", kinds[kind], orders[order], count,
              (g_complete_inside < 0) ? "was never cancelled"
                                      : "completed before the reduction ended");
        CHECK(status[late] == AMC_ERR_TIMEOUT, "%s, %s, %zu ints: the cancelled rank got %s",
              kinds[kind], orders[order], count, amc_strerror(status[late]));
    } else {
        for (rank = 0; rank < N; rank++) {
            CHECK(status[rank] == AMC_SUCCESS, "%s, %s, %zu ints, rank %d: %s", kinds[kind],
                  orders[order], count, rank, amc_strerror(status[rank]));
            if ((kind == CASE_REDUCE) && (rank != 0)) {
                continue;
            }
            for (i = 0; i < count; i++) {
                if (g_out[rank][i] != (int32_t)(i * 6 + 1)) {
                    CHECK(0, "%s, %s, %zu ints, rank %d [%zu] = %d", kinds[kind],
                          orders[order], count, rank, i, (int)g_out[rank][i]);
                    break;
                }
            }
        }
        if (count * sizeof(int32_t) >= 4096) {
            CHECK((g_big_free >= 1) && (g_big_locked == 0),
                  "%s, %s, %zu ints: %lu reductions outside the lock, %lu under it",
                  kinds[kind], orders[order], count, g_big_free, g_big_locked);
        } else {
            CHECK((g_small_locked >= 1) && (g_small_free == 0),
                  "%s, %s, %zu ints: small reductions under the lock %lu, outside %lu",
                  kinds[kind], orders[order], count, g_small_locked, g_small_free);
        }
    }
    for (rank = 0; rank < N; rank++) {
        free(in[rank]);
        free(g_out[rank]);
    }
    amc_op_free(&op);
    amc_test_world_destroy(&w);
}

int main(void)
{
    static const size_t counts[] = { SMALL, MID, BIG, 4 * BIG };
    int                 kind, order, c;

    for (kind = CASE_ALLREDUCE; kind <= CASE_REDUCE; kind++) {
        for (order = ORDER_TOGETHER; order <= ORDER_EARLY; order++) {
            for (c = 0; c < (int)(sizeof(counts) / sizeof(counts[0])); c++) {
                run_case(kind, order, counts[c], 0);
                if (counts[c] != SMALL) {
                    run_case(kind, order, counts[c], 1);
                }
            }
        }
    }
    return amc_test_summary("test_outside_lock");
}
