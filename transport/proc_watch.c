/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "transport/proc_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Poll entries one check puts on its stack at a time. */
#define AMC_PROC_WATCH_CHUNK 64

typedef struct amc_proc_peer {
    int      rank;
    pid_t    pid;
    uint64_t start;  /* its start time, as it published it (0: unknown) */
    int      pidfd;  /* -1: checked by pid */
} amc_proc_peer_t;

struct amc_proc_watch {
    int              count;
    int              by_pid;   /* peers without a pidfd */
    amc_proc_peer_t  peers[];
};

/* /proc/PID/stat: its state letter and start time (in clock ticks since
 * boot); 0, or -1 where it cannot be read (ENOENT: gone). */
static int amc_proc_stat(pid_t pid, char *state, uint64_t *start)
{
    char          path[64], buf[512], *p;
    ssize_t       n;
    int           fd, field;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        errno = EIO;
        return -1;
    }
    buf[n] = '\0';
    p      = strrchr(buf, ')'); /* the name may hold anything; the fields follow it */
    if ((p == NULL) || (p[1] != ' ')) {
        errno = EIO;
        return -1;
    }
    *state = p[2];
    /* field 3 is the state, field 22 the start time */
    for (field = 3, p += 2; (field < 22) && (p != NULL); field++) {
        p = strchr(p, ' ');
        p = (p != NULL) ? p + 1 : NULL;
    }
    *start = (p != NULL) ? strtoull(p, NULL, 10) : 0;
    return 0;
}

void amc_proc_ident_self(amc_proc_ident_t *id)
{
    char state;
    struct stat st;
    ssize_t     n;
    int         fd;

    memset(id, 0, sizeof(*id));
    id->magic = AMC_PROC_IDENT_MAGIC;
    id->pid   = (int32_t)getpid();
    if (amc_proc_stat(getpid(), &state, &id->start) != 0) {
        id->start = 0;
    }
    if (stat("/proc/self/ns/pid", &st) == 0) {
        id->pidns_ino = (uint64_t)st.st_ino;
        id->pidns_dev = (uint64_t)st.st_dev;
    }
    fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, id->boot_id, sizeof(id->boot_id) - 1);
        close(fd);
        if (n > 0) {
            id->boot_id[n] = '\0';
            return;
        }
    }
    /* no procfs: the host name is a weaker identity (containers share it) */
    if (gethostname(id->boot_id, sizeof(id->boot_id) - 1) != 0) {
        id->boot_id[0] = '\0';
    }
}

int amc_proc_ident_same_kernel(const amc_proc_ident_t *a, const amc_proc_ident_t *b)
{
    return (a->magic == AMC_PROC_IDENT_MAGIC) && (b->magic == AMC_PROC_IDENT_MAGIC) &&
           (a->boot_id[0] != '\0') && (a->pidns_ino != 0) &&
           (strncmp(a->boot_id, b->boot_id, sizeof(a->boot_id)) == 0) &&
           (a->pidns_ino == b->pidns_ino) && (a->pidns_dev == b->pidns_dev);
}

int amc_proc_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);

    if (fd >= 0) {
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    return fd;
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

static int amc_proc_gone(pid_t pid, uint64_t start);

int amc_proc_watch_create(const amc_proc_ident_t *self_id, const amc_proc_ident_t *ids,
                          const int *ranks, int n, amc_proc_watch_t **watch_p)
{
    amc_proc_watch_t *watch;
    amc_proc_peer_t  *peer;
    int               i;

    watch = calloc(1, sizeof(*watch) + (size_t)n * sizeof(watch->peers[0]));
    if (watch == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < n; i++) {
        if (!amc_proc_ident_same_kernel(self_id, &ids[i])) {
            continue;
        }
        peer        = &watch->peers[watch->count++];
        peer->rank  = ranks[i];
        peer->pid   = (pid_t)ids[i].pid;
        peer->start = ids[i].start;
        /* a peer already gone fails pidfd_open with ESRCH, and one whose pid
         * is another process's already opens that process: either is
         * checked by pid, and the first check marks it */
        peer->pidfd = amc_proc_pidfd_open(peer->pid);
        if ((peer->pidfd >= 0) && amc_proc_gone(peer->pid, peer->start)) {
            close(peer->pidfd);
            peer->pidfd = -1;
        }
        watch->by_pid += (peer->pidfd < 0);
    }
    *watch_p = watch;
    return AMC_SUCCESS;
}

int amc_proc_watch_count(const amc_proc_watch_t *watch)
{
    return (watch != NULL) ? watch->count : 0;
}

void amc_proc_watch_destroy(amc_proc_watch_t *watch)
{
    int i;

    if (watch == NULL) {
        return;
    }
    for (i = 0; i < watch->count; i++) {
        if (watch->peers[i].pidfd >= 0) {
            close(watch->peers[i].pidfd);
        }
    }
    free(watch);
}

int amc_proc_watch_needs_polling(const amc_proc_watch_t *watch)
{
    return (watch != NULL) && (watch->by_pid > 0);
}

int amc_proc_watch_pollfds(const amc_proc_watch_t *watch, const amc_peer_set_t *dead,
                           struct pollfd *pfd, int *ranks, int max)
{
    int i, n = 0;

    for (i = 0; (watch != NULL) && (i < watch->count) && (n < max); i++) {
        if ((watch->peers[i].pidfd < 0) || amc_peer_set_test(dead, watch->peers[i].rank)) {
            continue;
        }
        pfd[n].fd      = watch->peers[i].pidfd;
        pfd[n].events  = POLLIN;
        pfd[n].revents = 0;
        ranks[n++]     = watch->peers[i].rank;
    }
    return n;
}

/* Gone, a zombie its parent has not reaped yet (kill() still finds it), or
 * its pid is another process's now (started at another time than start,
 * where known). */
static int amc_proc_gone(pid_t pid, uint64_t start)
{
    uint64_t now_start;
    char     state;

    if ((kill(pid, 0) != 0) && (errno == ESRCH)) {
        return 1;
    }
    if (amc_proc_stat(pid, &state, &now_start) != 0) {
        return errno == ENOENT;
    }
    return (state == 'Z') || (state == 'X') || ((start != 0) && (now_start != start));
}

int amc_proc_watch_mark(const struct pollfd *pfd, const int *ranks, int n,
                        amc_peer_set_t *dead)
{
    int i, marked = 0;

    for (i = 0; i < n; i++) {
        if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
            marked += amc_peer_set_mark(dead, ranks[i]);
        }
    }
    return marked;
}

static int amc_proc_watch_poll_now(struct pollfd *pfd, const int *ranks, int n,
                                   amc_peer_set_t *dead)
{
    if (poll(pfd, (nfds_t)n, 0) <= 0) {
        return 0;
    }
    return amc_proc_watch_mark(pfd, ranks, n, dead);
}

int amc_proc_watch_check(const amc_proc_watch_t *watch, amc_peer_set_t *dead)
{
    struct pollfd pfd[AMC_PROC_WATCH_CHUNK];
    int           ranks[AMC_PROC_WATCH_CHUNK];
    int           i, n = 0, marked = 0;

    if (watch == NULL) {
        return 0;
    }
    for (i = 0; i < watch->count; i++) {
        const amc_proc_peer_t *peer = &watch->peers[i];

        if (amc_peer_set_test(dead, peer->rank)) {
            continue;
        }
        if (peer->pidfd < 0) {
            if (amc_proc_gone(peer->pid, peer->start)) {
                marked += amc_peer_set_mark(dead, peer->rank);
            }
            continue;
        }
        pfd[n].fd      = peer->pidfd;
        pfd[n].events  = POLLIN;
        pfd[n].revents = 0;
        ranks[n++]     = peer->rank;
        if (n == AMC_PROC_WATCH_CHUNK) {
            marked += amc_proc_watch_poll_now(pfd, ranks, n, dead);
            n = 0;
        }
    }
    if (n > 0) {
        marked += amc_proc_watch_poll_now(pfd, ranks, n, dead);
    }
    return marked;
}
