/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The peers of the node as they published themselves (transport/shm_peer.h).
 */
#define _GNU_SOURCE
#include "transport/shm_peer.h"
#include "transport/proc_watch.h"
#include "base/clock.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int amc_shm_file_identity(int fd, uint64_t *dev, uint64_t *ino)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        return -1;
    }
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return 0;
}

/* Whether a pidfd's process has exited: readable then. */
static int amc_shm_pidfd_exited(int pidfd)
{
    struct pollfd p = { .fd = pidfd, .events = POLLIN, .revents = 0 };

    return (poll(&p, 1, 0) != 0);
}

/* Whether addr is one this build reads, of a layout it can map. */
static int amc_shm_addr_ok(const amc_shm_addr_t *addr)
{
    return (addr->magic == AMC_SHM_MAGIC) && (addr->version == AMC_SHM_VERSION) &&
           (addr->ncells == AMC_SHM_NCELLS) && (addr->nrings > 0) &&
           (addr->nrings <= (1u << 20)) && (addr->place <= addr->nrings) && (addr->pid > 0) &&
           (addr->key != 0) && !(addr->flags & ~(AMC_SHM_ADDR_MEMBARRIER | AMC_SHM_ADDR_PULL));
}

int amc_shm_peer_add(amc_shm_t *shm, int rank, const amc_shm_addr_t *addr)
{
    amc_shm_peer_t *peer;

    if (!amc_shm_addr_ok(addr) || (addr->nrings != shm->nrings) || (addr->place == shm->place) ||
        (rank < 0) || (rank >= shm->tp->size) || (rank == shm->tp->rank)) {
        amc_debug(&shm->log, "rank %d's mailbox address is not one this build reads, or not "
                  "of this node's; UCX carries its messages", rank);
        return AMC_ERR_ARG;
    }
    peer = &shm->peers[amc_shm_ring_of(addr->place, shm->place)];
    if (peer->rank >= 0) {
        amc_debug(&shm->log, "ranks %d and %d published the same place on the node; UCX "
                  "carries the second's messages", peer->rank, rank);
        return AMC_ERR_ARG;
    }
    peer->addr = *addr;
    __atomic_store_n(&peer->rank, rank, __ATOMIC_RELEASE);
    (void)amc_peer_set_mark(&shm->known, rank);
    return AMC_SUCCESS;
}

int amc_shm_knows(const amc_shm_t *shm, int rank)
{
    return amc_peer_set_test(&shm->known, rank);
}

amc_shm_peer_t *amc_shm_peer_find(amc_shm_t *shm, int rank)
{
    unsigned i;

    for (i = 0; i < shm->nrings; i++) {
        if (__atomic_load_n(&shm->peers[i].rank, __ATOMIC_ACQUIRE) == rank) {
            return &shm->peers[i];
        }
    }
    return NULL;
}

/* Opens descriptor fd of peer's process through /proc (the kernel lets the
 * same user only) and checks that it is the file peer published; -1 and
 * *why set if not. */
int amc_shm_peer_open(const amc_shm_peer_t *peer, int32_t fd, uint64_t dev, uint64_t ino,
                      int flags, const char **why)
{
    char     path[64];
    uint64_t d, i;
    int      mine;

    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)peer->addr.pid, (int)fd);
    mine = open(path, flags | O_CLOEXEC);
    if (mine < 0) {
        *why = strerror(errno);
        return -1;
    }
    if ((amc_shm_file_identity(mine, &d, &i) != 0) || (d != dev) || (i != ino)) {
        close(mine);
        *why = "not the file it published (its pid is another process's now?)";
        return -1;
    }
    return mine;
}

/* Takes a pidfd of peer's process, checked to be it: the pidfd first, then
 * its inbox through /proc is the one it published, then the pidfd still
 * says alive, so the pid named that process all along (a pid is not
 * reused before its process is reaped). Once per peer. */
int amc_shm_peer_check(amc_shm_t *shm, amc_shm_peer_t *peer)
{
    const char *why = NULL;
    int         pidfd, fd, none = -1;

    if (__atomic_load_n(&peer->pidfd, __ATOMIC_ACQUIRE) >= 0) {
        return AMC_SUCCESS;
    }
    pidfd = amc_proc_pidfd_open((pid_t)peer->addr.pid);
    if (pidfd < 0) {
        amc_debug(&shm->log, "pidfd_open of rank %d (pid %d): %s", peer->rank,
                  (int)peer->addr.pid, strerror(errno));
        return AMC_ERR_TRANSPORT;
    }
    fd = amc_shm_peer_open(peer, peer->addr.inbox_fd, peer->addr.inbox_dev, peer->addr.inbox_ino,
                           O_RDONLY, &why);
    if ((fd < 0) || amc_shm_pidfd_exited(pidfd)) {
        if (fd >= 0) {
            close(fd);
            why = "it exited";
        }
        close(pidfd);
        amc_debug(&shm->log, "rank %d's process (pid %d): %s", peer->rank, (int)peer->addr.pid,
                  why);
        return AMC_ERR_TRANSPORT;
    }
    close(fd);
    __atomic_store_n(&peer->alive_usec, amc_clock_usec(), __ATOMIC_RELAXED);
    if (!__atomic_compare_exchange_n(&peer->pidfd, &none, pidfd, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        close(pidfd); /* another thread's is the same process */
    }
    return AMC_SUCCESS;
}

/* How long a pidfd's word that a peer lives stands for a system call that
 * names its pid: a pid is reused only after its process died, was reaped
 * and the pid allocator went round the pid space to it, which takes far
 * longer. A look costs a system call (0.35 us here, a tenth of a 32 KiB
 * pull): one per peer per period. */
#define AMC_SHM_ALIVE_USEC 100

int amc_shm_peer_alive(amc_shm_t *shm, amc_shm_peer_t *peer)
{
    int      pidfd = __atomic_load_n(&peer->pidfd, __ATOMIC_ACQUIRE);
    uint64_t now;

    if ((pidfd < 0) || amc_peer_set_test(&shm->tp->dead, peer->rank)) {
        return 0;
    }
    now = amc_clock_usec();
    if (now - __atomic_load_n(&peer->alive_usec, __ATOMIC_RELAXED) < AMC_SHM_ALIVE_USEC) {
        return 1;
    }
    if (amc_shm_pidfd_exited(pidfd)) {
        (void)amc_peer_set_mark(&shm->tp->dead, peer->rank);
        return 0;
    }
    __atomic_store_n(&peer->alive_usec, now, __ATOMIC_RELAXED);
    return 1;
}

int amc_shm_peer_exited(amc_shm_t *shm, amc_shm_peer_t *peer)
{
    int pidfd = __atomic_load_n(&peer->pidfd, __ATOMIC_ACQUIRE);

    if (pidfd < 0) {
        return amc_peer_set_test(&shm->tp->dead, peer->rank);
    }
    return amc_shm_pidfd_exited(pidfd);
}

void amc_shm_bell_ring(amc_shm_t *shm, amc_shm_peer_t *peer)
{
    static const char one = 1;
    const char       *why = NULL;
    int               fd  = __atomic_load_n(&peer->bell, __ATOMIC_ACQUIRE), none = -1, mine;

    if (amc_peer_set_test(&shm->tp->dead, peer->rank)) {
        return;
    }
    if (fd < 0) {
        /* read-write: a read end of our own, so a write never finds the
         * pipe without readers (EPIPE, and SIGPIPE, once its owner died) */
        mine = amc_shm_peer_open(peer, peer->addr.bell_fd, peer->addr.bell_dev,
                                 peer->addr.bell_ino, O_RDWR | O_NONBLOCK, &why);
        if (mine < 0) {
            if (!__atomic_exchange_n(&peer->bell_warned, 1, __ATOMIC_RELAXED)) {
                amc_warn(&shm->log, "rank %d's doorbell (pid %d, fd %d): %s; it wakes by its "
                         "own timeouts", peer->rank, (int)peer->addr.pid,
                         (int)peer->addr.bell_fd, why);
            }
            return;
        }
        if (!__atomic_compare_exchange_n(&peer->bell, &none, mine, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            close(mine);
        }
        fd = __atomic_load_n(&peer->bell, __ATOMIC_ACQUIRE);
    }
    /* a full pipe already wakes it */
    (void)!write(fd, &one, 1);
}

