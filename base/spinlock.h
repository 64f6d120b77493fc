/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control structure's short lock. Nothing blocks while holding it (the
 * patent's point: no blocking communication under the lock), so a
 * test-and-set lock inlined into the handler is enough.
 *
 * A lock is taken only while two threads can meet in what it protects:
 * live points at the context's "threads may meet now" flag (NULL: they
 * never do). With AMC_THREAD_MULTIPLE the flag is always 1; with only the
 * progress thread it is 1 while that thread is not parked (see
 * am_coll/context/progress_thread.h for why the application may then go without).
 * In SINGLE or SERIALIZED mode the application and the handlers it runs from
 * progress are one thread at a time, and the lock would cost an atomic
 * exchange right after UCX's stores into a peer's shared-memory FIFO, which
 * must drain first: measured at 9% of the user CPU of an oversubscribed
 * barrier.
 *
 * Unlock needs no record of whether lock took it: if the word is set, this
 * thread holds it, since with the flag down nobody else can be inside.
 */
#ifndef AMC_SPINLOCK_H
#define AMC_SPINLOCK_H

#include <sched.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define AMC_SPINLOCK_IS_MUTEX 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AMC_SPINLOCK_IS_MUTEX 1
#endif
#endif

/* A spinning wait's pause: lets the sibling hyperthread run. */
static inline void amc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int amc_lock_live(const int *live)
{
    return (live != NULL) && __atomic_load_n(live, __ATOMIC_ACQUIRE);
}

#ifdef AMC_SPINLOCK_IS_MUTEX
/* Under ThreadSanitizer the lock is a mutex TSan knows, so it checks the
 * order against the transport's locks (a lock-order inversion is reported
 * even when the deadlock does not happen in that run). It is taken whenever
 * threads may ever meet, whatever the flag says now. */
#include <pthread.h>

typedef struct {
    pthread_mutex_t mutex;
    const int      *live;
} amc_spinlock_t;

static inline void amc_spinlock_init(amc_spinlock_t *l, const int *live)
{
    pthread_mutex_init(&l->mutex, NULL);
    l->live = live;
}

static inline void amc_spinlock_destroy(amc_spinlock_t *l)
{
    pthread_mutex_destroy(&l->mutex);
}

static inline void amc_spin_lock(amc_spinlock_t *l)
{
    if (l->live != NULL) {
        pthread_mutex_lock(&l->mutex);
    }
}

static inline void amc_spin_unlock(amc_spinlock_t *l)
{
    if (l->live != NULL) {
        pthread_mutex_unlock(&l->mutex);
    }
}

#else

typedef struct {
    int        locked;
    const int *live;
} amc_spinlock_t;

static inline void amc_spinlock_init(amc_spinlock_t *l, const int *live)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
    l->live = live;
}

static inline void amc_spinlock_destroy(amc_spinlock_t *l)
{
    (void)l;
}

static inline void amc_spin_lock(amc_spinlock_t *l)
{
    unsigned spins = 0;

    if (!amc_lock_live(l->live)) {
        return;
    }
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
        /* wait on a plain load; with more threads than cores, let the
         * holder run instead of burning its time slice */
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
            if (++spins > 100) {
                sched_yield();
            } else {
                amc_cpu_relax();
            }
        }
    }
}

static inline void amc_spin_unlock(amc_spinlock_t *l)
{
    if ((l->live != NULL) && __atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
        __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
    }
}

#endif /* AMC_SPINLOCK_IS_MUTEX */

/*
 * Read-modify-writes on state that threads share only while they may meet
 * (eager tokens, a schedule's spare instance). A locked instruction right
 * after UCX's stores into a peer's shared-memory FIFO waits for those
 * stores to drain: measured at 100-250 cycles each on the critical path of
 * an 8-byte allreduce at N=2. With the flag down, one thread at a time
 * touches them, and plain loads and stores do.
 */
#ifdef AMC_SPINLOCK_IS_MUTEX
#define AMC_LIVE(_live) ((void)(_live), 1) /* TSan checks the atomic forms */
#else
#define AMC_LIVE(_live) amc_lock_live(_live)
#endif

static inline uint32_t amc_live_add_u32(uint32_t *p, uint32_t v, const int *live)
{
    if (AMC_LIVE(live)) {
        return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL);
    }
    return (*p += v);
}

static inline uint32_t amc_live_xchg_u32(uint32_t *p, uint32_t v, const int *live)
{
    uint32_t old;

    if (AMC_LIVE(live)) {
        return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
    }
    old = *p;
    *p  = v;
    return old;
}

/* Takes n units of *p if there are: 1, else 0 (nothing taken). */
static inline int amc_live_take_n_u32(uint32_t *p, uint32_t n, const int *live)
{
    uint32_t have;

    if (!AMC_LIVE(live)) {
        if (*p < n) {
            return 0;
        }
        *p -= n;
        return 1;
    }
    have = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (have >= n) {
        if (__atomic_compare_exchange_n(p, &have, have - n, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            return 1;
        }
    }
    return 0;
}

static inline void *amc_live_xchg_ptr(void **p, void *v, const int *live)
{
    void *old;

    if (AMC_LIVE(live)) {
        return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
    }
    old = *p;
    *p  = v;
    return old;
}

#endif
