/*
 * Receive-and-reduce outside the control lock (am_coll/coll_engine.c): the
 * reduction of a received message of AMC_DEFER_BYTES or more, pulled
 * (rendezvous) or eager and in place, runs with the communicator's lock
 * released; a smaller one runs under it. And an instance cancelled while such
 * a reduction runs does not complete its request until the reduction ended:
 * the caller's buffer is written until then.
 *
 * A user op (commutative, aligned: eligible) records, for every call, whether
 * the reducing rank's control lock was held. The world is unthreaded, so the
 * test makes the locks live itself to see them taken.
 */
#include "tests/unit/harness.h"
#include "am_coll/coll.h"
#include "am_coll/comm.h"
#include "am_coll/request.h"

#include <string.h>

#define N     2
#define BIG   4096 /* ints: 16 KiB, pulled at the default AMC_RNDV_THRESH */
#define MID   2048 /* ints: 8 KiB, eager */
#define SMALL 16

static amc_comm_t    g_comm[N];
static int32_t      *g_out[N];
static size_t        g_count;
static unsigned long g_big_locked, g_big_free, g_small_locked, g_small_free;
static amc_request_t g_cancel_req;  /* cancel this one from inside the op, once */
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

        amc_spin_lock(&ctrl->lock);
        amc_coll_cancel(g_cancel_req->slot->inst, AMC_ERR_TIMEOUT);
        g_complete_inside = amc_request_is_complete(g_cancel_req);
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
    CHECK(amc_test_world_create(w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        g_comm[rank]                = amc_test_world_comm(w, rank);
        g_comm[rank]->ctrl.lock.live = &g_live;
    }
}

/* Delivers and tests until every rank's request is done. */
static void drive(amc_test_world_t *w, amc_request_t *reqs, int *status)
{
    int rank, flag, pending, guard = 0;

    for (rank = 0; rank < N; rank++) {
        status[rank] = -1;
    }
    do {
        pending = 0;
        (void)amc_fake_deliver(w->fabric, 0);
        for (rank = 0; rank < N; rank++) {
            if (status[rank] == -1) {
                flag         = 0;
                status[rank] = amc_test(&reqs[rank], &flag);
                if ((status[rank] == AMC_SUCCESS) && !flag) {
                    status[rank] = -1;
                    pending++;
                }
            }
        }
    } while (pending && (++guard < 100000));
    CHECK(guard < 100000, "the allreduce did not finish");
}

/* Every rank starts, then the fabric delivers: each receive is ready when
 * its message lands. Returns each rank's status. */
static void allreduce_all(amc_test_world_t *w, amc_op_t op, size_t count, int32_t **in,
                          amc_request_t *reqs, int *status)
{
    int rank;

    g_count = count;
    for (rank = 0; rank < N; rank++) {
        CHECK(amc_iallreduce(in[rank], g_out[rank], count, AMC_INT32, op, g_comm[rank],
                             &reqs[rank]) == AMC_SUCCESS, "start");
    }
    drive(w, reqs, status);
}

static void test_where_reductions_run(void)
{
    static const size_t counts[] = { SMALL, MID, BIG, 4 * BIG };
    amc_test_world_t    w;
    amc_request_t       reqs[N];
    amc_op_t            op;
    int32_t            *in[N];
    int                 status[N], rank, c;
    size_t              i;

    make_world(&w);
    CHECK(amc_op_create(sum_fn, 1, &op) == AMC_SUCCESS, "op");
    for (c = 0; c < (int)(sizeof(counts) / sizeof(counts[0])); c++) {
        for (rank = 0; rank < N; rank++) {
            in[rank]    = malloc(counts[c] * sizeof(int32_t));
            g_out[rank] = malloc(counts[c] * sizeof(int32_t));
            for (i = 0; i < counts[c]; i++) {
                in[rank][i] = (int32_t)(i * 3 + (size_t)rank);
            }
        }
        g_big_locked = g_big_free = g_small_locked = g_small_free = 0;
        allreduce_all(&w, op, counts[c], in, reqs, status);
        for (rank = 0; rank < N; rank++) {
            CHECK(status[rank] == AMC_SUCCESS, "count %zu rank %d: %s", counts[c], rank,
                  amc_strerror(status[rank]));
            for (i = 0; i < counts[c]; i++) {
                if (g_out[rank][i] != (int32_t)(i * 6 + 1)) {
                    CHECK(0, "count %zu rank %d [%zu] = %d", counts[c], rank, i,
                          (int)g_out[rank][i]);
                    break;
                }
            }
        }
        if (counts[c] * sizeof(int32_t) >= 4096) {
            CHECK((g_big_free >= N) && (g_big_locked == 0),
                  "count %zu: %lu reductions outside the lock, %lu under it", counts[c],
                  g_big_free, g_big_locked);
        } else {
            CHECK((g_small_locked >= N) && (g_small_free == 0),
                  "count %zu: small reductions under the lock (%lu), outside (%lu)", counts[c],
                  g_small_locked, g_small_free);
        }
        for (rank = 0; rank < N; rank++) {
            free(in[rank]);
            free(g_out[rank]);
        }
    }
    amc_op_free(&op);
    amc_test_world_destroy(&w);
}

/* Cancelled while its reduction runs outside the lock: the request stays
 * pending until the reduction ended, then fails. */
static void test_cancel_during_reduction(void)
{
    static const size_t counts[] = { MID, BIG };
    amc_test_world_t    w;
    amc_request_t       reqs[N];
    amc_op_t            op;
    int32_t            *in[N];
    int                 status[N], rank, c;

    for (c = 0; c < 2; c++) {
        make_world(&w);
        CHECK(amc_op_create(sum_fn, 1, &op) == AMC_SUCCESS, "op");
        for (rank = 0; rank < N; rank++) {
            in[rank]    = calloc(counts[c], sizeof(int32_t));
            g_out[rank] = calloc(counts[c], sizeof(int32_t));
        }
        g_cancel_rank     = 1;
        g_complete_inside = -1;
        g_count           = counts[c];
        /* rank 1 starts first, so that its request is known to the op */
        CHECK(amc_iallreduce(in[1], g_out[1], counts[c], AMC_INT32, op, g_comm[1], &reqs[1]) ==
              AMC_SUCCESS, "start 1");
        g_cancel_req = reqs[1];
        CHECK(amc_iallreduce(in[0], g_out[0], counts[c], AMC_INT32, op, g_comm[0], &reqs[0]) ==
              AMC_SUCCESS, "start 0");
        drive(&w, reqs, status);
        CHECK(g_complete_inside == 0, "count %zu: cancelled while reducing outside the lock, "
              "the request %s", counts[c],
              (g_complete_inside < 0) ? "was never cancelled" : "completed before the reduction ended");
        CHECK(status[1] == AMC_ERR_TIMEOUT, "count %zu: the cancelled rank got %s", counts[c],
              amc_strerror(status[1]));
        for (rank = 0; rank < N; rank++) {
            free(in[rank]);
            free(g_out[rank]);
        }
        amc_op_free(&op);
        amc_test_world_destroy(&w);
    }
}

int main(void)
{
    test_where_reductions_run();
    test_cancel_during_reduction();
    return amc_test_summary("test_outside_lock");
}
