/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous data pulled through the mailboxes (transport/shm_pull.c)
 * between two "ranks" in one process, each with its own inbox, opened
 * through /proc/self/fd as a peer opens it: data of every size (one chunk,
 * two, odd ends) arrives whole and nothing beyond the buffer is written,
 * whichever side copies which chunk (the receiver alone, the sender alone,
 * a sender that took a chunk and writes it later, a sender thread spinning
 * in progress meanwhile); the sender completes once the receiver is done
 * (fetched or released), not before; a fetch of the wrong length is
 * refused and still frees the slot; a sender that dies holding a chunk
 * ends the fetch with an error, a receiver that dies ends the send; as
 * many pulls as slots, then the caller is told to send another way; a pull
 * queued behind a full ring keeps its place; a peer that allows no pulls
 * gets none; forged pull descriptors (no slot, a slot in use, bad lengths
 * and chunks, the wrong data length) and a pull to a rank that offered
 * none are rejected with the writer marked failed; a sender asleep is
 * woken by the receiver's end (no lost wake-up over many racing rounds).
 * Cross-memory attach refused (the reads, the writes, both; a writer
 * whose pid was never checked): the data comes whole through the ring
 * instead, the refusal is said once and no pull goes either way after it.
 * A sender marked dead while its write of a chunk is in flight (held in
 * process_vm_writev): the fetch ends only after that write, and nothing is
 * written into the buffer after it ended.
 */
#define _GNU_SOURCE
#include "tests/unit/harness.h"
#include "transport/shm.h"
#include "tests/unit/shm_connect.h"
#include "transport/shm_pull.h"
#include "base/clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define TEST_HDR 16
#define GUARD    64

/* Cross-memory attach as the kernel gives it, refused as a seccomp profile
 * or an LSM refuses it, or a write held in flight: the test's definitions
 * come before libc's, for the library's calls too. */
static int refuse_read, refuse_write; /* atomic */
static int hold_write;                /* a write waits while set (atomic) */
static int writes_begun, writes_done; /* atomic */

ssize_t process_vm_readv(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
                         const struct iovec *rvec, unsigned long riovcnt, unsigned long flags)
{
    if (__atomic_load_n(&refuse_read, __ATOMIC_ACQUIRE)) {
        errno = EPERM;
        return -1;
    }
    return syscall(SYS_process_vm_readv, pid, lvec, liovcnt, rvec, riovcnt, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
                          const struct iovec *rvec, unsigned long riovcnt, unsigned long flags)
{
    ssize_t n;

    if (__atomic_load_n(&refuse_write, __ATOMIC_ACQUIRE)) {
        errno = EPERM;
        return -1;
    }
    __atomic_add_fetch(&writes_begun, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&hold_write, __ATOMIC_ACQUIRE)) {
        usleep(100);
    }
    n = syscall(SYS_process_vm_writev, pid, lvec, liovcnt, rvec, riovcnt, flags);
    __atomic_add_fetch(&writes_done, 1, __ATOMIC_ACQ_REL);
    return n;
}

typedef struct side {
    amc_transport_t tp;
    amc_shm_t      *shm;
    amc_log_t       log;
    unsigned long   eager;    /* eager messages that arrived */
    unsigned long   pulls;    /* pulls that arrived */
    void           *desc;     /* the last pull's descriptor */
    size_t          len;      /* its length */
    uint32_t        seq;      /* its header's sequence number */
    uint32_t        order;    /* sequence numbers out of order, eager and pull */
    uint32_t        next;
} side_t;

static void on_recv(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len,
                    void *desc)
{
    side_t  *s = arg;
    uint32_t seq;

    (void)data;
    memcpy(&seq, hdr, 4);
    s->order += (hdr_len != TEST_HDR) || (seq != s->next);
    s->next   = seq + 1;
    if (desc == NULL) {
        s->eager++;
        return;
    }
    s->order += !amc_shm_pull_is_desc(desc);
    s->pulls++;
    s->desc = desc;
    s->len  = len;
    s->seq  = seq;
}

static void side_init(side_t *s, int rank)
{
    memset(s, 0, sizeof(*s));
    amc_test_shm_rank(&s->tp, &s->log, &s->shm, rank, 2, on_recv, s);
}

static void side_fini(side_t *s)
{
    amc_test_shm_free(s->shm, &s->tp);
}

typedef struct done {
    amc_completion_t comp;
    int              n;
    int              status;
} done_t;

static amc_shm_out_t *connect_to(side_t *from, side_t *to)
{
    return amc_test_shm_connect(from->shm, from->tp.rank, to->shm, to->tp.rank);
}

static void done_fn(amc_completion_t *c, int status)
{
    done_t *d = amc_container_of(c, done_t, comp);

    d->status = status;
    __atomic_add_fetch(&d->n, 1, __ATOMIC_RELEASE); /* a spinning thread may run it */
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        p[i] = (uint8_t)(i * 131u + (i >> 12) + seed);
    }
}

static int same(const uint8_t *p, size_t len, uint32_t seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        if (p[i] != (uint8_t)(i * 131u + (i >> 12) + seed)) {
            return 0;
        }
    }
    return 1;
}

static int guard_ok(const uint8_t *p)
{
    int i;

    for (i = 0; i < GUARD; i++) {
        if (p[i] != 0x5a) {
            return 0;
        }
    }
    return 1;
}

static void run_all(side_t *s)
{
    while (amc_shm_progress(s->shm, 0) > 0) {
    }
}

static void run_all_of(void *arg)
{
    run_all(arg);
}

/* Sends one pull of len and makes it arrive at b. */
static void send_pull(side_t *a, amc_shm_out_t *out, side_t *b, const uint8_t *src, size_t len,
                      uint32_t seq, done_t *d)
{
    uint8_t       hdr[TEST_HDR] = { 0 };
    unsigned long before = b->pulls;

    memcpy(hdr, &seq, 4);
    d->comp.fn = done_fn;
    d->n       = 0;
    CHECK(amc_shm_pull_send(a->shm, out, hdr, TEST_HDR, src, len, &d->comp) == AMC_INPROGRESS,
          "pull of %zu bytes goes", len);
    run_all(b);
    CHECK(b->pulls == before + 1 && b->len == len && b->seq == seq,
          "pull %u of %zu bytes arrived with its length", seq, len);
}

/* The ways the chunks are shared out. */
enum { BY_RECEIVER, BY_SENDER, SENDER_LATE };

static void test_sizes(void)
{
    static const size_t sizes[] = { 1, 4095, 16384, 16385, 32768, 100000, (1u << 20) + 3 };
    side_t              a, b;
    amc_shm_out_t      *out;
    uint8_t            *src, *dst;
    size_t              max = (1u << 20) + 3, k;
    uint32_t            seq = 0;
    int                 how;

    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    src = malloc(max);
    dst = malloc(max + GUARD);
    for (how = BY_RECEIVER; how <= SENDER_LATE; how++) {
        for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            size_t               len = sizes[k];
            amc_shm_pull_slot_t *slot;
            unsigned             si;
            done_t               d, r = { .comp = { done_fn } };
            int                  status;

            fill(src, len, seq);
            memset(dst, 0, len);
            memset(dst + len, 0x5a, GUARD);
            send_pull(&a, out, &b, src, len, seq, &d);
            si   = ((const amc_shm_pull_in_t *)((uintptr_t)b.desc & ~(uintptr_t)1))->slot;
            slot = &out->ring->pull[si];
            if (how == BY_SENDER) {
                /* the receiver opened, and the sender took every chunk
                 * before the receiver took one */
                __atomic_store_n(&slot->dst, (uint64_t)(uintptr_t)dst, __ATOMIC_RELAXED);
                __atomic_store_n(&slot->state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
                (void)amc_shm_progress(a.shm, 0);
                CHECK(d.n == 0, "%zu bytes: the sender waits for the receiver's end", len);
            } else if (how == SENDER_LATE) {
                /* the sender took the first chunk and writes it later */
                __atomic_fetch_add(&slot->claimed, 1, __ATOMIC_RELAXED);
            }
            status = amc_shm_pull_fetch(b.shm, b.desc, dst, len, &r.comp);
            if ((how == SENDER_LATE) && (out->pulls[si].desc.chunk < len)) {
                size_t first = out->pulls[si].desc.chunk;

                CHECK(status == AMC_INPROGRESS, "%zu bytes: the fetch waits for the sender's "
                      "chunk", len);
                run_all(&b);
                CHECK(r.n == 0, "%zu bytes: not before the chunk is in", len);
                memcpy(dst, src, first);
                __atomic_store_n(&slot->pushed, first, __ATOMIC_RELEASE);
                run_all(&b);
                CHECK(r.n == 1 && r.status == AMC_SUCCESS, "%zu bytes: then it completes", len);
            } else if (how == SENDER_LATE) {
                /* one chunk, the sender's: the fetch waits for it as well */
                CHECK(status == AMC_INPROGRESS, "%zu bytes: waits", len);
                memcpy(dst, src, len);
                __atomic_store_n(&slot->pushed, len, __ATOMIC_RELEASE);
                run_all(&b);
                CHECK(r.n == 1 && r.status == AMC_SUCCESS, "%zu bytes: completes", len);
            } else {
                CHECK(status == AMC_SUCCESS, "%zu bytes (%s): fetched at once", len,
                      (how == BY_SENDER) ? "the sender's chunks" : "the receiver's");
            }
            CHECK(same(dst, len, seq), "%zu bytes (way %d): the data", len, how);
            CHECK(guard_ok(dst + len), "%zu bytes (way %d): nothing beyond", len, how);
            CHECK(amc_shm_pulls(b.shm) == 0, "no fetch left waiting");
            run_all(&a);
            CHECK(d.n == 1 && d.status == AMC_SUCCESS, "%zu bytes: the sender completes once",
                  len);
            CHECK(amc_shm_pulls(a.shm) == 0, "no pull left in flight");
            seq++;
        }
    }
    CHECK(b.order == 0, "every header whole and in order");
    free(src);
    free(dst);
    side_fini(&a);
    side_fini(&b);
}

static void test_slots_release_and_errors(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    uint8_t        src[65536], dst[65536], hdr[TEST_HDR] = { 0 };
    done_t         d[AMC_SHM_PULLS + 1], r = { .comp = { done_fn } };
    void          *desc[AMC_SHM_PULLS];
    unsigned       i;

    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    fill(src, sizeof(src), 7);
    for (i = 0; i < AMC_SHM_PULLS; i++) {
        send_pull(&a, out, &b, src, sizeof(src), i, &d[i]);
        desc[i] = b.desc;
    }
    d[i].comp.fn = done_fn;
    CHECK(amc_shm_pull_send(a.shm, out, hdr, TEST_HDR, src, 100, &d[i].comp) == AMC_SHM_TOO_BIG,
          "a fifth pull: the caller sends it another way");
    /* released unread: the sender completes */
    amc_shm_pull_release(b.shm, desc[0]);
    /* the wrong length: refused, and the slot still ends */
    CHECK(amc_shm_pull_fetch(b.shm, desc[1], dst, 100, &r.comp) == AMC_ERR_TRANSPORT,
          "a fetch of the wrong length is refused");
    run_all(&a);
    CHECK(d[0].n == 1 && d[1].n == 1 && d[2].n == 0 && d[3].n == 0,
          "released and refused pulls complete their sends, the others wait");
    /* the receiver dies: its sends end (dropped, as sends to the dead are) */
    (void)amc_peer_set_mark(&a.tp.dead, 1);
    run_all(&a);
    CHECK(d[2].n == 1 && d[3].n == 1, "sends to a dead receiver complete");
    CHECK(amc_shm_pulls(a.shm) == 0, "nothing left in flight at the sender");
    amc_shm_pull_release(b.shm, desc[2]);
    amc_shm_pull_release(b.shm, desc[3]);
    side_fini(&a);
    side_fini(&b);

    /* the sender is found dead holding a chunk, but lives (marked by a
     * notice, a rejected message): the fetch ends only once that chunk's
     * write is over (a process that exits ends it too: test_shm_faults),
     * then with an error */
    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    send_pull(&a, out, &b, src, sizeof(src), 0, &d[0]);
    __atomic_fetch_add(&out->ring->pull[0].claimed, 1, __ATOMIC_RELAXED);
    r.n = 0;
    CHECK(amc_shm_pull_fetch(b.shm, b.desc, dst, sizeof(dst), &r.comp) == AMC_INPROGRESS,
          "waits for the sender's chunk");
    run_all(&b);
    CHECK(r.n == 0, "while the sender lives");
    (void)amc_peer_set_mark(&b.tp.dead, 0);
    run_all(&b);
    CHECK(r.n == 0, "marked dead, it may still be writing its chunk: the fetch waits");
    __atomic_store_n(&out->ring->pull[0].pushed, sizeof(src) / 2, __ATOMIC_RELEASE);
    run_all(&b);
    CHECK(r.n == 1 && r.status == AMC_ERR_PEER, "its write over: an error, not a hang "
          "(status %d)", r.status);
    side_fini(&a);
    side_fini(&b);

    /* the chunks: halves from 32 KiB where ranks have cores, from 512 KiB
     * where they share them (the sender seldom runs meanwhile) */
    {
        static const struct { unsigned batch; size_t len; unsigned chunks; } c[] = {
            { 1, 20000, 1 }, { 1, 32768, 2 }, { 1, 300000, 2 },
            { 32, 32768, 1 }, { 32, 300000, 1 }, { 32, 1u << 20, 2 },
        };
        static uint8_t big[1u << 20];
        unsigned       k;

        side_init(&a, 0);
        side_init(&b, 1);
        out = connect_to(&a, &b);
        for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
            const amc_shm_pull_out_t *p;
            size_t                    chunk;

            a.tp.poll_batch = c[k].batch;
            send_pull(&a, out, &b, big, c[k].len, k, &d[0]);
            p     = &out->pulls[((const amc_shm_pull_in_t *)((uintptr_t)b.desc & ~(uintptr_t)1))->slot];
            chunk = p->desc.chunk;
            CHECK((c[k].len + chunk - 1) / chunk == c[k].chunks && chunk % 4096 == 0,
                  "%zu bytes, poll batch %u: %u chunk(s) of whole pages (chunk %zu)", c[k].len,
                  c[k].batch, c[k].chunks, chunk);
            amc_shm_pull_release(b.shm, b.desc);
            run_all(&a);
        }
        side_fini(&a);
        side_fini(&b);
    }

    /* a receiver that allows no pulls gets none */
    side_init(&a, 0);
    side_init(&b, 1);
    amc_shm_without_pull(b.shm);
    out = connect_to(&a, &b);
    CHECK(amc_shm_pull_send(a.shm, out, hdr, TEST_HDR, src, 100, &d[0].comp) == AMC_SHM_TOO_BIG,
          "no pull to a peer without them");
    side_fini(&a);
    side_fini(&b);
}

/* A pull behind eager messages that found the ring full keeps its place. */
static void test_queued(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    uint8_t        src[40000], dst[40000], hdr[TEST_HDR] = { 0 }, phdr[TEST_HDR] = { 0 };
    uint8_t        data[1000] = { 0 };
    done_t         d = { .comp = { done_fn } }, r = { .comp = { done_fn } }, e = { .comp = { done_fn } };
    uint32_t       seq = 0;
    int            queued = 0;

    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    while (queued == 0) {
        memcpy(hdr, &seq, 4);
        queued = (amc_shm_send(a.shm, out, hdr, TEST_HDR, data, sizeof(data), &e.comp) ==
                  AMC_INPROGRESS);
        seq++;
    }
    fill(src, sizeof(src), 3);
    memcpy(phdr, &seq, 4); /* hdr stays the queued message's until it goes */
    CHECK(amc_shm_pull_send(a.shm, out, phdr, TEST_HDR, src, sizeof(src), &d.comp) ==
          AMC_INPROGRESS, "a pull behind a full ring is queued");
    while ((b.pulls == 0) && (amc_shm_progress(b.shm, 0) + amc_shm_progress(a.shm, 0) > 0)) {
    }
    CHECK(b.pulls == 1 && b.seq == seq && b.eager == seq, "it arrives after the %u before it",
          seq);
    CHECK(amc_shm_pull_fetch(b.shm, b.desc, dst, sizeof(dst), &r.comp) == AMC_SUCCESS, "fetched");
    CHECK(same(dst, sizeof(dst), 3), "its data");
    run_all(&a);
    CHECK(d.n == 1 && e.n == 1, "the queued send completed, and the pull");
    CHECK(b.order == 0, "in order");
    side_fini(&a);
    side_fini(&b);
}

static void test_forged(void)
{
    static const struct {
        const char *what;
        uint64_t    addr, len;
        uint32_t    slot, chunk;
        int         dlen;   /* the control word's data length; 0: a descriptor's */
        int         twice;  /* the same slot twice */
        const char *why;
    } cases[] = {
        { "no slot", 4096, 100, AMC_SHM_PULLS, 16384, 0, 0, "naming no slot" },
        { "no length", 4096, 0, 0, 16384, 0, 0, "out of bounds" },
        { "a chunk of no pages", 4096, 100000, 0, 1000, 0, 0, "out of bounds" },
        { "too many chunks", 4096, 1ull << 40, 0, 4096, 0, 0, "out of bounds" },
        { "the wrong data length", 4096, 100, 0, 16384, 16, 0, "descriptor" },
        { "a slot in use", 4096, 100, 1, 16384, 0, 1, "a slot in use" },
    };
    uint8_t  bytes[64];
    unsigned c;

    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        side_t              a, b;
        amc_shm_out_t      *out;
        amc_shm_pull_desc_t pd = { cases[c].addr, cases[c].len, cases[c].slot, cases[c].chunk };
        uint64_t            w;
        char                err[512];
        int                 k;

        side_init(&a, 0);
        side_init(&b, 1);
        out = connect_to(&a, &b);
        for (k = 0; k <= cases[c].twice; k++) {
            uint32_t seq = (uint32_t)k;

            w = cases[c].dlen ? amc_shm_ctl_word(amc_shm_forge_position(out), TEST_HDR,
                                                 (size_t)cases[c].dlen) | (1ull << 57)
                              : amc_shm_ctl_pull_word(amc_shm_forge_position(out), TEST_HDR);
            memset(bytes, 0, sizeof(bytes));
            memcpy(bytes, &w, 8);
            memcpy(bytes + 8, &seq, 4);
            memcpy(bytes + 8 + TEST_HDR, &pd, sizeof(pd));
            CHECK(amc_shm_forge(out, bytes, sizeof(bytes)) == AMC_SUCCESS, "forge");
            if (k < cases[c].twice) {
                run_all(&b); /* the first is honest, and stays unfetched */
            }
        }
        amc_test_capture_stderr(run_all_of, &b, err, sizeof(err));
        CHECK(b.pulls == (unsigned long)cases[c].twice, "%s: not delivered", cases[c].what);
        CHECK(amc_peer_set_test(&b.tp.dead, 0), "%s: the writer is treated as failed",
              cases[c].what);
        CHECK(strstr(err, "rejected mailbox message from rank 0") != NULL &&
              strstr(err, cases[c].why) != NULL, "%s: a clear error (got \"%s\")", cases[c].what,
              err);
        if (cases[c].twice) {
            amc_shm_pull_release(b.shm, b.desc);
        }
        side_fini(&a);
        side_fini(&b);
    }
}

/* A pull to a rank whose address offered none (AMC_SHM_PULL=0, Yama above
 * 0): a malformed message, never read from or written into. */
static void test_pull_where_none_offered(void)
{
    side_t              a, b;
    amc_shm_out_t      *out;
    static uint8_t      src[65536];
    amc_shm_pull_desc_t pd = { (uint64_t)(uintptr_t)src, sizeof(src), 0, 65536 };
    uint8_t             bytes[64] = { 0 };
    uint64_t            w;
    char                err[512];

    side_init(&a, 0);
    side_init(&b, 1);
    amc_shm_without_pull(b.shm);
    out = connect_to(&a, &b);
    w   = amc_shm_ctl_pull_word(amc_shm_forge_position(out), TEST_HDR);
    memcpy(bytes, &w, 8);
    memcpy(bytes + 8 + TEST_HDR, &pd, sizeof(pd));
    CHECK(amc_shm_forge(out, bytes, sizeof(bytes)) == AMC_SUCCESS, "forge");
    amc_test_capture_stderr(run_all_of, &b, err, sizeof(err));
    CHECK(b.pulls == 0 && amc_peer_set_test(&b.tp.dead, 0), "not delivered, the writer "
          "treated as failed");
    CHECK(strstr(err, "rejected mailbox message from rank 0") != NULL &&
          strstr(err, "offered none") != NULL, "a clear error (got \"%s\")", err);
    side_fini(&a);
    side_fini(&b);
}

/* Pulls that cross (each rank sends the other data): the receiver reads
 * what is left in one piece, and a sender with a pull of its own to finish
 * from that peer takes no chunk of its receiver's. */
static void test_crossing(void)
{
    side_t               a, b;
    amc_shm_out_t       *ab, *ba;
    size_t               len = 100000;
    uint8_t             *sa = malloc(len), *sb = malloc(len), *da = malloc(len), *db = malloc(len);
    done_t               d1, d2, r = { .comp = { done_fn } };
    amc_shm_pull_slot_t *slot;
    void                *from_b;

    side_init(&a, 0);
    side_init(&b, 1);
    ab = connect_to(&a, &b);
    ba = connect_to(&b, &a);
    fill(sa, len, 11);
    fill(sb, len, 12);
    send_pull(&b, ba, &a, sb, len, 0, &d2); /* a holds b's pull, unfetched */
    from_b = a.desc;
    send_pull(&a, ab, &b, sa, len, 0, &d1);
    /* b opens a's data; a, with b's pull to finish, does not help */
    slot = &ab->ring->pull[0];
    __atomic_store_n(&slot->dst, (uint64_t)(uintptr_t)db, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
    (void)amc_shm_progress(a.shm, 0);
    CHECK(__atomic_load_n(&slot->claimed, __ATOMIC_RELAXED) == 0 && ab->pulls[0].pushed == 0,
          "a sender receiving from its receiver takes no chunk");
    /* b, with its own pull out to a, reads all of it at once */
    CHECK(amc_shm_pull_fetch(b.shm, b.desc, db, len, &r.comp) == AMC_SUCCESS, "b fetches");
    CHECK(same(db, len, 11), "b has a's data");
    CHECK(__atomic_load_n(&slot->claimed, __ATOMIC_RELAXED) == 2, "in one claim of both chunks");
    CHECK(amc_shm_pull_fetch(a.shm, from_b, da, len, &r.comp) == AMC_SUCCESS, "a fetches");
    CHECK(same(da, len, 12), "a has b's data");
    run_all(&a);
    run_all(&b);
    CHECK(d1.n == 1 && d2.n == 1, "both sends complete");
    free(sa);
    free(sb);
    free(da);
    free(db);
    side_fini(&a);
    side_fini(&b);
}

/* A sender thread spinning in progress while the receiver fetches: the
 * data is whole whoever copies what. */
typedef struct spinner {
    side_t *a;
    int     stop;
} spinner_t;

static void *spinner_main(void *arg)
{
    spinner_t *s = arg;

    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        (void)amc_shm_progress(s->a->shm, 0);
    }
    return NULL;
}

static void test_threads(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    spinner_t      sp;
    pthread_t      th;
    size_t         len = 1u << 20;
    uint8_t       *src = malloc(len), *dst = malloc(len + GUARD);
    uint8_t        hdr[TEST_HDR] = { 0 };
    done_t         d = { .comp = { done_fn } }, r = { .comp = { done_fn } };
    int            i, rounds = amc_test_quick() ? 20 : 100, bad = 0, status;
    uint64_t       pushed = 0;

    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    sp.a    = &a;
    sp.stop = 0;
    for (i = 0; i < rounds; i++) {
        unsigned long want = b.pulls + 1;

        fill(src, len, (uint32_t)i);
        memset(dst + len, 0x5a, GUARD);
        memcpy(hdr, &i, 4);
        d.n = 0;
        r.n = 0;
        CHECK(amc_shm_pull_send(a.shm, out, hdr, TEST_HDR, src, len, &d.comp) == AMC_INPROGRESS,
              "send");
        CHECK(pthread_create(&th, NULL, spinner_main, &sp) == 0, "thread");
        while (b.pulls < want) {
            (void)amc_shm_progress(b.shm, 0);
        }
        status = amc_shm_pull_fetch(b.shm, b.desc, dst, len, &r.comp);
        while ((status == AMC_INPROGRESS) && (r.n == 0)) {
            (void)amc_shm_progress(b.shm, 0);
        }
        pushed += __atomic_load_n(&out->ring->pull[0].pushed, __ATOMIC_ACQUIRE) &
                  ~AMC_SHM_PULL_FAILED; /* every round takes slot 0 again */
        while (__atomic_load_n(&d.n, __ATOMIC_ACQUIRE) == 0) {
        }
        __atomic_store_n(&sp.stop, 1, __ATOMIC_RELEASE);
        pthread_join(th, NULL);
        sp.stop = 0;
        bad += !same(dst, len, (uint32_t)i) || !guard_ok(dst + len) ||
               ((status == AMC_INPROGRESS) ? r.status : status) != AMC_SUCCESS;
    }
    CHECK(bad == 0, "%d of %d rounds whole with a sender in progress (it wrote %.0f%% of "
          "the bytes)", rounds - bad, rounds, 100.0 * (double)pushed / ((double)len * rounds));
    free(src);
    free(dst);
    side_fini(&a);
    side_fini(&b);
}

/* The sender announces its sleep while the receiver ends its pull at a
 * racing moment: the end must wake it (a lost wake-up waits the whole 3 s
 * poll). */
typedef struct ender {
    side_t *b;
    int     round;  /* go for round r (atomic) */
    int     rounds;
} ender_t;

static void *ender_main(void *arg)
{
    ender_t *e = arg;
    int      r;

    for (r = 0; r < e->rounds; r++) {
        while (__atomic_load_n(&e->round, __ATOMIC_ACQUIRE) != r) {
        }
        while (__atomic_load_n(&e->b->pulls, __ATOMIC_ACQUIRE) != (unsigned long)r + 1) {
            (void)amc_shm_progress(e->b->shm, 0);
        }
        for (volatile int spin = 0; spin < (r * 7919) % 20000; spin++) {
        }
        amc_shm_pull_release(e->b->shm, e->b->desc);
    }
    return NULL;
}

static void test_wakeup(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    ender_t        e;
    pthread_t      th;
    uint8_t        src[20000], hdr[TEST_HDR] = { 0 };
    done_t         d = { .comp = { done_fn } };
    double         t0, dt, worst = 0.0;
    int            r, slept = 0;

    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    e.b      = &b;
    e.round  = -1;
    e.rounds = amc_test_quick() ? 200 : 1000;
    CHECK(pthread_create(&th, NULL, ender_main, &e) == 0, "thread");
    for (r = 0; r < e.rounds; r++) {
        memcpy(hdr, &r, 4);
        d.n = 0;
        CHECK(amc_shm_pull_send(a.shm, out, hdr, TEST_HDR, src, sizeof(src), &d.comp) ==
              AMC_INPROGRESS, "send");
        __atomic_store_n(&e.round, r, __ATOMIC_RELEASE);
        t0 = amc_clock_sec();
        while (d.n == 0) {
            (void)amc_shm_progress(a.shm, 0);
            if (d.n != 0) {
                break;
            }
            if (!amc_shm_sleep_begin(a.shm)) {
                struct pollfd pfd = { .fd = amc_shm_bell_fd(a.shm), .events = POLLIN };

                (void)poll(&pfd, 1, 3000);
                slept++;
            }
            amc_shm_sleep_end(a.shm);
        }
        dt    = amc_clock_sec() - t0;
        worst = (dt > worst) ? dt : worst;
    }
    pthread_join(th, NULL);
    CHECK(worst < 1.5, "no lost wake-up: the longest wait was %.3f s of a 3 s poll", worst);
    CHECK(slept > 0, "the sender did sleep (%d times)", slept);
    side_fini(&a);
    side_fini(&b);
}


/* Two fetches of pulls that arrived, into one buffer. */
typedef struct two_fetches {
    side_t  *b;
    void    *desc[2];
    uint8_t *buf;
    done_t  *r;
} two_fetches_t;

static void two_fetches(void *arg)
{
    two_fetches_t *f = arg;
    int            i;

    for (i = 0; i < 2; i++) {
        CHECK(amc_shm_pull_fetch(f->b->shm, f->desc[i], f->buf, 65536, &f->r->comp) ==
              AMC_INPROGRESS, "fetch %d waits for its resend", i);
    }
}

/* Runs both sides until the fetch r and the send d are over. */
static void pump(side_t *a, side_t *b, done_t *r, done_t *d)
{
    int i;

    for (i = 0; (i < 100000) && ((__atomic_load_n(&r->n, __ATOMIC_ACQUIRE) == 0) ||
                                 (__atomic_load_n(&d->n, __ATOMIC_ACQUIRE) == 0)); i++) {
        run_all(a);
        run_all(b);
    }
}

/* Cross-memory attach refused at run time, each way: the data is resent
 * through the ring, whole; the refusal is said once at warn level; no
 * pull goes either way after it. */
static void test_refused(void)
{
    static const size_t sizes[] = { 100, 65536, (1u << 20) + 3 };
    enum { READS, WRITES, BOTH, NO_PIDFD, MODES };
    static const char *names[] = { "reads refused", "writes refused", "both refused",
                                   "the writer's pid never checked" };
    uint8_t  *src = malloc((1u << 20) + 3), *dst = malloc((1u << 20) + 3 + GUARD);
    uint8_t   hdr[TEST_HDR] = { 0 };
    unsigned  mode, k;

    for (mode = 0; mode < MODES; mode++) {
        for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            size_t               len = sizes[k];
            side_t               a, b;
            amc_shm_out_t       *out;
            amc_shm_pull_slot_t *slot;
            amc_shm_peer_t      *writer;
            done_t               d, r = { .comp = { done_fn } }, e = { .comp = { done_fn } };
            char                 err[2048];
            int                  status;

            side_init(&a, 0);
            side_init(&b, 1);
            a.shm->log.level = AMC_LOG_WARN; /* the refusal is said at warn level */
            b.shm->log.level = AMC_LOG_WARN;
            out = connect_to(&a, &b);
            fill(src, len, (uint32_t)k);
            memset(dst, 0, len);
            memset(dst + len, 0x5a, GUARD);
            send_pull(&a, out, &b, src, len, 0, &d);
            slot   = &out->ring->pull[0];
            writer = amc_shm_peer_find(b.shm, 0);
            if (mode == NO_PIDFD) {
                close(writer->pidfd);
                writer->pidfd = -1;
            }
            __atomic_store_n(&refuse_read, mode == READS || mode == BOTH, __ATOMIC_RELEASE);
            __atomic_store_n(&refuse_write, mode == WRITES || mode == BOTH, __ATOMIC_RELEASE);
            if (mode == WRITES) {
                /* the sender takes every chunk before the receiver reads one */
                __atomic_store_n(&slot->dst, (uint64_t)(uintptr_t)dst, __ATOMIC_RELAXED);
                __atomic_store_n(&slot->state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
                amc_test_capture_stderr(run_all_of, &a, err, sizeof(err));
            }
            status = amc_shm_pull_fetch(b.shm, b.desc, dst, len, &r.comp);
            CHECK(status == AMC_INPROGRESS, "%s, %zu bytes: the fetch waits for the resend "
                  "(status %d)", names[mode], len, status);
            pump(&a, &b, &r, &d);
            CHECK(r.n == 1 && r.status == AMC_SUCCESS && d.n == 1 && d.status == AMC_SUCCESS,
                  "%s, %zu bytes: both sides end well (fetch %d/%d, send %d/%d)", names[mode],
                  len, r.n, r.status, d.n, d.status);
            CHECK(same(dst, len, (uint32_t)k) && guard_ok(dst + len), "%s, %zu bytes: the data "
                  "whole, nothing beyond", names[mode], len);
            if (mode == READS) {
                CHECK(b.shm->refused && (out->ring->pull[1].nopull == 1), "%s: the receiver pulls "
                      "no more, and says so in its ring", names[mode]);
            } else if (mode != NO_PIDFD) {
                CHECK(mode == BOTH ? (a.shm->refused || b.shm->refused) : a.shm->refused,
                      "%s: pulls are off", names[mode]);
            }
            if (mode != NO_PIDFD) {
                CHECK(amc_shm_pull_send(a.shm, out, hdr, TEST_HDR, src, len, &e.comp) ==
                      AMC_SHM_TOO_BIG, "%s: the next rendezvous goes by UCX", names[mode]);
            }
            __atomic_store_n(&refuse_read, 0, __ATOMIC_RELEASE);
            __atomic_store_n(&refuse_write, 0, __ATOMIC_RELEASE);
            side_fini(&a);
            side_fini(&b);
        }
    }
    /* said once, naming the way to say it from the start */
    {
        side_t         a, b;
        amc_shm_out_t *out;
        done_t         d[2], r = { .comp = { done_fn } };
        two_fetches_t  f;
        char           err[4096];
        const char    *said;
        int            i;

        side_init(&a, 0);
        side_init(&b, 1);
        b.shm->log.level = AMC_LOG_WARN;
        out = connect_to(&a, &b);
        fill(src, 65536, 3);
        send_pull(&a, out, &b, src, 65536, 0, &d[0]);
        f.desc[0] = b.desc;
        send_pull(&a, out, &b, src, 65536, 1, &d[1]);
        f.desc[1] = b.desc;
        f.b       = &b;
        f.buf     = dst;
        f.r       = &r;
        __atomic_store_n(&refuse_read, 1, __ATOMIC_RELEASE);
        amc_test_capture_stderr(two_fetches, &f, err, sizeof(err));
        __atomic_store_n(&refuse_read, 0, __ATOMIC_RELEASE);
        for (i = 0; i < 2; i++) {
            pump(&a, &b, &r, &d[i]);
        }
        CHECK(r.n == 2 && r.status == AMC_SUCCESS && same(dst, 65536, 3), "two pulls "
              "in flight when reads were refused: both resent whole");
        said = strstr(err, "AMC_SHM_PULL=0");
        CHECK((said != NULL) && (strstr(said + 1, "AMC_SHM_PULL=0") == NULL),
              "the refusal is said once, naming AMC_SHM_PULL=0 (got \"%s\")", err);
        side_fini(&a);
        side_fini(&b);
    }
    free(src);
    free(dst);
}

/* A sender marked dead (by a notice, a rejected message) while it is alive
 * and inside process_vm_writev for a chunk it claimed: the fetch ends after
 * that write, never while it may still land in the buffer. */
typedef struct writer {
    side_t *a;
    int     stop;
} writer_t;

static void *writer_main(void *arg)
{
    writer_t *w = arg;

    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
        (void)amc_shm_progress(w->a->shm, 0);
    }
    return NULL;
}

static int writes_done_at_end;

static void end_fn(amc_completion_t *c, int status)
{
    writes_done_at_end = __atomic_load_n(&writes_done, __ATOMIC_ACQUIRE);
    done_fn(c, status);
}

static void test_marked_dead_writing(void)
{
    side_t               a, b;
    amc_shm_out_t       *out;
    amc_shm_pull_slot_t *slot;
    writer_t             w;
    pthread_t            th;
    size_t               len = 1u << 20;
    uint8_t             *src = malloc(len), *dst = malloc(len), *copy = malloc(len);
    done_t               d, r = { .comp = { end_fn } };
    double               t0;
    int                  status, begun;

    side_init(&a, 0);
    side_init(&b, 1);
    out = connect_to(&a, &b);
    fill(src, len, 9);
    memset(dst, 0, len);
    send_pull(&a, out, &b, src, len, 0, &d);
    slot = &out->ring->pull[0];
    /* the receiver's buffer is open, the sender takes the first chunk and
     * its write is held in flight */
    __atomic_store_n(&hold_write, 1, __ATOMIC_RELEASE);
    begun = __atomic_load_n(&writes_begun, __ATOMIC_ACQUIRE);
    __atomic_store_n(&slot->dst, (uint64_t)(uintptr_t)dst, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
    w.a    = &a;
    w.stop = 0;
    CHECK(pthread_create(&th, NULL, writer_main, &w) == 0, "thread");
    while (__atomic_load_n(&writes_begun, __ATOMIC_ACQUIRE) == begun) {
        usleep(100);
    }
    status = amc_shm_pull_fetch(b.shm, b.desc, dst, len, &r.comp);
    CHECK(status == AMC_INPROGRESS, "the fetch waits for the sender's chunk");
    (void)amc_peer_set_mark(&b.tp.dead, 0);
    for (t0 = amc_clock_sec(); amc_clock_sec() - t0 < 0.05;) {
        run_all(&b);
    }
    CHECK(__atomic_load_n(&r.n, __ATOMIC_ACQUIRE) == 0, "marked dead with its write in flight: "
          "the fetch has not ended");
    __atomic_store_n(&hold_write, 0, __ATOMIC_RELEASE);
    for (t0 = amc_clock_sec(); (r.n == 0) && (amc_clock_sec() - t0 < 10.0);) {
        run_all(&b);
    }
    CHECK(r.n == 1 && r.status == AMC_ERR_PEER, "then it ends with AMC_ERR_PEER (%d, status %d)",
          r.n, r.status);
    CHECK(writes_done_at_end >= 1, "after the write was over");
    memcpy(copy, dst, len);
    usleep(20000);
    CHECK(memcmp(copy, dst, len) == 0, "nothing written into the buffer after the end");
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    free(src);
    free(dst);
    free(copy);
    side_fini(&a);
    side_fini(&b);
}

int main(void)
{
    test_sizes();
    test_slots_release_and_errors();
    test_queued();
    test_crossing();
    test_forged();
    test_pull_where_none_offered();
    test_threads();
    test_wakeup();
    test_refused();
    test_marked_dead_writing();
    return amc_test_summary("test_shm_pull");
}
