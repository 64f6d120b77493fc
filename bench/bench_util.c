/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include "bench/bench_util.h"

#include <amcoll.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *bu_prog      = "bench";
int         bu_rank      = -1;
int         bu_opt_quiet = 0;

double bu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bu_abort(int code)
{
    fflush(stdout);
    fflush(stderr);
#ifdef HAVE_MPI
    {
        int up = 0, down = 0;

        MPI_Initialized(&up);
        MPI_Finalized(&down);
        if (up && !down) {
            MPI_Abort(MPI_COMM_WORLD, code);
        }
    }
#endif
    exit(code); /* mpirun ends the job when a rank exits non-zero */
}

int bu_allmax(double *v, int n)
{
#ifdef HAVE_MPI
    return (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) ==
            MPI_SUCCESS) ? 0 : -1;
#else
    double *in = malloc((size_t)n * sizeof(*in));
    int     rc;

    if (in == NULL) {
        return -1;
    }
    memcpy(in, v, (size_t)n * sizeof(*in));
    rc = amc_allreduce(in, v, (size_t)n, AMC_DOUBLE, AMC_MAX, AMC_COMM_WORLD);
    free(in);
    return (rc == AMC_SUCCESS) ? 0 : -1;
#endif
}

int bu_allmean(double *v, int n)
{
    int size = 1, i;

#ifdef HAVE_MPI
    if ((MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) ||
        (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)) {
        return -1;
    }
#else
    double *in = malloc((size_t)n * sizeof(*in));
    int     rc;

    if ((in == NULL) || (amc_comm_size(AMC_COMM_WORLD, &size) != AMC_SUCCESS)) {
        free(in);
        return -1;
    }
    memcpy(in, v, (size_t)n * sizeof(*in));
    rc = amc_allreduce(in, v, (size_t)n, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
    free(in);
    if (rc != AMC_SUCCESS) {
        return -1;
    }
#endif
    for (i = 0; i < n; i++) {
        v[i] /= (double)size;
    }
    return 0;
}

/* ------------------------------------------------------------------ watchdog */

/* The message is formatted outside the handler, which only write()s it. */
static char     bu_wd_msg[320];
static size_t   bu_wd_len;
static unsigned bu_wd_s;

static void bu_watchdog(int sig)
{
    (void)sig;
    if (write(STDERR_FILENO, bu_wd_msg, bu_wd_len) < 0) {
        /* nothing left to report it to */
    }
    _exit(3);
}

int bu_watchdog_install(unsigned seconds)
{
    struct sigaction sa;

    bu_wd_s = seconds;
    if (seconds == 0) {
        return 0;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = bu_watchdog;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) {
        fprintf(stderr, "%s: sigaction(SIGALRM): %s\n", bu_prog, strerror(errno));
        return -1;
    }
    return 0;
}

void bu_watchdog_arm(const char *fmt, ...)
{
    char    what[200];
    va_list ap;
    int     n;

    if (bu_wd_s == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    n = snprintf(bu_wd_msg, sizeof(bu_wd_msg),
                 "%s: rank %d: watchdog: no progress for %u s in %s (hang?); "
                 "raise it with -W or AMC_BENCH_WATCHDOG\n",
                 bu_prog, bu_rank, bu_wd_s, what);
    bu_wd_len = (n < 0) ? 0 : ((size_t)n >= sizeof(bu_wd_msg) ? sizeof(bu_wd_msg) - 1 : (size_t)n);
    alarm(bu_wd_s);
}

/* ------------------------------------------------------------------ options */

void bu_opt_error(const char *fmt, ...)
{
    va_list ap;

    if (bu_opt_quiet) {
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", bu_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int bu_parse_long(const char *what, const char *s, long lo, long hi, long *out)
{
    char *end;
    long  v;

    errno = 0;
    v     = strtol(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (v < lo) || (v > hi)) {
        bu_opt_error("%s: '%s' is not an integer in [%ld, %ld]", what, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int bu_cmp_size(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

    return (a > b) - (a < b);
}

int bu_parse_sizes(const char *what, const char *s, size_t *sizes, int max, int *n)
{
    char *copy = strdup(s), *tok, *save = NULL, *end;
    int   rc = 0;

    if (copy == NULL) {
        bu_opt_error("out of memory");
        return -1;
    }
    *n = 0;
    for (tok = strtok_r(copy, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
        unsigned long long v;

        errno = 0;
        v     = strtoull(tok, &end, 10);
        if ((errno == 0) && (end != tok)) {
            if ((*end == 'k') || (*end == 'K')) {
                v <<= 10;
                end++;
            } else if ((*end == 'm') || (*end == 'M')) {
                v <<= 20;
                end++;
            }
        }
        if ((errno != 0) || (end == tok) || (*end != '\0') || (v == 0) || (v > (1ull << 30))) {
            bu_opt_error("%s: '%s' is not a size in bytes in [1, 1G] (K, M suffixes allowed)",
                         what, tok);
            rc = -1;
            break;
        }
        if (*n == max) {
            bu_opt_error("%s: more than %d sizes", what, max);
            rc = -1;
            break;
        }
        sizes[(*n)++] = (size_t)v;
    }
    free(copy);
    if ((rc == 0) && (*n == 0)) {
        bu_opt_error("%s: no sizes", what);
        rc = -1;
    }
    if (rc == 0) {
        qsort(sizes, (size_t)*n, sizeof(sizes[0]), bu_cmp_size);
    }
    return rc;
}

int bu_parse_list(const char *what, const char *s, const char *const *names, int n,
                  unsigned *mask)
{
    char *copy = strdup(s), *tok, *save = NULL;
    int   i, rc = 0;

    if (copy == NULL) {
        bu_opt_error("out of memory");
        return -1;
    }
    *mask = 0;
    for (tok = strtok_r(copy, ", \t", &save); tok != NULL; tok = strtok_r(NULL, ", \t", &save)) {
        for (i = 0; i < n; i++) {
            if (strcmp(tok, names[i]) == 0) {
                break;
            }
        }
        if (i == n) {
            bu_opt_error("%s: unknown name '%s'", what, tok);
            rc = -1;
            break;
        }
        *mask |= 1u << i;
    }
    free(copy);
    if ((rc == 0) && (*mask == 0)) {
        bu_opt_error("%s: empty list", what);
        rc = -1;
    }
    return rc;
}

/* Options are parsed before MPI and PMIx start, hence PMIX_RANK. */
int bu_parse_opts(int argc, char **argv, const char *optstring, const bu_env_opt_t *envs,
                  size_t nenvs, bu_apply_fn_t apply, void *opts, void (*usage)(FILE *))
{
    const char *rank = getenv("PMIX_RANK");
    char        what[3] = "-?";
    size_t      i;
    int         c;

    bu_opt_quiet = (rank != NULL) && (strcmp(rank, "0") != 0);
    opterr       = 0; /* getopt's own message would repeat ours */

    for (i = 0; i < nenvs; i++) {
        const char *val = getenv(envs[i].env);

        if ((val != NULL) && (*val != '\0') && (apply(opts, envs[i].flag, envs[i].env, val) != 0)) {
            return -1;
        }
    }
    while ((c = getopt(argc, argv, optstring)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 1;
        }
        if (c == '?') {
            bu_opt_error("unknown option -%c, or it lacks its value", optopt);
            usage(stderr);
            return -1;
        }
        what[1] = (char)c;
        if (apply(opts, c, what, optarg) != 0) {
            return -1;
        }
    }
    if (optind != argc) {
        bu_opt_error("unexpected argument '%s'", argv[optind]);
        usage(stderr);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ statistics */

static int bu_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return (a > b) - (a < b);
}

/* Linear interpolation between order statistics of a sorted array. */
static double bu_quantile(const double *sorted, int n, double q)
{
    double pos = q * (double)(n - 1);
    int    lo  = (int)pos;

    if (lo >= n - 1) {
        return sorted[n - 1];
    }
    return sorted[lo] + (pos - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

void bu_stats(double *v, int n, bu_stats_t *s)
{
    qsort(v, (size_t)n, sizeof(*v), bu_cmp_double);
    s->min    = v[0];
    s->max    = v[n - 1];
    s->median = bu_quantile(v, n, 0.5);
    s->q1     = bu_quantile(v, n, 0.25);
    s->q3     = bu_quantile(v, n, 0.75);
}

double bu_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), bu_cmp_double);
    return bu_quantile(v, n, 0.5);
}

/* ------------------------------------------------------------------ start-up */

void bu_init(int *argc, char ***argv, int *rank, int *size)
{
    int rc;

#ifdef HAVE_MPI
    rc = MPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init failed (%d)\n", bu_prog, rc);
        exit(1);
    }
#endif
    rc = amc_init(argc, argv);
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "%s: amc_init: %s\n", bu_prog, amc_strerror(rc));
        bu_abort(1);
    }
    if (((rc = amc_comm_rank(AMC_COMM_WORLD, rank)) != AMC_SUCCESS) ||
        ((rc = amc_comm_size(AMC_COMM_WORLD, size)) != AMC_SUCCESS)) {
        fprintf(stderr, "%s: amc_comm_rank/size(AMC_COMM_WORLD): %s\n", bu_prog,
                amc_strerror(rc));
        bu_abort(1);
    }
    bu_rank = *rank;
#ifdef HAVE_MPI
    {
        int mpi_rank, mpi_size;

        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
        /* The libraries are only comparable if they see the same job. */
        if ((mpi_rank != *rank) || (mpi_size != *size)) {
            fprintf(stderr, "%s: MPI says rank %d of %d, amcoll says %d of %d\n", bu_prog,
                    mpi_rank, mpi_size, *rank, *size);
            bu_abort(1);
        }
    }
#endif
}

void bu_finalize(void)
{
    int rc = amc_finalize();

    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "%s: rank %d: amc_finalize: %s\n", bu_prog, bu_rank, amc_strerror(rc));
        bu_abort(1);
    }
#ifdef HAVE_MPI
    MPI_Finalize();
#endif
    alarm(0);
}
