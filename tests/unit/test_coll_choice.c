/* SPDX-License-Identifier: BSD-3-Clause */
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

/* The calls of both ranks of a world of 2 driven to their end; each must
 * succeed. */
static void drive_two(amc_test_world_t *w, amc_request_t reqs[2], const char *what,
                      const size_t c[2])
{
    int status[2], rank;

    CHECK(amc_test_world_drive(w, reqs, status), "%s %zu,%zu: hangs", what, c[0], c[1]);
    for (rank = 0; rank < 2; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "%s %zu,%zu rank %d: %s", what, c[0], c[1], rank,
              amc_strerror(status[rank]));
    }
}

/* Rank r's input of n int32 (value(r, i)), its output all 0xee. */
static int32_t value(int r, size_t i)
{
    return (int32_t)(1000 * (r + 1) + (int)i);
}

static void fill(int r, size_t n)
{
    size_t i;

    memset(out[r], 0xee, sizeof(out[r]));
    for (i = 0; i < n; i++) {
        in[r][i] = value(r, i);
    }
}

/* One allgatherv at N=2, rank r giving c[r] int32 (in place on odd
 * calls), driven to its end; 1 if both ranks hold both blocks. */
static int allgatherv(amc_test_world_t *w, const size_t c[2], int in_place)
{
    size_t        displs[2] = { 0, c[0] + 1 };
    amc_request_t reqs[2];
    int           rank, r, ok = 1;
    size_t        i;

    for (rank = 0; rank < 2; rank++) {
        fill(rank, c[rank]);
        for (i = 0; in_place && (i < c[rank]); i++) {
            out[rank][displs[rank] + i] = in[rank][i];
        }
        CHECK(amc_iallgatherv(in_place ? AMC_IN_PLACE : in[rank], c[rank], out[rank], c, displs,
                              AMC_INT32, amc_test_world_comm(w, rank), &reqs[rank]) ==
                  AMC_SUCCESS, "allgatherv start at rank %d", rank);
    }
    drive_two(w, reqs, "allgatherv", c);
    for (rank = 0; rank < 2; rank++) {
        for (r = 0; r < 2; r++) {
            for (i = 0; i < c[r]; i++) {
                ok &= (out[rank][displs[r] + i] == value(r, i));
            }
        }
        ok &= (out[rank][c[0]] == (int32_t)0xeeeeeeee);
    }
    return ok;
}

/* One gatherv at N=2 to root, rank r giving c[r] int32; 1 if the root
 * holds both blocks. */
static int gatherv(amc_test_world_t *w, const size_t c[2], int root)
{
    size_t        displs[2] = { c[1] + 2, 0 };
    amc_request_t reqs[2];
    int           rank, r, ok = 1;
    size_t        i;

    for (rank = 0; rank < 2; rank++) {
        fill(rank, c[rank]);
        CHECK(amc_igatherv(in[rank], c[rank], out[rank], (rank == root) ? c : NULL,
                           (rank == root) ? displs : NULL, AMC_INT32,
                           root, amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS,
              "gatherv start at rank %d", rank);
    }
    drive_two(w, reqs, "gatherv", c);
    for (r = 0; r < 2; r++) {
        for (i = 0; i < c[r]; i++) {
            ok &= (out[root][displs[r] + i] == value(r, i));
        }
    }
    return ok && (out[root ^ 1][0] == (int32_t)0xeeeeeeee);
}

/* The vector forms at N=2 keep the choice of a call on the barrier's
 * rounds, keyed by the lengths each rank sends and takes: a call whose
 * lengths, root or in-place differ must still be right, and an engine's
 * call must not overwrite the kept choice (its algorithm may read counts
 * the key does not hold). */
static void test_vector_forms(void)
{
    static const size_t sizes[][2] = { { 2, 3 }, { 3, 2 }, { 2, 3 }, { 20, 3 }, { 2, 3 },
                                       { 16, 16 }, { 1, 1 }, { 17, 1 }, { 2, 3 } };
    amc_test_world_t    w;
    amc_config_t        cfg = config("");
    uint64_t            kept[2];
    size_t              k;
    int                 rank;

    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS,
          "world");
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int ctrl = (sizes[k][0] * 4 <= 64) && (sizes[k][1] * 4 <= 64);

        for (rank = 0; rank < 2; rank++) {
            kept[rank] = amc_test_world_comm(&w, rank)->choice[AMC_COLL_ALLGATHERV];
        }
        CHECK(allgatherv(&w, sizes[k], (int)(k & 1)), "allgatherv %zu,%zu: wrong result",
              sizes[k][0], sizes[k][1]);
        for (rank = 0; rank < 2; rank++) {
            uint64_t now = amc_test_world_comm(&w, rank)->choice[AMC_COLL_ALLGATHERV];

            CHECK(ctrl ? ((now & CHOICE_CTRL) != 0) : (now == kept[rank]),
                  "allgatherv %zu,%zu rank %d: kept 0x%llx (before 0x%llx)", sizes[k][0],
                  sizes[k][1], rank, (unsigned long long)now, (unsigned long long)kept[rank]);
        }
        CHECK(gatherv(&w, sizes[k], (int)(k % 3 == 1)), "gatherv %zu,%zu to %d: wrong result",
              sizes[k][0], sizes[k][1], (int)(k % 3 == 1));
    }
    CHECK((amc_test_world_comm(&w, 0)->choice[AMC_COLL_GATHERV] & CHOICE_CTRL) &&
          (amc_test_world_comm(&w, 1)->choice[AMC_COLL_GATHERV] & CHOICE_CTRL),
          "gatherv's choice on the rounds was not kept");
    amc_test_world_settle(&w, "vector forms");
    amc_test_world_destroy(&w);
}

int main(void)
{
    test_count_changes();
    test_commute_changes();
    test_vector_forms();
    return amc_test_summary("test_coll_choice");
}
