/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Barrier benchmark: amcoll's active-message barrier against
 *   - "layered": the same dissemination algorithm on UCP tag matching, i.e.
 *     the request/matching layers that amcoll does without,
 *   - Open MPI's MPI_Barrier (when configure found mpicc),
 *   - a raw UCX AM ping-pong between ranks 0 and 1, the one-hop floor.
 * One process per rank under mpirun; every method runs in the same job and
 * the methods are interleaved rep by rep, so machine noise hits them alike.
 *
 * Output on rank 0: one "RESULT N=.. method=.. median_us=.." line per method
 * (read by bench/run_barrier.sh) plus a human-readable line.
 */
#include "config.h"

#include <amcoll.h>
#include "am_coll/context/progress.h"
#include "bench/bench_util.h"
#include "transport/pmix_boot.h"

#include <ucp/api/ucp.h>
#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include <errno.h>
#include <limits.h>
#include <sys/resource.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Distinct from the library's key: both publish a worker address in one job. */
#define AMC_BENCH_PMIX_KEY      "amc.bench.wa"
#define AMC_BENCH_AM_ID         0
#define AMC_BENCH_DEF_REPS      15
#define AMC_BENCH_DEF_TARGET_MS 50.0
#define AMC_BENCH_DEF_WARMUP    50
#define AMC_BENCH_DEF_WATCHDOG  60
#define AMC_BENCH_MIN_ITERS     5L
#define AMC_BENCH_MAX_ITERS     1000000L
/* Long enough that timer and scheduling granularity vanish in the estimate. */
#define AMC_BENCH_CALIB_SEC     0.010

/* Layered tag: seq (40 bits) | round (8 bits) | source rank (16 bits). The
 * source is matched, as an MPI library layered on UCP tags does, and the
 * sequence keeps the next barrier's early messages apart from this one's. */
#define AMC_BENCH_TAG_SEQ_SHIFT   24
#define AMC_BENCH_TAG_ROUND_SHIFT 16
#define AMC_BENCH_TAG_SEQ_MASK    ((UINT64_C(1) << 40) - 1)
#define AMC_BENCH_TAG_MAX_RANKS   (1 << 16)
#define AMC_BENCH_TAG_MASK_ALL    (~(ucp_tag_t)0)

enum {
    AMC_BENCH_AMCOLL,
    AMC_BENCH_LAYERED,
    AMC_BENCH_OPENMPI,
    AMC_BENCH_PINGPONG,
    AMC_BENCH_NMETHODS
};

static const char *const amc_bench_method_names[AMC_BENCH_NMETHODS] = {
    "amcoll", "layered", "openmpi", "am_pingpong"
};

static const char *const amc_bench_method_titles[AMC_BENCH_NMETHODS] = {
    "amcoll AM barrier", "layered UCP tag barrier", "Open MPI MPI_Barrier",
    "raw UCX AM ping-pong (one-way)"
};

enum {
    AMC_BENCH_PHASE_STARTUP,
    AMC_BENCH_PHASE_WARMUP,
    AMC_BENCH_PHASE_CALIBRATE,
    AMC_BENCH_PHASE_TIMING,
    AMC_BENCH_PHASE_SEPARATOR,
    AMC_BENCH_PHASE_REDUCE,
    AMC_BENCH_PHASE_TEARDOWN,
    AMC_BENCH_NPHASES
};

static const char *const amc_bench_phase_names[AMC_BENCH_NPHASES] = {
    "startup", "warm-up", "calibration", "timing", "separator amc_barrier",
    "result reduction (layered tag path)", "teardown"
};

typedef struct amc_bench_opts {
    long     iters;      /* > 0: fixed for every method; 0: calibrate per method */
    int      reps;
    double   target_ms;  /* wanted duration of one method's timed block */
    long     warmup;
    unsigned watchdog_s; /* 0 disables */
    unsigned methods;    /* bit per method */
} amc_bench_opts_t;

typedef struct amc_bench {
    int               rank;
    int               size;
    amc_pmix_boot_t  *boot;
    ucp_context_h     ctx;
    ucp_worker_h      worker;
    ucp_ep_h         *eps;
    int               efd;
    amc_wait_policy_t policy;
    ucs_status_t      wait_error; /* the sleep callback cannot return one */
    uint64_t          sleeps;     /* per method, for the human line */
    uint64_t          tag_seq;
    uint64_t          pp_hdr;     /* the AM header must outlive its send (UCX 1.13) */
    uint64_t          pp_sent;
    uint64_t          pp_count;
    uint64_t          pp_last;
    uint64_t          pp_bad;
} amc_bench_t;

/* ------------------------------------------------------------------ watchdog */

/* A hung barrier would otherwise hold mpirun until the outer timeout with no
 * hint of where; the alarm names the rank, phase and method. */
static volatile sig_atomic_t amc_bench_phase_now;
static volatile sig_atomic_t amc_bench_method_now = -1;
static volatile sig_atomic_t amc_bench_rank_now   = -1;
static unsigned              amc_bench_watchdog_s;

static size_t amc_bench_fmt_uint(char *buf, unsigned long v)
{
    char   tmp[24];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    return n;
}

static size_t amc_bench_append(char *buf, size_t at, size_t cap, const char *s)
{
    while ((*s != '\0') && (at + 1 < cap)) {
        buf[at++] = *s++;
    }
    return at;
}

static void amc_bench_watchdog(int sig)
{
    char   msg[256];
    size_t n = 0;
    int    phase  = amc_bench_phase_now;
    int    method = amc_bench_method_now;
    int    rank   = amc_bench_rank_now;

    (void)sig;
    /* Only async-signal-safe calls here: no stdio. */
    n = amc_bench_append(msg, n, sizeof(msg), "barrier_bench: rank ");
    if (rank >= 0) {
        n += amc_bench_fmt_uint(msg + n, (unsigned long)rank);
    } else {
        n = amc_bench_append(msg, n, sizeof(msg), "?");
    }
    n = amc_bench_append(msg, n, sizeof(msg), ": watchdog: no progress for ");
    n += amc_bench_fmt_uint(msg + n, amc_bench_watchdog_s);
    n = amc_bench_append(msg, n, sizeof(msg), " s in ");
    n = amc_bench_append(msg, n, sizeof(msg), amc_bench_phase_names[phase]);
    if ((method >= 0) && (method < AMC_BENCH_NMETHODS)) {
        n = amc_bench_append(msg, n, sizeof(msg), " of ");
        n = amc_bench_append(msg, n, sizeof(msg), amc_bench_method_names[method]);
    }
    n = amc_bench_append(msg, n, sizeof(msg),
                         " (hang?); raise it with -W or AMC_BENCH_WATCHDOG\n");
    if (write(STDERR_FILENO, msg, n) < 0) {
        /* nothing left to report it to */
    }
    _exit(3);
}

static void amc_bench_set_phase(int phase, int method)
{
    amc_bench_phase_now  = phase;
    amc_bench_method_now = method;
    if (amc_bench_watchdog_s > 0) {
        alarm(amc_bench_watchdog_s);
    }
}

static int amc_bench_watchdog_install(unsigned seconds)
{
    struct sigaction sa;

    amc_bench_watchdog_s = seconds;
    if (seconds == 0) {
        return 0;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = amc_bench_watchdog;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        fprintf(stderr, "barrier_bench: sigaction(SIGALRM): %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ helpers */

/* One clock for all methods, owned by none of the libraries under test. */
static double amc_bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The layered baseline must wait exactly as amcoll does: it takes the policy
 * the library resolved (defaults, AMC_* overrides, AMC_SPIN_COUNT=auto). */
static int amc_bench_policy(amc_wait_policy_t *policy)
{
    int rc = amc_wait_policy_current(policy);

    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "barrier_bench: amc_wait_policy_current: %s\n", amc_strerror(rc));
        return -1;
    }
    return 0;
}

/* Options are parsed before MPI and PMIx start, so the rank comes from the
 * launcher's environment; only rank 0 (or a lone process) explains a bad
 * command line instead of every rank at once. */
static int amc_bench_quiet_rank(void)
{
    const char *rank = getenv("PMIX_RANK");

    return (rank != NULL) && (strcmp(rank, "0") != 0);
}

static int amc_bench_opt_quiet;

static int amc_bench_parse_methods(const char *s, unsigned *mask)
{
    char *copy = strdup(s), *tok, *save = NULL;
    int   m, rc = 0;

    if (copy == NULL) {
        bu_opt_error("out of memory");
        return -1;
    }
    *mask = 0;
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
            if ((strcmp(tok, amc_bench_method_names[m]) == 0) ||
                ((m == AMC_BENCH_PINGPONG) && (strcmp(tok, "pingpong") == 0))) {
                break;
            }
        }
        if (m == AMC_BENCH_NMETHODS) {
            bu_opt_error("unknown method '%s' (amcoll, layered, openmpi, am_pingpong)",
                                tok);
            rc = -1;
            break;
        }
        *mask |= 1u << m;
    }
    free(copy);
    return rc;
}

static void amc_bench_usage(FILE *f)
{
    if (amc_bench_opt_quiet) {
        return;
    }
    fprintf(f,
        "usage: mpirun -np N barrier_bench [-i iters] [-r reps] [-t target_ms]\n"
        "                                  [-w warmup] [-W watchdog_s] [-m methods]\n"
        "  -i  barriers per timed block, all methods (default: calibrated per method\n"
        "      so one block lasts about target_ms)          env AMC_BENCH_ITERS\n"
        "  -r  repetitions; the median over them is reported (default %d)\n"
        "                                                   env AMC_BENCH_REPS\n"
        "  -t  target duration of one timed block in ms (default %.0f)\n"
        "                                                   env AMC_BENCH_TARGET_MS\n"
        "  -w  warm-up operations per method (default %d)   env AMC_BENCH_WARMUP\n"
        "  -W  abort a rank stuck this long in one phase, 0 = never (default %d)\n"
        "                                                   env AMC_BENCH_WATCHDOG\n"
        "  -m  comma list of amcoll,layered,openmpi,am_pingpong (default all)\n"
        "                                                   env AMC_BENCH_METHODS\n",
        AMC_BENCH_DEF_REPS, AMC_BENCH_DEF_TARGET_MS, AMC_BENCH_DEF_WARMUP,
        AMC_BENCH_DEF_WATCHDOG);
}

/* Flags win over the environment, which wins over the defaults.
 * Returns 0 to run, 1 after -h, -1 on a bad argument. */
static int amc_bench_parse_opts(int argc, char **argv, amc_bench_opts_t *o)
{
    const char *env;
    long        v;
    int         c;

    amc_bench_opt_quiet = amc_bench_quiet_rank();
    bu_opt_quiet        = amc_bench_opt_quiet; /* bu_opt_error's */
    opterr              = 0; /* getopt's own message would repeat ours */

    o->iters      = 0;
    o->reps       = AMC_BENCH_DEF_REPS;
    o->target_ms  = AMC_BENCH_DEF_TARGET_MS;
    o->warmup     = AMC_BENCH_DEF_WARMUP;
    o->watchdog_s = AMC_BENCH_DEF_WATCHDOG;
    o->methods    = (1u << AMC_BENCH_NMETHODS) - 1;

    if ((env = getenv("AMC_BENCH_ITERS")) != NULL && (*env != '\0')) {
        if (bu_parse_long("AMC_BENCH_ITERS", env, 1, AMC_BENCH_MAX_ITERS, &v) != 0) {
            return -1;
        }
        o->iters = v;
    }
    if ((env = getenv("AMC_BENCH_REPS")) != NULL && (*env != '\0')) {
        if (bu_parse_long("AMC_BENCH_REPS", env, 1, 10000, &v) != 0) {
            return -1;
        }
        o->reps = (int)v;
    }
    if ((env = getenv("AMC_BENCH_TARGET_MS")) != NULL && (*env != '\0')) {
        if (bu_parse_long("AMC_BENCH_TARGET_MS", env, 1, 600000, &v) != 0) {
            return -1;
        }
        o->target_ms = (double)v;
    }
    if ((env = getenv("AMC_BENCH_WARMUP")) != NULL && (*env != '\0')) {
        if (bu_parse_long("AMC_BENCH_WARMUP", env, 0, AMC_BENCH_MAX_ITERS, &v) != 0) {
            return -1;
        }
        o->warmup = v;
    }
    if ((env = getenv("AMC_BENCH_WATCHDOG")) != NULL && (*env != '\0')) {
        if (bu_parse_long("AMC_BENCH_WATCHDOG", env, 0, 86400, &v) != 0) {
            return -1;
        }
        o->watchdog_s = (unsigned)v;
    }
    if ((env = getenv("AMC_BENCH_METHODS")) != NULL && (*env != '\0')) {
        if (amc_bench_parse_methods(env, &o->methods) != 0) {
            return -1;
        }
    }

    while ((c = getopt(argc, argv, "i:r:t:w:W:m:h")) != -1) {
        switch (c) {
        case 'i':
            if (bu_parse_long("-i", optarg, 1, AMC_BENCH_MAX_ITERS, &v) != 0) {
                return -1;
            }
            o->iters = v;
            break;
        case 'r':
            if (bu_parse_long("-r", optarg, 1, 10000, &v) != 0) {
                return -1;
            }
            o->reps = (int)v;
            break;
        case 't':
            if (bu_parse_long("-t", optarg, 1, 600000, &v) != 0) {
                return -1;
            }
            o->target_ms = (double)v;
            break;
        case 'w':
            if (bu_parse_long("-w", optarg, 0, AMC_BENCH_MAX_ITERS, &v) != 0) {
                return -1;
            }
            o->warmup = v;
            break;
        case 'W':
            if (bu_parse_long("-W", optarg, 0, 86400, &v) != 0) {
                return -1;
            }
            o->watchdog_s = (unsigned)v;
            break;
        case 'm':
            if (amc_bench_parse_methods(optarg, &o->methods) != 0) {
                return -1;
            }
            break;
        case 'h':
            amc_bench_usage(stdout);
            return 1;
        default:
            bu_opt_error("unknown option -%c, or it lacks its value", optopt);
            amc_bench_usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        bu_opt_error("unexpected argument '%s'", argv[optind]);
        amc_bench_usage(stderr);
        return -1;
    }
#ifndef HAVE_MPI
    o->methods &= ~(1u << AMC_BENCH_OPENMPI);
#endif
    return 0;
}

/* ------------------------------------------------------------------ waiting */

/* The sleep half of the library's wait policy, on our own worker: arm, then
 * block on the event fd (notes §3). */
static void amc_bench_sleep(void *arg, int timeout_ms)
{
    amc_bench_t  *b = arg;
    struct pollfd pfd;
    ucs_status_t  st;

    st = ucp_worker_arm(b->worker);
    if (st == UCS_ERR_BUSY) {
        return; /* events already pending: progress instead of sleeping */
    }
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_worker_arm: %s\n",
                b->rank, ucs_status_string(st));
        b->wait_error = st;
        return;
    }
    pfd.fd      = b->efd;
    pfd.events  = POLLIN;
    pfd.revents = 0;
    if ((poll(&pfd, 1, timeout_ms) < 0) && (errno != EINTR)) {
        fprintf(stderr, "barrier_bench: rank %d: poll(worker efd): %s\n",
                b->rank, strerror(errno));
        b->wait_error = UCS_ERR_IO_ERROR;
    }
}

/* Waits, under the library's spin/yield/sleep policy, until every non-NULL
 * request in reqs[] has completed and, if counter is given, *counter has
 * reached target. Completed requests are freed and set to NULL. */
static int amc_bench_wait(amc_bench_t *b, void **reqs, int nreqs,
                          const uint64_t *counter, uint64_t target, const char *what)
{
    amc_waiter_t waiter;
    ucs_status_t first_err = UCS_OK;
    unsigned     progressed;
    int          i, pending;

    amc_waiter_init(&waiter, &b->policy);
    for (;;) {
        pending = 0;
        for (i = 0; i < nreqs; i++) {
            ucs_status_t st;

            if (reqs[i] == NULL) {
                continue;
            }
            st = ucp_request_check_status(reqs[i]);
            if (st == UCS_INPROGRESS) {
                pending = 1;
                continue;
            }
            if ((st != UCS_OK) && (first_err == UCS_OK)) {
                first_err = st;
            }
            ucp_request_free(reqs[i]);
            reqs[i] = NULL;
        }
        if (!pending && ((counter == NULL) || (*counter >= target))) {
            break;
        }
        progressed = ucp_worker_progress(b->worker);
        amc_waiter_pass(&waiter, progressed != 0, amc_bench_sleep, b);
        if (b->wait_error != UCS_OK) {
            fprintf(stderr, "barrier_bench: rank %d: waiting for %s failed\n", b->rank, what);
            return -1;
        }
    }
    b->sleeps += waiter.sleeps;
    if (first_err != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: %s completed with error: %s\n",
                b->rank, what, ucs_status_string(first_err));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ layered */

static ucp_tag_t amc_bench_tag(uint64_t seq, unsigned round, int src)
{
    return ((seq & AMC_BENCH_TAG_SEQ_MASK) << AMC_BENCH_TAG_SEQ_SHIFT) |
           ((ucp_tag_t)round << AMC_BENCH_TAG_ROUND_SHIFT) | (ucp_tag_t)src;
}

/* Dissemination over UCP tags: round r sends to rank+2^r, receives from
 * rank-2^r. With val == NULL the messages are empty (the barrier); otherwise
 * each carries a double and the ranks end with the maximum, which is correct
 * despite the overlapping coverage because max is idempotent. */
static int amc_bench_tag_dissem(amc_bench_t *b, double *val)
{
    uint64_t seq     = b->tag_seq++;
    size_t   len     = (val != NULL) ? sizeof(double) : 0;
    unsigned round   = 0;
    int      dist;

    for (dist = 1; dist < b->size; dist <<= 1, round++) {
        int                 to   = (b->rank + dist) % b->size;
        int                 from = (b->rank - dist + b->size) % b->size;
        double              in   = 0.0;
        double              out  = (val != NULL) ? *val : 0.0;
        ucp_request_param_t rparam, sparam;
        void               *reqs[2];

        memset(&rparam, 0, sizeof(rparam));
        memset(&sparam, 0, sizeof(sparam));
        /* Post the receive first so an arriving message skips the
         * unexpected queue when it can. */
        reqs[0] = ucp_tag_recv_nbx(b->worker, &in, len, amc_bench_tag(seq, round, from),
                                   AMC_BENCH_TAG_MASK_ALL, &rparam);
        if (UCS_PTR_IS_ERR(reqs[0])) {
            fprintf(stderr, "barrier_bench: rank %d: ucp_tag_recv_nbx (seq %llu round %u): %s\n",
                    b->rank, (unsigned long long)seq, round,
                    ucs_status_string(UCS_PTR_STATUS(reqs[0])));
            return -1;
        }
        reqs[1] = ucp_tag_send_nbx(b->eps[to], &out, len, amc_bench_tag(seq, round, b->rank),
                                   &sparam);
        if (UCS_PTR_IS_ERR(reqs[1])) {
            fprintf(stderr, "barrier_bench: rank %d: ucp_tag_send_nbx to %d (seq %llu round %u): %s\n",
                    b->rank, to, (unsigned long long)seq, round,
                    ucs_status_string(UCS_PTR_STATUS(reqs[1])));
            /* The receive stays posted on a worker we are about to abandon. */
            return -1;
        }
        if (amc_bench_wait(b, reqs, 2, NULL, 0, "layered tag round") != 0) {
            return -1;
        }
        if ((val != NULL) && (in > *val)) {
            *val = in;
        }
    }
    return 0;
}

static int amc_bench_allmax(amc_bench_t *b, double *val)
{
    int prev_phase = amc_bench_phase_now, prev_method = amc_bench_method_now, rc;

    amc_bench_set_phase(AMC_BENCH_PHASE_REDUCE, -1);
    rc = amc_bench_tag_dissem(b, val);
    amc_bench_set_phase(prev_phase, prev_method);
    return rc;
}

/* ------------------------------------------------------------------ ping-pong */

static ucs_status_t amc_bench_am_cb(void *arg, const void *header, size_t header_length,
                                    void *data, size_t length,
                                    const ucp_am_recv_param_t *param)
{
    amc_bench_t *b = arg;
    uint64_t     seq;

    (void)data;
    (void)param;
    if ((header_length != sizeof(seq)) || (length != 0)) {
        b->pp_bad++;
        return UCS_OK;
    }
    memcpy(&seq, header, sizeof(seq)); /* the header is valid only during the call */
    b->pp_last = seq;
    b->pp_count++;
    return UCS_OK;
}

static int amc_bench_pp_send(amc_bench_t *b, int peer, uint64_t seq, void **req)
{
    ucp_request_param_t param;
    void               *r;

    memset(&param, 0, sizeof(param));
    b->pp_hdr = seq;
    r = ucp_am_send_nbx(b->eps[peer], AMC_BENCH_AM_ID, &b->pp_hdr, sizeof(b->pp_hdr),
                        NULL, 0, &param);
    if (UCS_PTR_IS_ERR(r)) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_am_send_nbx to %d: %s\n",
                b->rank, peer, ucs_status_string(UCS_PTR_STATUS(r)));
        return -1;
    }
    *req = r;
    return 0;
}

/* iters round trips, rank 0 <-> rank 1; other ranks return at once and wait
 * in the next separator barrier. */
static int amc_bench_pingpong(amc_bench_t *b, long iters)
{
    void *req = NULL;
    long  i;

    if ((b->size < 2) || (b->rank > 1)) {
        return 0;
    }
    for (i = 0; i < iters; i++) {
        if (b->rank == 0) {
            uint64_t seq = ++b->pp_sent;

            if (amc_bench_pp_send(b, 1, seq, &req) != 0) {
                return -1;
            }
            if (amc_bench_wait(b, &req, 1, &b->pp_count, seq, "AM ping") != 0) {
                return -1;
            }
            if (b->pp_last != seq) {
                fprintf(stderr, "barrier_bench: rank 0: ping-pong reply carries seq %llu, "
                        "expected %llu\n", (unsigned long long)b->pp_last,
                        (unsigned long long)seq);
                return -1;
            }
        } else {
            uint64_t expect = b->pp_sent + 1;

            if (amc_bench_wait(b, NULL, 0, &b->pp_count, expect, "AM ping") != 0) {
                return -1;
            }
            if (b->pp_last != expect) {
                fprintf(stderr, "barrier_bench: rank 1: ping carries seq %llu, expected %llu\n",
                        (unsigned long long)b->pp_last, (unsigned long long)expect);
                return -1;
            }
            b->pp_sent = expect;
            if (amc_bench_pp_send(b, 0, expect, &req) != 0) {
                return -1;
            }
            /* The header slot is reused by the next reply. */
            if (amc_bench_wait(b, &req, 1, NULL, 0, "AM pong") != 0) {
                return -1;
            }
        }
    }
    if (b->pp_bad != 0) {
        fprintf(stderr, "barrier_bench: rank %d: %llu malformed ping-pong messages\n",
                b->rank, (unsigned long long)b->pp_bad);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ UCX setup */

static int amc_bench_progress_cb(void *arg)
{
    amc_bench_t *b = arg;

    ucp_worker_progress(b->worker);
    return 0;
}

static int amc_bench_ucx_init(amc_bench_t *b)
{
    ucp_config_t          *config = NULL;
    ucp_params_t           params;
    ucp_worker_params_t    wparams;
    ucp_am_handler_param_t hparams;
    ucp_ep_params_t        eparams;
    ucp_address_t         *addr   = NULL;
    size_t                 addr_len;
    void                 **addrs  = NULL;
    size_t                *lens   = NULL;
    ucs_status_t           st;
    int                    rc, i;

    st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_config_read: %s\n",
                b->rank, ucs_status_string(st));
        goto err;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask        = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features          = UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.estimated_num_eps = (size_t)b->size;
    st = ucp_init(&params, config, &b->ctx);
    ucp_config_release(config);
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_init: %s\n", b->rank, ucs_status_string(st));
        goto err;
    }

    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(b->ctx, &wparams, &b->worker);
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_worker_create: %s\n",
                b->rank, ucs_status_string(st));
        goto err_cleanup;
    }

    /* Before the address is published: a peer may send as soon as it has it. */
    memset(&hparams, 0, sizeof(hparams));
    hparams.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                         UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hparams.id         = AMC_BENCH_AM_ID;
    hparams.flags      = 0;
    hparams.cb         = amc_bench_am_cb;
    hparams.arg        = b;
    st = ucp_worker_set_am_recv_handler(b->worker, &hparams);
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_worker_set_am_recv_handler: %s\n",
                b->rank, ucs_status_string(st));
        goto err_worker;
    }

    st = ucp_worker_get_efd(b->worker, &b->efd);
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_worker_get_efd: %s\n",
                b->rank, ucs_status_string(st));
        goto err_worker;
    }

    st = ucp_worker_get_address(b->worker, &addr, &addr_len);
    if (st != UCS_OK) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_worker_get_address: %s\n",
                b->rank, ucs_status_string(st));
        goto err_worker;
    }
    rc = amc_pmix_boot_exchange(b->boot, AMC_BENCH_PMIX_KEY, addr, addr_len, &addrs, &lens);
    ucp_worker_release_address(b->worker, addr);
    if (rc != 0) {
        fprintf(stderr, "barrier_bench: rank %d: amc_pmix_boot_exchange(%s): %s\n",
                b->rank, AMC_BENCH_PMIX_KEY, amc_strerror(rc));
        goto err_worker;
    }

    b->eps = calloc((size_t)b->size, sizeof(*b->eps));
    if (b->eps == NULL) {
        fprintf(stderr, "barrier_bench: rank %d: out of memory for %d endpoints\n",
                b->rank, b->size);
        goto err_addrs;
    }
    for (i = 0; i < b->size; i++) {
        memset(&eparams, 0, sizeof(eparams));
        eparams.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                  UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
        eparams.address         = addrs[i];
        /* PEER mode would move shared-memory traffic to tcp (notes §1). */
        eparams.err_mode        = UCP_ERR_HANDLING_MODE_NONE;
        st = ucp_ep_create(b->worker, &eparams, &b->eps[i]);
        if (st != UCS_OK) {
            fprintf(stderr, "barrier_bench: rank %d: ucp_ep_create to rank %d: %s\n",
                    b->rank, i, ucs_status_string(st));
            goto err_eps;
        }
    }
    amc_pmix_boot_free_addrs(b->boot, addrs, lens);
    return 0;

err_eps:
    /* Never used, and peers may be gone: nothing to flush. */
    for (i = 0; i < b->size; i++) {
        if (b->eps[i] != NULL) {
            ucp_ep_destroy(b->eps[i]);
        }
    }
    free(b->eps);
    b->eps = NULL;
err_addrs:
    amc_pmix_boot_free_addrs(b->boot, addrs, lens);
err_worker:
    ucp_worker_destroy(b->worker);
    b->worker = NULL;
err_cleanup:
    ucp_cleanup(b->ctx);
    b->ctx = NULL;
err:
    return -1;
}

/* Collective: every rank must call it. The order (flush, fence, close, fence)
 * keeps a peer from tearing down while our last messages are in flight. */
static int amc_bench_ucx_fini(amc_bench_t *b)
{
    ucp_request_param_t param;
    void               *req;
    int                 rc = 0, i;

    memset(&param, 0, sizeof(param));
    req = ucp_worker_flush_nbx(b->worker, &param);
    if (UCS_PTR_IS_ERR(req)) {
        fprintf(stderr, "barrier_bench: rank %d: ucp_worker_flush_nbx: %s\n",
                b->rank, ucs_status_string(UCS_PTR_STATUS(req)));
        rc = -1;
    } else if (amc_bench_wait(b, &req, 1, NULL, 0, "worker flush") != 0) {
        rc = -1;
    }

    if (amc_pmix_boot_fence(b->boot, amc_bench_progress_cb, b, 0.0) != 0) {
        fprintf(stderr, "barrier_bench: rank %d: amc_pmix_boot_fence before closing endpoints failed\n",
                b->rank);
        rc = -1;
    }

    for (i = 0; i < b->size; i++) {
        memset(&param, 0, sizeof(param));
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = 0; /* flush; FORCE is refused on NONE endpoints */
        req = ucp_ep_close_nbx(b->eps[i], &param);
        if (UCS_PTR_IS_ERR(req)) {
            fprintf(stderr, "barrier_bench: rank %d: ucp_ep_close_nbx to rank %d: %s\n",
                    b->rank, i, ucs_status_string(UCS_PTR_STATUS(req)));
            rc = -1;
        } else if (amc_bench_wait(b, &req, 1, NULL, 0, "endpoint close") != 0) {
            rc = -1;
        }
    }
    free(b->eps);
    b->eps = NULL;

    if (amc_pmix_boot_fence(b->boot, amc_bench_progress_cb, b, 0.0) != 0) {
        fprintf(stderr, "barrier_bench: rank %d: amc_pmix_boot_fence after closing endpoints failed\n",
                b->rank);
        rc = -1;
    }
    ucp_worker_destroy(b->worker);
    b->worker = NULL;
    ucp_cleanup(b->ctx);
    b->ctx = NULL;
    return rc;
}

/* ------------------------------------------------------------------ methods */

static int amc_bench_separator(amc_bench_t *b)
{
    int prev_phase = amc_bench_phase_now, prev_method = amc_bench_method_now, rc;

    amc_bench_set_phase(AMC_BENCH_PHASE_SEPARATOR, -1);
    rc = amc_barrier(AMC_COMM_WORLD);
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "barrier_bench: rank %d: separator amc_barrier: %s\n",
                b->rank, amc_strerror(rc));
        return -1;
    }
    amc_bench_set_phase(prev_phase, prev_method);
    return 0;
}

/* This process's user-space CPU time, seconds. The kernel's share is mostly
 * sched_yield and context switches, the same for every method; what the
 * software layers cost shows in user time. */
static double amc_bench_cpu_now(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec;
}

/* Runs iters operations of one method; *elapsed is this rank's wall time,
 * *cpu (if not NULL) the CPU time it burnt meanwhile. When ranks share cores
 * the wall time is mostly the scheduler's; the CPU time is what the software
 * layers themselves cost. */
static int amc_bench_run_cpu(amc_bench_t *b, int method, long iters, double *elapsed,
                             double *cpu)
{
    double t0 = amc_bench_now(), c0 = amc_bench_cpu_now();
    long   i;
    int    rc;

    switch (method) {
    case AMC_BENCH_AMCOLL:
        for (i = 0; i < iters; i++) {
            rc = amc_barrier(AMC_COMM_WORLD);
            if (rc != AMC_SUCCESS) {
                fprintf(stderr, "barrier_bench: rank %d: amc_barrier #%ld: %s\n",
                        b->rank, i, amc_strerror(rc));
                return -1;
            }
        }
        break;
    case AMC_BENCH_LAYERED:
        for (i = 0; i < iters; i++) {
            if (amc_bench_tag_dissem(b, NULL) != 0) {
                return -1;
            }
        }
        break;
    case AMC_BENCH_OPENMPI:
#ifdef HAVE_MPI
        for (i = 0; i < iters; i++) {
            rc = MPI_Barrier(MPI_COMM_WORLD);
            if (rc != MPI_SUCCESS) {
                fprintf(stderr, "barrier_bench: rank %d: MPI_Barrier #%ld failed (%d)\n",
                        b->rank, i, rc);
                return -1;
            }
        }
        break;
#else
        fprintf(stderr, "barrier_bench: built without MPI\n");
        return -1;
#endif
    case AMC_BENCH_PINGPONG:
        if (amc_bench_pingpong(b, iters) != 0) {
            return -1;
        }
        break;
    default:
        return -1;
    }
    *elapsed = amc_bench_now() - t0;
    if (cpu != NULL) {
        *cpu = amc_bench_cpu_now() - c0;
    }
    return 0;
}

static int amc_bench_run(amc_bench_t *b, int method, long iters, double *elapsed)
{
    return amc_bench_run_cpu(b, method, iters, elapsed, NULL);
}

/* Seconds per reported unit: one barrier, or half a round trip. */
static double amc_bench_per_op(int method, long iters, double elapsed)
{
    return elapsed / (double)iters / ((method == AMC_BENCH_PINGPONG) ? 2.0 : 1.0);
}

/* Doubles the count until the slowest rank needs AMC_BENCH_CALIB_SEC, then
 * scales to the target. Every rank ends with the same count because the
 * decision is taken on the all-rank maximum. */
static int amc_bench_calibrate(amc_bench_t *b, int method, const amc_bench_opts_t *o,
                               long *iters_p)
{
    long   k = 1, iters;
    double el, per_iter;

    amc_bench_set_phase(AMC_BENCH_PHASE_CALIBRATE, method);
    for (;;) {
        if ((amc_bench_separator(b) != 0) || (amc_bench_run(b, method, k, &el) != 0) ||
            (amc_bench_allmax(b, &el) != 0)) {
            return -1;
        }
        if ((el >= AMC_BENCH_CALIB_SEC) || (k >= AMC_BENCH_MAX_ITERS)) {
            break;
        }
        k *= 2;
    }
    per_iter = el / (double)k;
    iters    = (long)(o->target_ms * 1e-3 / per_iter);
    if (iters < AMC_BENCH_MIN_ITERS) {
        iters = AMC_BENCH_MIN_ITERS;
    }
    if (iters > AMC_BENCH_MAX_ITERS) {
        iters = AMC_BENCH_MAX_ITERS;
    }
    *iters_p = iters;
    return 0;
}

/* ------------------------------------------------------------------ statistics */

/* bu_stats (bench_util.c): median, quartiles and range of the samples. */

/* ------------------------------------------------------------------ driver */

static int amc_bench_enabled(const amc_bench_t *b, const amc_bench_opts_t *o, int method)
{
    if (!(o->methods & (1u << method))) {
        return 0;
    }
    /* A ping-pong needs two ranks. */
    return (method != AMC_BENCH_PINGPONG) || (b->size >= 2);
}

static int amc_bench_main(amc_bench_t *b, const amc_bench_opts_t *o)
{
    long              iters[AMC_BENCH_NMETHODS] = {0};
    uint64_t          sleeps[AMC_BENCH_NMETHODS] = {0};
    double           *samples[AMC_BENCH_NMETHODS] = {NULL};
    double           *cpu_samples[AMC_BENCH_NMETHODS] = {NULL};
    bu_stats_t        st[AMC_BENCH_NMETHODS], cpu_st[AMC_BENCH_NMETHODS];
    int               have[AMC_BENCH_NMETHODS] = {0};
    int               m, j, rep, rc = -1;

    for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
        if (!amc_bench_enabled(b, o, m)) {
            continue;
        }
        samples[m]     = calloc((size_t)o->reps, sizeof(double));
        cpu_samples[m] = calloc((size_t)o->reps, sizeof(double));
        if ((samples[m] == NULL) || (cpu_samples[m] == NULL)) {
            fprintf(stderr, "barrier_bench: rank %d: out of memory\n", b->rank);
            goto out;
        }
    }

    /* First contact is slow (endpoint wire-up, page faults, Open MPI's lazy
     * connections): keep it out of the calibration and the samples. */
    for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
        double el;

        if (!amc_bench_enabled(b, o, m) || (o->warmup == 0)) {
            continue;
        }
        amc_bench_set_phase(AMC_BENCH_PHASE_WARMUP, m);
        if ((amc_bench_separator(b) != 0) || (amc_bench_run(b, m, o->warmup, &el) != 0)) {
            goto out;
        }
    }

    for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
        if (!amc_bench_enabled(b, o, m)) {
            continue;
        }
        if (o->iters > 0) {
            iters[m] = o->iters;
        } else if (amc_bench_calibrate(b, m, o, &iters[m]) != 0) {
            goto out;
        }
    }

    if (b->rank == 0) {
        printf("# barrier_bench N=%d reps=%d target_ms=%.0f warmup=%ld mpi=%s "
               "wait_policy(spin=%u yield_us=%u sleep_ms=%u)\n",
               b->size, o->reps, o->target_ms, o->warmup,
#ifdef HAVE_MPI
               "yes",
#else
               "no",
#endif
               b->policy.spin_count, b->policy.yield_usec, b->policy.sleep_msec);
        printf("# iters per timed block:");
        for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
            if (amc_bench_enabled(b, o, m)) {
                printf(" %s=%ld", amc_bench_method_names[m], iters[m]);
            }
        }
        printf("\n");
        fflush(stdout);
    }

    for (rep = 0; rep < o->reps; rep++) {
        /* Rotate the order so no method always follows the same one. */
        for (j = 0; j < AMC_BENCH_NMETHODS; j++) {
            double   el, per, cpu;
            uint64_t sleeps0;

            m = (rep + j) % AMC_BENCH_NMETHODS;
            if (!amc_bench_enabled(b, o, m)) {
                continue;
            }
            if (amc_bench_separator(b) != 0) {
                goto out;
            }
            amc_bench_set_phase(AMC_BENCH_PHASE_TIMING, m);
            sleeps0 = b->sleeps;
            if (amc_bench_run_cpu(b, m, iters[m], &el, &cpu) != 0) {
                goto out;
            }
            sleeps[m] += b->sleeps - sleeps0;
            per = amc_bench_per_op(m, iters[m], el);
            cpu = amc_bench_per_op(m, iters[m], cpu);
            /* The barrier ends when the slowest rank leaves it; CPU is that
             * of the busiest rank. */
            if ((amc_bench_allmax(b, &per) != 0) || (amc_bench_allmax(b, &cpu) != 0)) {
                goto out;
            }
            samples[m][rep]     = per;
            cpu_samples[m][rep] = cpu;
        }
    }

    if (b->rank == 0) {
        for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
            if (!amc_bench_enabled(b, o, m)) {
                continue;
            }
            bu_stats(samples[m], o->reps, &st[m]);
            bu_stats(cpu_samples[m], o->reps, &cpu_st[m]);
            have[m] = 1;
            printf("RESULT N=%d method=%s median_us=%.3f q1_us=%.3f q3_us=%.3f "
                   "min_us=%.3f max_us=%.3f cpu_us=%.3f iters=%ld reps=%d\n",
                   b->size, amc_bench_method_names[m], st[m].median * 1e6, st[m].q1 * 1e6,
                   st[m].q3 * 1e6, st[m].min * 1e6, st[m].max * 1e6, cpu_st[m].median * 1e6,
                   iters[m], o->reps);
        }
        for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
            if (!have[m]) {
                continue;
            }
            printf("  N=%-3d %-31s median %10.3f us   IQR [%.3f, %.3f]   range [%.3f, %.3f]"
                   "   user CPU %.3f us",
                   b->size, amc_bench_method_titles[m], st[m].median * 1e6, st[m].q1 * 1e6,
                   st[m].q3 * 1e6, st[m].min * 1e6, st[m].max * 1e6, cpu_st[m].median * 1e6);
            if (m == AMC_BENCH_LAYERED || m == AMC_BENCH_PINGPONG) {
                /* Only the bench's own waits are visible; amcoll's are inside it. */
                printf("   rank0 sleeps/op %.3f",
                       (double)sleeps[m] / ((double)iters[m] * (double)o->reps));
            }
            printf("\n");
        }
        if (!amc_bench_enabled(b, o, AMC_BENCH_OPENMPI)) {
            printf("  N=%-3d %-31s not measured (%s)\n", b->size,
                   amc_bench_method_titles[AMC_BENCH_OPENMPI],
#ifdef HAVE_MPI
                   "deselected with -m"
#else
                   "configure found no mpicc"
#endif
                   );
        }
        if (have[AMC_BENCH_AMCOLL] && have[AMC_BENCH_LAYERED]) {
            printf("  N=%-3d amcoll / layered  = %.3f (target <= 0.7)\n", b->size,
                   st[AMC_BENCH_AMCOLL].median / st[AMC_BENCH_LAYERED].median);
        }
        if (have[AMC_BENCH_AMCOLL] && have[AMC_BENCH_OPENMPI]) {
            printf("  N=%-3d amcoll / Open MPI = %.3f (target <= %.1f)\n", b->size,
                   st[AMC_BENCH_AMCOLL].median / st[AMC_BENCH_OPENMPI].median,
                   (b->size <= 2) ? 0.5 : 0.7);
        }
        fflush(stdout);
    }
    rc = 0;

out:
    for (m = 0; m < AMC_BENCH_NMETHODS; m++) {
        free(samples[m]);
        free(cpu_samples[m]);
    }
    return rc;
}

int main(int argc, char **argv)
{
    amc_bench_opts_t opts;
    amc_bench_t      b;
    int              rc, amc_rank = -1, amc_size = -1;

    bu_prog = "barrier_bench";
    memset(&b, 0, sizeof(b));
    rc = amc_bench_parse_opts(argc, argv, &opts);
    if (rc != 0) {
        return (rc > 0) ? 0 : 2;
    }
    if (amc_bench_watchdog_install(opts.watchdog_s) != 0) {
        return 1;
    }
    amc_bench_set_phase(AMC_BENCH_PHASE_STARTUP, -1);

#ifdef HAVE_MPI
    rc = MPI_Init(&argc, &argv);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "barrier_bench: MPI_Init failed (%d)\n", rc);
        return 1;
    }
#endif
    rc = amc_init(&argc, &argv);
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "barrier_bench: amc_init: %s\n", amc_strerror(rc));
        bu_abort(1);
    }
    if (((rc = amc_comm_rank(AMC_COMM_WORLD, &amc_rank)) != AMC_SUCCESS) ||
        ((rc = amc_comm_size(AMC_COMM_WORLD, &amc_size)) != AMC_SUCCESS)) {
        fprintf(stderr, "barrier_bench: amc_comm_rank/size(AMC_COMM_WORLD): %s\n",
                amc_strerror(rc));
        goto fail_amc;
    }
    amc_bench_rank_now = amc_rank;

    rc = amc_pmix_boot_init(&b.boot);
    if (rc != 0) {
        fprintf(stderr, "barrier_bench: rank %d: amc_pmix_boot_init: %s\n",
                amc_rank, amc_strerror(rc));
        goto fail_amc;
    }
    b.rank = amc_pmix_boot_rank(b.boot);
    b.size = amc_pmix_boot_size(b.boot);
    /* The methods are only comparable if they all see the same job. */
    if ((b.rank != amc_rank) || (b.size != amc_size)) {
        fprintf(stderr, "barrier_bench: PMIx says rank %d of %d, amcoll says %d of %d\n",
                b.rank, b.size, amc_rank, amc_size);
        goto fail_boot;
    }
#ifdef HAVE_MPI
    {
        int mpi_rank, mpi_size;

        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
        if ((mpi_rank != b.rank) || (mpi_size != b.size)) {
            fprintf(stderr, "barrier_bench: MPI says rank %d of %d, amcoll says %d of %d\n",
                    mpi_rank, mpi_size, b.rank, b.size);
            goto fail_boot;
        }
    }
#endif
    if (b.size > AMC_BENCH_TAG_MAX_RANKS) {
        fprintf(stderr, "barrier_bench: %d ranks exceed the %d the layered tag encodes\n",
                b.size, AMC_BENCH_TAG_MAX_RANKS);
        goto fail_boot;
    }
    if (amc_bench_policy(&b.policy) != 0) {
        goto fail_boot;
    }

    if (amc_bench_ucx_init(&b) != 0) {
        goto fail_boot;
    }
    if (amc_bench_main(&b, &opts) != 0) {
        goto fail_ucx;
    }

    amc_bench_set_phase(AMC_BENCH_PHASE_TEARDOWN, -1);
    rc = amc_bench_ucx_fini(&b);
    amc_pmix_boot_finalize(b.boot);
    if (rc != 0) {
        bu_abort(1);
    }
    rc = amc_finalize();
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "barrier_bench: rank %d: amc_finalize: %s\n", b.rank, amc_strerror(rc));
        bu_abort(1);
    }
#ifdef HAVE_MPI
    MPI_Finalize();
#endif
    alarm(0);
    return 0;

    /* Peers may be blocked in a collective: only local cleanup here, and no
     * amc_finalize or PMIx finalize, which may wait for them. */
fail_ucx:
    ucp_worker_destroy(b.worker); /* also destroys its endpoints */
    ucp_cleanup(b.ctx);
    free(b.eps);
fail_boot:
    fprintf(stderr, "barrier_bench: rank %d: giving up\n", amc_rank);
fail_amc:
    bu_abort(1);
    return 1;
}
