/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AMC_TUNING_FILE: rules files written to a temporary directory, read at
 * context creation on fake-transport worlds, and what amc_alg_select makes
 * of them:
 *  - a matching rule replaces the automatic choice; ranks and bytes bounds
 *    are inclusive at both ends and the first matching rule wins;
 *  - no match keeps the automatic choice, a forced AMC_<COLL>_ALG wins over
 *    the file, a commutative-only algorithm is not used for another op;
 *  - a barrier rule runs the barrier on the engine, no match on the fast path;
 *  - a rank with other rules than its peers: AMC_ERR_PROTOCOL, no hang;
 *  - every error (missing file, unknown collective or algorithm, bad or
 *    missing numbers, MIN above MAX) fails context creation with
 *    AMC_ERR_ARG and one message naming file:line;
 *  - the loaded table groups rules by collective in file order and prints;
 *  - the built-in rules: loaded after the file's unless AMC_TUNING_BUILTIN=0,
 *    each choosing its algorithm within its bounds, none for the barrier,
 *    and the small collectives at N=2 still on the barrier's rounds.
 * The collectives' results with rules in force: test_coll under
 * tests/unit/tuning_example.rules (run_coll_algs.sh).
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/topo.h"
#include "am_coll/alg/tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char *write_rules(const char *name, const char *text)
{
    static char path[128];
    FILE       *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    CHECK(f != NULL, "create %s", path);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* A config with the machine-dependent linear rule off, so that the
 * automatic choice is the same on every machine. */
static void config_for(amc_config_t *cfg, const char *rules)
{
    amc_config_defaults(cfg);
    cfg->log_level                = AMC_LOG_ERROR;
    cfg->linear_max_ranks         = 0;
    cfg->oversub_linear_max_ranks = 0;
    cfg->tuning_builtin           = 0; /* the file's rules alone (builtin_checks: with them) */
    snprintf(cfg->tuning_file, sizeof(cfg->tuning_file), "%s", rules);
}

#define EXPECT_ALG(_w, _coll, _count, _commutative, _name) \
    do { \
        const char *got_ = amc_test_selected(amc_test_world_comm(_w, 0), _coll, _count, \
                                             _commutative); \
        CHECK(strcmp(got_, _name) == 0, "N=%d %s %zu B commutative %d: %s, expected %s", \
              (_w)->n, amc_coll_name(_coll), (size_t)(_count) * 4, _commutative, got_, \
              _name); \
    } while (0)

static const char rules_main[] =
    "# a rules file as amc_tune.sh writes it, and comments\n"
    "\n"
    "allreduce 2 8 0 4096 linear      # first: wins where both hold\n"
    "allreduce 8 8 0 1048576 ring\n"
    "bcast     8 8 64 128 linear\n"
    "bcast     9 16 0 100 linear\n"
    "\talltoall 8 8 8 8 pairwise\n"
    "barrier   9 9 0 0 hierarchical\n";

/* What the automatic choice is without a file, at the points the rules
 * change: else a rule that matched nothing would pass for one that did. */
static void auto_checks(void)
{
    amc_test_world_t w;
    amc_config_t     cfg;

    config_for(&cfg, "");
    CHECK(amc_test_world_create(&w, 8, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    CHECK(w.ctx[0]->tuning.count == 0, "no file, no rules");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2, 1, "recursive_doubling");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2048, 1, "recursive_doubling");
    EXPECT_ALG(&w, AMC_COLL_BCAST, 16, 0, "binomial");
    EXPECT_ALG(&w, AMC_COLL_ALLTOALL, 2, 0, "linear");
    EXPECT_ALG(&w, AMC_COLL_BARRIER, 0, 0, "dissemination");
    amc_test_world_destroy(&w);
}

static void match_checks(void)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    const char      *path = write_rules("main.rules", rules_main);

    config_for(&cfg, path);
    CHECK(amc_test_world_create(&w, 8, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    CHECK(w.ctx[0]->tuning.count == 6, "6 rules: %u", w.ctx[0]->tuning.count);
    CHECK(w.ctx[0]->tuning.n[AMC_COLL_SCAN] == 0, "none for scan");
    /* (a) a rule changes the choice, (b) first match, inclusive bytes */
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2, 1, "linear");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 0, 1, "linear");          /* MIN_BYTES 0 */
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 1024, 1, "linear");       /* 4096: MAX_BYTES */
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 1025, 1, "ring");         /* past it: the second */
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 262144, 1, "ring");       /* 1 MiB: its MAX */
    /* (c) no match: automatic (ring from 64 KiB for commutative ops) */
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 262145, 1, "ring");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 262145, 0, "recursive_doubling");
    /* (e) ring is commutative-only: the op falls back to the automatic one */
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2048, 0, "recursive_doubling");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2, 0, "linear");          /* linear takes any op */
    EXPECT_ALG(&w, AMC_COLL_BCAST, 15, 0, "binomial");           /* 60 B: below MIN */
    EXPECT_ALG(&w, AMC_COLL_BCAST, 16, 0, "linear");             /* 64 B: MIN */
    EXPECT_ALG(&w, AMC_COLL_BCAST, 32, 0, "linear");             /* 128 B: MAX */
    EXPECT_ALG(&w, AMC_COLL_BCAST, 33, 0, "binomial");
    EXPECT_ALG(&w, AMC_COLL_ALLTOALL, 2, 0, "pairwise");         /* MIN = MAX */
    EXPECT_ALG(&w, AMC_COLL_ALLTOALL, 3, 0, "linear");
    EXPECT_ALG(&w, AMC_COLL_BARRIER, 0, 0, "dissemination");     /* rule for 9 ranks only */
    EXPECT_ALG(&w, AMC_COLL_SCAN, 2, 1, "hillis_steele");        /* no rules: automatic */
    amc_test_world_destroy(&w);

    /* ranks bounds: 9 is past the allreduce rules and at the bcast rule's MIN */
    CHECK(amc_test_world_create(&w, 9, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2, 1, "recursive_doubling");
    EXPECT_ALG(&w, AMC_COLL_BCAST, 1, 0, "linear");
    EXPECT_ALG(&w, AMC_COLL_BCAST, 25, 0, "linear");              /* 100 B: MAX */
    EXPECT_ALG(&w, AMC_COLL_BCAST, 26, 0, "binomial");            /* 104 B: past it */
    EXPECT_ALG(&w, AMC_COLL_ALLTOALL, 2, 0, "linear");
    EXPECT_ALG(&w, AMC_COLL_BARRIER, 0, 0, "hierarchical");
    amc_test_world_destroy(&w);

    /* (d) a forced AMC_<COLL>_ALG wins over the file */
    snprintf(cfg.alg[AMC_COLL_ALLREDUCE], sizeof(cfg.alg[0]), "recursive_doubling");
    snprintf(cfg.alg[AMC_COLL_BCAST], sizeof(cfg.alg[0]), "pipeline");
    CHECK(amc_test_world_create(&w, 8, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2, 1, "recursive_doubling");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2048, 1, "recursive_doubling");
    EXPECT_ALG(&w, AMC_COLL_BCAST, 16, 0, "pipeline");
    EXPECT_ALG(&w, AMC_COLL_ALLTOALL, 2, 0, "pairwise");         /* not forced: the file */
    amc_test_world_destroy(&w);
}

/* The bytes of the v-forms are those the automatic choice uses: the mean
 * block of allgatherv and reduce_scatter, 0 where counts differ per rank. */
static void bytes_checks(void)
{
    static const size_t counts[4] = { 1, 2, 3, 7 };
    amc_coll_args_t     args;

    memset(&args, 0, sizeof(args));
    args.dt_size = 8;
    args.rcounts = counts;
    args.coll    = AMC_COLL_ALLGATHERV;
    CHECK(amc_alg_rule_bytes(&args, 4) == 26, "allgatherv: %zu", amc_alg_rule_bytes(&args, 4));
    args.coll = AMC_COLL_REDUCE_SCATTER;
    CHECK(amc_alg_rule_bytes(&args, 4) == 24, "reduce_scatter: %zu",
          amc_alg_rule_bytes(&args, 4));
    args.coll = AMC_COLL_ALLTOALLV;
    CHECK(amc_alg_rule_bytes(&args, 4) == 0, "alltoallv: %zu", amc_alg_rule_bytes(&args, 4));
    args.coll  = AMC_COLL_ALLREDUCE;
    args.count = 5;
    CHECK(amc_alg_rule_bytes(&args, 4) == 40, "allreduce: %zu", amc_alg_rule_bytes(&args, 4));
}

static void count_act(void *arg, const struct amc_coll_inst *inst, uint32_t act, int event)
{
    (void)inst;
    (void)act;
    (void)event;
    (*(unsigned long *)arg)++;
}

/* A barrier rule sends the barrier to the engine (its acts reach the act
 * hook), a rule for another size leaves it on the fast path (no acts); the
 * barrier completes on every rank either way. */
static void barrier_run(const char *rules, int n, int engine)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    req[8];
    unsigned long    acts = 0;
    int              r, flag, done = 0, spins;

    config_for(&cfg, write_rules("barrier.rules", rules));
    CHECK(amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    for (r = 0; r < n; r++) {
        w.ctx[r]->act_trace     = count_act;
        w.ctx[r]->act_trace_arg = &acts;
        CHECK(amc_ibarrier(amc_test_world_comm(&w, r), &req[r]) == AMC_SUCCESS, "post");
    }
    for (spins = 0; (done < n) && (spins < 100000); spins++) {
        for (r = 0, done = 0; r < n; r++) {
            flag = 1;
            if (req[r] != AMC_REQUEST_NULL) {
                CHECK(amc_test(&req[r], &flag) == AMC_SUCCESS, "test");
            }
            done += flag;
        }
        if (amc_fake_deliverable(w.fabric) > 0) {
            amc_fake_deliver(w.fabric, 0);
        }
    }
    CHECK(done == n, "%s: %d of %d ranks left the barrier", rules, done, n);
    CHECK(engine ? (acts > 0) : (acts == 0), "%s at N=%d: %lu acts on the engine", rules, n,
          acts);
    amc_test_world_destroy(&w);
}

/* A rank whose rules differ picks another algorithm: the existing check of
 * the algorithm id in every header reports it (AMC_ERR_PROTOCOL), nobody
 * waits for ever. */
static void mismatch_checks(void)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    req[4];
    amc_log_t        quiet = { -1, -1 };
    int              in[4], out[4], status[4], r, flag, done = 0, spins, protocol = 0;

    config_for(&cfg, "");
    cfg.log_level = -1; /* the mismatch is logged: expected here */
    CHECK(amc_test_world_create(&w, 4, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    amc_tuning_free(&w.ctx[1]->tuning);
    CHECK(amc_tuning_load(&w.ctx[1]->tuning,
                          write_rules("rank1.rules", "allreduce 1 8 0 64 linear\n"), 0,
                          &quiet) == AMC_SUCCESS, "rank 1's rules");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 1, 1, "recursive_doubling");
    CHECK(strcmp(amc_test_selected(amc_test_world_comm(&w, 1), AMC_COLL_ALLREDUCE, 1, 1), "linear") == 0,
          "rank 1 chooses by its own rules");
    for (r = 0; r < 4; r++) {
        in[r]     = r + 1;
        status[r] = -1;
        CHECK(amc_iallreduce(&in[r], &out[r], 1, AMC_INT, AMC_SUM, amc_test_world_comm(&w, r),
                             &req[r]) == AMC_SUCCESS, "post");
    }
    for (spins = 0; (done < 4) && (spins < 100000); spins++) {
        for (r = 0; r < 4; r++) {
            if (status[r] == -1) {
                status[r] = amc_test(&req[r], &flag); /* the request's error, when done */
                if ((status[r] == AMC_SUCCESS) && !flag) {
                    status[r] = -1;
                    continue;
                }
                done++;
            }
        }
        if (amc_fake_deliverable(w.fabric) > 0) {
            amc_fake_deliver(w.fabric, 0);
        }
    }
    CHECK(done == 4, "%d of 4 ranks finished the mismatched allreduce", done);
    for (r = 0; r < 4; r++) {
        CHECK((status[r] == AMC_SUCCESS) || (status[r] == AMC_ERR_PROTOCOL), "rank %d: %s", r,
              amc_strerror(status[r]));
        protocol += (status[r] == AMC_ERR_PROTOCOL);
    }
    CHECK(protocol > 0, "a rank with other rules: nobody reported the mismatch");
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    amc_test_world_destroy(&w);
}

typedef struct {
    amc_config_t cfg;
    int          status;
} create_t;

static void do_create(create_t *c)
{
    amc_test_world_t w;

    c->status = amc_test_world_create(&w, 1, AMC_FAKE_COMPLETE_ON_SEND, &c->cfg);
    if (c->status == AMC_SUCCESS) {
        amc_test_world_destroy(&w);
    }
}

static void do_create_arg(void *arg)
{
    do_create(arg);
}

/* Creates a world of one on the file, stderr captured into buf. */
static int create_captured(const char *path, char *buf, size_t len)
{
    create_t c;

    config_for(&c.cfg, path);
    amc_test_capture_stderr(do_create_arg, &c, buf, len);
    return c.status;
}

static unsigned count_lines(const char *text)
{
    unsigned n = 0;

    for (; *text != '\0'; text++) {
        n += (*text == '\n');
    }
    return n;
}

static void error_checks(void)
{
    static const struct {
        const char *bad;   /* line 3, after a comment and a good rule */
        const char *says;
    } cases[] = {
        { "allreducex 1 2 0 1 linear\n", "unknown collective 'allreducex'" },
        { "goal 1 2 0 1 linear\n", "unknown collective 'goal'" },
        { "allreduce 1 2 0 1 fastest\n", "no algorithm 'fastest'" },
        { "bcast 1 2 0 1 ring\n", "no algorithm 'ring'" },             /* allreduce's */
        { "allreduce 1 two 0 1 linear\n", "MAX_RANKS 'two'" },
        { "allreduce -1 2 0 1 linear\n", "MIN_RANKS '-1'" },
        { "allreduce 1 2 0 1x linear\n", "MAX_BYTES '1x'" },
        { "allreduce 1 2 +0 1 linear\n", "MIN_BYTES '+0'" },
        { "allreduce 1 4294967296 0 1 linear\n", "MAX_RANKS '4294967296'" },
        { "allreduce 1 2 0 99999999999999999999999 linear\n", "MAX_BYTES" },
        { "allreduce 1 2 0 linear\n", "fewer than 6" },
        { "allreduce 1 2 0 1 linear ring\n", "more than 6" },
        { "allreduce 4 2 0 1 linear\n", "MIN_RANKS above MAX_RANKS" },
        { "allreduce 1 2 10 9 linear\n", "MIN_BYTES above MAX_BYTES" },
    };
    char   text[256], log[2048], where[160];
    size_t i;
    const char *path;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text), "# bad rule on line 3\nbcast 1 4 0 8 linear\n%s"
                 "scan 1 2 0 1 unknown_too\n", cases[i].bad);
        path = write_rules("bad.rules", text);
        snprintf(where, sizeof(where), "%s:3:", path);
        CHECK(create_captured(path, log, sizeof(log)) == AMC_ERR_ARG, "%s", cases[i].bad);
        CHECK(strstr(log, where) != NULL, "%s: message names %s: %s", cases[i].bad, where, log);
        CHECK(strstr(log, cases[i].says) != NULL, "%s: says '%s': %s", cases[i].bad,
              cases[i].says, log);
        CHECK(count_lines(log) == 1, "%s: logged once: %s", cases[i].bad, log);
    }
    snprintf(where, sizeof(where), "%s/none.rules", dir);
    CHECK(create_captured(where, log, sizeof(log)) == AMC_ERR_ARG, "missing file");
    CHECK((strstr(log, where) != NULL) && (strstr(log, "cannot read") != NULL) &&
          (count_lines(log) == 1), "missing file named once: %s", log);
    CHECK(create_captured(dir, log, sizeof(log)) == AMC_ERR_ARG, "a directory: %s", log);
    path = write_rules("empty.rules", "# nothing but comments\n\n   \n");
    CHECK(create_captured(path, log, sizeof(log)) == AMC_SUCCESS, "comments only: %s", log);
}

/* Whether amc_test_selected can make a call of coll: the v-forms and
 * reduce_scatter count by their vectors, which it does not make. */
static int selectable(int coll)
{
    return (coll != AMC_COLL_GATHERV) && (coll != AMC_COLL_SCATTERV) &&
           (coll != AMC_COLL_ALLGATHERV) && (coll != AMC_COLL_ALLTOALLV) &&
           (coll != AMC_COLL_REDUCE_SCATTER);
}

/* The built-in rules (am_coll/alg/tuning_builtin.rules): there by default,
 * after a file's; none for the barrier (its fast path has no name); each
 * chooses its algorithm at both ends of its bytes wherever it is the first
 * match; the small collectives keep the barrier's rounds at N=2;
 * AMC_TUNING_BUILTIN=0 leaves them out and a file's rule comes first. */
static void builtin_checks(void)
{
    static const int         small[] = { AMC_COLL_ALLREDUCE, AMC_COLL_ALLGATHER,
                                         AMC_COLL_ALLTOALL, AMC_COLL_REDUCE_SCATTER_BLOCK };
    amc_test_world_t         w;
    amc_config_t             cfg;
    const amc_tuning_rule_t *r;
    const amc_tuning_t      *t;
    const char              *path;
    size_t                   count[2];
    unsigned                 i, nbuiltin;
    int                      k, checked = 0;

    config_for(&cfg, "");
    cfg.tuning_builtin = 1;
    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    t        = &w.ctx[0]->tuning;
    nbuiltin = t->count;
    CHECK(nbuiltin > 0, "built-in rules by default");
    CHECK(t->n[AMC_COLL_BARRIER] == 0, "no built-in barrier rule: the fast path stays");
    for (i = 0; i < t->count; i++) {
        r = &t->rules[i];
        CHECK(r->builtin, "rule %u is built-in", i);
        if ((r->min_ranks > 2) || (r->max_ranks < 2) || !selectable(r->alg->coll)) {
            continue;
        }
        /* int32 elements: the first and last count whose bytes it holds */
        count[0] = (r->min_bytes + 3) / 4;
        count[1] = r->max_bytes / 4;
        for (k = 0; k < 2; k++) {
            if ((count[k] == 0) || (count[k] * 4 < r->min_bytes) ||
                (count[k] * 4 > r->max_bytes) ||
                (amc_tuning_match(t, r->alg->coll, 2, count[k] * 4) != r->alg)) {
                continue; /* an earlier rule holds there */
            }
            EXPECT_ALG(&w, r->alg->coll, count[k], 1, r->alg->name);
            checked++;
        }
    }
    CHECK(checked > 0, "built-in rules checked at their bounds: %d", checked);
    for (k = 0; k < (int)(sizeof(small) / sizeof(small[0])); k++) {
        const char      *name = amc_test_selected(amc_test_world_comm(&w, 0), small[k], 2, 1);
        const amc_alg_t *alg  = amc_alg_find(small[k], name);

        CHECK((alg != NULL) && (alg->flags & AMC_ALG_FLAG_CTRL),
              "N=2 %s 8 B chooses %s: not one that runs on the barrier's rounds",
              amc_coll_name(small[k]), name);
    }
    amc_test_world_destroy(&w);

    cfg.tuning_builtin = 0;
    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    CHECK(w.ctx[0]->tuning.count == 0, "AMC_TUNING_BUILTIN=0: none");
    amc_test_world_destroy(&w);

    path = write_rules("over.rules", "allreduce 2 2 0 1048576 linear\n");
    config_for(&cfg, path);
    cfg.tuning_builtin = 1;
    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    t = &w.ctx[0]->tuning;
    CHECK(t->count == nbuiltin + 1, "the file's rule and the built-in ones: %u", t->count);
    CHECK(!t->rules[t->first[AMC_COLL_ALLREDUCE]].builtin, "the file's rule first");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 16384, 1, "linear");
    EXPECT_ALG(&w, AMC_COLL_ALLREDUCE, 2, 1, "linear");
    amc_test_world_destroy(&w);
}

/* Rules grouped by collective in file order; the table amc_info prints. */
static void load_checks(void)
{
    amc_tuning_t t;
    amc_log_t    log = { AMC_LOG_ERROR, -1 };
    const char  *path = write_rules("main.rules", rules_main);
    char         out[2048];
    FILE        *tmp;
    size_t       got;

    CHECK(amc_tuning_load(&t, path, 0, &log) == AMC_SUCCESS, "load");
    CHECK((t.n[AMC_COLL_ALLREDUCE] == 2) && (t.n[AMC_COLL_BCAST] == 2) &&
          (t.n[AMC_COLL_ALLTOALL] == 1) && (t.n[AMC_COLL_BARRIER] == 1), "counts");
    CHECK((t.rules[t.first[AMC_COLL_ALLREDUCE]].line == 3) &&
          (t.rules[t.first[AMC_COLL_ALLREDUCE] + 1].line == 4), "file order within allreduce");
    CHECK(amc_tuning_match(&t, AMC_COLL_BCAST, 12, 50) == amc_alg_find(AMC_COLL_BCAST, "linear"),
          "match");
    CHECK(amc_tuning_match(&t, AMC_COLL_BCAST, 17, 50) == NULL, "no match");
    tmp = tmpfile();
    amc_tuning_print(tmp, &t, path);
    rewind(tmp);
    got      = fread(out, 1, sizeof(out) - 1, tmp);
    out[got] = '\0';
    fclose(tmp);
    CHECK(strstr(out, "#   allreduce 2 8 0 4096 linear  (line 3)\n") != NULL, "printed: %s", out);
    CHECK(strstr(out, "#   barrier 9 9 0 0 hierarchical  (line 8)\n") != NULL, "printed: %s", out);
    amc_tuning_free(&t);
    CHECK((t.rules == NULL) && (t.count == 0), "freed");

    CHECK(amc_tuning_load(&t, "", 0, &log) == AMC_SUCCESS, "no file");
    tmp = tmpfile();
    amc_tuning_print(tmp, &t, "");
    rewind(tmp);
    got      = fread(out, 1, sizeof(out) - 1, tmp);
    out[got] = '\0';
    fclose(tmp);
    CHECK(strstr(out, "rules in effect: none") != NULL, "none printed: %s", out);
    amc_tuning_free(&t);
}

int main(void)
{
    char path[160];

    snprintf(dir, sizeof(dir), "/tmp/amc_tuning_XXXXXX");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    auto_checks();
    match_checks();
    bytes_checks();
    barrier_run("barrier 4 4 0 0 dissemination\n", 4, 1);
    barrier_run("barrier 3 3 0 0 dissemination\n", 4, 0);
    barrier_run("barrier 1 8 0 0 hierarchical\n", 5, 1);
    mismatch_checks();
    error_checks();
    load_checks();
    builtin_checks();
    snprintf(path, sizeof(path), "%s/over.rules", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/main.rules", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/bad.rules", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/barrier.rules", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/rank1.rules", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/empty.rules", dir);
    unlink(path);
    rmdir(dir);
    return amc_test_summary("test_tuning");
}
