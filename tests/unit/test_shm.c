/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The on-node mailboxes (transport/shm.h) between two "ranks" in one
 * process, each with its own inbox, opened through /proc/self/fd as a peer
 * opens it: messages of every size arrive whole, in order and aligned, over
 * many laps of the ring; a full ring queues sends and completes them in
 * order once the receiver frees room, and drops them once the receiver is
 * dead; a message too big for a mailbox is refused for the caller to send
 * otherwise; the next message offered outside progress (take_now) is
 * left in place when refused and freed when taken, every message still
 * once and in order; forged control words (a length beyond the mailbox, unknown
 * flags, a wrong sequence, a skip with a length, no header) are rejected
 * with the writer marked failed and nothing delivered; a sleeper is woken
 * by the bell on every one of many racing sends (a lost wake-up shows as a
 * poll that waits its whole timeout), with the sleeper's membarrier making
 * the senders' fence and with a fence on every send; concurrent senders to one ring keep
 * each sender's order with locks live. What a peer of the same user may
 * write is not trusted: a registration without its writer's published key
 * is refused with a clear error and the real writer keeps its ring; a
 * doorbell or inbox that is not the file its rank published (another
 * descriptor at that number, a wrong key) is never written; a receiver
 * whose tail says it read beyond what was written is treated as failed,
 * its sends dropped, nothing written outside its ring.
 */
#define _GNU_SOURCE
#include "tests/unit/harness.h"
#include "transport/shm.h"
#include "tests/unit/shm_connect.h"
#include "base/clock.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_HDR 20

typedef struct side {
    amc_transport_t tp;
    amc_shm_t      *shm;
    amc_log_t       log;
    /* what arrived */
    unsigned long   got;
    unsigned long   bad;     /* contents or alignment wrong */
    uint32_t        next[4]; /* the next sequence number expected per sender thread */
    size_t          last_len;
    size_t          hdr_want; /* the header length every message carries */
} side_t;

/* A message: a 20-byte header (sender thread, sequence, data length, a
 * byte pattern seed) and data whose bytes follow from them. */
static void make_msg(uint8_t *hdr, uint8_t *data, uint32_t thread, uint32_t seq, uint32_t len)
{
    uint32_t i;

    memset(hdr, 0, TEST_HDR);
    memcpy(hdr, &thread, 4);
    memcpy(hdr + 4, &seq, 4);
    memcpy(hdr + 8, &len, 4);
    for (i = 0; i < len; i++) {
        data[i] = (uint8_t)(seq * 31u + i * 7u + thread);
    }
}

static void on_recv(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len,
                    void *desc)
{
    side_t  *s = arg;
    uint32_t thread, seq, want, i;
    int      ok = (hdr_len == s->hdr_want) && (desc == NULL) && (((uintptr_t)data & 7u) == 0);

    memcpy(&thread, hdr, 4);
    memcpy(&seq, (const uint8_t *)hdr + 4, 4);
    memcpy(&want, (const uint8_t *)hdr + 8, 4);
    ok = ok && (thread < 4) && (want == len) && (seq == s->next[thread]);
    for (i = 0; ok && (i < len); i++) {
        ok = (((const uint8_t *)data)[i] == (uint8_t)(seq * 31u + i * 7u + thread));
    }
    if (thread < 4) {
        s->next[thread] = seq + 1;
    }
    s->bad += !ok;
    s->got++;
    s->last_len = len;
}

static void side_init(side_t *s, int rank, int size)
{
    memset(s, 0, sizeof(*s));
    s->hdr_want = TEST_HDR;
    amc_test_shm_rank(&s->tp, &s->log, &s->shm, rank, size, on_recv, s);
}

static void side_fini(side_t *s)
{
    amc_test_shm_free(s->shm, &s->tp);
}

static amc_shm_out_t *connect_to(side_t *from, side_t *to)
{
    return amc_test_shm_connect(from->shm, from->tp.rank, to->shm, to->tp.rank);
}

typedef struct pend_comp {
    amc_completion_t comp;
    unsigned long   *done;
    uint32_t         seq;
    uint32_t        *order_bad;
    uint32_t        *last;
    uint8_t          hdr[TEST_HDR];
    uint8_t          data[2048];
} pend_comp_t;

static void pend_done(amc_completion_t *c, int status)
{
    pend_comp_t *p = amc_container_of(c, pend_comp_t, comp);

    *p->order_bad += (status != AMC_SUCCESS) || (p->seq != *p->last + 1);
    *p->last = p->seq;
    (*p->done)++;
}

/* Takes every message there (a pass takes one). */
static void drain(side_t *s)
{
    while (amc_shm_progress(s->shm, 0) > 0) {
    }
}

static void progress_of(void *arg)
{
    side_t *s = arg;

    (void)amc_shm_progress(s->shm, 0);
}

/* Every length from 0 up to the largest, then a run of mixed lengths that
 * wraps the ring many times, each received at once. */
static void test_sizes_and_laps(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    uint8_t        hdr[TEST_HDR], data[4096];
    size_t         max = amc_shm_max_message() - 24, len;
    uint32_t       seq = 0;
    int            i, rc;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    for (len = 0; len <= max; len += (len < 80) ? 1 : 61) {
        make_msg(hdr, data, 0, seq++, (uint32_t)len);
        rc = amc_shm_send(a.shm, out, hdr, TEST_HDR, data, len, NULL);
        CHECK(rc == AMC_SUCCESS, "send of %zu bytes: %d", len, rc);
        CHECK(amc_shm_progress(b.shm, 0) >= 1, "the message of %zu bytes taken", len);
        CHECK((b.got == seq) && (b.last_len == len), "%zu bytes arrived (got %lu)", len, b.got);
    }
    for (i = 0; i < 5000; i++) {
        len = (size_t)((i * 37) % 300);
        make_msg(hdr, data, 0, seq++, (uint32_t)len);
        CHECK(amc_shm_send(a.shm, out, hdr, TEST_HDR, data, len, NULL) == AMC_SUCCESS, "lap %d", i);
        if (i % 3 == 2) {
            /* a pass takes one message: three of them, the skips between
             * them followed */
            for (int k = 0; k < 3; k++) {
                CHECK(amc_shm_progress(b.shm, 0) == 1, "lap %d: message %d of 3 taken", i, k);
            }
        }
    }
    while (amc_shm_progress(b.shm, 0) > 0) {
    }
    CHECK(b.got == seq, "every message arrived: %lu of %u", b.got, seq);
    CHECK(b.bad == 0, "%lu arrived wrong (contents, order or alignment)", b.bad);
    make_msg(hdr, data, 0, seq, (uint32_t)sizeof(data));
    CHECK(amc_shm_send(a.shm, out, hdr, TEST_HDR, data, amc_shm_max_message(), NULL) ==
          AMC_SHM_TOO_BIG, "a message beyond the mailbox is the caller's to send otherwise");
    CHECK(amc_shm_rings_out(a.shm) == 1 && amc_shm_rings_in(b.shm) == 1, "one ring each way used");
    CHECK(amc_shm_rings_in(a.shm) == 0, "no ring into a rank nobody wrote to");
    side_fini(&a);
    side_fini(&b);
}

/* Long messages whose payload holds, at each cell boundary, the control
 * word a message starting there one lap later would carry, between runs of
 * short messages that make later laps start messages on those cells: the
 * reader must never take one for a message (the writer clears the first
 * word of the cell the reader looks at next; the reader never writes). */
/* Headers of 12 to 32 bytes with every length that fits one or two cells
 * and a few beyond: the sends that copy without a call place every byte
 * whatever the header leaves of the first cell. */
static void test_header_sizes(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    uint8_t        hdr[32], data[300];
    uint32_t       seq = 0;
    size_t         hdr_len, len;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    for (hdr_len = 12; hdr_len <= 32; hdr_len += 4) {
        b.hdr_want = hdr_len;
        for (len = 0; len <= 140; len++) {
            make_msg(hdr, data, 0, seq++, (uint32_t)len);
            memset(hdr + 12, 0x5a, hdr_len - 12);
            CHECK(amc_shm_send(a.shm, out, hdr, hdr_len, data, len, NULL) == AMC_SUCCESS,
                  "send of %zu + %zu bytes", hdr_len, len);
            CHECK(amc_shm_progress(b.shm, 0) >= 1, "%zu + %zu bytes taken", hdr_len, len);
            CHECK((b.got == seq) && (b.last_len == len) && (b.bad == 0),
                  "%zu + %zu bytes arrived whole", hdr_len, len);
        }
    }
    side_fini(&a);
    side_fini(&b);
}

/* A pass takes one message from a ring, or up to the transport's
 * poll_batch where the context set one (ranks sharing cores). */
static void test_poll_batch(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    uint8_t        hdr[TEST_HDR], data[64];
    uint32_t       seq = 0;
    int            k;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    for (k = 0; k < 5; k++) {
        make_msg(hdr, data, 0, seq++, 8);
        (void)amc_shm_send(a.shm, out, hdr, TEST_HDR, data, 8, NULL);
    }
    for (k = 0; k < 5; k++) {
        CHECK(amc_shm_progress(b.shm, 0) == 1, "pass %d takes one message", k);
    }
    CHECK(amc_shm_progress(b.shm, 0) == 0, "then nothing is left");
    b.tp.poll_batch = 32;
    for (k = 0; k < 5; k++) {
        make_msg(hdr, data, 0, seq++, 8);
        (void)amc_shm_send(a.shm, out, hdr, TEST_HDR, data, 8, NULL);
    }
    CHECK(amc_shm_progress(b.shm, 0) == 5, "with a batch of 32 one pass takes all five");
    CHECK((b.got == seq) && (b.bad == 0), "ten arrived whole: %lu", b.got);
    side_fini(&a);
    side_fini(&b);
}

static void test_stale_payload(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    uint8_t        hdr[TEST_HDR];
    uint64_t       data[256];
    uint64_t       start;
    size_t         len, cells, off, k, lens[3000];
    uint32_t       seq = 0;
    int            i, j, extra = 0;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    for (i = 0; i < 3000; i++) {
        len   = (i % 4 == 0) ? 600 + (size_t)((i * 8) % 1200) : (size_t)((i * 13) % 90);
        len   = (len + 7) & ~(size_t)7;
        cells = (8 + 24 + len + 63) / 64; /* control word, header padded to 8, data */
        start = amc_shm_forge_position(out);
        off   = (size_t)(start % 128);
        if (off + cells > 128) {
            start += 128 - off; /* it goes to cell 0 after a skip */
        }
        make_msg(hdr, (uint8_t *)data, 0, seq, (uint32_t)len);
        /* data begins 32 bytes into the first cell: cell k's first word is
         * data word (64 k - 32) / 8 */
        for (k = 1; k < cells; k++) {
            data[(64 * k - 32) / 8] = amc_shm_ctl_word(start + k + 128, TEST_HDR, 8);
        }
        CHECK(amc_shm_send(a.shm, out, hdr, TEST_HDR, data, len, NULL) == AMC_SUCCESS,
              "message %d of %zu bytes", i, len);
        lens[i] = len;
        CHECK(amc_shm_progress(b.shm, 0) >= 1, "message %d taken (after a skip: 2)", i);
        CHECK((b.got == (unsigned long)i + 1) && (b.last_len == lens[i]),
              "message %d: %lu arrived, the last of %zu bytes (sent %zu)", i, b.got, b.last_len,
              lens[i]);
        for (j = 0; j < 2; j++) {
            extra += amc_shm_progress(b.shm, 0); /* nothing more is there */
        }
        seq++;
    }
    CHECK(extra == 0, "%d messages taken that were never sent (stale payload read as a "
          "control word)", extra);
    CHECK(amc_peer_set_count(&b.tp.dead) == 0, "the writer was never found malformed");
    side_fini(&a);
    side_fini(&b);
}

/* Sends that find the ring full wait in order and complete from progress;
 * those still waiting when the receiver dies are dropped, completed. */
static void test_full_ring(void)
{
    enum { N = 64 };
    static pend_comp_t p[N];
    side_t             a, b;
    amc_shm_out_t     *out;
    unsigned long      done = 0;
    uint32_t           order_bad = 0, last = 0, i;
    int                queued = 0, rc;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    for (i = 0; i < N; i++) {
        p[i].comp.fn    = pend_done;
        p[i].done       = &done;
        p[i].seq        = i + 1;
        p[i].order_bad  = &order_bad;
        p[i].last       = &last;
        make_msg(p[i].hdr, p[i].data, 0, i, 1000);
        rc = amc_shm_send(a.shm, out, p[i].hdr, TEST_HDR, p[i].data, 1000, &p[i].comp);
        CHECK((rc == AMC_SUCCESS) || (rc == AMC_INPROGRESS), "send %u: %d", i, rc);
        if (rc == AMC_SUCCESS) {
            CHECK(queued == 0, "send %u went ahead of queued ones", i);
            last = i + 1;
            done++;
        } else {
            queued++;
        }
    }
    CHECK(queued > N / 2, "the ring (8 KiB) held only a few 1 KiB messages: %d queued", queued);
    CHECK(amc_shm_queued(a.shm) == (unsigned)queued, "queue count");
    while ((b.got < N) && (amc_shm_progress(b.shm, 0) + amc_shm_progress(a.shm, 0) > 0)) {
    }
    CHECK(b.got == N && b.bad == 0, "all %d arrived in order (got %lu, bad %lu)", N, b.got, b.bad);
    CHECK(done == N && order_bad == 0, "completions in order: %lu done, %u out of order", done,
          order_bad);
    CHECK(amc_shm_queued(a.shm) == 0, "nothing left queued");

    /* the receiver dies with the ring full: the waiting sends are dropped */
    done = 0;
    last = 0;
    queued = 0;
    for (i = 0; i < N; i++) {
        p[i].seq = i + 1;
        make_msg(p[i].hdr, p[i].data, 0, N + i, 1000);
        rc = amc_shm_send(a.shm, out, p[i].hdr, TEST_HDR, p[i].data, 1000, &p[i].comp);
        if (rc == AMC_SUCCESS) {
            last = i + 1;
            done++;
        } else {
            queued++;
        }
    }
    CHECK(queued > 0, "full again");
    (void)amc_shm_progress(a.shm, 0);
    CHECK(amc_shm_queued(a.shm) == (unsigned)queued, "a live receiver that reads nothing keeps them");
    amc_peer_set_mark(&a.tp.dead, 1);
    (void)amc_shm_progress(a.shm, 0);
    CHECK(amc_shm_queued(a.shm) == 0 && done == N, "dropped once it is dead: %lu done", done);
    side_fini(&a);
    side_fini(&b);
}

/* send_now writes a message whole or writes nothing: one cell and
 * several go at once while the ring has room and nothing waits; a full
 * ring, sends waiting behind it, a message too long for a mailbox or
 * threads that may meet are refused (AMC_SEND_NOT_NOW), and the reader
 * then finds exactly the messages that were taken, in order. */
static void test_send_now(void)
{
    static pend_comp_t p;
    static const int   live = 1;
    static uint8_t     hdr[TEST_HDR], data[2048];
    side_t             a, b;
    amc_shm_out_t     *out;
    unsigned long      done = 0;
    uint32_t           order_bad = 0, last = 0, seq = 0, sent;
    int                rc;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    make_msg(hdr, data, 0, seq, 8);
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 8) == AMC_SUCCESS, "one cell");
    seq++;
    make_msg(hdr, data, 0, seq, 900);
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 900) == AMC_SUCCESS, "15 cells");
    seq++;
    drain(&b);
    CHECK((b.got == 2) && (b.bad == 0) && (b.last_len == 900), "both arrived whole (got %lu)",
          b.got);

    make_msg(hdr, data, 0, seq, 2040);
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 2040) == AMC_SEND_NOT_NOW,
          "longer than a mailbox message");
    a.tp.lock_live = &live;
    make_msg(hdr, data, 0, seq, 8);
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 8) == AMC_SEND_NOT_NOW,
          "threads may meet");
    a.tp.lock_live = NULL;

    /* fill the ring: the first refusal leaves it as it was */
    for (sent = 0; sent < 64; sent++) {
        make_msg(hdr, data, 0, seq, 1000);
        rc = amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 1000);
        CHECK((rc == AMC_SUCCESS) || (rc == AMC_SEND_NOT_NOW), "send_now: %d", rc);
        if (rc != AMC_SUCCESS) {
            break;
        }
        seq++;
    }
    CHECK((sent > 0) && (sent < 64), "an 8 KiB ring took %u messages of 1 KiB", sent);
    /* a queued send keeps later ones out, room or not */
    p.comp.fn   = pend_done;
    p.done      = &done;
    p.seq       = 1;
    p.order_bad = &order_bad;
    p.last      = &last;
    make_msg(p.hdr, p.data, 0, seq, 1000);
    CHECK(amc_shm_send(a.shm, out, p.hdr, TEST_HDR, p.data, 1000, &p.comp) == AMC_INPROGRESS,
          "queued behind the full ring");
    seq++;
    drain(&b);
    make_msg(hdr, data, 0, seq, 8);
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 8) == AMC_SEND_NOT_NOW,
          "a send waits: nothing goes ahead of it");
    (void)amc_shm_progress(a.shm, 0);
    CHECK((done == 1) && (order_bad == 0), "the queued send went");
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 8) == AMC_SUCCESS,
          "nothing waits any more");
    drain(&b);
    CHECK((b.got == 2 + sent + 2) && (b.bad == 0), "every message taken arrived once, in order "
          "(got %lu of %u, bad %lu)", b.got, 2 + sent + 2, b.bad);
    side_fini(&a);
    side_fini(&b);
}

/* take_now's take: the handler's checks; takes what take_every says. */
typedef struct taker {
    side_t       *side;
    unsigned      every;  /* take every n-th message offered (0: none) */
    unsigned long offered;
} taker_t;

static int take_some(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    taker_t *t = arg;

    if ((t->every == 0) || ((++t->offered % t->every) != 0)) {
        return 0;
    }
    on_recv(t->side, hdr, hdr_len, data, len, NULL);
    return 1;
}

/* The next message from a peer offered to a caller outside progress: left
 * where it is when refused (progress then delivers it, in order), freed
 * when taken; nothing from a peer that has no ring, nothing while threads
 * may meet; laps with skips and messages of many cells mixed with
 * progress's reads keep every message once and in order; a forged word is
 * progress's to reject. */
static void test_take_now(void)
{
    static const int live = 1;
    uint8_t          hdr[TEST_HDR], data[1100];
    side_t           a, b;
    amc_shm_out_t   *out;
    taker_t          t;
    uint32_t         seq = 0, len;
    unsigned long    taken = 0;
    int              rc, i;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    t.side    = &b;
    t.every   = 1;
    t.offered = 0;
    CHECK(amc_shm_take_now(b.shm, 0, take_some, &t) == AMC_SHM_NO_RING, "no ring yet");
    out = connect_to(&a, &b);
    CHECK(amc_shm_take_now(b.shm, 0, take_some, &t) == AMC_TAKE_EMPTY, "an empty ring");

    make_msg(hdr, data, 0, seq++, 8);
    CHECK(amc_shm_send_now(a.shm, out, hdr, TEST_HDR, data, 8) == AMC_SUCCESS, "send");
    t.every = 0;
    CHECK(amc_shm_take_now(b.shm, 0, take_some, &t) == AMC_TAKE_OTHER, "refused: left there");
    CHECK(b.got == 0, "nothing delivered by a refusal");
    CHECK(amc_shm_take_now(b.shm, 5, take_some, &t) == AMC_SHM_NO_RING, "another peer's: none");
    b.tp.lock_live = &live;
    t.every        = 1;
    CHECK(amc_shm_take_now(b.shm, 0, take_some, &t) == AMC_TAKE_OTHER, "threads may meet");
    b.tp.lock_live = NULL;
    CHECK(b.got == 0, "nothing taken while threads may meet");
    drain(&b);
    CHECK((b.got == 1) && (b.bad == 0), "progress delivered the refused one");

    /* many laps: lengths of 1 to 17 cells, every third offer taken */
    t.every = 3;
    for (i = 0; i < 600; i++) {
        len = (uint32_t)((i * 97) % 1100);
        make_msg(hdr, data, 0, seq, len);
        rc = amc_shm_send(a.shm, out, hdr, TEST_HDR, data, len, NULL);
        CHECK(rc == AMC_SUCCESS, "send %d: %d", i, rc);
        seq++;
        rc = amc_shm_take_now(b.shm, 0, take_some, &t);
        CHECK((rc == AMC_SUCCESS) || (rc == AMC_TAKE_OTHER), "take_now %d: %d", i, rc);
        taken += (rc == AMC_SUCCESS);
        if (rc != AMC_SUCCESS) {
            drain(&b);
        }
    }
    drain(&b);
    CHECK((b.got == seq) && (b.bad == 0) && (taken > 100),
          "each message once, in order (got %lu of %u, bad %lu, %lu taken outside progress)",
          b.got, seq, b.bad, taken);

    /* a forged word: not offered, and progress rejects it */
    {
        uint64_t w = (1ull << 63) | (1ull << 57) | (20ull << 48) |
                     (uint32_t)amc_shm_forge_position(out);
        uint8_t  bytes[64];
        char     err[512];

        memset(bytes, 0xab, sizeof(bytes));
        memcpy(bytes, &w, sizeof(w));
        CHECK(amc_shm_forge(out, bytes, sizeof(bytes)) == AMC_SUCCESS, "forge");
        t.every   = 1;
        t.offered = 0;
        CHECK(amc_shm_take_now(b.shm, 0, take_some, &t) == AMC_TAKE_OTHER, "a forged word");
        CHECK(t.offered == 0, "a forged word is not offered");
        b.log.level = AMC_LOG_ERROR;
        amc_test_capture_stderr(progress_of, &b, err, sizeof(err));
        CHECK(amc_peer_set_test(&b.tp.dead, 0) &&
              (strstr(err, "rejected mailbox message from rank 0") != NULL),
              "progress rejected it (\"%s\")", err);
        CHECK(amc_shm_take_now(b.shm, 0, take_some, &t) == AMC_TAKE_EMPTY, "a closed ring");
    }
    side_fini(&a);
    side_fini(&b);
}

/* A forged first word of a message is rejected, nothing reaches the
 * handler, and the writer is treated as failed. */
static void test_forged(void)
{
    static const struct {
        const char *what;
        uint64_t    w;     /* position filled in: the ring's next */
    } cases[] = {
        { "unknown flags", (1ull << 63) | (1ull << 57) | (20ull << 48) },
        { "a length beyond the mailbox", (1ull << 63) | (20ull << 48) | (4000ull << 32) },
        { "a length beyond the ring's end", (1ull << 63) | (20ull << 48) | (2000ull << 32) },
        { "no header", (1ull << 63) | (8ull << 32) },
        { "a skip with a length", (1ull << 63) | (1ull << 56) | (20ull << 48) },
        { "no valid bit", (20ull << 48) | 5u },
        { "wrong sequence", (1ull << 63) | (20ull << 48) | 77u },
    };
    uint8_t  hdr[TEST_HDR], data[64], bytes[64];
    unsigned c;
    int      k;

    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        side_t         a, b;
        amc_shm_out_t *out;
        uint64_t       w = cases[c].w;
        char           err[512];

        side_init(&a, 0, 2);
        side_init(&b, 1, 2);
        out = connect_to(&a, &b);
        /* some real traffic first, so the ring is not at its start */
        for (k = 0; k < 3; k++) {
            make_msg(hdr, data, 0, (uint32_t)k, 40);
            (void)amc_shm_send(a.shm, out, hdr, TEST_HDR, data, 40, NULL);
        }
        drain(&b);
        if (c == 2) {
            /* 50 messages of two cells: the next is at cell 100 of 128,
             * and 2000 bytes (32 cells) would run past the end */
            for (k = 3; k < 50; k++) {
                make_msg(hdr, data, 0, (uint32_t)k, 40);
                (void)amc_shm_send(a.shm, out, hdr, TEST_HDR, data, 40, NULL);
            }
            drain(&b);
            w |= 100u;
        } else if ((w & 0xffffffffu) == 0) {
            w |= 3u;
        }
        memset(bytes, 0xab, sizeof(bytes));
        memcpy(bytes, &w, sizeof(w));
        CHECK(amc_shm_forge(out, bytes, sizeof(bytes)) == AMC_SUCCESS, "forge");
        {
            unsigned long before = b.got;

            b.log.level = AMC_LOG_ERROR;
            amc_test_capture_stderr(progress_of, &b, err, sizeof(err));
            CHECK(b.got == before, "%s: nothing delivered", cases[c].what);
            CHECK(amc_peer_set_test(&b.tp.dead, 0), "%s: the writer is treated as failed",
                  cases[c].what);
            CHECK(strstr(err, "rejected mailbox message from rank 0") != NULL,
                  "%s: a clear error (got \"%s\")", cases[c].what, err);
        }
        /* the library stays usable: later messages on that ring are ignored */
        make_msg(hdr, data, 0, 999, 8);
        (void)amc_shm_send(a.shm, out, hdr, TEST_HDR, data, 8, NULL);
        CHECK(amc_shm_progress(b.shm, 0) == 0, "%s: the ring stays closed", cases[c].what);
        CHECK(b.bad == 0, "%s: nothing wrong delivered", cases[c].what);
        side_fini(&a);
        side_fini(&b);
    }
}

typedef struct waker {
    side_t        *a;
    amc_shm_out_t *out;
    int            rounds;
    int            round;   /* the receiver's go for round r (atomic) */
    int            posted;  /* rounds whose message is out (atomic) */
    int            order;   /* 0: race; 1: send, then the receiver announces; 2: the reverse */
} waker_t;

static void waker_send(waker_t *w, int r)
{
    uint8_t hdr[TEST_HDR], data[8];

    make_msg(hdr, data, 1, (uint32_t)r, 8);
    while (amc_shm_send(w->a->shm, w->out, hdr, TEST_HDR, data, 8, NULL) != AMC_SUCCESS) {
    }
    __atomic_store_n(&w->posted, r + 1, __ATOMIC_RELEASE);
}

static void *waker_main(void *arg)
{
    waker_t *w = arg;
    int      r;

    for (r = 0; r < __atomic_load_n(&w->rounds, __ATOMIC_ACQUIRE); r++) {
        while (__atomic_load_n(&w->round, __ATOMIC_ACQUIRE) != r) {
            if (r >= __atomic_load_n(&w->rounds, __ATOMIC_ACQUIRE)) {
                return NULL; /* the receiver stopped early */
            }
        }
        if (w->order == 0) {
            /* a varying delay: before, during and after the sleeper's announcement */
            for (volatile int spin = 0; spin < (r * 7919) % 20000; spin++) {
            }
        }
        waker_send(w, r);
    }
    return NULL;
}

/* An announced sleeper's wait on its bell, 3 s at most (a lost wake-up
 * waits it all). Returns 1: one sleep. */
static int bell_wait(side_t *s)
{
    struct pollfd pfd = { .fd = amc_shm_bell_fd(s->shm), .events = POLLIN, .revents = 0 };

    (void)poll(&pfd, 1, 3000);
    return 1;
}

/* The receiver announces its sleep, looks once more, and polls the bell
 * with a long timeout; each send must wake it. order 1: every message is
 * out before the announcement (the look after it must see it); 2: after
 * (the sender must ring); 0: at racing moments. */
static void test_wakeup(int fence, int order)
{
    side_t        a, b;
    waker_t       w;
    pthread_t     th;
    double        t0, worst = 0.0, dt;
    int           r, slept = 0, missed = 0, rounds = amc_test_quick() ? 300 : 2000;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    if (fence) {
        amc_shm_without_membarrier(a.shm);
        amc_shm_without_membarrier(b.shm);
    }
    memset(&w, 0, sizeof(w));
    w.a      = &a;
    w.out    = connect_to(&a, &b);
    w.rounds = rounds;
    w.order  = order;
    w.round  = -1;
    (void)amc_shm_progress(b.shm, 0); /* the new ring adopted: nothing pending */
    CHECK(pthread_create(&th, NULL, waker_main, &w) == 0, "thread");
    for (r = 0; r < rounds; r++) {
        unsigned long want = b.got + 1;

        t0 = amc_clock_sec();
        if (order == 2) {
            /* announced first, with nothing to see; then the go */
            CHECK(!amc_shm_sleep_begin(b.shm), "round %d: nothing pending yet", r);
            __atomic_store_n(&w.round, r, __ATOMIC_RELEASE);
            slept += bell_wait(&b);
            amc_shm_sleep_end(b.shm);
        } else if (order == 1) {
            /* the message is out before the announcement: the look after it sees it */
            __atomic_store_n(&w.round, r, __ATOMIC_RELEASE);
            while (__atomic_load_n(&w.posted, __ATOMIC_ACQUIRE) != r + 1) {
            }
            missed += !amc_shm_sleep_begin(b.shm);
            amc_shm_sleep_end(b.shm);
        } else {
            __atomic_store_n(&w.round, r, __ATOMIC_RELEASE);
        }
        while (b.got < want) {
            (void)amc_shm_progress(b.shm, 0);
            if (b.got >= want) {
                break;
            }
            if (!amc_shm_sleep_begin(b.shm)) {
                slept += bell_wait(&b);
            }
            amc_shm_sleep_end(b.shm);
        }
        dt = amc_clock_sec() - t0;
        worst = (dt > worst) ? dt : worst;
        if (worst >= 1.5) {
            __atomic_store_n(&w.rounds, r + 1, __ATOMIC_RELEASE); /* one lost wake-up is enough */
            rounds = r + 1;
            break;
        }
    }
    pthread_join(th, NULL);
    CHECK(worst < 1.5, "no lost wake-up (%s, order %d): the longest wait was %.3f s of a 3 s poll",
          fence ? "fences" : "membarrier", order, worst);
    CHECK(missed == 0, "order 1: the look after the announcement missed %d messages", missed);
    CHECK((order == 1) || (slept > 0), "the receiver did sleep (%d times)", slept);
    CHECK(b.bad == 0 && b.got == (unsigned long)rounds, "all %d arrived", rounds);
    side_fini(&a);
    side_fini(&b);
}

typedef struct sender {
    side_t        *a;
    amc_shm_out_t *out;
    uint32_t       thread;
    int            count;
    unsigned long  queued;
} sender_t;

static void noop_done(amc_completion_t *c, int status)
{
    (void)c;
    (void)status;
}

static void *sender_main(void *arg)
{
    sender_t        *s = arg;
    amc_completion_t comp = { noop_done };
    uint8_t          hdr[TEST_HDR], data[256];
    int              i, rc;

    for (i = 0; i < s->count; i++) {
        make_msg(hdr, data, s->thread, (uint32_t)i, (uint32_t)(i % 200));
        rc = amc_shm_send(s->a->shm, s->out, hdr, TEST_HDR, data, (size_t)(i % 200), &comp);
        if (rc == AMC_INPROGRESS) {
            /* the header is ours until it completes: wait for it */
            while (amc_shm_queued(s->a->shm) > 0) {
                (void)amc_shm_progress(s->a->shm, 0);
            }
            s->queued++;
        }
    }
    return NULL;
}

/* Two threads send on one ring while the receiver reads: each thread's
 * messages arrive whole and in its order. */
static void test_threads(void)
{
    static const int live = 1;
    side_t           a, b;
    sender_t         s[2];
    pthread_t        th[2];
    amc_shm_out_t   *out;
    int              t, count = amc_test_quick() ? 5000 : 40000;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    a.tp.lock_live = &live;
    b.tp.lock_live = &live;
    out = connect_to(&a, &b);
    for (t = 0; t < 2; t++) {
        s[t] = (sender_t){ .a = &a, .out = out, .thread = (uint32_t)t + 2, .count = count };
        CHECK(pthread_create(&th[t], NULL, sender_main, &s[t]) == 0, "thread");
    }
    while (b.got < (unsigned long)(2 * count)) {
        (void)amc_shm_progress(b.shm, 0);
    }
    for (t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
    }
    CHECK(b.bad == 0, "%lu of %d arrived wrong or out of a thread's order", b.bad, 2 * count);
    side_fini(&a);
    side_fini(&b);
}


/* Another process of the user (here: a mapping of the inbox through /proc,
 * as it would open it) registers in a peer's ring: refused, and the real
 * writer registers there all the same. */
static void test_foreign_registration(void)
{
    side_t           a, b, c;
    amc_shm_out_t   *out;
    amc_shm_addr_t   addr;
    amc_shm_inbox_t *inbox;
    uint8_t          hdr[TEST_HDR], data[64];
    char             path[64], err[1024];
    size_t           len;
    int              fd;
    unsigned         i;

    side_init(&a, 0, 3);
    side_init(&b, 1, 3);
    side_init(&c, 2, 3);
    amc_test_shm_meet(a.shm, 0, b.shm, 1);
    amc_test_shm_meet(c.shm, 2, b.shm, 1);
    amc_shm_addr(b.shm, &addr);
    len = amc_shm_inbox_bytes(addr.nrings);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", addr.inbox_fd);
    fd = open(path, O_RDWR);
    CHECK(fd >= 0, "a process of the user opens the inbox");
    inbox = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    CHECK(inbox != MAP_FAILED, "and maps it");
    /* every ring, with keys of its own */
    for (i = 0; i < addr.nrings; i++) {
        __atomic_store_n(&inbox->reg[i], 0x1234567ull + i, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&inbox->gen, 1, __ATOMIC_RELEASE);
    b.log.level = AMC_LOG_ERROR;
    amc_test_capture_stderr(progress_of, &b, err, sizeof(err));
    CHECK(amc_shm_rings_in(b.shm) == 0, "no ring adopted for it");
    CHECK(strstr(err, "rejected mailbox registration") != NULL && strstr(err, "rank 0") != NULL &&
          strstr(err, "rank 2") != NULL, "a clear error for each ring (got \"%s\")", err);
    /* the real writers: their rings are theirs by place, nobody took them */
    out = connect_to(&a, &b);
    make_msg(hdr, data, 0, 0, 40);
    CHECK(amc_shm_send(a.shm, out, hdr, TEST_HDR, data, 40, NULL) == AMC_SUCCESS, "send");
    out = connect_to(&c, &b);
    make_msg(hdr, data, 1, 0, 40);
    CHECK(amc_shm_send(c.shm, out, hdr, TEST_HDR, data, 40, NULL) == AMC_SUCCESS, "send");
    drain(&b);
    CHECK(b.got == 2 && b.bad == 0 && amc_shm_rings_in(b.shm) == 2, "both real writers' "
          "messages arrive (%lu)", b.got);
    munmap(inbox, len);
    side_fini(&a);
    side_fini(&b);
    side_fini(&c);
}

static void ring_bell_of(void *arg)
{
    side_t *s = arg;

    amc_shm_bell_ring(s->shm, amc_shm_peer_find(s->shm, 1));
}

/* What rank 1 published is not what /proc shows at those numbers (a pid
 * reused, a descriptor closed and opened again): nothing is written there,
 * and the error says why. */
static void test_not_what_it_published(void)
{
    side_t         a, b;
    amc_shm_addr_t addr;
    amc_shm_out_t *out = NULL;
    int            other[2], bell;
    char           err[1024], c;

    /* its doorbell's number names another pipe */
    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    CHECK(pipe2(other, O_NONBLOCK) == 0, "another pipe");
    amc_shm_addr(b.shm, &addr);
    addr.bell_fd = other[1];
    CHECK(amc_shm_peer_add(a.shm, 1, &addr) == AMC_SUCCESS, "the address is added");
    a.shm->log.level = AMC_LOG_WARN;
    amc_test_capture_stderr(ring_bell_of, &a, err, sizeof(err));
    CHECK(read(other[0], &c, 1) < 0, "the other pipe got nothing");
    CHECK(strstr(err, "doorbell") != NULL && strstr(err, "not the file it published") != NULL,
          "a clear warning (got \"%s\")", err);
    close(other[0]);
    close(other[1]);
    side_fini(&a);
    side_fini(&b);

    /* the right doorbell rings (a read end of our own: no SIGPIPE once its
     * owner is gone, test_shm_faults) */
    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    amc_test_shm_meet(a.shm, 0, b.shm, 1);
    ring_bell_of(&a);
    bell = amc_shm_bell_fd(b.shm);
    CHECK(read(bell, &c, 1) == 1, "the published doorbell rings");
    side_fini(&a);
    side_fini(&b);

    /* its inbox's number names another file, or the inbox lost its key */
    for (int k = 0; k < 2; k++) {
        side_init(&a, 0, 2);
        side_init(&b, 1, 2);
        amc_shm_addr(b.shm, &addr);
        if (k == 0) {
            addr.inbox_fd = addr.bell_fd;
        } else {
            addr.key ^= 1u << 4;
        }
        CHECK(amc_shm_peer_add(a.shm, 1, &addr) == AMC_SUCCESS, "the address is added");
        a.shm->log.level = AMC_LOG_ERROR;
        CHECK(amc_shm_connect(a.shm, 1, &out) != AMC_SUCCESS, "%s: no mailbox to it",
              k ? "a wrong key" : "another file");
        side_fini(&a);
        side_fini(&b);
    }
}

/* A receiver that says it read more than was written: treated as failed,
 * its queued sends dropped, nothing written outside its ring. */
static void test_bad_tail(void)
{
    side_t         a, b;
    amc_shm_out_t *out;
    pend_comp_t   *p = calloc(200, sizeof(*p));
    unsigned long  done = 0;
    uint32_t       order_bad = 0, last = 0;
    char           err[1024];
    int            k;

    side_init(&a, 0, 2);
    side_init(&b, 1, 2);
    out = connect_to(&a, &b);
    __atomic_store_n(&out->ring->tail, 1000000, __ATOMIC_RELEASE);
    for (k = 0; k < 200; k++) {
        p[k].comp.fn   = pend_done;
        p[k].done      = &done;
        p[k].seq       = (uint32_t)k + 1;
        p[k].order_bad = &order_bad;
        p[k].last      = &last;
        make_msg(p[k].hdr, p[k].data, 0, (uint32_t)k, 600);
        (void)amc_shm_send(a.shm, out, p[k].hdr, TEST_HDR, p[k].data, 600, &p[k].comp);
    }
    a.log.level = AMC_LOG_ERROR;
    amc_test_capture_stderr(progress_of, &a, err, sizeof(err));
    CHECK(amc_peer_set_test(&a.tp.dead, 1), "the receiver is treated as failed");
    CHECK(strstr(err, "read beyond what was written") != NULL, "a clear error (got \"%s\")", err);
    CHECK(amc_shm_queued(a.shm) == 0, "its queued sends are dropped");
    CHECK(out->head <= AMC_SHM_NCELLS, "nothing written past one lap of its ring");
    free(p);
    side_fini(&a);
    side_fini(&b);
}

int main(void)
{
    test_sizes_and_laps();
    test_header_sizes();
    test_poll_batch();
    test_stale_payload();
    test_full_ring();
    test_send_now();
    test_take_now();
    test_forged();
    for (int fence = 0; fence < 2; fence++) {
        for (int order = 0; order < 3; order++) {
            test_wakeup(fence, order);
        }
    }
    test_threads();
    test_foreign_registration();
    test_not_what_it_published();
    test_bad_tail();
    return amc_test_summary("test_shm");
}
