/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every delivery order, with completions that arrive late. Three ranks
 * (four for a pipeline that forwards) run one collective over the fake
 * transport in AMC_FAKE_COMPLETE_LATER mode: a message's
 * arrival, the sender's send completion, a rendezvous pull and the
 * receiver's fetch completion are events of their own, and so is each
 * rank's call. The test runs every order of those events that the
 * transport allows, by replay: a run follows a prefix of choices, then
 * takes the first choice it has not seen, and the next run backtracks.
 *
 * Orders are told apart by what each rank saw: events at different ranks
 * touch different ranks' state only (a pull reads the sender's buffer,
 * which nothing writes while the send is in flight), so two orders in which
 * every rank saw the same events in the same order reach the same state.
 * The fake transport names events by the rank whose step queued them and
 * a counter there (amc_fake_event), which is the same in such orders; a
 * hash of every rank's sequence of names is the state's key, and a state
 * already explored is not explored again. So every distinct interleaving
 * of arrivals, pulls, completions and calls at every rank is run once.
 *
 * Collectives, every order, eager and rendezvous: bcast binomial (roots 0
 * and 1), bcast pipeline with one-element segments (two segments, root 0),
 * allreduce by recursive doubling and linear. Beyond that: the pipeline at
 * four ranks, where rank 2 forwards each segment to rank 3 once it landed
 * (every eager order; random rendezvous orders, as there are millions),
 * the pipeline from root 2 (every eager order, random rendezvous ones) and
 * the ring allreduce (random orders).
 * In every final state every rank's request has completed with success and
 * the right data, buffers are untouched past their end and inputs
 * unchanged, nothing is left queued, no rendezvous descriptor unreleased
 * and no header reused early.
 *
 * Mismatches (ranks calling different collectives or naming different
 * roots), every order: every rank's request must complete (no hang) with
 * success or AMC_ERR_PROTOCOL, a rank that succeeds must hold the right
 * data for what it called, some rank must report the mismatch (in its call
 * or, when its part was done before the foreign message came, in its next
 * call), and the communicator must work again afterwards. Two cases where a
 * rank may never hear of the mismatch (nothing foreign is ever sent to it:
 * the engine does not tell peers that it aborted) are run as well; final
 * states with ranks left waiting are counted and printed as KNOWN, not
 * failed (AMCTEST_ORDERS_STRICT=1 fails them).
 *
 * AMCTEST_ORDERS_MAX=n stops each case after n final states (0: no limit;
 * 5000 with AMCTEST_QUICK=1, the sanitizer pass).
 */
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N     4
#define MAX_COUNT 4
#define GUARD     4
#define SENTINEL  (-1)
#define MAX_DEPTH 160
#define MAX_OPTS  48

/* ---------------------------------------------------------------- cases */

/* What a mismatch may do. */
enum {
    MATCH,          /* every rank agrees: success and the right data everywhere */
    MISMATCH,       /* some rank must report AMC_ERR_PROTOCOL; nobody may hang */
    MISMATCH_MUTE   /* as MISMATCH, except that a rank to which no foreign message
                     * ever comes may be left waiting (counted, not failed) */
};

typedef struct {
    const char   *name;
    int           n;
    int           coll[MAX_N];     /* per rank: what it calls */
    int           root[MAX_N];
    size_t        count;           /* ints */
    const char   *bcast_alg;       /* AMC_BCAST_ALG, or NULL: auto */
    const char   *allreduce_alg;
    unsigned      segment;         /* bcast pipeline: bytes per segment */
    int           mismatch;
    /* eager, rendezvous: 0 every order, else that many random orders (the
     * state spaces that would take minutes) */
    unsigned long sample[2];
} case_t;

#define B AMC_COLL_BCAST
#define R AMC_COLL_REDUCE
#define A AMC_COLL_ALLREDUCE

static const case_t cases[] = {
    { "bcast binomial root 0", 3, { B, B, B }, { 0, 0, 0 }, 3, "binomial", NULL, 0, MATCH,
      { 0, 0 } },
    { "bcast binomial root 1", 3, { B, B, B }, { 1, 1, 1 }, 2, "binomial", NULL, 0, MATCH,
      { 0, 0 } },
    /* two segments of one element each */
    { "bcast pipeline root 0", 3, { B, B, B }, { 0, 0, 0 }, 2, "pipeline", NULL, 4, MATCH,
      { 0, 0 } },
    { "bcast pipeline root 2", 3, { B, B, B }, { 2, 2, 2 }, 2, "pipeline", NULL, 4, MATCH,
      { 0, 3000 } },
    /* rank 2 forwards each segment to rank 3 once it landed */
    { "bcast pipeline 4 ranks", 4, { B, B, B, B }, { 0, 0, 0, 0 }, 2, "pipeline", NULL, 4,
      MATCH, { 0, 30000 } },
    { "allreduce recursive doubling", 3, { A, A, A }, { -1, -1, -1 }, 2, NULL,
      "recursive_doubling", 0, MATCH, { 0, 0 } },
    { "allreduce linear", 3, { A, A, A }, { -1, -1, -1 }, 2, NULL, "linear", 0, MATCH,
      { 0, 0 } },
    { "allreduce ring", 3, { A, A, A }, { -1, -1, -1 }, 3, NULL, "ring", 0, MATCH,
      { 20000, 20000 } },
    /* Mismatches run random orders: since a rank that gives up an instance
 * tells its peers (abort notices), every order holds more events than an
 * exhaustive search can visit in time. */
/* rank 0 gets reduce data for its bcast, ranks 1 and 2 bcast data */
    { "bcast vs reduce", 3, { B, R, R }, { 0, 0, 0 }, 2, "binomial", NULL, 0, MISMATCH,
      { 2000, 2000 } },
    { "bcast roots 0 0 1", 3, { B, B, B }, { 0, 0, 1 }, 2, "binomial", NULL, 0, MISMATCH,
      { 2000, 2000 } },
    { "bcast roots 1 1 0", 3, { B, B, B }, { 1, 1, 0 }, 2, "binomial", NULL, 0, MISMATCH,
      { 2000, 2000 } },
    { "bcast vs allreduce", 3, { B, A, B }, { 0, -1, 0 }, 2, "binomial", "recursive_doubling",
      0, MISMATCH,
      { 2000, 2000 } },
    { "pipeline roots 0 0 2", 3, { B, B, B }, { 0, 0, 2 }, 2, "pipeline", NULL, 8, MISMATCH,
      { 2000, 2000 } },
    /* rank 2's bcast may abort on rank 1's exchange message before it sent
     * anything; then ranks 0 and 1 hear of nothing foreign */
    { "allreduce vs bcast", 3, { A, A, B }, { -1, -1, 2 }, 2, "binomial",
      "recursive_doubling", 0, MISMATCH_MUTE,
      { 2000, 2000 } },
    /* rank 1 waits for rank 2's exchange message, which a reduce never sends */
    { "allreduce vs reduce", 3, { A, A, R }, { -1, -1, 2 }, 2, NULL, "recursive_doubling", 0,
      MISMATCH_MUTE,
      { 2000, 2000 } },
};

#undef B
#undef R
#undef A

/* ---------------------------------------------------------------- one run */

typedef struct {
    const case_t    *c;
    amc_test_world_t w;
    int              in[MAX_N][MAX_COUNT + GUARD];
    int              buf[MAX_N][MAX_COUNT + GUARD];   /* bcast buffer, or the result */
    amc_request_t    req[MAX_N];
    int              called[MAX_N];
    int              done[MAX_N];
    int              status[MAX_N];
    uint64_t         hist[MAX_N];                     /* hash of what each rank saw */
} state_t;

typedef struct {
    int      call;     /* the rank that calls, or -1: a queued event */
    size_t   index;    /* the event's index among the deliverable ones */
    int      rank;     /* where it runs */
    uint64_t name;
} opt_t;

static state_t st;

static unsigned long stat_states, stat_runs, stat_steps, stat_finals;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t hist_step(uint64_t h, uint64_t name)
{
    return mix64(h * 0x9e3779b97f4a7c15ull + name + 1);
}

static uint64_t state_key(const uint64_t *hist, int n)
{
    uint64_t k = 0x12345;
    int      r;

    for (r = 0; r < n; r++) {
        k = mix64(k ^ (hist[r] + (uint64_t)r * 0x51ed27u));
    }
    return k;
}

static int buf_value(int rank, size_t i)
{
    return 100 * (rank + 1) + (int)i;
}

static int world_up(const case_t *c, size_t rndv_thresh)
{
    amc_config_t cfg;
    int          r;
    size_t       i;

    memset(&st, 0, sizeof(st));
    st.c = c;
    if (amc_test_config_from_env(&cfg) != AMC_SUCCESS) {
        return AMC_ERR_ARG;
    }
    cfg.log_level   = -1;
    cfg.timeout_sec = 0;
    /* "auto" asks the system for its cores: a system call or four per
     * context, most of what a run costs */
    cfg.wait.spin_count = 0;
    cfg.rndv_thresh = (unsigned)rndv_thresh;
    if (c->bcast_alg != NULL) {
        snprintf(cfg.alg[AMC_COLL_BCAST], sizeof(cfg.alg[0]), "%s", c->bcast_alg);
    }
    if (c->allreduce_alg != NULL) {
        snprintf(cfg.alg[AMC_COLL_ALLREDUCE], sizeof(cfg.alg[0]), "%s", c->allreduce_alg);
    }
    if (c->segment > 0) {
        cfg.bcast_segment = c->segment;
    }
    for (r = 0; r < c->n; r++) {
        for (i = 0; i < MAX_COUNT + GUARD; i++) {
            st.in[r][i]  = buf_value(r, i);
            st.buf[r][i] = SENTINEL;
        }
        if ((c->coll[r] == AMC_COLL_BCAST) && (c->root[r] == r)) {
            memcpy(st.buf[r], st.in[r], c->count * sizeof(int));
        }
    }
    return amc_test_world_create(&st.w, c->n, AMC_FAKE_COMPLETE_LATER, &cfg);
}

static int do_call(int r)
{
    const case_t *c    = st.c;
    amc_comm_t    comm = amc_test_world_comm(&st.w, r);

    st.called[r] = 1;
    switch (c->coll[r]) {
    case AMC_COLL_BCAST:
        return amc_ibcast(st.buf[r], c->count, AMC_INT, c->root[r], comm, &st.req[r]);
    case AMC_COLL_REDUCE:
        return amc_ireduce(st.in[r], (r == c->root[r]) ? st.buf[r] : NULL, c->count, AMC_INT,
                           AMC_SUM, c->root[r], comm, &st.req[r]);
    default:
        return amc_iallreduce(st.in[r], st.buf[r], c->count, AMC_INT, AMC_SUM, comm,
                              &st.req[r]);
    }
}

static void poll_rank(int r)
{
    int flag = 0, status;

    if (!st.called[r] || st.done[r]) {
        return;
    }
    status = amc_test(&st.req[r], &flag);
    if (flag || (status != AMC_SUCCESS)) {
        st.done[r]   = 1;
        st.status[r] = status;
    }
}

static int list_opts(opt_t *opts)
{
    amc_fake_event_t ev;
    size_t           k, i;
    int              n = 0, r;

    for (r = 0; r < st.c->n; r++) {
        if (!st.called[r]) {
            opts[n++] = (opt_t){ r, 0, r, 1 };
        }
    }
    k = amc_fake_deliverable(st.w.fabric);
    for (i = 0; (i < k) && (n < MAX_OPTS); i++) {
        if (amc_fake_event(st.w.fabric, i, &ev)) {
            opts[n++] = (opt_t){ -1, i, ev.rank,
                                 ((uint64_t)(ev.creator + 1) << 48) | ((uint64_t)ev.serial << 4) |
                                 (uint64_t)(ev.kind + 2) };
        }
    }
    CHECK(i == k, "more than %d events queued", MAX_OPTS);
    return n;
}

static int step(const opt_t *o)
{
    int status = AMC_SUCCESS;

    stat_steps++;
    if (o->call >= 0) {
        status = do_call(o->call);
        if (status != AMC_SUCCESS) {
            /* the call itself failed: its status, and no request */
            st.req[o->call]    = AMC_REQUEST_NULL;
            st.done[o->call]   = 1;
            st.status[o->call] = status;
        }
    } else {
        amc_fake_deliver(st.w.fabric, o->index);
    }
    st.hist[o->rank] = hist_step(st.hist[o->rank], o->name);
    poll_rank(o->rank);
    return status;
}

/* ---------------------------------------------------------------- checks */

static char where[512];

static void describe_path(const opt_t *path, int depth)
{
    size_t used;
    int    d;

    used = (size_t)snprintf(where, sizeof(where), "order:");
    for (d = 0; (d < depth) && (used < sizeof(where) - 16); d++) {
        if (path[d].call >= 0) {
            used += (size_t)snprintf(where + used, sizeof(where) - used, " call%d",
                                     path[d].call);
        } else {
            used += (size_t)snprintf(where + used, sizeof(where) - used, " %c%d<%d.%d",
                                     "mcp"[(path[d].name & 15) - 2], path[d].rank,
                                     (int)(path[d].name >> 48) - 1,
                                     (int)((path[d].name >> 4) & 0xfffffffffffull));
        }
    }
}

/* Whether rank r's buffers hold what its call defines, assuming every rank
 * called what r called. */
static int data_ok(int r)
{
    const case_t *c = st.c;
    int           want, k, i;
    size_t        j;

    for (j = 0; j < MAX_COUNT + GUARD; j++) {
        if (st.in[r][j] != buf_value(r, j)) {
            return 0; /* an input changed */
        }
    }
    for (j = c->count; j < MAX_COUNT + GUARD; j++) {
        if (st.buf[r][j] != SENTINEL) {
            return 0; /* written past the end */
        }
    }
    for (j = 0; j < c->count; j++) {
        switch (c->coll[r]) {
        case AMC_COLL_BCAST:
            want = buf_value(c->root[r], j);
            break;
        case AMC_COLL_REDUCE:
            if (r != c->root[r]) {
                want = SENTINEL; /* no receive buffer */
                break;
            }
            /* fall through */
        default:
            for (want = 0, i = 0; i < c->n; i++) {
                want += buf_value(i, j);
            }
            break;
        }
        k = st.buf[r][j];
        if (k != want) {
            return 0;
        }
    }
    return 1;
}

/* An allreduce on every rank, FIFO, until it comes right (stray messages
 * of the mismatch may fail the first tries). first[]: the first try's
 * statuses. */
static int recover(int *first)
{
    amc_request_t reqs[MAX_N];
    int           in[MAX_N], out[MAX_N], status[MAX_N], done[MAX_N], r, tries, ok = 0, flag;
    int           n = st.c->n, left, guard;

    for (tries = 0; (tries < 3) && !ok; tries++) {
        for (r = 0; r < n; r++) {
            in[r]   = r + 1;
            out[r]  = -1;
            done[r] = 0;
            status[r] = amc_iallreduce(&in[r], &out[r], 1, AMC_INT, AMC_SUM,
                                       amc_test_world_comm(&st.w, r), &reqs[r]);
            done[r] = (status[r] != AMC_SUCCESS);
        }
        for (left = n, guard = 0; (left > 0) && (guard < 10000); guard++) {
            for (left = 0, r = 0; r < n; r++) {
                if (!done[r]) {
                    status[r] = amc_test(&reqs[r], &flag);
                    done[r]   = flag || (status[r] != AMC_SUCCESS);
                }
                left += !done[r];
            }
            if ((left > 0) && (amc_fake_deliver(st.w.fabric, 0) == 0)) {
                break;
            }
        }
        if (left > 0) {
            return 0;
        }
        if (tries == 0) {
            memcpy(first, status, (size_t)n * sizeof(int));
        }
        for (ok = 1, r = 0; r < n; r++) {
            ok &= (status[r] == AMC_SUCCESS) && (out[r] == n * (n + 1) / 2);
        }
    }
    return ok;
}

static unsigned long case_failures;

#define FINAL_CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            case_failures++; \
        } \
        CHECK(_cond, __VA_ARGS__); \
    } while (0)

/* MISMATCH_MUTE: final states with ranks left waiting, and the first. */
static unsigned long stat_mute, case_mute;
static int           strict_mute;   /* AMCTEST_ORDERS_STRICT=1: such a state fails */
static char          mute_example[512];

static void check_final(const char *label, const opt_t *path, int depth)
{
    const case_t *c = st.c;
    int           r, noticed = 0, first[MAX_N], ok, waiting = 0;

    stat_finals++;
    describe_path(path, depth);
    for (r = 0; r < c->n; r++) {
        waiting += !st.done[r];
    }
    if ((c->mismatch == MISMATCH_MUTE) && (waiting > 0) && !strict_mute) {
        if (case_mute++ == 0) {
            snprintf(mute_example, sizeof(mute_example), "%s", where);
        }
        stat_mute++;
    } else {
        for (r = 0; r < c->n; r++) {
            FINAL_CHECK(st.done[r], "%s: rank %d never completed (%s)", label, r, where);
        }
    }
    for (r = 0; r < c->n; r++) {
        if (!st.done[r]) {
            continue;
        }
        if (c->mismatch == MATCH) {
            FINAL_CHECK(st.status[r] == AMC_SUCCESS, "%s: rank %d: %s (%s)", label, r,
                        amc_strerror(st.status[r]), where);
        } else {
            FINAL_CHECK((st.status[r] == AMC_SUCCESS) || (st.status[r] == AMC_ERR_PROTOCOL),
                        "%s: rank %d: %s (%s)", label, r, amc_strerror(st.status[r]), where);
            noticed += (st.status[r] == AMC_ERR_PROTOCOL);
        }
        if (st.status[r] == AMC_SUCCESS) {
            FINAL_CHECK(data_ok(r), "%s: rank %d succeeded with wrong data (%s)", label, r,
                        where);
        }
    }
    FINAL_CHECK(amc_fake_deliverable(st.w.fabric) == 0, "%s: events left queued (%s)", label,
                where);
    FINAL_CHECK(amc_fake_header_violations(st.w.fabric) == 0, "%s: header reused early (%s)",
                label, where);
    if (waiting > 0) {
        return; /* reported above, or a mute mismatch: nothing more to ask */
    }
    if (c->mismatch != MATCH) {
        for (r = 0; r < c->n; r++) {
            first[r] = AMC_SUCCESS;
        }
        ok = recover(first);
        FINAL_CHECK(ok, "%s: the communicator did not recover (%s)", label, where);
        for (r = 0; r < c->n; r++) {
            noticed += (first[r] == AMC_ERR_PROTOCOL);
        }
        FINAL_CHECK(noticed > 0, "%s: nobody noticed the mismatch (%s)", label, where);
    }
    FINAL_CHECK(amc_fake_rndv_pending(st.w.fabric) == 0, "%s: descriptors not released (%s)",
                label, where);
}

/* ---------------------------------------------------------------- the search */

/* Open addressing set of state keys (0 is never a key: keys are odd). */
static uint64_t *seen;
static size_t    seen_cap, seen_len;

static int seen_add(uint64_t key)
{
    size_t i;

    key |= 1;
    if (2 * (seen_len + 1) > seen_cap) {
        uint64_t *old = seen;
        size_t    old_cap = seen_cap, j;

        seen_cap = seen_cap ? 2 * seen_cap : 1u << 16;
        seen     = calloc(seen_cap, sizeof(*seen));
        if (seen == NULL) {
            abort();
        }
        seen_len = 0;
        for (j = 0; j < old_cap; j++) {
            if (old[j] != 0) {
                (void)seen_add(old[j]);
            }
        }
        free(old);
    }
    for (i = (size_t)mix64(key) & (seen_cap - 1); seen[i] != 0; i = (i + 1) & (seen_cap - 1)) {
        if (seen[i] == key) {
            return 0;
        }
    }
    seen[i] = key;
    seen_len++;
    return 1;
}

static uint64_t child_key(const opt_t *o)
{
    uint64_t hist[MAX_N];

    memcpy(hist, st.hist, sizeof(hist));
    hist[o->rank] = hist_step(hist[o->rank], o->name);
    return state_key(hist, st.c->n);
}

static unsigned long orders_max;

/* Every order of one case; returns the final states checked. */
static unsigned long explore(const case_t *c, size_t rndv_thresh)
{
    static opt_t path[MAX_DEPTH];
    static opt_t opts_at[MAX_DEPTH][MAX_OPTS];
    static int   nopts_at[MAX_DEPTH];
    static int   pick[MAX_DEPTH];
    opt_t        opts[MAX_OPTS];
    char         label[160];
    int          depth = 0, d, k, n, j, status, replay_ok, stop = 0;
    unsigned long finals0 = stat_finals, failures0;

    snprintf(label, sizeof(label), "%s, %s", c->name,
             (rndv_thresh <= 1) ? "rendezvous" : "eager");
    free(seen);
    seen     = NULL;
    seen_cap = seen_len = 0;
    failures0 = case_failures;
    for (;;) {
        /* replay the prefix */
        status = world_up(c, rndv_thresh);
        CHECK(status == AMC_SUCCESS, "%s: world", label);
        if (status != AMC_SUCCESS) {
            return 0;
        }
        stat_runs++;
        replay_ok = 1;
        for (d = 0; d < depth; d++) {
            n = list_opts(opts);
            if ((n != nopts_at[d]) || (pick[d] >= n) || (opts[pick[d]].name != path[d].name)) {
                CHECK(0, "%s: a replay took another turn at step %d: the library is not "
                      "deterministic per rank", label, d);
                replay_ok = 0;
                break;
            }
            (void)step(&opts[pick[d]]);
        }
        /* then new states, as long as there are */
        while (replay_ok && (depth < MAX_DEPTH)) {
            n = list_opts(opts);
            if (n == 0) {
                check_final(label, path, depth);
                break;
            }
            for (k = 0; (k < n) && !seen_add(child_key(&opts[k])); k++) {
            }
            if (k == n) {
                break; /* every successor explored already */
            }
            memcpy(opts_at[depth], opts, (size_t)n * sizeof(opts[0]));
            nopts_at[depth] = n;
            pick[depth]     = k;
            path[depth]     = opts[k];
            depth++;
            stat_states++;
            (void)step(&opts[k]);
        }
        CHECK(depth < MAX_DEPTH, "%s: an order longer than %d steps", label, MAX_DEPTH);
        amc_test_world_destroy(&st.w);
        if (!replay_ok || (depth >= MAX_DEPTH) ||
            ((orders_max > 0) && (stat_finals - finals0 >= orders_max)) ||
            (case_failures - failures0 > 10)) {
            stop = 1;
        }
        /* backtrack to the deepest step with a successor not explored: the
         * keys of the siblings are those of the replayed prefix's states */
        while (!stop && (depth > 0)) {
            d = depth - 1;
            memset(st.hist, 0, sizeof(st.hist));
            for (j = 0; j < d; j++) {
                st.hist[path[j].rank] = hist_step(st.hist[path[j].rank], path[j].name);
            }
            for (k = 0; k < nopts_at[d]; k++) {
                if (seen_add(child_key(&opts_at[d][k]))) {
                    break;
                }
            }
            if (k < nopts_at[d]) {
                pick[d] = k;
                path[d] = opts_at[d][k];
                stat_states++;
                break;
            }
            depth--;
        }
        if (stop || (depth == 0)) {
            break;
        }
    }
    return stat_finals - finals0;
}

/* Random orders: each step takes one of the possible events at random. */
static unsigned long sample(const case_t *c, size_t rndv_thresh, unsigned long runs,
                            uint64_t seed)
{
    static opt_t   path[MAX_DEPTH];
    opt_t          opts[MAX_OPTS];
    amc_test_rng_t rng;
    char           label[160];
    unsigned long  i, distinct = 0, failures0 = case_failures;
    int            depth, n;

    snprintf(label, sizeof(label), "%s, %s, random order", c->name,
             (rndv_thresh <= 1) ? "rendezvous" : "eager");
    free(seen);
    seen     = NULL;
    seen_cap = seen_len = 0;
    for (i = 0; (i < runs) && (case_failures - failures0 <= 10); i++) {
        if (world_up(c, rndv_thresh) != AMC_SUCCESS) {
            CHECK(0, "%s: world", label);
            return distinct;
        }
        stat_runs++;
        amc_test_rng_seed(&rng, seed + i);
        for (depth = 0; depth < MAX_DEPTH; depth++) {
            n = list_opts(opts);
            if (n == 0) {
                distinct += seen_add(state_key(st.hist, c->n));
                check_final(label, path, depth);
                break;
            }
            path[depth] = opts[amc_test_rng_below(&rng, (size_t)n)];
            (void)step(&path[depth]);
        }
        CHECK(depth < MAX_DEPTH, "%s: an order longer than %d steps", label, MAX_DEPTH);
        amc_test_world_destroy(&st.w);
    }
    return distinct;
}

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    static const size_t threshs[] = { (size_t)1 << 30, 1 };
    const char         *max = getenv("AMCTEST_ORDERS_MAX"), *strict;
    unsigned long       finals, finals0;
    size_t              i, t;
    double              t0 = now_sec(), t1;

    strict      = getenv("AMCTEST_ORDERS_STRICT");
    strict_mute = (strict != NULL) && (strict[0] == '1');
    orders_max  = (max != NULL) ? strtoul(max, NULL, 10) : amc_test_quick() ? 5000 : 0;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (t = 0; t < 2; t++) {
            t1        = now_sec();
            case_mute = 0;
            finals0   = stat_finals;
            if (cases[i].sample[t] == 0) {
                finals = explore(&cases[i], threshs[t]);
                /* a capped search checks the first orders of a depth-first
                 * walk, not all of them: say so */
                printf("%-30s %-10s %s %7lu final states  %7lu runs", cases[i].name,
                       t ? "rendezvous" : "eager",
                       ((orders_max > 0) && (finals >= orders_max)) ? "first orders (capped):"
                                                                   : "every order:",
                       finals, stat_runs);
            } else {
                finals = sample(&cases[i], threshs[t], cases[i].sample[t], 1000 * i + t);
                printf("%-30s %-10s %5lu random orders: %7lu distinct final states", cases[i].name,
                       t ? "rendezvous" : "eager", stat_finals - finals0, finals);
            }
            printf("  %.2f s\n", now_sec() - t1);
            if (case_mute > 0) {
                printf("  KNOWN: %lu of %lu final states leave ranks waiting that no foreign "
                       "message reaches, e.g. %s\n", case_mute, stat_finals - finals0,
                       mute_example);
            }
            stat_runs = 0;
        }
    }
    free(seen);
    printf("test_dag_orders: %lu final states checked (%lu with ranks left waiting after a "
           "mute mismatch), %lu states, %lu steps; %.1f s\n", stat_finals, stat_mute,
           stat_states, stat_steps, now_sec() - t0);
    return amc_test_summary("test_dag_orders");
}
