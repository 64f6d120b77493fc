/*
 * The wire header of every amcoll active message. It is the whole message
 * for a barrier: the receiver needs the communicator (cid), the collective
 * instance (seq) and the synchronization point it satisfies (round). Data
 * collectives add which collective and root the sender is running, so ranks
 * that call different collectives get AMC_ERR_PROTOCOL instead of a wrong
 * result; the data follows the header.
 */
#ifndef AMC_WIRE_H
#define AMC_WIRE_H

#include <stdint.h>

#define AMC_WIRE_MAGIC   0xA7u
#define AMC_WIRE_VERSION 4u

enum {
    AMC_WIRE_BARRIER = 1,  /* the dissemination barrier's own fast path */
    AMC_WIRE_COLL    = 2,  /* a step of a scheduled collective (am_coll/sched.h) */
    AMC_WIRE_CREDIT  = 3,  /* eager tokens given back (am_coll/flow.h); src is the transport rank */
    AMC_WIRE_KINDS         /* the dispatch table's size (handlers/am_handler.h) */
};

/* A data collective's header only, no data: the sender gave up this instance
 * (its call failed its own checks, or it found the ranks' calls differ) and
 * sends nothing more for it. The receiver's instance ends with `status`
 * instead of waiting for messages that will not come. */
#define AMC_WIRE_FLAG_ABORT 0x1u

/* The sender's last message to this receiver in this instance. A receiver
 * that expects more, or no more, learns that the two calls' counts differ
 * (a pipelined bcast's segments all have the expected size). */
#define AMC_WIRE_FLAG_LAST  0x2u

typedef struct amc_wire_hdr {
    uint8_t  magic;    /* AMC_WIRE_MAGIC: rejects garbage and foreign senders */
    uint8_t  version;  /* AMC_WIRE_VERSION */
    uint8_t  kind;     /* AMC_WIRE_BARRIER or AMC_WIRE_COLL */
    uint8_t  coll;     /* AMC_WIRE_COLL: which collective (amc_coll_type_t) */
    uint32_t src;      /* sender's rank in the communicator */
    uint64_t cid;      /* communicator context id */
    uint64_t seq;      /* collective sequence number on that communicator */
    uint32_t round;    /* barrier: round r (distance 2^r); else the message's tag */
    int32_t  root;     /* rooted collectives: the root; else -1 */
    uint8_t  alg;      /* the sender's algorithm id: a rank that has not entered
                        * yet can still forward along the same tree */
    uint8_t  flags;    /* AMC_WIRE_FLAG_* */
    uint8_t  status;   /* AMC_WIRE_FLAG_ABORT: the error the instance ends with */
    uint8_t  pad;
    uint32_t credits;  /* eager tokens given back to the receiver (am_coll/flow.h) */
} amc_wire_hdr_t;

_Static_assert(sizeof(amc_wire_hdr_t) == 40, "wire header layout");

#endif
