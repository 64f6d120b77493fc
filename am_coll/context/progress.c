/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/progress.h"
#include "base/clock.h"

#include <sched.h>
#include <unistd.h>

/* Empty passes before the first yield when each rank has its own core: a
 * yield then costs a system call and finds nobody to hand over to. */
#define AMC_SPIN_DEDICATED 1000u

/* Yields between two looks at the clock while idle. */
#define AMC_WAIT_CLOCK_EVERY 16u

/* Read once per process: glibc answers by reading /sys on every call, and a
 * process that makes many contexts (the unit tests' worlds, one per replay)
 * paid three system calls per rank for a count that does not change. */
static long amc_cpus_online(void)
{
    static long cached; /* 0: not read yet; racing first readers agree */
    long        cpus = __atomic_load_n(&cached, __ATOMIC_RELAXED);

    if (cpus == 0) {
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (cpus <= 0) {
            cpus = -1;
        }
        __atomic_store_n(&cached, cpus, __ATOMIC_RELAXED);
    }
    return cpus;
}

int amc_node_oversubscribed(int local_ranks)
{
    long cpus = amc_cpus_online();

    return (cpus > 0) && (local_ranks > cpus);
}

unsigned amc_wait_spin_auto(int local_ranks)
{
    return amc_node_oversubscribed(local_ranks) ? 0u : AMC_SPIN_DEDICATED;
}

void amc_waiter_init(amc_waiter_t *w, const amc_wait_policy_t *policy)
{
    w->policy          = policy;
    w->idle_passes     = 0;
    w->idle_since_usec = 0;
    w->sleeps          = 0;
}

void amc_waiter_pass(amc_waiter_t *w, int made_progress,
                     amc_sleep_fn_t sleep_fn, void *sleep_arg)
{
    uint64_t now;
    unsigned yielding;

    if (made_progress) {
        w->idle_passes = 0;
        return;
    }

    if (++w->idle_passes <= w->policy->spin_count) {
        return;
    }

    /* Past the spin, every idle pass gives the layer above a pass of its
     * own progress: a peer may wait for its messages while we wait here. */
    if (w->policy->idle_fn != NULL) {
        w->policy->idle_fn(w->policy->idle_arg);
    }

    /* A clock read costs as much as a progress pass: look at it on entering
     * the yield phase and every AMC_WAIT_CLOCK_EVERY yields after that. */
    yielding = w->idle_passes - w->policy->spin_count - 1;
    if (yielding == 0) {
        w->idle_since_usec = amc_clock_usec();
    } else if ((sleep_fn != NULL) && (yielding % AMC_WAIT_CLOCK_EVERY) == 0) {
        now = amc_clock_usec();
        if (now - w->idle_since_usec >= w->policy->yield_usec) {
            sleep_fn(sleep_arg, (w->policy->idle_fn != NULL)
                                    ? AMC_IDLE_HOOK_SLEEP_MSEC
                                    : (int)w->policy->sleep_msec);
            w->sleeps++;
            /* Still idle after a sleep: the next check sleeps again at once
             * (idle_since is kept), while any progress restarts the spin. */
            return;
        }
    }
    sched_yield();
}
