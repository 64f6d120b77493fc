/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mailboxes' layout and state, shared by transport/shm.c (messages)
 * and transport/shm_pull.c (rendezvous data pulled by the receiver), and
 * the few steps both take on them.
 */
#ifndef AMC_SHM_LAYOUT_H
#define AMC_SHM_LAYOUT_H

#include "base/log.h"
#include "base/spinlock.h"
#include "transport/send_queue.h"
#include "transport/transport.h"

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

typedef struct amc_shm     amc_shm_t;      /* this rank's inbox and the rings it writes */
typedef struct amc_shm_out amc_shm_out_t;  /* one ring this rank writes, to one peer */
typedef struct amc_shm_in  amc_shm_in_t;   /* one ring this rank reads, from one peer */

/* amc_shm_send's answer when a message does not fit a mailbox: the caller
 * sends it another way (a value apart from send_now's answers). */
#define AMC_SHM_TOO_BIG 3

/* One message's cells at most: the control word, the header rounded up to
 * 8 bytes, the data. */
#define AMC_SHM_MAX_BYTES 2048u

/* Whether amc_shm_send takes a message of this size (else AMC_SHM_TOO_BIG):
 * a caller that asks first may hand over the send as its last act. */
static inline int amc_shm_fits(size_t hdr_len, size_t len)
{
    return (hdr_len <= 0xff) && (len <= AMC_SHM_MAX_BYTES) &&
           (sizeof(uint64_t) + ((hdr_len + 7u) & ~(size_t)7u) + len <= AMC_SHM_MAX_BYTES);
}


#define AMC_SHM_CELL      64u
#define AMC_SHM_NCELLS    128u   /* cells per ring: 8 KiB */
_Static_assert(AMC_SHM_MAX_BYTES * 4 == AMC_SHM_NCELLS * AMC_SHM_CELL,
               "one message's cells are a quarter of the ring at most");
_Static_assert(AMC_SHM_NCELLS == 128, "a sender's stale bits are two words (amc_shm_send)");

/* The control word, the first 8 bytes of a message's first cell, stored
 * last with release: valid bit, flags, header length, data length, and
 * the message's position (cells written before it, low 32 bits), which is
 * its sequence number: a word left from an earlier lap names a position a
 * multiple of the ring behind. The data follows the header at the next
 * 8-byte boundary, so a handler reduces aligned words. */
#define AMC_SHM_CTL_VALID     (1ull << 63)
#define AMC_SHM_CTL_SKIP      (1ull << 56)  /* the rest of the ring is unused: go on at 0 */
#define AMC_SHM_CTL_PULL      (1ull << 57)  /* the data is a pull's descriptor (shm_pull.c) */
#define AMC_SHM_CTL_DATA      (1ull << 58)  /* a piece of a pull's data, resent (shm_pull.c) */
#define AMC_SHM_CTL_FLAGS     (0x7full << 56)
#define AMC_SHM_CTL_HDR(_w)   ((size_t)(((_w) >> 48) & 0xff))
#define AMC_SHM_CTL_LEN(_w)   ((size_t)(((_w) >> 32) & 0xffff))
#define AMC_SHM_CTL_POS(_w)   ((uint32_t)(_w))
#define AMC_SHM_ALIGN8(_n)    (((_n) + 7u) & ~(size_t)7u)

/* The inbox's header. Every field but sleepers is written by peers, so
 * the owner trusts none of them: a registration counts only if it carries
 * the key its writer published (amc_shm_adopt). */
typedef struct amc_shm_inbox {
    uint64_t key;        /* the owner's, published with its address: a peer that
                          * opened the file through /proc checks it before it writes */
    uint32_t gen;        /* writers add one after their reg[] store: the owner looks */
    uint8_t  pad0[52];
    uint32_t sleepers;   /* threads of the owner asleep or going to: ring the bell */
    uint8_t  pad1[60];
    uint64_t reg[];      /* ring i's writer's key, stored once its ring is ready; ring
                          * i is the writer whose place on the node is i, or i + 1
                          * from the owner's on (amc_shm_ring_of) */
} amc_shm_inbox_t;

/* Rendezvous data to a peer of the node goes by pull (transport/shm_pull.c):
 * the message names one of its ring's AMC_SHM_PULLS slots, one line each,
 * which both sides share until the receiver says it is done. */
#define AMC_SHM_PULLS 4u

enum { /* amc_shm_pull_slot_t.state, the receiver's stores */
    AMC_SHM_PULL_SENT   = 0, /* the message is out; the data not asked for yet */
    AMC_SHM_PULL_OPEN   = 1, /* the receiver copies; dst is set: the sender may help */
    AMC_SHM_PULL_DONE   = 2, /* every chunk is in place, or dropped: the data is the sender's again */
    AMC_SHM_PULL_RESEND = 3  /* cross-memory attach was refused: send all of it through
                              * the ring (AMC_SHM_CTL_DATA messages) */
};

/* The data moves in chunks that either side takes with a fetch-and-add on
 * claimed: the receiver reads its chunks (process_vm_readv), the sender,
 * if it is in progress meanwhile, writes the others (process_vm_writev) and
 * counts them in pushed. */
typedef struct amc_shm_pull_slot {
    uint64_t claimed;    /* chunks taken, by either side */
    uint64_t pushed;     /* bytes of the chunks the sender took (its release store) */
    uint64_t dst;        /* where they go, in the receiver (its store, before OPEN) */
    uint32_t state;      /* AMC_SHM_PULL_* */
    uint32_t asleep;     /* the sender sleeps: DONE rings its bell */
    uint32_t nopull;     /* the receiver pulls no more (its store, in every slot;
                          * a reserve leaves it): rendezvous data by UCX. In the
                          * slot the sender writes anyway, not in the tail's
                          * line, which a pull would take from the receiver */
    uint8_t  pad[28];
} amc_shm_pull_slot_t;
_Static_assert(sizeof(amc_shm_pull_slot_t) == 64, "a slot is a line of its own");

#define AMC_SHM_PULL_FAILED (1ull << 63) /* in pushed: a chunk the sender could not write */

/* A pull message's data. */
typedef struct amc_shm_pull_desc {
    uint64_t addr;       /* the data, in the sender */
    uint64_t len;
    uint32_t slot;       /* < AMC_SHM_PULLS */
    uint32_t chunk;      /* bytes a claim takes */
} amc_shm_pull_desc_t;

typedef struct amc_shm_ring {
    uint64_t tail;       /* cells the receiver freed (its store, release) */
    uint8_t  pad[56];
    amc_shm_pull_slot_t pull[AMC_SHM_PULLS];
    uint8_t  cells[];    /* AMC_SHM_NCELLS x AMC_SHM_CELL */
} amc_shm_ring_t;

/* A resent piece of a pull's data (AMC_SHM_CTL_DATA): its header; the
 * piece follows as the message's data. Pieces come in order. */
typedef struct amc_shm_pull_piece {
    uint32_t slot;
    uint32_t zero;
    uint64_t off;
} amc_shm_pull_piece_t;

/* The sender's record of a pull in flight. */
typedef struct amc_shm_pull_out {
    amc_shm_pull_desc_t desc;    /* the message's data (read from here while it is queued) */
    const uint8_t      *data;
    amc_completion_t   *comp;
    uint64_t            pushed;  /* bytes of the chunks it took */
    uint64_t            resent;  /* bytes sent through the ring since RESEND */
    int                 busy;
    int                 helped;  /* it took chunks until none was left */
} amc_shm_pull_out_t;

/* The receiver's record of a pull: the descriptor its handler is given. */
enum {
    AMC_SHM_PULL_FREE,
    AMC_SHM_PULL_ARRIVED,
    AMC_SHM_PULL_WAITING,   /* fetch returned in progress: the sender's chunks to come */
    AMC_SHM_PULL_SETTLING,  /* a thread looks at it (from WAITING or RESENDING) */
    AMC_SHM_PULL_RESENDING, /* the data comes through the ring */
    AMC_SHM_PULL_RESENT     /* all of it came: progress completes the fetch */
};
typedef struct amc_shm_pull_in {
    amc_shm_in_t     *in;
    uint64_t          addr;
    uint64_t          len;
    uint64_t          chunk;
    uint64_t          own;       /* bytes of the chunks this side took (read or fenced off) */
    uint64_t          got;       /* bytes resent so far */
    uint8_t          *buf;       /* fetch's */
    amc_completion_t *comp;      /* fetch's, while WAITING or RESENDING */
    int               state;     /* AMC_SHM_PULL_FREE... (atomic) */
    int               failed;    /* AMC_ERR_* of a chunk this side could not read; 0 */
    int               refused;   /* cross-memory attach refused: ask for a resend */
    int               fenced;    /* every chunk is claimed: the sender takes no more */
    unsigned          slot;
} amc_shm_pull_in_t;

#define AMC_SHM_MAGIC   0x414d4d42u /* "AMMB" */
#define AMC_SHM_VERSION 3u

/* The owner's sleep makes the senders' fence (membarrier): they skip theirs. */
#define AMC_SHM_ADDR_MEMBARRIER 1u
/* The owner pulls rendezvous data from its peers and lets them write into
 * it (cross-memory attach: transport/shm_pull.c). */
#define AMC_SHM_ADDR_PULL       2u

/* What a rank publishes (PMIX_LOCAL) so that the peers on its node can
 * write to it, and can check that what they opened is it. */
typedef struct {
    uint32_t magic;
    uint32_t version;
    int32_t  pid;
    int32_t  inbox_fd;   /* the inbox memfd, opened as /proc/pid/fd/inbox_fd */
    int32_t  bell_fd;    /* the doorbell pipe, likewise */
    uint32_t nrings;     /* rings in the inbox: writers it takes */
    uint32_t ncells;     /* cells per ring */
    uint32_t flags;      /* AMC_SHM_ADDR_* */
    uint32_t place;      /* this rank's place among its node's ranks: its ring in theirs */
    uint32_t pad;
    uint64_t key;        /* random: in the inbox's header, and in this rank's registrations */
    uint64_t inbox_dev;  /* the inbox's and the doorbell's identity (fstat): */
    uint64_t inbox_ino;  /* what a peer opened through /proc must be these */
    uint64_t bell_dev;
    uint64_t bell_ino;
} amc_shm_addr_t;

/* A peer of the node, as it published itself: the rings to and from it
 * reach its process through this, never through what a ring says. */
typedef struct amc_shm_peer {
    amc_shm_addr_t addr;
    int            rank;       /* -1: nobody published this place */
    int            pidfd;      /* its process, checked to be it (atomic; -1 until then) */
    int            bell;       /* its doorbell, opened on the first need and checked (atomic) */
    int            warned;     /* a registration with another key was reported */
    int            bell_warned; /* its doorbell could not be opened: reported */
    uint64_t       alive_usec; /* when pidfd last said it lives (atomic) */
} amc_shm_peer_t;

struct amc_shm_out {
    amc_shm_ring_t  *ring;       /* in the peer's inbox */
    uint32_t        *sleepers;   /* the peer's */
    void            *map;
    size_t           map_len;
    int              dest;
    amc_shm_t       *shm;
    amc_shm_peer_t  *peer;       /* its process and doorbell */
    int              bad_tail;   /* the receiver's tail is beyond what was written: it is
                                  * treated as failed (amc_shm_drain) */
    int              fence;      /* a full fence before the look at sleepers */
    uint64_t         head;       /* cells written (only this side writes) */
    uint64_t         tail_seen;  /* the receiver's tail as last read */
    uint64_t         stale[AMC_SHM_NCELLS / 64]; /* cells whose first word is a message's
                                  * payload, not a control word (amc_shm_put) */
    int              lock;       /* while threads may meet */
    amc_send_queue_t q;          /* sends waiting for room, in order (lock) */
    amc_shm_out_t   *next;       /* every ring this rank writes */
    int              pull;       /* rendezvous data goes by pull (both sides allow it) */
    unsigned         npulls;     /* pulls[] busy (lock) */
    amc_shm_pull_out_t pulls[AMC_SHM_PULLS]; /* by slot (lock) */
};

/* A ring this rank reads. An empty poll is one load and one compare: the
 * word at the tail is compared with idle, a word already found there that
 * says nothing came yet (0 says so at any tail); only a word that differs
 * is checked in full. */
struct amc_shm_in {
    const uint64_t *next;        /* the first word of the cell at tail; a broken
                                  * ring's points at idle: it never looks busy */
    uint64_t        idle;
    amc_shm_ring_t *ring;
    uint64_t        tail;        /* cells read; the next message's position */
    int             src;
    int             broken;      /* a malformed message: read no more */
    amc_shm_peer_t *peer;        /* its writer's process and doorbell */
    amc_shm_pull_in_t pulls[AMC_SHM_PULLS]; /* by slot */
};

/* Rings amc_shm_take_now remembers, by sender (a power of two). */
#define AMC_SHM_TAKE_HINTS 16

struct amc_shm {
    /* the idle look's and the poll's fields first, as few lines as they fit */
    amc_transport_t *tp;
    amc_log_t        log;
    int              inbox_fd;
    int              bell_r, bell_w;
    int              barrier_ok; /* this process takes and makes expedited membarriers */
    amc_shm_inbox_t *inbox;
    size_t           inbox_len;
    unsigned         nrings;
    uint32_t         gen_seen;   /* the inbox's gen when its registrations were last read */
    amc_shm_in_t    *in;         /* [nrings]; the first nin are in use */
    unsigned         nin;
    int              poll_lock;  /* one thread reads the inbox at a time */
    amc_shm_out_t   *outs;       /* (conn_lock of the caller) */
    unsigned         nout;
    unsigned         nqueued;    /* sends waiting for room (atomic) */
    unsigned         take_at[AMC_SHM_TAKE_HINTS]; /* by the sender's rank modulo
                                  * AMC_SHM_TAKE_HINTS, the ring amc_shm_take_now last read
                                  * of it: a call whose rounds take from several peers in
                                  * turn finds each without a search */
    int              pull_ok;    /* this process offered pulls (cross-memory attach) */
    unsigned         pulls_out;  /* pulls of this rank's data in flight (atomic) */
    unsigned         pulls_in;   /* fetches waiting for the sender's chunks (atomic) */
    unsigned         nwork;      /* the three above together: the idle look's one load */
    int              pull_lock;  /* the receiver's records, while threads may meet */
    int              refused;    /* cross-memory attach was refused at run time: no more
                                  * pulls either way (atomic) */
    int              light_sleep; /* membarrier failed after this rank published it: its
                                  * senders may not fence, so it sleeps briefly */
    unsigned         place;      /* this rank's place among its node's ranks */
    amc_shm_peer_t  *peers;      /* [nrings], by ring: ring i's writer and reader */
    unsigned char   *adopted;    /* [nrings]: ring i is in in[] */
    amc_peer_set_t   known;      /* the ranks in peers[] */
    amc_shm_addr_t   self;       /* what it publishes */
};

/* Taken only while threads may meet (tp->lock_live), read at each call:
 * the context sets the flag after the transport exists. */
static inline int amc_shm_lock(const amc_shm_t *shm, int *word)
{
    unsigned spins = 0;

    if (!amc_lock_live(shm->tp->lock_live)) {
        return 0;
    }
    while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(word, __ATOMIC_RELAXED)) {
            if (++spins > 100) {
                sched_yield();
            } else {
                amc_cpu_relax();
            }
        }
    }
    return 1;
}

static inline void amc_shm_unlock(int *word, int held)
{
    if (held) {
        __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    }
}

/* Moves one of shm's counters of work for progress (nqueued, pulls_out,
 * pulls_in) by delta, and nwork with it, after it. */
static inline void amc_shm_work_add(amc_shm_t *shm, unsigned *counter, int delta)
{
    __atomic_add_fetch(counter, (unsigned)delta, __ATOMIC_RELEASE);
    __atomic_add_fetch(&shm->nwork, (unsigned)delta, __ATOMIC_RELEASE);
}

/* After a publication: a receiver that announced its sleep before it is
 * woken (the fence pairs with the one in amc_shm_sleep_begin: either the
 * sender sees the sleeper, or the sleeper sees the message). */
static inline int amc_shm_wakes(amc_shm_out_t *out)
{
    if (out->fence) {
#if defined(__SANITIZE_THREAD__)
        /* TSan refuses fences; a locked add is one on the machine */
        (void)__atomic_fetch_add(&out->lock, 0, __ATOMIC_SEQ_CST);
#else
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    } else {
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the sleeper's membarrier fences the CPU */
    }
    return __atomic_load_n(out->sleepers, __ATOMIC_RELAXED) != 0;
}

#endif
