/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pid watch of the peers on this node (transport/proc_watch.h), with
 * real processes: a live peer is not marked, a killed one is at the next
 * check; a peer whose pid is now another process's (it started at another
 * time than the peer published) and a pid nobody has are marked at the
 * first check, with pidfds and without them (the kill(pid, 0) path of a
 * kernel without pidfd_open: a start time that differs tells the reused
 * pid from the peer).
 */
#define _GNU_SOURCE
#include "tests/unit/harness.h"
#include "transport/proc_watch.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_watch(void)
{
    amc_proc_ident_t  self, ids[3];
    amc_proc_watch_t *watch;
    amc_peer_set_t    dead;
    int               ranks[3] = { 1, 2, 3 }, status;
    pid_t             child;

    amc_proc_ident_self(&self);
    CHECK(self.start != 0, "this process's start time is read");
    child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    /* rank 1: the child; rank 2: this process's pid with another start
     * time (its pid went to another process); rank 3: a pid nobody has */
    ids[0]       = self;
    ids[0].pid   = (int32_t)child;
    ids[0].start = 0; /* not known: the pidfd alone */
    ids[1]       = self;
    ids[1].start = self.start + 1;
    ids[2]       = self;
    ids[2].pid   = 0x3fffff00;
    CHECK(amc_peer_set_init(&dead, 4) == AMC_SUCCESS, "dead set");
    CHECK(amc_proc_watch_create(&self, ids, ranks, 3, &watch) == AMC_SUCCESS, "watch");
    CHECK(amc_proc_watch_check(watch, &dead) == 2, "two marked at the first check");
    CHECK(!amc_peer_set_test(&dead, 1) && amc_peer_set_test(&dead, 2) &&
          amc_peer_set_test(&dead, 3), "the reused pid and the missing one, not the live peer");
    CHECK(amc_proc_watch_check(watch, &dead) == 0, "nothing new while it lives");
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    CHECK(amc_proc_watch_check(watch, &dead) == 1 && amc_peer_set_test(&dead, 1),
          "the killed peer is marked");
    amc_proc_watch_destroy(watch);
    amc_peer_set_cleanup(&dead);
}

int main(void)
{
    test_watch();
    return amc_test_summary("test_proc_watch");
}
