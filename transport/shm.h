/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mailboxes between ranks on one node: per (sender, receiver) pair a ring of
 * 64-byte cells in shared memory that one sender writes and one receiver
 * reads. A message is copied into the next cells and published by one
 * release store of its control word, last; the receiver runs the arrival
 * handler on the cells in place. No atomic read-modify-write per message
 * (UCX's shared-memory FIFO claims each element with a compare-and-swap on
 * the receiver's head): doc/design.md, "Mailboxes".
 *
 * Each rank owns one inbox, a memfd holding a ring for every other rank of
 * its node; pages are touched, so paid for, only by the senders that write.
 * Peers open it through /proc/PID/fd/N (same user, same kernel and pid
 * namespace): it has no name in any file system, so nothing is left behind
 * whatever kills the job. A pipe is the inbox's doorbell, rung by a sender
 * only while the receiver sleeps.
 *
 * The UCX transport uses this for eager messages to peers on its node that
 * fit a mailbox and for rendezvous data to them (transport/ucx.c);
 * everything else goes by UCX.
 */
#ifndef AMC_SHM_H
#define AMC_SHM_H

#include "base/log.h"
#include "transport/shm_layout.h"
#include "transport/shm_peer.h"
#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

/* The inbox of tp's rank, with a ring for each of nrings writers (the
 * ranks on its node but itself); place is its own place among them
 * (0..nrings), which names its ring in each peer's inbox. Messages reach
 * tp->recv_cb; dead peers are read from tp->dead, and locks are taken
 * while tp->lock_live says threads may meet. tag names the memfd (seen in
 * /proc/PID/maps). The memfd is sealed at its size: nobody can shrink it
 * under its mappings. */
int  amc_shm_create(amc_transport_t *tp, unsigned nrings, unsigned place, const char *tag,
                    const amc_log_t *log, amc_shm_t **shm_p);
void amc_shm_destroy(amc_shm_t *shm);

void amc_shm_addr(const amc_shm_t *shm, amc_shm_addr_t *addr);

/* Maps dest's inbox and registers in the ring that is this rank's there.
 * Before the first write it checks that the file it opened through
 * /proc is the inbox dest published (device, inode, seals, size, key);
 * pulls to dest go only where a pidfd showed that dest's pid is still
 * dest. Any failure (another user, another
 * pid namespace, a pid reused, a bad address, dest never added) is
 * logged (debug; error where what it opened is not what dest published):
 * the caller talks to dest by UCX. */
int  amc_shm_connect(amc_shm_t *shm, int dest, amc_shm_out_t **out_p);

/* An eager message to out's peer: AMC_SUCCESS (copied: hdr and data may be
 * reused), AMC_INPROGRESS (the ring is full: queued, comp is called from a
 * later progress once it is copied), or AMC_SHM_TOO_BIG. Never blocks. */
int  amc_shm_send(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                  const void *data, size_t len, amc_completion_t *comp);

/* amc_shm_send where it needs no queue: threads that cannot meet, a
 * message that fits, no sends waiting and room in the ring. AMC_SUCCESS,
 * or AMC_SEND_NOT_NOW and nothing was written. */
int  amc_shm_send_now(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                      const void *data, size_t len);

/* Rendezvous data to out's peer, pulled by it (transport/shm_pull.c):
 * a message names the data and a slot of out's ring, the receiver's fetch
 * reads it straight into place with process_vm_readv, and this rank, if it
 * is in progress meanwhile, writes part of it with process_vm_writev.
 * AMC_INPROGRESS: comp is called from a later progress, once the data is
 * in place or dropped; AMC_SHM_TOO_BIG: no pull to this peer now (it does
 * not allow it, or AMC_SHM_PULLS are in flight): the caller sends it
 * another way. Never blocks. */
int  amc_shm_pull_send(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                       const void *data, size_t len, amc_completion_t *comp);

/* AMC_SHM_PULL=0: neither pull from peers nor be pulled from (rendezvous
 * data goes by UCX). Before amc_shm_addr. */
void amc_shm_without_pull(amc_shm_t *shm);

/* The transport's take_now on src's ring (transport/transport.h): a
 * malformed or skip word is progress's to handle (AMC_TAKE_OTHER);
 * AMC_SHM_NO_RING where src never wrote to this rank (its messages may come
 * by UCX). */
#define AMC_SHM_NO_RING 4
int  amc_shm_take_now(amc_shm_t *shm, int src, amc_take_fn_t take, void *arg);

/* src's ring into this rank (NULL: src has not written to it yet), for
 * amc_shm_take_in: amc_shm_take_now without the lookup. The ring stays
 * until amc_shm_destroy. */
amc_shm_in_t *amc_shm_in_find(amc_shm_t *shm, int src);
int           amc_shm_take_in(amc_shm_t *shm, amc_shm_in_t *in, amc_take_fn_t take, void *arg);

/* Runs the handlers of the messages waiting in the inbox and copies queued
 * sends into rings that have room; returns how many it did. closing: the
 * messages are dropped unread (teardown). */
int  amc_shm_progress(amc_shm_t *shm, int closing);

/* Non-zero if a progress would find nothing to do: no message, no new
 * writer, no queued send. A look without a lock, so only while threads
 * cannot meet (tp->lock_live down); 0 otherwise. Costs a load and a
 * compare per ring: a spinning wait calls it on every pass. */
int  amc_shm_idle(amc_shm_t *shm);

/* Sleeping: begin() announces the sleeper and returns non-zero if a message
 * came meanwhile (then do not sleep, and call end() all the same); while
 * announced, a sender rings bell_fd (readable). end() withdraws. A sleep
 * lasts at most amc_shm_sleep_max_ms (-1: no bound of the mailboxes'). */
int  amc_shm_sleep_begin(amc_shm_t *shm);
int  amc_shm_sleep_max_ms(const amc_shm_t *shm);
void amc_shm_sleep_end(amc_shm_t *shm);
int  amc_shm_bell_fd(const amc_shm_t *shm);

/* Sends queued for rings that were full (teardown waits for them). */
unsigned amc_shm_queued(const amc_shm_t *shm);

/* The largest header and data a mailbox message carries, and the memory:
 * the inbox's size (each ring's pages are touched only once its writer
 * writes) and one ring's. */
size_t amc_shm_max_message(void);
size_t amc_shm_ring_bytes(void);
size_t amc_shm_inbox_bytes(unsigned nrings); /* 0: more than this machine addresses */

/* Rings this rank writes and reads so far (amc_stat_get, amc_info). */
unsigned amc_shm_rings_out(const amc_shm_t *shm);
unsigned amc_shm_rings_in(const amc_shm_t *shm);

/* For the fuzz target and the unit tests: forge the raw cells of the ring
 * out writes, as a broken or hostile peer would: n bytes at the ring's
 * next free cell (a control word first), published as they are. */
int  amc_shm_forge(amc_shm_out_t *out, const void *bytes, size_t n);
/* The position the ring's next message has (its honest control word's low
 * 32 bits), and whether [p, p + len) lies inside shm's inbox. */
uint64_t amc_shm_forge_position(const amc_shm_out_t *out);
int  amc_shm_owns(const amc_shm_t *shm, const void *p, size_t len);
/* For the unit tests: shm behaves as a process that cannot register for
 * membarrier (senders to it and from it fence on every message). Before
 * any connect. */
void amc_shm_without_membarrier(amc_shm_t *shm);
/* The control word of an honest message (for forging a dishonest one), of
 * an honest pull (its data an amc_shm_pull_desc_t: address, length, 64
 * bits each; slot, chunk, 32 bits each), and of a resent piece of a pull
 * (its header an amc_shm_pull_piece_t). */
uint64_t amc_shm_ctl_word(uint64_t position, size_t hdr_len, size_t len);
uint64_t amc_shm_ctl_pull_word(uint64_t position, size_t hdr_len);
uint64_t amc_shm_ctl_data_word(uint64_t position, size_t len);

#endif
