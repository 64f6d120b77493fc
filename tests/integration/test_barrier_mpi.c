/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration test for amcoll barriers: real UCX, bootstrapped by PMIx under
 * mpirun (or a singleton when started without a launcher).
 *
 *   test_barrier_mpi <subtest> <shared-file>
 *
 * subtest is one of: semantics, dup, ibarrier, timeout, misuse, stale.
 * shared-file is a fresh (empty or zero-filled) file, normally under /dev/shm,
 * that every rank maps; the ranks keep C11 atomic counters in it to check the
 * barrier semantics independently of the library:
 *
 *   before barrier k every rank increments arrived[k]; after barrier k
 *   completes, every rank must see arrived[k] == N.
 *
 * A rank that leaves barrier k before every rank has entered it therefore sees
 * a smaller count and reports rank, communicator and k.  (For ibarriers the
 * stamp is taken when the request is posted.)
 *
 *   semantics  K barriers on world, cycling amc_barrier / ibarrier+wait /
 *              ibarrier+test loop, with one rank now and then entering late
 *   dup        world, d1, d2 = dups of world, d3 = dup of d1 used in turn (odd
 *              ranks create them late, so early traffic must be held); d1 freed
 *              before its child d3; dup/barrier/free cycles; a communicator
 *              freed while an ibarrier on it is outstanding
 *   ibarrier   5 outstanding ibarriers completed by amc_test in reverse order,
 *              by amc_testall, by amc_waitall; 5+5 outstanding on two
 *              communicators posted in rank-dependent order; ibarriers left
 *              outstanding under blocking barriers; batches with NULL requests
 *   timeout    needs N >= 2 and AMC_TIMEOUT (the script uses 1): a rank skips a
 *              barrier for a while; the others must get AMC_ERR_TIMEOUT in
 *              [0.9 T, T + 9 s), request released; then the late rank enters
 *              the abandoned barrier, it must complete, and later barriers must
 *              succeed.  Three phases: amc_barrier on world (last rank late,
 *              others wait for it outside the library), ibarrier+wait on a dup
 *              (rank 0 late), amc_barrier on world where the others go straight
 *              on to the next barrier (rank N/2 late by 1.5 T)
 *   misuse     documented codes for bad arguments before amc_init, after it
 *              (second amc_init, amc_comm_free(&world), AMC_COMM_NULL, NULL
 *              pointers, AMC_REQUEST_NULL, amc_strerror) and after amc_finalize
 *   stale      a freed communicator's old handle is rejected with AMC_ERR_COMM
 *
 * Rank 0 prints "ok <subtest> N=<n>" on success.  Failures print lines
 * "FAIL <subtest> rank r/N: ..." and make the exit status non-zero; an
 * unexpected error code from the library ends the rank at once (mpirun then
 * ends the job), while semantic violations are counted and the test goes on,
 * so that every rank keeps calling the same collectives.
 *
 * Environment (none of it starts with AMC_, which the library reserves):
 *   AMCTEST_ITERS  number of barriers of the semantics sub-test (default by N)
 */
#define _POSIX_C_SOURCE 200809L

#include <amcoll.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(ATOMIC_INT_LOCK_FREE == 2,
               "the shared counters need lock-free atomic_int (they live in a file mapping)");

/* Size of the shared file: a bump allocator hands out counters from it. */
#define AMC_TEST_SHM_INTS      (256 * 1024)
#define AMC_TEST_SHM_BYTES     ((size_t)AMC_TEST_SHM_INTS * sizeof(atomic_int))

/* Longest time a test loop (amc_test / amc_testall) may spin before we call it a hang. */
#define AMC_TEST_LOOP_LIMIT_S  90.0

/* Longest time to wait for the late rank's stamp in the timeout sub-test. */
#define AMC_TEST_STAMP_LIMIT_S 30.0

/* Most failure lines one rank prints (the count is always reported). */
#define AMC_TEST_MAX_FAIL_LINES 20

/* ------------------------------------------------------------------ state */

static const char *g_subtest = "?";
static int         g_rank    = -1;
static int         g_size    = -1;
static int         g_failures;
static atomic_int *g_shm;          /* the whole mapping */
static int         g_shm_next;     /* bump allocator, same order on every rank */
static atomic_int *g_shm_failures; /* failures summed over ranks */

/* ------------------------------------------------------------------ helpers */

static double amc_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void amc_test_sleep(double seconds)
{
    struct timespec ts;
    ts.tv_sec  = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while ((nanosleep(&ts, &ts) != 0) && (errno == EINTR)) {
    }
}

static const char *amc_test_code_name(int rc)
{
    static const char *names[] = {
        "AMC_SUCCESS", "AMC_ERR_ARG", "AMC_ERR_COMM", "AMC_ERR_NO_MEMORY",
        "AMC_ERR_TRUNCATE", "AMC_ERR_PROTOCOL", "AMC_ERR_PEER", "AMC_ERR_TIMEOUT",
        "AMC_ERR_TRANSPORT", "AMC_ERR_NOT_INITIALIZED", "AMC_ERR_UNSUPPORTED",
        "AMC_ERR_REVOKED"
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == AMC_ERR_LAST,
                   "code name table out of date with amcoll.h");
    if ((rc >= 0) && (rc < AMC_ERR_LAST)) {
        return names[rc];
    }
    return "(unknown code)";
}

static void amc_test_vreport(const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "%s %s rank %d/%d: %s\n", kind, g_subtest, g_rank, g_size, msg);
    fflush(stderr);
}

/* A check failed; the test goes on. */
__attribute__((format(printf, 1, 2)))
static void amc_test_fail(const char *fmt, ...)
{
    va_list ap;

    if (++g_failures <= AMC_TEST_MAX_FAIL_LINES) {
        va_start(ap, fmt);
        amc_test_vreport("FAIL", fmt, ap);
        va_end(ap);
    } else if (g_failures == AMC_TEST_MAX_FAIL_LINES + 1) {
        fprintf(stderr, "FAIL %s rank %d/%d: (further failure lines suppressed)\n",
                g_subtest, g_rank, g_size);
    }
}

/* The library returned something we cannot go on from: end this rank now. */
__attribute__((format(printf, 1, 2), noreturn))
static void amc_test_fatal(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    amc_test_vreport("FAIL", fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s rank %d/%d: aborting this rank (%d earlier failure(s))\n",
            g_subtest, g_rank, g_size, g_failures);
    fflush(stdout);
    fflush(stderr);
    exit(1);
}

/* Checks a status where the test must go on afterwards: anything else is fatal. */
static void amc_test_must(int rc, const char *what)
{
    if (rc != AMC_SUCCESS) {
        amc_test_fatal("%s returned %s (%d), expected AMC_SUCCESS", what,
                       amc_test_code_name(rc), rc);
    }
}

/* Checks a status that is part of the contract; a mismatch is counted. */
static void amc_test_expect(int rc, int expected, const char *what)
{
    if (rc != expected) {
        amc_test_fail("%s returned %s (%d), expected %s (%d)", what,
                      amc_test_code_name(rc), rc, amc_test_code_name(expected), expected);
    }
}

/* ------------------------------------------------------------------ shared memory */

static void amc_test_shm_map(const char *path)
{
    struct stat st;
    void       *p;
    int         fd;

    fd = open(path, O_RDWR);
    if (fd < 0) {
        amc_test_fatal("cannot open shared file '%s': %s", path, strerror(errno));
    }
    if (fstat(fd, &st) != 0) {
        amc_test_fatal("fstat('%s'): %s", path, strerror(errno));
    }
    /* Every rank grows the file to the same size; growing zero-fills and a
     * second ftruncate to the same size changes nothing, so the race is benign. */
    if ((size_t)st.st_size < AMC_TEST_SHM_BYTES) {
        if (ftruncate(fd, (off_t)AMC_TEST_SHM_BYTES) != 0) {
            amc_test_fatal("ftruncate('%s', %zu): %s", path, AMC_TEST_SHM_BYTES,
                           strerror(errno));
        }
    }
    p = mmap(NULL, AMC_TEST_SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        amc_test_fatal("mmap('%s'): %s", path, strerror(errno));
    }
    close(fd);
    g_shm      = p;
    g_shm_next = 0;
}

static atomic_int *amc_test_shm_alloc(int n)
{
    atomic_int *p;

    if ((n < 0) || (g_shm_next + n > AMC_TEST_SHM_INTS)) {
        amc_test_fatal("test bug: shared counter area exhausted (%d + %d > %d)",
                       g_shm_next, n, AMC_TEST_SHM_INTS);
    }
    p           = g_shm + g_shm_next;
    g_shm_next += n;
    return p;
}

/*
 * One counter per barrier instance of one communicator.  Every rank creates
 * its counter sets in the same order, so they land at the same offsets.
 */
typedef struct amc_test_ctr {
    const char *name;     /* communicator name for messages */
    atomic_int *arrived;  /* arrived[k]: ranks that entered barrier k */
    int         capacity;
    int         next;     /* next barrier index on this communicator */
} amc_test_ctr_t;

static void amc_test_ctr_init(amc_test_ctr_t *c, const char *name, int capacity)
{
    c->name     = name;
    c->arrived  = amc_test_shm_alloc(capacity);
    c->capacity = capacity;
    c->next     = 0;
}

/* Called right before this rank enters (or posts) the next barrier; returns its index. */
static int amc_test_stamp(amc_test_ctr_t *c)
{
    int k = c->next++;
    int before;

    if (k >= c->capacity) {
        amc_test_fatal("test bug: more than %d barriers on %s", c->capacity, c->name);
    }
    before = atomic_fetch_add(&c->arrived[k], 1);
    if (before >= g_size) {
        amc_test_fail("%s barrier %d: %d ranks had already entered before this rank "
                      "(at most %d expected; stale shared file?)", c->name, k, before,
                      g_size - 1);
    }
    return k;
}

/* Called right after barrier k completed on this rank. */
static void amc_test_check(const amc_test_ctr_t *c, int k, const char *how)
{
    int seen = atomic_load(&c->arrived[k]);

    if (seen != g_size) {
        amc_test_fail("left barrier %d on %s (%s) while only %d of %d ranks had entered it",
                      k, c->name, how, seen, g_size);
    }
}

/* Waits (without calling the library) until barrier k has been entered by all ranks. */
static void amc_test_await_stamps(const amc_test_ctr_t *c, int k, double limit_s)
{
    double t0 = amc_test_now();

    while (atomic_load(&c->arrived[k]) < g_size) {
        if (amc_test_now() - t0 > limit_s) {
            amc_test_fatal("%s barrier %d: only %d of %d ranks entered it within %.0f s",
                           c->name, k, atomic_load(&c->arrived[k]), g_size, limit_s);
        }
        amc_test_sleep(0.001);
    }
}

/* ------------------------------------------------------------------ completion helpers */

/* amc_test until the request completes; checks the flag/handle contract. */
static void amc_test_test_loop(amc_request_t *req, const char *what)
{
    double t0    = amc_test_now();
    int    flag  = 0;
    long   polls = 0;
    int    rc;

    for (;;) {
        flag = -1;
        rc   = amc_test(req, &flag);
        if (rc != AMC_SUCCESS) {
            amc_test_fatal("amc_test on %s returned %s (%d) after %ld polls", what,
                           amc_test_code_name(rc), rc, polls);
        }
        if ((flag != 0) && (flag != 1)) {
            amc_test_fail("amc_test on %s set flag to %d (expected 0 or 1)", what, flag);
        }
        if (flag) {
            break;
        }
        if (*req == AMC_REQUEST_NULL) {
            amc_test_fatal("amc_test on %s returned flag=0 but set the request to "
                           "AMC_REQUEST_NULL", what);
        }
        if (amc_test_now() - t0 > AMC_TEST_LOOP_LIMIT_S) {
            amc_test_fatal("amc_test on %s did not complete within %.0f s (%ld polls)",
                           what, AMC_TEST_LOOP_LIMIT_S, polls);
        }
        ++polls;
        sched_yield(); /* up to 32 ranks share 2 cores */
    }
    if (*req != AMC_REQUEST_NULL) {
        amc_test_fail("amc_test on %s returned flag=1 but left the request non-NULL", what);
        *req = AMC_REQUEST_NULL; /* do not touch it again */
    }
}

static void amc_test_wait(amc_request_t *req, const char *what)
{
    char buf[256];
    int  rc = amc_wait(req);

    snprintf(buf, sizeof(buf), "amc_wait on %s", what);
    amc_test_must(rc, buf);
    if (*req != AMC_REQUEST_NULL) {
        amc_test_fail("amc_wait on %s returned AMC_SUCCESS but left the request non-NULL",
                      what);
        *req = AMC_REQUEST_NULL;
    }
}

static void amc_test_testall_loop(int n, amc_request_t reqs[], const char *what)
{
    double t0    = amc_test_now();
    long   polls = 0;
    int    flag, rc, i;

    for (;;) {
        flag = -1;
        rc   = amc_testall(n, reqs, &flag);
        if (rc != AMC_SUCCESS) {
            amc_test_fatal("amc_testall(%d) on %s returned %s (%d) after %ld polls", n, what,
                           amc_test_code_name(rc), rc, polls);
        }
        if ((flag != 0) && (flag != 1)) {
            amc_test_fail("amc_testall on %s set flag to %d (expected 0 or 1)", what, flag);
        }
        if (flag) {
            break;
        }
        if (amc_test_now() - t0 > AMC_TEST_LOOP_LIMIT_S) {
            amc_test_fatal("amc_testall(%d) on %s did not complete within %.0f s", n, what,
                           AMC_TEST_LOOP_LIMIT_S);
        }
        ++polls;
        sched_yield();
    }
    for (i = 0; i < n; ++i) {
        if (reqs[i] != AMC_REQUEST_NULL) {
            amc_test_fail("amc_testall on %s returned flag=1 but left request %d non-NULL",
                          what, i);
            reqs[i] = AMC_REQUEST_NULL;
        }
    }
}

static void amc_test_waitall(int n, amc_request_t reqs[], const char *what)
{
    char buf[256];
    int  i;

    snprintf(buf, sizeof(buf), "amc_waitall(%d) on %s", n, what);
    amc_test_must(amc_waitall(n, reqs), buf);
    for (i = 0; i < n; ++i) {
        if (reqs[i] != AMC_REQUEST_NULL) {
            amc_test_fail("amc_waitall on %s returned AMC_SUCCESS but left request %d "
                          "non-NULL", what, i);
            reqs[i] = AMC_REQUEST_NULL;
        }
    }
}

static amc_request_t amc_test_ibarrier(amc_comm_t comm, const amc_test_ctr_t *c, int k)
{
    amc_request_t req = AMC_REQUEST_NULL;
    char          buf[128];
    int           rc;

    rc = amc_ibarrier(comm, &req);
    snprintf(buf, sizeof(buf), "amc_ibarrier(%s) #%d", c->name, k);
    amc_test_must(rc, buf);
    if (req == AMC_REQUEST_NULL) {
        amc_test_fatal("amc_ibarrier(%s) #%d returned AMC_SUCCESS but no request", c->name, k);
    }
    return req;
}

enum {
    AMC_TEST_BLOCKING,  /* amc_barrier */
    AMC_TEST_IWAIT,     /* amc_ibarrier + amc_wait */
    AMC_TEST_ITEST,     /* amc_ibarrier + amc_test loop */
    AMC_TEST_NMODES
};

static const char *amc_test_mode_name(int mode)
{
    switch (mode) {
    case AMC_TEST_BLOCKING: return "amc_barrier";
    case AMC_TEST_IWAIT:    return "amc_ibarrier+amc_wait";
    default:                return "amc_ibarrier+amc_test";
    }
}

/* One checked barrier on comm in the given mode. */
static void amc_test_barrier(amc_comm_t comm, amc_test_ctr_t *c, int mode)
{
    amc_request_t req;
    char          what[128];
    int           k  = amc_test_stamp(c);

    snprintf(what, sizeof(what), "%s barrier %d", c->name, k);
    switch (mode) {
    case AMC_TEST_BLOCKING: {
        int rc = amc_barrier(comm);
        if (rc != AMC_SUCCESS) {
            amc_test_fatal("amc_barrier on %s returned %s (%d)", what,
                           amc_test_code_name(rc), rc);
        }
        break;
    }
    case AMC_TEST_IWAIT:
        req = amc_test_ibarrier(comm, c, k);
        amc_test_wait(&req, what);
        break;
    default:
        req = amc_test_ibarrier(comm, c, k);
        amc_test_test_loop(&req, what);
        break;
    }
    amc_test_check(c, k, amc_test_mode_name(mode));
}

/* Every rank enters barrier k at a different moment now and then. */
static void amc_test_jitter(int k)
{
    if ((k % 16 == 7) && (g_rank == (k / 16) % g_size)) {
        amc_test_sleep(0.002);
    }
}

static int amc_test_iters(int dflt)
{
    const char *s = getenv("AMCTEST_ITERS");
    int         v;

    if ((s == NULL) || (*s == '\0')) {
        return dflt;
    }
    v = atoi(s);
    return (v > 0) ? v : dflt;
}

static void amc_test_comm_check(amc_comm_t comm, const char *name)
{
    int r = -1, n = -1;

    amc_test_must(amc_comm_rank(comm, &r), "amc_comm_rank");
    amc_test_must(amc_comm_size(comm, &n), "amc_comm_size");
    if ((r != g_rank) || (n != g_size)) {
        amc_test_fail("%s: amc_comm_rank/size say %d/%d, expected %d/%d (same as world)",
                      name, r, n, g_rank, g_size);
    }
}

static void amc_test_free(amc_comm_t *comm, const char *name)
{
    char buf[128];

    snprintf(buf, sizeof(buf), "amc_comm_free(&%s)", name);
    amc_test_must(amc_comm_free(comm), buf);
    if (*comm != AMC_COMM_NULL) {
        amc_test_fail("amc_comm_free(&%s) returned AMC_SUCCESS but did not set the handle "
                      "to AMC_COMM_NULL", name);
        *comm = AMC_COMM_NULL;
    }
}

static amc_comm_t amc_test_dup(amc_comm_t comm, const char *name)
{
    amc_comm_t newcomm = AMC_COMM_NULL;
    char       buf[128];

    snprintf(buf, sizeof(buf), "amc_comm_dup -> %s", name);
    amc_test_must(amc_comm_dup(comm, &newcomm), buf);
    if (newcomm == AMC_COMM_NULL) {
        amc_test_fatal("%s returned AMC_SUCCESS but AMC_COMM_NULL", buf);
    }
    if (newcomm == comm) {
        amc_test_fail("%s returned the same handle as its parent", buf);
    }
    amc_test_comm_check(newcomm, name);
    return newcomm;
}

/* ------------------------------------------------------------------ sub-test: semantics */

static void amc_test_semantics(amc_comm_t world)
{
    amc_test_ctr_t c;
    int            dflt = (g_size <= 4) ? 2000 : (g_size <= 8) ? 1000 : (g_size <= 16) ? 600 : 400;
    int            iters = amc_test_iters(dflt);
    int            k;

    amc_test_ctr_init(&c, "world", iters);
    for (k = 0; k < iters; ++k) {
        amc_test_jitter(k);
        amc_test_barrier(world, &c, k % AMC_TEST_NMODES);
    }
}

/* ------------------------------------------------------------------ sub-test: dup */

static void amc_test_dup_subtest(amc_comm_t world)
{
    enum { NCOMM = 4, CYCLES = 16 };
    const char    *names[NCOMM] = { "world", "d1", "d2", "d3(dup of d1)" };
    amc_comm_t     comms[NCOMM];
    amc_test_ctr_t ctr[NCOMM], cyc, freed;
    int            per_comm = (g_size <= 8) ? 200 : 80;
    int            i, j, k;

    for (i = 0; i < NCOMM; ++i) {
        amc_test_ctr_init(&ctr[i], names[i], per_comm + 8);
    }
    amc_test_ctr_init(&cyc, "dup/free cycle", CYCLES);
    amc_test_ctr_init(&freed, "e (freed while busy)", 4);

    amc_test_barrier(world, &ctr[0], AMC_TEST_BLOCKING);

    /* Odd ranks create the communicators late: barrier traffic on d3 reaches
     * them before they have d1, d2 or d3 and must be held until they do. */
    if (g_rank % 2 == 1) {
        amc_test_sleep(0.05);
    }
    comms[0] = world;
    comms[1] = amc_test_dup(world, names[1]);
    comms[2] = amc_test_dup(world, names[2]);
    comms[3] = amc_test_dup(comms[1], names[3]);
    for (i = 0; i < NCOMM; ++i) {
        for (j = i + 1; j < NCOMM; ++j) {
            if (comms[i] == comms[j]) {
                amc_test_fail("%s and %s have the same handle", names[i], names[j]);
            }
        }
    }

    /* Alternate d3, d1, world, d2, ... with all three completion styles. */
    for (k = 0; k < per_comm * NCOMM; ++k) {
        static const int order[NCOMM] = { 3, 1, 0, 2 };
        int ci = order[k % NCOMM];

        amc_test_jitter(k);
        amc_test_barrier(comms[ci], &ctr[ci], (k / NCOMM) % AMC_TEST_NMODES);
    }

    /* Free the parent of d3 first: d3 must keep working on its own. */
    amc_test_free(&comms[1], names[1]);
    for (k = 0; k < 4; ++k) {
        amc_test_barrier(comms[3], &ctr[3], k % AMC_TEST_NMODES);
        amc_test_barrier(comms[2], &ctr[2], (k + 1) % AMC_TEST_NMODES);
    }
    amc_test_free(&comms[3], names[3]);
    amc_test_free(&comms[2], names[2]);

    /* dup, barrier, free in a loop: fresh communicators must not see stale state. */
    for (k = 0; k < CYCLES; ++k) {
        amc_comm_t t = amc_test_dup(world, "cycle");

        if (k % 4 == 1 && g_rank == k % g_size) {
            amc_test_sleep(0.01);
        }
        amc_test_barrier(t, &cyc, k % AMC_TEST_NMODES);
        amc_test_free(&t, "cycle");
    }

    /* Free a communicator while an ibarrier on it is outstanding (as MPI allows:
     * pending operations complete normally).  The last rank posts late, so its
     * messages reach the others after they freed their handle. */
    for (k = 0; k < 3; ++k) {
        amc_comm_t    e = amc_test_dup(world, "e");
        amc_request_t req;
        char          what[128];
        int           ke;

        if ((g_rank == g_size - 1) && (g_size > 1)) {
            amc_test_sleep(0.02);
        }
        ke  = amc_test_stamp(&freed);
        req = amc_test_ibarrier(e, &freed, ke);
        amc_test_free(&e, "e (ibarrier outstanding)");
        snprintf(what, sizeof(what), "ibarrier #%d on a communicator freed while it ran", ke);
        if (k == 1) {
            amc_test_test_loop(&req, what);
        } else {
            amc_test_wait(&req, what);
        }
        amc_test_check(&freed, ke, "communicator freed while the ibarrier ran");
    }
    amc_test_barrier(world, &ctr[0], AMC_TEST_IWAIT);
}

/* ------------------------------------------------------------------ sub-test: ibarrier */

static void amc_test_ibarrier_subtest(amc_comm_t world)
{
    enum { W = 5 };
    int            rounds = (g_size <= 8) ? 30 : 8;
    amc_test_ctr_t cw, cd;
    amc_comm_t     d;
    amc_request_t  req[2 * W];
    int            kk[2 * W];
    char           what[128];
    int            r, i;

    /* per round: world 4 W + 3, d W + 3 */
    amc_test_ctr_init(&cw, "world", rounds * (4 * W + 3) + 8);
    amc_test_ctr_init(&cd, "d", rounds * (W + 3) + 8);
    d = amc_test_dup(world, "d");

    for (r = 0; r < rounds; ++r) {
        int late = r % g_size; /* this rank posts each batch a little late */

        /* (a) W outstanding on world, completed by amc_test loops in reverse order */
        if (g_rank == late) {
            amc_test_sleep(0.003);
        }
        for (i = 0; i < W; ++i) {
            kk[i]  = amc_test_stamp(&cw);
            req[i] = amc_test_ibarrier(world, &cw, kk[i]);
        }
        for (i = W - 1; i >= 0; --i) {
            snprintf(what, sizeof(what), "world barrier %d (of %d outstanding, reverse order)",
                     kk[i], W);
            amc_test_test_loop(&req[i], what);
            amc_test_check(&cw, kk[i], "outstanding, amc_test in reverse order");
        }

        /* (b) W outstanding, completed by an amc_testall loop */
        if (g_rank == late) {
            amc_test_sleep(0.003);
        }
        for (i = 0; i < W; ++i) {
            kk[i]  = amc_test_stamp(&cw);
            req[i] = amc_test_ibarrier(world, &cw, kk[i]);
        }
        amc_test_testall_loop(W, req, "world (5 outstanding)");
        for (i = 0; i < W; ++i) {
            amc_test_check(&cw, kk[i], "outstanding, amc_testall");
        }

        /* (c) W outstanding, completed by amc_waitall */
        for (i = 0; i < W; ++i) {
            kk[i]  = amc_test_stamp(&cw);
            req[i] = amc_test_ibarrier(world, &cw, kk[i]);
        }
        if (g_rank == late) {
            amc_test_sleep(0.003);
        }
        amc_test_waitall(W, req, "world (5 outstanding)");
        for (i = 0; i < W; ++i) {
            amc_test_check(&cw, kk[i], "outstanding, amc_waitall");
        }

        /* (d) W on world and W on d at once, posted in a rank-dependent order
         * (legal: the order per communicator is the same on every rank),
         * completed in reverse order by amc_wait on odd rounds, amc_test otherwise. */
        if (g_rank == late) {
            amc_test_sleep(0.003);
        }
        for (i = 0; i < W; ++i) {
            int world_first = ((g_rank + i) % 2 == 0);

            if (world_first) {
                kk[2 * i]      = amc_test_stamp(&cw);
                req[2 * i]     = amc_test_ibarrier(world, &cw, kk[2 * i]);
                kk[2 * i + 1]  = amc_test_stamp(&cd);
                req[2 * i + 1] = amc_test_ibarrier(d, &cd, kk[2 * i + 1]);
            } else {
                kk[2 * i + 1]  = amc_test_stamp(&cd);
                req[2 * i + 1] = amc_test_ibarrier(d, &cd, kk[2 * i + 1]);
                kk[2 * i]      = amc_test_stamp(&cw);
                req[2 * i]     = amc_test_ibarrier(world, &cw, kk[2 * i]);
            }
        }
        for (i = 2 * W - 1; i >= 0; --i) {
            const amc_test_ctr_t *c = (i % 2 == 0) ? &cw : &cd;

            snprintf(what, sizeof(what), "%s barrier %d (two communicators outstanding)",
                     c->name, kk[i]);
            if (r % 2) {
                amc_test_wait(&req[i], what);
            } else {
                amc_test_test_loop(&req[i], what);
            }
            amc_test_check(c, kk[i], "two communicators outstanding");
        }

        /* (e) an ibarrier outstanding on world and on d while blocking barriers run */
        kk[0]  = amc_test_stamp(&cw);
        req[0] = amc_test_ibarrier(world, &cw, kk[0]);
        kk[1]  = amc_test_stamp(&cd);
        req[1] = amc_test_ibarrier(d, &cd, kk[1]);
        amc_test_barrier(world, &cw, AMC_TEST_BLOCKING);
        amc_test_barrier(d, &cd, AMC_TEST_BLOCKING);
        amc_test_waitall(2, req, "world+d (under blocking barriers)");
        amc_test_check(&cw, kk[0], "outstanding under a blocking barrier");
        amc_test_check(&cd, kk[1], "outstanding under a blocking barrier");

        /* (f) a batch mixing NULL requests with live ones */
        req[0] = AMC_REQUEST_NULL;
        kk[1]  = amc_test_stamp(&cw);
        req[1] = amc_test_ibarrier(world, &cw, kk[1]);
        req[2] = AMC_REQUEST_NULL;
        kk[3]  = amc_test_stamp(&cd);
        req[3] = amc_test_ibarrier(d, &cd, kk[3]);
        if (r % 2) {
            amc_test_waitall(4, req, "mixed NULL and live requests");
        } else {
            amc_test_testall_loop(4, req, "mixed NULL and live requests");
        }
        amc_test_check(&cw, kk[1], "batch with NULL requests");
        amc_test_check(&cd, kk[3], "batch with NULL requests");
    }

    amc_test_free(&d, "d");
    amc_test_barrier(world, &cw, AMC_TEST_BLOCKING);
}

/* ------------------------------------------------------------------ sub-test: timeout */

typedef struct amc_test_tmo {
    double t;          /* AMC_TIMEOUT */
    double lo, hi;     /* accepted time to AMC_ERR_TIMEOUT */
} amc_test_tmo_t;

/*
 * Judges what a rank that waited for a late peer got back.  Returns 1 when it
 * was the expected AMC_ERR_TIMEOUT (so the barrier instance was abandoned and
 * the caller must not check its counter).
 */
static int amc_test_judge_timeout(const amc_test_tmo_t *p, int rc, double el,
                                  amc_request_t req_after, const char *what,
                                  const amc_test_ctr_t *c, int k, int late, double late_sleep)
{
    if (rc == AMC_ERR_TIMEOUT) {
        if ((el < p->lo) || (el >= p->hi)) {
            amc_test_fail("%s (%s #%d) timed out after %.3f s with AMC_TIMEOUT=%g (expected "
                          "%.2f s <= t < %.2f s)", what, c->name, k, el, p->t, p->lo, p->hi);
        }
        if (req_after != AMC_REQUEST_NULL) {
            amc_test_fail("%s (%s #%d) returned AMC_ERR_TIMEOUT but did not set the request "
                          "to AMC_REQUEST_NULL", what, c->name, k);
        }
        return 1;
    }
    if (rc == AMC_SUCCESS) {
        amc_test_fail("%s (%s #%d) returned AMC_SUCCESS after %.3f s while rank %d slept "
                      "%.2f s; expected AMC_ERR_TIMEOUT after ~%g s", what, c->name, k, el,
                      late, late_sleep, p->t);
        amc_test_check(c, k, "a barrier that should have timed out");
        return 0;
    }
    amc_test_fatal("%s (%s #%d) returned %s (%d) after %.3f s while rank %d slept; expected "
                   "AMC_ERR_TIMEOUT", what, c->name, k, amc_test_code_name(rc), rc, el, late);
}

/* The late rank enters the barrier the others gave up on: it must complete. */
static void amc_test_late_entry(amc_comm_t comm, amc_test_ctr_t *c, int use_ibarrier)
{
    amc_request_t req;
    int           k = amc_test_stamp(c);
    int           rc;

    if (use_ibarrier) {
        req = amc_test_ibarrier(comm, c, k);
        rc  = amc_wait(&req);
    } else {
        rc = amc_barrier(comm);
    }
    if (rc != AMC_SUCCESS) {
        amc_test_fatal("late rank: %s on %s barrier %d (which the others gave up on) "
                       "returned %s (%d); it should complete, since the others' instances "
                       "keep running", use_ibarrier ? "amc_ibarrier+amc_wait" : "amc_barrier",
                       c->name, k, amc_test_code_name(rc), rc);
    }
    amc_test_check(c, k, "late rank entering a barrier the others gave up on");
}

static void amc_test_timeout_subtest(amc_comm_t world)
{
    const char    *env = getenv("AMC_TIMEOUT");
    amc_test_tmo_t p;
    double         late_sleep, t0, el;
    int            late;
    amc_test_ctr_t cw, cd;
    amc_comm_t     d;
    amc_request_t  req;
    int            k, i, rc;

    p.t = (env != NULL) ? strtod(env, NULL) : 0.0;
    if (g_size < 2) {
        amc_test_fatal("the timeout sub-test needs at least 2 ranks (got %d)", g_size);
    }
    if (!(p.t > 0.0) || (p.t > 20.0)) {
        amc_test_fatal("the timeout sub-test needs AMC_TIMEOUT in (0, 20] seconds in the "
                       "environment (got '%s')", env ? env : "(unset)");
    }
    p.lo = 0.9 * p.t;
    p.hi = p.t + 9.0;

    amc_test_ctr_init(&cw, "world", 96);
    amc_test_ctr_init(&cd, "d", 96);
    d = amc_test_dup(world, "d");

    for (k = 0; k < 3; ++k) {
        amc_test_barrier(world, &cw, k % AMC_TEST_NMODES);
        amc_test_barrier(d, &cd, (k + 1) % AMC_TEST_NMODES);
    }

    /* Phase 1: blocking amc_barrier on world; the last rank comes 2.5 T late.
     * The others wait (outside the library) until it has entered, so that
     * their next barrier is not itself cut short by the timeout. */
    late       = g_size - 1;
    late_sleep = 2.5 * p.t;
    if (g_rank == late) {
        amc_test_sleep(late_sleep);
        amc_test_late_entry(world, &cw, 0);
    } else {
        k  = amc_test_stamp(&cw);
        t0 = amc_test_now();
        rc = amc_barrier(world);
        el = amc_test_now() - t0;
        amc_test_judge_timeout(&p, rc, el, AMC_REQUEST_NULL, "amc_barrier", &cw, k, late,
                               late_sleep);
        amc_test_await_stamps(&cw, k, AMC_TEST_STAMP_LIMIT_S);
    }

    /* The library must be usable again, on world and on d. */
    for (i = 0; i < 9; ++i) {
        amc_test_barrier(world, &cw, i % AMC_TEST_NMODES);
        amc_test_barrier(d, &cd, (i + 2) % AMC_TEST_NMODES);
    }

    /* Phase 2: amc_ibarrier + amc_wait on d; rank 0 comes late this time. */
    late = 0;
    if (g_rank == late) {
        amc_test_sleep(late_sleep);
        amc_test_late_entry(d, &cd, 1);
    } else {
        k   = amc_test_stamp(&cd);
        req = amc_test_ibarrier(d, &cd, k);
        t0  = amc_test_now();
        rc  = amc_wait(&req);
        el  = amc_test_now() - t0;
        amc_test_judge_timeout(&p, rc, el, req, "amc_ibarrier+amc_wait", &cd, k, late,
                               late_sleep);
        amc_test_await_stamps(&cd, k, AMC_TEST_STAMP_LIMIT_S);
    }

    for (i = 0; i < 9; ++i) {
        amc_test_barrier(d, &cd, i % AMC_TEST_NMODES);
        amc_test_barrier(world, &cw, (i + 1) % AMC_TEST_NMODES);
    }

    /* Phase 3: the others go straight on to the next barrier after the timeout,
     * so the abandoned instance and the next one are both in flight when the
     * late rank (N/2, 1.5 T late) enters them; the next one must then succeed
     * on every rank (its own deadline is ~0.5 T after the late rank enters). */
    late       = g_size / 2;
    late_sleep = 1.5 * p.t;
    if (g_rank == late) {
        amc_test_sleep(late_sleep);
        amc_test_late_entry(world, &cw, 0);
        amc_test_late_entry(world, &cw, 0);
    } else {
        int timed_out;

        k  = amc_test_stamp(&cw);
        t0 = amc_test_now();
        rc = amc_barrier(world);
        el = amc_test_now() - t0;
        timed_out = amc_test_judge_timeout(&p, rc, el, AMC_REQUEST_NULL, "amc_barrier", &cw, k,
                                           late, late_sleep);
        k  = amc_test_stamp(&cw);
        t0 = amc_test_now();
        rc = amc_barrier(world);
        el = amc_test_now() - t0;
        if (rc == AMC_SUCCESS) {
            amc_test_check(&cw, k, "barrier entered right after a timed-out one");
            amc_test_check(&cw, k - 1, "(the timed-out one, after the next one completed)");
        } else if (rc == AMC_ERR_TIMEOUT) {
            amc_test_fail("amc_barrier on world #%d, entered right after #%d %s, returned "
                          "AMC_ERR_TIMEOUT after %.3f s although rank %d entered #%d and #%d "
                          "%.2f s after this rank entered #%d", k, k - 1,
                          timed_out ? "timed out" : "(which should have timed out)", el, late,
                          k - 1, k, late_sleep, k - 1);
            amc_test_await_stamps(&cw, k, AMC_TEST_STAMP_LIMIT_S);
        } else {
            amc_test_fatal("amc_barrier on world #%d, entered right after a timed-out one, "
                           "returned %s (%d) after %.3f s", k, amc_test_code_name(rc), rc, el);
        }
    }

    for (i = 0; i < 9; ++i) {
        amc_test_barrier(world, &cw, i % AMC_TEST_NMODES);
        amc_test_barrier(d, &cd, (i + 1) % AMC_TEST_NMODES);
    }
    amc_test_free(&d, "d");
    amc_test_barrier(world, &cw, AMC_TEST_BLOCKING);
}

/* ------------------------------------------------------------------ sub-tests: misuse */

/* Before amc_init: every call but the pure queries reports AMC_ERR_NOT_INITIALIZED. */
static void amc_test_misuse_before_init(void)
{
    amc_comm_t    c    = AMC_COMM_NULL;
    amc_request_t req  = AMC_REQUEST_NULL;
    int           flag = -1;

    amc_test_expect(amc_initialized(&flag), AMC_SUCCESS, "amc_initialized before amc_init");
    if (flag != 0) {
        amc_test_fail("amc_initialized before amc_init set flag=%d, expected 0", flag);
    }
    amc_test_expect(amc_barrier(AMC_COMM_WORLD), AMC_ERR_NOT_INITIALIZED,
                    "amc_barrier(AMC_COMM_WORLD) before amc_init");
    amc_test_expect(amc_ibarrier(AMC_COMM_WORLD, &req), AMC_ERR_NOT_INITIALIZED,
                    "amc_ibarrier(AMC_COMM_WORLD) before amc_init");
    amc_test_expect(amc_comm_dup(AMC_COMM_WORLD, &c), AMC_ERR_NOT_INITIALIZED,
                    "amc_comm_dup(AMC_COMM_WORLD) before amc_init");
    amc_test_expect(amc_finalize(), AMC_ERR_NOT_INITIALIZED, "amc_finalize before amc_init");
}

static void amc_test_misuse_subtest(amc_comm_t world, int *argc, char ***argv,
                                    amc_comm_t *leaked)
{
    amc_test_ctr_t c;
    amc_comm_t     w, nullc = AMC_COMM_NULL, d;
    amc_request_t  req, reqs[3];
    int            flag, rc, v, i, provided = -1;
    const char    *s;

    amc_test_ctr_init(&c, "world", 64);

    flag = -1;
    amc_test_expect(amc_initialized(&flag), AMC_SUCCESS, "amc_initialized after amc_init");
    if (flag != 1) {
        amc_test_fail("amc_initialized after amc_init set flag=%d, expected 1", flag);
    }

    /* A second initialisation is an error, and harmless. */
    rc = amc_init(argc, argv);
    if (rc == AMC_SUCCESS) {
        amc_test_fail("a second amc_init returned AMC_SUCCESS, expected an error");
    }
    rc = amc_init_thread(argc, argv, AMC_THREAD_SINGLE, &provided);
    if (rc == AMC_SUCCESS) {
        amc_test_fail("amc_init_thread after amc_init returned AMC_SUCCESS, expected an error");
    }
    amc_test_barrier(world, &c, AMC_TEST_BLOCKING);

    /* The world communicator cannot be freed, and stays usable. */
    w  = world;
    amc_test_expect(amc_comm_free(&w), AMC_ERR_COMM, "amc_comm_free(&world)");
    if (w != world) {
        amc_test_fail("a failed amc_comm_free(&world) changed the handle");
    }
    amc_test_barrier(world, &c, AMC_TEST_IWAIT);
    amc_test_comm_check(world, "world after amc_comm_free(&world)");

    /* AMC_COMM_NULL everywhere. */
    v = -1;
    amc_test_expect(amc_barrier(AMC_COMM_NULL), AMC_ERR_COMM, "amc_barrier(AMC_COMM_NULL)");
    req = AMC_REQUEST_NULL;
    amc_test_expect(amc_ibarrier(AMC_COMM_NULL, &req), AMC_ERR_COMM,
                    "amc_ibarrier(AMC_COMM_NULL)");
    amc_test_expect(amc_comm_rank(AMC_COMM_NULL, &v), AMC_ERR_COMM,
                    "amc_comm_rank(AMC_COMM_NULL)");
    amc_test_expect(amc_comm_size(AMC_COMM_NULL, &v), AMC_ERR_COMM,
                    "amc_comm_size(AMC_COMM_NULL)");
    d = AMC_COMM_NULL;
    amc_test_expect(amc_comm_dup(AMC_COMM_NULL, &d), AMC_ERR_COMM,
                    "amc_comm_dup(AMC_COMM_NULL)");
    amc_test_expect(amc_comm_free(&nullc), AMC_ERR_COMM, "amc_comm_free(&AMC_COMM_NULL)");

    /* NULL output pointers. */
    amc_test_expect(amc_ibarrier(world, NULL), AMC_ERR_ARG, "amc_ibarrier(world, NULL)");
    amc_test_expect(amc_comm_rank(world, NULL), AMC_ERR_ARG, "amc_comm_rank(world, NULL)");
    amc_test_expect(amc_comm_size(world, NULL), AMC_ERR_ARG, "amc_comm_size(world, NULL)");
    amc_test_expect(amc_comm_dup(world, NULL), AMC_ERR_ARG, "amc_comm_dup(world, NULL)");
    amc_test_expect(amc_test(NULL, &flag), AMC_ERR_ARG, "amc_test(NULL, &flag)");
    /* NULL flag on a live request: rejected, and the request stays usable. */
    v   = amc_test_stamp(&c);
    req = amc_test_ibarrier(world, &c, v);
    amc_test_expect(amc_test(&req, NULL), AMC_ERR_ARG, "amc_test(&live_request, NULL)");
    if (req == AMC_REQUEST_NULL) {
        amc_test_fail("a rejected amc_test(&req, NULL) released the request");
    } else {
        amc_test_wait(&req, "world barrier after amc_test(&req, NULL)");
    }
    amc_test_check(&c, v, "ibarrier after a rejected amc_test(&req, NULL)");
    amc_test_expect(amc_wait(NULL), AMC_ERR_ARG, "amc_wait(NULL)");
    amc_test_expect(amc_testall(1, NULL, &flag), AMC_ERR_ARG, "amc_testall(1, NULL, &flag)");
    amc_test_expect(amc_waitall(1, NULL), AMC_ERR_ARG, "amc_waitall(1, NULL)");
    reqs[0] = reqs[1] = reqs[2] = AMC_REQUEST_NULL;
    amc_test_expect(amc_testall(3, reqs, NULL), AMC_ERR_ARG, "amc_testall(3, reqs, NULL)");
    amc_test_expect(amc_waitall(-1, reqs), AMC_ERR_ARG, "amc_waitall(-1, reqs)");
    amc_test_expect(amc_testall(-1, reqs, &flag), AMC_ERR_ARG, "amc_testall(-1, reqs, &flag)");

    /* AMC_REQUEST_NULL completes at once. */
    req  = AMC_REQUEST_NULL;
    flag = -1;
    amc_test_expect(amc_test(&req, &flag), AMC_SUCCESS, "amc_test(&AMC_REQUEST_NULL)");
    if (flag != 1) {
        amc_test_fail("amc_test(&AMC_REQUEST_NULL) set flag=%d, expected 1", flag);
    }
    amc_test_expect(amc_wait(&req), AMC_SUCCESS, "amc_wait(&AMC_REQUEST_NULL)");
    flag = -1;
    amc_test_expect(amc_testall(3, reqs, &flag), AMC_SUCCESS,
                    "amc_testall on 3 x AMC_REQUEST_NULL");
    if (flag != 1) {
        amc_test_fail("amc_testall on 3 x AMC_REQUEST_NULL set flag=%d, expected 1", flag);
    }
    amc_test_expect(amc_waitall(3, reqs), AMC_SUCCESS, "amc_waitall on 3 x AMC_REQUEST_NULL");

    /* amc_strerror: a string for every code, and for unknown ones. */
    for (i = AMC_SUCCESS; i < AMC_ERR_LAST; ++i) {
        s = amc_strerror(i);
        if ((s == NULL) || (*s == '\0')) {
            amc_test_fail("amc_strerror(%s) returned %s", amc_test_code_name(i),
                          s ? "an empty string" : "NULL");
        }
    }
    {
        static const int unknown[] = { -1, AMC_ERR_LAST, 12345 };
        for (i = 0; i < 3; ++i) {
            s = amc_strerror(unknown[i]);
            if ((s == NULL) || (*s == '\0')) {
                amc_test_fail("amc_strerror(%d) (unknown code) returned %s", unknown[i],
                              s ? "an empty string" : "NULL");
            }
        }
    }

    /* After all that, collectives still work on every rank. */
    for (i = 0; i < 6; ++i) {
        amc_test_barrier(world, &c, i % AMC_TEST_NMODES);
    }

    /* Freeing twice: the second call sees AMC_COMM_NULL. */
    d = amc_test_dup(world, "d");
    amc_test_barrier(d, &c, AMC_TEST_ITEST);
    amc_test_free(&d, "d");
    amc_test_expect(amc_comm_free(&d), AMC_ERR_COMM, "amc_comm_free(&d) a second time");

    /* A communicator that is still alive at amc_finalize (checked after it). */
    *leaked = amc_test_dup(world, "leaked");
    amc_test_barrier(*leaked, &c, AMC_TEST_IWAIT);
    amc_test_barrier(world, &c, AMC_TEST_BLOCKING);
}

/* After amc_finalize: everything reports AMC_ERR_NOT_INITIALIZED, nothing crashes. */
static void amc_test_misuse_after_finalize(int *argc, char ***argv, amc_comm_t leaked)
{
    amc_request_t req = AMC_REQUEST_NULL;
    amc_comm_t    c   = AMC_COMM_NULL;
    int           v   = -1, flag = -1;

    (void)amc_initialized(&flag); /* must not crash; its flag is not specified here */
    amc_test_expect(amc_barrier(AMC_COMM_WORLD), AMC_ERR_NOT_INITIALIZED,
                    "amc_barrier(AMC_COMM_WORLD) after amc_finalize");
    amc_test_expect(amc_ibarrier(AMC_COMM_WORLD, &req), AMC_ERR_NOT_INITIALIZED,
                    "amc_ibarrier(AMC_COMM_WORLD) after amc_finalize");
    amc_test_expect(amc_comm_rank(AMC_COMM_WORLD, &v), AMC_ERR_NOT_INITIALIZED,
                    "amc_comm_rank(AMC_COMM_WORLD) after amc_finalize");
    amc_test_expect(amc_comm_dup(AMC_COMM_WORLD, &c), AMC_ERR_NOT_INITIALIZED,
                    "amc_comm_dup(AMC_COMM_WORLD) after amc_finalize");
    amc_test_expect(amc_barrier(leaked), AMC_ERR_NOT_INITIALIZED,
                    "amc_barrier on a communicator left alive at amc_finalize");
    amc_test_expect(amc_comm_free(&leaked), AMC_ERR_NOT_INITIALIZED,
                    "amc_comm_free on a communicator left alive at amc_finalize");
    req = AMC_REQUEST_NULL;
    amc_test_expect(amc_wait(&req), AMC_ERR_NOT_INITIALIZED,
                    "amc_wait(&AMC_REQUEST_NULL) after amc_finalize");
    amc_test_expect(amc_finalize(), AMC_ERR_NOT_INITIALIZED, "a second amc_finalize");
    if (amc_init(argc, argv) == AMC_SUCCESS) {
        amc_test_fail("amc_init after amc_finalize returned AMC_SUCCESS, expected an error");
    }
}

/* A freed communicator handle (a stale copy) is rejected with AMC_ERR_COMM. */
static void amc_test_stale_subtest(amc_comm_t world)
{
    amc_test_ctr_t c;
    amc_comm_t     d, stale;
    amc_request_t  req = AMC_REQUEST_NULL;
    int            v;

    amc_test_ctr_init(&c, "world", 16);
    d     = amc_test_dup(world, "d");
    stale = d;
    amc_test_barrier(d, &c, AMC_TEST_BLOCKING);
    amc_test_free(&d, "d");
    amc_test_expect(amc_barrier(stale), AMC_ERR_COMM, "amc_barrier on a freed communicator");
    amc_test_expect(amc_ibarrier(stale, &req), AMC_ERR_COMM,
                    "amc_ibarrier on a freed communicator");
    amc_test_expect(amc_comm_size(stale, &v), AMC_ERR_COMM,
                    "amc_comm_size on a freed communicator");
    amc_test_expect(amc_comm_free(&stale), AMC_ERR_COMM,
                    "amc_comm_free on a freed communicator");
    amc_test_barrier(world, &c, AMC_TEST_ITEST);
    amc_test_barrier(world, &c, AMC_TEST_BLOCKING);
}

/* ------------------------------------------------------------------ main */

/* Cross-check the job size and rank against what the launcher says, when it says it. */
static void amc_test_check_launcher(void)
{
    static const char *size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", NULL };
    static const char *rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", NULL };
    const char        *s;
    int                i;

    for (i = 0; size_vars[i] != NULL; ++i) {
        s = getenv(size_vars[i]);
        if ((s != NULL) && (*s != '\0') && (atoi(s) != g_size)) {
            amc_test_fatal("amc_init found a job of %d ranks but the launcher says %s=%s",
                           g_size, size_vars[i], s);
        }
    }
    for (i = 0; rank_vars[i] != NULL; ++i) {
        s = getenv(rank_vars[i]);
        if ((s != NULL) && (*s != '\0') && (atoi(s) != g_rank)) {
            amc_test_fatal("amc_init says rank %d but the launcher says %s=%s", g_rank,
                           rank_vars[i], s);
        }
    }
}

static void amc_test_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s SUBTEST SHARED_FILE\n"
            "  SUBTEST: semantics | dup | ibarrier | timeout | misuse | stale\n"
            "  SHARED_FILE: a fresh file (e.g. from mktemp /dev/shm/amc.XXXXXX) mapped by all ranks\n",
            prog);
}

int main(int argc, char **argv)
{
    static const char *subtests[] = { "semantics", "dup", "ibarrier", "timeout", "misuse",
                                      "stale", NULL };
    amc_test_ctr_t     start;
    amc_comm_t         world, leaked = AMC_COMM_NULL;
    atomic_int        *seen;
    int                i, rc, total, known = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) {
        amc_test_usage(argv[0]);
        return 2;
    }
    for (i = 0; subtests[i] != NULL; ++i) {
        known |= (strcmp(argv[1], subtests[i]) == 0);
    }
    if (!known) {
        fprintf(stderr, "unknown sub-test '%s'\n", argv[1]);
        amc_test_usage(argv[0]);
        return 2;
    }
    g_subtest = argv[1];

    if (strcmp(g_subtest, "misuse") == 0) {
        amc_test_misuse_before_init();
    }

    rc = amc_init(&argc, &argv);
    if (rc != AMC_SUCCESS) {
        amc_test_fatal("amc_init returned %s (%d)", amc_test_code_name(rc), rc);
    }
    world = AMC_COMM_WORLD;
    if (world == AMC_COMM_NULL) {
        amc_test_fatal("AMC_COMM_WORLD is AMC_COMM_NULL after amc_init");
    }
    amc_test_must(amc_comm_rank(world, &g_rank), "amc_comm_rank(world)");
    amc_test_must(amc_comm_size(world, &g_size), "amc_comm_size(world)");
    if ((g_size < 1) || (g_rank < 0) || (g_rank >= g_size)) {
        amc_test_fatal("amc_comm_rank/size returned rank %d of %d", g_rank, g_size);
    }
    amc_test_check_launcher();

    /* Layout (same on every rank): failures, seen[N], start barrier, sub-test counters. */
    amc_test_shm_map(argv[2]);
    g_shm_failures = amc_test_shm_alloc(1);
    seen           = amc_test_shm_alloc(g_size);
    atomic_fetch_add(&seen[g_rank], 1);
    amc_test_ctr_init(&start, "world(start)", 1);
    amc_test_barrier(world, &start, AMC_TEST_BLOCKING);
    for (i = 0; i < g_size; ++i) {
        int n = atomic_load(&seen[i]);
        if (n != 1) {
            amc_test_fail("rank %d was reported by %d processes (expected exactly 1)", i, n);
        }
    }

    if (strcmp(g_subtest, "semantics") == 0) {
        amc_test_semantics(world);
    } else if (strcmp(g_subtest, "dup") == 0) {
        amc_test_dup_subtest(world);
    } else if (strcmp(g_subtest, "ibarrier") == 0) {
        amc_test_ibarrier_subtest(world);
    } else if (strcmp(g_subtest, "timeout") == 0) {
        amc_test_timeout_subtest(world);
    } else if (strcmp(g_subtest, "misuse") == 0) {
        amc_test_misuse_subtest(world, &argc, &argv, &leaked);
    } else {
        amc_test_stale_subtest(world);
    }

    /* Publish this rank's failure count; the last barrier orders it before rank 0 reads. */
    {
        amc_test_ctr_t fin;

        atomic_fetch_add(g_shm_failures, g_failures);
        amc_test_ctr_init(&fin, "world(final)", 1);
        amc_test_barrier(world, &fin, AMC_TEST_BLOCKING);
    }

    rc = amc_finalize();
    if (rc != AMC_SUCCESS) {
        amc_test_fail("amc_finalize returned %s (%d), expected AMC_SUCCESS",
                      amc_test_code_name(rc), rc);
    }
    if (strcmp(g_subtest, "misuse") == 0) {
        amc_test_misuse_after_finalize(&argc, &argv, leaked);
    }

    total = atomic_load(g_shm_failures);
    if (g_failures > 0) {
        fprintf(stderr, "FAIL %s rank %d/%d: %d failure(s) on this rank\n", g_subtest, g_rank,
                g_size, g_failures);
    } else if ((g_rank == 0) && (total == 0)) {
        printf("ok %s N=%d\n", g_subtest, g_size);
    }
    fflush(stdout);
    fflush(stderr);
    return (g_failures > 0) ? 1 : 0;
}
