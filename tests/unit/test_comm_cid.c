/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Context ids of amc_comm_dup and amc_comm_split, on the
 * threaded fake fabric: one thread per rank runs the same script of dups,
 * splits and frees, in the same order, as an MPI program would. Every
 * thread generates the script itself (same code, same seed) and keeps a
 * model of what each rank's communicator in each slot must be: the parent's
 * members of the caller's colour, ordered by key, then by rank in the parent.
 *
 * A new communicator is checked by the return code, its size and rank, and
 * two collectives whose results depend on the exact membership: an allgather
 * of world ranks (the order too) and an allreduce of 1 << world rank with
 * AMC_BOR. Ids that collide on a rank make a creation fail ("already in
 * use"), or messages of one communicator land on another.
 *
 * - the reproducer of the issue: split(world, 0), then split(world, 1);
 * - every sequence of four creations: dup, split with one colour for all
 *   (0, 1, 2 or AMC_UNDEFINED), split with mixed colours (0, 1, 2,
 *   AMC_UNDEFINED by rank) and reversed keys, each on the base or on any
 *   communicator created before it in the sequence; each sequence starts on
 *   a fresh dup of the world (the base) and frees all it made, so ids are
 *   retired and created again all the time; N = 1..4;
 * - long random sequences: thousands of creations with random colours
 *   (0..2, AMC_UNDEFINED) and keys (with ties), nested parents, frees
 *   interleaved, every live communicator checked every 50 creations,
 *   N up to 9, once with a progress thread per rank.
 *
 * A failed check stops the run; ranks waiting for the stopped one give up
 * after AMC_TIMEOUT (10 s here unless set), so a broken build fails instead
 * of hanging. AMCTEST_CID_PART=reproducer|exhaustive|random runs one part.
 * AMCTEST_QUICK=1 (the sanitizer pass): exhaustive up to N = 3, random
 * sequences of 1000 creations.
 */
#include "tests/unit/harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N      9
#define MAX_SLOTS  32   /* communicators alive at once in a script, world included */
#define SEQ_LEN    4    /* exhaustive: creations per sequence */

enum {
    OP_DUP,
    OP_SPLIT
};

/* What every rank's communicator in every slot must be. */
typedef struct {
    int    n;
    int    live[MAX_SLOTS];
    int8_t size[MAX_SLOTS][MAX_N];            /* 0: that rank has none */
    int8_t members[MAX_SLOTS][MAX_N][MAX_N];  /* its world ranks in rank order */
} model_t;

static void model_init(model_t *m, int n)
{
    int r, i;

    memset(m, 0, sizeof(*m));
    m->n       = n;
    m->live[0] = 1;
    for (r = 0; r < n; r++) {
        m->size[0][r] = (int8_t)n;
        for (i = 0; i < n; i++) {
            m->members[0][r][i] = (int8_t)i;
        }
    }
}

static int model_has_members(const model_t *m, int slot)
{
    int r;

    for (r = 0; r < m->n; r++) {
        if (m->size[slot][r] > 0) {
            return 1;
        }
    }
    return 0;
}

/* MPI_Comm_split: rank r's new communicator holds the members of r's parent
 * of r's colour, by key, ties by rank in the parent. A dup copies. */
static void model_create(model_t *m, int kind, int parent, int slot, const int *color,
                         const int *key)
{
    int8_t order[MAX_N];
    int    r, i, j, k;

    for (r = 0; r < m->n; r++) {
        const int8_t *p = m->members[parent][r];

        k = 0;
        for (i = 0; i < m->size[parent][r]; i++) {
            if ((kind == OP_DUP) || ((color[r] != AMC_UNDEFINED) && (color[p[i]] == color[r]))) {
                /* insertion sort by key: parent ranks come in order, so ties keep it */
                for (j = k; (kind == OP_SPLIT) && (j > 0) && (key[order[j - 1]] > key[p[i]]);
                     j--) {
                    order[j] = order[j - 1];
                }
                order[j] = p[i];
                k++;
            }
        }
        m->size[slot][r] = (int8_t)k;
        memcpy(m->members[slot][r], order, (size_t)k);
    }
    m->live[slot] = 1;
}

static void model_free(model_t *m, int slot)
{
    m->live[slot] = 0;
    memset(m->size[slot], 0, sizeof(m->size[slot]));
}

/* ---------------------------------------------------------------- one rank */

static volatile int g_stop; /* a rank failed: the others stop at their next step */

typedef struct {
    amc_test_world_t *w;
    const char       *name;
    int               rank;
    int               ok;
    size_t            step;       /* steps so far: failures name it */
    size_t            creations;
    size_t            made;       /* communicators this rank got (not AMC_COMM_NULL) */
    int               depth[MAX_SLOTS]; /* creations between the world and the slot */
    int               max_depth;
    model_t           model;
    amc_comm_t        comm[MAX_SLOTS];
} job_t;

static int job_fail(job_t *job)
{
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
    job->ok = 0;
    return 0;
}

/* Collectives whose results depend on the exact membership and order; lean:
 * the allgather alone (it shows membership and order). */
static int job_check_comm(job_t *job, int slot, const char *what, int lean)
{
    amc_comm_t    comm    = job->comm[slot];
    int           size    = job->model.size[slot][job->rank];
    const int8_t *members = job->model.members[slot][job->rank];
    int32_t       me = job->rank, got[MAX_N];
    uint64_t      bit = (uint64_t)1 << job->rank, mask = 0, expect = 0;
    int           rc, i, bad = 0, rank = -1, csize = -1, idx = -1;

    for (i = 0; i < size; i++) {
        idx     = (members[i] == job->rank) ? i : idx;
        expect |= (uint64_t)1 << members[i];
        got[i]  = -1;
    }
    rc = amc_comm_size(comm, &csize);
    CHECK((rc == AMC_SUCCESS) && (csize == size), "%s N=%d step %zu rank %d %s slot %d: size "
          "%d, expected %d", job->name, job->model.n, job->step, job->rank, what, slot, csize,
          size);
    rc = amc_comm_rank(comm, &rank);
    CHECK((rc == AMC_SUCCESS) && (rank == idx), "%s N=%d step %zu rank %d %s slot %d: rank %d, "
          "expected %d", job->name, job->model.n, job->step, job->rank, what, slot, rank, idx);
    if ((csize != size) || (rank != idx)) {
        return job_fail(job);
    }
    rc = amc_allgather(&me, got, 1, AMC_INT32, comm);
    for (i = 0; i < size; i++) {
        bad += (got[i] != members[i]);
    }
    CHECK((rc == AMC_SUCCESS) && (bad == 0), "%s N=%d step %zu rank %d %s slot %d: allgather of "
          "world ranks: %s, %d of %d wrong (first: %d, expected %d)", job->name, job->model.n,
          job->step, job->rank, what, slot, amc_strerror(rc), bad, size, got[0], members[0]);
    if ((rc != AMC_SUCCESS) || (bad != 0)) {
        return job_fail(job);
    }
    if (lean) {
        return 1;
    }
    rc = amc_allreduce(&bit, &mask, 1, AMC_UINT64, AMC_BOR, comm);
    CHECK((rc == AMC_SUCCESS) && (mask == expect), "%s N=%d step %zu rank %d %s slot %d: "
          "allreduce BOR of 1 << world rank: %s, 0x%llx, expected 0x%llx", job->name,
          job->model.n, job->step, job->rank, what, slot, amc_strerror(rc),
          (unsigned long long)mask, (unsigned long long)expect);
    return ((rc == AMC_SUCCESS) && (mask == expect)) ? 1 : job_fail(job);
}

/* A step of the script: every rank calls this in the same order; ranks
 * without a communicator in the parent slot only follow the model. */
static int job_create(job_t *job, int kind, int parent, int slot, const int *color,
                      const int *key, int check)
{
    amc_comm_t pc = job->comm[parent], made;
    int        rc, want;

    if (!job->ok || __atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) {
        return job->ok = 0; /* the others may wait for a rank that stopped */
    }
    job->step++;
    job->creations++;
    model_create(&job->model, kind, parent, slot, color, key);
    if (pc == AMC_COMM_NULL) {
        return 1; /* not a member of the parent: not called here */
    }
    want = job->model.size[slot][job->rank];
    made = (amc_comm_t)&made; /* must be overwritten, also with AMC_COMM_NULL */
    rc   = (kind == OP_DUP) ? amc_comm_dup(pc, &made)
                            : amc_comm_split(pc, color[job->rank], key[job->rank], &made);
    CHECK(rc == AMC_SUCCESS, "%s N=%d step %zu rank %d: %s of slot %d: %s", job->name,
          job->model.n, job->step, job->rank, (kind == OP_DUP) ? "dup" : "split", parent,
          amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        return job_fail(job);
    }
    CHECK((want == 0) == (made == AMC_COMM_NULL), "%s N=%d step %zu rank %d: expected %s",
          job->name, job->model.n, job->step, job->rank,
          (want == 0) ? "AMC_COMM_NULL" : "a communicator");
    if ((want == 0) != (made == AMC_COMM_NULL)) {
        return job_fail(job);
    }
    job->comm[slot]  = made;
    job->depth[slot] = job->depth[parent] + 1;
    job->max_depth   = (job->depth[slot] > job->max_depth) ? job->depth[slot] : job->max_depth;
    job->made       += (made != AMC_COMM_NULL);
    if ((made == AMC_COMM_NULL) || !check) {
        return 1;
    }
    return job_check_comm(job, slot, "new", 0);
}

static int job_free(job_t *job, int slot)
{
    int rc;

    if (!job->ok || __atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) {
        return job->ok = 0;
    }
    job->step++;
    model_free(&job->model, slot);
    if (job->comm[slot] == AMC_COMM_NULL) {
        return 1;
    }
    rc = amc_comm_free(&job->comm[slot]);
    CHECK((rc == AMC_SUCCESS) && (job->comm[slot] == AMC_COMM_NULL), "%s N=%d step %zu rank %d: "
          "free slot %d: %s", job->name, job->model.n, job->step, job->rank, slot,
          amc_strerror(rc));
    return (rc == AMC_SUCCESS) ? 1 : job_fail(job);
}

/* Every live communicator of this rank from slot first on, in slot order
 * on every rank. */
static int job_check_all(job_t *job, int first, int lean)
{
    int slot;

    if (!job->ok || __atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) {
        return job->ok = 0;
    }
    job->step++;
    for (slot = first; slot < MAX_SLOTS; slot++) {
        if ((job->comm[slot] != AMC_COMM_NULL) && !job_check_comm(job, slot, "live", lean)) {
            return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- scripts */

static void fill(int *a, int n, int v)
{
    int r;

    for (r = 0; r < n; r++) {
        a[r] = v;
    }
}

/* The reproducer: the second split failed on every rank. */
static void script_reproducer(job_t *job)
{
    int color[MAX_N] = { 0 }, key[MAX_N] = { 0 }, r, n = job->model.n;

    for (r = 0; r < n; r++) {
        key[r] = r;
    }
    fill(color, n, 0);
    job_create(job, OP_SPLIT, 0, 1, color, key, 1);
    fill(color, n, 1);
    job_create(job, OP_SPLIT, 0, 2, color, key, 1);
    job_check_all(job, 0, 0);
    job_free(job, 1);
    job_free(job, 2);
}

/* Creation kinds of the exhaustive walk. */
enum {
    KIND_DUP,
    KIND_SPLIT_0,
    KIND_SPLIT_1,
    KIND_SPLIT_2,
    KIND_SPLIT_UNDEF,
    KIND_SPLIT_MIXED, /* colours 0, 1, 2, AMC_UNDEFINED by rank, keys reversed */
    KIND_COUNT
};

typedef struct {
    int kind, parent;
} seq_op_t;

static void kind_args(int kind, int at, int n, int *op, int *color, int *key)
{
    static const int mixed[4] = { 0, 1, 2, AMC_UNDEFINED };
    int              r;

    *op = (kind == KIND_DUP) ? OP_DUP : OP_SPLIT;
    for (r = 0; r < n; r++) {
        color[r] = (kind == KIND_SPLIT_MIXED) ? mixed[(r + at) % 4]
                   : (kind == KIND_SPLIT_UNDEF) ? AMC_UNDEFINED
                                                : kind - KIND_SPLIT_0;
        key[r]   = (kind == KIND_SPLIT_MIXED) ? n - r : r;
    }
}

/* One sequence from a fresh start: a dup of the world as its base (slot 1),
 * creation i in slot i + 2, checked all at once at the end (each while all
 * the others live), all freed. */
static void run_sequence(job_t *job, const seq_op_t *seq)
{
    int color[MAX_N] = { 0 }, key[MAX_N] = { 0 }, op, i, n = job->model.n;

    job_create(job, OP_DUP, 0, 1, NULL, NULL, 0);
    for (i = 0; i < SEQ_LEN; i++) {
        kind_args(seq[i].kind, i, n, &op, color, key);
        job_create(job, op, seq[i].parent + 1, i + 2, color, key, 0);
    }
    job_check_all(job, 2, 1);
    for (i = SEQ_LEN + 1; i >= 1; i--) {
        job_free(job, i);
    }
}

/* Walks every sequence; probe is the model along the path, for pruning
 * parents that nobody is a member of. parent 0 is the base. */
static void exhaustive_walk(job_t *job, model_t *probe, seq_op_t *seq, int depth)
{
    int color[MAX_N] = { 0 }, key[MAX_N] = { 0 }, op, kind, parent;

    if (depth == SEQ_LEN) {
        run_sequence(job, seq);
        return;
    }
    for (kind = 0; (kind < KIND_COUNT) && job->ok; kind++) {
        for (parent = 0; (parent <= depth) && job->ok; parent++) {
            if (!model_has_members(probe, parent)) {
                continue; /* nobody would call it */
            }
            kind_args(kind, depth, probe->n, &op, color, key);
            model_create(probe, op, parent, depth + 1, color, key);
            seq[depth].kind   = kind;
            seq[depth].parent = parent;
            exhaustive_walk(job, probe, seq, depth + 1);
            model_free(probe, depth + 1);
        }
    }
}

static void script_exhaustive(job_t *job)
{
    model_t  probe;
    seq_op_t seq[SEQ_LEN];

    model_init(&probe, job->model.n); /* slot 0 stands for the base */
    exhaustive_walk(job, &probe, seq, 0);
}

typedef struct {
    uint64_t seed;
    size_t   creations;
} random_args_t;

static random_args_t g_random;

static void script_random(job_t *job)
{
    model_t        *m = &job->model;
    amc_test_rng_t  rng;
    int             color[MAX_N] = { 0 }, key[MAX_N] = { 0 }, live[MAX_SLOTS], nlive, slot;
    int             parent, r, ncolors, uniform, op;

    amc_test_rng_seed(&rng, g_random.seed);
    while (job->ok && (job->creations < g_random.creations)) {
        nlive = 0;
        slot  = -1;
        for (r = 1; r < MAX_SLOTS; r++) {
            if (m->live[r]) {
                live[nlive++] = r;
            } else if (slot < 0) {
                slot = r;
            }
        }
        if ((nlive > 0) && ((slot < 0) || (amc_test_rng_below(&rng, 100) < 35))) {
            job_free(job, live[amc_test_rng_below(&rng, (size_t)nlive)]);
            continue;
        }
        /* the world a quarter of the time, else any live communicator */
        parent = 0;
        if (amc_test_rng_below(&rng, 4) != 0) {
            do {
                parent = (int)amc_test_rng_below(&rng, MAX_SLOTS);
            } while (!m->live[parent] || !model_has_members(m, parent));
        }
        /* 1..3 colours, AMC_UNDEFINED for one rank in eight; or one for all */
        ncolors = 1 + (int)amc_test_rng_below(&rng, 3);
        uniform = (amc_test_rng_below(&rng, 4) == 0);
        for (r = 0; r < m->n; r++) {
            color[r] = (amc_test_rng_below(&rng, 8) == 0)
                           ? AMC_UNDEFINED
                           : (int)amc_test_rng_below(&rng, (size_t)ncolors);
            color[r] = (uniform && (r > 0)) ? color[0] : color[r];
            key[r]   = (int)amc_test_rng_below(&rng, 5) - 2;
        }
        op = (amc_test_rng_below(&rng, 4) == 0) ? OP_DUP : OP_SPLIT;
        job_create(job, op, parent, slot, color, key, 1);
        if ((job->creations % 50) == 0) {
            job_check_all(job, 0, 0);
        }
    }
    for (r = 1; r < MAX_SLOTS; r++) {
        if (m->live[r]) {
            job_free(job, r);
        }
    }
    job_check_all(job, 0, 0);
}

/* ---------------------------------------------------------------- driver */

typedef void (*script_fn_t)(job_t *job);

typedef struct {
    job_t       job;
    script_fn_t script;
} thread_arg_t;

static void *rank_thread(void *arg)
{
    thread_arg_t *t = arg;

    t->script(&t->job);
    return NULL;
}

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run(const char *name, script_fn_t script, int n, int progress_thread)
{
    amc_test_world_t w;
    pthread_t        threads[MAX_N];
    thread_arg_t     args[MAX_N];
    double           t0 = now_sec();
    size_t           made = 0;
    int              r, rc, ok = 1, depth = 0;

    g_stop = 0;
    rc     = amc_test_world_create_threaded(&w, n, progress_thread, 0);
    CHECK(rc == AMC_SUCCESS, "%s N=%d: world: %s", name, n, amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        return;
    }
    for (r = 0; r < n; r++) {
        memset(&args[r].job, 0, sizeof(args[r].job));
        args[r].script   = script;
        args[r].job.w    = &w;
        args[r].job.name = name;
        args[r].job.rank = r;
        args[r].job.ok   = 1;
        model_init(&args[r].job.model, n);
        args[r].job.comm[0] = amc_test_world_comm(&w, r);
        CHECK(pthread_create(&threads[r], NULL, rank_thread, &args[r]) == 0, "pthread_create");
    }
    for (r = 0; r < n; r++) {
        pthread_join(threads[r], NULL);
        ok    = ok && args[r].job.ok;
        made += args[r].job.made;
        depth = (args[r].job.max_depth > depth) ? args[r].job.max_depth : depth;
    }
    amc_test_world_destroy(&w); /* frees what a stopped run left */
    printf("%s N=%d%s: %zu creations (%zu communicators over all ranks, nested up to %d "
           "deep), %zu steps, %.1f s%s\n", name, n, progress_thread ? " (progress thread)" : "",
           args[0].job.creations, made, depth, args[0].job.step, now_sec() - t0,
           ok ? "" : ": STOPPED at a failure");
    fflush(stdout);
}

/* AMCTEST_CID_PART=reproducer|exhaustive|random runs one part only. */
static int part(const char *name)
{
    const char *only = getenv("AMCTEST_CID_PART");

    return (only == NULL) || (only[0] == '\0') || (strcmp(only, name) == 0);
}

int main(void)
{
    static const int random_sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    unsigned         i;
    int              n;

    /* a rank that stops at a failure must not hang the others for ever */
    setenv("AMC_TIMEOUT", "10", 0);
    /* up to 9 ranks share 2 cores: spinning only keeps the awaited rank off */
    setenv("AMC_SPIN_COUNT", "0", 0);

    for (n = 1; part("reproducer") && (n <= 4); n++) {
        run("reproducer", script_reproducer, n, 0);
    }
    for (n = 1; part("exhaustive") && (n <= (amc_test_quick() ? 3 : 4)); n++) {
        run("exhaustive", script_exhaustive, n, 0);
    }
    for (i = 0; part("random") && (i < sizeof(random_sizes) / sizeof(random_sizes[0])); i++) {
        g_random.seed      = 1000 + (uint64_t)random_sizes[i];
        g_random.creations = amc_test_quick() ? 1000 : 5000;
        run("random", script_random, random_sizes[i], 0);
    }
    if (part("random")) {
        g_random.seed      = 77;
        g_random.creations = amc_test_quick() ? 500 : 2000;
        run("random", script_random, 4, 1);
    }
    return amc_test_summary("test_comm_cid");
}
