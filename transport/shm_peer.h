/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The peers of the node as they published themselves: the only source of
 * a peer's pid, descriptors and key that the mailboxes use (never what a
 * ring says, which its writer or any process of the user may write), and
 * the checks before a system call that names a peer's pid or opens its
 * files through /proc: doc/design.md, "What the mailboxes trust".
 */
#ifndef AMC_SHM_PEER_H
#define AMC_SHM_PEER_H

#include "transport/shm_layout.h"

#include <sys/types.h>

/* The ring of the rank at place writer in the inbox of the rank at place
 * owner: the owner has none of its own. */
static inline unsigned amc_shm_ring_of(unsigned writer, unsigned owner)
{
    return writer - (writer > owner);
}

/* What rank, a peer of this node, published (its amc_shm_addr), before
 * any message to or from it. AMC_ERR_ARG (logged at debug level; that peer
 * then talks by UCX): an address this build does not read, or a place
 * that is not one of this node's or is taken. */
int  amc_shm_peer_add(amc_shm_t *shm, int rank, const amc_shm_addr_t *addr);

/* Whether rank was added: its messages may come by mailbox. */
int  amc_shm_knows(const amc_shm_t *shm, int rank);
amc_shm_peer_t *amc_shm_peer_find(amc_shm_t *shm, int rank);

/* Opens descriptor fd of peer's process through /proc (the kernel lets the
 * same user only) and checks that it is the file peer published (dev,
 * ino); -1 and *why set if not. */
int  amc_shm_peer_open(const amc_shm_peer_t *peer, int32_t fd, uint64_t dev, uint64_t ino,
                       int flags, const char **why);

/* Takes a pidfd of peer's process, checked to be it: AMC_SUCCESS, or
 * AMC_ERR_TRANSPORT (logged at debug level). Once per peer. */
int  amc_shm_peer_check(amc_shm_t *shm, amc_shm_peer_t *peer);

/* Whether peer's process is alive and still the one that published its
 * address: its pidfd said so within the last AMC_SHM_ALIVE_USEC. Before
 * every system call that names its pid. */
int  amc_shm_peer_alive(amc_shm_t *shm, amc_shm_peer_t *peer);

/* Whether peer's process has exited (its pidfd says so; without one, it
 * counts as gone once known dead). */
int  amc_shm_peer_exited(amc_shm_t *shm, amc_shm_peer_t *peer);

/* Rings peer's doorbell: never for a peer known dead, never through a
 * descriptor not checked to be the pipe it published, never with a write
 * that can raise SIGPIPE. */
void amc_shm_bell_ring(amc_shm_t *shm, amc_shm_peer_t *peer);

/* fstat's device and inode of fd: 0, or -1 (errno). */
int  amc_shm_file_identity(int fd, uint64_t *dev, uint64_t *ino);

#endif
