/*
 * Eager-token flow control (the patent's tokens). A rank may have at most
 * AMC_EAGER_TOKENS eager data messages to one peer whose memory that peer
 * has not given back; without a token, data goes by rendezvous (only the
 * header travels, the data waits at the source until the receiver pulls it).
 * So a sender that runs ahead, a bcast root say, makes a late receiver hold
 * at most tokens x AMC_RNDV_THRESH bytes. Receivers give tokens back on the
 * headers of their own data messages to that peer, or, once half a window is
 * owed, with a header-only credit message.
 */
#ifndef AMC_FLOW_H
#define AMC_FLOW_H

#include "base/spinlock.h"
#include "handlers/wire.h"
#include "transport/transport.h"

#include <stdint.h>

struct amc_context;

typedef struct amc_flow_credit {
    amc_completion_t    comp;
    amc_wire_hdr_t      hdr;      /* alive until its send completes */
    struct amc_context *ctx;
    int                 peer;
    int                 busy;
    int                 due;      /* half a window owed: flush sends it */
} amc_flow_credit_t;

typedef struct amc_flow {
    const int         *live;      /* the context's "threads may meet" flag */
    unsigned           window;    /* AMC_EAGER_TOKENS */
    int                npeers;
    int                any_due;   /* some credit[].due is set */
    uint32_t          *tokens;    /* per peer: eager sends we may still make */
    uint32_t          *owed;      /* per peer: tokens we hold for it */
    amc_flow_credit_t *credit;    /* per peer: the credit message */
} amc_flow_t;

int      amc_flow_init(amc_flow_t *flow, struct amc_context *ctx, int npeers, unsigned window,
                       const int *live);
void     amc_flow_cleanup(amc_flow_t *flow);

/* Sender: 1 if an eager data message to peer may go now (a token is used). */
int      amc_flow_take(amc_flow_t *flow, int peer);

/* Sender: the tokens to give back to peer on a header going there now. */
uint32_t amc_flow_piggyback(amc_flow_t *flow, int peer);

/* Receiver of a header: peer gave back credits tokens. */
void     amc_flow_give(amc_flow_t *flow, int peer, uint32_t credits);

/* Receiver: the memory of one eager data message from peer is released. A
 * credit message that falls due is sent by the next amc_flow_flush: this may
 * run under a lock, and the transport is not called under one (defer.h). */
void     amc_flow_release(amc_flow_t *flow, int peer);

/* Sends the credit messages that fell due; with no amcoll lock held. */
void     amc_flow_flush_slow(amc_flow_t *flow);

static inline void amc_flow_flush(amc_flow_t *flow)
{
    if (__atomic_load_n(&flow->any_due, __ATOMIC_RELAXED)) {
        amc_flow_flush_slow(flow);
    }
}

#endif
