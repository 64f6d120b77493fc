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
#define AMC_SHM_CTL_FLAGS     (0x7full << 56)
#define AMC_SHM_CTL_HDR(_w)   ((size_t)(((_w) >> 48) & 0xff))
#define AMC_SHM_CTL_LEN(_w)   ((size_t)(((_w) >> 32) & 0xffff))
#define AMC_SHM_CTL_POS(_w)   ((uint32_t)(_w))
#define AMC_SHM_ALIGN8(_n)    (((_n) + 7u) & ~(size_t)7u)

typedef struct amc_shm_inbox {
    uint32_t nreg;       /* rings taken (senders fetch-and-add, once each) */
    uint8_t  pad0[60];
    uint32_t sleepers;   /* threads of the owner asleep or going to: ring the bell */
    uint8_t  pad1[60];
    int32_t  reg[];      /* ring i's writer: rank + 1, stored once it is ready */
} amc_shm_inbox_t;

/* Rendezvous data to a peer of the node goes by pull (transport/shm_pull.c):
 * the message names one of its ring's AMC_SHM_PULLS slots, one line each,
 * which both sides share until the receiver says it is done. */
#define AMC_SHM_PULLS 4u

enum { /* amc_shm_pull_slot_t.state, the receiver's stores */
    AMC_SHM_PULL_SENT = 0, /* the message is out; the data not asked for yet */
    AMC_SHM_PULL_OPEN = 1, /* the receiver copies; dst is set: the sender may help */
    AMC_SHM_PULL_DONE = 2  /* every chunk is in place, or dropped: the data is the sender's again */
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
    uint8_t  pad[32];
} amc_shm_pull_slot_t;

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
    int32_t  wpid;       /* the writer's pid and its doorbell's number there, */
    int32_t  wbell;      /* stored before it registers: a pull's DONE may wake it */
    uint8_t  pad[48];
    amc_shm_pull_slot_t pull[AMC_SHM_PULLS];
    uint8_t  cells[];    /* AMC_SHM_NCELLS x AMC_SHM_CELL */
} amc_shm_ring_t;

/* The sender's record of a pull in flight. */
typedef struct amc_shm_pull_out {
    amc_shm_pull_desc_t desc;    /* the message's data (read from here while it is queued) */
    const uint8_t      *data;
    amc_completion_t   *comp;
    uint64_t            pushed;  /* bytes of the chunks it took */
    int                 busy;
    int                 helped;  /* it took chunks until none was left */
} amc_shm_pull_out_t;

/* The receiver's record of a pull: the descriptor its handler is given. */
enum { AMC_SHM_PULL_FREE, AMC_SHM_PULL_ARRIVED, AMC_SHM_PULL_WAITING, AMC_SHM_PULL_SETTLING };
typedef struct amc_shm_pull_in {
    amc_shm_in_t     *in;
    uint64_t          addr;
    uint64_t          len;
    uint64_t          chunk;
    uint64_t          own;       /* bytes of the chunks this side took */
    amc_completion_t *comp;      /* fetch's, while WAITING */
    int               state;     /* AMC_SHM_PULL_FREE... (atomic) */
    int               failed;    /* a chunk this side could not read */
    unsigned          slot;
} amc_shm_pull_in_t;


struct amc_shm_out {
    amc_shm_ring_t  *ring;       /* in the peer's inbox */
    uint32_t        *sleepers;   /* the peer's */
    void            *map;
    size_t           map_len;
    int              dest;
    int32_t          pid;        /* the peer's, for its doorbell */
    int32_t          bell_fd;    /* its number there */
    int              fence;      /* a full fence before the look at sleepers */
    int              bell;       /* our descriptor of it, opened on the first ring; -1 */
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
    int32_t         pid;         /* the writer's, and its doorbell (the ring's wpid, wbell) */
    int32_t         bell_fd;
    int             bell;        /* our descriptor of that doorbell, opened on the first need; -1 */
    amc_shm_pull_in_t pulls[AMC_SHM_PULLS]; /* by slot */
};

struct amc_shm {
    amc_transport_t *tp;
    amc_log_t        log;
    int              inbox_fd;
    int              bell_r, bell_w;
    int              barrier_ok; /* this process takes and makes expedited membarriers */
    amc_shm_inbox_t *inbox;
    size_t           inbox_len;
    unsigned         nrings;
    amc_shm_in_t    *in;         /* [nrings]; the first nin are in use */
    unsigned         nin;
    int              poll_lock;  /* one thread reads the inbox at a time */
    amc_shm_out_t   *outs;       /* (conn_lock of the caller) */
    unsigned         nout;
    unsigned         nqueued;    /* sends waiting for room (atomic) */
    unsigned         take_at;    /* the ring amc_shm_take_now last read */
    int              pull_ok;    /* this process may pull and be pulled from (CMA) */
    unsigned         pulls_out;  /* pulls of this rank's data in flight (atomic) */
    unsigned         pulls_in;   /* fetches waiting for the sender's chunks (atomic) */
    unsigned         nwork;      /* the three above together: the idle look's one load */
    int              pull_lock;  /* the receiver's records, while threads may meet */
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

/* Opens fd of process pid through /proc (same user only). */
static inline int amc_shm_proc_open(int32_t pid, int32_t fd, int flags)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, (int)fd);
    return open(path, flags | O_CLOEXEC);
}

/* A sleeper's pipe: a byte wakes it. Rare, so *bell is opened on the first
 * need. */
static inline void amc_shm_bell_ring(int *bell, int32_t pid, int32_t bell_fd)
{
    static const char one = 1;
    int               fd  = __atomic_load_n(bell, __ATOMIC_ACQUIRE);

    if (fd < 0) {
        int mine = amc_shm_proc_open(pid, bell_fd, O_WRONLY | O_NONBLOCK);
        int none = -1;

        if (mine < 0) {
            return; /* it wakes by its own timeout */
        }
        if (!__atomic_compare_exchange_n(bell, &none, mine, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            close(mine);
        }
        fd = __atomic_load_n(bell, __ATOMIC_ACQUIRE);
    }
    /* a full pipe already wakes it */
    (void)!write(fd, &one, 1);
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
