/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous data between ranks of a node, pulled by the receiver
 * (transport/shm_pull.c): the receiver's side of the transport's fetch and
 * release, and the steps transport/shm.c takes for the pulls.
 */
#ifndef AMC_SHM_PULL_H
#define AMC_SHM_PULL_H

#include "transport/shm_layout.h"

/* A pull arrives as a receive callback with a descriptor for which this
 * is true; fetch and release are the transport's (transport/transport.h),
 * with the same rules. */
static inline int amc_shm_pull_is_desc(const void *desc)
{
    return ((uintptr_t)desc & 1u) != 0;
}
int  amc_shm_pull_fetch(amc_shm_t *shm, void *desc, void *buf, size_t len,
                        amc_completion_t *comp);
void amc_shm_pull_release(amc_shm_t *shm, void *desc);

/* Pulls in flight either way (this rank's data, and its fetches that wait
 * for the sender's chunks). */
unsigned amc_shm_pulls(const amc_shm_t *shm);

/* For transport/shm.c. A slot of out for a pull of data (NULL: none free,
 * or out's peer takes no pulls): its descriptor is the message's data, and
 * unreserve gives it back if the message cannot go. out's lock held. */
amc_shm_pull_out_t *amc_shm_pull_reserve(amc_shm_t *shm, amc_shm_out_t *out, const void *data,
                                         size_t len, amc_completion_t *comp);
void        amc_shm_pull_unreserve(amc_shm_t *shm, amc_shm_out_t *out, amc_shm_pull_out_t *p);
/* in's records, made ready when its writer is adopted. */
void        amc_shm_pull_in_init(amc_shm_in_t *in);
/* Tells in's writer to send this rank no more pulls (every slot says so). */
void        amc_shm_pull_nopull(amc_shm_in_t *in);
/* A pull message arrived, or a resent piece of one: NULL, or why it is
 * malformed (the ring is then closed). closing: dropped unread, a pull's
 * sender told it is done. */
const char *amc_shm_pull_arrive(amc_shm_t *shm, amc_shm_in_t *in, const void *hdr,
                                size_t hdr_len, const void *data, size_t len, int closing);
const char *amc_shm_pull_resent(amc_shm_t *shm, amc_shm_in_t *in, const void *hdr,
                               size_t hdr_len, const void *data, size_t len, int closing);
/* The pulls in flight both ways: helps, completes; returns how many ended. */
int         amc_shm_pull_progress(amc_shm_t *shm);
/* For a sleeper: whether a progress would end one; and marking this
 * rank's slots asleep (on 1) or awake (0). */
int         amc_shm_pull_pending(amc_shm_t *shm);
void        amc_shm_pull_asleep(amc_shm_t *shm, uint32_t on);
/* Cross-memory attach was refused (EPERM, ENOSYS): no more pulls to or
 * from this rank; said once. */
void        amc_shm_refuse_pulls(amc_shm_t *shm, const char *what, int err);
/* Whether this process may pull (the kernel lets a peer of the same user
 * read and write its memory). */
int         amc_shm_pull_allowed(const amc_log_t *log);

#endif
