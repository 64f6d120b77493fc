/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL schedules on the fake transport (am_coll/goal/goal.c).
 *
 * Random schedules: for N = 2..9, random sends and receives (random tags,
 * receives from any source or with any tag among them, zero-byte messages),
 * calcs and copies, random requires and irequires edges, drawn from one
 * global sequence of events so that no schedule can deadlock, compiled and
 * run under random delivery orders, each fake completion mode and with
 * every message eager or every message rendezvous. Through the engine's act
 * hook every run checks, per GOAL action:
 *  - it starts once and ends once, after it started;
 *  - never early: after every action it requires ended, and after every
 *    action it irequires could start (what that one requires ended);
 *  - never late: in the same step (start, delivery or test) as the last of
 *    those, so nothing but its dependencies held it back;
 *  - a receive ends only after the send it was matched with started;
 * and after the run: every request succeeded, and every receive and copy
 * holds the bytes of the send it was matched with (or its source).
 *
 * Then GOAL written versions of the dissemination barrier and the binomial
 * bcast (text, as Schedgen writes them) against the built-ins: the same
 * messages at every rank (peer, size, the engine's tag) and the same order
 * among them (which message waits for which), and the bcast delivers the
 * root's data everywhere.
 *
 * AMCTEST_GOAL_SEED=s runs that seed alone.
 */
#include "tests/unit/harness.h"
#include "am_coll/alg/alg.h"
#include "am_coll/coll/coll.h"
#include "am_coll/goal/goal.h"
#include "am_coll/context/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N      9
#define MAX_EVENTS 40
#define REGION     24      /* bytes per action's data range */
#define RUNS_PER_N 200

typedef struct {
    amc_goal_t    g;
    int           n;
    uint64_t      step;    /* the driver's steps: start, delivery, test */
    uint64_t      clock;   /* every trace event */
    uint32_t     *inv[MAX_N];      /* engine act -> GOAL act */
    uint64_t     *ready_step[MAX_N], *done_step[MAX_N];
    uint64_t     *ready_at[MAX_N], *done_at[MAX_N];
    uint8_t      *nready[MAX_N], *ndone[MAX_N];
    unsigned      foreign;
} run_t;

static run_t         run;
static unsigned long stat_runs, stat_acts, stat_edges, stat_msgs, stat_refused;

static void trace(void *arg, const amc_coll_inst_t *inst, uint32_t act, int event)
{
    run_t   *rn = arg;
    int      r  = inst->comm->rank;
    uint32_t a;

    if ((rn->g == NULL) || (inst->sched != rn->g->ranks[r].sched)) {
        rn->foreign++;
        return;
    }
    a = rn->inv[r][act];
    rn->clock++;
    if (event == AMC_ACT_TRACE_READY) {
        rn->nready[r][a]++;
        rn->ready_step[r][a] = rn->step;
        rn->ready_at[r][a]   = rn->clock;
    } else {
        rn->ndone[r][a]++;
        rn->done_step[r][a] = rn->step;
        rn->done_at[r][a]   = rn->clock;
    }
}

/* When a could start, as GOAL says: (clock, step) of the last of what it
 * requires and, through irequires, what those require. */
static void startable(int r, uint32_t a, uint64_t *at, uint64_t *step, int depth)
{
    const amc_goal_rank_t *rk = &run.g->ranks[r];
    uint32_t               k;

    for (k = 0; (k < rk->ndeps) && (depth < 64); k++) {
        const amc_goal_dep_t *d = &rk->deps[k];

        if (d->act != a) {
            continue;
        }
        if (d->start) {
            startable(r, d->dep, at, step, depth + 1);
        } else if (run.done_at[r][d->dep] > *at) {
            *at   = run.done_at[r][d->dep];
            *step = run.done_step[r][d->dep];
        }
    }
}

static unsigned char sendv(int r, size_t i)
{
    return (unsigned char)(r * 37 + i * 11 + 1);
}

/* One random schedule: events in a global order, edges backwards in it. */
static int gen(amc_test_rng_t *rng, int n, amc_goal_t *gp)
{
    amc_goal_t g;
    int        nev = 8 + (int)amc_test_rng_below(rng, MAX_EVENTS - 8), e, k, x, status;
    uint32_t   cnt[MAX_N], pairs[MAX_N][MAX_N];

    memset(cnt, 0, sizeof(cnt));
    memset(pairs, 0, sizeof(pairs));
    status = amc_goal_create(n, &g);
    if (status != AMC_SUCCESS) {
        return status;
    }
    for (e = 0; (e < nev) && (status == AMC_SUCCESS); e++) {
        int    s = (int)amc_test_rng_below(rng, n), d = (int)amc_test_rng_below(rng, n), ends[2];
        int    nends = 1, acts[2];
        size_t bytes = (amc_test_rng_below(rng, 5) == 0) ? 0 : 1 + amc_test_rng_below(rng, REGION);

        if ((d != s) && (amc_test_rng_below(rng, 10) < 7)) {
            /* a tag of its own: the matching is what the generator meant,
             * with any source too (any tag: below, where that is so) */
            int tag = e;
            int src = (amc_test_rng_below(rng, 6) == 0) ? AMC_GOAL_ANY : s;
            int rtg = tag;

            status = amc_goal_send(g, s, d, tag, bytes, AMC_GOAL_BUF_SEND, cnt[s] * REGION,
                                   &acts[0]);
            if (status == AMC_SUCCESS) {
                status = amc_goal_recv(g, d, src, rtg, bytes, AMC_GOAL_BUF_RECV,
                                       cnt[d] * REGION, &acts[1]);
            }
            ends[0] = s;
            ends[1] = d;
            nends   = 2;
            pairs[s][d]++;
        } else if (amc_test_rng_below(rng, 2)) {
            status  = amc_goal_calc(g, s, amc_test_rng_below(rng, 1000), &acts[0]);
            ends[0] = s;
        } else {
            status  = amc_goal_copy(g, s, AMC_GOAL_BUF_RECV, cnt[s] * REGION, AMC_GOAL_BUF_SEND,
                                    cnt[s] * REGION, bytes, &acts[0]);
            ends[0] = s;
        }
        for (k = 0; (k < nends) && (status == AMC_SUCCESS); k++) {
            int r = ends[k], m = (int)amc_test_rng_below(rng, 3);

            cnt[r]++;
            for (x = 0; (x < m) && (acts[k] > 0) && (status == AMC_SUCCESS); x++) {
                int dep = (int)amc_test_rng_below(rng, (size_t)acts[k]);

                status = (amc_test_rng_below(rng, 4) == 0)
                             ? amc_goal_irequires(g, r, acts[k], dep)
                             : amc_goal_requires(g, r, acts[k], dep);
                stat_edges++;
            }
        }
    }
    /* any tag where a receive's sender sends it nothing else */
    for (k = 0; (k < n) && (status == AMC_SUCCESS); k++) {
        for (x = 0; x < (int)g->ranks[k].nacts; x++) {
            amc_goal_act_t *act = &g->ranks[k].acts[x];

            if ((act->type == AMC_GOAL_RECV) && (act->peer >= 0) &&
                (pairs[act->peer][k] == 1) && amc_test_rng_below(rng, 3) == 0) {
                act->tag = AMC_GOAL_ANY;
            }
        }
    }
    *gp = g;
    return status;
}

static void one_run(int n, uint64_t seed, amc_fake_completion_t mode, size_t rndv_thresh)
{
    static unsigned char sbuf[MAX_N][MAX_EVENTS * 2 * REGION], rbuf[MAX_N][MAX_EVENTS * 2 * REGION];
    amc_test_world_t w;
    amc_test_rng_t   rng;
    amc_config_t     cfg;
    amc_request_t    req[MAX_N];
    int              started[MAX_N], finished[MAX_N], st[MAX_N];
    char             what[128];
    int              r, left, idle = 0, status, flag;
    uint32_t         a;
    size_t           i, cnt;

    snprintf(what, sizeof(what), "N=%d seed=%llu mode=%d rndv_thresh=%zu", n,
             (unsigned long long)seed, (int)mode, rndv_thresh);
    memset(&run, 0, sizeof(run));
    amc_test_rng_seed(&rng, seed);
    run.n  = n;
    status = gen(&rng, n, &run.g);
    CHECK(status == AMC_SUCCESS, "%s: building: %s", what, amc_strerror(status));
    if (status != AMC_SUCCESS) {
        amc_goal_free(&run.g);
        return;
    }
    if (amc_goal_compile(run.g) != AMC_SUCCESS) {
        /* a wildcard receive may take another's message, as MPI's would:
         * then a receive is left without one, which compiling must say */
        CHECK(strstr(amc_goal_error(run.g), "matching") != NULL ||
              strstr(amc_goal_error(run.g), "rendezvous") != NULL ||
              strstr(amc_goal_error(run.g), "size mismatch") != NULL,
              "%s: compile: %s", what, amc_goal_error(run.g));
        stat_refused++;
        if (getenv("AMCTEST_GOAL_VERBOSE") != NULL) {
            printf("%s: refused: %s\n", what, amc_goal_error(run.g));
        }
        amc_goal_free(&run.g);
        return;
    }
    stat_runs++;
    for (r = 0; r < n; r++) {
        uint32_t na = run.g->ranks[r].nacts;

        run.inv[r]        = calloc(run.g->ranks[r].sched->nacts + 1, sizeof(uint32_t));
        run.ready_step[r] = calloc(na + 1, sizeof(uint64_t));
        run.done_step[r]  = calloc(na + 1, sizeof(uint64_t));
        run.ready_at[r]   = calloc(na + 1, sizeof(uint64_t));
        run.done_at[r]    = calloc(na + 1, sizeof(uint64_t));
        run.nready[r]     = calloc(na + 1, 1);
        run.ndone[r]      = calloc(na + 1, 1);
        for (a = 0; a < na; a++) {
            run.inv[r][amc_goal_sched_index(run.g, r, a)] = a;
        }
        for (i = 0; i < sizeof(sbuf[r]); i++) {
            sbuf[r][i] = sendv(r, i);
            rbuf[r][i] = 0xee;
        }
        stat_acts += na;
    }
    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level   = -1;
    cfg.rndv_thresh = rndv_thresh;
    status = amc_test_world_create(&w, n, mode, &cfg);
    CHECK(status == AMC_SUCCESS, "%s: world", what);
    if (status != AMC_SUCCESS) {
        goto out;
    }
    for (r = 0; r < n; r++) {
        w.ctx[r]->act_trace     = trace;
        w.ctx[r]->act_trace_arg = &run;
        started[r] = finished[r] = 0;
        st[r]      = AMC_SUCCESS;
    }
    left = n;
    while ((left > 0) && (idle < 5000)) {
        int activity = 0;

        for (r = 0; r < n; r++) {
            if (!started[r] && (amc_test_rng_below(&rng, 3) == 0)) {
                run.step++;
                status = amc_goal_start(run.g, sbuf[r], rbuf[r], amc_test_world_comm(&w, r),
                                        &req[r]);
                CHECK(status == AMC_SUCCESS, "%s: start rank %d: %s", what, r,
                      amc_strerror(status));
                started[r] = 1;
                activity++;
                if (status != AMC_SUCCESS) {
                    finished[r] = 1;
                    left--;
                }
            } else if (started[r] && !finished[r]) {
                run.step++;
                status = amc_test(&req[r], &flag);
                if (flag || (status != AMC_SUCCESS)) {
                    st[r]       = status;
                    finished[r] = 1;
                    left--;
                    activity++;
                }
            }
        }
        cnt = amc_fake_deliverable(w.fabric);
        if (cnt > 0) {
            run.step++;
            activity += amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, cnt));
        }
        idle = activity ? 0 : idle + 1;
    }
    CHECK(left == 0, "%s: %d ranks never completed", what, left);
    for (r = 0; r < n; r++) {
        const amc_goal_rank_t *rk = &run.g->ranks[r];

        CHECK(st[r] == AMC_SUCCESS, "%s: rank %d: %s", what, r, amc_strerror(st[r]));
        for (a = 0; a < rk->nacts; a++) {
            const amc_goal_act_t *act = &rk->acts[a];
            uint64_t              at = 0, step = 0;

            CHECK(run.nready[r][a] == 1 && run.ndone[r][a] == 1 &&
                  run.ready_at[r][a] < run.done_at[r][a],
                  "%s: rank %d act %u: ready %u times, done %u times", what, r, a,
                  run.nready[r][a], run.ndone[r][a]);
            startable(r, a, &at, &step, 0);
            CHECK(at < run.ready_at[r][a], "%s: rank %d act %u started before its "
                  "dependencies allow", what, r, a);
            CHECK((at == 0) || (step == run.ready_step[r][a]), "%s: rank %d act %u started "
                  "at step %llu, its dependencies allowed it at step %llu", what, r, a,
                  (unsigned long long)run.ready_step[r][a], (unsigned long long)step);
            if (act->type == AMC_GOAL_RECV) {
                stat_msgs++;
                CHECK(run.ready_at[act->mate_rank][act->mate_act] < run.done_at[r][a],
                      "%s: rank %d receive %u done before its send started", what, r, a);
                CHECK(!memcmp(&rbuf[r][act->off],
                              &sbuf[act->mate_rank][run.g->ranks[act->mate_rank].acts[act->mate_act].off],
                              act->bytes), "%s: rank %d receive %u: wrong data", what, r, a);
            } else if (act->type == AMC_GOAL_COPY) {
                CHECK(!memcmp(&rbuf[r][act->off], &sbuf[r][act->off2], act->bytes),
                      "%s: rank %d copy %u: wrong data", what, r, a);
            }
        }
    }
    CHECK(run.foreign == 0, "%s: trace of another schedule", what);
    amc_goal_free(&run.g); /* before its communicators go */
    amc_test_world_destroy(&w);
out:
    for (r = 0; r < n; r++) {
        free(run.inv[r]);
        free(run.ready_step[r]);
        free(run.done_step[r]);
        free(run.ready_at[r]);
        free(run.done_at[r]);
        free(run.nready[r]);
        free(run.ndone[r]);
    }
    if (run.g != NULL) {
        amc_goal_free(&run.g);
    }
}

/* ---------------------------------------------------------------- built-ins */

/* Which message acts each message act waits for (transitively), as a
 * bit matrix over the rank's message acts named by (kind, peer, tag). */
typedef struct {
    uint32_t n;
    uint64_t key[64];        /* kind << 40 | peer << 20 | tag */
    uint64_t before[64];     /* bit j: message j comes first */
} msg_order_t;

static uint64_t msg_key(const amc_sched_act_t *act)
{
    return ((uint64_t)(act->type == AMC_ACT_SEND) << 40) | ((uint64_t)act->peer << 20) |
           act->tag;
}

static int msg_order(const amc_sched_t *s, msg_order_t *o)
{
    uint64_t reach[256]; /* per act: the message acts it waits for */
    uint32_t i, k, j;
    int      changed = 1;

    memset(o, 0, sizeof(*o));
    if (s->nacts > 256) {
        return -1;
    }
    for (i = 0; i < s->nacts; i++) {
        if ((s->acts[i].type <= AMC_ACT_RECV_REDUCE_R) && (o->n < 64)) {
            o->key[o->n++] = msg_key(&s->acts[i]);
        }
        reach[i] = 0;
    }
    while (changed) {
        changed = 0;
        for (i = 0; i < s->nacts; i++) {
            uint64_t mine = reach[i];

            for (j = 0; j < o->n; j++) {
                if ((s->acts[i].type <= AMC_ACT_RECV_REDUCE_R) &&
                    (o->key[j] == msg_key(&s->acts[i]))) {
                    mine |= 1ULL << j;
                }
            }
            for (k = 0; k < s->acts[i].nsucc; k++) {
                uint32_t t = s->succ[s->acts[i].succ + k];

                if ((reach[t] | mine) != reach[t]) {
                    reach[t] |= mine;
                    changed    = 1;
                }
            }
        }
    }
    for (i = 0; i < s->nacts; i++) {
        for (j = 0; j < o->n; j++) {
            if ((s->acts[i].type <= AMC_ACT_RECV_REDUCE_R) &&
                (o->key[j] == msg_key(&s->acts[i]))) {
                o->before[j] = reach[i];
            }
        }
    }
    return 0;
}

/* o's message j is p's message j2: the same key; the orders the same. */
static int msg_order_equal(const msg_order_t *a, const msg_order_t *b)
{
    uint32_t i, j, x, y;
    int      map[64];

    if (a->n != b->n) {
        return 0;
    }
    for (i = 0; i < a->n; i++) {
        for (map[i] = -1, j = 0; j < b->n; j++) {
            if (a->key[i] == b->key[j]) {
                map[i] = (int)j;
            }
        }
        if (map[i] < 0) {
            return 0;
        }
    }
    for (x = 0; x < a->n; x++) {
        for (y = 0; y < a->n; y++) {
            if (!!(a->before[x] & (1ULL << y)) != !!(b->before[map[x]] & (1ULL << map[y]))) {
                return 0;
            }
        }
    }
    return 1;
}

static char *goal_barrier_text(int n)
{
    char  *buf = NULL;
    size_t len = 0;
    FILE  *f = open_memstream(&buf, &len);
    int    r, d, k;

    fprintf(f, "// dissemination barrier, as Schedgen writes one\nnum_ranks %d\n", n);
    for (r = 0; r < n; r++) {
        fprintf(f, "rank %d {\n", r);
        for (d = 1, k = 0; d < n; d *= 2, k++) {
            fprintf(f, "s%d: send 0b to %d tag %d\n", k, (r + d) % n, k);
            fprintf(f, "r%d: recv 0b from %d tag %d\n", k, (r - d + n) % n, k);
            if (k > 0) {
                /* the next round waits for the whole round before it */
                fprintf(f, "s%d requires s%d\ns%d requires r%d\nr%d requires s%d\n"
                        "r%d requires r%d\n", k, k - 1, k, k - 1, k, k - 1, k, k - 1);
            }
        }
        fprintf(f, "}\n");
    }
    fclose(f);
    return buf;
}

static char *goal_bcast_text(int n, size_t bytes)
{
    char  *buf = NULL;
    size_t len = 0;
    FILE  *f = open_memstream(&buf, &len);
    int    r, mask, k;

    fprintf(f, "num_ranks %d\n", n);
    for (r = 0; r < n; r++) {
        fprintf(f, "rank %d {\n", r);
        for (mask = 1; (mask < n) && !(r & mask); mask <<= 1) {
        }
        if (r != 0) {
            fprintf(f, "up: recv %zub from %d buf recv 0\n", bytes, r - mask);
        }
        for (mask >>= 1, k = 0; mask > 0; mask >>= 1) {
            if (r + mask < n) {
                fprintf(f, "d%d: send %zub to %d buf recv 0\n", k, bytes, r + mask);
                if (r != 0) {
                    fprintf(f, "d%d requires up\n", k);
                }
                k++;
            }
        }
        fprintf(f, "}\n");
    }
    fclose(f);
    return buf;
}

static void versus_builtin(const char *name, int coll, const char *alg, int n, size_t bytes,
                           char *text)
{
    amc_goal_t          g = NULL;
    amc_coll_args_t     args;
    amc_sched_builder_t b;
    amc_sched_t        *s;
    msg_order_t         og, ob;
    char                err[256];
    int                 r;

    CHECK(amc_goal_parse(text, strlen(text), name, &g, err, sizeof(err)) == AMC_SUCCESS,
          "%s N=%d: %s", name, n, err);
    free(text);
    if (g == NULL) {
        return;
    }
    CHECK(amc_goal_compile(g) == AMC_SUCCESS, "%s N=%d: %s", name, n, amc_goal_error(g));
    memset(&args, 0, sizeof(args));
    args.coll    = (uint8_t)coll;
    args.root    = 0;
    args.count   = bytes;
    args.dt      = AMC_BYTE;
    args.dt_size = 1;
    args.op      = -1;
    for (r = 0; (r < n) && g->compiled; r++) {
        CHECK(amc_sb_init(&b) == AMC_SUCCESS, "builder");
        CHECK(amc_alg_find(coll, alg)->build(&b, &args, r, n) == AMC_SUCCESS, "build");
        CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
        CHECK(msg_order(s, &ob) == 0 && msg_order(g->ranks[r].sched, &og) == 0, "orders");
        CHECK(msg_order_equal(&og, &ob), "%s N=%d rank %d: the GOAL version's messages or "
              "their order differ from the built-in's", name, n, r);
        amc_sched_free(s);
    }
    amc_goal_free(&g);
}

/* The GOAL bcast's data on the fake transport, in a random order. */
static void bcast_runs(int n, uint64_t seed)
{
    static unsigned char data[MAX_N][64];
    amc_test_world_t     w;
    amc_test_rng_t       rng;
    amc_request_t        req[MAX_N];
    amc_goal_t           g = NULL;
    char                 err[256], *text = goal_bcast_text(n, sizeof(data[0]));
    int                  r, flag, done = 0, guard = 0;
    size_t               cnt;

    CHECK(amc_goal_parse(text, strlen(text), "bcast", &g, err, sizeof(err)) == AMC_SUCCESS &&
          amc_goal_compile(g) == AMC_SUCCESS, "bcast N=%d", n);
    free(text);
    amc_test_rng_seed(&rng, seed);
    CHECK(amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_LATER, NULL) == AMC_SUCCESS, "world");
    for (r = 0; r < n; r++) {
        memset(data[r], (r == 0) ? 0x5a : 0, sizeof(data[r]));
        CHECK(amc_goal_start(g, NULL, data[r], amc_test_world_comm(&w, r), &req[r]) ==
              AMC_SUCCESS, "start");
    }
    while ((done < n) && (guard++ < 100000)) {
        cnt = amc_fake_deliverable(w.fabric);
        if (cnt > 0) {
            amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, cnt));
        }
        for (r = 0, done = 0; r < n; r++) {
            if (req[r] == AMC_REQUEST_NULL) {
                done++;
            } else if ((amc_test(&req[r], &flag) == AMC_SUCCESS) && flag) {
                done++;
            }
        }
    }
    CHECK(done == n, "bcast N=%d: %d of %d done", n, done, n);
    for (r = 0; r < n; r++) {
        for (cnt = 0; cnt < sizeof(data[r]); cnt++) {
            if (data[r][cnt] != 0x5a) {
                CHECK(0, "bcast N=%d rank %d byte %zu", n, r, cnt);
                break;
            }
        }
    }
    amc_goal_free(&g);
    amc_test_world_destroy(&w);
}

int main(void)
{
    static const amc_fake_completion_t modes[] = { AMC_FAKE_COMPLETE_LATER,
                                                   AMC_FAKE_COMPLETE_ON_DELIVERY,
                                                   AMC_FAKE_COMPLETE_ON_SEND };
    static const size_t threshs[] = { 1, (size_t)1 << 30 };
    const char         *one = getenv("AMCTEST_GOAL_SEED");
    uint64_t            seed;
    int                 n, i;

    if (one != NULL) {
        seed = strtoull(one, NULL, 10);
        n    = 2 + (int)(seed % (MAX_N - 1));
        one_run(n, seed, modes[(seed / 7) % 3], threshs[(seed / 3) % 2]);
        return amc_test_summary("test_goal_dag");
    }
    for (n = 2; n <= MAX_N; n++) {
        for (i = 0; i < RUNS_PER_N; i++) {
            seed = (uint64_t)(n - 2) + (uint64_t)(MAX_N - 1) * (uint64_t)i;
            one_run(n, seed, modes[(seed / 7) % 3], threshs[(seed / 3) % 2]);
        }
        versus_builtin("barrier", AMC_COLL_BARRIER, "dissemination", n, 0, goal_barrier_text(n));
        versus_builtin("bcast", AMC_COLL_BCAST, "binomial", n, 64, goal_bcast_text(n, 64));
        bcast_runs(n, (uint64_t)n);
    }
    printf("test_goal_dag: %lu schedules run (%lu refused by the static checks), %lu actions, "
           "%lu edges, %lu messages checked\n", stat_runs, stat_refused, stat_acts, stat_edges,
           stat_msgs);
    CHECK(stat_refused * 4 < stat_runs, "most random schedules compile");
    return amc_test_summary("test_goal_dag");
}
