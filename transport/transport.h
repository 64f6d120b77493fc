/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the collectives need from a transport: send an active message (a
 * header and optional data) to a rank, run arrival handlers from progress,
 * and sleep until something arrives. Two implementations: UCX (ucx.c) and
 * an in-process fake for unit tests of the handler state machines (fake.c).
 */
#ifndef AMC_TRANSPORT_H
#define AMC_TRANSPORT_H

#include "transport/node_map.h"
#include "transport/peer_set.h"

#include <stddef.h>

typedef struct amc_transport amc_transport_t;

/* Send completion: the header (and data) may be reused from now on. The
 * sender embeds this in the object that owns the header and finds that
 * object back from it, so a send carries one pointer and allocates nothing. */
typedef struct amc_completion amc_completion_t;
struct amc_completion {
    void (*fn)(amc_completion_t *self, int status);
};

#define amc_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr) - __builtin_offsetof(_type, _member)))

/* Send modes. RNDV leaves the data at the sender until the receiver fetches
 * it into its final place (the patent's receiver-driven transfer; UCX's AM
 * rendezvous): no intermediate copy, and nothing held at the receiver. */
enum {
    AMC_SEND_EAGER = 0,
    AMC_SEND_RNDV  = 1
};

/* send_now's answers when the message cannot go at once (positive: no
 * status of the API): not now, or never to this peer (no way to it sends
 * now: UCX carries its messages), so that a caller may stop asking. */
#define AMC_SEND_NOT_NOW 1
#define AMC_SEND_NEVER   2

/* take_now's look at the next message from a peer: the caller's take
 * decides whether it is the one its call waits for. Its answers besides
 * AMC_SUCCESS (taken: its place is free again): */
#define AMC_TAKE_EMPTY 1 /* nothing from src yet */
#define AMC_TAKE_OTHER 2 /* something else is next (take left it, or the
                          * transport's own): progress runs it */
#define AMC_TAKE_NEVER 3 /* src's messages never come this way */

/* Returns 1 where the message is the caller's and it used it (the bytes are
 * valid only during the call), 0 to leave it where it is. */
typedef int (*amc_take_fn_t)(void *arg, const void *hdr, size_t hdr_len, const void *data,
                             size_t len);

/* Arrival. The header is valid only during the call. With desc == NULL the
 * len bytes of data are here and also valid only during the call; with desc
 * != NULL they are still at the sender, and the handler must eventually pass
 * desc to fetch() or release(), exactly once. */
typedef void (*amc_recv_cb_t)(void *arg, const void *hdr, size_t hdr_len,
                              const void *data, size_t len, void *desc);

typedef struct amc_transport_ops {
    /* AMC_SUCCESS: done, comp is not called; AMC_INPROGRESS: comp is called
     * from a later progress; anything else: failed, comp is not called. hdr
     * must stay valid until completion (UCX 1.13 does not copy it). */
    int  (*send)(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                 const void *data, size_t len, unsigned mode, amc_completion_t *comp);
    /* An eager send that is copied out now or not at all: AMC_SUCCESS
     * (done: hdr and data may be reused, nothing completes later) or
     * AMC_SEND_NOT_NOW (nothing was sent; send makes it another way).
     * For a caller whose call ends with the send, and which then keeps
     * no state for it; only while threads cannot meet (lock_live unset),
     * else not now. AMC_SEND_NEVER: nothing was sent, and no message to
     * dest will be. NULL: never. */
    int  (*send_now)(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                     const void *data, size_t len);
    /* The next message from src where it waits in a mailbox, offered to
     * take without progress's loop and dispatch: AMC_SUCCESS (taken) or an
     * AMC_TAKE_* answer. Only while threads cannot meet (lock_live unset,
     * else AMC_TAKE_OTHER). NULL: never. */
    int  (*take_now)(amc_transport_t *tp, int src, amc_take_fn_t take, void *arg);
    /* One peer's send_now and take_now without looking the peer up each
     * time: chan_get gives a handle for it (NULL: none, not a peer of
     * this node's mailboxes, or not now: ask again later), valid while the
     * transport lives, that chan_send and chan_take take in place of the
     * rank, with send_now's and take_now's answers and rules (a direction
     * not connected yet answers as they do). They do not
     * look whether the peer died (its messages then wait where it never
     * reads them): the caller watches tp->dead. NULL: none. */
    void *(*chan_get)(amc_transport_t *tp, int peer);
    int   (*chan_send)(amc_transport_t *tp, void *chan, const void *hdr, size_t hdr_len,
                       const void *data, size_t len);
    int   (*chan_take)(amc_transport_t *tp, void *chan, amc_take_fn_t take, void *arg);
    /* Pulls a remote message's data into buf (len bytes, its full length):
     * AMC_SUCCESS done, comp not called; AMC_INPROGRESS comp later; else failed
     * (desc is consumed either way). */
    int  (*fetch)(amc_transport_t *tp, void *desc, void *buf, size_t len,
                  amc_completion_t *comp);
    /* Drops a remote message without reading it. */
    void (*release)(amc_transport_t *tp, void *desc);
    /* Runs pending handlers; returns non-zero if anything happened. */
    int  (*progress)(amc_transport_t *tp);
    /* Blocks until an event may be pending or timeout_ms passes. */
    void (*sleep)(amc_transport_t *tp, int timeout_ms);
    /* Ends a sleep in another thread (any thread may call it). */
    void (*wake)(amc_transport_t *tp);
    /* Looks for dead peers now, without blocking, and marks them in
     * tp->dead; returns how many it newly marked. Any thread; the caller
     * limits how often (it may cost system calls). NULL: nothing to look at. */
    int  (*check_peers)(amc_transport_t *tp);
    /* Teardown of this rank's side: talks to the peers that are alive, and
     * returns within a bound whatever happened to the others. */
    void (*destroy)(amc_transport_t *tp);
} amc_transport_ops_t;

struct amc_transport {
    const amc_transport_ops_t *ops;
    const char                *name;
    int                        rank;
    int                        size;
    int                        local_size;  /* ranks on this node, for the wait policy */
    amc_node_map_t             nodes;       /* each rank's node (empty: one node) */
    amc_recv_cb_t              recv_cb;
    void                      *recv_arg;
    const int                 *lock_live;   /* set by the context: threads may meet now */
    /* Ranks known dead, marked by the transport's detectors (and by
     * check_peers). A send to a dead rank is dropped, never queued: it would
     * never complete. The collectives read it (am_coll/context/peer_watch.c). */
    amc_peer_set_t             dead;
    /* Endpoints this rank created so far (atomic): one per peer it sent to,
     * on the first message (doc/design.md, "Scale"); amc_stat_get reads it. */
    unsigned long              eps_created;
    /* Progress passes that cost what one pass of UCX alone costs (0: 1):
     * the automatic spin of the waits (AMC_SPIN_COUNT) is that many times
     * longer in passes, about the same in time. */
    unsigned                   pass_scale;
    /* Messages a progress pass takes from one mailbox ring (0: 1), set by
     * the context. One where every rank of the node has a core: the peer
     * is writing its next message meanwhile, and the call waiting on this
     * one should see it at once. More where ranks share cores: a peer that
     * is descheduled wrote its messages whole, and a rank's time slice is
     * best spent taking them all (transport/shm.c, amc_shm_read). */
    unsigned                   poll_batch;
    /* Mailbox rings (transport/shm.h) this rank writes into and reads from
     * so far (atomic): one per peer on its node, on first contact. */
    unsigned long              mboxes_out;
    unsigned long              mboxes_in;
};

static inline void amc_transport_set_recv(amc_transport_t *tp, amc_recv_cb_t cb, void *arg)
{
    tp->recv_cb  = cb;
    tp->recv_arg = arg;
}

#endif
