/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A blocking call at N=2 that runs within its call, with no slot: the
 * barrier, and every small collective on the barrier's rounds (one round at
 * N=2) whose rank waits for the peer's message: the exchanges (allreduce,
 * allgather, alltoall, reduce_scatter_block and the v-forms allgatherv,
 * alltoallv, reduce_scatter) and a rooted one's receiver (bcast's and
 * scatter's other rank, reduce's and gather's root, the scans' rank 1; the
 * sender is amc_ctrl_coll_send_now's). Where the instance is the next one
 * and nothing came for it, an exchange sends its round 0 at once
 * (send_now); then the call looks at the next message in the peer's
 * mailbox itself (take_now) until it is the peer's for this instance,
 * makes the result from it in place (a rooted one's token given back), and
 * the control structure moves past the instance (amc_coll_ctrl_pass).
 *
 * Why: in lockstep each rank's call is its own work plus the wire, and the
 * slot's machine cost more than the wire here (an N=2 allreduce of 8 B ran
 * ~1,900 instructions a call, the mailbox's round trip ~0.2 us): the slot
 * taken, loaded, advanced and released, and the arrival through progress's
 * loop, the header's decoding, the communicator's lookup and the handler.
 *
 * What makes it safe: the message taken is exactly the one the peer's
 * call sends for this instance (the packed header compared whole, with the
 * peer's rank, and the length this call takes), whichever path sent it.
 * Anything else that comes first (another communicator's message, one for
 * this instance that differs, a rooted message without a token, a notice)
 * is left to progress, whose handlers run it as always; once something
 * came for the instance that way, or an error is pending, or the wait grew
 * long, the call goes on the machine (amc_barrier_enter), an exchange's
 * round 0 already sent, and the machine takes the peer's message as any
 * arrival.
 */
#include "am_coll/barrier/pair_now.h"
#include "am_coll/barrier/round_hdr.h"
#include "am_coll/alg/alg_rounds.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "am_coll/context/flow.h"
#include "am_coll/context/op.h"
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/request.h"
#include "base/status.h"

#include <string.h>

/* Mailbox looks between two progress passes while the peer's message has
 * not come: other peers' messages and UCX wait at most this long. */
#define AMC_PAIR_LOOKS_PER_PASS 64u

/* What the peer's message makes of this rank's result. */
enum {
    AMC_PAIR_NOTHING, /* the barrier */
    AMC_PAIR_PLACE,   /* its block, into its place */
    AMC_PAIR_REDUCE   /* with this rank's operand, the lower rank's on the left */
};

typedef struct {
    amc_wire_packed_t hdr;     /* the peer's message, as it packs it */
    size_t            hdr_len;
    size_t            rbytes;  /* what it carries */
    uint8_t          *into;    /* where its block or the result goes */
    const uint8_t    *mine;    /* this rank's operand (AMC_PAIR_REDUCE) */
    size_t            count;   /* its elements */
    amc_op_kernel_t   kernel;
    int               how;     /* AMC_PAIR_* */
    int               rank;
    int               token;   /* a rooted one's message on an eager token */
} amc_pair_t;

/* A copy: up to 64 bytes by whole words, unrolled (the usual element
 * sizes), where memcpy of a length known only now is a call; longer ones
 * by memcpy. Not a loop: GCC turned the loop of words into `rep movsq`,
 * whose start-up made the 8 B reduce and scan 1.2-1.3x slower
 * (2026-11-27). */
#define AMC_PAIR_WORD(_k)                                                      \
    case (_k) + 1:                                                             \
        memcpy(d + 8 * (_k), s + 8 * (_k), 8);                                 \
        __attribute__((fallthrough))

static inline void amc_pair_copy(void *dst, const void *src, size_t len)
{
    uint8_t       *d = dst;
    const uint8_t *s = src;

    if (len == 8) { /* the usual one: a word */
        memcpy(d, s, 8);
        return;
    }
    if (((len & 7) != 0) || (len > 64)) {
        memcpy(dst, src, len);
        return;
    }
    switch (len >> 3) {
    AMC_PAIR_WORD(7);
    AMC_PAIR_WORD(6);
    AMC_PAIR_WORD(5);
    AMC_PAIR_WORD(4);
    AMC_PAIR_WORD(3);
    AMC_PAIR_WORD(2);
    AMC_PAIR_WORD(1);
    AMC_PAIR_WORD(0);
    default:
        break;
    }
}
#undef AMC_PAIR_WORD

/* An exchange: what this rank sends (*out, *sbytes) and what the peer's
 * message makes; the block a rank gives itself goes to its place now (it
 * does not depend on the peer's), as amc_ctrl_coll_load does. */
static void amc_pair_load_exchange(amc_pair_t *p, const struct amc_comm *comm,
                                   const amc_coll_args_t *a, const uint8_t **out,
                                   size_t *sbytes)
{
    const uint8_t *in   = (a->sendbuf != NULL) ? a->sendbuf : a->recvbuf; /* in place */
    uint8_t       *recv = a->recvbuf;
    size_t         b    = a->count * a->dt_size, dt = a->dt_size;
    int            me   = p->rank, peer = me ^ 1;

    *sbytes   = b;
    p->rbytes = b;
    p->count  = a->count;
    switch (a->coll) {
    case AMC_COLL_ALLREDUCE:
        p->mine = in;
        p->into = recv;
        *out    = in;
        return;
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        p->mine = in + (size_t)me * b;
        p->into = recv;
        *out    = in + (size_t)peer * b;
        return;
    case AMC_COLL_ALLGATHER:
        if (a->sendbuf != NULL) {
            amc_pair_copy(recv + (size_t)me * b, in, b);
        }
        p->into = recv + (size_t)peer * b;
        *out    = recv + (size_t)me * b;
        return;
    case AMC_COLL_ALLTOALL:
        if (a->sendbuf != NULL) {
            amc_pair_copy(recv + (size_t)me * b, in + (size_t)me * b, b);
        }
        p->into = recv + (size_t)peer * b;
        *out    = in + (size_t)peer * b; /* in place: sent before the peer's lands there */
        return;
    default:
        break;
    }
    /* the v-forms: two lengths (amc_ctrl_coll_vector_ok: 1 .. 1024 bytes each) */
    amc_ctrl_coll_vlens(comm, a, sbytes, &p->rbytes);
    p->into = recv + ((a->coll != AMC_COLL_REDUCE_SCATTER) ? a->rdispls[peer] * dt : 0);
    switch (a->coll) {
    case AMC_COLL_ALLGATHERV:
        if (a->in_place) {
            *out = recv + a->rdispls[me] * dt;
        } else {
            amc_pair_copy(recv + a->rdispls[me] * dt, a->sendbuf, *sbytes);
            *out = a->sendbuf;
        }
        return;
    case AMC_COLL_ALLTOALLV:
        if (a->in_place) {
            *out = p->into; /* MPI: the blocks to send are the received ones */
        } else {
            if (a->scounts[me] > 0) {
                amc_pair_copy(recv + a->rdispls[me] * dt,
                              (const uint8_t *)a->sendbuf + a->sdispls[me] * dt,
                              a->scounts[me] * dt);
            }
            *out = (const uint8_t *)a->sendbuf + a->sdispls[peer] * dt;
        }
        return;
    default: { /* reduce_scatter: this rank's block of the input with the other's sum of it */
        const uint8_t *vec = a->in_place ? recv : (const uint8_t *)a->sendbuf;
        size_t         at0 = a->rcounts[0] * dt;

        p->mine  = vec + (me ? at0 : 0);
        p->count = a->rcounts[me];
        *out     = vec + (peer ? at0 : 0);
        return;
    }
    }
}

/* A rooted one's receiver (the rank that hears, amc_alg_rounds_sends): what
 * the sender's message makes, and its own block in its place now. */
static void amc_pair_load_hears(amc_pair_t *p, const struct amc_comm *comm,
                                const amc_coll_args_t *a)
{
    uint8_t *recv = a->recvbuf;
    size_t   b    = a->count * a->dt_size, dt = a->dt_size, sbytes;
    int      me   = p->rank, peer = me ^ 1;

    p->rbytes = b;
    p->count  = a->count;
    p->into   = recv;
    p->token  = 1;
    switch (a->coll) {
    case AMC_COLL_REDUCE:
    case AMC_COLL_SCAN:
        p->mine = (a->sendbuf != NULL) ? a->sendbuf : recv;
        return;
    case AMC_COLL_GATHER:
        if (a->sendbuf != NULL) { /* else in place: its block is there */
            amc_pair_copy(recv + (size_t)me * b, a->sendbuf, b);
        }
        p->into = recv + (size_t)peer * b;
        return;
    case AMC_COLL_GATHERV:
        if (!a->in_place && (a->scount > 0)) {
            amc_pair_copy(recv + a->rdispls[me] * dt, a->sendbuf, a->scount * dt);
        }
        amc_ctrl_coll_vlens(comm, a, &sbytes, &p->rbytes);
        p->into = recv + a->rdispls[peer] * dt;
        return;
    case AMC_COLL_SCATTERV:
        amc_ctrl_coll_vlens(comm, a, &sbytes, &p->rbytes);
        return;
    default: /* bcast, scatter, exscan: the sender's data is the result */
        return;
    }
}

/* Whether the packed header in the mailbox is the one expected: whole
 * words (a packed header is), inline where memcmp is a call. */
static inline int amc_pair_same(const void *hdr, const amc_wire_packed_t *want, size_t len)
{
    const uint8_t *p = hdr;
    uint32_t       diff = 0, w;
    size_t         i;

    if ((len == AMC_WIRE_CORE_BYTES) || (len == AMC_WIRE_CORE_BYTES + 4)) {
        /* the exchanges' and the barrier's, a rooted one's with its root:
         * three or four loads */
        uint64_t a, b, wa, wb;

        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        memcpy(&w, p + 16, 4);
        memcpy(&wa, &want->w[0], 8);
        memcpy(&wb, &want->w[2], 8);
        diff = w ^ want->w[4];
        if (len > AMC_WIRE_CORE_BYTES) {
            memcpy(&w, p + 20, 4);
            diff |= w ^ want->w[5];
        }
        return ((a ^ wa) | (b ^ wb) | diff) == 0;
    }
    for (i = 0; i < len / 4; i++) {
        memcpy(&w, p + 4 * i, 4);
        diff |= w ^ want->w[i];
    }
    return diff == 0;
}

/* A reduction's result in buffers for the operands (theirs, mine): the
 * lower rank's operand on the left. Operands are copied out first: the
 * message is aligned for 8 bytes only, and a v-form's in-place block may
 * overlap its result. */
static inline void amc_pair_reduce_in(const amc_pair_t *p, const void *data, size_t len,
                                      uint8_t *theirs, uint8_t *mine)
{
    amc_pair_copy(theirs, data, len);
    amc_pair_copy(mine, p->mine, len);
    if (p->rank == 1) {
        p->kernel(theirs, mine, p->count);
        amc_pair_copy(p->into, mine, len);
    } else {
        p->kernel(mine, theirs, p->count);
        amc_pair_copy(p->into, theirs, len);
    }
}

typedef union {
    uint8_t     b[AMC_CTRL_PAY_MAX];
    long double align;
} amc_pair_small_t;

typedef union {
    uint8_t     b[AMC_CTRL_PAY_PAIR];
    long double align;
} amc_pair_large_t;

/* Past 64 bytes, in a frame of its own: the usual one stays small. */
static __attribute__((noinline)) void amc_pair_reduce_large(const amc_pair_t *p,
                                                            const void *data, size_t len)
{
    amc_pair_large_t theirs, mine;

    amc_pair_reduce_in(p, data, len, theirs.b, mine.b);
}

/* The result from the peer's message, as the machine's join and its
 * rooted finish make it. */
static int amc_pair_take(void *arg, const void *hdr, size_t hdr_len, const void *data,
                         size_t len)
{
    const amc_pair_t *p = arg;

    if ((hdr_len != p->hdr_len) || (len != p->rbytes) || !amc_pair_same(hdr, &p->hdr, hdr_len)) {
        return 0;
    }
    switch (p->how) {
    case AMC_PAIR_PLACE:
        amc_pair_copy(p->into, data, len);
        break;
    case AMC_PAIR_REDUCE:
        if (len > AMC_CTRL_PAY_MAX) {
            amc_pair_reduce_large(p, data, len);
        } else {
            amc_pair_small_t theirs, mine;

            amc_pair_reduce_in(p, data, len, theirs.b, mine.b);
        }
        break;
    default:
        break;
    }
    return 1;
}

/* Whether the instance is still this call's alone: the next one, nothing
 * came for it, no error waiting (the communicator's or the context's: the
 * machine's wait hands it to this call), no peer newly dead, the
 * communicator whole. */
static inline int amc_pair_clear(struct amc_comm *comm)
{
    return amc_coll_ctrl_idle(&comm->ctrl) &&
           !__atomic_load_n(&comm->ctrl.pending_err, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&comm->ctx->pending_err, __ATOMIC_RELAXED) &&
           !amc_peer_watch_news(comm->ctx) && !__atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE);
}

/* Whether the call may run here: a blocking one on 2 ranks whose messages
 * go by the mailboxes, its instance clear. */
static int amc_pair_may(struct amc_comm *comm, const struct amc_request *req,
                        const amc_coll_args_t *args)
{
    return (comm->size == 2) && !req->heap && !req->persistent &&
           ((args == NULL) || amc_alg_rounds_is(args->coll)) &&
           (comm->ctx->tp->ops->take_now != NULL) && amc_round_may_send_now(comm) &&
           amc_pair_clear(comm);
}

/* Until the peer's round 0 is taken (1), or the machine must go on (0);
 * by chan where not NULL. */
static int amc_pair_wait(struct amc_comm *comm, void *chan, int dest, amc_pair_t *p)
{
    amc_context_t   *ctx   = comm->ctx;
    amc_transport_t *tp    = ctx->tp;
    unsigned         spins = ctx->cfg.wait.spin_count, look;
    int              rc;

    for (look = 0;; look++) {
        rc = (chan != NULL) ? tp->ops->chan_take(tp, chan, amc_pair_take, p)
                            : tp->ops->take_now(tp, dest, amc_pair_take, p);
        if (rc == AMC_SUCCESS) {
            return 1;
        }
        if (rc == AMC_TAKE_NEVER) {
            comm->never_now = 1; /* its messages come by UCX: stop asking */
            return 0;
        }
        if (look >= spins) {
            return 0; /* the machine's wait yields and sleeps */
        }
        if ((rc == AMC_TAKE_OTHER) ||
            ((look % AMC_PAIR_LOOKS_PER_PASS) == AMC_PAIR_LOOKS_PER_PASS - 1)) {
            (void)tp->ops->progress(tp);
            if (!amc_pair_clear(comm)) {
                return 0;
            }
        }
    }
}

int amc_pair_now(struct amc_comm *comm, struct amc_request *req, const amc_coll_args_t *args)
{
    amc_context_t *ctx  = comm->ctx;
    void          *chan;
    amc_pair_t     p;
    const uint8_t *out  = NULL;
    size_t         sbytes = 0;
    uint8_t        coll = (args != NULL) ? args->coll : 0, oneway = AMC_CTRL_BOTH;
    int            dest, root = -1;

    if (!amc_pair_may(comm, req, args)) {
        return AMC_PAIR_NOT;
    }
    p.rank   = comm->rank;
    p.rbytes = 0;
    p.how    = AMC_PAIR_NOTHING;
    p.token  = 0;
    p.kernel = NULL;
    if (args != NULL) {
        if (amc_alg_rounds_rooted(coll)) {
            root = amc_alg_rounds_root(args->root);
            if (amc_alg_rounds_sends(coll, comm->rank, root)) {
                return AMC_PAIR_NOT; /* amc_ctrl_coll_send_now's, or it asks for an answer */
            }
            oneway = AMC_CTRL_SENDS; /* the peer's message: on a token */
            amc_pair_load_hears(&p, comm, args);
        } else {
            amc_pair_load_exchange(&p, comm, args, &out, &sbytes);
        }
    }
    dest      = amc_comm_peer(comm, comm->rank ^ 1);
    chan      = amc_round_chan(comm, dest);
    p.hdr_len = amc_round_hdr_pack(comm, coll, oneway, root, comm->ctrl.seq_next, AMC_SUCCESS,
                                   0, &p.hdr);
    if (oneway == AMC_CTRL_BOTH) {
        /* this rank's round 0 first; the peer's header is this one with its rank */
        if (amc_round_send_chan(comm, chan, dest, &p.hdr, p.hdr_len, out, sbytes) !=
            AMC_SUCCESS) {
            /* a block given to itself is in place already: the machine's
             * copy writes the same bytes */
            return AMC_PAIR_NOT;
        }
    }
    /* what the peer's message makes: after the send, while it travels (the
     * peer's call waits for the send, not for this) */
    if (args != NULL) {
        p.how = ((coll == AMC_COLL_ALLREDUCE) || (coll == AMC_COLL_REDUCE_SCATTER_BLOCK) ||
                 (coll == AMC_COLL_REDUCE_SCATTER) || (coll == AMC_COLL_REDUCE) ||
                 (coll == AMC_COLL_SCAN)) ? AMC_PAIR_REDUCE : AMC_PAIR_PLACE;
        if (p.how == AMC_PAIR_REDUCE) {
            p.kernel = amc_op_kernel(args->op, args->dt); /* predefined: amc_ctrl_coll_ok */
        }
    }
    p.hdr.w[2] = (uint32_t)(comm->rank ^ 1);
    if (!amc_pair_wait(comm, chan, dest, &p)) {
        if (oneway != AMC_CTRL_BOTH) {
            return AMC_PAIR_NOT; /* it sent nothing */
        }
        amc_context_count(&ctx->pair_sent);
        return AMC_PAIR_SENT;
    }
    if (p.token) {
        /* consumed: the sender's token back (a credit when due) */
        amc_flow_release(&ctx->flow, dest);
        amc_context_flush(ctx);
    }
    amc_context_count(&ctx->pair_done);
    amc_coll_ctrl_pass(&comm->ctrl);
    amc_request_complete(req, AMC_SUCCESS);
    return AMC_PAIR_DONE;
}
