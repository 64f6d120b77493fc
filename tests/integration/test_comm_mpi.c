/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration test for communicator creation: real UCX,
 * ranks started by mpirun (PMIx).
 *
 *   test_comm_mpi reproducer   split(world, 0, rank), then split(world, 1,
 *                              rank): the second failed with "context id
 *                              ... is already in use" on every rank
 *   test_comm_mpi random       the random script of tests/unit/test_comm_cid
 *                              (same generator, same seed on every rank):
 *                              dups (every other one an amc_comm_idup
 *                              around an amc_ibarrier on the parent) and
 *                              splits with random colours (0..2,
 *                              AMC_UNDEFINED) and keys (with ties) on the
 *                              world or any live communicator, frees
 *                              interleaved; every new communicator checked
 *                              by an allgather of world ranks (membership
 *                              and order) and an allreduce of 1 << world
 *                              rank (BOR), every live one every 50 creations
 *   test_comm_mpi lazy         connections on first contact:
 *                              no endpoint after amc_init, exactly
 *                              ceil(log2 N) after a world barrier (the same
 *                              on every rank), none more for a second one
 *                              or a barrier on a dup, at most ceil(log2 n)
 *                              more for a barrier on a split of n; the
 *                              split's allreduce has its members' value
 *
 * The expected membership is computed here, on every rank, for every rank.
 * AMCTEST_SEED (default 1000 + N) and AMCTEST_COMM_STEPS (creations, default
 * 1000) are read on every rank; they must be the same on all.
 *
 * Rank 0 prints "ok <subtest> N=<n>"; failures print "FAIL ..." and the exit
 * status is non-zero. Run with AMC_TIMEOUT set, so a rank left behind fails
 * instead of hanging.
 */
#include "amcoll.h"

#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N     64   /* world ranks the membership checks cover */
#define MAX_SLOTS 32   /* communicators alive at once, world included */

static int    g_rank, g_size, g_failures;
static size_t g_step;

#define CT_CHECK(_cond, ...)                                                    \
    do {                                                                        \
        if (!(_cond)) {                                                         \
            fprintf(stderr, "FAIL rank %d/%d step %zu %s:%d: ", g_rank, g_size, \
                    g_step, __FILE__, __LINE__);                                \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            g_failures++;                                                       \
        }                                                                       \
    } while (0)

/* xorshift64*, seeded as tests/unit/harness.c seeds it: the same script */
typedef struct {
    uint64_t state;
} ct_rng_t;

static void ct_rng_seed(ct_rng_t *rng, uint64_t seed)
{
    rng->state = seed * 0x9e3779b97f4a7c15ull + 1;
}

static size_t ct_rng_below(ct_rng_t *rng, size_t bound)
{
    uint64_t x = rng->state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return (bound == 0) ? 0 : (size_t)((x * 0x2545f4914f6cdd1dull) % bound);
}

/* What every rank's communicator in every slot must be. */
static int        live[MAX_SLOTS];
static int8_t     msize[MAX_SLOTS][MAX_N];
static int8_t     members[MAX_SLOTS][MAX_N][MAX_N];
static amc_comm_t comm[MAX_SLOTS];
static size_t     creations, made;

static int slot_has_members(int slot)
{
    int r;

    for (r = 0; r < g_size; r++) {
        if (msize[slot][r] > 0) {
            return 1;
        }
    }
    return 0;
}

/* MPI_Comm_split for every rank; a dup (color NULL) copies. */
static void model_create(int parent, int slot, const int *color, const int *key)
{
    int8_t order[MAX_N];
    int    r, i, j, k;

    for (r = 0; r < g_size; r++) {
        const int8_t *p = members[parent][r];

        k = 0;
        for (i = 0; i < msize[parent][r]; i++) {
            if ((color == NULL) || ((color[r] != AMC_UNDEFINED) && (color[p[i]] == color[r]))) {
                for (j = k; (color != NULL) && (j > 0) && (key[order[j - 1]] > key[p[i]]); j--) {
                    order[j] = order[j - 1];
                }
                order[j] = p[i];
                k++;
            }
        }
        msize[slot][r] = (int8_t)k;
        memcpy(members[slot][r], order, (size_t)k);
    }
    live[slot] = 1;
}

static int check_comm(int slot, int full)
{
    int           size = msize[slot][g_rank], i, rc, bad = 0, got_size = -1, got_rank = -1;
    const int8_t *m = members[slot][g_rank];
    int32_t       me = g_rank, got[MAX_N];
    uint64_t      bit = (uint64_t)1 << (g_rank % 64), mask = 0, expect = 0;
    int           idx = -1;

    for (i = 0; i < size; i++) {
        idx     = (m[i] == g_rank) ? i : idx;
        expect |= (uint64_t)1 << (m[i] % 64);
        got[i]  = -1;
    }
    amc_comm_size(comm[slot], &got_size);
    amc_comm_rank(comm[slot], &got_rank);
    CT_CHECK((got_size == size) && (got_rank == idx), "slot %d: size %d rank %d, expected %d %d",
             slot, got_size, got_rank, size, idx);
    rc = amc_allgather(&me, got, 1, AMC_INT32, comm[slot]);
    for (i = 0; i < size; i++) {
        bad += (got[i] != m[i]);
    }
    CT_CHECK((rc == AMC_SUCCESS) && (bad == 0), "slot %d: allgather of world ranks: %s, %d of "
             "%d wrong", slot, amc_strerror(rc), bad, size);
    if ((rc != AMC_SUCCESS) || (bad != 0) || !full) {
        return (rc == AMC_SUCCESS) && (bad == 0);
    }
    rc = amc_allreduce(&bit, &mask, 1, AMC_UINT64, AMC_BOR, comm[slot]);
    CT_CHECK((rc == AMC_SUCCESS) && (mask == expect), "slot %d: allreduce BOR: %s, 0x%llx, "
             "expected 0x%llx", slot, amc_strerror(rc), (unsigned long long)mask,
             (unsigned long long)expect);
    return (rc == AMC_SUCCESS) && (mask == expect);
}

/* One creation, the same step on every rank; the ranks outside the parent
 * only follow the model. Returns 0 once something failed: a rank that
 * stops must be followed by all, or they would wait for it. */
/* Every other dup is an amc_comm_idup with a barrier on the parent started
 * after it, completed in an order that differs between ranks: the new
 * communicator must be the same as a blocking dup's. */
static int idup(amc_comm_t parent, amc_comm_t *out)
{
    amc_request_t q[2] = { AMC_REQUEST_NULL, AMC_REQUEST_NULL };
    int           rc   = amc_comm_idup(parent, out, &q[0]), rc2;

    if (rc != AMC_SUCCESS) {
        return rc;
    }
    rc = amc_ibarrier(parent, &q[1]);
    if (rc != AMC_SUCCESS) {
        amc_wait(&q[0]);
        return rc;
    }
    if (g_rank & 1) {
        return amc_waitall(2, q);
    }
    rc  = amc_wait(&q[1]);
    rc2 = amc_wait(&q[0]);
    return (rc != AMC_SUCCESS) ? rc : rc2;
}

static int create(int parent, int slot, const int *color, const int *key)
{
    amc_comm_t out = AMC_COMM_NULL;
    int        rc, want;

    g_step++;
    creations++;
    model_create(parent, slot, color, key);
    if (comm[parent] == AMC_COMM_NULL) {
        return 1;
    }
    want = msize[slot][g_rank];
    rc   = (color != NULL) ? amc_comm_split(comm[parent], color[g_rank], key[g_rank], &out)
           : (creations & 1) ? idup(comm[parent], &out)
                             : amc_comm_dup(comm[parent], &out);
    CT_CHECK(rc == AMC_SUCCESS, "%s of slot %d: %s", (color == NULL) ? "dup" : "split", parent,
             amc_strerror(rc));
    CT_CHECK((rc != AMC_SUCCESS) || ((want == 0) == (out == AMC_COMM_NULL)),
             "expected %s", (want == 0) ? "AMC_COMM_NULL" : "a communicator");
    if ((rc != AMC_SUCCESS) || ((want == 0) != (out == AMC_COMM_NULL))) {
        return 0;
    }
    comm[slot] = out;
    made += (out != AMC_COMM_NULL);
    return (out == AMC_COMM_NULL) || check_comm(slot, 1);
}

static int release(int slot)
{
    int rc = AMC_SUCCESS;

    g_step++;
    live[slot] = 0;
    memset(msize[slot], 0, sizeof(msize[slot]));
    if (comm[slot] != AMC_COMM_NULL) {
        rc = amc_comm_free(&comm[slot]);
        CT_CHECK((rc == AMC_SUCCESS) && (comm[slot] == AMC_COMM_NULL), "free slot %d: %s", slot,
                 amc_strerror(rc));
    }
    return rc == AMC_SUCCESS;
}

static int check_all(void)
{
    int slot;

    g_step++;
    for (slot = 0; slot < MAX_SLOTS; slot++) {
        if ((comm[slot] != AMC_COMM_NULL) && !check_comm(slot, 1)) {
            return 0;
        }
    }
    return 1;
}

static void ct_reproducer(void)
{
    int color[MAX_N], key[MAX_N], r, ok;

    for (r = 0; r < g_size; r++) {
        color[r] = 0;
        key[r]   = r;
    }
    ok = create(0, 1, color, key);
    for (r = 0; r < g_size; r++) {
        color[r] = 1;
    }
    ok = ok && create(0, 2, color, key) && check_all() && release(1) && release(2);
    (void)ok;
}

/* tests/unit/test_comm_cid.c, script_random: keep the two in step */
static void ct_random(uint64_t seed, size_t steps)
{
    ct_rng_t rng;
    int      color[MAX_N] = { 0 }, key[MAX_N] = { 0 }, lv[MAX_SLOTS], nlive, slot, parent, r;
    int      ncolors, uniform, dup, ok = 1;

    ct_rng_seed(&rng, seed);
    while (ok && (creations < steps)) {
        nlive = 0;
        slot  = -1;
        for (r = 1; r < MAX_SLOTS; r++) {
            if (live[r]) {
                lv[nlive++] = r;
            } else if (slot < 0) {
                slot = r;
            }
        }
        if ((nlive > 0) && ((slot < 0) || (ct_rng_below(&rng, 100) < 35))) {
            ok = release(lv[ct_rng_below(&rng, (size_t)nlive)]);
            continue;
        }
        parent = 0;
        if (ct_rng_below(&rng, 4) != 0) {
            do {
                parent = (int)ct_rng_below(&rng, MAX_SLOTS);
            } while (!live[parent] || !slot_has_members(parent));
        }
        ncolors = 1 + (int)ct_rng_below(&rng, 3);
        uniform = (ct_rng_below(&rng, 4) == 0);
        for (r = 0; r < g_size; r++) {
            color[r] = (ct_rng_below(&rng, 8) == 0) ? AMC_UNDEFINED
                                                    : (int)ct_rng_below(&rng, (size_t)ncolors);
            color[r] = (uniform && (r > 0)) ? color[0] : color[r];
            key[r]   = (int)ct_rng_below(&rng, 5) - 2;
        }
        dup = (ct_rng_below(&rng, 4) == 0);
        ok  = create(parent, slot, dup ? NULL : color, key);
        if (ok && ((creations % 50) == 0)) {
            ok = check_all();
        }
    }
    for (r = 1; ok && (r < MAX_SLOTS); r++) {
        if (live[r]) {
            ok = release(r);
        }
    }
    ok = ok && check_all();
    (void)ok;
}

static unsigned long long stat_of(const char *name)
{
    unsigned long long v = 0;
    int                rc = amc_stat_get(name, &v);

    CT_CHECK(rc == AMC_SUCCESS, "amc_stat_get(%s): %s", name, amc_strerror(rc));
    return v;
}

static unsigned long long ceil_log2(int n)
{
    unsigned long long k = 0;

    while ((1ull << k) < (unsigned long long)n) {
        k++;
    }
    return k;
}

/* The peers this rank connected to: a UCX endpoint, or on its node a
 * mailbox (AMC_SHM), each made on the first message; a barrier's messages
 * take one of the two ways to a peer, never both. */
static unsigned long long peers_reached(void)
{
    return stat_of("endpoints") + stat_of("mailboxes_out");
}

/* The endpoints a barrier on n ranks makes at rank r: the dissemination
 * barrier's ceil(log2 n) partners, or the linear one's (AMC_BARRIER_ALG=
 * linear, also the automatic choice where ranks share cores): rank 0 all
 * others, the rest only rank 0. */
static unsigned long long barrier_peers(int linear, int r, int n)
{
    return linear ? ((r == 0) ? (unsigned long long)(n - 1) : 1) : ceil_log2(n);
}

static void ct_lazy(void)
{
    amc_comm_t         world = amc_comm_world(), dup = AMC_COMM_NULL, half = AMC_COMM_NULL;
    unsigned long long eps, after, ext[2], mine[2], k = ceil_log2(g_size);
    const char        *alg = getenv("AMC_BARRIER_ALG");
    int                rc, hsize = 0, sum = 0, want = 0, r, linear;

    /* the script names the barrier; without a name (the run that checks
     * AMC_STATS) either pattern will do: at N = 5 and 8 every rank's own
     * count tells them apart (dissemination: ceil(log2 N) everywhere) */
    eps = peers_reached();
    CT_CHECK(eps == 0, "%llu peers connected after amc_init, want 0", eps);
    rc  = amc_barrier(world);
    eps = peers_reached();
    if ((alg != NULL) && (alg[0] != '\0')) {
        linear = (strcmp(alg, "linear") == 0);
    } else {
        linear = (eps != k);
    }
    k = barrier_peers(linear, g_rank, g_size);
    CT_CHECK((rc == AMC_SUCCESS) && (eps == k), "barrier (%s): %llu peers connected, want %llu (%s)",
             amc_strerror(rc), eps, k, linear ? "linear" : "dissemination");
    CT_CHECK(stat_of("flow_peers") == 0, "flow state for %llu peers after a barrier",
             stat_of("flow_peers"));
    rc = amc_barrier(world);
    CT_CHECK((rc == AMC_SUCCESS) && (peers_reached() == eps),
             "a second barrier connected %llu more", peers_reached() - eps);
    /* every rank alike: the largest count and the largest negated one */
    mine[0] = eps;
    mine[1] = ~eps;
    rc      = amc_allreduce(mine, ext, 2, AMC_UINT64, AMC_MAX, world);
    CT_CHECK((rc == AMC_SUCCESS) && (ext[0] == barrier_peers(linear, 0, g_size)) &&
             (~ext[1] == barrier_peers(linear, g_size - 1, g_size)),
             "peers connected after a barrier over the ranks: %llu..%llu, want %llu..%llu", ~ext[1],
             ext[0], barrier_peers(linear, g_size - 1, g_size), barrier_peers(linear, 0, g_size));

    rc = amc_comm_dup(world, &dup);
    CT_CHECK(rc == AMC_SUCCESS, "dup: %s", amc_strerror(rc));
    eps = peers_reached();
    rc  = amc_barrier(dup);
    CT_CHECK((rc == AMC_SUCCESS) && (peers_reached() == eps),
             "a barrier on a dup (%s) connected %llu more", amc_strerror(rc),
             peers_reached() - eps);

    rc = amc_comm_split(world, g_rank % 2, g_rank, &half);
    CT_CHECK(rc == AMC_SUCCESS, "split: %s", amc_strerror(rc));
    if (rc == AMC_SUCCESS) {
        amc_comm_size(half, &hsize);
        eps   = peers_reached();
        rc    = amc_barrier(half);
        after = peers_reached();
        CT_CHECK((rc == AMC_SUCCESS) && (after <= eps + barrier_peers(linear, 0, hsize)),
                 "a barrier on a split of %d (%s): %llu peers more", hsize,
                 amc_strerror(rc), after - eps);
        rc = amc_allreduce(&g_rank, &sum, 1, AMC_INT, AMC_SUM, half);
        for (r = g_rank % 2; r < g_size; r += 2) {
            want += r;
        }
        CT_CHECK((rc == AMC_SUCCESS) && (sum == want), "allreduce on the split (%s): %d, "
                 "want %d", amc_strerror(rc), sum, want);
        amc_comm_free(&half);
    }
    if (dup != AMC_COMM_NULL) {
        amc_comm_free(&dup);
    }
    if (g_rank == 0) {
        fprintf(stderr, "lazy N=%d: rank 0 connected to %llu peers (a %s barrier needs %llu; the "
                "job has %d ranks)\n", g_size, peers_reached(),
                linear ? "linear" : "dissemination", k, g_size);
    }
}

/* Lines of this process's maps naming a mailbox inbox (a memfd, so never a
 * file in /dev/shm). */
static int mbox_maps(void)
{
    char  line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    int   n = 0;

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        n += (strstr(line, "/memfd:amc-mbox-") != NULL);
    }
    fclose(f);
    return n;
}

/* The mailboxes at work (AMC_SHM, the default) or not (AMC_SHM=0): messages
 * of every way (barrier, 8 B allreduce, a 1 KiB bcast in the mailbox, 64 KiB
 * by UCX) give the right results, and the counters and the process's maps
 * say which way they went. "mbox_kill": then every rank kills itself, for
 * the script's look at /dev/shm. */
static void ct_mbox(int kill_self)
{
    const char        *env = getenv("AMC_SHM");
    int                on = (env == NULL) || (strcmp(env, "0") != 0);
    static int         big[16384];
    int                i, rc, x = g_rank + 1, sum = 0, bad = 0;
    char               small[1024];
    unsigned long long out, in;

    rc = amc_barrier(amc_comm_world());
    CT_CHECK(rc == AMC_SUCCESS, "barrier: %s", amc_strerror(rc));
    rc = amc_allreduce(&x, &sum, 1, AMC_INT, AMC_SUM, amc_comm_world());
    CT_CHECK((rc == AMC_SUCCESS) && (sum == g_size * (g_size + 1) / 2), "allreduce: %d (%s)", sum,
             amc_strerror(rc));
    for (i = 0; i < (int)sizeof(small); i++) {
        small[i] = (g_rank == 0) ? (char)(i * 3) : 0;
    }
    for (i = 0; i < 16384; i++) {
        big[i] = (g_rank == g_size - 1) ? i * 7 : -1;
    }
    rc = amc_bcast(small, sizeof(small), AMC_BYTE, 0, amc_comm_world());
    CT_CHECK(rc == AMC_SUCCESS, "bcast 1 KiB: %s", amc_strerror(rc));
    rc = amc_bcast(big, 16384, AMC_INT, g_size - 1, amc_comm_world());
    CT_CHECK(rc == AMC_SUCCESS, "bcast 64 KiB: %s", amc_strerror(rc));
    for (i = 0; i < (int)sizeof(small); i++) {
        bad += (small[i] != (char)(i * 3));
    }
    for (i = 0; i < 16384; i++) {
        bad += (big[i] != i * 7);
    }
    CT_CHECK(bad == 0, "%d bytes or ints wrong after the bcasts", bad);
    out = stat_of("mailboxes_out");
    in  = stat_of("mailboxes_in");
    if (on && (g_size > 1)) {
        CT_CHECK((out >= 1) && (in >= 1), "mailboxes on: %llu written, %llu read", out, in);
        CT_CHECK(mbox_maps() >= 2, "mailboxes on: %d inboxes mapped (own and a peer's)",
                 mbox_maps());
    } else {
        CT_CHECK((out == 0) && (in == 0) && (mbox_maps() == 0),
                 "mailboxes off: %llu written, %llu read, %d mapped", out, in, mbox_maps());
    }
    fprintf(stderr, "mbox rank %d: AMC_SHM=%d mailboxes_out=%llu mailboxes_in=%llu "
            "endpoints=%llu\n", g_rank, on, out, in, stat_of("endpoints"));
    if (kill_self) {
        rc = amc_barrier(amc_comm_world());
        CT_CHECK(rc == AMC_SUCCESS, "barrier before the kill: %s", amc_strerror(rc));
        fflush(stderr);
        raise(SIGKILL);
    }
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);

    return ((v != NULL) && (v[0] != '\0')) ? strtoull(v, NULL, 0) : dflt;
}

int main(int argc, char **argv)
{
    const char *sub = (argc > 1) ? argv[1] : "random";
    int         r, rc;

    rc = amc_init(&argc, &argv);
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "FAIL amc_init: %s\n", amc_strerror(rc));
        return 1;
    }
    amc_comm_rank(amc_comm_world(), &g_rank);
    amc_comm_size(amc_comm_world(), &g_size);
    CT_CHECK(g_size <= MAX_N, "at most %d ranks", MAX_N);
    if (g_size <= MAX_N) {
        comm[0] = amc_comm_world();
        live[0] = 1;
        for (r = 0; r < g_size; r++) {
            int i;

            msize[0][r] = (int8_t)g_size;
            for (i = 0; i < g_size; i++) {
                members[0][r][i] = (int8_t)i;
            }
        }
        if (strcmp(sub, "lazy") == 0) {
            ct_lazy(); /* first: it counts from amc_init on */
        } else if ((strcmp(sub, "mbox") == 0) || (strcmp(sub, "mbox_kill") == 0)) {
            ct_mbox(strcmp(sub, "mbox_kill") == 0);
        } else if (strcmp(sub, "reproducer") == 0) {
            ct_reproducer();
        } else if (strcmp(sub, "random") == 0) {
            ct_random(env_u64("AMCTEST_SEED", 1000 + (uint64_t)g_size),
                      (size_t)env_u64("AMCTEST_COMM_STEPS", 1000));
        } else {
            CT_CHECK(0, "unknown subtest %s", sub);
        }
    }
    rc = amc_barrier(amc_comm_world());
    CT_CHECK(rc == AMC_SUCCESS, "final barrier: %s", amc_strerror(rc));
    if (g_rank == 0) {
        fprintf(stderr, "%s N=%d: %zu creations, %zu communicators on rank 0\n", sub, g_size,
                creations, made);
    }
    if ((g_rank == 0) && (g_failures == 0)) {
        printf("ok %s N=%d\n", sub, g_size);
    }
    amc_finalize();
    return g_failures ? 1 : 0;
}
