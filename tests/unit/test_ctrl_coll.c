/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small allreduce and allgather on the barrier's rounds
 * (am_coll/barrier/ctrl_coll.c), over the fake fabric:
 *  - allreduce: every predefined op and datatype, 1 to 64 bytes, in place
 *    or not, at N = 2, 4, 8, 16, with ranks entering and messages (and send
 *    completions) arriving in random orders: each rank's result equals the
 *    ops applied in rank order, bit for bit on every rank, and no schedule
 *    is built (the engine's path would cache one);
 *  - allgather and alltoall: every block size whose rounds (N/2 blocks)
 *    fit in 64 bytes, in place or not, the same orders: every rank holds
 *    the right blocks in rank order; one byte more takes the engine;
 *  - bcast, reduce, gather, scatter, scan and exscan at N=2 (one message
 *    from the rank with the data to the one that needs it): every root,
 *    1 to 64 bytes, in place or not, the two ranks entering and the
 *    messages arriving in random orders, with eager tokens and with none
 *    (every message then asks for an answer): results right, the
 *    receiver's buffer alone written, no schedule built, tokens conserved;
 *    a sender with a token finishes before the receiver calls, one without
 *    waits for it; 65 bytes and N = 4 take the engine;
 *  - gatherv, scatterv, allgatherv, alltoallv and reduce_scatter (sum)
 *    at N=2: random counts of 1 to 64 bytes a block (the two directions
 *    of an exchange differing),
 *    displacements out of order with gaps, every root, in place or not,
 *    with tokens and without, random orders: results right, nothing
 *    written past the blocks, no schedule built, a sender on a token done
 *    first, tokens conserved; a non-root's vectors are NULL (never read);
 *    a receiver that takes one element more or less fails with
 *    AMC_ERR_TRUNCATE (so does a sender waiting for its answer), and where
 *    the counts part the ranks between the rounds and the engine the
 *    receiver fails and nothing hangs; a block of 65 bytes or of none
 *    takes the engine on both ranks, results right;
 *  - N = 3, 5, 6 and 7 (Bruck's rounds, the N blocks in twice a round):
 *    allreduce (every op and datatype), allgather, alltoall and
 *    reduce_scatter_block (Bruck's alltoall, then the N blocks reduced in
 *    rank order; Bruck and recursive halving asked for) of every size that
 *    fits, one byte more on the engine; counts that differ fail on every
 *    rank; a reduce_scatter_block at N = 5 on the rounds;
 *  - AMC_FAST_MAX=0, 65 bytes, a user op and N = 3 past Bruck's bound take
 *    the engine;
 *  - at N=2, 4 and 8 all of the above again with AMC_FAST_MAX at 1024
 *    (what a round message carries, AMC_CTRL_PAY_MAX): 1 to 1024 bytes on
 *    the rounds, 1025 on the engine, a forged message of 1025 bytes
 *    refused at N = 2 and 4;
 *  - up to 12 instances outstanding at once, completed out of order;
 *  - ranks whose counts differ, a rank on the engine, a rank in a barrier
 *    or in the other collective, a freed request, forged messages: every
 *    rank's call ends with an error (none waits for ever, none returns a
 *    wrong result), the caller's buffer is untouched once the request is
 *    gone, and the communicator still runs allreduce and barrier
 *    afterwards.
 */
#include "am_coll/api/config_read.h"
#include "am_coll/alg/alg_rounds.h"
#include "tests/unit/harness.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/op.h"
#include "handlers/wire.h"

#include <stdio.h>
#include <string.h>

#define MAX_N     16
#define MAX_BYTES 64

/* The most bytes a round message carries in this pass: AMC_FAST_MAX of the
 * worlds made; MAX_BYTES first, then AMC_CTRL_PAY_MAX (main). */
static size_t max_bytes = MAX_BYTES;
#define ROW       4352 /* a rank's buffer: room for blocks past AMC_CTRL_PAY_MAX, the engine's too */
#define OUTSTANDING 12

static amc_test_rng_t rng;
static const char    *alltoall_alg = ""; /* AMC_ALLTOALL_ALG of the worlds made next */
static const char    *rsb_alg      = ""; /* AMC_REDUCE_SCATTER_BLOCK_ALG likewise */

static size_t dt_size(amc_datatype_t dt)
{
    size_t size = 0;

    (void)amc_datatype_size(dt, &size);
    return size;
}

/* Inputs whose reduction is exact in any order: integers any bits (their
 * ops wrap), floating point small integers (1 or 2 for a product). */
static void fill(amc_datatype_t dt, amc_op_t op, void *buf, size_t count)
{
    uint8_t *b = buf;
    size_t   i;

    for (i = 0; i < count * dt_size(dt); i++) {
        b[i] = (uint8_t)amc_test_rng_next(&rng);
    }
    for (i = 0; i < count; i++) {
        int v = (op == AMC_PROD) ? 1 + (int)amc_test_rng_below(&rng, 2)
                                 : (int)amc_test_rng_below(&rng, 9) - 4;

        if (dt == AMC_FLOAT) {
            ((float *)buf)[i] = (float)v;
        } else if (dt == AMC_DOUBLE) {
            ((double *)buf)[i] = (double)v;
        }
    }
}

/* ref = in[0] op in[1] op ... op in[n-1], MPI's order. */
static void reference(amc_datatype_t dt, amc_op_t op, uint8_t in[][ROW], int n,
                      size_t count, uint8_t *ref)
{
    uint8_t tmp[ROW];
    size_t  bytes = count * dt_size(dt);
    int     r;

    memcpy(ref, in[0], bytes);
    for (r = 1; r < n; r++) {
        memcpy(tmp, in[r], bytes);
        amc_op_reduce(op, dt, ref, tmp, count); /* tmp = ref op in[r] */
        memcpy(ref, tmp, bytes);
    }
}

static void world_new(amc_test_world_t *w, int n, unsigned fast_max,
                      amc_fake_completion_t completion)
{
    amc_config_t cfg;
    int          rc;

    amc_config_defaults(&cfg);
    cfg.log_level                = -1;
    cfg.oversub_linear_max_ranks = 0; /* recursive doubling, as on a node with a core each */
    cfg.fast_max       = fast_max;
    snprintf(cfg.alg[AMC_COLL_ALLTOALL], sizeof(cfg.alg[0]), "%s", alltoall_alg);
    snprintf(cfg.alg[AMC_COLL_REDUCE_SCATTER_BLOCK], sizeof(cfg.alg[0]), "%s", rsb_alg);
    rc = amc_test_world_create(w, n, completion, &cfg);
    CHECK(rc == AMC_SUCCESS, "world of %d: %s", n, amc_strerror(rc));
}

/* Runs steps until every started request finished: a step enters a rank
 * that has not entered yet (enter[r] set, started[r] clear) or delivers one
 * deliverable event, chosen at random when rand_order, else in order. */
static int drive(amc_test_world_t *w, amc_request_t *reqs, const int *enter, int *started,
                 int (*start)(int rank, void *arg), void *arg, int rand_order, int *status)
{
    int    rank, flag, pending, waiting, guard;
    size_t ready;

    for (rank = 0; rank < w->n; rank++) {
        status[rank] = -1;
    }
    for (guard = 0; guard < 200000; guard++) {
        waiting = 0;
        for (rank = 0; rank < w->n; rank++) {
            waiting += enter[rank] && !started[rank];
        }
        ready = amc_fake_deliverable(w->fabric);
        if (rand_order ? (waiting > 0) && (amc_test_rng_below(&rng, ready + waiting) < (size_t)waiting)
                       : (waiting > 0)) {
            size_t pick = amc_test_rng_below(&rng, (size_t)waiting);

            for (rank = 0; rank < w->n; rank++) {
                if (enter[rank] && !started[rank] && (pick-- == 0)) {
                    int rc = start(rank, arg);

                    CHECK(rc == AMC_SUCCESS, "start at rank %d: %s", rank, amc_strerror(rc));
                    started[rank] = 1;
                    break;
                }
            }
        } else if (ready > 0) {
            amc_fake_deliver(w->fabric, rand_order ? amc_test_rng_below(&rng, ready) : 0);
        }
        pending = 0;
        for (rank = 0; rank < w->n; rank++) {
            if (started[rank] && (status[rank] == -1)) {
                flag         = 0;
                status[rank] = amc_test(&reqs[rank], &flag);
                if ((status[rank] == AMC_SUCCESS) && !flag) {
                    status[rank] = -1;
                }
            }
            pending += enter[rank] && (status[rank] == -1);
        }
        if (!pending) {
            return 1;
        }
        if ((ready == 0) && (waiting == 0)) {
            return 0; /* nothing left to happen: a hang */
        }
    }
    return 0;
}

typedef struct {
    amc_test_world_t *w;
    amc_request_t    *reqs;
    uint8_t         (*in)[ROW];
    uint8_t         (*out)[ROW];
    size_t           *count;      /* per rank */
    amc_datatype_t    dt;
    amc_op_t          op;
    int               in_place;
    int               coll;         /* AMC_COLL_ALLREDUCE or AMC_COLL_ALLGATHER */
    int               barrier_rank; /* this rank calls a barrier instead; -1: none */
    int               other_rank;   /* this rank calls the other of the two; -1: none */
} call_t;

static int start_call(int rank, void *arg)
{
    call_t    *c     = arg;
    amc_comm_t comm  = amc_test_world_comm(c->w, rank);
    size_t     bytes = c->count[rank] * dt_size(c->dt);

    if (rank == c->barrier_rank) {
        return amc_ibarrier(comm, &c->reqs[rank]);
    }
    if (c->coll == AMC_COLL_REDUCE_SCATTER_BLOCK) {
        if (c->in_place) {
            memcpy(c->out[rank], c->in[rank], (size_t)c->w->n * bytes);
            return amc_ireduce_scatter_block(AMC_IN_PLACE, c->out[rank], c->count[rank], c->dt,
                                             c->op, comm, &c->reqs[rank]);
        }
        return amc_ireduce_scatter_block(c->in[rank], c->out[rank], c->count[rank], c->dt, c->op,
                                         comm, &c->reqs[rank]);
    }
    if (c->coll == AMC_COLL_ALLTOALL) {
        if (c->in_place) {
            memcpy(c->out[rank], c->in[rank], (size_t)c->w->n * bytes);
            return amc_ialltoall(AMC_IN_PLACE, c->out[rank], c->count[rank], c->dt, comm,
                                 &c->reqs[rank]);
        }
        return amc_ialltoall(c->in[rank], c->out[rank], c->count[rank], c->dt, comm,
                             &c->reqs[rank]);
    }
    if ((c->coll == AMC_COLL_ALLGATHER) != (rank == c->other_rank)) {
        if (c->in_place) {
            memcpy(c->out[rank] + (size_t)rank * bytes, c->in[rank], bytes);
            return amc_iallgather(AMC_IN_PLACE, c->out[rank], c->count[rank], c->dt, comm,
                                  &c->reqs[rank]);
        }
        return amc_iallgather(c->in[rank], c->out[rank], c->count[rank], c->dt, comm,
                              &c->reqs[rank]);
    }
    if (c->in_place) {
        memcpy(c->out[rank], c->in[rank], c->count[rank] * dt_size(c->dt));
        return amc_iallreduce(AMC_IN_PLACE, c->out[rank], c->count[rank], c->dt, c->op, comm,
                              &c->reqs[rank]);
    }
    return amc_iallreduce(c->in[rank], c->out[rank], c->count[rank], c->dt, c->op, comm,
                          &c->reqs[rank]);
}

/* Every rank makes its call (count each), all entering up front or at
 * random; status[r] is rank r's result. 0 if a rank never finished. */
static int run(amc_test_world_t *w, call_t *c, int rand_order, int *status)
{
    amc_request_t reqs[MAX_N];
    int           enter[MAX_N], started[MAX_N], rank;

    c->w    = w;
    c->reqs = reqs;
    for (rank = 0; rank < w->n; rank++) {
        enter[rank]   = 1;
        started[rank] = 0;
    }
    return drive(w, reqs, enter, started, start_call, c, rand_order, status);
}

/* All ranks agree, results right; returns 1 if so. */
static int check_results(amc_test_world_t *w, call_t *c, const int *status, const char *what)
{
    uint8_t ref[ROW];
    size_t  bytes = c->count[0] * dt_size(c->dt);
    int     rank, ok = 1;

    if (c->coll == AMC_COLL_REDUCE_SCATTER_BLOCK) {
        static uint8_t blocks[MAX_N][ROW];

        for (rank = 0; rank < w->n; rank++) {
            int src;

            for (src = 0; src < w->n; src++) {
                memcpy(blocks[src], c->in[src] + (size_t)rank * bytes, bytes);
            }
            reference(c->dt, c->op, blocks, w->n, c->count[0], ref);
            ok &= (status[rank] == AMC_SUCCESS) && (memcmp(c->out[rank], ref, bytes) == 0);
            CHECK(status[rank] == AMC_SUCCESS, "%s: rank %d: %s", what, rank,
                  amc_strerror(status[rank]));
            CHECK(memcmp(c->out[rank], ref, bytes) == 0, "%s: rank %d result differs", what,
                  rank);
        }
        return ok;
    }
    if (c->coll == AMC_COLL_ALLTOALL) {
        for (rank = 0; rank < w->n; rank++) {
            int src;

            for (src = 0; src < w->n; src++) {
                memcpy(ref + (size_t)src * bytes, c->in[src] + (size_t)rank * bytes, bytes);
            }
            ok &= (status[rank] == AMC_SUCCESS) &&
                  (memcmp(c->out[rank], ref, (size_t)w->n * bytes) == 0);
            CHECK(status[rank] == AMC_SUCCESS, "%s: rank %d: %s", what, rank,
                  amc_strerror(status[rank]));
            CHECK(memcmp(c->out[rank], ref, (size_t)w->n * bytes) == 0,
                  "%s: rank %d result differs", what, rank);
        }
        return ok;
    }
    if (c->coll == AMC_COLL_ALLGATHER) {
        for (rank = 0; rank < w->n; rank++) {
            memcpy(ref + (size_t)rank * bytes, c->in[rank], bytes);
        }
        bytes *= (size_t)w->n;
    } else {
        reference(c->dt, c->op, c->in, w->n, c->count[0], ref);
    }
    for (rank = 0; rank < w->n; rank++) {
        ok &= (status[rank] == AMC_SUCCESS) && (memcmp(c->out[rank], ref, bytes) == 0);
        CHECK(status[rank] == AMC_SUCCESS, "%s: rank %d: %s", what, rank,
              amc_strerror(status[rank]));
        CHECK(memcmp(c->out[rank], ref, bytes) == 0, "%s: rank %d result differs", what, rank);
    }
    return ok;
}

static int no_schedule(amc_test_world_t *w)
{
    int rank, none = 1;

    for (rank = 0; rank < w->n; rank++) {
        none &= (amc_test_world_comm(w, rank)->sched_cache == NULL);
    }
    return none;
}

static void call_init(call_t *c, uint8_t (*in)[ROW], uint8_t (*out)[ROW],
                      size_t *count, int n, size_t cnt, amc_datatype_t dt, amc_op_t op)
{
    int rank;

    *c = (call_t){ .in = in, .out = out, .count = count, .dt = dt, .op = op,
                   .coll = AMC_COLL_ALLREDUCE, .barrier_rank = -1, .other_rank = -1 };
    for (rank = 0; rank < n; rank++) {
        count[rank] = cnt;
        fill(dt, op, in[rank], cnt);
        memset(out[rank], 0xee, ROW);
    }
}

/* The most bytes of an allreduce (blocks 0) or of an allgather's or
 * alltoall's block on the rounds of n ranks: a round carries max_bytes,
 * N/2 blocks on a power of two; Bruck's N blocks fit in twice that. */
static size_t round_bytes(int n, int whole)
{
    if ((n & (n - 1)) != 0) {
        return 2 * max_bytes / (size_t)n;
    }
    return whole ? max_bytes : max_bytes / (size_t)(n / 2);
}

/* Every op and datatype the rules allow, every size in bytes up to 64. */
static void test_results(int n, amc_fake_completion_t completion, unsigned long *cases)
{
    static uint8_t   in[MAX_N][ROW], out[MAX_N][ROW];
    size_t           count[MAX_N];
    amc_test_world_t w;
    call_t           c;
    int              status[MAX_N], dt, op, in_place;
    size_t           cnt, size, max;
    char             what[128];

    world_new(&w, n, (unsigned)max_bytes, completion);
    for (dt = 0; dt <= (int)AMC_DOUBLE; dt++) {
        size = dt_size((amc_datatype_t)dt);
        for (op = 0; op <= (int)AMC_BXOR; op++) {
            if (amc_op_kernel((amc_op_t)op, (amc_datatype_t)dt) == NULL) {
                continue;
            }
            max = round_bytes(n, 1) / size;
            for (cnt = 1; cnt <= max;
                 cnt = (cnt < 4) ? cnt + 1 : ((cnt * 2 > max) && (cnt < max)) ? max : cnt * 2) {
                for (in_place = 0; in_place < 2; in_place++) {
                    call_init(&c, in, out, count, n, cnt, (amc_datatype_t)dt, (amc_op_t)op);
                    c.in_place = in_place;
                    snprintf(what, sizeof(what), "n=%d %s %s count %zu%s",
                             n, amc_datatype_name((amc_datatype_t)dt),
                             amc_op_name((amc_op_t)op), cnt, in_place ? " in place" : "");
                    CHECK(run(&w, &c, (int)((*cases) % 3 != 0), status), "%s: hangs", what);
                    check_results(&w, &c, status, what);
                    (*cases)++;
                }
            }
        }
    }
    CHECK(no_schedule(&w), "n=%d: a schedule was built: the engine ran", n);
    CHECK(amc_fake_header_violations(w.fabric) == 0, "n=%d: header changed in flight", n);
    amc_test_world_destroy(&w);
}

static void user_sum(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    size_t i;

    (void)dt;
    for (i = 0; i < count; i++) {
        /* wraps as AMC_SUM's loop does */
        ((int32_t *)inout)[i] = (int32_t)((uint32_t)((int32_t *)inout)[i] +
                                          (uint32_t)((const int32_t *)in)[i]);
    }
}

/* Allgather and alltoall: every block size whose rounds fit (N/2 blocks of
 * up to 64 bytes in all), in place or not, random orders. An alltoall on
 * more than 2 ranks runs here where Bruck is asked for (the linear one
 * default there sends every block at once). */
static void test_blocks(int coll, int n, unsigned long *cases)
{
    static const amc_datatype_t dts[] = { AMC_UINT8, AMC_INT16, AMC_INT32, AMC_DOUBLE };
    static uint8_t   in[MAX_N][ROW], out[MAX_N][ROW];
    size_t           count[MAX_N], cnt, max;
    amc_test_world_t w;
    call_t           c;
    int              status[MAX_N], d, in_place;
    char             what[96];

    world_new(&w, n, (unsigned)max_bytes, AMC_FAKE_COMPLETE_ON_SEND);
    for (d = 0; d < 4; d++) {
        max = round_bytes(n, 0) / dt_size(dts[d]);
        for (cnt = 1; cnt <= max; cnt = (cnt < 3) ? cnt + 1 : ((cnt * 2 > max) && (cnt < max)) ? max : cnt * 2) {
            for (in_place = 0; in_place < 2; in_place++) {
                call_init(&c, in, out, count, n, cnt * (size_t)n, dts[d],
                          (cnt & 1) ? AMC_SUM : AMC_MAX);
                count[0]   = cnt; /* the fill covered n blocks; a call has count each */
                for (int r = 1; r < n; r++) {
                    count[r] = cnt;
                }
                c.coll     = coll;
                c.in_place = in_place;
                snprintf(what, sizeof(what), "%s n=%d %s count %zu%s", amc_coll_name(coll), n,
                         amc_datatype_name(dts[d]), cnt, in_place ? " in place" : "");
                CHECK(run(&w, &c, (int)((*cases) % 3 != 0), status), "%s: hangs", what);
                check_results(&w, &c, status, what);
                (*cases)++;
            }
        }
    }
    CHECK(no_schedule(&w), "%s n=%d: a schedule was built: the engine ran", amc_coll_name(coll),
          n);
    amc_test_world_destroy(&w);

    /* one byte more in a round than fits: the engine */
    world_new(&w, n, (unsigned)max_bytes, AMC_FAKE_COMPLETE_ON_SEND);
    cnt = round_bytes(n, 0) + 1;
    call_init(&c, in, out, count, n, cnt * (size_t)n, AMC_UINT8, AMC_SUM);
    for (d = 0; d < n; d++) {
        count[d] = cnt;
    }
    c.coll = coll;
    snprintf(what, sizeof(what), "%s n=%d past the bound", amc_coll_name(coll), n);
    CHECK(run(&w, &c, 1, status), "%s: hangs", what);
    check_results(&w, &c, status, what);
    CHECK(!no_schedule(&w), "%s ran on the barrier's rounds", what);
    amc_test_world_destroy(&w);
}

/* What takes the engine instead: a schedule is built, results alike. */
static void test_engine_cases(void)
{
    static uint8_t   in[MAX_N][ROW], out[MAX_N][ROW];
    size_t           count[MAX_N];
    amc_test_world_t w;
    call_t           c;
    int              status[MAX_N];
    amc_op_t         user;

    /* turned off */
    world_new(&w, 4, 0, AMC_FAKE_COMPLETE_ON_DELIVERY);
    call_init(&c, in, out, count, 4, 2,
              AMC_INT32, AMC_SUM);
    CHECK(run(&w, &c, 1, status), "fast max 0: hangs");
    check_results(&w, &c, status, "fast max 0");
    CHECK(!no_schedule(&w), "AMC_FAST_MAX=0 still ran on the barrier's rounds");
    amc_test_world_destroy(&w);

    /* a user op */
    world_new(&w, 2, 64, AMC_FAKE_COMPLETE_ON_DELIVERY);
    CHECK(amc_op_create(user_sum, 1, &user) == AMC_SUCCESS, "op create");
    call_init(&c, in, out, count, 2, 3, AMC_INT32, AMC_SUM);
    c.op = user;
    CHECK(run(&w, &c, 1, status), "user op: hangs");
    c.op = AMC_SUM; /* the reference's */
    check_results(&w, &c, status, "user op");
    CHECK(!no_schedule(&w), "a user op ran on the barrier's rounds");
    CHECK(amc_op_free(&user) == AMC_SUCCESS, "op free");
    amc_test_world_destroy(&w);

    /* N = 3 past Bruck's bound: 3 x 48 bytes over twice a round's 64 */
    world_new(&w, 3, 64, AMC_FAKE_COMPLETE_ON_DELIVERY);
    call_init(&c, in, out, count, 3, 6,
              AMC_INT64, AMC_MAX);
    CHECK(run(&w, &c, 1, status), "n=3: hangs");
    check_results(&w, &c, status, "n=3");
    CHECK(!no_schedule(&w), "n=3 past Bruck's bound ran on the barrier's rounds");
    amc_test_world_destroy(&w);

    /* a reduce_scatter_block off a power of two: Bruck's alltoall, then its
     * N blocks reduced in rank order */
    rsb_alg = "recursive_halving";
    world_new(&w, 5, 64, AMC_FAKE_COMPLETE_ON_DELIVERY);
    call_init(&c, in, out, count, 5, 5, AMC_INT32, AMC_SUM);
    for (int r = 0; r < 5; r++) {
        count[r] = 1;
    }
    c.coll = AMC_COLL_REDUCE_SCATTER_BLOCK;
    CHECK(run(&w, &c, 1, status), "rsb n=5: hangs");
    check_results(&w, &c, status, "rsb n=5");
    CHECK(no_schedule(&w), "a reduce_scatter_block at n=5 did not run on the barrier's rounds");
    amc_test_world_destroy(&w);
    rsb_alg = "";
}

/* Delivers everything the fabric holds in random order, then tests req:
 * 1 if it finished (its status in *status), for a first caller alone. */
static int deliver_then_test(amc_test_world_t *w, amc_request_t *req, int *status)
{
    int flag = 0;

    while (amc_fake_deliverable(w->fabric) > 0) {
        amc_fake_deliver(w->fabric, amc_test_rng_below(&rng, amc_fake_deliverable(w->fabric)));
    }
    *status = amc_test(req, &flag);
    return flag;
}

/* Delivers in random order and tests the n requests until none is pending
 * (status[r] each one's end); 0 if some never finished. */
static int drive_random(amc_test_world_t *w, amc_request_t *reqs, int n, int *status)
{
    int guard = 0, pending, rank, flag;

    do {
        pending = 0;
        if (amc_fake_deliverable(w->fabric) > 0) {
            amc_fake_deliver(w->fabric, amc_test_rng_below(&rng, amc_fake_deliverable(w->fabric)));
        }
        for (rank = 0; rank < n; rank++) {
            if (reqs[rank] != AMC_REQUEST_NULL) {
                flag         = 0;
                status[rank] = amc_test(&reqs[rank], &flag);
                pending     += !flag && (status[rank] == AMC_SUCCESS);
            }
        }
    } while (pending && (++guard < 100000));
    return !pending;
}

/* One rooted call at N=2 on both ranks, entered and delivered in a random
 * order; checks the results against a reference. tokens: AMC_EAGER_TOKENS.
 * Sends complete at once or later, by chance: where at once, a sender
 * that calls first on a token sends now and takes no slot
 * (am_coll/barrier/ctrl_send_now.c). */
static void rooted_case(int coll, int root, amc_datatype_t dt, size_t count, int in_place,
                        unsigned tokens, int n, int want_ctrl)
{
    int                   locks      = amc_test_threaded_locks();
    amc_fake_completion_t completion = amc_test_rng_below(&rng, 2) ? AMC_FAKE_COMPLETE_ON_SEND
                                                                   : AMC_FAKE_COMPLETE_LATER;
    static const char *names[] = { [AMC_COLL_BCAST] = "bcast", [AMC_COLL_REDUCE] = "reduce",
                                   [AMC_COLL_GATHER] = "gather", [AMC_COLL_SCATTER] = "scatter",
                                   [AMC_COLL_SCAN] = "scan", [AMC_COLL_EXSCAN] = "exscan" };
    uint8_t          in[4][ROW], out[4][ROW], want[4][ROW];
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    reqs[4];
    size_t           size = dt_size(dt), bytes = count * size, nd;
    int              status[4], order[4], rank, i, k, early = -1;
    const char      *name = names[coll];

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level    = -1;
    cfg.fast_max     = (unsigned)max_bytes;
    cfg.eager_tokens = tokens;
    CHECK(amc_test_world_create(&w, n, completion, &cfg) == AMC_SUCCESS, "world");
    for (rank = 0; rank < n; rank++) {
        for (k = 0; k < ROW; k++) {
            in[rank][k]  = (uint8_t)amc_test_rng_next(&rng);
            out[rank][k] = (uint8_t)(0xa0 + rank);
        }
        memcpy(want[rank], out[rank], ROW);
    }
    /* the reference, from the inputs */
    for (rank = 0; rank < n; rank++) {
        switch (coll) {
        case AMC_COLL_BCAST:
            memcpy(want[rank], in[root], bytes);
            break;
        case AMC_COLL_GATHER:
            if (rank == root) {
                for (k = 0; k < n; k++) {
                    memcpy(want[rank] + (size_t)k * bytes, in[k], bytes);
                }
            }
            break;
        case AMC_COLL_SCATTER:
            memcpy(want[rank], in[root] + (size_t)rank * bytes, bytes);
            break;
        case AMC_COLL_REDUCE:
        case AMC_COLL_SCAN:
        case AMC_COLL_EXSCAN:
            nd = (coll == AMC_COLL_REDUCE) ? (size_t)n : (size_t)rank + (coll == AMC_COLL_SCAN);
            if (((coll == AMC_COLL_REDUCE) && (rank != root)) || (nd == 0)) {
                break;
            }
            memcpy(want[rank], in[0], bytes);
            for (k = 1; k < (int)nd; k++) {
                amc_op_kernel(AMC_SUM, dt)(in[k], want[rank], count);
            }
            break;
        default:
            break;
        }
    }
    /* in place: the input where MPI puts it */
    if (in_place) {
        for (rank = 0; rank < n; rank++) {
            if (coll == AMC_COLL_GATHER && rank == root) {
                memcpy(out[rank] + (size_t)rank * bytes, in[rank], bytes);
            } else if ((coll == AMC_COLL_REDUCE && rank == root) || (coll == AMC_COLL_SCAN) ||
                       (coll == AMC_COLL_EXSCAN)) {
                memcpy(out[rank], in[rank], bytes);
                if ((coll == AMC_COLL_EXSCAN) && (rank == 0)) {
                    memcpy(want[0], in[0], bytes); /* rank 0 keeps its input */
                }
            } else if ((coll == AMC_COLL_SCATTER) && (rank == root)) {
                memcpy(want[rank], out[rank], ROW); /* its block stays in sendbuf */
            }
        }
    }
    if (coll == AMC_COLL_BCAST) {
        memcpy(out[root], in[root], bytes);
        memcpy(want[root], out[root], ROW);
    }
    for (rank = 0; rank < n; rank++) {
        order[rank]  = rank;
        status[rank] = AMC_SUCCESS;
    }
    if (amc_test_rng_below(&rng, 2)) {
        order[0] = 1;
        order[1] = 0;
    }
    for (i = 0; i < n; i++) {
        amc_comm_t  c  = amc_test_world_comm(&w, order[i]);
        int         r  = order[i];
        const void *sb = in[r];
        void       *rb = out[r];
        int         ip = in_place && ((coll == AMC_COLL_SCAN) || (coll == AMC_COLL_EXSCAN) ||
                                      (r == root));
        int         rc;

        switch (coll) {
        case AMC_COLL_BCAST:
            rc = amc_ibcast(rb, count, dt, root, c, &reqs[r]);
            break;
        case AMC_COLL_REDUCE:
            rc = amc_ireduce(ip ? AMC_IN_PLACE : sb, rb, count, dt, AMC_SUM, root, c, &reqs[r]);
            break;
        case AMC_COLL_GATHER:
            rc = amc_igather(ip ? AMC_IN_PLACE : sb, rb, count, dt, root, c, &reqs[r]);
            break;
        case AMC_COLL_SCATTER:
            rc = amc_iscatter(sb, ip ? AMC_IN_PLACE : rb, count, dt, root, c, &reqs[r]);
            break;
        case AMC_COLL_SCAN:
            rc = amc_iscan(ip ? AMC_IN_PLACE : sb, rb, count, dt, AMC_SUM, c, &reqs[r]);
            break;
        default:
            rc = amc_iexscan(ip ? AMC_IN_PLACE : sb, rb, count, dt, AMC_SUM, c, &reqs[r]);
            break;
        }
        CHECK(rc == AMC_SUCCESS, "%s start rank %d", name, r);
        if ((i == 0) && want_ctrl) {
            /* the first to call, alone: a sender on a token is done at once
             * once its send completed, a receiver or a sender without one is not */
            early = deliver_then_test(&w, &reqs[r], &status[r]);
            CHECK(status[r] == AMC_SUCCESS, "%s test", name);
        }
    }
    CHECK(drive_random(&w, reqs, n, status), "%s root %d %zu B in place %d tokens %u: hangs",
          name, root, bytes, in_place, tokens);
    for (rank = 0; rank < n; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "%s rank %d: %s", name, rank, amc_strerror(status[rank]));
        if ((coll == AMC_COLL_SCATTER) && in_place && (rank == root)) {
            continue; /* nothing of its buffer is written */
        }
        if ((coll == AMC_COLL_EXSCAN) && (rank == 0) && !in_place) {
            CHECK(memcmp(out[0], want[0], ROW) == 0, "exscan: rank 0's buffer was written");
            continue;
        }
        CHECK(memcmp(out[rank], want[rank], ROW) == 0,
              "%s root %d %s x %zu in place %d tokens %u N=%d: rank %d's result (or bytes past it)",
              name, root, amc_datatype_name(dt), count, in_place, tokens, n, rank);
    }
    CHECK(no_schedule(&w) == want_ctrl, "%s %zu B N=%d: %s", name, bytes, n,
          want_ctrl ? "a schedule was built: the engine ran" : "the engine did not run");
    if (want_ctrl && (early >= 0)) {
        int first = order[0], sends = amc_test_world_comm(&w, first)->rank ==
            ((coll == AMC_COLL_BCAST || coll == AMC_COLL_SCATTER) ? root
             : (coll == AMC_COLL_REDUCE || coll == AMC_COLL_GATHER) ? (root ^ 1) : 0);

        CHECK(early == (sends && (tokens > 0)), "%s: the first caller (rank %d, %s, %u tokens) "
              "was %sdone before the other called", name, first, sends ? "sender" : "receiver",
              tokens, early ? "" : "not ");
        /* with the locks on (AMCTEST_LOCKS) nothing sends now */
        CHECK((amc_test_world_comm(&w, first)->ctrl.free_slots == NULL) ==
                  (early && (completion == AMC_FAKE_COMPLETE_ON_SEND) && !locks),
              "%s: the first caller (rank %d, %s, sends complete %s) %s a slot", name, first,
              sends ? "sender" : "receiver",
              (completion == AMC_FAKE_COMPLETE_ON_SEND) ? "at once" : "later",
              (amc_test_world_comm(&w, first)->ctrl.free_slots == NULL) ? "never took"
                                                                         : "took");
        /* a transport that never sends now is asked once, by a sender */
        CHECK(!sends || (amc_test_world_comm(&w, first)->never_now ==
                         ((completion != AMC_FAKE_COMPLETE_ON_SEND) && !locks)),
              "%s: the sender (rank %d, sends complete %s) %s asking to send now", name, first,
              (completion == AMC_FAKE_COMPLETE_ON_SEND) ? "at once" : "later",
              amc_test_world_comm(&w, first)->never_now ? "stopped" : "goes on");
    }
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    if (tokens > 0) {
        CHECK(amc_flow_tokens(&w.ctx[0]->flow, 1) + amc_flow_owed(&w.ctx[1]->flow, 0) == tokens &&
              amc_flow_tokens(&w.ctx[1]->flow, 0) + amc_flow_owed(&w.ctx[0]->flow, 1) == tokens,
              "%s: tokens conserved", name);
    }
    amc_test_world_destroy(&w);
}

static void test_rooted(unsigned long *cases)
{
    static const int            colls[] = { AMC_COLL_BCAST, AMC_COLL_REDUCE, AMC_COLL_GATHER,
                                            AMC_COLL_SCATTER, AMC_COLL_SCAN, AMC_COLL_EXSCAN };
    static const amc_datatype_t dts[]   = { AMC_UINT8, AMC_INT32, AMC_DOUBLE };
    static const unsigned       toks[]  = { 64, 0 };
    unsigned                    c, d, t;
    int                         root, ip;
    size_t                      count;

    for (c = 0; c < sizeof(colls) / sizeof(colls[0]); c++) {
        for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
            for (t = 0; t < 2; t++) {
                for (root = 0; root < 2; root++) {
                    for (ip = 0; ip < 2; ip++) {
                        for (count = 1; count * dt_size(dts[d]) <= max_bytes;
                             count = count * 2 + (count == 1)) {
                            rooted_case(colls[c], root, dts[d], count, ip, toks[t], 2, 1);
                            (*cases)++;
                        }
                        rooted_case(colls[c], root, dts[d], max_bytes / dt_size(dts[d]), ip,
                                    toks[t], 2, 1);
                    }
                }
            }
        }
        /* one byte past what a message carries, and N = 4: the engine */
        rooted_case(colls[c], 1, AMC_UINT8, max_bytes + 1, 0, 64, 2, 0);
        rooted_case(colls[c], 1, AMC_INT32, 2, 0, 64, 4, 0);
    }
}

/* One byte past the most a round message carries (max_bytes): the
 * engine. fast_max: AMC_FAST_MAX (past AMC_CTRL_PAY_MAX it acts as it). */
static void test_too_big(unsigned fast_max)
{
    static uint8_t   in[2][ROW], out[2][ROW];
    amc_request_t    reqs[2];
    amc_test_world_t w;
    size_t           bytes = max_bytes + 1;
    int              status[2], rank;

    world_new(&w, 2, fast_max, AMC_FAKE_COMPLETE_ON_DELIVERY);
    for (rank = 0; rank < 2; rank++) {
        memset(in[rank], rank + 1, bytes);
        CHECK(amc_iallreduce(in[rank], out[rank], bytes, AMC_UINT8, AMC_SUM,
                             amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "start");
    }
    CHECK(amc_test_world_drive(&w, reqs, status), "%zu bytes: hangs", bytes);
    for (rank = 0; rank < 2; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) && (out[rank][0] == 3) && (out[rank][bytes - 1] == 3),
              "%zu bytes at rank %d", bytes, rank);
    }
    CHECK(!no_schedule(&w), "%zu bytes ran on the barrier's rounds", bytes);
    amc_test_world_destroy(&w);
}

/* OUTSTANDING non-blocking calls per rank at once, each rank starting them
 * in order, messages in random order; completed in reverse. */
static void test_outstanding(int n)
{
    static uint32_t  in[OUTSTANDING][MAX_N][4], out[OUTSTANDING][MAX_N][4];
    amc_request_t    reqs[OUTSTANDING][MAX_N];
    amc_test_world_t w;
    uint32_t         sum;
    int              k, rank, i, rc, flag, guard;

    world_new(&w, n, 64, AMC_FAKE_COMPLETE_ON_SEND);
    for (k = 0; k < OUTSTANDING; k++) {
        for (rank = 0; rank < n; rank++) {
            for (i = 0; i < 4; i++) {
                in[k][rank][i] = (uint32_t)(k * 1000 + rank * 10 + i);
            }
            rc = amc_iallreduce(in[k][rank], out[k][rank], 4, AMC_UINT32, AMC_SUM,
                                amc_test_world_comm(&w, rank), &reqs[k][rank]);
            CHECK(rc == AMC_SUCCESS, "outstanding %d at rank %d: %s", k, rank, amc_strerror(rc));
            if (amc_fake_deliverable(w.fabric) > 0) {
                amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, amc_fake_deliverable(w.fabric)));
            }
        }
    }
    for (guard = 0; (amc_fake_deliverable(w.fabric) > 0) && (guard < 100000); guard++) {
        amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, amc_fake_deliverable(w.fabric)));
    }
    for (k = OUTSTANDING - 1; k >= 0; k--) {
        for (rank = 0; rank < n; rank++) {
            flag = 0;
            rc   = amc_test(&reqs[k][rank], &flag);
            CHECK((rc == AMC_SUCCESS) && flag, "outstanding %d at rank %d: %s, done %d", k, rank,
                  amc_strerror(rc), flag);
            for (i = 0; i < 4; i++) {
                sum = (uint32_t)(n * (k * 1000 + i) + 10 * n * (n - 1) / 2);
                CHECK(out[k][rank][i] == sum, "outstanding %d rank %d [%d]: %u, want %u", k, rank,
                      i, out[k][rank][i], sum);
            }
        }
    }
    CHECK(no_schedule(&w), "outstanding: a schedule was built");
    amc_test_world_destroy(&w);
}

/* After an error: allreduce and barrier on the same communicator work. */
static void check_usable(amc_test_world_t *w, const char *what)
{
    static uint8_t in[MAX_N][ROW], out[MAX_N][ROW];
    size_t         count[MAX_N];
    amc_request_t  reqs[MAX_N];
    call_t         c;
    int            status[MAX_N], rank, round;

    for (round = 0; round < 3; round++) {
        call_init(&c, in, out, count, w->n, 3, AMC_INT32, AMC_SUM);
        CHECK(run(w, &c, 1, status), "%s: the next allreduce hangs", what);
        check_results(w, &c, status, what);
        for (rank = 0; rank < w->n; rank++) {
            CHECK(amc_ibarrier(amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS,
                  "%s: barrier", what);
        }
        CHECK(amc_test_world_drive(w, reqs, status), "%s: the next barrier hangs", what);
        for (rank = 0; rank < w->n; rank++) {
            CHECK(status[rank] == AMC_SUCCESS, "%s: barrier at rank %d: %s", what, rank,
                  amc_strerror(status[rank]));
        }
    }
}

/* One rank's call differs from the others' small collective: its count
 * (odd_count, on the barrier's rounds too or, over 64 bytes, on the
 * engine), or it calls a barrier (odd_count 0; the rank moves with the
 * seed). Every rank fails with want (any error if 0), none hangs, none gets
 * a result, and the communicator works afterwards; random orders but the
 * first. */
static void test_mismatch(int coll, int n, int odd, size_t odd_count, int want)
{
    static uint8_t   in[MAX_N][ROW], out[MAX_N][ROW];
    size_t           count[MAX_N];
    amc_test_world_t w;
    call_t           c;
    int              status[MAX_N], rank, seed;
    char             what[96];

    for (seed = 0; seed < (amc_test_quick() ? 10 : 60); seed++) {
        world_new(&w, n, (unsigned)max_bytes, AMC_FAKE_COMPLETE_ON_DELIVERY);
        call_init(&c, in, out, count, n, 2, AMC_INT32, AMC_SUM);
        c.coll = coll;
        if (odd_count == SIZE_MAX) {
            c.other_rank = (odd + seed) % n;
            snprintf(what, sizeof(what), "n=%d %s, rank %d the other (seed %d)", n,
                     amc_coll_name(coll), c.other_rank, seed);
        } else if (odd_count != 0) {
            count[odd] = odd_count;
            snprintf(what, sizeof(what), "n=%d %s rank %d count %zu (seed %d)", n,
                     amc_coll_name(coll), odd, odd_count, seed);
        } else {
            c.barrier_rank = (odd + seed) % n;
            snprintf(what, sizeof(what), "n=%d barrier at rank %d (seed %d)", n, c.barrier_rank,
                     seed);
        }
        CHECK(run(&w, &c, seed > 0, status), "%s: a rank never finished", what);
        for (rank = 0; rank < n; rank++) {
            CHECK((want != 0) ? (status[rank] == want) : (status[rank] != AMC_SUCCESS),
                  "%s: rank %d: %s", what, rank,
                  (status[rank] == AMC_SUCCESS) ? "succeeded" : amc_strerror(status[rank]));
        }
        check_usable(&w, what);
        amc_test_world_destroy(&w);
    }
}

/* A v-form's call at N=2 (vector_case): cnt[s][d] elements from rank s to
 * rank d (gatherv reads column root, scatterv row root, allgatherv has
 * cnt[s][0] == cnt[s][1], reduce_scatter's recvcounts are cnt[0][0] and
 * cnt[1][1], summed); odd: this rank's call takes odd_add elements
 * more from the other than the other sends (-1: none), or with odd_send
 * (a rooted one's sender) sends that many more than the other takes. */
typedef struct {
    int            coll, root, in_place, odd, odd_send;
    size_t         odd_add;
    unsigned       tokens;
    amc_datatype_t dt;
    size_t         cnt[2][2];
} vcase_t;

/* Two blocks of c[0] and c[1] elements in a random order with random gaps
 * (0 to 2 elements) before and between them: displacements that are not
 * the blocks' prefix sums. */
static void vlayout(const size_t c[2], size_t d[2])
{
    int first = (int)amc_test_rng_below(&rng, 2);

    d[first]     = amc_test_rng_below(&rng, 3);
    d[first ^ 1] = d[first] + c[first] + amc_test_rng_below(&rng, 3);
}

/* Both ranks call v->coll, entered and delivered in a random order.
 * want_ctrl: the call fits the rounds (no schedule may be built), else the
 * engine must run it. Without odd, results right on both ranks, the
 * buffers written nowhere else; with it, the rank whose call takes a
 * different length fails with AMC_ERR_TRUNCATE (on the rounds; an error
 * where the ranks' paths part), so does a sender without a token that
 * waits for its answer, and nothing hangs. */
static void vector_case(const vcase_t *v, int want_ctrl)
{
    static const char *names[] = { [AMC_COLL_GATHERV] = "gatherv",
                                   [AMC_COLL_SCATTERV] = "scatterv",
                                   [AMC_COLL_ALLGATHERV] = "allgatherv",
                                   [AMC_COLL_ALLTOALLV] = "alltoallv",
                                   [AMC_COLL_REDUCE_SCATTER] = "reduce_scatter" };
    uint8_t          in[2][ROW], out[2][ROW], want[2][ROW];
    size_t           scnt[2][2], rcnt[2][2], sd[2][2], rd[2][2];
    size_t           sz = dt_size(v->dt);
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_fake_completion_t completion;
    amc_request_t    reqs[2];
    const char      *name = names[v->coll];
    int              status[2], order[2], rank, k, i, early = -1, rooted;
    char             what[200];

    rooted = (v->coll == AMC_COLL_GATHERV) || (v->coll == AMC_COLL_SCATTERV);
    snprintf(what, sizeof(what), "%s root %d %s counts 0>0 %zu 0>1 %zu 1>0 %zu 1>1 %zu in place "
             "%d tokens %u odd %d+%zu", name, v->root, amc_datatype_name(v->dt), v->cnt[0][0],
             v->cnt[0][1], v->cnt[1][0], v->cnt[1][1], v->in_place, v->tokens, v->odd,
             v->odd_add);
    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level    = -1;
    cfg.fast_max     = (unsigned)max_bytes;
    cfg.eager_tokens = v->tokens;
    /* sends complete at once or later, by chance (rooted_case) */
    completion = amc_test_rng_below(&rng, 2) ? AMC_FAKE_COMPLETE_ON_SEND : AMC_FAKE_COMPLETE_LATER;
    CHECK(amc_test_world_create(&w, 2, completion, &cfg) == AMC_SUCCESS, "world");
    for (rank = 0; rank < 2; rank++) {
        for (k = 0; k < ROW; k++) {
            in[rank][k]  = (uint8_t)amc_test_rng_next(&rng);
            out[rank][k] = (uint8_t)(0xa0 + rank);
        }
    }
    /* each rank's own view of the counts, and its own displacements */
    for (rank = 0; rank < 2; rank++) {
        for (k = 0; k < 2; k++) {
            scnt[rank][k] = v->cnt[rank][k];
            rcnt[rank][k] = v->cnt[k][rank] +
                            (((v->odd == rank) && (k != rank) && !v->odd_send) ? v->odd_add : 0);
            scnt[rank][k] += ((v->odd == rank) && (k != rank) && v->odd_send) ? v->odd_add : 0;
            if (v->coll == AMC_COLL_REDUCE_SCATTER) { /* one vector, the same on both */
                rcnt[rank][k] = v->cnt[k][k] + (((v->odd == rank) && (k == rank)) ? v->odd_add : 0);
            }
        }
        if (v->coll == AMC_COLL_REDUCE_SCATTER) {
            fill(v->dt, AMC_SUM, in[rank], rcnt[rank][0] + rcnt[rank][1]);
        }
        vlayout(scnt[rank], sd[rank]);
        vlayout(rcnt[rank], rd[rank]);
    }
    /* in place: the input where MPI puts it (alltoallv's counts are symmetric then) */
    for (rank = 0; v->in_place && (rank < 2); rank++) {
        if ((v->coll == AMC_COLL_GATHERV) && (rank == v->root)) {
            memcpy(out[rank] + rd[rank][rank] * sz, in[rank], scnt[rank][rank] * sz);
        } else if (v->coll == AMC_COLL_ALLGATHERV) {
            memcpy(out[rank] + rd[rank][rank] * sz, in[rank], scnt[rank][rank] * sz);
        } else if (v->coll == AMC_COLL_REDUCE_SCATTER) {
            memcpy(out[rank], in[rank], (rcnt[rank][0] + rcnt[rank][1]) * sz);
        } else if (v->coll == AMC_COLL_ALLTOALLV) {
            for (k = 0; k < 2; k++) {
                memcpy(out[rank] + rd[rank][k] * sz, in[rank] + sd[rank][k] * sz,
                       scnt[rank][k] * sz);
            }
        }
    }
    memcpy(want, out, sizeof(want));
    /* the reference: block src -> rank where rank receives */
    for (rank = 0; rank < 2; rank++) {
        for (k = 0; k < 2; k++) {
            switch (v->coll) {
            case AMC_COLL_GATHERV:
                if (rank == v->root) {
                    memcpy(want[rank] + rd[rank][k] * sz, in[k], v->cnt[k][rank] * sz);
                }
                break;
            case AMC_COLL_SCATTERV:
                if ((k == v->root) && !(v->in_place && (rank == v->root))) {
                    memcpy(want[rank], in[k] + sd[k][rank] * sz, v->cnt[k][rank] * sz);
                }
                break;
            case AMC_COLL_ALLGATHERV:
                memcpy(want[rank] + rd[rank][k] * sz, in[k], v->cnt[k][rank] * sz);
                break;
            case AMC_COLL_REDUCE_SCATTER: /* rank's block of every input, summed */
                if (k == 0) {
                    memcpy(want[rank], in[0] + (rank ? v->cnt[0][0] : 0) * sz,
                           v->cnt[rank][rank] * sz);
                } else {
                    amc_op_kernel(AMC_SUM, v->dt)(in[1] + (rank ? v->cnt[0][0] : 0) * sz,
                                                  want[rank], v->cnt[rank][rank]);
                }
                break;
            default:
                memcpy(want[rank] + rd[rank][k] * sz, in[k] + sd[k][rank] * sz,
                       v->cnt[k][rank] * sz);
                break;
            }
        }
    }
    order[0] = (int)amc_test_rng_below(&rng, 2);
    order[1] = order[0] ^ 1;
    for (i = 0; i < 2; i++) {
        amc_comm_t  c    = amc_test_world_comm(&w, order[i]);
        int         r    = order[i];
        int         ip   = v->in_place && (!rooted || (r == v->root));
        int         rc;

        switch (v->coll) {
        case AMC_COLL_GATHERV: /* a non-root's recvcounts and displs are not read */
            rc = amc_igatherv(ip ? AMC_IN_PLACE : in[r], scnt[r][v->root], out[r],
                              (r == v->root) ? rcnt[r] : NULL, (r == v->root) ? rd[r] : NULL,
                              v->dt, v->root, c, &reqs[r]);
            break;
        case AMC_COLL_SCATTERV:
            rc = amc_iscatterv(in[r], (r == v->root) ? scnt[r] : NULL,
                               (r == v->root) ? sd[r] : NULL, ip ? AMC_IN_PLACE : out[r],
                               rcnt[r][v->root], v->dt, v->root, c, &reqs[r]);
            break;
        case AMC_COLL_ALLGATHERV:
            rc = amc_iallgatherv(ip ? AMC_IN_PLACE : in[r], scnt[r][0], out[r], rcnt[r], rd[r],
                                 v->dt, c, &reqs[r]);
            break;
        case AMC_COLL_REDUCE_SCATTER:
            rc = amc_ireduce_scatter(ip ? AMC_IN_PLACE : in[r], out[r], rcnt[r], v->dt, AMC_SUM,
                                     c, &reqs[r]);
            break;
        default:
            rc = amc_ialltoallv(ip ? AMC_IN_PLACE : in[r], scnt[r], sd[r], out[r], rcnt[r],
                                rd[r], v->dt, c, &reqs[r]);
            break;
        }
        CHECK(rc == AMC_SUCCESS, "%s: start rank %d: %s", what, r, amc_strerror(rc));
        status[r] = AMC_SUCCESS;
        if ((i == 0) && want_ctrl && (v->odd < 0)) {
            /* the first to call, alone: only a sender on a token is done */
            early = deliver_then_test(&w, &reqs[r], &status[r]);
            CHECK(status[r] == AMC_SUCCESS, "%s: test", what);
        }
    }
    CHECK(drive_random(&w, reqs, 2, status), "%s: hangs", what);
    if (v->odd >= 0) {
        int sees  = v->odd_send ? (v->odd ^ 1) : v->odd; /* where the length differs */
        int other = sees ^ 1, sends = rooted && amc_alg_rounds_sends(v->coll, other, v->root);

        /* on the rounds: a length that differs where it arrives; calls that
         * part (one of them past the limit): any error where it arrives */
        CHECK((v->odd_add == 1) ? (status[sees] == AMC_ERR_TRUNCATE)
                                : (status[sees] != AMC_SUCCESS),
              "%s: rank %d: %s", what, sees, amc_strerror(status[sees]));
        if (v->odd_add == 1) {
            CHECK(status[other] == ((sends && (v->tokens == 0)) ? AMC_ERR_TRUNCATE : AMC_SUCCESS),
                  "%s: rank %d (%s): %s", what, other,
                  sends ? "the sender" : "its message arrived whole",
                  amc_strerror(status[other]));
        }
        while (amc_fake_deliverable(w.fabric) > 0) {
            amc_fake_deliver(w.fabric, 0);
        }
        /* a failed message on the rounds still gives its token back (where
         * the paths part, the engine's slot drops it, as gather's) */
        CHECK((v->tokens == 0) || (v->odd_add != 1) ||
              ((amc_flow_tokens(&w.ctx[0]->flow, 1) + amc_flow_owed(&w.ctx[1]->flow, 0) ==
                v->tokens) &&
               (amc_flow_tokens(&w.ctx[1]->flow, 0) + amc_flow_owed(&w.ctx[0]->flow, 1) ==
                v->tokens)), "%s: tokens conserved", what);
        check_usable(&w, what);
        amc_test_world_destroy(&w);
        return;
    }
    for (rank = 0; rank < 2; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "%s: rank %d: %s", what, rank,
              amc_strerror(status[rank]));
        /* in place a reduce_scatter's input past its result is MPI's to spoil */
        CHECK(memcmp(out[rank], want[rank], ((v->coll == AMC_COLL_REDUCE_SCATTER) && v->in_place)
                                                ? v->cnt[rank][rank] * sz : ROW) == 0,
              "%s N=2: rank %d's result (or bytes past it)", what, rank);
    }
    CHECK(no_schedule(&w) == want_ctrl, "%s: %s", what,
          want_ctrl ? "a schedule was built: the engine ran" : "the engine did not run");
    if (want_ctrl && (early >= 0)) {
        int sends = rooted && amc_alg_rounds_sends(v->coll, order[0], v->root);

        CHECK(early == (sends && (v->tokens > 0)), "%s: the first caller (rank %d) was %sdone "
              "before the other called", what, order[0], early ? "" : "not ");
        CHECK((amc_test_world_comm(&w, order[0])->ctrl.free_slots == NULL) ==
                  (early && (completion == AMC_FAKE_COMPLETE_ON_SEND) &&
                   !amc_test_threaded_locks()),
              "%s: the first caller (rank %d, sends complete %s) %s a slot", what, order[0],
              (completion == AMC_FAKE_COMPLETE_ON_SEND) ? "at once" : "later",
              (amc_test_world_comm(&w, order[0])->ctrl.free_slots == NULL) ? "never took"
                                                                            : "took");
    }
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    if (v->tokens > 0) {
        CHECK(amc_flow_tokens(&w.ctx[0]->flow, 1) + amc_flow_owed(&w.ctx[1]->flow, 0) ==
                  v->tokens &&
              amc_flow_tokens(&w.ctx[1]->flow, 0) + amc_flow_owed(&w.ctx[0]->flow, 1) ==
                  v->tokens, "%s: tokens conserved", what);
    }
    amc_test_world_destroy(&w);
}

/* Random counts of 1 .. 64 bytes a block (max: the most elements), shaped
 * as v->coll reads them. */
static void vector_counts(vcase_t *v, size_t max)
{
    int s, d;

    for (s = 0; s < 2; s++) {
        for (d = 0; d < 2; d++) {
            v->cnt[s][d] = 1 + amc_test_rng_below(&rng, max);
        }
    }
    if (v->coll == AMC_COLL_ALLGATHERV) {
        v->cnt[0][1] = v->cnt[0][0];
        v->cnt[1][0] = v->cnt[1][1];
    }
    if ((v->coll == AMC_COLL_ALLTOALLV) && v->in_place) {
        v->cnt[1][0] = v->cnt[0][1]; /* MPI: in place, each sends what it receives */
    }
}

static void test_vector(unsigned long *cases)
{
    static const int            colls[] = { AMC_COLL_GATHERV, AMC_COLL_SCATTERV,
                                            AMC_COLL_ALLGATHERV, AMC_COLL_ALLTOALLV,
                                            AMC_COLL_REDUCE_SCATTER };
    static const amc_datatype_t dts[]   = { AMC_UINT8, AMC_INT32, AMC_DOUBLE };
    static const unsigned       toks[]  = { 64, 0 };
    unsigned                    c, d, t, rep;
    vcase_t                     v;

    for (c = 0; c < sizeof(colls) / sizeof(colls[0]); c++) {
        int rooted = (colls[c] == AMC_COLL_GATHERV) || (colls[c] == AMC_COLL_SCATTERV);

        for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
            size_t max = max_bytes / dt_size(dts[d]);

            for (t = 0; t < 2; t++) {
                for (rep = 0; rep < (amc_test_quick() ? 4u : 12u); rep++) {
                    v = (vcase_t){ .coll = colls[c], .root = rooted ? (int)(rep & 1) : -1,
                                   .in_place = (int)((rep >> 1) & 1), .odd = -1,
                                   .tokens = toks[t], .dt = dts[d] };
                    vector_counts(&v, max);
                    if (rep == 4) { /* the largest: 64 bytes each way */
                        v.cnt[0][0] = v.cnt[0][1] = v.cnt[1][0] = v.cnt[1][1] = max;
                    }
                    vector_case(&v, 1);
                    (*cases)++;
                }
                /* a count that differs: on the rounds (one element more
                 * where it arrives), and past the limit (the paths part) */
                for (rep = 0; rep < (rooted ? 8u : 4u); rep++) {
                    v = (vcase_t){ .coll = colls[c], .root = rooted ? (int)(rep & 1) : -1,
                                   .odd_add = (rep & 2) ? max + 1 : 1, .odd_send = (rep >> 2) & 1,
                                   .tokens = toks[t], .dt = dts[d] };
                    vector_counts(&v, max - 1);
                    /* a rooted one's receiver (or its sender, odd_send) */
                    v.odd = rooted ? (amc_alg_rounds_sends(v.coll, 0, v.root) != v.odd_send)
                                   : (int)amc_test_rng_below(&rng, 2);
                    vector_case(&v, 1);
                    (*cases)++;
                }
            }
        }
        /* a block past the limit, or of none: the engine, results right */
        v = (vcase_t){ .coll = colls[c], .root = rooted ? 1 : -1, .odd = -1, .tokens = 64,
                       .dt = AMC_UINT8 };
        vector_counts(&v, 8);
        v.cnt[0][1] = v.cnt[1][0] = max_bytes + 1;
        if ((v.coll == AMC_COLL_ALLGATHERV) || (v.coll == AMC_COLL_REDUCE_SCATTER)) {
            v.cnt[0][0] = v.cnt[1][1] = max_bytes + 1;
        }
        vector_case(&v, 0);
        v.cnt[0][1] = v.cnt[1][0] = 0;
        if ((v.coll == AMC_COLL_ALLGATHERV) || (v.coll == AMC_COLL_REDUCE_SCATTER)) {
            v.cnt[0][0] = v.cnt[1][1] = 0;
        }
        vector_case(&v, 0);
        v.root = 0;
        v.in_place = 1;
        vector_case(&v, 0);
        /* one direction past it, the other on it: the engine on both ranks
         * (a rooted one's message: rank 1's to rank 0) */
        v.in_place = 0;
        v.root     = (v.coll == AMC_COLL_GATHERV) ? 0 : (v.coll == AMC_COLL_SCATTERV) ? 1 : -1;
        vector_counts(&v, 8);
        v.cnt[1][0] = max_bytes + 1;
        if ((v.coll == AMC_COLL_ALLGATHERV) || (v.coll == AMC_COLL_REDUCE_SCATTER)) {
            v.cnt[1][1] = max_bytes + 1;
        }
        vector_case(&v, 0);
        *cases += 4;
    }
}

/* A rank repeats gatherv and scatterv with its block's size changing
 * between calls, on the rounds and past them: each call decides anew (a
 * non-root's call has no vectors, only its count, which no choice kept
 * from an earlier call may stand for). */
static void test_vector_repeat(void)
{
    static const size_t sizes[] = { 8, 100, 8, 64, 65, 1, 0, 3 };
    uint8_t             in[2][ROW], out[2][ROW];
    size_t              counts[2], displs[2] = { 0, 128 };
    amc_request_t       reqs[2];
    amc_test_world_t    w;
    int                 status[2], rank, k, scatter;
    size_t              i;

    world_new(&w, 2, 64, AMC_FAKE_COMPLETE_ON_DELIVERY);
    for (scatter = 0; scatter < 2; scatter++) {
        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            counts[0] = 5;
            counts[1] = sizes[i];
            for (rank = 0; rank < 2; rank++) {
                for (k = 0; k < ROW; k++) {
                    in[rank][k]  = (uint8_t)(rank * 100 + k + i);
                    out[rank][k] = 0xee;
                }
                if (scatter) {
                    CHECK(amc_iscatterv(in[rank], (rank == 0) ? counts : NULL,
                                        (rank == 0) ? displs : NULL, out[rank], counts[rank],
                                        AMC_UINT8, 0, amc_test_world_comm(&w, rank),
                                        &reqs[rank]) == AMC_SUCCESS, "scatterv start");
                } else {
                    CHECK(amc_igatherv(in[rank], counts[rank], out[rank],
                                       (rank == 0) ? counts : NULL, (rank == 0) ? displs : NULL,
                                       AMC_UINT8, 0, amc_test_world_comm(&w, rank),
                                       &reqs[rank]) == AMC_SUCCESS, "gatherv start");
                }
            }
            CHECK(amc_test_world_drive(&w, reqs, status), "%s %zu B: hangs",
                  scatter ? "scatterv" : "gatherv", sizes[i]);
            for (rank = 0; rank < 2; rank++) {
                CHECK(status[rank] == AMC_SUCCESS, "%s %zu B, call %zu: rank %d: %s",
                      scatter ? "scatterv" : "gatherv", sizes[i], i, rank,
                      amc_strerror(status[rank]));
            }
            if (scatter) {
                CHECK((memcmp(out[0], in[0], 5) == 0) &&
                      (memcmp(out[1], in[0] + 128, sizes[i]) == 0) &&
                      (out[1][sizes[i]] == 0xee), "scatterv %zu B: results", sizes[i]);
            } else {
                CHECK((memcmp(out[0], in[0], 5) == 0) &&
                      (memcmp(out[0] + 128, in[1], sizes[i]) == 0) &&
                      (out[0][128 + sizes[i]] == 0xee), "gatherv %zu B: results", sizes[i]);
            }
        }
    }
    amc_test_world_destroy(&w);
}

/* A request freed before its instance ended finishes unobserved: its
 * result lands in the caller's buffer, as on the engine's schedules, and
 * the instance ends for the others. */
static void test_freed_request(void)
{
    int32_t          in[2] = { 1, 2 }, out[2] = { -7, -7 };
    amc_request_t    reqs[2];
    amc_test_world_t w;

    world_new(&w, 2, 64, AMC_FAKE_COMPLETE_ON_DELIVERY);
    CHECK(amc_iallreduce(&in[0], &out[0], 1, AMC_INT32, AMC_SUM, amc_test_world_comm(&w, 0),
                         &reqs[0]) == AMC_SUCCESS, "start 0");
    CHECK(amc_request_free(&reqs[0]) == AMC_SUCCESS, "free");
    CHECK(amc_iallreduce(&in[1], &out[1], 1, AMC_INT32, AMC_SUM, amc_test_world_comm(&w, 1),
                         &reqs[1]) == AMC_SUCCESS, "start 1");
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    CHECK(amc_wait(&reqs[1]) == AMC_SUCCESS, "rank 1's call");
    CHECK(out[1] == 3, "rank 1's result %d", (int)out[1]);
    CHECK(out[0] == 3, "the freed request finishes unobserved, its result written: %d",
          (int)out[0]);
    amc_test_world_destroy(&w);
}

/* A round message a correct peer never sends: no data, too much, from the
 * wrong partner, on a communicator of 3. Each is refused (AMC_ERR_PROTOCOL
 * from the next call's wait), nothing else changes. */
static void test_forged(void)
{
    static const struct {
        int      n, src, dst;
        unsigned round;
        size_t   len;
        const char *what;
    } cases[] = {
        { 2, 1, 0, 0, 0,  "no data" },
        { 2, 1, 0, 0, AMC_CTRL_PAY_MAX + 1, "1025 bytes at N = 2" },
        { 4, 1, 0, 0, AMC_CTRL_PAY_MAX + 1, "1025 bytes at N = 4" },
        { 4, 2, 0, 0, 8,  "rank 2 is not round 0's partner of rank 0" },
        { 4, 1, 0, 2, 8,  "round 2 of 2" },
        { 3, 1, 0, 0, 8,  "a communicator of 3" },
    };
    uint8_t           data[AMC_CTRL_PAY_MAX + 1];
    amc_wire_hdr_t    hdr;
    amc_wire_packed_t p;
    amc_test_world_t  w;
    size_t            i, len;
    int               rc;

    memset(data, 1, sizeof(data));
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        world_new(&w, cases[i].n, 64, AMC_FAKE_COMPLETE_ON_DELIVERY);
        memset(&hdr, 0, sizeof(hdr));
        hdr.kind  = AMC_WIRE_BARRIER;
        hdr.coll  = AMC_COLL_ALLREDUCE;
        hdr.round = cases[i].round;
        hdr.root  = -1;
        hdr.src   = (uint32_t)cases[i].src;
        hdr.cid   = amc_test_world_comm(&w, 0)->cid;
        hdr.seq   = 0;
        len       = amc_wire_pack(&hdr, &p);
        rc = amc_fake_inject_data(w.fabric, cases[i].src, cases[i].dst, &p, len, data,
                                  cases[i].len, AMC_SEND_EAGER);
        CHECK(rc == AMC_SUCCESS, "inject");
        amc_fake_deliver(w.fabric, 0);
        rc = amc_comm_take_error(amc_test_world_comm(&w, cases[i].dst));
        CHECK(rc == AMC_ERR_PROTOCOL, "%s: %s", cases[i].what, amc_strerror(rc));
        check_usable(&w, cases[i].what);
        amc_test_world_destroy(&w);
    }
}

/* allgather, alltoall and reduce_scatter_block at N = n, each by the
 * algorithm that runs on the rounds there. */
static void test_all_blocks(int n, unsigned long *cases)
{
    test_blocks(AMC_COLL_ALLGATHER, n, cases);
    alltoall_alg = (n > 2) ? "bruck" : "";
    rsb_alg      = (n > 2) ? "recursive_halving" : "";
    test_blocks(AMC_COLL_ALLTOALL, n, cases);
    test_blocks(AMC_COLL_REDUCE_SCATTER_BLOCK, n, cases); /* off powers of two as Bruck's */
    alltoall_alg = "";
    rsb_alg      = "";
}

int main(void)
{
    unsigned long cases = 0;
    int           n;

    amc_test_rng_seed(&rng, 20261125);
    test_rooted(&cases);
    for (n = 2; n <= MAX_N; n *= 2) {
        if (amc_test_quick() && (n > 4)) {
            break;
        }
        test_results(n, (n == 4) ? AMC_FAKE_COMPLETE_ON_SEND : AMC_FAKE_COMPLETE_ON_DELIVERY,
                     &cases);
    }
    for (n = 2; n <= MAX_N; n *= 2) {
        test_all_blocks(n, &cases);
    }
    for (n = 3; n <= 7; n++) {
        if ((n & (n - 1)) != 0) { /* Bruck's rounds */
            test_results(n, (n == 5) ? AMC_FAKE_COMPLETE_ON_SEND : AMC_FAKE_COMPLETE_ON_DELIVERY,
                         &cases);
            test_all_blocks(n, &cases);
        }
    }
    printf("%lu allreduce, allgather, alltoall, reduce_scatter_block and rooted (N=2) cases\n", cases);
    cases = 0;
    test_vector(&cases);
    printf("%lu gatherv, scatterv, allgatherv, alltoallv and reduce_scatter (N=2) cases\n", cases);
    test_too_big(MAX_BYTES);
    /* up to AMC_CTRL_PAY_MAX bytes a message on the rounds, one more on the engine */
    max_bytes = AMC_CTRL_PAY_MAX;
    cases     = 0;
    test_rooted(&cases);
    test_vector(&cases);
    for (n = 2; n <= 8; n = (n == 3) ? 4 : (n == 2) ? 3 : 2 * n) {
        test_results(n, AMC_FAKE_COMPLETE_ON_DELIVERY, &cases);
        test_all_blocks(n, &cases);
    }
    test_too_big(1u << 20);
    printf("%lu cases of up to %zu bytes at N=2, 3, 4 and 8\n", cases, max_bytes);
    max_bytes = MAX_BYTES;
    test_vector_repeat();
    test_engine_cases();
    test_outstanding(2);
    test_outstanding(8);
    test_mismatch(AMC_COLL_ALLREDUCE, 2, 1, 3, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLREDUCE, 4, 2, 1, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLREDUCE, 8, 5, 16, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLREDUCE, 4, 3, 40, 0); /* 160 bytes: that rank runs the engine */
    test_mismatch(AMC_COLL_ALLREDUCE, 2, 0, 0, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLREDUCE, 4, 0, 0, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLGATHER, 4, 1, 3, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLGATHER, 8, 6, 1, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLGATHER, 4, 2, 40, 0); /* past the bound: the engine */
    test_mismatch(AMC_COLL_ALLGATHER, 4, 0, 0, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLGATHER, 2, 0, SIZE_MAX, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLREDUCE, 8, 0, SIZE_MAX, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLTOALL, 2, 1, 3, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLTOALL, 2, 0, 0, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLTOALL, 2, 1, 40, 0); /* past the bound: the engine */
    test_mismatch(AMC_COLL_REDUCE_SCATTER_BLOCK, 2, 0, 3, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_REDUCE_SCATTER_BLOCK, 2, 1, 0, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLREDUCE, 3, 1, 3, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLREDUCE, 7, 6, 1, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLREDUCE, 5, 0, 0, AMC_ERR_PROTOCOL);
    test_mismatch(AMC_COLL_ALLGATHER, 6, 2, 3, AMC_ERR_TRUNCATE);
    test_mismatch(AMC_COLL_ALLGATHER, 5, 3, 40, 0); /* past the bound: the engine */
    test_freed_request();
    test_forged();
    return amc_test_summary("test_ctrl_coll");
}
