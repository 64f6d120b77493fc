/*
 * A communicator remembers each collective's last choice of algorithm
 * (am_coll/api/coll_start.c): a call that differs in count, op or in
 * whether its op commutes must choose again, and every call's result must
 * be right whichever way it went.
 */
#include "tests/unit/harness.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/comm.h"
#include "transport/fake.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N_MAX   4
#define COUNT_MAX 64

/* The choice word's low byte (coll_start.c): the algorithm's index, and
 * the bit that says the call ran on the barrier's rounds. */
#define CHOICE_CTRL 0x80u
#define CHOICE_ALG  0x7fu

static int32_t in[N_MAX][COUNT_MAX], out[N_MAX][COUNT_MAX];

/* Associative, not commutative: the left operand wins, so a reduction
 * over ranks 0..n-1 in MPI's order is rank 0's value. */
static void keep_left(const void *a, void *inout, size_t count, amc_datatype_t dt)
{
    (void)dt;
    memcpy(inout, a, count * sizeof(int32_t));
}

static void user_sum(const void *a, void *inout, size_t count, amc_datatype_t dt)
{
    const int32_t *x = a;
    int32_t       *y = inout;
    size_t         i;

    (void)dt;
    for (i = 0; i < count; i++) {
        y[i] += x[i];
    }
}

/* One allreduce of count int32 on every rank, driven to its end; 1 if
 * every rank holds want(i) at every i. */
static int allreduce(amc_test_world_t *w, size_t count, amc_op_t op, int sum)
{
    amc_request_t reqs[N_MAX];
    int           status[N_MAX], rank, ok = 1;
    size_t        i;

    for (rank = 0; rank < w->n; rank++) {
        for (i = 0; i < count; i++) {
            in[rank][i] = (int32_t)(1000 * (rank + 1) + (int)i);
        }
        memset(out[rank], 0xee, sizeof(out[rank]));
        CHECK(amc_iallreduce(in[rank], out[rank], count, AMC_INT32, op,
                             amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS,
              "start at rank %d", rank);
    }
    CHECK(amc_test_world_drive(w, reqs, status), "count %zu: hangs", count);
    for (rank = 0; rank < w->n; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "count %zu rank %d: %s", count, rank,
              amc_strerror(status[rank]));
        for (i = 0; i < count; i++) {
            int32_t want = 0;
            int     r;

            for (r = 0; r < w->n; r++) {
                want += sum ? in[r][i] : 0;
            }
            want = sum ? want : in[0][i];
            ok &= (out[rank][i] == want);
        }
    }
    return ok;
}

static uint64_t choice(amc_test_world_t *w, int rank)
{
    return amc_test_world_comm(w, rank)->choice[AMC_COLL_ALLREDUCE];
}

static amc_config_t config(const char *allreduce_alg)
{
    amc_config_t cfg;

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.fast_max                 = 64;
    cfg.oversub_linear_max_ranks = 0;
    snprintf(cfg.alg[AMC_COLL_ALLREDUCE], sizeof(cfg.alg[0]), "%s", allreduce_alg);
    return cfg;
}

/* The barrier's rounds, the engine, and the rounds again on one
 * communicator: each call chooses by its own count. */
static void test_count_changes(void)
{
    amc_test_world_t w;
    amc_config_t     cfg = config("");
    size_t           counts[] = { 2, 40, 2, 40, 16 };
    size_t           k;

    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS,
          "world");
    for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int ctrl = (counts[k] * sizeof(int32_t) <= 64);

        CHECK(allreduce(&w, counts[k], AMC_SUM, 1), "count %zu: wrong result", counts[k]);
        CHECK(((choice(&w, 0) & CHOICE_CTRL) != 0) == ctrl,
              "count %zu: remembered %s, ran %s", counts[k],
              (choice(&w, 0) & CHOICE_CTRL) ? "the rounds" : "the engine",
              ctrl ? "the rounds" : "the engine");
        CHECK(choice(&w, 0) == choice(&w, 1), "count %zu: the ranks remember differently",
              counts[k]);
    }
    /* a schedule ran for the 160-byte calls, so the engine was taken */
    CHECK(amc_test_world_comm(&w, 0)->sched_cache != NULL, "the engine never ran");
    amc_test_world_settle(&w, "count changes");
    amc_test_world_destroy(&w);
}

/* A ring (for commutative ops only) chosen for one user op, then the same
 * handle made again for an op that does not commute: the second must not
 * take the first's ring, which would combine in ring order. */
static void test_commute_changes(void)
{
    amc_test_world_t w;
    amc_config_t     cfg = config("ring");
    amc_op_t         op, again, first;
    const amc_alg_t *ring = amc_alg_find(AMC_COLL_ALLREDUCE, "ring");

    CHECK(ring != NULL, "no ring allreduce");
    CHECK(amc_test_world_create(&w, 4, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS,
          "world");
    CHECK(amc_op_create(user_sum, 1, &op) == AMC_SUCCESS, "op create");
    CHECK(allreduce(&w, 8, op, 1), "commutative user op: wrong result");
    CHECK((choice(&w, 0) & CHOICE_ALG) == amc_alg_index(ring),
          "AMC_ALLREDUCE_ALG=ring with a commutative op remembered %s",
          amc_alg_at(choice(&w, 0) & CHOICE_ALG)->name);
    first = op;
    CHECK(amc_op_free(&op) == AMC_SUCCESS, "op free");
    CHECK(amc_op_create(keep_left, 0, &again) == AMC_SUCCESS, "op create again");
    CHECK(again == first, "the freed handle was not made again (%d, %d): nothing tested",
          (int)again, (int)first);
    CHECK(allreduce(&w, 8, again, 0), "the same handle, not commutative: wrong result (%s)",
          amc_alg_at(choice(&w, 0) & CHOICE_ALG)->name);
    CHECK((choice(&w, 0) & CHOICE_ALG) != amc_alg_index(ring),
          "a non-commutative op remembered the ring");
    CHECK(amc_op_free(&again) == AMC_SUCCESS, "op free");
    amc_test_world_settle(&w, "commute changes");
    amc_test_world_destroy(&w);
}

int main(void)
{
    test_count_changes();
    test_commute_changes();
    return amc_test_summary("test_coll_choice");
}
