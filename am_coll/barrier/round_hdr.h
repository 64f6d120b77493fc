/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The header of a round of the barrier's machine (am_coll/barrier/barrier.c)
 * or of a small collective on its rounds, and round 0's send at a call's
 * entry at N=2 (am_coll/barrier/ctrl_send_now.c): inline, as every send of
 * those makes one.
 */
#ifndef AMC_ROUND_HDR_H
#define AMC_ROUND_HDR_H

#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "base/spinlock.h"
#include "handlers/wire.h"

/* For instance seq of comm, round round: the barrier's (coll 0) or a small
 * collective's, with a rooted one's root (-1: none) and its part at N=2
 * (oneway), and the instance's error if it has one; returns its length. */
static inline __attribute__((always_inline)) size_t
amc_round_hdr_pack(const struct amc_comm *comm, uint8_t coll, uint8_t oneway, int root,
                   uint64_t seq, int status, int round, amc_wire_packed_t *out)
{
    amc_wire_hdr_t hdr;

    if ((status == AMC_SUCCESS) && (((comm->cid | seq) >> 32) == 0) &&
        (((uint32_t)round >> 16) == 0)) {
        /* the usual one (no error, short numbers, a round in 16 bits):
         * what amc_wire_pack makes of it, its five core words and a rooted
         * one's root, without its tests */
        uint32_t alg    = (oneway == AMC_CTRL_BOTH)    ? 0
                          : (oneway == AMC_CTRL_SENDS) ? AMC_CTRL_MSG_EAGER
                          : (oneway == AMC_CTRL_ASKS)  ? AMC_CTRL_MSG_ASK
                                                       : AMC_CTRL_MSG_ANSWER;
        int      rooted = (root != -1);

        out->w[0] = AMC_WIRE_MAGIC | (AMC_WIRE_VERSION << 8) | ((uint32_t)AMC_WIRE_BARRIER << 16) |
                    (rooted ? (AMC_WIRE_X_ROOT << 24) : 0);
        out->w[1] = coll | (alg << 8) | ((uint32_t)round << 16);
        out->w[2] = (uint32_t)comm->rank;
        out->w[3] = (uint32_t)seq;
        out->w[4] = (uint32_t)comm->cid;
        if (rooted) {
            out->w[5] = (uint32_t)root;
            return AMC_WIRE_CORE_BYTES + 4;
        }
        return AMC_WIRE_CORE_BYTES;
    }
    hdr.kind   = AMC_WIRE_BARRIER;
    hdr.coll   = coll;
    hdr.alg    = 0;
    hdr.flags  = 0;
    hdr.round  = (uint32_t)round;
    hdr.root   = root; /* a rooted one's: at N=2 or on a tree */
    if (oneway != AMC_CTRL_BOTH) {
        /* a rooted one at N=2 (am_coll/barrier/ctrl_coll.c): what it is */
        hdr.alg  = (oneway == AMC_CTRL_SENDS)  ? AMC_CTRL_MSG_EAGER
                   : (oneway == AMC_CTRL_ASKS) ? AMC_CTRL_MSG_ASK
                                               : AMC_CTRL_MSG_ANSWER;
    }
    hdr.src    = (uint32_t)comm->rank;
    hdr.cid    = comm->cid;
    hdr.seq    = seq;
    hdr.status = 0;
    if ((status != AMC_SUCCESS) && (coll != 0)) {
        /* the error travels with the partial result: every
         * rank's result depends on this one, so every rank learns it */
        hdr.flags  = AMC_WIRE_FLAG_ABORT;
        hdr.status = (uint8_t)status;
    }
    return amc_wire_pack(&hdr, out);
}

/* Whether a round of comm's may go by the transport's send_now: one that
 * has it, a peer it has not refused for good, and no thread that may meet
 * this one (the entry calls it where it would hold a lock). */
static inline int amc_round_may_send_now(const struct amc_comm *comm)
{
    return !comm->never_now && (comm->ctx->tp->ops->send_now != NULL) &&
           !amc_lock_live(comm->ctx->lock_live_p);
}

/* The transport's channel to comm's member rank (at transport rank
 * dest), or NULL where the transport has none (yet): every message between
 * the two goes by it. Kept per member once made (comm->now_chans, made at
 * the first ask; NULL if that fails: then each send looks the peer up).
 * Only while threads cannot meet, as send_now. */
void *amc_round_chan_make(struct amc_comm *comm, int rank, int dest);

static inline void *amc_round_chan(struct amc_comm *comm, int rank, int dest)
{
    void *chan = (comm->now_chans != NULL) ? comm->now_chans[rank] : NULL;

    return (chan != NULL) ? chan : amc_round_chan_make(comm, rank, dest);
}

/* A packed round to dest by send_now, or by chan (amc_round_chan's) where
 * not NULL: AMC_SUCCESS, or nothing was sent (and comm stops asking where
 * the transport never sends to its peer now). */
static inline int amc_round_send_chan(struct amc_comm *comm, void *chan, int dest,
                                      const amc_wire_packed_t *hdr, size_t hdr_len,
                                      const void *data, size_t len)
{
    amc_transport_t *tp = comm->ctx->tp;
    int              rc;

    if (chan != NULL) {
        return tp->ops->chan_send(tp, chan, hdr, hdr_len, data, len);
    }
    rc = tp->ops->send_now(tp, dest, hdr, hdr_len, data, len);

    if (rc == AMC_SEND_NEVER) {
        comm->never_now = 1;
    }
    return rc;
}

/* Round 0 of instance seq, its header on the stack, to comm's member to
 * by send_now (amc_round_send_chan's answers). */
static inline int amc_round_send_now(struct amc_comm *comm, uint8_t coll, uint8_t oneway,
                                     int root, uint64_t seq, int status, int to,
                                     const void *data, size_t len)
{
    amc_wire_packed_t hdr;
    size_t            hdr_len = amc_round_hdr_pack(comm, coll, oneway, root, seq, status, 0, &hdr);
    int               dest    = amc_comm_peer(comm, to);

    return amc_round_send_chan(comm, amc_round_chan(comm, to, dest), dest, &hdr, hdr_len, data,
                               len);
}

#endif
