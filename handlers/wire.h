/*
 * The wire header of every amcoll active message. It is the whole message
 * for a barrier: the receiver needs the communicator (cid), the collective
 * instance (seq) and the synchronization point it satisfies (round).
 */
#ifndef AMC_WIRE_H
#define AMC_WIRE_H

#include <stdint.h>

#define AMC_WIRE_MAGIC   0xA7u
#define AMC_WIRE_VERSION 1u

enum {
    AMC_WIRE_BARRIER = 1
};

/* The UCX active-message id all amcoll traffic uses. */
#define AMC_AM_ID 0

typedef struct amc_wire_hdr {
    uint8_t  magic;    /* AMC_WIRE_MAGIC: rejects garbage and foreign senders */
    uint8_t  version;  /* AMC_WIRE_VERSION */
    uint8_t  kind;     /* AMC_WIRE_BARRIER */
    uint8_t  round;    /* dissemination round r: distance 2^r */
    uint32_t src;      /* sender's rank in the communicator */
    uint64_t cid;      /* communicator context id */
    uint64_t seq;      /* collective sequence number on that communicator */
} amc_wire_hdr_t;

_Static_assert(sizeof(amc_wire_hdr_t) == 24, "wire header layout");

#endif
