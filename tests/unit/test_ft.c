/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Revoke, agree and shrink over the fake transport, with a rank failing at
 * every point of the protocol (amc_fake_kill_after: before its k-th send,
 * for every k up to all it sends when nobody fails), at N = 2..6, every rank
 * the victim in turn (the leader, the one that takes over, the others), in
 * send order and in seeded random orders:
 * - agreement: every survivor returns, with the same code, flag and failed
 *   set; the flag is the AND of the ranks that took part (each clears its
 *   own bit, so the result shows who did); a victim dead before it sent
 *   anything is in the failed set;
 * - a loop of collectives (allreduce, bcast, allgather, barrier, alltoall,
 *   reduce, gather, scatter, scan, reduce_scatter_block, and the vector
 *   forms gatherv, scatterv, allgatherv, alltoallv with reversed
 *   displacements, reduce_scatter, exscan), each result checked, that ends
 *   in an agreement: on an error a
 *   rank revokes, and every survivor agrees and shrinks, and runs the loop
 *   again on the new communicator until an agreement finds nobody failed;
 *   the survivors end on the same communicator (id, size, membership) after
 *   as many shrinks each;
 * - revoke without a failure: pending and later calls fail with
 *   AMC_ERR_REVOKED on every rank, dup too; agree and shrink still work.
 */
#include "tests/unit/harness.h"
#include "am_coll/api/api_ft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N   6
#define ITERS   16
#define LIMIT   200000

static int nrun; /* scenarios run */

/* The index of the next event to deliver: send order, or seeded random. */
static size_t pick(amc_test_world_t *w, amc_test_rng_t *rng, int random)
{
    size_t n = amc_fake_deliverable(w->fabric);

    return random ? amc_test_rng_below(rng, n) : 0;
}

/* ------------------------------------------------------------ agreement */

typedef struct {
    int            n, victim, done[MAX_N], status[MAX_N], flag[MAX_N];
    amc_ft_agree_t op[MAX_N];
    amc_comm_t     shrunk[MAX_N];
} agree_run_t;

/* One agreement (shrink: and its communicator) on the world; the victim
 * dies before its k-th send (k < 0: never). Returns the victim's sends. */
static unsigned long run_agree(int n, int victim, long k, int order, int shrink, agree_run_t *ar)
{
    amc_test_world_t w;
    amc_test_rng_t   rng;
    unsigned long    sent;
    int              r, rc, step, all;

    memset(ar, 0, sizeof(*ar));
    ar->n      = n;
    ar->victim = victim;
    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return 0;
    }
    amc_test_rng_seed(&rng, (uint64_t)order * 7919u + (uint64_t)k * 31u + (uint64_t)n);
    amc_fake_kill_after(w.fabric, victim, k);
    for (r = 0; r < n; r++) {
        ar->shrunk[r] = AMC_COMM_NULL;
        rc = amc_ft_agree_begin(amc_test_world_comm(&w, r), shrink ? 1 : ~(1 << r), &ar->op[r]);
        CHECK(rc == AMC_SUCCESS, "agree begin on rank %d: %s", r, amc_strerror(rc));
    }
    for (step = 0; step < LIMIT; step++) {
        all = 1;
        for (r = 0; r < n; r++) {
            if (ar->done[r] || amc_fake_killed(w.fabric, r)) {
                continue;
            }
            rc = amc_ft_agree_test(&ar->op[r]);
            if (rc == AMC_INPROGRESS) {
                all = 0;
                continue;
            }
            ar->done[r]   = 1;
            ar->status[r] = rc;
            ar->flag[r]   = ar->op[r].result.flag;
            if (shrink) {
                rc = amc_ft_shrink_end(&ar->op[r], rc, &ar->shrunk[r]);
                CHECK(rc == AMC_SUCCESS, "shrink end on rank %d: %s", r, amc_strerror(rc));
            }
        }
        if (all) {
            break;
        }
        if (amc_fake_deliverable(w.fabric) == 0) {
            break; /* nothing left to happen: a hang, reported below */
        }
        amc_fake_deliver(w.fabric, pick(&w, &rng, order));
    }
    for (r = 0; r < n; r++) {
        if (!amc_fake_killed(w.fabric, r)) {
            CHECK(ar->done[r], "n=%d victim=%d k=%ld order=%d: rank %d never returned", n,
                  victim, k, order, r);
        }
    }
    sent = amc_fake_sent(w.fabric, victim);
    if (shrink) {
        /* the new communicators work: an allreduce over the survivors that
         * are members (a member that died fails it everywhere alike) */
        amc_request_t req[MAX_N];
        int32_t       in[MAX_N], out[MAX_N];
        int           started[MAX_N] = {0}, res[MAX_N], live = 0, m = 0;

        for (r = 0; r < n; r++) {
            if (ar->done[r] && ar->shrunk[r] != AMC_COMM_NULL) {
                amc_comm_size(ar->shrunk[r], &m);
                in[r]  = r + 1;
                out[r] = 0;
                rc = amc_iallreduce(&in[r], &out[r], 1, AMC_INT32, AMC_SUM, ar->shrunk[r],
                                    &req[r]);
                started[r] = (rc == AMC_SUCCESS);
                res[r]     = rc;
                live++;
            }
        }
        for (step = 0; step < LIMIT; step++) {
            all = 1;
            for (r = 0; r < n; r++) {
                int flag = 0;

                if (started[r]) {
                    rc = amc_test(&req[r], &flag);
                    if (flag) {
                        started[r] = 0;
                        res[r]     = rc;
                    } else {
                        all = 0;
                    }
                }
            }
            if (all || amc_fake_deliverable(w.fabric) == 0) {
                break;
            }
            amc_fake_deliver(w.fabric, pick(&w, &rng, order));
        }
        for (r = 0; r < n; r++) {
            if (ar->done[r] && ar->shrunk[r] != AMC_COMM_NULL) {
                int expect = 0, q, dead_member = 0;

                for (q = 0; q < n; q++) {
                    if (!amc_ft_bit(ar->op[r].result.failed, q)) {
                        expect += q + 1;
                        dead_member |= amc_fake_killed(w.fabric, q);
                    }
                }
                (void)live;
                (void)m;
                if (amc_fake_killed(w.fabric, r)) {
                    if (started[r]) {
                        amc_request_free(&req[r]); /* a dead rank's, never to end */
                    }
                    amc_comm_free(&ar->shrunk[r]);
                    continue;
                }
                CHECK(!started[r], "n=%d victim=%d k=%ld: allreduce on the shrunk "
                      "communicator never ended on rank %d", n, victim, k, r);
                if (!dead_member) {
                    CHECK(res[r] == AMC_SUCCESS && out[r] == expect, "n=%d victim=%d k=%ld: "
                          "rank %d's allreduce on the shrunk communicator: %s, %d (want %d)",
                          n, victim, k, r, amc_strerror(res[r]), (int)out[r], expect);
                } else {
                    CHECK(res[r] == AMC_ERR_PEER, "n=%d victim=%d k=%ld: rank %d: a dead "
                          "member, yet %s", n, victim, k, r, amc_strerror(res[r]));
                }
                amc_comm_free(&ar->shrunk[r]);
            }
        }
    }
    amc_test_world_destroy(&w);
    nrun++;
    return sent;
}

static void check_agree(const agree_run_t *ar, long k, int order, int shrink)
{
    const char *what = shrink ? "shrink" : "agree";
    int         r, first = -1, w;

    for (r = 0; r < ar->n; r++) {
        if (!ar->done[r]) {
            continue;
        }
        /* the flag: every participant clears its bit; a survivor always
         * takes part */
        if (!shrink) {
            CHECK((ar->flag[r] & (1 << r)) == 0, "%s n=%d victim=%d k=%ld order=%d: rank %d's "
                  "own bit set in %#x", what, ar->n, ar->victim, k, order, r, ar->flag[r]);
        }
        for (w = 0; w < AMC_FT_WORDS; w++) {
            uint64_t others = ar->op[r].result.failed[w];

            if (w == 0) {
                others &= ~((uint64_t)1 << ar->victim);
            }
            CHECK(others == 0, "%s n=%d victim=%d k=%ld: rank %d: a live rank in the failed "
                  "set", what, ar->n, ar->victim, k, r);
        }
        CHECK((ar->status[r] == AMC_ERR_PEER) == (ar->op[r].result.failed[0] != 0),
              "%s n=%d victim=%d k=%ld: rank %d: %s with failed set %#llx", what, ar->n,
              ar->victim, k, r, amc_strerror(ar->status[r]),
              (unsigned long long)ar->op[r].result.failed[0]);
        if (first < 0) {
            first = r;
            continue;
        }
        CHECK(ar->status[r] == ar->status[first] && ar->flag[r] == ar->flag[first] &&
              memcmp(ar->op[r].result.failed, ar->op[first].result.failed,
                     sizeof(ar->op[r].result.failed)) == 0 &&
              ar->op[r].result.num == ar->op[first].result.num &&
              ar->op[r].result.leader == ar->op[first].result.leader,
              "%s n=%d victim=%d k=%ld order=%d: ranks %d and %d differ: %s/%s flag %#x/%#x "
              "failed %#llx/%#llx", what, ar->n, ar->victim, k, order, first, r,
              amc_strerror(ar->status[first]), amc_strerror(ar->status[r]), ar->flag[first],
              ar->flag[r], (unsigned long long)ar->op[first].result.failed[0],
              (unsigned long long)ar->op[r].result.failed[0]);
    }
    CHECK(first >= 0 || ar->n == 1, "%s n=%d: no survivor returned", what, ar->n);
    if (k == 0 && first >= 0) {
        CHECK(ar->status[first] == AMC_ERR_PEER && ar->op[first].result.failed[0] ==
              ((uint64_t)1 << ar->victim), "%s n=%d victim=%d: dead before it sent anything, "
              "yet failed set %#llx", what, ar->n, ar->victim,
              (unsigned long long)ar->op[first].result.failed[0]);
        if (!shrink) {
            CHECK((ar->flag[first] & (1 << ar->victim)) != 0, "agree n=%d victim=%d: its flag "
                  "counted though it sent nothing", ar->n, ar->victim);
        }
    }
}

static void test_agree_exhaustive(int shrink)
{
    agree_run_t   ar;
    unsigned long total;
    int           n, victim, order, orders = amc_test_quick() ? 2 : 4;
    long          k;

    for (n = 2; n <= MAX_N; n++) {
        for (victim = 0; victim < n; victim++) {
            total = run_agree(n, victim, -1, 0, shrink, &ar);
            check_agree(&ar, -1, 0, shrink);
            CHECK(ar.status[0] == AMC_SUCCESS, "n=%d: no failure, yet %s", n,
                  amc_strerror(ar.status[0]));
            for (k = 0; k <= (long)total; k++) {
                for (order = 0; order < orders; order++) {
                    (void)run_agree(n, victim, k, order, shrink, &ar);
                    check_agree(&ar, k, order, shrink);
                }
            }
        }
    }
}

/* ------------------------------------------------ a loop of collectives */

enum { PH_RUN, PH_AGREE, PH_DONE };

typedef struct {
    amc_comm_t     comm;
    int            phase, it, ok, shrinks, active;
    amc_request_t  req;
    amc_ft_agree_t op;
    int32_t        in[MAX_N], out[MAX_N];
    size_t         ones[MAX_N], rev[MAX_N]; /* counts of 1, displacements m-1-j */
} rank_t;

static int coll_start(rank_t *rk)
{
    int q, m, i = rk->it;

    amc_comm_rank(rk->comm, &q);
    amc_comm_size(rk->comm, &m);
    for (int j = 0; j < MAX_N; j++) {
        rk->in[j]   = q * 100 + j + i;
        rk->out[j]  = -1;
        rk->ones[j] = 1;
        rk->rev[j]  = (j < m) ? (size_t)(m - 1 - j) : 0;
    }
    switch (i % ITERS) {
    case 0:
        return amc_iallreduce(rk->in, rk->out, 1, AMC_INT32, AMC_SUM, rk->comm, &rk->req);
    case 1:
        rk->out[0] = (q == i % m) ? 1000 * i + 7 : -1;
        return amc_ibcast(rk->out, 1, AMC_INT32, i % m, rk->comm, &rk->req);
    case 2:
        return amc_iallgather(rk->in, rk->out, 1, AMC_INT32, rk->comm, &rk->req);
    case 3:
        return amc_ibarrier(rk->comm, &rk->req);
    case 4:
        return amc_ialltoall(rk->in, rk->out, 1, AMC_INT32, rk->comm, &rk->req);
    case 5:
        return amc_ireduce(rk->in, rk->out, 1, AMC_INT32, AMC_SUM, i % m, rk->comm, &rk->req);
    case 6:
        return amc_igather(rk->in, rk->out, 1, AMC_INT32, i % m, rk->comm, &rk->req);
    case 7:
        return amc_iscatter(rk->in, rk->out, 1, AMC_INT32, i % m, rk->comm, &rk->req);
    case 8:
        return amc_iscan(rk->in, rk->out, 1, AMC_INT32, AMC_SUM, rk->comm, &rk->req);
    case 9:
        return amc_ireduce_scatter_block(rk->in, rk->out, 1, AMC_INT32, AMC_SUM, rk->comm,
                                         &rk->req);
    case 10:
        return amc_igatherv(rk->in, 1, rk->out, rk->ones, rk->rev, AMC_INT32, i % m, rk->comm,
                            &rk->req);
    case 11:
        return amc_iscatterv(rk->in, rk->ones, rk->rev, rk->out, 1, AMC_INT32, i % m, rk->comm,
                             &rk->req);
    case 12:
        return amc_iallgatherv(rk->in, 1, rk->out, rk->ones, rk->rev, AMC_INT32, rk->comm,
                               &rk->req);
    case 13:
        return amc_ialltoallv(rk->in, rk->ones, rk->rev, rk->out, rk->ones, rk->rev, AMC_INT32,
                              rk->comm, &rk->req);
    case 14:
        return amc_ireduce_scatter(rk->in, rk->out, rk->ones, AMC_INT32, AMC_SUM, rk->comm,
                                   &rk->req);
    default:
        return amc_iexscan(rk->in, rk->out, 1, AMC_INT32, AMC_SUM, rk->comm, &rk->req);
    }
}

static int coll_right(const rank_t *rk)
{
    int q, m, j, i = rk->it, root, sum = 0;

    amc_comm_rank(rk->comm, &q);
    amc_comm_size(rk->comm, &m);
    root = i % m;
    switch (i % ITERS) {
    case 0:
    case 5:
    case 8:
        if ((i % ITERS == 5) && (q != root)) {
            return 1;
        }
        for (j = 0; j < ((i % ITERS == 8) ? q + 1 : m); j++) {
            sum += j * 100 + i;
        }
        return rk->out[0] == sum;
    case 1:
        return rk->out[0] == 1000 * i + 7;
    case 2:
    case 4:
    case 6:
        if ((i % ITERS == 6) && (q != root)) {
            return 1;
        }
        for (j = 0; j < m; j++) {
            if (rk->out[j] != j * 100 + i + ((i % ITERS == 4) ? q : 0)) {
                return 0;
            }
        }
        return 1;
    case 7:
        return rk->out[0] == root * 100 + q + i;
    case 9:
    case 14:
        for (j = 0; j < m; j++) {
            sum += j * 100 + q + i;
        }
        return rk->out[0] == sum;
    case 10:
    case 12:
        if ((i % ITERS == 10) && (q != root)) {
            return 1;
        }
        for (j = 0; j < m; j++) {
            if (rk->out[m - 1 - j] != j * 100 + i) {
                return 0;
            }
        }
        return 1;
    case 11:
        return rk->out[0] == root * 100 + (m - 1 - q) + i;
    case 13:
        for (j = 0; j < m; j++) {
            if (rk->out[m - 1 - j] != j * 100 + (m - 1 - q) + i) {
                return 0;
            }
        }
        return 1;
    case 15:
        if (q == 0) {
            return 1; /* exscan leaves rank 0's result undefined */
        }
        for (j = 0; j < q; j++) {
            sum += j * 100 + i;
        }
        return rk->out[0] == sum;
    default:
        return 1;
    }
}

static const char *coll_name(int i)
{
    static const char *names[] = {"allreduce", "bcast",      "allgather",  "barrier",
                                  "alltoall",  "reduce",     "gather",     "scatter",
                                  "scan",      "reduce_scatter_block",     "gatherv",
                                  "scatterv",  "allgatherv", "alltoallv",  "reduce_scatter",
                                  "exscan"};

    return names[i % ITERS];
}

/* The survivors' recovery: on an error revoke, then (error or not, at the
 * end of the loop) an agreement on "all went well"; a failure or a 0 flag
 * makes everyone shrink and run the loop again. */
static void rank_step(amc_test_world_t *w, rank_t *rk, int r, const char *ctx)
{
    int rc, flag = 0;

    if (rk->phase == PH_RUN) {
        if (!rk->active) {
            if (rk->it == ITERS) {
                rc = amc_ft_agree_begin(rk->comm, rk->ok, &rk->op);
                CHECK(rc == AMC_SUCCESS, "%s: rank %d agree begin: %s", ctx, r,
                      amc_strerror(rc));
                rk->phase = PH_AGREE;
                return;
            }
            rc = coll_start(rk);
            if (rc != AMC_SUCCESS) {
                CHECK(rc == AMC_ERR_PEER || rc == AMC_ERR_REVOKED, "%s: rank %d %s start: %s",
                      ctx, r, coll_name(rk->it), amc_strerror(rc));
                goto failed;
            }
            rk->active = 1;
        }
        rc = amc_test(&rk->req, &flag);
        if (!flag) {
            return;
        }
        rk->active = 0;
        if (rc != AMC_SUCCESS) {
            CHECK(rc == AMC_ERR_PEER || rc == AMC_ERR_REVOKED, "%s: rank %d %s: %s", ctx, r,
                  coll_name(rk->it), amc_strerror(rc));
            goto failed;
        }
        CHECK(coll_right(rk), "%s: rank %d %s %d: wrong result %d", ctx, r, coll_name(rk->it),
              rk->it, (int)rk->out[0]);
        rk->it++;
        return;
    }
    if (rk->phase == PH_AGREE) {
        amc_comm_t newcomm;

        rc = amc_ft_agree_test(&rk->op);
        if (rc == AMC_INPROGRESS) {
            return;
        }
        CHECK(rc == AMC_SUCCESS || rc == AMC_ERR_PEER, "%s: rank %d agree: %s", ctx, r,
              amc_strerror(rc));
        if (rc == AMC_SUCCESS && rk->op.result.flag) {
            rk->phase = PH_DONE;
            return;
        }
        rc = amc_ft_shrink_end(&rk->op, rc, &newcomm);
        CHECK(rc == AMC_SUCCESS, "%s: rank %d shrink: %s", ctx, r, amc_strerror(rc));
        if (rk->comm != amc_test_world_comm(w, r)) {
            amc_comm_free(&rk->comm);
        }
        rk->comm  = newcomm;
        rk->it    = 0;
        rk->ok    = 1;
        rk->phase = PH_RUN;
        rk->shrinks++;
    }
    return;

failed:
    (void)amc_comm_revoke(rk->comm);
    rk->ok = 0;
    rk->it = ITERS; /* straight to the agreement */
}

static unsigned long run_loop(int n, int victim, long k, int order)
{
    amc_test_world_t w;
    amc_test_rng_t   rng;
    rank_t           rk[MAX_N];
    char             ctx[96];
    unsigned long    sent;
    int              r, step, all, first = -1, m, m0;

    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return 0;
    }
    snprintf(ctx, sizeof(ctx), "loop n=%d victim=%d k=%ld order=%d", n, victim, k, order);
    amc_test_rng_seed(&rng, (uint64_t)order * 104729u + (uint64_t)k * 17u + (uint64_t)n);
    amc_fake_kill_after(w.fabric, victim, k);
    memset(rk, 0, sizeof(rk));
    for (r = 0; r < n; r++) {
        rk[r].comm = amc_test_world_comm(&w, r);
        rk[r].ok   = 1;
    }
    for (step = 0; step < LIMIT; step++) {
        all = 1;
        for (r = 0; r < n; r++) {
            if (amc_fake_killed(w.fabric, r) || rk[r].phase == PH_DONE) {
                continue;
            }
            rank_step(&w, &rk[r], r, ctx);
            all &= (rk[r].phase == PH_DONE);
        }
        if (all) {
            break;
        }
        if (amc_fake_deliverable(w.fabric) > 0) {
            amc_fake_deliver(w.fabric, pick(&w, &rng, order));
        }
    }
    for (r = 0; r < n; r++) {
        if (amc_fake_killed(w.fabric, r)) {
            continue;
        }
        CHECK(rk[r].phase == PH_DONE, "%s: rank %d never finished (phase %d, %s %d)", ctx, r,
              rk[r].phase, coll_name(rk[r].it), rk[r].it);
        if (rk[r].phase != PH_DONE) {
            continue;
        }
        amc_comm_size(rk[r].comm, &m);
        if (first < 0) {
            first = r;
            m0    = m;
            /* a victim that died after the last agreement was decided
             * took part in it: the survivors end with it */
            CHECK(m == n - amc_fake_killed(w.fabric, victim) ||
                  (m == n && amc_fake_killed(w.fabric, victim)), "%s: ended on %d ranks", ctx, m);
            continue;
        }
        CHECK(rk[r].comm->cid == rk[first].comm->cid && m == m0 &&
              rk[r].shrinks == rk[first].shrinks, "%s: ranks %d and %d end apart (cid "
              "%#llx/%#llx, size %d/%d, shrinks %d/%d)", ctx, first, r,
              (unsigned long long)rk[first].comm->cid, (unsigned long long)rk[r].comm->cid, m0,
              m, rk[first].shrinks, rk[r].shrinks);
    }
    sent = amc_fake_sent(w.fabric, victim);
    for (r = 0; r < n; r++) {
        if (rk[r].active) {
            amc_request_free(&rk[r].req); /* the dead rank's, never to end */
        }
        if (rk[r].comm != amc_test_world_comm(&w, r)) {
            amc_comm_free(&rk[r].comm);
        }
    }
    amc_test_world_destroy(&w);
    nrun++;
    return sent;
}

static void test_loop_exhaustive(void)
{
    unsigned long total;
    int           n, victim, order, orders = amc_test_quick() ? 1 : 2;
    long          k;

    for (n = 2; n <= MAX_N; n++) {
        for (victim = 0; victim < n; victim++) {
            total = run_loop(n, victim, -1, 0);
            if (getenv("AMCTEST_VERBOSE") != NULL) {
                printf("loop n=%d victim=%d: %lu failure points\n", n, victim, total + 1);
            }
            for (k = 0; k <= (long)total; k++) {
                for (order = 0; order < orders; order++) {
                    (void)run_loop(n, victim, k, order);
                }
            }
        }
    }
}

/* ------------------------------------------------ revoke, no failure */

static void test_revoke(int n)
{
    amc_test_world_t w;
    amc_comm_t       comm[MAX_N], dup;
    amc_request_t    req[MAX_N];
    int32_t          in[MAX_N], out[MAX_N];
    int              r, rc, flag, started[MAX_N], failed[MAX_N], count;

    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return;
    }
    /* ranks 1.. start an allreduce rank 0 never joins: pending until revoked */
    for (r = 0; r < n; r++) {
        comm[r] = amc_test_world_comm(&w, r);
        in[r]   = r;
        started[r] = 0;
        if (r > 0) {
            rc = amc_iallreduce(&in[r], &out[r], 1, AMC_INT32, AMC_SUM, comm[r], &req[r]);
            CHECK(rc == AMC_SUCCESS, "revoke n=%d: iallreduce on %d: %s", n, r, amc_strerror(rc));
            started[r] = 1;
        }
    }
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    rc = amc_comm_revoke(comm[n - 1]);
    CHECK(rc == AMC_SUCCESS, "revoke: %s", amc_strerror(rc));
    CHECK(amc_comm_revoke(comm[n - 1]) == AMC_SUCCESS, "revoke twice");
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    for (r = 0; r < n; r++) {
        if (started[r]) {
            rc = amc_test(&req[r], &flag);
            CHECK(flag && rc == AMC_ERR_REVOKED, "revoke n=%d: pending call on rank %d: %s", n,
                  r, flag ? amc_strerror(rc) : "still pending");
        }
        rc = amc_ibarrier(comm[r], &req[r]);
        CHECK(rc == AMC_ERR_REVOKED, "revoke n=%d: later call on rank %d: %s", n, r,
              amc_strerror(rc));
        rc = amc_comm_failed(comm[r], failed, MAX_N, &count);
        CHECK(rc == AMC_SUCCESS && count == 0, "revoke n=%d: failed on rank %d: %s, %d", n, r,
              amc_strerror(rc), count);
    }
    if (n > 1) {
        amc_comm_create_t op;

        rc = amc_comm_create_begin(&op, comm[0], 0, 0, 0);
        CHECK(rc == AMC_ERR_REVOKED, "revoke n=%d: dup: %s", n, amc_strerror(rc));
        if (rc == AMC_SUCCESS) {
            (void)amc_comm_create_end(&op, AMC_ERR_REVOKED, &dup);
        }
    }
    amc_test_world_destroy(&w);
}

/* Agreement and shrink on a revoked communicator work: after the revoke,
 * an agreement with nobody dead, then a shrink to the whole. */
static void test_revoked_agree(int n)
{
    amc_test_world_t w;
    amc_ft_agree_t   op[MAX_N];
    amc_comm_t       shrunk[MAX_N];
    int              r, rc, done, status[MAX_N], pass;

    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return;
    }
    (void)amc_comm_revoke(amc_test_world_comm(&w, 0));
    for (pass = 0; pass < 2; pass++) {
        for (r = 0; r < n; r++) {
            status[r] = AMC_INPROGRESS;
            rc = amc_ft_agree_begin(amc_test_world_comm(&w, r), pass ? 1 : ~(1 << r), &op[r]);
            CHECK(rc == AMC_SUCCESS, "revoked agree begin: %s", amc_strerror(rc));
        }
        do {
            done = 1;
            for (r = 0; r < n; r++) {
                if (status[r] == AMC_INPROGRESS) {
                    status[r] = amc_ft_agree_test(&op[r]);
                    done &= (status[r] != AMC_INPROGRESS);
                }
            }
        } while (!done && amc_fake_deliver(w.fabric, 0));
        for (r = 0; r < n; r++) {
            CHECK(status[r] == AMC_SUCCESS, "revoked n=%d pass %d: rank %d: %s", n, pass, r,
                  amc_strerror(status[r]));
            if (pass == 0) {
                CHECK(op[r].result.flag == ~((1 << n) - 1), "revoked n=%d: flag %#x", n,
                      op[r].result.flag);
            } else {
                rc = amc_ft_shrink_end(&op[r], status[r], &shrunk[r]);
                CHECK(rc == AMC_SUCCESS && shrunk[r]->size == n && shrunk[r]->rank == r &&
                      shrunk[r]->cid == shrunk[0]->cid, "revoked n=%d: shrink on %d: %s", n, r,
                      amc_strerror(rc));
            }
        }
    }
    for (r = 0; r < n; r++) {
        amc_comm_free(&shrunk[r]);
    }
    amc_test_world_destroy(&w);
}

static void test_args(void)
{
    amc_test_world_t w;
    int              count, flag = 1;

    if (amc_test_world_create(&w, 1, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of 1");
        return;
    }
    CHECK(amc_comm_agree(amc_test_world_comm(&w, 0), NULL) == AMC_ERR_ARG, "agree NULL flag");
    CHECK(amc_comm_shrink(amc_test_world_comm(&w, 0), NULL) == AMC_ERR_ARG, "shrink NULL");
    CHECK(amc_comm_failed(amc_test_world_comm(&w, 0), NULL, 1, &count) == AMC_ERR_ARG,
          "failed NULL ranks");
    CHECK(amc_comm_failed(amc_test_world_comm(&w, 0), NULL, 0, NULL) == AMC_ERR_ARG,
          "failed NULL count");
    CHECK(amc_comm_agree(AMC_COMM_NULL, &flag) != AMC_SUCCESS, "agree on NULL");
    /* a single rank agrees with itself at once */
    flag = 6;
    CHECK(amc_comm_agree(amc_test_world_comm(&w, 0), &flag) == AMC_SUCCESS && flag == 6,
          "agree alone: %d", flag);
    CHECK(amc_comm_failed(amc_test_world_comm(&w, 0), NULL, 0, &count) == AMC_SUCCESS &&
          count == 0, "failed alone");
    amc_test_world_destroy(&w);
}

int main(void)
{
    int n;

    test_args();
    for (n = 2; n <= MAX_N; n++) {
        test_revoke(n);
        test_revoked_agree(n);
    }
    test_agree_exhaustive(0);
    test_agree_exhaustive(1);
    test_loop_exhaustive();
    printf("test_ft: %d scenarios\n", nrun);
    return amc_test_summary("test_ft");
}
