/*
 * The control structure's short lock. Nothing blocks while holding it (the
 * patent's point: no blocking communication under the lock), so a spinlock
 * is enough and cheaper than a mutex.
 */
#ifndef AMC_SPINLOCK_H
#define AMC_SPINLOCK_H

#include <pthread.h>

typedef pthread_spinlock_t amc_spinlock_t;

static inline void amc_spinlock_init(amc_spinlock_t *l)    { pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE); }
static inline void amc_spinlock_destroy(amc_spinlock_t *l) { pthread_spin_destroy(l); }
static inline void amc_spin_lock(amc_spinlock_t *l)        { pthread_spin_lock(l); }
static inline void amc_spin_unlock(amc_spinlock_t *l)      { pthread_spin_unlock(l); }

#endif
