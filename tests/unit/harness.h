/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small test harness: checks that count and report, and a "world" of N
 * ranks in one process, each with its own context over the fake transport.
 */
#ifndef AMC_TEST_HARNESS_H
#define AMC_TEST_HARNESS_H

#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "transport/fake.h"
#include "amcoll.h"
#include "am_coll/api/comm_create.h"

#include <stdint.h>

void amc_test_check(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* CHECK(cond, "printf-style context") */
#define CHECK(_cond, ...) amc_test_check(!!(_cond), __FILE__, __LINE__, #_cond, __VA_ARGS__)

/* Prints the tally; returns the process exit status. */
int  amc_test_summary(const char *name);
unsigned long amc_test_failures(void);

typedef struct amc_test_world {
    int                n;
    int                threaded;
    amc_fake_fabric_t *fabric;
    amc_context_t    **ctx;
} amc_test_world_t;

int  amc_test_threaded_locks(void);

/* AMCTEST_QUICK=1 (the sanitizer pass of tests/run_all.sh): the exhaustive
 * and random explorations run a smaller size. The plain pass runs them whole
 * on the same code, so the sanitizers see every path at a fraction of the
 * time (they slow these tests 4-8 times). */
int  amc_test_quick(void);

/* AMC_* from the environment (so a wrapper can force algorithms), quiet
 * unless AMC_LOG_LEVEL is set, no progress thread (a test that wants one
 * asks for it): what amc_test_world_create uses without a config, for a
 * test that changes a setting or two of it. AMC_ERR_ARG if a value is bad. */
int  amc_test_config_from_env(amc_config_t *cfg);

/* cfg may be NULL for the defaults (log level from AMC_LOG_LEVEL, else error). */
int  amc_test_world_create(amc_test_world_t *world, int n, amc_fake_completion_t completion,
                           const amc_config_t *cfg);
/* Ranks meant to run on threads of their own (fake threaded fabric), with or
 * without a progress thread per rank; multiple: several application threads
 * per rank (AMC_THREAD_MULTIPLE), else one. */
int  amc_test_world_create_threaded(amc_test_world_t *world, int n, int progress_thread,
                                    int multiple);
void amc_test_world_destroy(amc_test_world_t *world);
amc_comm_t amc_test_world_comm(amc_test_world_t *world, int rank);

/* Dup and split on an unthreaded world, where a blocking call would wait for
 * ever for ranks that only this thread runs: every rank's creation begins
 * (its agreement starts), the fabric delivers in send order until every
 * agreement completed, and each rank's creation ends. parents NULL: the
 * world; split: rank r splits with color[r], key[r], else it dups. out[r]:
 * rank r's result. Returns the first error. */
int  amc_test_world_create_comms(amc_test_world_t *world, const amc_comm_t *parents, int split,
                                 const int *color, const int *key, amc_comm_t *out);
/* The halves, for a test that runs something between them: begin on every
 * rank (ops[world->n]); drive returns 1 once every agreement completed. */
int  amc_test_world_create_begin(amc_test_world_t *world, const amc_comm_t *parents, int split,
                                 const int *color, const int *key, amc_comm_create_t *ops);
int  amc_test_world_create_drive(amc_test_world_t *world, amc_comm_create_t *ops);

/* On an unthreaded world: tests every rank's request and delivers in send
 * order until each is done; status[r] is rank r's result. 1 once all are
 * done, 0 if they are not after 100000 passes. */
int  amc_test_world_drive(amc_test_world_t *world, amc_request_t *reqs, int *status);

/* After the last call on an unthreaded world: delivers what is still
 * queued (credit messages: with few tokens a receiver gives the last ones
 * back once its last early message is released), and checks, naming what,
 * that the queue ends within 1000 events and that no rank refused any of
 * it (its communicator's pending error). */
void amc_test_world_settle(amc_test_world_t *world, const char *what);

/* Deterministic generator for reproducible "random" delivery orders. */
typedef struct { uint64_t state; } amc_test_rng_t;
void     amc_test_rng_seed(amc_test_rng_t *rng, uint64_t seed);
uint64_t amc_test_rng_next(amc_test_rng_t *rng);
size_t   amc_test_rng_below(amc_test_rng_t *rng, size_t bound);

/* Runs fn(arg) with stderr captured into buf (len bytes, NUL-terminated). */
void amc_test_capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len);

/* The name of the algorithm comm's selection picks for coll on count
 * AMC_INT32 elements (AMC_SUM, commutative or not), "none" if none. */
const char *amc_test_selected(amc_comm_t comm, int coll, size_t count, int commutative);

#endif
