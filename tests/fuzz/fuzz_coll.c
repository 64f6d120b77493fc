/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: forged active messages
 * beside legitimate collectives. Each input builds a world of 2..8 ranks
 * over the unthreaded fake transport (tests/fuzz/fuzz_world.h), a program of
 * up to 6 non-blocking collectives with eager or rendezvous data, and then
 * interprets the rest of its bytes as actions: deliver the k-th queued event
 * (messages, send completions and pulls, so the delivery order is the
 * input's), start a rank's next call (so a bcast may arrive and be forwarded
 * before the call), test a rank, free a running request, or inject a forged
 * message into a rank's receive path, either straight or through an on-node
 * mailbox (transport/shm.h): the forged bytes, under an honest control word
 * or one the input garbles, are written into a real mailbox ring, and what
 * the mailbox's reader accepts goes on to the rank; or poke what a peer of
 * the node may write in its shared memory (a pull slot's claimed, pushed,
 * state and asleep, the reader's tail, a registration) beside honest pulls. When the bytes run out every rank
 * starts what it has not, and the queue is drained in send order.
 *
 * What counts as a finding (abort(), besides ASan/UBSan/LeakSanitizer, which
 * libFuzzer reports itself):
 *   - more than AMC_FUZZ_MAX_EVENTS deliveries: something makes messages
 *     without end;
 *   - a call that finished with a status that is not an amcoll error code;
 *   - a sender's header storage reused before its send completed;
 *   - no forged message reached a handler (none, or only ones the header
 *     check rejects): a call that never finishes, a call that fails with
 *     anything but AMC_ERR_PROTOCOL (a header reject is reported on the
 *     next test of any call of that rank), a wrong result, or a rendezvous
 *     descriptor neither fetched nor released;
 *   - no forged message at all: any call that does not succeed;
 *   - a mailbox message handed on whose header or data lie outside the
 *     mailbox's memory.
 * A forged message that passes the header check is a peer that lies: it may
 * make calls fail (AMC_ERR_PROTOCOL, a forged abort's status, truncation),
 * succeed with forged data, or strand an instance whose real message it
 * displaced (no timeout runs here); all of that is allowed, but the world
 * must still be torn down cleanly (contexts destroyed, nothing leaked).
 */
#include "am_coll/api/config_read.h"
#include "tests/fuzz/fuzz_world.h"
#include "handlers/wire.h"
#include "am_coll/context/comm.h"
#include "am_coll/sched/sched.h"
#include "transport/shm.h"
#include "transport/shm_pull.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMC_FUZZ_MAX_EVENTS 20000
#define AMC_FUZZ_MAX_DATA   1024   /* bytes of a forged payload */

/* The input, read a byte at a time; zeros once it runs out. */
typedef struct amc_fuzz_in {
    const uint8_t *p;
    size_t         left;
} amc_fuzz_in_t;

static unsigned amc_fuzz_byte(amc_fuzz_in_t *in)
{
    if (in->left == 0) {
        return 0;
    }
    in->left--;
    return *in->p++;
}

static uint64_t amc_fuzz_bytes(amc_fuzz_in_t *in, int n)
{
    uint64_t v = 0;
    int      i;

    for (i = 0; i < n; i++) {
        v = (v << 8) | amc_fuzz_byte(in);
    }
    return v;
}

/* What the forged messages of one input did, for the verdict. */
typedef struct amc_fuzz_forged {
    unsigned total;
    unsigned past_header;   /* passed the header check: reached a handler */
} amc_fuzz_forged_t;

/* The data a forged rendezvous message points at: it must outlive every
 * fabric (the receiver reads it when it fetches). */
static uint8_t amc_fuzz_rndv_data[AMC_FUZZ_MAX_DATA];

/* AMC_FUZZ_TRACE=1: every action on stderr, to read a finding's story. */
static int amc_fuzz_tracing = -1;

#define AMC_FUZZ_TRACE(...) \
    do { \
        if (amc_fuzz_tracing) { \
            fprintf(stderr, "fuzz: " __VA_ARGS__); \
        } \
    } while (0)

/* ------------------------------------------------------------ set-up */

static void amc_fuzz_read_config(amc_fuzz_in_t *in, amc_config_t *cfg)
{
    static const unsigned rndv[]   = { 16384, 256, 64, 1 };
    static const unsigned tokens[] = { 64, 4, 1, 0 };
    unsigned              a = amc_fuzz_byte(in), b = amc_fuzz_byte(in);

    amc_config_defaults(cfg);
    cfg->log_level       = -1;  /* forged messages are logged by the thousand */
    cfg->progress_thread = 0;
    cfg->rndv_thresh     = rndv[a & 3];
    cfg->eager_tokens    = tokens[(a >> 2) & 3];
    if (a & 0x10) {
        cfg->bcast_pipeline_min = 64;  /* segmented along the tree */
        cfg->bcast_segment      = 16 + 4 * (b & 7);
    }
    if (a & 0x20) {
        cfg->allreduce_ring_min = 16;
    }
    if (a & 0x40) {
        cfg->allgather_bruck_max = 0;  /* ring */
    }
    if (a & 0x80) {
        snprintf(cfg->alg[AMC_COLL_BARRIER], sizeof(cfg->alg[0]), "dissemination");
    }
    if (b & 0x08) {
        cfg->linear_max_ranks = 8;
    }
    if (b & 0x10) {
        cfg->early_max = 4; /* a small early store and arrival bound */
    }
    if (b & 0x20) {
        /* as on a node with a core per rank: recursive doubling, and with
         * it the small collectives on the barrier's rounds, at 4 and 8 */
        cfg->oversub_linear_max_ranks = 0;
    }
}

static void amc_fuzz_read_program(amc_fuzz_in_t *in, amc_fuzz_world_t *w)
{
    amc_fuzz_coll_t *coll;
    unsigned         b, step, gap;
    size_t           at;
    int              c, j;

    w->ncolls = 1 + (int)(amc_fuzz_byte(in) % AMC_FUZZ_MAX_COLLS);
    for (c = 0; c < w->ncolls; c++) {
        coll        = &w->coll[c];
        b           = amc_fuzz_byte(in);
        coll->kind  = (int)(b % AMC_FUZZ_KINDS);
        coll->op    = (b & 0x80) ? AMC_MAX : AMC_SUM;
        coll->count = amc_fuzz_byte(in) % (AMC_FUZZ_MAX_COUNT + 1);
        coll->root  = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
        b           = amc_fuzz_byte(in);
        step        = b & 15;
        gap         = (b >> 4) & 3;
        for (j = 0, at = 0; j < w->n; j++) {
            coll->counts[j] = (coll->count + (size_t)j * step) % (AMC_FUZZ_MAX_COUNT + 1);
            coll->displs[j] = at;
            at += coll->counts[j] + gap * (size_t)(j & 1);
        }
    }
}

/* ------------------------------------------------------------ forging */

/* A sequence number near the live ones of rank's world communicator. */
static uint64_t amc_fuzz_seq(amc_fuzz_in_t *in, amc_fuzz_world_t *w, int rank)
{
    amc_comm_t comm = amc_test_world_comm(&w->tw, rank);
    unsigned   b    = amc_fuzz_byte(in);

    switch (b & 3) {
    case 0:
        return comm->ctrl.seq_base + (uint64_t)(int64_t)(int8_t)(b & 0xfc) / 4;
    case 1:
        return comm->ctrl.seq_next + (uint64_t)(int64_t)((int)(b >> 2) - 8);
    case 2:
        return comm->ctrl.seq_base + comm->ctrl.ahead_max - 2 + (b >> 6);
    default:
        return amc_fuzz_bytes(in, 8);
    }
}

/* A header with a valid magic and version and fields from the input. */
static void amc_fuzz_forge_header(amc_fuzz_in_t *in, amc_fuzz_world_t *w, int dst,
                                  amc_wire_hdr_t *hdr)
{
    static const uint8_t kinds[] = { AMC_WIRE_BARRIER, AMC_WIRE_COLL, AMC_WIRE_COLL,
                                     AMC_WIRE_COLL, AMC_WIRE_CREDIT, AMC_WIRE_BARRIER,
                                     AMC_WIRE_DEAD, AMC_WIRE_KINDS };
    unsigned              b = amc_fuzz_byte(in);

    memset(hdr, 0, sizeof(*hdr));
    hdr->magic   = AMC_WIRE_MAGIC;
    hdr->version = AMC_WIRE_VERSION;
    hdr->kind    = kinds[b & 7];
    hdr->coll    = (uint8_t)(amc_fuzz_byte(in) % (AMC_COLL_LAST + 2));
    b            = amc_fuzz_byte(in);
    hdr->src     = (b < 0xf0) ? b % (unsigned)w->n : (uint32_t)amc_fuzz_bytes(in, 4);
    b            = amc_fuzz_byte(in);
    hdr->cid     = (b < 0xe0) ? amc_test_world_comm(&w->tw, dst)->cid :
                   (b < 0xf0) ? (uint64_t)(b & 15) : amc_fuzz_bytes(in, 8);
    hdr->seq     = amc_fuzz_seq(in, w, dst);
    b            = amc_fuzz_byte(in);
    hdr->round   = (b < 0xf0) ? b % 24 : (uint32_t)amc_fuzz_bytes(in, 4);
    b            = amc_fuzz_byte(in);
    hdr->root    = (b < 0xf0) ? (int32_t)(b % (unsigned)(w->n + 1)) - (b >= 0x80) :
                   (int32_t)amc_fuzz_bytes(in, 4);
    b            = amc_fuzz_byte(in);
    hdr->alg     = (uint8_t)((b < 0xf0) ? b % 4 : b);
    b            = amc_fuzz_byte(in);
    hdr->flags   = (uint8_t)((b < 0xf0) ? b & 1 : b);
    hdr->status  = (uint8_t)((b < 0xf0) ? (b >> 1) % (AMC_ERR_LAST + 1) : amc_fuzz_byte(in));
    b            = amc_fuzz_byte(in);
    hdr->credits = (b < 0xf0) ? b % 8 : (uint32_t)amc_fuzz_bytes(in, 4);
}

/* A mailbox pair for the input's forged mailbox messages, made on the
 * first: the writer's and the reader's stand-in transports (ranks 0 and 1
 * of 2), and where what the reader accepts goes in the world. */
typedef struct amc_fuzz_mbox {
    amc_transport_t    tx, rx;
    amc_shm_t         *txs, *rxs;
    amc_shm_out_t     *out;
    amc_fuzz_world_t  *w;
    amc_fuzz_forged_t *forged;
    int                src, dst, made;
    int                pull_ended;
    int                poked;  /* a shared field was poked: a pull may wait for ever */
} amc_fuzz_mbox_t;

static amc_fuzz_mbox_t amc_fuzz_mbox;

static void amc_fuzz_finding(amc_fuzz_world_t *w, const char *what);
static int  amc_fuzz_passes_header(const uint8_t *bytes, size_t len);

static void amc_fuzz_pull_done(amc_completion_t *comp, int status)
{
    (void)comp;
    (void)status;
    amc_fuzz_mbox.pull_ended = 1;
}

/* A forged pull (its descriptor the input's: any address, length, slot,
 * chunk) that the reader accepted: fetched into a buffer of its length
 * where that is small, else released, as a handler would; either must end
 * at once (nobody pushes), and never write beyond the buffer. */
static void amc_fuzz_mbox_pull(amc_fuzz_mbox_t *m, const void *hdr, size_t hdr_len, size_t len,
                               void *desc)
{
    static uint8_t          buf[AMC_FUZZ_MAX_DATA + 64];
    static amc_completion_t comp = { amc_fuzz_pull_done }; /* a poked pull may end later */
    int                     status, i;

    if (!amc_shm_pull_is_desc(desc) || !amc_shm_owns(m->rxs, hdr, hdr_len)) {
        amc_fuzz_finding(m->w, "a pull handed on outside the mailbox");
        return;
    }
    if (len > AMC_FUZZ_MAX_DATA) {
        amc_shm_pull_release(m->rxs, desc);
        return;
    }
    memset(buf + len, 0xa5, 64);
    m->pull_ended = 0;
    status = amc_shm_pull_fetch(m->rxs, desc, buf, len, &comp);
    for (i = 0; (status == AMC_INPROGRESS) && !m->pull_ended && (i < 1000); i++) {
        (void)amc_shm_progress(m->rxs, 0);
    }
    if ((status == AMC_INPROGRESS) && !m->pull_ended && !m->poked) {
        amc_fuzz_finding(m->w, "a forged pull that never ends");
    }
    for (i = 0; i < 64; i++) {
        if (buf[len + i] != 0xa5) {
            amc_fuzz_finding(m->w, "a pull wrote beyond its buffer");
            break;
        }
    }
}

static void amc_fuzz_mbox_recv(void *arg, const void *hdr, size_t hdr_len, const void *data,
                               size_t len, void *desc)
{
    amc_fuzz_mbox_t *m = arg;

    if (desc != NULL) {
        amc_fuzz_mbox_pull(m, hdr, hdr_len, len, desc);
        return;
    }
    if (!amc_shm_owns(m->rxs, hdr, hdr_len) || !amc_shm_owns(m->rxs, data, len)) {
        amc_fuzz_finding(m->w, "a mailbox message handed on outside the mailbox");
    }
    if (amc_fake_inject_data(m->w->tw.fabric, m->src, m->dst, hdr, hdr_len, data, len,
                             AMC_SEND_EAGER) == AMC_SUCCESS) {
        m->forged->total++;
        m->forged->past_header += amc_fuzz_passes_header(hdr, hdr_len);
    }
}

static void amc_fuzz_mbox_free(void)
{
    amc_fuzz_mbox_t *m = &amc_fuzz_mbox;

    if (m->made) {
        amc_shm_destroy(m->txs);
        amc_shm_destroy(m->rxs);
        amc_peer_set_cleanup(&m->tx.dead);
        amc_peer_set_cleanup(&m->rx.dead);
    }
    memset(m, 0, sizeof(*m));
}

static amc_fuzz_mbox_t *amc_fuzz_mbox_get(void)
{
    amc_fuzz_mbox_t *m = &amc_fuzz_mbox;
    amc_log_t        log = { .level = AMC_LOG_ERROR - 1, .rank = 1 }; /* silent */
    amc_shm_addr_t   addr;

    if (m->made) {
        return m;
    }
    memset(m, 0, sizeof(*m));
    m->tx.rank     = 0;
    m->rx.rank     = 1;
    m->tx.size     = m->rx.size = 2;
    m->rx.recv_cb  = amc_fuzz_mbox_recv;
    m->rx.recv_arg = m;
    if ((amc_peer_set_init(&m->tx.dead, 2) != AMC_SUCCESS) ||
        (amc_peer_set_init(&m->rx.dead, 2) != AMC_SUCCESS) ||
        (amc_shm_create(&m->tx, 1, 0, "fuzz", &log, &m->txs) != AMC_SUCCESS)) {
        abort(); /* the machine, not a finding */
    }
    if (amc_shm_create(&m->rx, 1, 1, "fuzz", &log, &m->rxs) != AMC_SUCCESS) {
        abort();
    }
    amc_shm_addr(m->rxs, &addr);
    if (amc_shm_peer_add(m->txs, 1, &addr) != AMC_SUCCESS) {
        abort();
    }
    amc_shm_addr(m->txs, &addr);
    if ((amc_shm_peer_add(m->rxs, 0, &addr) != AMC_SUCCESS) ||
        (amc_shm_connect(m->txs, 1, &m->out) != AMC_SUCCESS)) {
        abort();
    }
    m->made = 1;
    return m;
}

/* A caller's look outside progress (take_now) that takes what it is offered. */
static int amc_fuzz_mbox_take(void *arg, const void *hdr, size_t hdr_len, const void *data,
                              size_t len)
{
    amc_fuzz_mbox_recv(arg, hdr, hdr_len, data, len, NULL);
    return 1;
}

/* The forged message as a mailbox's cells: its control word honest, or
 * garbled by the input (flags, lengths, position), then the header and the
 * data where a reader looks for them; the reader runs at once (every other
 * time take_now's look first). */
static void amc_fuzz_forge_mbox(amc_fuzz_in_t *in, amc_fuzz_world_t *w, amc_fuzz_forged_t *forged,
                                int src, int dst, const uint8_t *hdr, size_t hdr_len,
                                const uint8_t *data, size_t len)
{
    static uint8_t   cells[8 + 48 + 8 + AMC_FUZZ_MAX_DATA];
    amc_fuzz_mbox_t *m = amc_fuzz_mbox_get();
    uint64_t         ctl = amc_shm_ctl_word(amc_shm_forge_position(m->out), hdr_len, len);
    unsigned         b = amc_fuzz_byte(in);
    size_t           off = 8 + ((hdr_len + 7) & ~(size_t)7), n;

    if (b >= 0xc0) {
        ctl ^= amc_fuzz_bytes(in, 8) << (b & 7) * 8; /* garbled */
    } else if (b >= 0xa0) {
        /* a pull whose descriptor is the data's first 24 bytes */
        ctl = amc_shm_ctl_pull_word(amc_shm_forge_position(m->out), hdr_len);
    }
    m->w      = w;
    m->forged = forged;
    m->src    = src;
    m->dst    = dst;
    memset(cells, 0, sizeof(cells));
    memcpy(cells, &ctl, sizeof(ctl));
    memcpy(cells + 8, hdr, hdr_len);
    memcpy(cells + off, data, len);
    n = off + ((len < 24) ? 24 : len); /* a pull's descriptor: zeros past the input's */
    AMC_FUZZ_TRACE("forge %d -> %d through a mailbox: control word 0x%016llx\n", src, dst,
                   (unsigned long long)ctl);
    (void)amc_shm_forge(m->out, cells, n);
    if (b & 1) {
        /* a blocking call reads it first (am_coll/barrier/rounds_now.c) */
        (void)amc_shm_take_now(m->rxs, 0, amc_fuzz_mbox_take, m);
    }
    (void)amc_shm_progress(m->rxs, 0);
}

static void amc_fuzz_send_done(amc_completion_t *comp, int status)
{
    (void)comp;
    (void)status;
}

/* What a peer of the user may write in the shared memory, as a hostile
 * writer or reader would: a pull slot's fields (either side's), the
 * reader's tail, a registration; or an honest pull from the writer to run
 * beside them. Both sides then progress: no crash, no write outside a
 * buffer or a ring, no leak (libFuzzer's sanitizers), and the world still
 * tears down. A slot's dst is left to the reader: in one process the
 * reader's address space is the fuzzer's own, where the writer's pushes
 * would land. */
static void amc_fuzz_poke_mbox(amc_fuzz_in_t *in, amc_fuzz_world_t *w, amc_fuzz_forged_t *forged)
{
    static uint8_t          src[2 * AMC_FUZZ_MAX_DATA];
    static amc_completion_t sent = { amc_fuzz_send_done };
    amc_fuzz_mbox_t        *m    = amc_fuzz_mbox_get();
    amc_shm_pull_slot_t    *slot = &m->out->ring->pull[amc_fuzz_byte(in) % AMC_SHM_PULLS];
    unsigned                what = amc_fuzz_byte(in) % 7, i;
    uint64_t                v    = amc_fuzz_bytes(in, 8);
    uint8_t                 hdr[16];

    m->w      = w;
    m->forged = forged;
    m->src    = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
    m->dst    = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
    AMC_FUZZ_TRACE("poke mailbox field %u with 0x%016llx\n", what, (unsigned long long)v);
    memset(hdr, (int)(v & 0xff), sizeof(hdr));
    switch (what) {
    case 0:
        m->poked = 1;
        __atomic_store_n(&slot->claimed, v, __ATOMIC_RELEASE);
        break;
    case 1:
        m->poked = 1;
        __atomic_store_n(&slot->pushed, v, __ATOMIC_RELEASE);
        break;
    case 2:
        m->poked = 1;
        __atomic_store_n(&slot->state, (uint32_t)(v % 6), __ATOMIC_RELEASE);
        break;
    case 3:
        __atomic_store_n(&slot->asleep, (uint32_t)v, __ATOMIC_RELEASE);
        break;
    case 4: /* a reader that lies about what it read; the writer sends on */
        m->poked = 1;
        __atomic_store_n(&m->out->ring->tail, v, __ATOMIC_RELEASE);
        for (i = 0; i < 4; i++) {
            (void)amc_shm_send(m->txs, m->out, hdr, sizeof(hdr), src, (size_t)(v >> 8) % 600,
                               &sent);
        }
        break;
    case 5:
        __atomic_store_n(&m->rxs->inbox->reg[0], v, __ATOMIC_RELEASE);
        __atomic_add_fetch(&m->rxs->inbox->gen, 1, __ATOMIC_RELEASE);
        break;
    default:
        (void)amc_shm_pull_send(m->txs, m->out, hdr, sizeof(hdr), src,
                                1 + (size_t)(v % sizeof(src)), &sent);
        break;
    }
    for (i = 0; i < 4; i++) {
        (void)amc_shm_progress(m->txs, 0);
        (void)amc_shm_progress(m->rxs, 0);
    }
}

/* Would the header handler pass it on to a kind's handler? */
static int amc_fuzz_passes_header(const uint8_t *bytes, size_t len)
{
    amc_wire_hdr_t hdr;

    return (amc_wire_unpack(bytes, len, &hdr) == NULL) && (hdr.kind > 0) &&
           (hdr.kind < AMC_WIRE_KINDS);
}

/* One forged message into a rank's receive queue. */
static void amc_fuzz_forge(amc_fuzz_in_t *in, amc_fuzz_world_t *w, amc_fuzz_forged_t *forged)
{
    uint8_t        bytes[48], data[AMC_FUZZ_MAX_DATA];
    amc_wire_hdr_t    hdr = { 0 };
    amc_wire_packed_t wire;
    size_t            hdr_len = 0, len, i;
    unsigned       how = amc_fuzz_byte(in), b;
    int            src = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
    int            dst = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
    unsigned       mode = AMC_SEND_EAGER;

    if ((how & 7) == 0) {
        /* garbage: any length, any bytes */
        hdr_len = amc_fuzz_byte(in) % (sizeof(bytes) + 1);
        for (i = 0; i < hdr_len; i++) {
            bytes[i] = (uint8_t)amc_fuzz_byte(in);
        }
    } else {
        amc_fuzz_forge_header(in, w, dst, &hdr);
        hdr_len = amc_wire_add_credits(&wire, amc_wire_pack(&hdr, &wire), hdr.credits);
        if ((how & 0x38) == 0x08) {
            wire.w[0] ^= (uint32_t)(1 + (how >> 6)) << 8; /* an old sender */
        } else if ((how & 0x38) == 0x10) {
            wire.w[0] ^= (uint32_t)amc_fuzz_byte(in) << 24; /* flags that lie about the length */
        } else if ((how & 0x38) == 0x18) {
            hdr_len = hdr_len + (amc_fuzz_byte(in) & 7) - 3; /* cut or padded */
        }
        memset(bytes, 0, sizeof(bytes));
        memcpy(bytes, &wire, (hdr_len < sizeof(wire)) ? hdr_len : sizeof(wire));
    }
    /* a payload whose length may disagree with anything the header implies */
    b = amc_fuzz_byte(in);
    switch (b >> 6) {
    case 0:
        len = 0;
        break;
    case 1:
        len = (b & 63) * sizeof(int);
        break;
    case 2:
        len = b & 63;
        break;
    default:
        len = (b & 63) * 16;
        break;
    }
    len = (len > sizeof(data)) ? sizeof(data) : len;
    for (i = 0; i < len; i++) {
        data[i] = (uint8_t)(in->left ? amc_fuzz_byte(in) : i);
    }
    if ((how & 0xc0) == 0x80) {
        amc_fuzz_forge_mbox(in, w, forged, src, dst, bytes, hdr_len, data, len);
        return;
    }
    if (how & 0x40) {
        mode = AMC_SEND_RNDV;
        memcpy(amc_fuzz_rndv_data, data, len); /* what this input's fetches read */
    }
    AMC_FUZZ_TRACE("forge %d -> %d: hdr_len %zu kind %u coll %u src %u cid %llu seq %llu "
                   "round %u root %d alg %u flags %u status %u credits %u, %zu bytes %s\n",
                   src, dst, hdr_len, bytes[2], bytes[3], hdr.src,
                   (unsigned long long)hdr.cid, (unsigned long long)hdr.seq, hdr.round,
                   hdr.root, hdr.alg, hdr.flags, hdr.status, hdr.credits, len,
                   (mode == AMC_SEND_RNDV) ? "rndv" : "eager");
    if (amc_fake_inject_data(w->tw.fabric, src, dst, bytes, hdr_len,
                             (mode == AMC_SEND_RNDV) ? (const void *)amc_fuzz_rndv_data : data,
                             len, mode) == AMC_SUCCESS) {
        forged->total++;
        forged->past_header += amc_fuzz_passes_header(bytes, hdr_len);
    }
}

/* ------------------------------------------------------------ driving */

static void amc_fuzz_test_all(amc_fuzz_world_t *w)
{
    int rank;

    for (rank = 0; rank < w->n; rank++) {
        amc_fuzz_test_rank(w, rank);
    }
}

static void amc_fuzz_finding(amc_fuzz_world_t *w, const char *what)
{
    fprintf(stderr, "fuzz: FINDING: %s\n", what);
    amc_fuzz_world_print(w);
    abort();
}

/* Delivers the index-th queued event; counts deliveries against the bound. */
static void amc_fuzz_deliver(amc_fuzz_world_t *w, size_t index, unsigned long *events)
{
    size_t           count = amc_fake_deliverable(w->tw.fabric);
    amc_fake_event_t ev;

    if (count == 0) {
        return;
    }
    if (amc_fuzz_tracing && amc_fake_event(w->tw.fabric, index % count, &ev)) {
        AMC_FUZZ_TRACE("deliver %zu of %zu: %s at rank %d (from rank %d's event %lu)\n",
                       index % count, count, (ev.kind == AMC_FAKE_EV_MESSAGE) ? "message" :
                       (ev.kind == AMC_FAKE_EV_PULL) ? "pull" : "completion", ev.rank,
                       ev.creator, ev.serial);
    }
    amc_fake_deliver(w->tw.fabric, index % count);
    if (++*events > AMC_FUZZ_MAX_EVENTS) {
        amc_fuzz_finding(w, "deliveries without end");
    }
}

/* The input's actions, until its bytes run out. */
static void amc_fuzz_act(amc_fuzz_in_t *in, amc_fuzz_world_t *w, amc_fuzz_forged_t *forged,
                         unsigned long *events)
{
    unsigned a;
    int      k;

    while (in->left > 0) {
        a = amc_fuzz_byte(in);
        switch (a & 15) {
        case 0: case 1: case 2: case 3: case 4: case 5:
            amc_fuzz_deliver(w, amc_fuzz_byte(in), events);
            break;
        case 6: case 7: case 8:
            k = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
            AMC_FUZZ_TRACE("rank %d starts collective %d\n", k, w->next[k]);
            amc_fuzz_start_next(w, k);
            break;
        case 9: case 10: case 11:
            amc_fuzz_forge(in, w, forged);
            break;
        case 12:
            amc_fuzz_test_rank(w, (int)(amc_fuzz_byte(in) % (unsigned)w->n));
            break;
        case 13:
            if ((a >> 4) == 0) { /* rare: the instance runs on unobserved */
                k = (int)(amc_fuzz_byte(in) % (unsigned)w->n);
                AMC_FUZZ_TRACE("rank %d frees its oldest running request\n", k);
                amc_fuzz_free_one(w, k);
            } else if ((a >> 4) < 4) {
                amc_fuzz_poke_mbox(in, w, forged);
            }
            break;
        default:
            for (k = (int)(a >> 4); k >= 0; k--) {
                amc_fuzz_deliver(w, 0, events);
            }
            break;
        }
    }
}

/* Every rank makes the calls it has not, then the queue drains in send
 * order (testing between), until every call finished or nothing is left. */
static void amc_fuzz_finish(amc_fuzz_world_t *w, unsigned long *events)
{
    int rank, k;

    for (rank = 0; rank < w->n; rank++) {
        while (amc_fuzz_start_next(w, rank)) {
        }
    }
    /* testing every rank after each delivery was most of an input's cost
     * (1e7 inputs must fit in an hour): every few deliveries, and at the end */
    for (k = 0;; k++) {
        if ((k % 8) == 0) {
            amc_fuzz_test_all(w);
        }
        if (amc_fake_deliverable(w->tw.fabric) == 0) {
            amc_fuzz_test_all(w); /* progress may have queued something */
            if (amc_fake_deliverable(w->tw.fabric) == 0) {
                break;
            }
        }
        amc_fuzz_deliver(w, 0, events);
    }
}

static void amc_fuzz_verdict(amc_fuzz_world_t *w, const amc_fuzz_forged_t *forged)
{
    const amc_fuzz_call_t *call;
    int                    rank, c, status;

    if (amc_fake_header_violations(w->tw.fabric) != 0) {
        amc_fuzz_finding(w, "a header reused before its send completed");
    }
    for (rank = 0; rank < w->n; rank++) {
        for (c = 0; c < w->ncolls; c++) {
            call   = &w->call[rank][c];
            status = call->status;
            if ((call->state == AMC_FUZZ_DONE) && ((status < 0) || (status >= AMC_ERR_LAST))) {
                amc_fuzz_finding(w, "a call ended with a status that is no error code");
            }
            if (forged->past_header > 0) {
                continue;
            }
            if (call->state == AMC_FUZZ_RUNNING) {
                amc_fuzz_finding(w, "a call never finished, with no forged message handled");
            }
            if ((call->state == AMC_FUZZ_DONE) && (status != AMC_SUCCESS) &&
                ((forged->total == 0) || (status != AMC_ERR_PROTOCOL))) {
                amc_fuzz_finding(w, (forged->total == 0) ?
                                 "a call failed without any forged message" :
                                 "a call failed with more than the header rejects' error");
            }
        }
    }
    if (forged->past_header > 0) {
        return;
    }
    if (amc_fuzz_wrong_results(w) > 0) {
        amc_fuzz_finding(w, "a wrong result, with no forged message handled");
    }
    if (amc_fake_rndv_pending(w->tw.fabric) != 0) {
        amc_fuzz_finding(w, "a rendezvous descriptor neither fetched nor released");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const amc_fake_completion_t completions[] = {
        AMC_FAKE_COMPLETE_ON_DELIVERY, AMC_FAKE_COMPLETE_ON_SEND, AMC_FAKE_COMPLETE_LATER
    };
    amc_fuzz_in_t     in = { data, size };
    amc_fuzz_world_t  w;
    amc_fuzz_forged_t forged = { 0, 0 };
    amc_config_t      cfg;
    unsigned long     events = 0;
    unsigned          b;

    if (amc_fuzz_tracing < 0) {
        amc_fuzz_tracing = (getenv("AMC_FUZZ_TRACE") != NULL);
    }
    if (size < 4) {
        return -1; /* not even a world: keep it out of the corpus */
    }
    b   = amc_fuzz_byte(&in);
    w.n = 2 + (int)(b % (AMC_FUZZ_MAX_N - 1));
    amc_fuzz_read_config(&in, &cfg);
    amc_fuzz_read_program(&in, &w);
    if (amc_fuzz_world_create(&w, completions[(b >> 3) % 3], &cfg) != AMC_SUCCESS) {
        amc_fuzz_world_destroy(&w);
        return 0;
    }
    if (amc_fuzz_tracing) {
        amc_fuzz_world_print(&w);
    }
    amc_fuzz_act(&in, &w, &forged, &events);
    AMC_FUZZ_TRACE("input done: every rank starts the rest, the queue drains\n");
    amc_fuzz_finish(&w, &events);
    if (amc_fuzz_tracing) {
        amc_fuzz_world_print(&w);
    }
    amc_fuzz_verdict(&w, &forged);
    amc_fuzz_world_destroy(&w);
    amc_fuzz_mbox_free();
    return 0;
}
