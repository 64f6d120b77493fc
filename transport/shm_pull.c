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

void amc_shm_pull_in_init(amc_shm_in_t *in)
{
    unsigned i;

    for (i = 0; i < AMC_SHM_PULLS; i++) {
        in->pulls[i].in    = in;
        in->pulls[i].slot  = i;
        in->pulls[i].state = AMC_SHM_PULL_FREE;
    }
}

void amc_shm_pull_in_close(amc_shm_in_t *in)
{
    if (in->bell >= 0) {
        close(in->bell);
        in->bell = -1;
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
    i     = (unsigned)(p - out->pulls);
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
    p->helped     = 0;
    __atomic_store_n(&p->busy, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&out->npulls, 1, __ATOMIC_RELAXED);
    amc_shm_work_add(shm, &shm->pulls_out, 1);
    /* the previous pull of this slot is DONE: the receiver no longer
     * touches it; these reach it before the message that names it */
    slot = &out->ring->pull[i];
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
    rec->addr   = d.addr;
    rec->len    = d.len;
    rec->chunk  = d.chunk;
    rec->own    = 0;
    rec->failed = 0;
    rec->comp   = NULL;
    __atomic_store_n(&rec->state, AMC_SHM_PULL_ARRIVED, __ATOMIC_RELEASE);
    if (closing) {
        amc_shm_pull_release(shm, (void *)((uintptr_t)rec | 1u)); /* its sender may finish */
        return NULL;
    }
    tp->recv_cb(tp->recv_arg, hdr, hdr_len, NULL, (size_t)d.len, (void *)((uintptr_t)rec | 1u));
    return NULL;
}

/* The receiver is done with rec's slot: its sender may take its data back,
 * and is woken if it sleeps. The record is free before the slot says DONE,
 * so that a new pull on it finds it free. */
static void amc_shm_pull_end(amc_shm_pull_in_t *rec)
{
    amc_shm_in_t        *in   = rec->in;
    amc_shm_pull_slot_t *slot = &in->ring->pull[rec->slot];

    __atomic_store_n(&rec->state, AMC_SHM_PULL_FREE, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_DONE, __ATOMIC_RELEASE);
    /* pairs with the sleeper's locked add after its asleep store: either
     * it sees DONE before it sleeps, or this sees asleep (once a pull) */
#if defined(__SANITIZE_THREAD__)
    (void)__atomic_fetch_add(&slot->asleep, 0, __ATOMIC_SEQ_CST); /* TSan refuses fences */
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    if (__atomic_load_n(&slot->asleep, __ATOMIC_RELAXED)) {
        amc_shm_bell_ring(&in->bell, in->pid, in->bell_fd);
    }
}

void amc_shm_pull_release(amc_shm_t *shm, void *desc)
{
    (void)shm;
    amc_shm_pull_end(amc_shm_pull_rec(desc));
}

/* k bytes between this process's local and process pid's remote: read
 * into local, or (write) written from it. 1 if all of them moved. */
static int amc_shm_pull_move(int write, int32_t pid, void *local, void *remote, uint64_t k)
{
    struct iovec l = { local, k }, r = { remote, k };

    return (write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                  : process_vm_readv(pid, &l, 1, &r, 1, 0)) == (ssize_t)k;
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

/* The receiver's chunks, read into buf until none is left to claim: one
 * at a time, so that its sender may take the others meanwhile, or all
 * that are left in one read where the pulls cross. */
static void amc_shm_pull_take(amc_shm_t *shm, amc_shm_pull_in_t *rec, uint8_t *buf)
{
    amc_shm_pull_slot_t *slot = &rec->in->ring->pull[rec->slot];
    uint64_t             n    = amc_shm_pull_nchunks(rec->len, rec->chunk), c, off, k;
    uint64_t             step = amc_shm_pull_crossing(shm, rec->in->src) ? n : 1;
    int                  last;

    while ((c = __atomic_fetch_add(&slot->claimed, step, __ATOMIC_RELAXED)) < n) {
        last = (c + step >= n);
        off  = c * rec->chunk;
        k    = last ? (rec->len - off) : (step * rec->chunk);
        if (!rec->failed &&
            !amc_shm_pull_move(0, rec->in->pid, buf + off,
                               (void *)(uintptr_t)(rec->addr + off), k)) {
            rec->failed = 1;
            amc_error(&shm->log, "pulling %llu bytes from rank %d (pid %d): %s",
                      (unsigned long long)k, rec->in->src, (int)rec->in->pid, strerror(errno));
        }
        rec->own += k; /* counted either way: the end is when every chunk is */
        if (last) {
            break;         /* none left: no claim to find that out */
        }
    }
}

/* Whether every chunk of rec is in place (or failed): AMC_INPROGRESS if
 * the sender's are not yet. */
static int amc_shm_pull_settle(amc_shm_t *shm, amc_shm_pull_in_t *rec)
{
    amc_shm_pull_slot_t *slot   = &rec->in->ring->pull[rec->slot];
    uint64_t             pushed = __atomic_load_n(&slot->pushed, __ATOMIC_ACQUIRE);

    if ((pushed & ~AMC_SHM_PULL_FAILED) + rec->own < rec->len) {
        if (!amc_peer_set_test(&shm->tp->dead, rec->in->src)) {
            return AMC_INPROGRESS;
        }
        amc_error(&shm->log, "rank %d died writing a pull", rec->in->src);
        return AMC_ERR_PEER;
    }
    if (pushed & AMC_SHM_PULL_FAILED) {
        amc_error(&shm->log, "rank %d could not write its part of a pull", rec->in->src);
        return AMC_ERR_TRANSPORT;
    }
    return rec->failed ? AMC_ERR_TRANSPORT : AMC_SUCCESS;
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
        amc_shm_pull_end(rec);
        return AMC_ERR_TRANSPORT;
    }
    __atomic_store_n(&slot->dst, (uint64_t)(uintptr_t)buf, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
    amc_shm_pull_take(shm, rec, buf);
    status = amc_shm_pull_settle(shm, rec);
    if (status != AMC_INPROGRESS) {
        amc_shm_pull_end(rec);
        return status;
    }
    /* the sender writes its last chunks: progress completes it */
    rec->comp = comp;
    amc_shm_work_add(shm, &shm->pulls_in, 1);
    __atomic_store_n(&rec->state, AMC_SHM_PULL_WAITING, __ATOMIC_RELEASE);
    return AMC_INPROGRESS;
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
        if (!failed && !amc_shm_pull_move(1, out->pid, (void *)(p->data + off), dst + off, k)) {
            failed = AMC_SHM_PULL_FAILED;
            amc_error(&shm->log, "writing %llu bytes into rank %d (pid %d): %s",
                      (unsigned long long)k, out->dest, (int)out->pid, strerror(errno));
        }
        p->pushed += k;
        __atomic_store_n(&slot->pushed, p->pushed | failed, __ATOMIC_RELEASE);
    }
    p->helped = 1;
    if ((p->pushed > 0) && amc_shm_wakes(out)) {
        /* a receiver asleep waits for these */
        amc_shm_bell_ring(&out->bell, out->pid, out->bell_fd);
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
        if ((state == AMC_SHM_PULL_DONE) || amc_peer_set_test(&shm->tp->dead, out->dest)) {
            done[n++] = p->comp;
            amc_shm_pull_unreserve(shm, out, p);
        }
    }
    return n;
}

/* The fetches that waited for their sender's chunks. */
static int amc_shm_pull_in_progress(amc_shm_t *shm)
{
    amc_shm_pull_in_t *rec;
    amc_completion_t  *comp;
    unsigned           i, j, nin = __atomic_load_n(&shm->nin, __ATOMIC_ACQUIRE);
    int                n = 0, status, want;

    for (i = 0; i < nin; i++) {
        for (j = 0; j < AMC_SHM_PULLS; j++) {
            rec  = &shm->in[i].pulls[j];
            want = AMC_SHM_PULL_WAITING;
            /* one thread settles it */
            if ((__atomic_load_n(&rec->state, __ATOMIC_ACQUIRE) != AMC_SHM_PULL_WAITING) ||
                !__atomic_compare_exchange_n(&rec->state, &want, AMC_SHM_PULL_SETTLING, 0,
                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                continue;
            }
            status = amc_shm_pull_settle(shm, rec);
            if (status == AMC_INPROGRESS) {
                __atomic_store_n(&rec->state, AMC_SHM_PULL_WAITING, __ATOMIC_RELEASE);
                continue;
            }
            comp = rec->comp;
            amc_shm_work_add(shm, &shm->pulls_in, -1);
            amc_shm_pull_end(rec);
            comp->fn(comp, status);
            n++;
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

    if (__atomic_load_n(&shm->pulls_out, __ATOMIC_ACQUIRE) > 0) {
        for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
            for (i = 0; i < AMC_SHM_PULLS; i++) {
                if (__atomic_load_n(&out->pulls[i].busy, __ATOMIC_RELAXED) &&
                    (__atomic_load_n(&out->ring->pull[i].state, __ATOMIC_ACQUIRE) ==
                     AMC_SHM_PULL_DONE)) {
                    return 1;
                }
            }
        }
    }
    if (__atomic_load_n(&shm->pulls_in, __ATOMIC_ACQUIRE) > 0) {
        nin = __atomic_load_n(&shm->nin, __ATOMIC_ACQUIRE);
        for (i = 0; i < nin; i++) {
            for (j = 0; j < AMC_SHM_PULLS; j++) {
                rec = &shm->in[i].pulls[j];
                if ((__atomic_load_n(&rec->state, __ATOMIC_ACQUIRE) == AMC_SHM_PULL_WAITING) &&
                    ((__atomic_load_n(&rec->in->ring->pull[j].pushed, __ATOMIC_ACQUIRE) &
                      ~AMC_SHM_PULL_FAILED) + rec->own >= rec->len)) {
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
