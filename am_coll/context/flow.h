/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eager-token flow control (the patent's tokens). A rank may have at most
 * AMC_EAGER_TOKENS eager data messages to one peer whose memory that peer
 * has not given back; without a token, data goes by rendezvous (only the
 * header travels, the data waits at the source until the receiver pulls it).
 * An eager message takes a token per AMC_RNDV_THRESH bytes begun (one below
 * it; more where AMC_RNDV_THRESH_NODE lets one past it go to a rank of the
 * node), so a sender that runs ahead, a bcast root say, makes a late
 * receiver hold at most tokens x AMC_RNDV_THRESH bytes. Receivers give
 * tokens back on the headers of their own data messages to that peer, or,
 * once half a window is owed, with a header-only credit message.
 */
#ifndef AMC_FLOW_H
#define AMC_FLOW_H

#include "base/sparse.h"
#include "base/spinlock.h"
#include "handlers/wire.h"
#include "transport/transport.h"

#include <stdint.h>

struct amc_flow;

typedef struct amc_flow_credit {
    amc_completion_t    comp;
    amc_wire_packed_t   wire;     /* alive until its send completes */
    struct amc_flow    *flow;
    int                 peer;
    int                 busy;
    int                 due;      /* half a window owed: flush sends it */
} amc_flow_credit_t;

/* What flow control keeps of one peer: made on first contact (a send to
 * it, or its data arriving), never for the others (doc/design.md, "Scale"). */
typedef struct amc_flow_peer {
    uint32_t              tokens;  /* eager sends we may still make to it */
    uint32_t              owed;    /* tokens we hold for it */
    amc_flow_credit_t     credit;  /* the credit message */
    struct amc_flow_peer *next;    /* every record, for flush and cleanup */
} amc_flow_peer_t;

typedef struct amc_flow {
    const int          *live;      /* the context's "threads may meet" flag */
    amc_transport_t    *tp;        /* credits go through it */
    unsigned            window;    /* AMC_EAGER_TOKENS */
    size_t              unit;      /* AMC_RNDV_THRESH: the bytes of a token (0: 1) */
    int                 any_due;   /* some record's credit.due is set */
    amc_sparse_t        peers;     /* rank -> amc_flow_peer_t */
    amc_flow_peer_t    *list;      /* every record (pushed atomically) */
    unsigned            nrecords;  /* atomic */
} amc_flow_t;

int      amc_flow_init(amc_flow_t *flow, amc_transport_t *tp, int npeers, unsigned window,
                       size_t unit, const int *live);

/* The tokens an eager message of bytes takes, and gives back: the sender
 * and the receiver count them alike from its length. */
static inline uint32_t amc_flow_cost(const amc_flow_t *flow, size_t bytes)
{
    size_t n;

    if ((bytes <= flow->unit) || (flow->unit == 0)) {
        return 1;
    }
    n = (bytes + flow->unit - 1) / flow->unit;
    return (n > UINT32_MAX) ? UINT32_MAX : (uint32_t)n;
}
void     amc_flow_cleanup(amc_flow_t *flow);

/* The record of peer, made at first contact. NULL only when out of memory:
 * the callers then act as if no token were there, which costs eager sends
 * and never correctness (a data message goes by rendezvous instead). */
amc_flow_peer_t *amc_flow_peer_make(amc_flow_t *flow, int peer);

/* The operations below run on every data message: inline, the record found
 * with one table lookup, made out of line only at first contact. */
static inline amc_flow_peer_t *amc_flow_peer_of(amc_flow_t *flow, int peer)
{
    amc_flow_peer_t *rec = (amc_flow_peer_t *)amc_sparse_get(&flow->peers, peer);

    return (rec != NULL) ? rec : amc_flow_peer_make(flow, peer);
}

/* Sender: 1 if an eager data message to peer that costs n tokens may go
 * now (they are used). */
static inline int amc_flow_take_n(amc_flow_t *flow, int peer, uint32_t n)
{
    amc_flow_peer_t *rec = amc_flow_peer_of(flow, peer);

    return (rec != NULL) && amc_live_take_n_u32(&rec->tokens, n, flow->live);
}

/* The same for a message below a token's bytes. */
static inline int amc_flow_take(amc_flow_t *flow, int peer)
{
    return amc_flow_take_n(flow, peer, 1);
}

/* Sender: the tokens to give back to peer on a header going there now. */
static inline uint32_t amc_flow_piggyback(amc_flow_t *flow, int peer)
{
    /* no record: nothing of peer's was ever held here, so nothing is owed */
    amc_flow_peer_t *rec = (amc_flow_peer_t *)amc_sparse_get(&flow->peers, peer);

    if ((rec == NULL) || (__atomic_load_n(&rec->owed, __ATOMIC_RELAXED) == 0)) {
        return 0;
    }
    return amc_live_xchg_u32(&rec->owed, 0, flow->live);
}

/* Receiver of a header: peer gave back credits tokens. */
static inline void amc_flow_give(amc_flow_t *flow, int peer, uint32_t credits)
{
    amc_flow_peer_t *rec;

    if (credits > 0) {
        rec = amc_flow_peer_of(flow, peer);
        if (rec != NULL) {
            (void)amc_live_add_u32(&rec->tokens, credits, flow->live);
        }
    }
}

void amc_flow_release_due(amc_flow_t *flow, amc_flow_peer_t *rec);

/* Receiver: the memory of one eager data message from peer, that cost n
 * tokens, is released. A credit message that falls due is sent by the next
 * amc_flow_flush: this may run under a lock, and the transport is not
 * called under one (defer.h). */
static inline void amc_flow_release_n(amc_flow_t *flow, int peer, uint32_t n)
{
    amc_flow_peer_t *rec = amc_flow_peer_of(flow, peer);

    if (rec == NULL) {
        return; /* the peer keeps tokens less: it only sends by rendezvous sooner */
    }
    if ((uint64_t)amc_live_add_u32(&rec->owed, n, flow->live) * 2 >= flow->window) {
        amc_flow_release_due(flow, rec);
    }
}

/* The same for a message of len bytes. */
static inline void amc_flow_release_len(amc_flow_t *flow, int peer, size_t len)
{
    amc_flow_release_n(flow, peer, amc_flow_cost(flow, len));
}

/* The same for a message below a token's bytes. */
static inline void amc_flow_release(amc_flow_t *flow, int peer)
{
    amc_flow_release_n(flow, peer, 1);
}

/* For tests and statistics: the tokens this rank has for peer and those it
 * owes it (a peer without a record: a full window, nothing owed). */
uint32_t amc_flow_tokens(const amc_flow_t *flow, int peer);
uint32_t amc_flow_owed(const amc_flow_t *flow, int peer);

/* Peers with a record, and the bytes flow control holds (records and table). */
unsigned amc_flow_peers(const amc_flow_t *flow);
size_t   amc_flow_bytes(const amc_flow_t *flow);

/* Sends the credit messages that fell due; with no amcoll lock held. */
void     amc_flow_flush_slow(amc_flow_t *flow);

static inline void amc_flow_flush(amc_flow_t *flow)
{
    if (__atomic_load_n(&flow->any_due, __ATOMIC_RELAXED)) {
        amc_flow_flush_slow(flow);
    }
}

#endif
