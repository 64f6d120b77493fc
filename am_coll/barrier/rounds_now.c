/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A blocking call on the barrier's rounds that runs within its call, with
 * no slot, at every N whose members' messages go by the mailboxes: the
 * barrier (dissemination: round r's message to rank + 2^r, from
 * rank - 2^r), the exchanges (allreduce, allgather, alltoall,
 * reduce_scatter_block: round r with rank XOR 2^r on a power of two, off
 * one Bruck's on the barrier's partners; at N=2 also
 * the v-forms allgatherv, alltoallv and reduce_scatter), the rooted ones
 * and the scans past N=2 (trees on the barrier's partners, ctrl_tree.h) and
 * at N=2 a rooted one's receiver (bcast's and scatter's other rank,
 * reduce's and gather's root, the scans' rank 1; the sender is
 * amc_ctrl_coll_send_now's).
 * N=2 is the one-round case. Round by round, where the instance is the
 * next one and nothing came for it: the round's message goes at once
 * (send_now), the call looks at the next message in the partner's mailbox
 * itself (take_now) until it is the partner's for this instance and
 * round, and makes the next round's message (or the result) from it in
 * place; after the last round the control structure moves past the
 * instance (amc_coll_ctrl_pass).
 *
 * Why: in lockstep each rank's call is its own work plus the wire, and the
 * slot's machine cost more than the wire here (an N=2 allreduce of 8 B ran
 * ~1,900 instructions a call, the mailbox's round trip ~0.2 us): the slot
 * taken, loaded, advanced and released, and each arrival through
 * progress's loop, the header's decoding, the communicator's lookup and
 * the handler, once a round.
 *
 * What makes it safe: the message taken is exactly the one the partner's
 * call sends for this instance and round (the packed header compared
 * whole, with the partner's rank, and the length this call takes),
 * whichever path sent it. Anything else that comes first (another
 * communicator's message, one for this instance that differs, a rooted
 * message without a token, a notice) is left to progress, whose handlers
 * run it as always. Once something came for the instance that way, or an
 * error is pending, or a round's message cannot go now, or the wait
 * yielded as long as the machine's wait yields before it sleeps, the call
 * goes on the machine where it is (amc_barrier_enter_left): the rounds it
 * took are the slot's arrivals, the message it made last is the slot's
 * (sent, or sent there), an alltoall's or reduce_scatter_block's blocks
 * its work, exactly what the machine's own rounds would have left, since
 * both make them with the same functions (am_coll/barrier/ctrl_coll.c).
 */
#include "am_coll/barrier/rounds_now.h"
#include "am_coll/barrier/barrier.h"
#include "am_coll/barrier/round_hdr.h"
#include "am_coll/barrier/ctrl_blocks.h"
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/barrier/ctrl_tree.h"
#include "am_coll/alg/alg_rounds.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "am_coll/context/flow.h"
#include "am_coll/context/op.h"
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/progress.h"
#include "am_coll/context/request.h"
#include "base/clock.h"
#include "base/status.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Mailbox looks between two progress passes while the partner's message
 * has not come: other peers' messages and UCX wait at most this long. */
#define AMC_NOW_LOOKS_PER_PASS 64u

/* Yields between two passes of progress (and of the layer above) once the
 * wait yields: the partner's message is looked at every time, what else
 * comes waits at most this many yields (a pass of Open MPI's progress
 * through the idle hook costs ~540 instructions, UCX's ~350: on 2 cores
 * at N=4 nearly one yield a call). */
#define AMC_NOW_YIELDS_PER_PASS 4u

/* Yields between two clock reads once the wait yields. */
#define AMC_NOW_YIELDS_PER_CLOCK 16u

/* What the partner's message makes of this rank's next message or result. */
enum {
    AMC_NOW_NOTHING, /* the barrier */
    AMC_NOW_PLACE,   /* its blocks, into their place */
    AMC_NOW_REDUCE,  /* with this rank's operand, the lower rank's on the left */
    AMC_NOW_MOVE,    /* an alltoall's blocks into work */
    AMC_NOW_HALVE,   /* a reduce_scatter_block's partial sums into work */
    AMC_NOW_BRUCK,   /* an alltoall's blocks into work, Bruck's way */
    AMC_NOW_TREE     /* a tree's (ctrl_tree.h) into work */
};

typedef struct {
    amc_wire_packed_t hdr;     /* the partner's message, as it packs it */
    size_t            hdr_len;
    size_t            rbytes;  /* what it carries */
    uint8_t          *into;    /* where its block or the result goes */
    const uint8_t    *mine;    /* this rank's operand (AMC_NOW_REDUCE) */
    size_t            count;   /* its elements */
    amc_op_kernel_t   kernel;
    int               how;     /* AMC_NOW_* */
    int               rank;
    int               size;
    int               round;
    int               partner; /* whose message it is */
    int               token;   /* a rooted one's message on an eager token */
    int               rooted;  /* a rooted one's receiver at N=2 */
    uint8_t           coll;    /* the wire's coll: 0 for the barrier */
    amc_coll_slot_t  *slot;    /* the instance's, where progress recorded its
                                * messages (NULL while none came that way) */
    size_t            bytes;   /* an alltoall's or reduce_scatter_block's block */
    uint8_t          *work;    /* their N blocks as they move */
    amc_ctrl_tree_t   tree;    /* a tree's call (how AMC_NOW_TREE) */
} amc_now_t;

/* Past N=2 a round carries at most AMC_CTRL_PAY_MAX bytes: a partial
 * result or the message to send next, and an alltoall's N blocks (at most
 * twice that). Untouched at N=2. */
typedef struct {
    union {
        uint8_t     b[AMC_CTRL_PAY_MAX];
        long double align;
    } msg;
    union {
        uint8_t     b[2 * AMC_CTRL_PAY_MAX];
        long double align;
    } work;
} amc_now_bufs_t;

/* A copy: up to 64 bytes by whole words, unrolled (the usual element
 * sizes), where memcpy of a length known only now is a call; longer ones
 * by memcpy. Not a loop: GCC turned the loop of words into `rep movsq`,
 * whose start-up made the 8 B reduce and scan 1.2-1.3x slower
 * (2026-11-27). */
#define AMC_NOW_WORD(_k)                                                      \
    case (_k) + 1:                                                             \
        memcpy(d + 8 * (_k), s + 8 * (_k), 8);                                 \
        __attribute__((fallthrough))

static inline void amc_now_copy(void *dst, const void *src, size_t len)
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
    AMC_NOW_WORD(7);
    AMC_NOW_WORD(6);
    AMC_NOW_WORD(5);
    AMC_NOW_WORD(4);
    AMC_NOW_WORD(3);
    AMC_NOW_WORD(2);
    AMC_NOW_WORD(1);
    AMC_NOW_WORD(0);
    default:
        break;
    }
}
#undef AMC_NOW_WORD

/* An exchange: what this rank sends (*out, *sbytes) and what the peer's
 * message makes; the block a rank gives itself goes to its place now (it
 * does not depend on the peer's), as amc_ctrl_coll_load does. */
static void amc_now_load_exchange(amc_now_t *p, const struct amc_comm *comm,
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
            amc_now_copy(recv + (size_t)me * b, in, b);
        }
        p->into = recv + (size_t)peer * b;
        *out    = recv + (size_t)me * b;
        return;
    case AMC_COLL_ALLTOALL:
        if (a->sendbuf != NULL) {
            amc_now_copy(recv + (size_t)me * b, in + (size_t)me * b, b);
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
            amc_now_copy(recv + a->rdispls[me] * dt, a->sendbuf, *sbytes);
            *out = a->sendbuf;
        }
        return;
    case AMC_COLL_ALLTOALLV:
        if (a->in_place) {
            *out = p->into; /* MPI: the blocks to send are the received ones */
        } else {
            if (a->scounts[me] > 0) {
                amc_now_copy(recv + a->rdispls[me] * dt,
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
static void amc_now_load_hears(amc_now_t *p, const struct amc_comm *comm,
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
            amc_now_copy(recv + (size_t)me * b, a->sendbuf, b);
        }
        p->into = recv + (size_t)peer * b;
        return;
    case AMC_COLL_GATHERV:
        if (!a->in_place && (a->scount > 0)) {
            amc_now_copy(recv + a->rdispls[me] * dt, a->sendbuf, a->scount * dt);
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
static inline int amc_now_same(const void *hdr, const amc_wire_packed_t *want, size_t len)
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
static inline void amc_now_reduce_in(const amc_now_t *p, const void *data, size_t len,
                                      uint8_t *theirs, uint8_t *mine)
{
    amc_now_copy(theirs, data, len);
    amc_now_copy(mine, p->mine, len);
    if (p->partner < p->rank) {
        p->kernel(theirs, mine, p->count);
        amc_now_copy(p->into, mine, len);
    } else {
        p->kernel(mine, theirs, p->count);
        amc_now_copy(p->into, theirs, len);
    }
}

/* The usual operands (up to 64 bytes) in a small frame, longer ones in a
 * frame of their own. */
#define AMC_NOW_SMALL 64

typedef union {
    uint8_t     b[AMC_NOW_SMALL];
    long double align;
} amc_now_small_t;

typedef union {
    uint8_t     b[AMC_CTRL_PAY_MAX];
    long double align;
} amc_now_large_t;

/* Past 64 bytes, in a frame of its own: the usual one stays small. */
static __attribute__((noinline)) void amc_now_reduce_large(const amc_now_t *p,
                                                            const void *data, size_t len)
{
    amc_now_large_t theirs, mine;

    amc_now_reduce_in(p, data, len, theirs.b, mine.b);
}

/* A reduce_scatter_block's partial sums into work, from a copy aligned
 * for the kernel, in a frame of its own. */
static __attribute__((noinline)) void amc_now_halve(const amc_now_t *p, const void *data,
                                                    size_t len)
{
    amc_now_large_t theirs;

    memcpy(theirs.b, data, len);
    amc_ctrl_blocks_halve(p->rank, p->size, p->bytes, p->round, p->work, theirs.b, 1,
                          p->kernel, p->count);
}

/* What the partner's message (data, len bytes) makes, from the mailbox or
 * the slot. */
static inline __attribute__((always_inline)) void amc_now_apply(const amc_now_t *p,
                                                                const void *data, size_t len)
{
    switch (p->how) {
    case AMC_NOW_PLACE:
        amc_now_copy(p->into, data, len);
        break;
    case AMC_NOW_REDUCE:
        if (len > AMC_NOW_SMALL) {
            amc_now_reduce_large(p, data, len);
        } else {
            amc_now_small_t theirs, mine;

            amc_now_reduce_in(p, data, len, theirs.b, mine.b);
        }
        break;
    case AMC_NOW_MOVE:
        amc_ctrl_blocks_move(p->rank, p->size, p->bytes, p->round, p->work, (void *)data, 1);
        break;
    case AMC_NOW_HALVE:
        amc_now_halve(p, data, len);
        break;
    case AMC_NOW_BRUCK:
        amc_ctrl_blocks_bruck(p->size, p->bytes, p->round, p->work, (void *)data, 1);
        break;
    case AMC_NOW_TREE:
        amc_ctrl_tree_in(&p->tree, p->round, p->work, data, p->kernel, p->count);
        break;
    default:
        break;
    }
}

/* The result from the partner's message, as the machine's join and its
 * rooted finish make it. */
static int amc_now_take(void *arg, const void *hdr, size_t hdr_len, const void *data,
                         size_t len)
{
    const amc_now_t *p = arg;

    if ((hdr_len != p->hdr_len) || (len != p->rbytes) || !amc_now_same(hdr, &p->hdr, hdr_len)) {
        return 0;
    }
    if (p->how != AMC_NOW_NOTHING) {
        amc_now_apply(p, data, len);
    }
    return 1;
}

/* The exchanges past N=2 (AMC_CTRL_PAY_MAX a round):
 * round 0's message, and where the rounds' results live. The block a rank
 * gives itself goes to its place now, as amc_ctrl_coll_load does. */
static void amc_now_load_rounds(amc_now_t *p, const amc_coll_args_t *a, amc_now_bufs_t *bufs,
                                const uint8_t **out, size_t *sbytes)
{
    uint8_t       *recv = a->recvbuf;
    size_t         b    = a->count * a->dt_size;
    const uint8_t *in   = (a->sendbuf != NULL) ? a->sendbuf : recv; /* in place */

    p->count = a->count;
    p->bytes = b;
    if (amc_alg_rounds_bruck(p->size)) {
        /* the N blocks in work, as the machine keeps them (amc_ctrl_blocks_bruck_load) */
        p->work = bufs->work.b;
        if (a->coll == AMC_COLL_ALLGATHER) {
            in = (a->sendbuf != NULL) ? in : recv + (size_t)p->rank * b;
        }
        amc_ctrl_blocks_bruck_load(a->coll, p->rank, p->size, b, in, p->work);
        if (amc_ctrl_blocks_bruck_moves(a->coll)) {
            amc_ctrl_blocks_bruck(p->size, b, 0, p->work, bufs->msg.b, 0);
            *out    = bufs->msg.b;
            *sbytes = b * amc_ctrl_blocks_bruck_count(p->size, 0);
        } else {
            *out    = p->work;
            *sbytes = b;
        }
        return;
    }
    switch (a->coll) {
    case AMC_COLL_ALLGATHER:
        if (a->sendbuf != NULL) {
            amc_now_copy(recv + (size_t)p->rank * b, in, b);
        }
        *out    = recv + (size_t)p->rank * b;
        *sbytes = b;
        return;
    case AMC_COLL_ALLTOALL:
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        p->work = bufs->work.b;
        memcpy(p->work, in, (size_t)p->size * b);
        *out = bufs->msg.b;
        if (a->coll == AMC_COLL_ALLTOALL) {
            amc_ctrl_blocks_move(p->rank, p->size, b, 0, p->work, bufs->msg.b, 0);
        } else {
            amc_ctrl_blocks_halve(p->rank, p->size, b, 0, p->work, bufs->msg.b, 0, NULL, 0);
        }
        *sbytes = b * (size_t)(p->size / 2);
        return;
    default: /* allreduce */
        *out    = in;
        *sbytes = b;
        return;
    }
}

/* A tree's entry past N=2 (ctrl_tree.h): its data in work, as the
 * machine keeps it, and round 0's message. */
static void amc_now_load_tree(amc_now_t *p, const amc_coll_args_t *a, amc_now_bufs_t *bufs,
                              const uint8_t **out, size_t *sbytes)
{
    p->count = a->count;
    p->bytes = a->count * a->dt_size;
    p->work  = bufs->work.b;
    p->tree.coll  = a->coll;
    p->tree.rank  = p->rank;
    p->tree.size  = p->size;
    p->tree.root  = a->root;
    p->tree.bytes = p->bytes;
    amc_ctrl_tree_load(&p->tree, a, p->work);
    *out    = amc_ctrl_tree_out(&p->tree, 0, p->work, bufs->msg.b);
    *sbytes = amc_ctrl_tree_len(&p->tree, 0, 1);
}

/* Round r's message awaited past N=2: how much, and what it makes (the
 * last round's, the result in the receive buffer). */
static void amc_now_expect(amc_now_t *p, const amc_coll_args_t *a, amc_now_bufs_t *bufs,
                           int last)
{
    size_t blocks = (size_t)1 << p->round;

    if (p->how == AMC_NOW_TREE) {
        p->rbytes = amc_ctrl_tree_len(&p->tree, p->round, 0);
        return;
    }
    if (amc_alg_rounds_bruck(p->size)) {
        if (amc_ctrl_blocks_bruck_moves(a->coll)) {
            p->rbytes = p->bytes * amc_ctrl_blocks_bruck_count(p->size, p->round);
        } else { /* after the 2^r gathered */
            p->rbytes = p->bytes * amc_ctrl_blocks_bruck_gathered(p->size, p->round);
            p->into   = p->work + blocks * p->bytes;
        }
        return;
    }
    switch (a->coll) {
    case AMC_COLL_ALLGATHER: /* the partner's group's 2^r blocks, in rank order */
        p->rbytes = blocks * p->bytes;
        p->into   = (uint8_t *)a->recvbuf + (size_t)(p->partner & ~(int)(blocks - 1)) * p->bytes;
        return;
    case AMC_COLL_ALLTOALL:
        p->rbytes = p->bytes * (size_t)(p->size / 2);
        return;
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        p->rbytes = p->bytes * (size_t)((p->size / 2) >> p->round);
        return;
    default: /* allreduce: the partial result so far, the next round's message */
        p->rbytes = p->bytes;
        p->into   = last ? (uint8_t *)a->recvbuf : bufs->msg.b;
        return;
    }
}

/* Past N=2, once round r's message was taken: round r+1's (*out, *sbytes),
 * or the result where r was the last. */
static void amc_now_next(amc_now_t *p, const amc_coll_args_t *a, amc_now_bufs_t *bufs,
                         int last, const uint8_t **out, size_t *sbytes)
{
    size_t blocks = (size_t)2 << p->round;

    if (p->how == AMC_NOW_TREE) {
        if (last) {
            amc_ctrl_tree_result(&p->tree, p->work, a->recvbuf, p->kernel, p->count);
        } else {
            *out    = amc_ctrl_tree_out(&p->tree, p->round + 1, p->work, bufs->msg.b);
            *sbytes = amc_ctrl_tree_len(&p->tree, p->round + 1, 1);
        }
        return;
    }
    if (amc_alg_rounds_bruck(p->size)) {
        if (last) {
            amc_ctrl_blocks_bruck_result(a->coll, p->rank, p->size, p->bytes, p->work, a->recvbuf,
                                         p->kernel, p->count);
        } else if (amc_ctrl_blocks_bruck_moves(a->coll)) {
            amc_ctrl_blocks_bruck(p->size, p->bytes, p->round + 1, p->work, bufs->msg.b, 0);
            *sbytes = p->bytes * amc_ctrl_blocks_bruck_count(p->size, p->round + 1);
        } else {
            *sbytes = p->bytes * amc_ctrl_blocks_bruck_gathered(p->size, p->round + 1);
        }
        return;
    }
    switch (a->coll) {
    case AMC_COLL_ALLGATHER: /* this rank's group's 2^(r+1) blocks */
        *out    = (uint8_t *)a->recvbuf + (size_t)(p->rank & ~(int)(blocks - 1)) * p->bytes;
        *sbytes = blocks * p->bytes;
        return;
    case AMC_COLL_ALLTOALL:
        if (last) {
            memcpy(a->recvbuf, p->work, (size_t)p->size * p->bytes);
        } else {
            amc_ctrl_blocks_move(p->rank, p->size, p->bytes, p->round + 1, p->work,
                                 bufs->msg.b, 0);
        }
        return;
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        if (last) {
            memcpy(a->recvbuf, p->work + (size_t)p->rank * p->bytes, p->bytes);
        } else {
            amc_ctrl_blocks_halve(p->rank, p->size, p->bytes, p->round + 1, p->work,
                                  bufs->msg.b, 0, NULL, 0);
            *sbytes = p->bytes * (size_t)((p->size / 2) >> (p->round + 1));
        }
        return;
    default: /* allreduce: the partial result */
        *out = bufs->msg.b;
        return;
    }
}

/* Whether the instance is still this call's to run within it: the next
 * one, every earlier one finished here, no error waiting (the
 * communicator's or the context's: the machine's wait hands it to this
 * call), no peer newly dead, the communicator whole; and nothing came for
 * it but this collective's round messages, which progress recorded in its
 * slot (p->slot, once there is one: the call reads them there). A rooted
 * one's message may ask for an answer: the machine's then. */
static inline int amc_now_clear(struct amc_comm *comm, amc_now_t *p)
{
    const amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t       *slot;

    if (__atomic_load_n(&ctrl->pending_err, __ATOMIC_RELAXED) ||
        __atomic_load_n(&comm->ctx->pending_err, __ATOMIC_RELAXED) ||
        amc_peer_watch_news(comm->ctx) || __atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE) ||
        (ctrl->seq_next != ctrl->seq_base)) {
        return 0;
    }
    slot = ctrl->window[ctrl->seq_base & AMC_CTRL_WINDOW_MASK];
    if (slot == NULL) {
        return 1;
    }
    if (p->rooted || (slot->kind != AMC_WIRE_BARRIER) || (slot->barrier.coll != p->coll) ||
        (slot->barrier.bitvec & 1) || (slot->barrier.told != 0) || (slot->status != AMC_SUCCESS) ||
        (slot->early != NULL) || (slot->inst != NULL) || slot->done) {
        return 0;
    }
    p->slot = slot;
    return 1;
}

/* Round p->round's message where progress recorded it in the slot: 1
 * used, 0 another length or root (the machine fails the instance). */
static int amc_now_from_slot(struct amc_comm *comm, amc_now_t *p)
{
    const amc_coll_small_t *sm = amc_coll_slot_small(&comm->ctrl, p->slot);
    size_t                  len = (p->coll != 0) ? sm->in_len[p->round] : 0;

    if ((len != p->rbytes) || ((p->how == AMC_NOW_TREE) && (sm->in_root != p->tree.root))) {
        return 0; /* a tree's for another root: the machine fails it */
    }
    if (len > 0) {
        amc_now_apply(p, amc_coll_slot_in(&comm->ctrl, p->slot, p->round), len);
    }
    return 1;
}

/* Whether round p->round's message is in the slot. */
static inline int amc_now_in_slot(const amc_now_t *p)
{
    return (p->slot != NULL) && ((p->slot->barrier.bitvec >> (p->round + 1)) & 1);
}


/* Whether the call may run here: a blocking one whose messages go by the
 * mailboxes, its instance clear. */
static int amc_now_may(struct amc_comm *comm, const struct amc_request *req,
                       const amc_coll_args_t *args, amc_now_t *p)
{
    return (comm->nrounds > 0) && !req->heap && !req->persistent &&
           ((args == NULL) || amc_alg_rounds_is(args->coll)) &&
           (comm->ctx->tp->ops->take_now != NULL) && amc_round_may_send_now(comm) &&
           amc_now_clear(comm, p);
}

/* Until the partner's message is taken (1), or the machine must go on
 * (0); by chan where not NULL. Past the spin it yields as the machine's
 * wait does, until the machine's wait would sleep. */
static int amc_now_wait(struct amc_comm *comm, void *chan, int src, amc_now_t *p)
{
    amc_context_t           *ctx    = comm->ctx;
    amc_transport_t         *tp     = ctx->tp;
    const amc_wait_policy_t *policy = &ctx->cfg.wait;
    unsigned                 look, yields = 0;
    uint64_t                 since = 0;
    int                      rc;

    for (look = 0;; look++) {
        if (amc_now_in_slot(p)) {
            return amc_now_from_slot(comm, p);
        }
        rc = (chan != NULL) ? tp->ops->chan_take(tp, chan, amc_now_take, p)
                            : tp->ops->take_now(tp, src, amc_now_take, p);
        if (rc == AMC_SUCCESS) {
            return 1;
        }
        if (rc == AMC_TAKE_NEVER) {
            comm->never_now = 1; /* its messages come by UCX: stop asking */
            return 0;
        }
        if (look < policy->spin_count) {
            if ((rc == AMC_TAKE_OTHER) ||
                ((look % AMC_NOW_LOOKS_PER_PASS) == AMC_NOW_LOOKS_PER_PASS - 1)) {
                (void)tp->ops->progress(tp);
                if (!amc_now_clear(comm, p)) {
                    return 0;
                }
            }
            continue;
        }
        if ((rc == AMC_TAKE_OTHER) ||
            ((yields % AMC_NOW_YIELDS_PER_PASS) == AMC_NOW_YIELDS_PER_PASS - 1)) {
            (void)tp->ops->progress(tp);
            if (!amc_now_clear(comm, p)) {
                return 0;
            }
            if (policy->idle_fn != NULL) {
                policy->idle_fn(policy->idle_arg);
            }
        }
        if ((yields % AMC_NOW_YIELDS_PER_CLOCK) == 1) {
            uint64_t now = amc_clock_usec();

            if (yields == 1) {
                since = now;
            } else if (now - since >= policy->yield_usec) {
                return 0; /* the machine's wait sleeps, and watches the timeout */
            }
        }
        yields++;
        sched_yield();
    }
}

/* Round r's partners: the barrier's message (Bruck's, a tree's) goes to
 * rank + 2^r and comes from rank - 2^r; an exchange's on a power of two
 * goes both ways with rank XOR 2^r. */
static inline void amc_now_partners(const struct amc_comm *comm, int coll, int round, int *to,
                                    int *from)
{
    int d = 1 << round;

    if (!amc_alg_rounds_passes((unsigned)coll, comm->size)) {
        *to   = comm->rank ^ d;
        *from = *to;
        return;
    }
    *to   = (comm->rank + d >= comm->size) ? comm->rank + d - comm->size : comm->rank + d;
    *from = (comm->rank - d < 0) ? comm->rank - d + comm->size : comm->rank - d;
}

/* The machine goes on from round r: its message made (out, sbytes) and
 * sent or not. */
static int amc_now_leave(struct amc_comm *comm, struct amc_request *req,
                         const amc_coll_args_t *args, const amc_now_t *p, int round, int sent,
                         const uint8_t *out, size_t sbytes)
{
    amc_now_left_t left;

    left.round    = round;
    left.sent     = sent;
    left.out      = out;
    left.out_len  = sbytes;
    left.work     = p->work;
    left.work_len = (p->work == NULL)           ? 0
                    : (p->how == AMC_NOW_TREE) ? amc_ctrl_tree_work_len(&p->tree)
                                               : (size_t)p->size * p->bytes;
    amc_context_count(&comm->ctx->within_left);
    return amc_barrier_enter_left(comm, req, args, &left);
}

int amc_rounds_now(struct amc_comm *comm, struct amc_request *req, const amc_coll_args_t *args,
                   int *status)
{
    amc_context_t *ctx  = comm->ctx;
    amc_now_bufs_t bufs;
    amc_now_t      p;
    void          *chan_to, *chan_from;
    const uint8_t *out    = NULL;
    size_t         sbytes = 0;
    uint8_t        coll = (args != NULL) ? args->coll : 0, oneway = AMC_CTRL_BOTH;
    uint32_t       w1;
    int            round, to, from, dest, src, last, root = -1;

    p.coll   = coll;
    p.rooted = (args != NULL) && amc_alg_rounds_rooted(coll) &&
               !amc_alg_rounds_tree(coll, comm->size);
    p.slot   = NULL;
    if (!amc_now_may(comm, req, args, &p)) {
        return 0;
    }
    p.rank   = comm->rank;
    p.size   = comm->size;
    p.rbytes = 0;
    p.how    = AMC_NOW_NOTHING;
    p.token  = 0;
    p.kernel = NULL;
    p.work   = NULL;
    p.bytes  = 0;
    if (args != NULL) {
        if (amc_alg_rounds_reduces(coll)) {
            p.kernel = amc_op_kernel(args->op, args->dt); /* predefined: amc_ctrl_coll_ok */
        }
        if (p.rooted) { /* N=2 (amc_ctrl_coll_ok) */
            root = amc_alg_rounds_root(args->root);
            if (amc_alg_rounds_sends(coll, comm->rank, root)) {
                return 0; /* amc_ctrl_coll_send_now's, or it asks for an answer */
            }
            oneway = AMC_CTRL_SENDS; /* the peer's message: on a token */
            amc_now_load_hears(&p, comm, args);
        } else if (comm->nrounds == 1) {
            amc_now_load_exchange(&p, comm, args, &out, &sbytes);
        } else if (amc_alg_rounds_tree(coll, comm->size)) {
            root  = args->root; /* in the header: a message for another root is not taken */
            p.how = AMC_NOW_TREE;
            amc_now_load_tree(&p, args, &bufs, &out, &sbytes);
        } else {
            amc_now_load_rounds(&p, args, &bufs, &out, &sbytes);
        }
    }
    p.hdr_len = amc_round_hdr_pack(comm, coll, oneway, root, comm->ctrl.seq_next, AMC_SUCCESS,
                                   0, &p.hdr);
    w1 = p.hdr.w[1];
    for (round = 0;; round++) {
        last    = (round + 1 == comm->nrounds);
        p.round = round;
        amc_now_partners(comm, coll, round, &to, &from);
        dest    = amc_comm_peer(comm, to);
        chan_to = amc_round_chan(comm, to, dest);
        p.hdr.w[1] = w1 | ((uint32_t)round << 16);
        if (!p.rooted) {
            /* this round's message first; the partner's header is this one with its rank */
            p.hdr.w[2] = (uint32_t)comm->rank;
            if (amc_round_send_chan(comm, chan_to, dest, &p.hdr, p.hdr_len, out, sbytes) !=
                AMC_SUCCESS) {
                if (round == 0) {
                    /* a block given to itself is in place already: the
                     * machine's copy writes the same bytes */
                    return 0;
                }
                *status = amc_now_leave(comm, req, args, &p, round, 0, out, sbytes);
                return 1;
            }
        }
        /* what the partner's message makes: after the send, while it
         * travels (the partner's call waits for the send, not for this) */
        if (args != NULL) {
            if ((round == 0) && (p.how == AMC_NOW_TREE)) {
                /* its how set at the entry */
            } else if ((round == 0) && amc_alg_rounds_bruck(comm->size)) {
                /* the blocks into work; an allreduce reduces them all at the end */
                p.how = amc_ctrl_blocks_bruck_moves(coll) ? AMC_NOW_BRUCK : AMC_NOW_PLACE;
            } else if (round == 0) {
                p.how = ((coll == AMC_COLL_ALLREDUCE) || (coll == AMC_COLL_REDUCE_SCATTER) ||
                         (coll == AMC_COLL_REDUCE) || (coll == AMC_COLL_SCAN))
                            ? AMC_NOW_REDUCE
                        : (coll == AMC_COLL_REDUCE_SCATTER_BLOCK)
                            ? ((comm->nrounds == 1) ? AMC_NOW_REDUCE : AMC_NOW_HALVE)
                        : ((coll == AMC_COLL_ALLTOALL) && (comm->nrounds > 1)) ? AMC_NOW_MOVE
                                                                                : AMC_NOW_PLACE;
            }
            if (comm->nrounds > 1) {
                p.partner = from;
                p.mine    = out;
                amc_now_expect(&p, args, &bufs, last);
            }
        }
        p.partner  = from;
        p.hdr.w[2] = (uint32_t)from;
        src        = (from == to) ? dest : amc_comm_peer(comm, from);
        chan_from  = (from == to) ? chan_to : amc_round_chan(comm, from, src);
        if (!amc_now_wait(comm, chan_from, src, &p)) {
            if (p.rooted) {
                return 0; /* it sent nothing */
            }
            *status = amc_now_leave(comm, req, args, &p, round, 1, out, sbytes);
            return 1;
        }
        if ((args != NULL) && (comm->nrounds > 1)) {
            amc_now_next(&p, args, &bufs, last, &out, &sbytes);
        }
        if (last) {
            break;
        }
    }
    if (p.token) {
        /* consumed: the sender's token back (a credit when due) */
        amc_flow_release(&ctx->flow, amc_comm_peer(comm, comm->rank ^ 1));
        amc_context_flush(ctx);
    }
    amc_context_count(&ctx->within_done);
    if (p.slot == NULL) {
        amc_coll_ctrl_pass(&comm->ctrl);
    } else {
        /* its number taken, and its slot done: the window slides past it */
        amc_spin_lock(&comm->ctrl.lock);
        comm->ctrl.seq_next++;
        amc_coll_ctrl_release(&comm->ctrl, p.slot);
        amc_spin_unlock(&comm->ctrl.lock);
    }
    amc_request_complete(req, AMC_SUCCESS);
    *status = AMC_SUCCESS;
    return 1;
}
