/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The header of every amcoll active message. It is the whole message
 * for a barrier: the receiver needs the communicator (cid), the collective
 * instance (seq) and the synchronization point it satisfies (round). Data
 * collectives add which collective and root the sender is running, so ranks
 * that call different collectives get AMC_ERR_PROTOCOL instead of a wrong
 * result; the data follows the header.
 */
#ifndef AMC_WIRE_H
#define AMC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define AMC_WIRE_MAGIC   0xA7u
#define AMC_WIRE_VERSION 5u

enum {
    AMC_WIRE_BARRIER = 1,  /* the dissemination barrier's own fast path */
    AMC_WIRE_COLL    = 2,  /* a step of a scheduled collective (am_coll/sched/sched.h) */
    AMC_WIRE_CREDIT  = 3,  /* eager tokens given back (am_coll/context/flow.h); src is the transport rank */
    AMC_WIRE_DEAD    = 4,  /* transport rank root is dead, says transport rank src
                            * (am_coll/coll/coll_notice.c) */
    AMC_WIRE_FT      = 5,  /* revoke, agree, shrink: round says which message
                            * (am_coll/coll/coll_ft.h), seq the agreement */
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

/* The header as the engines fill and read it. On the wire it is packed
 * (amc_wire_pack): what every message needs in 20 bytes, and each field
 * that most messages lack or keep small only where a message needs it. */
typedef struct amc_wire_hdr {
    uint8_t  magic;    /* AMC_WIRE_MAGIC: rejects garbage and foreign senders */
    uint8_t  version;  /* AMC_WIRE_VERSION */
    uint8_t  kind;     /* AMC_WIRE_BARRIER, AMC_WIRE_COLL or AMC_WIRE_CREDIT */
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
    uint32_t credits;  /* eager tokens given back to the receiver (am_coll/context/flow.h) */
} amc_wire_hdr_t;

/*
 * The packed form, 32-bit words in the host's byte order (every rank of a
 * job runs on the same architecture, as before):
 *
 *   word 0  magic | version << 8 | kind << 16 | flags << 24
 *   word 1  coll | alg << 8 | (round & 0xffff) << 16
 *   word 2  src
 *   word 3  seq, low 32 bits
 *   word 4  cid, low 32 bits
 *
 * then, in this order, one word for each that the flags announce: cid's
 * high half (AMC_WIRE_X_CID64), seq's high half (AMC_WIRE_X_SEQ64), round's
 * high half (AMC_WIRE_X_ROUND32), root (AMC_WIRE_X_ROOT, else -1), status
 * (AMC_WIRE_FLAG_ABORT), credits (AMC_WIRE_X_CREDITS, always last so that a
 * send adds it when it knows them). A barrier or an unrooted collective's
 * message is 20 bytes, a rooted one 24; the length must be exactly what the
 * flags say.
 */
#define AMC_WIRE_X_CID64    0x04u
#define AMC_WIRE_X_SEQ64    0x08u
#define AMC_WIRE_X_ROUND32  0x10u
#define AMC_WIRE_X_ROOT     0x20u
#define AMC_WIRE_X_CREDITS  0x40u
#define AMC_WIRE_X_ALL      (AMC_WIRE_X_CID64 | AMC_WIRE_X_SEQ64 | AMC_WIRE_X_ROUND32 | \
                             AMC_WIRE_X_ROOT | AMC_WIRE_X_CREDITS)

#define AMC_WIRE_CORE_WORDS 5
#define AMC_WIRE_MAX_WORDS  (AMC_WIRE_CORE_WORDS + 6)
#define AMC_WIRE_CORE_BYTES (AMC_WIRE_CORE_WORDS * 4)
#define AMC_WIRE_MAX_BYTES  (AMC_WIRE_MAX_WORDS * 4)

/* A packed header; it must stay unchanged until its send completes. */
typedef struct amc_wire_packed {
    uint32_t w[AMC_WIRE_MAX_WORDS];
} amc_wire_packed_t;

/* The length a header's flags announce (the flags byte of its word 0). */
static inline size_t amc_wire_len_of(uint32_t flags)
{
    /* a word per extension bit and for ABORT: the bits of one byte counted
     * by two multiplications (each bit lands in its own nibble, the nibbles
     * are summed), a third of the instructions of a bit-by-bit sum, and no
     * popcnt needed of the CPU */
    uint32_t x = flags & (AMC_WIRE_X_ALL | AMC_WIRE_FLAG_ABORT);

    return 4 * (AMC_WIRE_CORE_WORDS + (((((x * 0x08040201u) >> 3) & 0x11111111u) * 0x11111111u) >> 28));
}

/* The length of a packed header. */
static inline size_t amc_wire_len(const amc_wire_packed_t *p)
{
    return amc_wire_len_of(p->w[0] >> 24);
}

/* Packs hdr (its magic, version and extension flags are set here, its
 * credits ignored: amc_wire_add_credits); returns the length in bytes.
 * Inline: every send of the hot path packs one. */
static inline size_t amc_wire_pack(const amc_wire_hdr_t *hdr, amc_wire_packed_t *out)
{
    uint32_t flags = hdr->flags & ~(AMC_WIRE_X_ALL);
    unsigned n     = AMC_WIRE_CORE_WORDS;

    if ((hdr->cid >> 32) != 0) {
        flags |= AMC_WIRE_X_CID64;
        out->w[n++] = (uint32_t)(hdr->cid >> 32);
    }
    if ((hdr->seq >> 32) != 0) {
        flags |= AMC_WIRE_X_SEQ64;
        out->w[n++] = (uint32_t)(hdr->seq >> 32);
    }
    if ((hdr->round >> 16) != 0) {
        flags |= AMC_WIRE_X_ROUND32;
        out->w[n++] = hdr->round >> 16;
    }
    if (hdr->root != -1) {
        flags |= AMC_WIRE_X_ROOT;
        out->w[n++] = (uint32_t)hdr->root;
    }
    if (flags & AMC_WIRE_FLAG_ABORT) {
        out->w[n++] = hdr->status;
    }
    out->w[0] = AMC_WIRE_MAGIC | (AMC_WIRE_VERSION << 8) | ((uint32_t)hdr->kind << 16) |
                (flags << 24);
    out->w[1] = hdr->coll | ((uint32_t)hdr->alg << 8) | ((hdr->round & 0xffffu) << 16);
    out->w[2] = hdr->src;
    out->w[3] = (uint32_t)hdr->seq;
    out->w[4] = (uint32_t)hdr->cid;
    return n * 4;
}

/* Appends credits (none when 0) to a header of len bytes; the new length. */
static inline size_t amc_wire_add_credits(amc_wire_packed_t *p, size_t len, uint32_t credits)
{
    p->w[0] &= ~(AMC_WIRE_X_CREDITS << 24);
    if (credits == 0) {
        return len;
    }
    p->w[0]       |= AMC_WIRE_X_CREDITS << 24;
    p->w[len / 4]  = credits;
    return len + 4;
}

/* Checks and unpacks len bytes (any alignment); NULL, or why they are not
 * a header of this version (hdr then holds nothing of use). */
const char *amc_wire_unpack(const void *bytes, size_t len, amc_wire_hdr_t *hdr);

/* The extension words at ext that flags announce, into a header whose core
 * words amc_wire_unpack_inline checked and unpacked. */
const char *amc_wire_unpack_ext(const unsigned char *ext, uint32_t flags, amc_wire_hdr_t *hdr);

/* amc_wire_unpack, inline where every arrival runs it (the header
 * handler): a core header, the usual one, is a few loads, compares and
 * stores, and its length needs no count of the flags. */
static inline const char *amc_wire_unpack_inline(const void *bytes, size_t len,
                                                 amc_wire_hdr_t *hdr)
{
    uint32_t w[AMC_WIRE_CORE_WORDS], flags;
    size_t   expect;

    if (len < AMC_WIRE_CORE_BYTES) {
        return "truncated header";
    }
    __builtin_memcpy(w, bytes, sizeof(w)); /* the transport's header may be unaligned */
    if ((w[0] & 0xffffu) != (AMC_WIRE_MAGIC | (AMC_WIRE_VERSION << 8))) {
        return "bad magic or wire version";
    }
    flags = w[0] >> 24;
    if (flags & ~(AMC_WIRE_X_ALL | AMC_WIRE_FLAG_ABORT | AMC_WIRE_FLAG_LAST)) {
        return "unknown header flags";
    }
    expect = (flags & (AMC_WIRE_X_ALL | AMC_WIRE_FLAG_ABORT)) ? amc_wire_len_of(flags)
                                                               : AMC_WIRE_CORE_BYTES;
    if (len != expect) {
        return (len < expect) ? "truncated header" : "oversized header";
    }
    hdr->magic   = AMC_WIRE_MAGIC;
    hdr->version = AMC_WIRE_VERSION;
    hdr->kind    = (uint8_t)(w[0] >> 16);
    hdr->flags   = (uint8_t)(flags & ~AMC_WIRE_X_ALL);
    hdr->coll    = (uint8_t)w[1];
    hdr->alg     = (uint8_t)(w[1] >> 8);
    hdr->round   = w[1] >> 16;
    hdr->src     = w[2];
    hdr->seq     = w[3];
    hdr->cid     = w[4];
    hdr->root    = -1;
    hdr->status  = 0;
    hdr->credits = 0;
    if (len == AMC_WIRE_CORE_BYTES) {
        return NULL;
    }
    return amc_wire_unpack_ext((const unsigned char *)bytes + AMC_WIRE_CORE_BYTES, flags, hdr);
}

#endif
