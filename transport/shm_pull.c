/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous data between ranks of a node, pulled by the receiver with
 * cross-memory attach and pushed in part by the sender: doc/design.md,
 * "Rendezvous data on the node".
 *
 * UCX's rendezvous leaves the sender idle while the receiver copies, one
 * core's copy (1 MiB at N=2: 82 us here). The data moves in chunks that
 * either side claims with a fetch-and-add on the slot's counter: the
 * receiver reads its chunks into place (process_vm_readv), and a sender
 * that is in progress meanwhile, as a blocking sender is, writes the
 * others (process_vm_writev): two cores copy (41 us). A sender that is
 * busy elsewhere takes nothing, and the receiver copies it all, as before.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include "transport/shm_pull.h"
#include "transport/shm_peer.h"
#include "transport/shm_ring.h"
#include "base/status.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* The chunk a claim takes: half the data from twice AMC_SHM_PULL_CHUNK_MIN
 * on (else all of it), in whole pages. Each chunk is a system call that
 * pins its pages: bcast at N=2, OSU's method, 1 MiB in 2 / 4 / 8 / 16 / 32
 * chunks 41 / 43 / 46 / 53 / 84 us, 256 KiB in 2 / 4 / 16 11.1 / 12.7 /
 * 21.4 us; and a half the sender does not take costs the receiver a second
 * call (32 KiB in two by the receiver alone: 1.1-1.26x one piece). Where
 * ranks share cores the sender runs while its receiver copies only if the
 * copy is long (N=4 on 2 cores, 32 KiB rooted collectives 1.07-1.19x the
 * library before in halves, 0.80-0.97 in one piece; 1 MiB gather and scan
 * 0.73-0.75 in halves, 0.96-1.10 in one piece). */
#define AMC_SHM_PULL_SPLIT            2u
#define AMC_SHM_PULL_CHUNK_MIN        16384u
#define AMC_SHM_PULL_CHUNK_MIN_SHARED (256u * 1024u)
/* What a receiver accepts: chunks of whole pages, not more than this many. */
#define AMC_SHM_PULL_MAX_CHUNKS 1024u
#define AMC_SHM_PULL_CHUNK_MAX  (1u << 30)
/* Longer data goes by UCX (its chunks would be more than a receiver takes). */
#define AMC_SHM_PULL_MAX_LEN    ((uint64_t)AMC_SHM_PULL_CHUNK_MAX * AMC_SHM_PULL_MAX_CHUNKS)

static inline amc_shm_pull_in_t *amc_shm_pull_rec(void *desc)
{
    return (amc_shm_pull_in_t *)((uintptr_t)desc & ~(uintptr_t)1);
}

static inline uint64_t amc_shm_pull_nchunks(uint64_t len, uint64_t chunk)
{
    return (len + chunk - 1) / chunk;
}

int amc_shm_pull_allowed(const amc_log_t *log)
{
    char  c   = '0';
    FILE *f   = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int   yes = 1;

    /* Yama's scope 1 and up lets a process read another's memory only
     * from its ancestors: two ranks of a job are siblings */
    if (f != NULL) {
        yes = (fread(&c, 1, 1, f) == 1) && (c == '0');
        fclose(f);
    }
    if (!yes) {
        amc_debug(log, "ptrace_scope %c: no pulls; rendezvous data goes by UCX", c);
    }
    return yes;
}

void amc_shm_pull_nopull(amc_shm_in_t *in)
{
    unsigned i;

    for (i = 0; i < AMC_SHM_PULLS; i++) {
        __atomic_store_n(&in->ring->pull[i].nopull, 1, __ATOMIC_RELEASE);
    }
}

void amc_shm_pull_in_init(amc_shm_in_t *in)
{
    unsigned i;

    for (i = 0; i < AMC_SHM_PULLS; i++) {
        in->pulls[i].in    = in;
        in->pulls[i].slot  = i;
        in->pulls[i].state = AMC_SHM_PULL_FREE;
    }
}

amc_shm_pull_out_t *amc_shm_pull_reserve(amc_shm_t *shm, amc_shm_out_t *out, const void *data,
                                         size_t len, amc_completion_t *comp)
{
    amc_shm_pull_slot_t *slot;
    amc_shm_pull_out_t  *p = NULL;
    uint64_t             chunk, min;
    unsigned             i;

    if (!out->pull || (len == 0) || (len > AMC_SHM_PULL_MAX_LEN)) {
        return NULL;
    }
    for (i = 0; (i < AMC_SHM_PULLS) && (p == NULL); i++) {
        p = out->pulls[i].busy ? NULL : &out->pulls[i];
    }
    if (p == NULL) {
        return NULL;
    }
    i    = (unsigned)(p - out->pulls);
    slot = &out->ring->pull[i];
    if (__atomic_load_n(&slot->nopull, __ATOMIC_ACQUIRE)) {
        return NULL; /* the receiver found cross-memory attach refused */
    }
    min   = (shm->tp->poll_batch > 1) ? AMC_SHM_PULL_CHUNK_MIN_SHARED : AMC_SHM_PULL_CHUNK_MIN;
    chunk = (len < AMC_SHM_PULL_SPLIT * min) ? len : (len / AMC_SHM_PULL_SPLIT);
    chunk = (chunk + 4095u) & ~(uint64_t)4095u;
    if (chunk > AMC_SHM_PULL_CHUNK_MAX) {
        chunk = AMC_SHM_PULL_CHUNK_MAX; /* the descriptor's 32 bits */
    }
    p->desc.addr  = (uint64_t)(uintptr_t)data;
    p->desc.len   = len;
    p->desc.slot  = i;
    p->desc.chunk = (uint32_t)chunk;
    p->data       = data;
    p->comp       = comp;
    p->pushed     = 0;
    p->resent     = 0;
    p->helped     = 0;
    __atomic_store_n(&p->busy, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&out->npulls, 1, __ATOMIC_RELAXED);
    amc_shm_work_add(shm, &shm->pulls_out, 1);
    /* the previous pull of this slot is DONE: the receiver no longer
     * touches it; these reach it before the message that names it */
    __atomic_store_n(&slot->claimed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->pushed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->dst, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->asleep, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_SENT, __ATOMIC_RELAXED);
    return p;
}

void amc_shm_pull_unreserve(amc_shm_t *shm, amc_shm_out_t *out, amc_shm_pull_out_t *p)
{
    __atomic_store_n(&p->busy, 0, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&out->npulls, 1, __ATOMIC_RELAXED);
    amc_shm_work_add(shm, &shm->pulls_out, -1);
}

const char *amc_shm_pull_arrive(amc_shm_t *shm, amc_shm_in_t *in, const void *hdr,
                                size_t hdr_len, const void *data, size_t len, int closing)
{
    amc_transport_t     *tp = shm->tp;
    amc_shm_pull_desc_t  d;
    amc_shm_pull_in_t   *rec;

    if (!shm->pull_ok) {
        return "a pull, where this rank offered none"; /* its address said so */
    }
    if (len != sizeof(d)) {
        return "a pull without a pull's descriptor";
    }
    memcpy(&d, data, sizeof(d));
    if (d.slot >= AMC_SHM_PULLS) {
        return "a pull naming no slot";
    }
    if ((d.len == 0) || (d.len > AMC_SHM_PULL_MAX_LEN) || (d.chunk < 4096u) ||
        (d.chunk % 4096u != 0) || (amc_shm_pull_nchunks(d.len, d.chunk) > AMC_SHM_PULL_MAX_CHUNKS)) {
        return "a pull of a length or chunk out of bounds";
    }
    rec = &in->pulls[d.slot];
    if (__atomic_load_n(&rec->state, __ATOMIC_ACQUIRE) != AMC_SHM_PULL_FREE) {
        return "a pull on a slot in use";
    }
    rec->addr    = d.addr;
    rec->len     = d.len;
    rec->chunk   = d.chunk;
    rec->own     = 0;
    rec->got     = 0;
    rec->buf     = NULL;
    rec->failed  = 0;
    rec->refused = 0;
    rec->fenced  = 0;
    rec->comp    = NULL;
    __atomic_store_n(&rec->state, AMC_SHM_PULL_ARRIVED, __ATOMIC_RELEASE);
    if (closing) {
        amc_shm_pull_release(shm, (void *)((uintptr_t)rec | 1u)); /* its sender may finish */
        return NULL;
    }
    tp->recv_cb(tp->recv_arg, hdr, hdr_len, NULL, (size_t)d.len, (void *)((uintptr_t)rec | 1u));
    return NULL;
}

/* After a store to slot's state that its sender acts on (DONE, RESEND):
 * the sender is woken if it sleeps. Pairs with the sleeper's fence after
 * its asleep store: either it sees the state before it sleeps, or this
 * sees asleep. */
static void amc_shm_pull_wake(amc_shm_t *shm, amc_shm_in_t *in, amc_shm_pull_slot_t *slot)
{
#if defined(__SANITIZE_THREAD__)
    (void)__atomic_fetch_add(&slot->asleep, 0, __ATOMIC_SEQ_CST); /* TSan refuses fences */
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    if (__atomic_load_n(&slot->asleep, __ATOMIC_RELAXED)) {
        amc_shm_bell_ring(shm, in->peer);
    }
}

/* The receiver is done with rec's slot: its sender may take its data back,
 * and is woken if it sleeps. The record is free before the slot says DONE,
 * so that a new pull on it finds it free. */
static void amc_shm_pull_end(amc_shm_t *shm, amc_shm_pull_in_t *rec)
{
    amc_shm_in_t        *in   = rec->in;
    amc_shm_pull_slot_t *slot = &in->ring->pull[rec->slot];

    __atomic_store_n(&rec->state, AMC_SHM_PULL_FREE, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_DONE, __ATOMIC_RELEASE);
    amc_shm_pull_wake(shm, in, slot);
}

void amc_shm_pull_release(amc_shm_t *shm, void *desc)
{
    amc_shm_pull_end(shm, amc_shm_pull_rec(desc));
}

void amc_shm_refuse_pulls(amc_shm_t *shm, const char *what, int err)
{
    amc_shm_out_t *out;
    unsigned       i, nin;

    if (__atomic_exchange_n(&shm->refused, 1, __ATOMIC_SEQ_CST)) {
        return;
    }
    amc_warn(&shm->log, "%s: %s: cross-memory attach is refused here (seccomp, an LSM, a "
             "container?); rendezvous data on this node goes by UCX from now on "
             "(AMC_SHM_PULL=0 says so from the start)", what, strerror(err));
    /* the senders to this rank send it no more pulls */
    nin = __atomic_load_n(&shm->nin, __ATOMIC_SEQ_CST);
    for (i = 0; i < nin; i++) {
        amc_shm_pull_nopull(&shm->in[i]);
    }
    for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
        __atomic_store_n(&out->pull, 0, __ATOMIC_RELAXED);
    }
}


/* Cross-memory attach refused it (a policy, not a fault of this pull). */
static int amc_shm_pull_refusal(int err)
{
    return (err == EPERM) || (err == EACCES) || (err == ENOSYS);
}

/* k bytes between this process's local and peer's remote: read into
 * local, or (write) written from it, only while peer's pid is known to be
 * its process. AMC_SUCCESS; AMC_SHM_PULL_REFUSED (said once, pulls are off
 * now); AMC_ERR_PEER (it is gone: nothing moved); AMC_ERR_TRANSPORT
 * (logged). */
#define AMC_SHM_PULL_REFUSED (-1)
static int amc_shm_pull_move(amc_shm_t *shm, int write, amc_shm_peer_t *peer, void *local,
                             void *remote, uint64_t k)
{
    struct iovec l = { local, k }, r = { remote, k };
    ssize_t      n;
    int          err;

    if (!amc_shm_peer_alive(shm, peer)) {
        return AMC_ERR_PEER;
    }
    n = write ? process_vm_writev((pid_t)peer->addr.pid, &l, 1, &r, 1, 0)
              : process_vm_readv((pid_t)peer->addr.pid, &l, 1, &r, 1, 0);
    if (n == (ssize_t)k) {
        return AMC_SUCCESS;
    }
    if (n >= 0) { /* a part of the range is not mapped: errno says nothing */
        amc_error(&shm->log, "%s rank %d (pid %d): %zd of %llu bytes moved",
                  write ? "writing into" : "pulling from", peer->rank, (int)peer->addr.pid, n,
                  (unsigned long long)k);
        return AMC_ERR_TRANSPORT;
    }
    err = errno;
    if (amc_shm_pull_refusal(err)) {
        amc_shm_refuse_pulls(shm, write ? "process_vm_writev" : "process_vm_readv", err);
        return AMC_SHM_PULL_REFUSED;
    }
    if (err == ESRCH) {
        (void)amc_peer_set_mark(&shm->tp->dead, peer->rank);
        return AMC_ERR_PEER;
    }
    amc_error(&shm->log, "%s %llu bytes %s rank %d (pid %d): %s",
              write ? "writing" : "pulling", (unsigned long long)k, write ? "into" : "from",
              peer->rank, (int)peer->addr.pid, strerror(err));
    return AMC_ERR_TRANSPORT;
}

/* Whether this rank's pulls and rec's sender's cross: it has data of its
 * own out to that peer. Then each is the other's receiver, both cores copy
 * already, and a chunk taken from the other only adds system calls and
 * writes into lines the other holds (32 KiB at N=2, allgather and
 * reduce_scatter_block: 1.15-1.3x with halves, against one piece). */
static int amc_shm_pull_crossing(amc_shm_t *shm, int peer)
{
    amc_shm_out_t *out;

    for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
        if (out->dest == peer) {
            return __atomic_load_n(&out->npulls, __ATOMIC_RELAXED) > 0;
        }
    }
    return 0;
}

/* The receiver's chunks, read into its buffer until none is left to
 * claim: one at a time, so that its sender may take the others meanwhile,
 * or all that are left in one read where the pulls cross. After a chunk
 * that could not be read the rest are claimed unread: the sender takes no
 * more. */
static void amc_shm_pull_take(amc_shm_t *shm, amc_shm_pull_in_t *rec)
{
    amc_shm_pull_slot_t *slot = &rec->in->ring->pull[rec->slot];
    uint64_t             n    = amc_shm_pull_nchunks(rec->len, rec->chunk), c, off, k;
    uint64_t             step = amc_shm_pull_crossing(shm, rec->in->src) ? n : 1;
    int                  last, status;

    while ((c = __atomic_fetch_add(&slot->claimed, step, __ATOMIC_RELAXED)) < n) {
        last = (c + step >= n);
        off  = c * rec->chunk;
        k    = last ? (rec->len - off) : (step * rec->chunk);
        if (!rec->failed && !rec->refused) {
            status = amc_shm_pull_move(shm, 0, rec->in->peer, rec->buf + off,
                                       (void *)(uintptr_t)(rec->addr + off), k);
            rec->refused = (status == AMC_SHM_PULL_REFUSED);
            rec->failed  = (status == AMC_SHM_PULL_REFUSED) ? 0 : status;
            step         = (status == AMC_SUCCESS) ? step : n;
        }
        rec->own += k; /* counted either way: the end is when every chunk is */
        if (last) {
            break;         /* none left: no claim to find that out */
        }
    }
}

/* The sender was found dead (or treated as such) while chunks were still
 * its to take: it takes no more. */
static void amc_shm_pull_fence(amc_shm_pull_in_t *rec)
{
    amc_shm_pull_slot_t *slot = &rec->in->ring->pull[rec->slot];
    uint64_t             n    = amc_shm_pull_nchunks(rec->len, rec->chunk), c;

    rec->fenced = 1;
    c = __atomic_fetch_add(&slot->claimed, n, __ATOMIC_RELAXED);
    if (c < n) {
        rec->own += rec->len - c * rec->chunk;
    }
    rec->failed = AMC_ERR_PEER;
}

/* Answer of amc_shm_pull_settle: the data must come through the ring. */
#define AMC_SHM_PULL_RESEND_NOW 1000

/* Whether every chunk of rec is in place: AMC_INPROGRESS while the sender
 * may still write one. A sender found dead takes no more chunks, but one
 * it took is waited for until it is written or its process exited: a rank
 * marked dead may be alive and inside process_vm_writev into this buffer,
 * which must be over before the fetch ends. */
static int amc_shm_pull_settle(amc_shm_t *shm, amc_shm_pull_in_t *rec)
{
    amc_shm_pull_slot_t *slot = &rec->in->ring->pull[rec->slot];
    uint64_t             pushed = __atomic_load_n(&slot->pushed, __ATOMIC_ACQUIRE);
    int                  dead   = amc_peer_set_test(&shm->tp->dead, rec->in->src);

    if ((pushed & ~AMC_SHM_PULL_FAILED) + rec->own < rec->len) {
        if (!dead) {
            return AMC_INPROGRESS;
        }
        if (!rec->fenced) {
            amc_shm_pull_fence(rec);
            pushed = __atomic_load_n(&slot->pushed, __ATOMIC_ACQUIRE);
        }
        if (((pushed & ~AMC_SHM_PULL_FAILED) + rec->own < rec->len) &&
            !amc_shm_peer_exited(shm, rec->in->peer)) {
            return AMC_INPROGRESS; /* its write in flight ends first */
        }
    }
    if (rec->failed || (dead && (rec->refused || (pushed & AMC_SHM_PULL_FAILED)))) {
        if (rec->failed != AMC_ERR_TRANSPORT) { /* that one was said where it happened */
            amc_error(&shm->log, "rank %d failed while %llu bytes were pulled from it",
                      rec->in->src, (unsigned long long)rec->len);
        }
        return rec->failed ? rec->failed : AMC_ERR_PEER;
    }
    return (rec->refused || (pushed & AMC_SHM_PULL_FAILED)) ? AMC_SHM_PULL_RESEND_NOW
                                                             : AMC_SUCCESS;
}

/* Asks rec's sender to send the data through the ring: every chunk is
 * accounted for, so nobody writes into the buffer by cross-memory attach
 * any more. rec's fetch counts as waiting (pulls_in) from here on. */
static void amc_shm_pull_resend(amc_shm_t *shm, amc_shm_pull_in_t *rec)
{
    amc_shm_pull_slot_t *slot = &rec->in->ring->pull[rec->slot];

    rec->got = 0;
    __atomic_store_n(&rec->state, AMC_SHM_PULL_RESENDING, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_RESEND, __ATOMIC_RELEASE);
    amc_shm_pull_wake(shm, rec->in, slot);
}

int amc_shm_pull_fetch(amc_shm_t *shm, void *desc, void *buf, size_t len,
                       amc_completion_t *comp)
{
    amc_shm_pull_in_t   *rec  = amc_shm_pull_rec(desc);
    amc_shm_pull_slot_t *slot = &rec->in->ring->pull[rec->slot];
    int                  status;

    if (len != rec->len) {
        amc_error(&shm->log, "a fetch of %zu bytes of a %llu-byte message from rank %d", len,
                  (unsigned long long)rec->len, rec->in->src);
        amc_shm_pull_end(shm, rec);
        return AMC_ERR_TRANSPORT;
    }
    rec->buf  = buf;
    rec->comp = comp;
    if (__atomic_load_n(&shm->refused, __ATOMIC_ACQUIRE) ||
        (__atomic_load_n(&rec->in->peer->pidfd, __ATOMIC_ACQUIRE) < 0)) {
        /* no cross-memory attach either way: never OPEN, so the sender
         * writes nothing */
        rec->refused = 1;
        rec->own     = rec->len;
        status       = amc_shm_pull_settle(shm, rec);
    } else {
        __atomic_store_n(&slot->dst, (uint64_t)(uintptr_t)buf, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
        amc_shm_pull_take(shm, rec);
        status = amc_shm_pull_settle(shm, rec);
    }
    if ((status != AMC_INPROGRESS) && (status != AMC_SHM_PULL_RESEND_NOW)) {
        amc_shm_pull_end(shm, rec);
        return status;
    }
    /* the sender writes its last chunks, or resends it all: progress, or
     * the ring's reader, completes it */
    amc_shm_work_add(shm, &shm->pulls_in, 1);
    if (status == AMC_SHM_PULL_RESEND_NOW) {
        amc_shm_pull_resend(shm, rec);
    } else {
        __atomic_store_n(&rec->state, AMC_SHM_PULL_WAITING, __ATOMIC_RELEASE);
    }
    return AMC_INPROGRESS;
}

/* rec's fetch is over: status to its completion. */
static void amc_shm_pull_complete(amc_shm_t *shm, amc_shm_pull_in_t *rec, int status)
{
    amc_completion_t *comp = rec->comp;

    amc_shm_work_add(shm, &shm->pulls_in, -1);
    amc_shm_pull_end(shm, rec);
    comp->fn(comp, status);
}

const char *amc_shm_pull_resent(amc_shm_t *shm, amc_shm_in_t *in, const void *hdr,
                               size_t hdr_len, const void *data, size_t len, int closing)
{
    amc_shm_pull_piece_t p;
    amc_shm_pull_in_t   *rec;
    int                  want = AMC_SHM_PULL_RESENDING;

    (void)shm; /* the signature of amc_shm_pull_arrive: the reader calls either */
    if (hdr_len != sizeof(p)) {
        return "a resent piece without a piece's header";
    }
    memcpy(&p, hdr, sizeof(p));
    if ((p.slot >= AMC_SHM_PULLS) || (p.zero != 0)) {
        return "a resent piece naming no slot";
    }
    if (closing) {
        return NULL;
    }
    rec = &in->pulls[p.slot];
    /* one thread at a time: progress may look at it for a dead sender */
    if (!__atomic_compare_exchange_n(&rec->state, &want, AMC_SHM_PULL_SETTLING, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return "a resent piece of no pull being resent";
    }
    if ((p.off != rec->got) || (len == 0) || (len > rec->len - rec->got)) {
        __atomic_store_n(&rec->state, AMC_SHM_PULL_RESENDING, __ATOMIC_RELEASE);
        return "a resent piece out of order";
    }
    memcpy(rec->buf + p.off, data, len);
    rec->got += len;
    /* the fetch completes from progress, as the others: a completion may
     * start what reads this ring again */
    __atomic_store_n(&rec->state, (rec->got < rec->len) ? AMC_SHM_PULL_RESENDING
                                                         : AMC_SHM_PULL_RESENT,
                     __ATOMIC_RELEASE);
    return NULL;
}

/* The sender's part: the chunks left to claim, written into the receiver. */
static void amc_shm_pull_push(amc_shm_t *shm, amc_shm_out_t *out, amc_shm_pull_out_t *p,
                              amc_shm_pull_slot_t *slot)
{
    uint8_t     *dst   = (uint8_t *)(uintptr_t)__atomic_load_n(&slot->dst, __ATOMIC_RELAXED);
    uint64_t     len   = p->desc.len, chunk = p->desc.chunk, c, off, k;
    uint64_t     n     = amc_shm_pull_nchunks(len, chunk), failed = 0;

    while ((c = __atomic_fetch_add(&slot->claimed, 1, __ATOMIC_RELAXED)) < n) {
        off = c * chunk;
        k   = ((len - off) < chunk) ? (len - off) : chunk;
        if (!failed && (amc_shm_pull_move(shm, 1, out->peer, (void *)(p->data + off), dst + off,
                                          k) != AMC_SUCCESS)) {
            failed = AMC_SHM_PULL_FAILED; /* the receiver asks for a resend */
        }
        p->pushed += k;
        __atomic_store_n(&slot->pushed, p->pushed | failed, __ATOMIC_RELEASE);
    }
    p->helped = 1;
    if ((p->pushed > 0) && amc_shm_wakes(out)) {
        /* a receiver asleep waits for these */
        amc_shm_bell_ring(shm, out->peer);
    }
}

/* The data of p again, through the ring, as far as the ring has room: the
 * receiver could not take it by cross-memory attach. */
static void amc_shm_pull_send_pieces(amc_shm_out_t *out, amc_shm_pull_out_t *p)
{
    amc_shm_pull_piece_t piece = { .slot = p->desc.slot, .zero = 0, .off = 0 };
    size_t               max   = AMC_SHM_MAX_BYTES - sizeof(uint64_t) - sizeof(piece), k;

    while (p->resent < p->desc.len) {
        k         = ((p->desc.len - p->resent) < max) ? (size_t)(p->desc.len - p->resent) : max;
        piece.off = p->resent;
        if (!amc_shm_put(out, &piece, sizeof(piece), p->data + p->resent, k,
                         AMC_SHM_CTL_DATA)) {
            break; /* the next progress goes on */
        }
        p->resent += k;
        if (amc_shm_wakes(out)) {
            amc_shm_bell_ring(out->shm, out->peer);
        }
    }
}

/* Whether this rank has a pull from peer to finish: its own copy comes
 * first (amc_shm_pull_crossing). */
static int amc_shm_pull_receiving(amc_shm_t *shm, int peer)
{
    unsigned i, j, nin = __atomic_load_n(&shm->nin, __ATOMIC_ACQUIRE);

    for (i = 0; i < nin; i++) {
        if (shm->in[i].src != peer) {
            continue;
        }
        for (j = 0; j < AMC_SHM_PULLS; j++) {
            if (__atomic_load_n(&shm->in[i].pulls[j].state, __ATOMIC_ACQUIRE) !=
                AMC_SHM_PULL_FREE) {
                return 1;
            }
        }
        return 0;
    }
    return 0;
}

/* One ring's pulls of this rank's data: helps those the receiver opened,
 * and collects the completions of those it is done with (or whose receiver
 * died: dropped, as a send to the dead is). Lock held. */
static unsigned amc_shm_pull_out_progress(amc_shm_t *shm, amc_shm_out_t *out,
                                          amc_completion_t **done)
{
    amc_shm_pull_slot_t *slot;
    amc_shm_pull_out_t  *p;
    unsigned             i, n = 0;
    uint32_t             state;

    for (i = 0; i < AMC_SHM_PULLS; i++) {
        p = &out->pulls[i];
        if (!p->busy) {
            continue;
        }
        slot  = &out->ring->pull[i];
        state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        if ((state == AMC_SHM_PULL_OPEN) && !p->helped && !amc_shm_pull_receiving(shm, out->dest)) {
            amc_shm_pull_push(shm, out, p, slot);
            state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        }
        if (state == AMC_SHM_PULL_RESEND) {
            amc_shm_pull_send_pieces(out, p);
        }
        if ((state == AMC_SHM_PULL_DONE) || amc_peer_set_test(&shm->tp->dead, out->dest)) {
            done[n++] = p->comp;
            amc_shm_pull_unreserve(shm, out, p);
        }
    }
    return n;
}

/* The fetches that wait for their sender's chunks, or for a resend whose
 * sender died. */
static int amc_shm_pull_in_progress(amc_shm_t *shm)
{
    amc_shm_pull_in_t *rec;
    unsigned           i, j, nin = __atomic_load_n(&shm->nin, __ATOMIC_ACQUIRE);
    int                n = 0, status, was;

    for (i = 0; i < nin; i++) {
        for (j = 0; j < AMC_SHM_PULLS; j++) {
            rec = &shm->in[i].pulls[j];
            was = __atomic_load_n(&rec->state, __ATOMIC_ACQUIRE);
            /* one thread settles it */
            if (((was != AMC_SHM_PULL_WAITING) && (was != AMC_SHM_PULL_RESENDING) &&
                 (was != AMC_SHM_PULL_RESENT)) ||
                !__atomic_compare_exchange_n(&rec->state, &was, AMC_SHM_PULL_SETTLING, 0,
                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                continue;
            }
            if (was == AMC_SHM_PULL_RESENT) {
                amc_shm_pull_complete(shm, rec, AMC_SUCCESS);
                n++;
                continue;
            }
            if (was == AMC_SHM_PULL_RESENDING) {
                /* pieces come through the ring: nothing of its writes in flight */
                if (amc_peer_set_test(&shm->tp->dead, rec->in->src)) {
                    amc_error(&shm->log, "rank %d failed while it resent %llu bytes",
                              rec->in->src, (unsigned long long)rec->len);
                    amc_shm_pull_complete(shm, rec, AMC_ERR_PEER);
                    n++;
                } else {
                    __atomic_store_n(&rec->state, AMC_SHM_PULL_RESENDING, __ATOMIC_RELEASE);
                }
                continue;
            }
            status = amc_shm_pull_settle(shm, rec);
            if (status == AMC_INPROGRESS) {
                __atomic_store_n(&rec->state, AMC_SHM_PULL_WAITING, __ATOMIC_RELEASE);
            } else if (status == AMC_SHM_PULL_RESEND_NOW) {
                amc_shm_pull_resend(shm, rec);
            } else {
                amc_shm_pull_complete(shm, rec, status);
                n++;
            }
        }
    }
    return n;
}

int amc_shm_pull_progress(amc_shm_t *shm)
{
    amc_completion_t *done[AMC_SHM_PULLS];
    amc_shm_out_t    *out;
    unsigned          k, i;
    int               n = 0, held;

    if (__atomic_load_n(&shm->pulls_out, __ATOMIC_ACQUIRE) > 0) {
        for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
            if (__atomic_load_n(&out->npulls, __ATOMIC_RELAXED) == 0) {
                continue;
            }
            held = amc_shm_lock(shm, &out->lock);
            k    = amc_shm_pull_out_progress(shm, out, done);
            amc_shm_unlock(&out->lock, held);
            /* with no lock held: they may send */
            for (i = 0; i < k; i++) {
                done[i]->fn(done[i], AMC_SUCCESS);
            }
            n += (int)k;
        }
    }
    if (__atomic_load_n(&shm->pulls_in, __ATOMIC_ACQUIRE) > 0) {
        n += amc_shm_pull_in_progress(shm);
    }
    return n;
}

int amc_shm_pull_pending(amc_shm_t *shm)
{
    const amc_shm_pull_in_t *rec;
    amc_shm_out_t           *out;
    unsigned                 i, j, nin;
    uint32_t                 state;

    if (__atomic_load_n(&shm->pulls_out, __ATOMIC_ACQUIRE) > 0) {
        for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
            for (i = 0; i < AMC_SHM_PULLS; i++) {
                state = __atomic_load_n(&out->ring->pull[i].state, __ATOMIC_ACQUIRE);
                if (__atomic_load_n(&out->pulls[i].busy, __ATOMIC_RELAXED) &&
                    ((state == AMC_SHM_PULL_DONE) ||
                     ((state == AMC_SHM_PULL_RESEND) &&
                      (out->pulls[i].resent < out->pulls[i].desc.len)))) {
                    return 1;
                }
            }
        }
    }
    if (__atomic_load_n(&shm->pulls_in, __ATOMIC_ACQUIRE) > 0) {
        nin = __atomic_load_n(&shm->nin, __ATOMIC_ACQUIRE);
        for (i = 0; i < nin; i++) {
            for (j = 0; j < AMC_SHM_PULLS; j++) {
                rec   = &shm->in[i].pulls[j];
                state = __atomic_load_n(&rec->state, __ATOMIC_ACQUIRE);
                if ((state == AMC_SHM_PULL_RESENT) ||
                    ((state == AMC_SHM_PULL_WAITING) &&
                     ((__atomic_load_n(&rec->in->ring->pull[j].pushed, __ATOMIC_ACQUIRE) &
                       ~AMC_SHM_PULL_FAILED) + rec->own >= rec->len))) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

void amc_shm_pull_asleep(amc_shm_t *shm, uint32_t on)
{
    amc_shm_out_t *out;
    unsigned       i;

    if (__atomic_load_n(&shm->pulls_out, __ATOMIC_ACQUIRE) == 0) {
        return;
    }
    for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
        for (i = 0; i < AMC_SHM_PULLS; i++) {
            if (__atomic_load_n(&out->pulls[i].busy, __ATOMIC_RELAXED)) {
                __atomic_store_n(&out->ring->pull[i].asleep, on, __ATOMIC_RELAXED);
            }
        }
    }
}

unsigned amc_shm_pulls(const amc_shm_t *shm)
{
    return __atomic_load_n(&shm->pulls_out, __ATOMIC_ACQUIRE) +
           __atomic_load_n(&shm->pulls_in, __ATOMIC_ACQUIRE);
}
