/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process fake transport: N ranks in one process, sends are queued and the
 * test decides which queued message is delivered next. For unit tests of the
 * handler state machines only; never a stand-in for UCX elsewhere.
 */
#ifndef AMC_FAKE_H
#define AMC_FAKE_H

#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

typedef struct amc_fake_fabric amc_fake_fabric_t;

typedef enum {
    AMC_FAKE_COMPLETE_ON_DELIVERY, /* send completion runs after the receiver's handler */
    AMC_FAKE_COMPLETE_ON_SEND,     /* send returns done at once, like a UCX short send */
    /* Every completion is an event of its own, queued and delivered like a
     * message, so a test can put anything between it and its cause: an
     * eager send completes some time after its message was delivered; a
     * rendezvous fetch returns in progress and queues a pull, which copies
     * the data and then queues the receiver's fetch completion and the
     * sender's send completion (either may come first); a released
     * rendezvous message queues the sender's completion. Unthreaded only. */
    AMC_FAKE_COMPLETE_LATER
} amc_fake_completion_t;

int  amc_fake_fabric_create(int nranks, amc_fake_completion_t completion,
                            amc_fake_fabric_t **fabric_p);
/* Ranks run on threads of their own: each rank's progress delivers its
 * messages and runs its send completions, sleep waits for them; deliver()
 * and hold() are for the unthreaded fabric only. */
int  amc_fake_fabric_create_threaded(int nranks, amc_fake_fabric_t **fabric_p);
void amc_fake_fabric_destroy(amc_fake_fabric_t *fabric);

/* The transport of one rank; the context that takes it destroys it. */
int  amc_fake_transport_create(amc_fake_fabric_t *fabric, int rank, amc_transport_t **tp_p);

/* Messages that may be delivered now (not held back). */
size_t amc_fake_deliverable(const amc_fake_fabric_t *fabric);

/* Delivers the index-th deliverable message (or completion, or pull) in the
 * order they were queued; 0 if none. */
int  amc_fake_deliver(amc_fake_fabric_t *fabric, size_t index);

/* What a queued event is, for a test that explores delivery orders: the
 * rank it runs at (a message's destination, the sender for a completion,
 * the receiver for a pull) and its name: the rank whose step queued it (a
 * send, a delivery, a fetch or a release there) and how many events that
 * rank's steps had queued before. The library is deterministic per rank,
 * so two runs in which every rank saw the same events in the same order
 * name their events alike. */
enum {
    AMC_FAKE_EV_MESSAGE,
    AMC_FAKE_EV_COMPLETION,
    AMC_FAKE_EV_PULL
};

typedef struct amc_fake_event {
    int           rank;
    int           creator;
    unsigned long serial;
    int           kind;   /* AMC_FAKE_EV_* */
} amc_fake_event_t;

/* The index-th deliverable event (as amc_fake_deliver counts); 0 if none. */
int  amc_fake_event(const amc_fake_fabric_t *fabric, size_t index, amc_fake_event_t *ev);

/* Holds back (or releases) every message addressed to rank. */
void amc_fake_hold(amc_fake_fabric_t *fabric, int rank, int hold);

/* rank dies: every other rank's transport marks it dead (as a detector of
 * the UCX transport would) and drops what it sends to it from then on.
 * What is already queued stays: messages in flight when a process dies may
 * still arrive. */
void amc_fake_kill(amc_fake_fabric_t *fabric, int rank);

/* rank dies instead of making its sends-th send from now (0: its next;
 * -1: it lives): a failure between any two messages, also in the middle
 * of one step's messages. A killed rank sends and receives nothing more.
 * amc_fake_sent: the sends rank made so far. */
void          amc_fake_kill_after(amc_fake_fabric_t *fabric, int rank, long sends);
unsigned long amc_fake_sent(const amc_fake_fabric_t *fabric, int rank);
int           amc_fake_killed(const amc_fake_fabric_t *fabric, int rank);

/* Queues raw bytes as a message from src to dst, as a broken peer would. */
int  amc_fake_inject(amc_fake_fabric_t *fabric, int src, int dst,
                     const void *hdr, size_t hdr_len);

/* The same with data: mode AMC_SEND_EAGER copies len bytes of data now;
 * AMC_SEND_RNDV delivers a descriptor whose data stays in the caller's
 * buffer (which must live as long as the fabric) until the receiver fetches
 * it. Nothing completes at src. For the fuzz target's forged messages. */
int  amc_fake_inject_data(amc_fake_fabric_t *fabric, int src, int dst, const void *hdr,
                          size_t hdr_len, const void *data, size_t len, unsigned mode);

/* Messages whose header storage changed between send and delivery: a sender
 * that reused header memory before its send completed. */
unsigned long amc_fake_header_violations(const amc_fake_fabric_t *fabric);

unsigned long amc_fake_delivered(const amc_fake_fabric_t *fabric);

/* A discrete-event clock with a LogGP cost model, for the scale simulator
 * (bench/amc_sim.c). Times are integer picoseconds (G: per byte), so that
 * a run is exactly reproducible and LogGOPSim, whose clock is an integer
 * too, can be given the same parameters. */
typedef struct amc_fake_loggp {
    uint64_t L;   /* wire latency */
    uint64_t o;   /* CPU overhead per send and per receive */
    uint64_t g;   /* gap between two messages on one NIC */
    uint64_t G;   /* gap per byte after the first */
} amc_fake_loggp_t;

/* Switches an unthreaded fabric with nothing queued to timed delivery: a
 * send starts once the sender's CPU and NIC are free (and not before the
 * clock), takes o of its CPU and g + (s-1)G of its NIC, and arrives o + L
 * later; a message is received once the receiver's CPU and NIC are free,
 * taking o + (s-1)G of the CPU and g + (s-1)G of the NIC, and its handler
 * runs after that. Ranks r and q share a node when r / node_size ==
 * q / node_size (node_size 0: all on one node); intra applies then, inter
 * otherwise. Within a node each rank has a "NIC" of its own (shared
 * memory); across nodes the ranks of a node share its one NIC (g and G
 * are the node's), which is what node-aware algorithms save. amc_fake_deliver then ignores its index and delivers the
 * earliest message (ties in send order), held ranks are not supported, and
 * amc_fake_event is not. */
int      amc_fake_set_loggp(amc_fake_fabric_t *fabric, const amc_fake_loggp_t *intra,
                            const amc_fake_loggp_t *inter, int node_size);
/* The clock: the time of the last delivery. */
uint64_t amc_fake_now(const amc_fake_fabric_t *fabric);
/* When rank's CPU is free: after its last send or receive overhead. */
uint64_t amc_fake_rank_time(const amc_fake_fabric_t *fabric, int rank);
/* Back to time 0 everywhere (nothing may be queued), for the next run. */
void     amc_fake_clock_reset(amc_fake_fabric_t *fabric);
/* Bytes the fabric holds per rank (its arrays and the rank's transport). */
size_t   amc_fake_bytes_per_rank(const amc_fake_fabric_t *fabric);

/* Eager messages with data delivered to rank so far. */
unsigned long amc_fake_eager_data(const amc_fake_fabric_t *fabric, int rank);

/* Rendezvous messages delivered but neither fetched nor released: a handler
 * that lost a descriptor (the sender would wait for ever). COMPLETE_LATER:
 * also those whose pull is still queued. */
unsigned long amc_fake_rndv_pending(const amc_fake_fabric_t *fabric);

#endif
