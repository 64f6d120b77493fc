/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-communicator control structure of the patent, generalised to any
 * number of outstanding non-blocking instances.
 *
 * Each collective instance (one sequence number) has a slot. What every kind
 * needs is in the slot itself (sequence number, kind, status, request); each
 * kind's own state hangs off it: a scheduled collective's instance and its
 * early messages, or a barrier's bitvec (bit 0 = the local rank entered, bit
 * r+1 = round r's message arrived), cur_val (the synchronization point
 * reached), the send_posted / send_complete counters and one header per
 * round of the communicator (not the most any communicator could need: a
 * slot of a 2-rank communicator carries one). Slots of instances
 * seq_base .. seq_base+W-1 sit in a window
 * indexed by seq % W; for a blocking barrier only two of them are ever in use,
 * the patent's bitvec_cur and bitvec_next (doc/design.md says why). Instances
 * further ahead (a peer that ran many ibarriers ahead, or many local ones
 * outstanding) wait in the early-arrival store, a list sorted by seq.
 *
 * Everything here is called with ctrl->lock held, except init and cleanup.
 */
#ifndef AMC_COLL_CTRL_H
#define AMC_COLL_CTRL_H

#include "ctrl/early_store.h"
#include "base/spinlock.h"
#include "handlers/wire.h"
#include "transport/transport.h"

#include <stdint.h>

#define AMC_CTRL_WINDOW     8   /* power of two */
#define AMC_CTRL_WINDOW_MASK (AMC_CTRL_WINDOW - 1)
#define AMC_CTRL_MAX_ROUNDS 32  /* ceil(log2 N) for any int N */
#define AMC_CTRL_ABORTED    16  /* abandoned instances remembered (amc_coll_ctrl_note_aborted) */

/* The most bytes a round message of a small collective carries, at every
 * N: a mailbox carries it whole (with its header well inside
 * AMC_SHM_MAX_BYTES), and a call of up to this many bytes runs on the
 * rounds, and within the call (am_coll/barrier/rounds_now.c), instead of
 * on the engine, whose selection, schedule and instance cost 700-1,900
 * instructions a call more (doc/design.md, "Small collectives on the barrier's rounds"). A
 * slot then carries 2 (log2 N + 1) KiB of payload. */
#define AMC_CTRL_PAY_MAX    1024

struct amc_request;
struct amc_comm;
struct amc_coll_inst;

/* A reduction's loop over count elements: inout[i] = in[i] (op) inout[i]. */
typedef void (*amc_ctrl_kernel_t)(const void *in, void *inout, size_t count);

/* A barrier's state in its slot (am_coll/barrier/barrier.c), or a small collective's
 * that runs on the same rounds and carries its partial results in them. */
typedef struct amc_barrier_slot {
    uint64_t         bitvec;
    int              cur_val;        /* trailing ones of bitvec, minus one */
    int              rounds_sent;    /* rounds handed to the transport so far */
    uint32_t         send_posted;
    uint32_t         send_complete;
    amc_completion_t send_comp;      /* every send of this instance completes here */
    /* the small collectives'; coll is 0 for a barrier */
    uint8_t          coll;           /* the wire's coll, from the first message or the entry */
    uint8_t          reduced;        /* the result went to recvbuf (or the request is gone) */
    uint8_t          told;           /* before the local rank entered, peers gave the instance
                                      * up with this status: its call fails with it */
    uint16_t         bytes;          /* bytes per rank (per block for allgather and
                                      * alltoall); 0 until the local rank entered */
    uint16_t         rbytes;         /* a rooted one's or a v-form's at N=2: what this
                                      * rank's call takes from the other (a v-form's two
                                      * directions may differ) */
    uint8_t          half;           /* alltoall: N/2, the blocks of every round */
    int32_t          root;           /* a rooted one's root (-1: none, the scans' past N=2) */
    uint8_t          oneway;         /* a rooted one's part: AMC_CTRL_* */
} amc_barrier_slot_t;

/* amc_barrier_slot_t.oneway: at N=2 a rooted collective is one message,
 * from the rank that holds the data to the one that needs it. */
enum {
    AMC_CTRL_BOTH  = 0, /* the symmetric exchanges */
    AMC_CTRL_SENDS = 1, /* this rank sends with an eager token: it hears nothing */
    AMC_CTRL_ASKS  = 2, /* this rank sends without a token: it waits for the answer */
    AMC_CTRL_HEARS = 3  /* this rank receives (and answers a message that asks) */
};

/* The wire's alg of a rooted one's messages (the barrier's rounds carry 0). */
enum {
    AMC_CTRL_MSG_EAGER  = 0, /* the data, on a token the receiver gives back */
    AMC_CTRL_MSG_ASK    = 1, /* the data without a token: answer once it is consumed */
    AMC_CTRL_MSG_ANSWER = 2  /* no data: the receiver consumed it */
};

/* The rest of a small collective's call, at the start of the slot's
 * payload (amc_coll_slot_small): the barrier never touches it, so its
 * slot stays in two cache lines before the headers. */
typedef struct amc_coll_small {
    uint16_t          in_len[AMC_CTRL_MAX_ROUNDS]; /* what round r's message carried */
    amc_ctrl_kernel_t kernel;        /* allreduce's op for the datatype, else NULL */
    size_t            count;
    void             *recvbuf;
    const void       *own;           /* a rooted one's input, kept for its result */
    int32_t           in_root;       /* the root the messages named, AMC_CTRL_ROOTS_DIFFER
                                      * where two named different ones */
    uint8_t           in_alg;        /* its AMC_CTRL_MSG_* */
} amc_coll_small_t;

#define AMC_CTRL_ROOTS_DIFFER INT32_MIN

#define AMC_CTRL_SMALL_BYTES ((sizeof(amc_coll_small_t) + 15) & ~(size_t)15)

typedef struct amc_coll_slot {
    uint64_t               seq;
    uint8_t                kind;           /* AMC_WIRE_BARRIER / _COLL once known, else 0 */
    uint8_t                freed;          /* its request was freed while it ran: it still
                                            * writes its results, unobserved (not so a
                                            * request that timed out) */
    int                    status;         /* first error this instance saw */
    int                    done;           /* finished: all arrived, all sends complete */
    struct amc_request    *req;            /* NULL once notified or abandoned */
    struct amc_comm       *comm;           /* for the send completion handlers */
    struct amc_coll_slot  *next;           /* early-arrival store or free list */
    /* a scheduled collective's (am_coll/coll/coll_engine.c) */
    struct amc_coll_inst  *inst;           /* its state, once posted */
    amc_early_msg_t       *early;          /* its data messages ahead of their round */
    /* a barrier's */
    amc_barrier_slot_t     barrier;
    amc_wire_packed_t      hdr[];          /* its rounds' headers, alive until each send
                                            * completes: the control structure's nhdr */
} amc_coll_slot_t;

typedef struct amc_coll_ctrl {
    amc_spinlock_t   lock;
    uint64_t         seq_next;     /* the next local instance gets this number */
    uint64_t         seq_base;     /* oldest instance whose slot is still in use */
    amc_coll_slot_t *window[AMC_CTRL_WINDOW];
    amc_coll_slot_t *early;        /* slots with seq >= seq_base + W, sorted */
    unsigned         early_count;
    unsigned         early_max;    /* starts: seq_next < seq_base + W + early_max */
    uint64_t         ahead_max;    /* arrivals: seq < seq_base + ahead_max */
    int              full_logged;  /* a refused start was logged; a successful one clears it */
    amc_coll_slot_t *free_slots;
    unsigned         active;       /* slots in use */
    int              pending_err;  /* an error no instance could take */
    uint64_t         aborted[AMC_CTRL_ABORTED]; /* recently abandoned instances, UINT64_MAX: none */
    unsigned         aborted_next;
    amc_early_release_fn_t drop_early;  /* gives a dropped early message's descriptor or token back */
    void            *drop_arg;
    unsigned         nhdr;         /* headers per slot: the barrier's rounds on this communicator */
    unsigned         pay;          /* payload bytes per slot after the headers: per round, what
                                    * arrived and what was sent (pay_max each), then an
                                    * alltoall's blocks (twice that); 0 where the small
                                    * collectives cannot run */
    unsigned         pay_max;      /* the most a round message carries: AMC_CTRL_PAY_MAX;
                                    * 0 with pay */
    size_t           pay_off;      /* where it starts in a slot: aligned for any datatype */
} amc_coll_ctrl_t;

/* Whether the small collectives can run on the rounds of a communicator of
 * size ranks (rank XOR 2^r on a power of two, Bruck's rank + 2^r on any
 * other), so that its slots carry room for their data. */
static inline int amc_coll_ctrl_carries_data(int size)
{
    return (size > 1) && (size <= (1 << 30));
}

/* lock_live: the context's "threads may meet now" flag (base/spinlock.h), or NULL.
 * nhdr: the barrier's rounds on the communicator (its slots carry that many
 * headers), at most AMC_CTRL_MAX_ROUNDS; payload: whether the slots carry
 * room for the small collectives' round data. */
void amc_coll_ctrl_init(amc_coll_ctrl_t *ctrl, unsigned early_max, const int *lock_live,
                        amc_early_release_fn_t drop_early, void *drop_arg, unsigned nhdr,
                        int payload);

/* Round r's data in a slot: what arrived (in) and what this rank sent (out). */
static inline amc_coll_small_t *amc_coll_slot_small(const amc_coll_ctrl_t *ctrl,
                                                    amc_coll_slot_t *slot)
{
    return (amc_coll_small_t *)((uint8_t *)slot + ctrl->pay_off);
}

static inline uint8_t *amc_coll_slot_in(const amc_coll_ctrl_t *ctrl, amc_coll_slot_t *slot,
                                        int round)
{
    return (uint8_t *)slot + ctrl->pay_off + AMC_CTRL_SMALL_BYTES +
           (size_t)round * 2 * ctrl->pay_max;
}

static inline uint8_t *amc_coll_slot_out(const amc_coll_ctrl_t *ctrl, amc_coll_slot_t *slot,
                                         int round)
{
    return amc_coll_slot_in(ctrl, slot, round) + ctrl->pay_max;
}

/* The small alltoall's N blocks as they move (2 pay_max bytes). */
static inline uint8_t *amc_coll_slot_work(const amc_coll_ctrl_t *ctrl, amc_coll_slot_t *slot)
{
    return amc_coll_slot_in(ctrl, slot, (int)ctrl->nhdr);
}
/* drop is called for every slot still in use (teardown with instances
 * running): it releases what the slot holds beyond itself (request,
 * collective state); early messages are freed here. */
void amc_coll_ctrl_cleanup(amc_coll_ctrl_t *ctrl, void (*drop)(amc_coll_slot_t *slot));

typedef enum {
    AMC_CTRL_FOUND,
    AMC_CTRL_OLDER,     /* seq < seq_base: that instance finished here */
    AMC_CTRL_NO_ROOM,   /* seq is further ahead than any peer can be (ahead_max) */
    AMC_CTRL_NO_MEMORY
} amc_coll_lookup_t;

/* How far ahead of this rank's oldest unfinished instance a peer's message
 * can legitimately be, on a communicator of size ranks where a rank starts
 * at most W + early_max instances from its own oldest unfinished one and
 * has at most tokens eager messages unread at each peer (AMC_EAGER_TOKENS).
 * A peer has finished an instance this rank has not started only if this
 * rank still holds an eager message of it (a token): at most
 * (size - 1) * tokens such instances; the others before the peer's oldest
 * unfinished one this rank has started, at most W + early_max. The peer
 * itself starts at most W + early_max beyond its oldest. So
 * ahead_max = 2 (W + early_max) + (size - 1) tokens; further is garbage. */
uint64_t amc_coll_ctrl_ahead_max(unsigned early_max, int size, unsigned tokens);

/* Whether this rank may start another instance: at most W + early_max from
 * its oldest unfinished one (doc/design.md, "Back-pressure"). */
static inline int amc_coll_ctrl_may_start(const amc_coll_ctrl_t *ctrl)
{
    /* the window may have slid past seq_next: a bcast this rank forwarded
     * before its call finished (aborted) and was released */
    return (ctrl->seq_next < ctrl->seq_base) ||
           (ctrl->seq_next - ctrl->seq_base < (uint64_t)AMC_CTRL_WINDOW + ctrl->early_max);
}

/* Whether the next local instance may begin and end within its call
 * without a slot (amc_coll_ctrl_pass): every earlier one finished here,
 * and nothing came for it yet. */
static inline int amc_coll_ctrl_idle(const amc_coll_ctrl_t *ctrl)
{
    return (ctrl->seq_next == ctrl->seq_base) &&
           (ctrl->window[ctrl->seq_base & AMC_CTRL_WINDOW_MASK] == NULL);
}

/* Where amc_coll_ctrl_idle: the next local instance began and ended
 * within its call (a rooted sender's at N=2, its message out on a token):
 * its number is taken and the window slides past it, as past a slot
 * released at once. A message for it later is a finished instance's. */
void amc_coll_ctrl_pass(amc_coll_ctrl_t *ctrl);

/* The slot of instance seq, created empty if it has none yet. */
amc_coll_lookup_t amc_coll_ctrl_slot(amc_coll_ctrl_t *ctrl, uint64_t seq,
                                     struct amc_comm *comm, amc_coll_slot_t **slot_p);

/* The slot of instance seq if it exists, else NULL. */
amc_coll_slot_t *amc_coll_ctrl_find(amc_coll_ctrl_t *ctrl, uint64_t seq);

/* Gives a finished instance's slot back and slides the window over every
 * finished instance at its base. */
void amc_coll_ctrl_release(amc_coll_ctrl_t *ctrl, amc_coll_slot_t *slot);

/* Instance seq was abandoned here (a mismatch, a failed call, a peer's
 * abort): messages of it that peers sent before they learned of it keep
 * coming after its slot is gone, and are dropped quietly instead of being
 * reported as protocol errors against whatever runs next. The last
 * AMC_CTRL_ABORTED are remembered. */
void amc_coll_ctrl_note_aborted(amc_coll_ctrl_t *ctrl, uint64_t seq);
int  amc_coll_ctrl_was_aborted(const amc_coll_ctrl_t *ctrl, uint64_t seq);

/* Sets bit and recomputes cur_val; returns the old cur_val. */
static inline int amc_coll_slot_set_bit(amc_coll_slot_t *slot, int bit)
{
    amc_barrier_slot_t *b   = &slot->barrier;
    int                 old = b->cur_val;

    b->bitvec |= (uint64_t)1 << bit;
    b->cur_val = __builtin_ctzll(~b->bitvec) - 1;
    return old;
}

#endif
