/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress thread (AMC_PROGRESS_THREAD=1): runs the handlers while the
 * application computes, so a non-blocking collective completes without test
 * calls (LibNBC's and the InfiniBand progress work's point).
 *
 * It works only when that helps: while non-blocking requests are outstanding
 * and no application thread is inside a wait loop. Otherwise it is parked on
 * a condition variable and touches nothing, so a blocking collective runs as
 * it would without the thread (the caller progresses itself; no lock of the
 * transport is contended, no core is taken). When it works and nothing
 * arrives it never spins: it yields a few times
 * (AMC_PROGRESS_THREAD_YIELD_USEC) and then sleeps on the transport's wakeup
 * fd, so it does not take the core the computation or a peer rank needs.
 */
#ifndef AMC_PROGRESS_THREAD_H
#define AMC_PROGRESS_THREAD_H

#include <pthread.h>
#include <stdint.h>

struct amc_context;

typedef struct amc_progress_thread {
    struct amc_context *ctx;
    pthread_t           thread;
    pthread_mutex_t     mutex;
    pthread_cond_t      cond;
    int                 stop;
    int                 parked;       /* waits on cond (a start must wake it) */
    int                 go;           /* set by the waker, under mutex */
    unsigned            outstanding;  /* non-blocking requests started, not complete */
    unsigned            waiting;      /* application threads in a wait loop */
    uint64_t            passes;       /* progress passes that found something */
} amc_progress_thread_t;

int  amc_progress_thread_start(struct amc_context *ctx, amc_progress_thread_t **pt_p);

/* Wakes the thread out of any sleep and joins it. */
void amc_progress_thread_stop(amc_progress_thread_t *pt);

/* A non-blocking request begins (before its start: it may complete inside)
 * and is then handed to the thread; end runs when it completes. */
void amc_progress_thread_begin(amc_progress_thread_t *pt);
void amc_progress_thread_kick(amc_progress_thread_t *pt);
void amc_progress_thread_end(amc_progress_thread_t *pt);

/* Non-blocking requests outstanding: the thread may be working. */
static inline int amc_progress_thread_busy(const amc_progress_thread_t *pt)
{
    return __atomic_load_n(&pt->outstanding, __ATOMIC_RELAXED) != 0;
}

/* An application thread enters or leaves a wait loop. */
void amc_progress_thread_enter_wait(amc_progress_thread_t *pt);
void amc_progress_thread_leave_wait(amc_progress_thread_t *pt);

#endif
