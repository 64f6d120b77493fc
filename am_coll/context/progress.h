/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a wait loop gives the core away when it has nothing to do.
 *
 * Up to 32 ranks share 2 cores: a pure spin starves the peer we wait for,
 * sleeping on the event fd costs 100+ us per wake-up, sched_yield costs ~10 us.
 * So: spin for a few empty progress passes, then yield, and only after a
 * longer idle stretch arm the transport and sleep on it.
 */
#ifndef AMC_PROGRESS_H
#define AMC_PROGRESS_H

#include <stdint.h>

typedef struct amc_wait_policy {
    unsigned spin_count;   /* empty progress passes before the first yield */
    unsigned yield_usec;   /* idle time spent yielding before we sleep */
    unsigned sleep_msec;   /* longest single sleep; bounds timeout latency */
    void   (*idle_fn)(void *arg); /* amc_set_idle_hook: another layer's progress */
    void    *idle_arg;
} amc_wait_policy_t;

/* Longest single sleep while an idle hook is set: the hook's layer (an MPI
 * library's messages) has no event fd here to wake us. */
#define AMC_IDLE_HOOK_SLEEP_MSEC 1

/* Blocks until the transport has an event or timeout_ms passes. */
typedef void (*amc_sleep_fn_t)(void *arg, int timeout_ms);

typedef struct amc_waiter {
    const amc_wait_policy_t *policy;
    unsigned                 idle_passes;
    uint64_t                 idle_since_usec;
    uint64_t                 sleeps;     /* how often we slept: diagnostics */
} amc_waiter_t;

/* AMC_SPIN_COUNT=auto: decided per node by amc_wait_spin_auto. */
#define AMC_SPIN_AUTO (~0u)

/* More ranks on this node than it has cores online: every rank of the node
 * computes the same answer (the launcher's count, the node's cores). */
int      amc_node_oversubscribed(int local_ranks);
/* Spinning only pays when every local rank has a core of its own: with more
 * ranks than cores a spinning rank holds the core its peer needs (Open MPI
 * yields at once when oversubscribed, for the same reason). */
unsigned amc_wait_spin_auto(int local_ranks);

/* The policy the default context waits with (AMC_SPIN_COUNT resolved), for
 * code that must wait exactly as amcoll does (the benchmark's baseline).
 * AMC_ERR_NOT_INITIALIZED before amc_init. */
int  amc_wait_policy_current(amc_wait_policy_t *policy);

void amc_waiter_init(amc_waiter_t *w, const amc_wait_policy_t *policy);

/* Call after every progress pass with what the pass returned. */
void amc_waiter_pass(amc_waiter_t *w, int made_progress,
                     amc_sleep_fn_t sleep_fn, void *sleep_arg);

#endif
