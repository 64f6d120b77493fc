/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pieces shared by the benchmarks that run amcoll and Open MPI in one job
 * (coll_bench, overlap_bench): clock, abort, max over ranks, watchdog,
 * command line + AMC_BENCH_* environment, quantiles, start-up and shutdown.
 * Messages start with bu_prog; set it before anything else.
 */
#ifndef AMC_BENCH_UTIL_H
#define AMC_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>

extern const char *bu_prog;      /* "coll_bench: ..." */
extern int         bu_rank;      /* -1 until bu_init */
extern int         bu_opt_quiet; /* set by bu_parse_opts: only rank 0 explains a bad command line */

/* One clock for both libraries, owned by neither. */
double bu_now(void);

/* Takes the whole job down (MPI_Abort when MPI is up: peers sit in a
 * collective that will never finish). */
void bu_abort(int code) __attribute__((noreturn));

/* Element-wise maximum over all ranks, in place. Through Open MPI when there
 * is one (the library under test should not grade itself), else amcoll. */
int bu_allmax(double *v, int n);
/* Element-wise mean over all ranks (OSU's average latency), in place. */
int bu_allmean(double *v, int n);

/* Watchdog: a rank stuck longer than seconds in one phase prints
 * "<prog>: rank R: watchdog: no progress for S s in <what> (hang?); ..." and
 * exits 3. bu_watchdog_arm names the phase and restarts the alarm. */
int  bu_watchdog_install(unsigned seconds);
void bu_watchdog_arm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------ options */

typedef struct bu_env_opt {
    int         flag;
    const char *env;
} bu_env_opt_t;

/* Applies one option (from flag or environment) to opts; 0 or -1. */
typedef int (*bu_apply_fn_t)(void *opts, int flag, const char *what, const char *val);

/* Environment first, then flags (flags win); opts already holds the defaults.
 * Returns 0 to run, 1 after -h, -1 on a bad argument. */
int bu_parse_opts(int argc, char **argv, const char *optstring, const bu_env_opt_t *envs,
                  size_t nenvs, bu_apply_fn_t apply, void *opts, void (*usage)(FILE *));

void bu_opt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int  bu_parse_long(const char *what, const char *s, long lo, long hi, long *out);
/* "1,8,4K,1M" (commas or blanks; K and M are binary), sorted ascending. */
int  bu_parse_sizes(const char *what, const char *s, size_t *sizes, int max, int *n);
/* Names from names[0..n) to a bit mask. */
int  bu_parse_list(const char *what, const char *s, const char *const *names, int n,
                   unsigned *mask);

/* ------------------------------------------------------------ statistics */

/* Median, quartiles (linear interpolation between order statistics) and
 * range of v[0..n), n >= 1; sorts v in place. */
typedef struct bu_stats {
    double median, q1, q3, min, max;
} bu_stats_t;

void   bu_stats(double *v, int n, bu_stats_t *s);
/* The median alone, as bu_stats computes it; sorts v in place. */
double bu_median(double *v, int n);

/* ------------------------------------------------------------ start-up */

/* MPI_Init (when built with MPI), amc_init, and a check that both libraries
 * see the same job; aborts on failure. */
void bu_init(int *argc, char ***argv, int *rank, int *size);
/* amc_finalize, MPI_Finalize, watchdog off; aborts on failure. */
void bu_finalize(void);

#endif
