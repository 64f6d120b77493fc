/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random dependency graphs on the fake transport: the engine's freedom.
 * Each run builds, for N ranks (2..9), one or two
 * collectives of random acts through the schedule builder (amc_sb_round and
 * amc_sb_stage mixed, copies, reductions, sends, receives and reducing
 * receives, zero-byte messages among them, random extra amc_sb_requires
 * edges), starts them with amc_coll_start_sched at random times, and
 * delivers messages, pulls and completions in a seeded random order, under
 * each fake completion mode (COMPLETE_LATER: a completion may come any time
 * after its cause) and rendezvous thresholds of everything, some, nothing.
 *
 * The graphs are drawn from one global sequence of events (a message is one
 * event at both of its ranks): every edge points from an earlier event to a
 * later one and, in a round made by amc_sb_round, a rank's locals come
 * before its messages (the round shorthand makes the messages wait for
 * them). So no run can deadlock, even if every send completes only when
 * its receiver pulls; a hang is the engine's. Every act writes a range of
 * its own and reads the input or a range written before it, with an edge
 * to its writer: no races, so one result is right for every order.
 *
 * Through the engine's act_trace hook, each run checks:
 *  - every act becomes ready once and is done once, and done after ready;
 *  - an act becomes ready only after everything it requires is done (every
 *    edge of the finished graph, round shorthand and joins included);
 *  - a receive is done only after its send was ready (posted), and with
 *    every message rendezvous, a send is done only after its receive was
 *    ready (the receiver pulls only into a ready receive);
 * and after it: every request completed successfully, every receive buffer
 * holds what the sequence computes (ranges nobody writes untouched), no
 * event is left queued, no rendezvous descriptor left unreleased and no
 * send header reused before its completion.
 *
 * First, the builder's promises on small graphs built by hand: a stage's
 * acts require only what amc_sb_requires says (no edges among them, a copy
 * that reads a receive's target waits for it and nothing waits for the
 * copy), and a stage's reducing receives, which may be in flight together
 * with an earlier round's, get staging of their own. And a receive marked
 * exact (amc_sb_exact) that gets another length aborts its instance at once.
 *
 * A failure names the seed; AMCTEST_DAG_SEED=s runs that seed alone.
 */
#include "tests/unit/harness.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/request.h"
#include "am_coll/sched/sched.h"
#include "am_coll/context/wait.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N      9
#define MAX_OPS    2
#define IN_ELEMS   16     /* each rank's input */
#define OUT_ELEMS  320    /* receive buffer: ranges handed out in turn */
#define TMP_ELEMS  320
#define MAX_EVENTS 48
#define MAX_LEN    3      /* elements per range */
#define MAX_SRC    (2 * MAX_EVENTS + 1)
#define RUNS_PER_N 500

typedef int64_t elem_t;

/* ---------------------------------------------------------------- a run */

typedef struct {
    amc_sched_t  *sched[MAX_N];
    /* what the sequence computes; ranges never written keep init */
    elem_t        recv[MAX_N][OUT_ELEMS];
    elem_t        expect[MAX_N][OUT_ELEMS];
    /* the trace: per act, the event number of its ready and done (0: not
     * yet) and how often each came */
    uint64_t     *ready_at[MAX_N];
    uint64_t     *done_at[MAX_N];
    uint8_t      *nready[MAX_N];
    uint8_t      *ndone[MAX_N];
    amc_request_t req[MAX_N];
    int           posted[MAX_N];
    int           finished[MAX_N];
    int           status[MAX_N];
} op_t;

typedef struct {
    int      n;
    int      nops;
    uint64_t seed;
    int      all_rndv;       /* every message with data goes rendezvous */
    elem_t   send[MAX_N][IN_ELEMS];
    op_t     op[MAX_OPS];
    uint64_t clock;          /* trace events so far */
    unsigned long foreign;   /* trace events of an instance not ours */
} run_t;

static run_t run;

static unsigned long stat_runs, stat_acts, stat_edges, stat_msgs;

static const char *mode_name(amc_fake_completion_t mode)
{
    return (mode == AMC_FAKE_COMPLETE_ON_SEND) ? "on-send" :
           (mode == AMC_FAKE_COMPLETE_LATER) ? "later" : "on-delivery";
}

/* ---------------------------------------------------------------- building */

/* A range a rank wrote (or its input), to be read by a later act. */
typedef struct {
    int    buf;
    size_t off;
    size_t n;
    int    writer;   /* the builder's index of the act that wrote it, or -1 (input) */
} src_t;

typedef struct {
    amc_sched_builder_t b;
    int                 implicit;   /* the current round is amc_sb_round's */
    int                 has_msg;    /* ... and holds a message */
    size_t              recv_next;  /* ranges handed out, in elements */
    size_t              tmp_next;
    elem_t              tmp[TMP_ELEMS];
    src_t               src[MAX_SRC];
    int                 nsrc;
} gen_t;

static gen_t gen[MAX_N];

static elem_t *gen_at(int r, int k, int buf, size_t off)
{
    switch (buf) {
    case AMC_BUF_SEND:
        return &run.send[r][off];
    case AMC_BUF_RECV:
        return &run.op[k].expect[r][off];
    default:
        return &gen[r].tmp[off];
    }
}

static void gen_round(int r, amc_test_rng_t *rng)
{
    gen[r].implicit = (amc_test_rng_below(rng, 2) == 0);
    gen[r].has_msg  = 0;
    if (gen[r].implicit) {
        amc_sb_round(&gen[r].b);
    } else {
        amc_sb_stage(&gen[r].b);
    }
}

/* The new act requires a few random earlier ones as well. */
static void gen_extra_edges(int r, amc_test_rng_t *rng)
{
    int act = amc_sb_last(&gen[r].b), k, n;

    if ((act <= 0) || (amc_test_rng_below(rng, 3) != 0)) {
        return;
    }
    n = 1 + (int)amc_test_rng_below(rng, 2);
    for (k = 0; k < n; k++) {
        amc_sb_requires(&gen[r].b, act, (int)amc_test_rng_below(rng, (size_t)act));
    }
}

/* What an act reads: the input, or something written before (and an edge
 * to its writer, added once the reader exists). */
static src_t gen_pick_src(int r, size_t n, amc_test_rng_t *rng)
{
    src_t s;
    int   i, tries;

    for (tries = 0; (tries < 4) && (gen[r].nsrc > 0) && amc_test_rng_below(rng, 2); tries++) {
        i = (int)amc_test_rng_below(rng, (size_t)gen[r].nsrc);
        if (gen[r].src[i].n >= n) {
            s   = gen[r].src[i];
            s.off += amc_test_rng_below(rng, s.n - n + 1);
            s.n    = n;
            return s;
        }
    }
    s.buf    = AMC_BUF_SEND;
    s.off    = amc_test_rng_below(rng, IN_ELEMS - n + 1);
    s.n      = n;
    s.writer = -1;
    return s;
}

static void gen_add_src(int r, int buf, size_t off, size_t n, int writer)
{
    if (gen[r].nsrc < MAX_SRC) {
        gen[r].src[gen[r].nsrc++] = (src_t){ buf, off, n, writer };
    }
}

static void gen_requires_src(int r, const src_t *s)
{
    if (s->writer >= 0) {
        amc_sb_requires(&gen[r].b, amc_sb_last(&gen[r].b), s->writer);
    }
}

/* A message from src to dst: the receive lands in a fresh range, or is
 * reduced into one (init + message). */
static void gen_message(int k, int from, int to, amc_test_rng_t *rng)
{
    op_t  *op = &run.op[k];
    size_t n  = (amc_test_rng_below(rng, 8) == 0) ? 0 : 1 + amc_test_rng_below(rng, MAX_LEN);
    size_t off, i;
    src_t  s;
    int    reduce = (n > 0) && (amc_test_rng_below(rng, 3) == 0), right, recv;

    if ((n > 0) && (gen[to].recv_next + n > OUT_ELEMS)) {
        return;
    }
    if (n == 0) {
        amc_sb_send(&gen[from].b, to, AMC_BUF_SEND, 0, 0);
        gen_extra_edges(from, rng);
        amc_sb_recv(&gen[to].b, from, AMC_BUF_RECV, 0, 0);
        gen_extra_edges(to, rng);
    } else {
        s = gen_pick_src(from, n, rng);
        amc_sb_send(&gen[from].b, to, s.buf, s.off * sizeof(elem_t), n * sizeof(elem_t));
        gen_requires_src(from, &s);
        gen_extra_edges(from, rng);
        off = gen[to].recv_next;
        gen[to].recv_next += n;
        right = (int)amc_test_rng_below(rng, 2);
        if (reduce) {
            amc_sb_recv_reduce(&gen[to].b, from, AMC_BUF_RECV, off * sizeof(elem_t),
                               n * sizeof(elem_t), right);
        } else {
            amc_sb_recv(&gen[to].b, from, AMC_BUF_RECV, off * sizeof(elem_t),
                        n * sizeof(elem_t));
        }
        recv = amc_sb_last(&gen[to].b);
        gen_extra_edges(to, rng);
        for (i = 0; i < n; i++) {
            op->expect[to][off + i] = (reduce ? op->expect[to][off + i] : 0) +
                                      *gen_at(from, k, s.buf, s.off + i);
        }
        gen_add_src(to, AMC_BUF_RECV, off, n, recv);
    }
    gen[from].has_msg = gen[to].has_msg = 1;
    stat_msgs++;
}

/* A copy into a fresh range of scratch or the receive buffer, or a
 * reduction into a fresh range of the receive buffer (init + source). */
static void gen_local(int k, int r, amc_test_rng_t *rng)
{
    size_t n = 1 + amc_test_rng_below(rng, MAX_LEN), off, i;
    int    reduce = (amc_test_rng_below(rng, 3) == 0);
    int    buf = (!reduce && amc_test_rng_below(rng, 2)) ? AMC_BUF_TMP : AMC_BUF_RECV;
    size_t *next = (buf == AMC_BUF_TMP) ? &gen[r].tmp_next : &gen[r].recv_next;
    src_t  s;
    elem_t v;

    if (*next + n > ((buf == AMC_BUF_TMP) ? TMP_ELEMS : OUT_ELEMS)) {
        return;
    }
    if (gen[r].implicit && gen[r].has_msg) {
        /* a round's messages wait for its locals: a local after them
         * would hold up messages drawn before it */
        gen_round(r, rng);
    }
    s    = gen_pick_src(r, n, rng);
    off  = *next;
    *next += n;
    if (reduce) {
        amc_sb_reduce(&gen[r].b, buf, off * sizeof(elem_t), s.buf, s.off * sizeof(elem_t),
                      n * sizeof(elem_t), (int)amc_test_rng_below(rng, 2));
    } else {
        amc_sb_copy(&gen[r].b, buf, off * sizeof(elem_t), s.buf, s.off * sizeof(elem_t),
                    n * sizeof(elem_t));
    }
    gen_requires_src(r, &s);
    gen_extra_edges(r, rng);
    for (i = 0; i < n; i++) {
        v = *gen_at(r, k, s.buf, s.off + i);
        *gen_at(r, k, buf, off + i) = reduce ? *gen_at(r, k, buf, off + i) + v : v;
    }
    gen_add_src(r, buf, off, n, amc_sb_last(&gen[r].b));
}

/* One collective: a sequence of events over all ranks, each rank's part
 * built as the sequence goes. */
static int gen_op(int k, amc_test_rng_t *rng)
{
    op_t  *op = &run.op[k];
    int    r, e, nevents = 1 + (int)amc_test_rng_below(rng, MAX_EVENTS), from, to, status;
    size_t i;

    for (r = 0; r < run.n; r++) {
        for (i = 0; i < OUT_ELEMS; i++) {
            op->recv[r][i]   = (elem_t)(1000000 * (k + 1) + 1000 * r + (int)i);
            op->expect[r][i] = op->recv[r][i];
        }
        memset(&gen[r], 0, offsetof(gen_t, tmp));
        gen[r].nsrc = 0;
        for (i = 0; i < TMP_ELEMS; i++) {
            gen[r].tmp[i] = -1; /* never read before written */
        }
        if (amc_sb_init(&gen[r].b) != AMC_SUCCESS) {
            return AMC_ERR_NO_MEMORY;
        }
        gen_round(r, rng);
    }
    for (e = 0; e < nevents; e++) {
        r = (int)amc_test_rng_below(rng, (size_t)run.n);
        switch (amc_test_rng_below(rng, 6)) {
        case 0:
            gen_round(r, rng);
            break;
        case 1:
            gen_local(k, r, rng);
            break;
        default:
            from = r;
            to   = (int)amc_test_rng_below(rng, (size_t)run.n - 1);
            to  += (to >= from);
            gen_message(k, from, to, rng);
            break;
        }
    }
    for (r = 0, status = AMC_SUCCESS; r < run.n; r++) {
        amc_sb_tmp(&gen[r].b, gen[r].tmp_next * sizeof(elem_t));
        if (amc_sb_finish(&gen[r].b, &op->sched[r]) != AMC_SUCCESS) {
            op->sched[r] = NULL; /* finish freed it */
            status       = AMC_ERR_NO_MEMORY;
        }
    }
    for (r = 0; (r < run.n) && (status != AMC_SUCCESS); r++) {
        amc_sched_free(op->sched[r]);
        op->sched[r] = NULL;
    }
    return status;
}

/* ---------------------------------------------------------------- the trace */

static void trace(void *arg, const amc_coll_inst_t *inst, uint32_t act, int event)
{
    int r = inst->comm->rank, k;

    (void)arg;
    for (k = 0; k < run.nops; k++) {
        if (inst->sched == run.op[k].sched[r]) {
            break;
        }
    }
    if ((k == run.nops) || (act >= inst->sched->nacts)) {
        run.foreign++;
        return;
    }
    run.clock++;
    if (event == AMC_ACT_TRACE_READY) {
        run.op[k].ready_at[r][act] = run.clock;
        run.op[k].nready[r][act]++;
    } else {
        run.op[k].done_at[r][act] = run.clock;
        run.op[k].ndone[r][act]++;
    }
}

static int trace_alloc(op_t *op)
{
    uint32_t n;
    int      r;

    for (r = 0; r < run.n; r++) {
        n = op->sched[r]->nacts + 1;
        op->ready_at[r] = calloc(n, sizeof(uint64_t));
        op->done_at[r]  = calloc(n, sizeof(uint64_t));
        op->nready[r]   = calloc(n, 1);
        op->ndone[r]    = calloc(n, 1);
        if ((op->ready_at[r] == NULL) || (op->done_at[r] == NULL) || (op->nready[r] == NULL) ||
            (op->ndone[r] == NULL)) {
            return -1;
        }
        stat_acts += op->sched[r]->nacts;
    }
    return 0;
}

static void trace_free(op_t *op)
{
    int r;

    for (r = 0; r < MAX_N; r++) {
        free(op->ready_at[r]);
        free(op->done_at[r]);
        free(op->nready[r]);
        free(op->ndone[r]);
        op->ready_at[r] = op->done_at[r] = NULL;
        op->nready[r] = op->ndone[r] = NULL;
    }
}

/* What the trace must show; the schedules are the test's copies of the
 * graphs (the engine freed its own with the instances). */
static void trace_check(int k, amc_sched_t **graphs, const char *what)
{
    op_t                  *op = &run.op[k];
    const amc_sched_t     *s;
    const amc_sched_act_t *act, *other;
    uint32_t               i, j, next;
    int                    r, peer, o, bad = 0;

    for (r = 0; (r < run.n) && (bad < 5); r++) {
        s = graphs[r];
        for (i = 0; (i < s->nacts) && (bad < 5); i++) {
            act = &s->acts[i];
            if ((op->nready[r][i] != 1) || (op->ndone[r][i] != 1) ||
                (op->done_at[r][i] < op->ready_at[r][i])) {
                CHECK(0, "%s op %d rank %d act %u (type %d): ready %u times (at %llu), done %u "
                      "times (at %llu)", what, k, r, i, act->type, op->nready[r][i],
                      (unsigned long long)op->ready_at[r][i], op->ndone[r][i],
                      (unsigned long long)op->done_at[r][i]);
                bad++;
                continue;
            }
            for (j = 0; j < act->nsucc; j++) {
                next = s->succ[act->succ + j];
                stat_edges++;
                if (op->ready_at[r][next] <= op->done_at[r][i]) {
                    CHECK(0, "%s op %d rank %d: act %u (type %d) ready at %llu, before act %u "
                          "(type %d) it requires was done (at %llu)", what, k, r, next,
                          s->acts[next].type, (unsigned long long)op->ready_at[r][next], i,
                          act->type, (unsigned long long)op->done_at[r][i]);
                    bad++;
                }
            }
            if (act->type == AMC_ACT_SEND) {
                peer  = act->peer;
                o     = amc_sched_find_recv(graphs[peer], r, act->tag);
                if (o < 0) {
                    CHECK(0, "%s op %d rank %d act %u: no receive at %d", what, k, r, i, peer);
                    bad++;
                    continue;
                }
                other = &graphs[peer]->acts[o];
                if (op->done_at[peer][o] <= op->ready_at[r][i]) {
                    CHECK(0, "%s op %d: rank %d's receive %d from %d done (at %llu) before the "
                          "send (act %u) was ready (at %llu)", what, k, peer, o, r,
                          (unsigned long long)op->done_at[peer][o], i,
                          (unsigned long long)op->ready_at[r][i]);
                    bad++;
                }
                if (run.all_rndv && (act->bytes > 0) &&
                    (op->done_at[r][i] <= op->ready_at[peer][o])) {
                    CHECK(0, "%s op %d: rank %d's rendezvous send %u to %d done (at %llu) "
                          "before the receive (act %d, type %d) was ready (at %llu)", what, k, r,
                          i, peer, (unsigned long long)op->done_at[r][i], o, other->type,
                          (unsigned long long)op->ready_at[peer][o]);
                    bad++;
                }
            }
        }
    }
    CHECK(bad == 0, "%s op %d: %d trace violations", what, k, bad);
}

/* ---------------------------------------------------------------- one run */

/* Starts sched (taken over) on comm as a call of one element each way would
 * be started (am_coll/api/api_coll.c); *req_p the request. */
static int start_sched(amc_comm_t comm, amc_sched_t *sched, const void *sendbuf, void *recvbuf,
                       struct amc_request **req_p)
{
    amc_coll_args_t     args;
    struct amc_request *req;
    int                 status;

    memset(&args, 0, sizeof(args));
    args.coll        = AMC_COLL_ALLGATHER; /* any kind: every rank names the same */
    args.root        = -1;
    args.count       = 1;
    args.dt          = AMC_INT64;
    args.dt_size     = sizeof(elem_t);
    args.op          = AMC_SUM;
    args.commutative = 1;
    args.sendbuf     = sendbuf;
    args.recvbuf     = recvbuf;
    req = amc_request_alloc(comm);
    if (req == NULL) {
        amc_sched_free(sched);
        return AMC_ERR_NO_MEMORY;
    }
    amc_request_begin_nb(req);
    status = amc_coll_start_sched(comm, &args, sched, req);
    amc_request_end_start(req, status);
    if (status != AMC_SUCCESS) {
        amc_request_release(req);
        return status;
    }
    *req_p = req;
    return AMC_SUCCESS;
}

static int start(amc_test_world_t *w, int k, int r)
{
    op_t *op = &run.op[k];

    return start_sched(amc_test_world_comm(w, r), op->sched[r], run.send[r], op->recv[r],
                       &op->req[r]);
}

/* The schedules' graphs outlive the instances (which free them): a copy
 * of what trace_check reads. */
static amc_sched_t *graph_copy(const amc_sched_t *s)
{
    amc_sched_t *c = calloc(1, sizeof(*c));
    uint32_t     nedges = 0, i;

    if (c == NULL) {
        return NULL;
    }
    for (i = 0; i < s->nacts; i++) {
        nedges += s->acts[i].nsucc;
    }
    /* what trace_check and amc_sched_find_recv read, nothing else: the
     * rest of a copy could point into the original */
    c->nacts       = s->nacts;
    c->nrecv       = s->nrecv;
    c->acts        = malloc(((size_t)s->nacts + 1) * sizeof(*c->acts));
    c->succ        = malloc(((size_t)nedges + 1) * sizeof(*c->succ));
    c->recv_by_key = malloc(((size_t)s->nrecv + 1) * sizeof(*c->recv_by_key));
    if ((c->acts == NULL) || (c->succ == NULL) || (c->recv_by_key == NULL)) {
        amc_sched_free(c);
        return NULL;
    }
    if (s->nacts > 0) {
        memcpy(c->acts, s->acts, (size_t)s->nacts * sizeof(*c->acts));
    }
    if (nedges > 0) {
        memcpy(c->succ, s->succ, (size_t)nedges * sizeof(*c->succ));
    }
    if (s->nrecv > 0) {
        memcpy(c->recv_by_key, s->recv_by_key, (size_t)s->nrecv * sizeof(*c->recv_by_key));
    }
    return c;
}

static void one_run(int n, uint64_t seed, amc_fake_completion_t mode, size_t rndv_thresh)
{
    amc_test_world_t w;
    amc_test_rng_t   rng;
    amc_config_t     cfg;
    amc_sched_t     *graphs[MAX_OPS][MAX_N];
    char             what[160];
    int              r, k, flag, left, idle = 0, status, ok = 1;
    size_t           cnt, i;

    memset(graphs, 0, sizeof(graphs));
    amc_test_rng_seed(&rng, seed);
    run.n        = n;
    run.seed     = seed;
    run.nops     = 1 + (int)amc_test_rng_below(&rng, MAX_OPS);
    run.all_rndv = (rndv_thresh <= 1);
    run.clock    = 0;
    run.foreign  = 0;
    snprintf(what, sizeof(what), "N=%d seed=%llu completion=%s rndv_thresh=%zu", n,
             (unsigned long long)seed, mode_name(mode), rndv_thresh);
    for (r = 0; r < n; r++) {
        for (i = 0; i < IN_ELEMS; i++) {
            run.send[r][i] = (elem_t)((seed % 1000) * 100000 + 100 * r + (int)i + 1);
        }
    }
    for (k = 0; k < run.nops; k++) {
        memset(&run.op[k].req, 0, sizeof(run.op[k].req));
        memset(run.op[k].posted, 0, sizeof(run.op[k].posted));
        memset(run.op[k].finished, 0, sizeof(run.op[k].finished));
        memset(run.op[k].sched, 0, sizeof(run.op[k].sched));
        status = gen_op(k, &rng);
        CHECK(status == AMC_SUCCESS, "%s: building op %d: %s", what, k, amc_strerror(status));
        if (status != AMC_SUCCESS) {
            ok = 0;
            run.nops = k;
            break;
        }
        ok &= (trace_alloc(&run.op[k]) == 0);
        for (r = 0; r < n; r++) {
            graphs[k][r] = graph_copy(run.op[k].sched[r]);
            ok &= (graphs[k][r] != NULL);
        }
    }
    CHECK(ok, "%s: setting up", what);

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level   = -1;
    cfg.rndv_thresh = rndv_thresh;
    status = amc_test_world_create(&w, n, mode, &cfg);
    CHECK(status == AMC_SUCCESS, "%s: world", what);
    if ((status != AMC_SUCCESS) || !ok) {
        goto out_scheds;
    }
    for (r = 0; r < n; r++) {
        w.ctx[r]->act_trace     = trace;
        w.ctx[r]->act_trace_arg = &run;
    }

    left = n * run.nops;
    while ((left > 0) && (idle < 5000)) {
        int activity = 0;

        for (r = 0; r < n; r++) {
            for (k = 0; (k < run.nops) && run.op[k].posted[r]; k++) {
            }
            if ((k < run.nops) && (amc_test_rng_below(&rng, 3) == 0)) {
                status = start(&w, k, r);
                CHECK(status == AMC_SUCCESS, "%s: start op %d at rank %d: %s", what, k, r,
                      amc_strerror(status));
                run.op[k].posted[r] = 1;
                run.op[k].sched[r]  = (status == AMC_SUCCESS) ? run.op[k].sched[r] : NULL;
                if (status != AMC_SUCCESS) {
                    run.op[k].finished[r] = 1;
                    left--;
                }
                activity++;
            }
            for (k = 0; k < run.nops; k++) {
                if (!run.op[k].posted[r] || run.op[k].finished[r]) {
                    continue;
                }
                status = amc_test(&run.op[k].req[r], &flag);
                if (flag || (status != AMC_SUCCESS)) {
                    run.op[k].status[r]   = status;
                    run.op[k].finished[r] = 1;
                    left--;
                    activity++;
                }
            }
        }
        cnt = amc_fake_deliverable(w.fabric);
        if (cnt > 0) {
            activity += amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, cnt));
        }
        idle = activity ? 0 : idle + 1;
    }
    CHECK(left == 0, "%s: %d of %d collectives never completed", what, left, n * run.nops);
    for (k = 0; k < run.nops; k++) {
        for (r = 0; r < n; r++) {
            CHECK(!run.op[k].finished[r] || (run.op[k].status[r] == AMC_SUCCESS),
                  "%s: op %d rank %d: %s", what, k, r, amc_strerror(run.op[k].status[r]));
            for (i = 0; i < OUT_ELEMS; i++) {
                if (run.op[k].recv[r][i] != run.op[k].expect[r][i]) {
                    CHECK(0, "%s: op %d rank %d: element %zu is %lld, expected %lld", what, k,
                          r, i, (long long)run.op[k].recv[r][i],
                          (long long)run.op[k].expect[r][i]);
                    break;
                }
            }
        }
        if (left == 0) {
            trace_check(k, graphs[k], what);
        }
    }
    CHECK(run.foreign == 0, "%s: %lu trace events of unknown instances", what, run.foreign);
    /* once every call finished, only credit messages may still be queued
     * (AMC_EAGER_TOKENS=1 in the environment) */
    amc_test_world_settle(&w, what);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "%s: rendezvous descriptors not released",
          what);
    CHECK(amc_fake_header_violations(w.fabric) == 0, "%s: a send header reused early", what);
    stat_runs++;
    amc_test_world_destroy(&w);

out_scheds:
    for (k = 0; k < MAX_OPS; k++) {
        for (r = 0; r < MAX_N; r++) {
            /* not started: still ours */
            if ((k < run.nops) && (r < n) && !run.op[k].posted[r]) {
                amc_sched_free(run.op[k].sched[r]);
            }
            run.op[k].sched[r] = NULL;
            amc_sched_free(graphs[k][r]);
        }
        trace_free(&run.op[k]);
    }
}

/* ---------------------------------------------------------------- builder */

/* The act of type (and peer, for messages) in s, or -1. */
static int find_act(const amc_sched_t *s, int type, int peer)
{
    uint32_t i;

    for (i = 0; i < s->nacts; i++) {
        if ((s->acts[i].type == type) && ((type >= AMC_ACT_COPY) || (s->acts[i].peer == peer))) {
            return (int)i;
        }
    }
    return -1;
}

/* Whether act b is reachable from act a (through joins too). */
static int follows(const amc_sched_t *s, uint32_t a, uint32_t b)
{
    uint32_t stack[256], n = 0, i, k;
    uint8_t  seen[256];

    if (s->nacts > 256) {
        return 0;
    }
    memset(seen, 0, sizeof(seen));
    stack[n++] = a;
    while (n > 0) {
        i = stack[--n];
        for (k = 0; k < s->acts[i].nsucc; k++) {
            uint32_t next = s->succ[s->acts[i].succ + k];

            if (next == b) {
                return 1;
            }
            if (!seen[next]) {
                seen[next]  = 1;
                stack[n++] = next;
            }
        }
    }
    return 0;
}

static int ranges_disjoint(size_t a, size_t alen, size_t b, size_t blen)
{
    return (a + alen <= b) || (b + blen <= a);
}

/* What a stage promises (sched.h): its acts require only what
 * amc_sb_requires says; and what that means for the staging area. */
static void builder_checks(void)
{
    amc_sched_builder_t b;
    amc_sched_t        *s;
    int                 copy, send, recv, x, y, z, ra, rb, rc;
    uint32_t            i;

    /* a stage of a copy, a send and a receive: no edges at all */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_stage(&b);
    amc_sb_send(&b, 1, AMC_BUF_SEND, 0, 8);
    amc_sb_recv(&b, 1, AMC_BUF_RECV, 0, 8);
    amc_sb_copy(&b, AMC_BUF_TMP, 0, AMC_BUF_SEND, 0, 8);
    amc_sb_tmp(&b, 8);
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    for (i = 0; i < s->nacts; i++) {
        CHECK((s->acts[i].ndeps == 0) && (s->acts[i].nsucc == 0),
              "stage: act %u (type %d) has %u deps and %u successors the algorithm never "
              "asked for", i, s->acts[i].type, s->acts[i].ndeps, s->acts[i].nsucc);
    }
    CHECK(s->nroots == s->nacts, "stage: %u roots of %u acts", s->nroots, s->nacts);
    amc_sched_free(s);

    /* a stage whose copy reads what its receive wrote: the copy waits for
     * the receive, nothing waits for the copy (a cycle otherwise) */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_stage(&b);
    amc_sb_recv(&b, 1, AMC_BUF_RECV, 0, 8);
    recv = amc_sb_last(&b);
    amc_sb_copy(&b, AMC_BUF_TMP, 0, AMC_BUF_RECV, 0, 8);
    amc_sb_requires(&b, amc_sb_last(&b), recv);
    amc_sb_send(&b, 1, AMC_BUF_TMP, 0, 8);
    amc_sb_requires(&b, amc_sb_last(&b), amc_sb_last(&b) - 1);
    amc_sb_tmp(&b, 8);
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    recv = find_act(s, AMC_ACT_RECV, 1);
    copy = find_act(s, AMC_ACT_COPY, -1);
    send = find_act(s, AMC_ACT_SEND, 1);
    CHECK((recv >= 0) && (copy >= 0) && (send >= 0), "stage: acts lost");
    if ((recv >= 0) && (copy >= 0) && (send >= 0)) {
        CHECK((s->acts[recv].ndeps == 0) && (s->acts[copy].ndeps == 1) &&
              (s->acts[send].ndeps == 1) && follows(s, (uint32_t)recv, (uint32_t)copy) &&
              follows(s, (uint32_t)copy, (uint32_t)send) &&
              !follows(s, (uint32_t)copy, (uint32_t)recv),
              "stage: receive -> copy -> send expected, deps %u %u %u", s->acts[recv].ndeps,
              s->acts[copy].ndeps, s->acts[send].ndeps);
    }
    amc_sched_free(s);

    /* round { x }, stage { y }, round { z }: z follows y, y does not follow
     * x; the reducing receives of x and y are in flight together and need
     * staging of their own; z may reuse y's */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_round(&b);
    amc_sb_recv_reduce(&b, 1, AMC_BUF_RECV, 0, 16, 0);
    amc_sb_send(&b, 2, AMC_BUF_SEND, 0, 8);
    amc_sb_stage(&b);
    amc_sb_recv_reduce(&b, 2, AMC_BUF_RECV, 16, 8, 1);
    amc_sb_round(&b);
    amc_sb_recv_reduce(&b, 3, AMC_BUF_RECV, 24, 8, 0);
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    x  = find_act(s, AMC_ACT_RECV_REDUCE, 1);
    y  = find_act(s, AMC_ACT_RECV_REDUCE_R, 2);
    z  = find_act(s, AMC_ACT_RECV_REDUCE, 3);
    CHECK((x >= 0) && (y >= 0) && (z >= 0), "round/stage/round: acts lost");
    if ((x >= 0) && (y >= 0) && (z >= 0)) {
        ra = follows(s, (uint32_t)x, (uint32_t)y);
        rb = follows(s, (uint32_t)y, (uint32_t)z);
        rc = follows(s, (uint32_t)x, (uint32_t)z);
        CHECK(!ra && rb && !rc, "round/stage/round: x->y %d (want 0), y->z %d (want 1), x->z "
              "%d (want 0)", ra, rb, rc);
        CHECK(ranges_disjoint(s->acts[x].off2, s->acts[x].bytes, s->acts[y].off2,
                              s->acts[y].bytes) &&
              ranges_disjoint(s->acts[x].off2, s->acts[x].bytes, s->acts[z].off2,
                              s->acts[z].bytes),
              "round/stage/round: staging x [%zu,+%zu) y [%zu,+%zu) z [%zu,+%zu): x shares "
              "with a receive it may be in flight with", s->acts[x].off2, s->acts[x].bytes,
              s->acts[y].off2, s->acts[y].bytes, s->acts[z].off2, s->acts[z].bytes);
        CHECK((s->acts[y].off2 + s->acts[y].bytes <= s->stage_bytes) &&
              (s->acts[z].off2 + s->acts[z].bytes <= s->stage_bytes) &&
              (s->stage_bytes <= 32), "round/stage/round: stage_bytes %zu", s->stage_bytes);
    }
    amc_sched_free(s);
}

/* amc_sb_exact, N=3: rank 0 sends rank 1 8 bytes where rank 1 expects 16
 * (the only message between them, so no count disagrees), and rank 1 also
 * waits for a message from rank 2, which sends nothing. Marked exact, the
 * length aborts rank 1's instance with AMC_ERR_TRUNCATE at once (eager and
 * rendezvous); unmarked, it would fail only when everything arrived, which
 * here is never. */
static void exact_checks(void)
{
    static const size_t threshs[] = { (size_t)1 << 30, 1 };
    amc_test_world_t    w;
    amc_config_t        cfg;
    amc_sched_builder_t b[3];
    amc_sched_t        *s[3];
    amc_request_t       req[3];
    elem_t              in[3] = { 7, 8, 9 }, out[3][3];
    int                 t, r, status[3];

    for (t = 0; t < 2; t++) {
        CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
        cfg.log_level   = -1;
        cfg.rndv_thresh = threshs[t];
        CHECK(amc_test_world_create(&w, 3, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS,
              "world");
        for (r = 0; r < 3; r++) {
            CHECK(amc_sb_init(&b[r]) == AMC_SUCCESS, "init");
            amc_sb_round(&b[r]);
        }
        amc_sb_send(&b[0], 1, AMC_BUF_SEND, 0, sizeof(elem_t));
        amc_sb_recv(&b[1], 0, AMC_BUF_RECV, 0, 2 * sizeof(elem_t));
        amc_sb_exact(&b[1], amc_sb_last(&b[1]));
        amc_sb_recv(&b[1], 2, AMC_BUF_RECV, 2 * sizeof(elem_t), sizeof(elem_t));
        amc_sb_copy(&b[2], AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, sizeof(elem_t));
        for (r = 0; r < 3; r++) {
            CHECK(amc_sb_finish(&b[r], &s[r]) == AMC_SUCCESS, "finish");
            CHECK(start_sched(amc_test_world_comm(&w, r), s[r], &in[r], out[r], &req[r]) ==
                      AMC_SUCCESS, "start rank %d", r);
        }
        (void)amc_test_world_drive(&w, req, status);
        CHECK(status[1] == AMC_ERR_TRUNCATE, "exact, %s: rank 1 got %s",
              t ? "rendezvous" : "eager",
              (status[1] == -1) ? "nothing (it waits for ever)" : amc_strerror(status[1]));
        CHECK((status[0] == AMC_SUCCESS) && (status[2] == AMC_SUCCESS),
              "exact: ranks 0 and 2 got %s and %s", amc_strerror(status[0]),
              amc_strerror(status[2]));
        while (amc_fake_deliverable(w.fabric) > 0) {
            amc_fake_deliver(w.fabric, 0);
        }
        CHECK(amc_fake_rndv_pending(w.fabric) == 0, "exact: descriptors left unreleased");
        amc_test_world_destroy(&w);
    }
}

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    static const amc_fake_completion_t modes[] = { AMC_FAKE_COMPLETE_LATER,
                                                   AMC_FAKE_COMPLETE_ON_DELIVERY,
                                                   AMC_FAKE_COMPLETE_ON_SEND };
    static const size_t threshs[] = { 1, 17, (size_t)1 << 30 };
    const char         *one = getenv("AMCTEST_DAG_SEED");
    double              t0 = now_sec();
    uint64_t            seed;
    int                 n, i;

    builder_checks();
    exact_checks();
    if (one != NULL) {
        seed = strtoull(one, NULL, 10);
        n    = 2 + (int)(seed % (MAX_N - 1));
        one_run(n, seed, modes[(seed / 7) % 3], threshs[(seed / 3) % 3]);
        return amc_test_summary("test_dag_random");
    }
    for (n = 2; n <= MAX_N; n++) {
        for (i = 0; i < RUNS_PER_N; i++) {
            /* a seed says its N, completion mode and threshold (AMCTEST_DAG_SEED) */
            seed = (uint64_t)(n - 2) + (uint64_t)(MAX_N - 1) * (uint64_t)i;
            one_run(n, seed, modes[(seed / 7) % 3], threshs[(seed / 3) % 3]);
        }
    }
    printf("test_dag_random: %lu runs (N 2..%d), %lu acts, %lu edges and %lu messages checked; "
           "%.1f s\n", stat_runs, MAX_N, stat_acts, stat_edges, stat_msgs, now_sec() - t0);
    return amc_test_summary("test_dag_random");
}
