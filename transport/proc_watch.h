/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Liveness of the peers on this node, from their process ids: a peer that
 * was SIGKILLed or aborted is gone from the kernel's process table at once,
 * long before any network timeout, and no launcher has to tell us (Open MPI
 * 4.1's ORTE sends no PMIx event for it). Each rank publishes its identity
 * (pid, kernel boot id, pid namespace) with its transport address; peers in
 * the same kernel and pid namespace are watched through a pidfd (readable
 * when the process exits, immune to pid reuse), or by pid where pidfd_open
 * is missing (a pid whose process started at another time than the peer
 * published is another process: the peer is gone). Peers elsewhere are
 * left to the other detectors.
 */
#ifndef AMC_PROC_WATCH_H
#define AMC_PROC_WATCH_H

#include "transport/peer_set.h"

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#define AMC_PROC_IDENT_MAGIC 0x414d4350u /* "AMCP" */

typedef struct amc_proc_ident {
    uint32_t magic;
    int32_t  pid;
    uint64_t pidns_ino;    /* /proc/self/ns/pid: same kernel, same numbering */
    uint64_t pidns_dev;
    uint64_t start;        /* start time (/proc/PID/stat): a reused pid has another one */
    char     boot_id[40];  /* /proc/sys/kernel/random/boot_id, else the host name */
} amc_proc_ident_t;

typedef struct amc_proc_watch amc_proc_watch_t;

void amc_proc_ident_self(amc_proc_ident_t *id);

/* pidfd_open(2) with close-on-exec: a descriptor of pid's process that
 * never names another (-1 and errno where the kernel lacks it). */
int  amc_proc_pidfd_open(pid_t pid);

/* Whether b runs in a's kernel and pid namespace (a's /proc shows b). */
int  amc_proc_ident_same_kernel(const amc_proc_ident_t *a, const amc_proc_ident_t *b);

/* Watches the n peers ids[i] (rank ranks[i]; the caller leaves itself
 * out) that share this process's kernel and pid namespace: the peers on
 * this node, whatever the size of the job. Never fails for want of pidfds:
 * such peers are checked by pid. */
int  amc_proc_watch_create(const amc_proc_ident_t *self_id, const amc_proc_ident_t *ids,
                           const int *ranks, int n, amc_proc_watch_t **watch_p);

/* Peers watched. */
int  amc_proc_watch_count(const amc_proc_watch_t *watch);
void amc_proc_watch_destroy(amc_proc_watch_t *watch);

/* Peers checked by pid only: a sleeping waiter must wake now and then to
 * look at them, since nothing wakes it when they die. */
int  amc_proc_watch_needs_polling(const amc_proc_watch_t *watch);

/* The pidfds of watched peers not in dead, up to max, for a poll set;
 * ranks[i] is the rank of pfd[i]. Returns how many were filled. */
int  amc_proc_watch_pollfds(const amc_proc_watch_t *watch, const amc_peer_set_t *dead,
                            struct pollfd *pfd, int *ranks, int max);

/* After a poll over entries from amc_proc_watch_pollfds: marks the peers
 * whose pidfd became readable (they exited). Returns how many it newly marked. */
int  amc_proc_watch_mark(const struct pollfd *pfd, const int *ranks, int n,
                         amc_peer_set_t *dead);

/* Looks at every watched peer not in dead, now, without blocking, and marks
 * the ones that are gone. Any thread. Returns how many it newly marked. */
int  amc_proc_watch_check(const amc_proc_watch_t *watch, amc_peer_set_t *dead);

#endif
