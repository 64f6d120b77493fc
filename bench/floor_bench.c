/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX floor of small collectives at N=2: what no library built on UCX
 * active messages can beat, next to amcoll and Open MPI, in one job.
 *
 * "raw" is the least work a collective over UCP active messages can do: one
 * ucp_am_send_nbx per message (a header of amcoll's size, the same flags and FIFO
 * element size amcoll uses), a receive callback that records the 8-byte
 * value, and a wait that only calls ucp_worker_progress. No sequence
 * numbers, no matching, no error checks: it is correct only for this
 * benchmark's strict alternation of calls between two ranks. Its barrier is
 * one message each way.
 *
 * Every method is timed as OSU does (each call alone, after the method's own
 * barrier, latency = mean over the two ranks), in blocks interleaved rep by
 * rep with the order rotated, so the machine's phases hit them alike. Also
 * the one-way latency of a raw ping-pong (half the round trip), which is
 * "the raw UCX AM one-way latency measured in the same run".
 *
 * Beside it, in the same reps, the floors of two other transports:
 *  - UCP tag messages (ucp_tag_send_nbx / ucp_tag_recv_nbx, 8 B, on the same
 *    worker and endpoint; the context asks for UCP_FEATURE_TAG as well);
 *  - single-writer shared-memory mailboxes ("shm_mbox"): one ring of 64-byte
 *    slots per direction in a segment both ranks map (shm_open, mode 0600,
 *    unlinked as soon as both have it mapped); the sender copies header and
 *    payload into the next slot and publishes it with one release store of
 *    the slot's sequence word (the slot's last 8 bytes), the receiver polls
 *    that word with acquire loads and reads the payload in place; no atomic
 *    read-modify-write anywhere. Flow control is a "freed" count the
 *    receiver stores now and then, read only when the ring looks full.
 * Each is timed as a one-way latency (half a ping-pong) and as a barrier (one
 * message each way; sequence numbers, nothing to reset). The mailbox rows need both
 * ranks on one node; elsewhere they are skipped with the reason.
 *
 * Every raw wait (UCP AM, UCP tag, mailbox) waits as amcoll does: the spin
 * count amcoll resolved (amc_wait_policy_current: spin when every local rank
 * has a core, none when oversubscribed), then sched_yield on every empty pass.
 * A mailbox poll costs a fraction of a UCP progress pass, so the mailbox
 * spins as many polls as take as long as amcoll's spin (fb_calibrate).
 *
 *   mpirun -np 2 bench/floor_bench [reps [calls]]     (default 21 2000)
 *
 * Rank 0 prints one "RESULT coll=.. raw_us=.. amcoll_us=.. openmpi_us=.."
 * line per collective (medians over reps) and a table with the ratios, then
 * one "RESULT floor=.. us=.." line per transport floor and a table of those
 * against the UCP AM hop and amcoll's and Open MPI's barriers.
 */
#include "config.h"

#include <amcoll.h>
#include "am_coll/context/progress.h"
#include "bench/bench_util.h"

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FB_AM_ID      3
#define FB_HDR_BYTES  20   /* amcoll's packed wire header, unrooted */
#define FB_MAX_REPS   201
#define FB_WARMUP     2000
#define FB_TAG        0xf100f100ull /* the raw tag messages' one tag */

/* The mailbox: 64-byte slots, the sequence word last. */
#define FB_MB_SLOT_BYTES 64
#define FB_MB_SLOTS      64                /* per ring, one ring per direction */
#define FB_MB_ACK_EVERY  (FB_MB_SLOTS / 4) /* how often a receiver stores "freed" */

enum { FB_BARRIER, FB_BCAST, FB_REDUCE, FB_ALLREDUCE, FB_NCOLLS };
/* The three methods of the main table; the other two floors run barriers only. */
enum { FB_RAW, FB_AMCOLL, FB_OPENMPI, FB_NMETHODS, FB_TAGM = FB_NMETHODS, FB_SHM, FB_NALL };
/* The raw transports. */
enum { FB_T_AM, FB_T_TAG, FB_T_SHM };
/* The floors timed beside the main table, once per rep in rotated order. */
enum { FB_F_HOP_AM, FB_F_HOP_TAG, FB_F_HOP_SHM, FB_F_BAR_TAG, FB_F_BAR_SHM, FB_NFLOORS };

static const char *const fb_coll_names[FB_NCOLLS] = { "barrier", "bcast", "reduce",
                                                      "allreduce" };
static const char *const fb_method_names[FB_NALL] = { "raw", "amcoll", "openmpi", "ucp_tag",
                                                      "shm_mbox" };

/* The raw side: one worker, one endpoint to the peer. */
typedef struct fb_raw {
    ucp_context_h     context;
    ucp_worker_h      worker;
    ucp_ep_h          ep;
    volatile uint64_t arrived;   /* messages the callback saw */
    uint64_t          consumed;  /* messages a wait took */
    volatile double   value;     /* the last message's 8 bytes */
    uint32_t          hdr[FB_HDR_BYTES / 4];
} fb_raw_t;

static fb_raw_t fb;
static int      fb_rank;
static unsigned fb_spin;    /* amcoll's resolved spin count: empty passes before a yield */
static unsigned fb_spin_mb; /* the mailbox's: as long a spin, in polls (fb_calibrate) */

/* One mailbox slot: what the sender copies, then the word it publishes. */
typedef struct fb_mb_slot {
    unsigned char data[FB_MB_SLOT_BYTES - sizeof(uint64_t)];
    uint64_t      seq; /* message number (from 1); 0: never written */
} __attribute__((aligned(FB_MB_SLOT_BYTES))) fb_mb_slot_t;

_Static_assert(sizeof(fb_mb_slot_t) == FB_MB_SLOT_BYTES, "a slot is one cache line");
_Static_assert(offsetof(fb_mb_slot_t, seq) == FB_MB_SLOT_BYTES - sizeof(uint64_t),
               "the sequence word is the slot's last");
_Static_assert(FB_HDR_BYTES + sizeof(double) <= sizeof(((fb_mb_slot_t *)0)->data),
               "header and payload fit a slot");

/* One direction: slots written only by the sender, "freed" only by the
 * receiver (on a line of its own). */
typedef struct fb_mb_ring {
    fb_mb_slot_t slot[FB_MB_SLOTS];
    struct {
        uint64_t freed; /* messages the receiver is done with */
    } __attribute__((aligned(FB_MB_SLOT_BYTES))) ack;
} fb_mb_ring_t;

/* The segment: ring[i] carries rank i's messages to the other rank. */
typedef struct fb_mb_seg {
    fb_mb_ring_t ring[2];
} fb_mb_seg_t;

static struct {
    fb_mb_seg_t  *seg;        /* NULL: no mailbox; then why says so */
    fb_mb_ring_t *out, *in;
    uint64_t      sent;       /* messages this rank wrote to out */
    uint64_t      freed_seen; /* out->ack.freed as last read */
    uint64_t      received;   /* messages this rank took from in */
    const char   *why;
} mb;

/* amc_waiter_pass without a sleep or an idle hook, inline: the spin loops
 * below poll one word, and a call per poll would be most of their cost. */
static inline void fb_idle(unsigned *idle, unsigned spin)
{
    if (++*idle > spin) {
        sched_yield();
    }
}

static ucs_status_t fb_am_cb(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg;
    (void)header;
    (void)header_length;
    (void)param;
    if (length == sizeof(double)) {
        memcpy((void *)&fb.value, data, sizeof(double));
    }
    fb.arrived++;
    return UCS_OK;
}

static void fb_fail(const char *what, ucs_status_t status)
{
    fprintf(stderr, "floor_bench: rank %d: %s: %s\n", fb_rank, what, ucs_status_string(status));
    bu_abort(1);
}

static void fb_ucp_complete(void *req, const char *what)
{
    ucs_status_t status;
    unsigned     idle = 0;

    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if (ucp_worker_progress(fb.worker) != 0) {
            idle = 0;
        } else {
            fb_idle(&idle, fb_spin);
        }
    }
    ucp_request_free(req);
    if (status != UCS_OK) {
        fb_fail(what, status);
    }
}

static void fb_raw_send(const double *v)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    req;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_AM_SEND_FLAG_EAGER;
    req = ucp_am_send_nbx(fb.ep, FB_AM_ID, fb.hdr, sizeof(fb.hdr), v,
                          (v != NULL) ? sizeof(*v) : 0, &param);
    if (UCS_PTR_IS_ERR(req)) {
        fb_fail("ucp_am_send_nbx", UCS_PTR_STATUS(req));
    }
    if (req != NULL) {
        fb_ucp_complete(req, "ucp_am_send_nbx");
    }
}

static double fb_raw_wait(void)
{
    unsigned idle = 0;

    fb.consumed++;
    while (fb.arrived < fb.consumed) {
        if (ucp_worker_progress(fb.worker) != 0) {
            idle = 0;
        } else {
            fb_idle(&idle, fb_spin);
        }
    }
    return fb.value;
}

/* UCP tag messages: the payload alone (the tag is UCP's header). */
static void fb_tag_send(const double *v)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    req;

    param.op_attr_mask = 0;
    req = ucp_tag_send_nbx(fb.ep, v, (v != NULL) ? sizeof(*v) : 0, FB_TAG, &param);
    if (UCS_PTR_IS_ERR(req)) {
        fb_fail("ucp_tag_send_nbx", UCS_PTR_STATUS(req));
    }
    if (req != NULL) {
        fb_ucp_complete(req, "ucp_tag_send_nbx");
    }
}

static double fb_tag_wait(void)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    req;
    double              v = 0.0;

    param.op_attr_mask = 0;
    req = ucp_tag_recv_nbx(fb.worker, &v, sizeof(v), FB_TAG, ~(ucp_tag_t)0, &param);
    if (UCS_PTR_IS_ERR(req)) {
        fb_fail("ucp_tag_recv_nbx", UCS_PTR_STATUS(req));
    }
    if (req != NULL) {
        fb_ucp_complete(req, "ucp_tag_recv_nbx");
    }
    return v;
}

/* The mailbox. A send waits only when the ring is full of messages the
 * receiver has not freed (never, in this benchmark's alternation). */
static void fb_mb_send(const double *v)
{
    uint64_t      m = ++mb.sent;
    fb_mb_slot_t *s = &mb.out->slot[(m - 1) % FB_MB_SLOTS];
    unsigned      idle = 0;

    while (m - mb.freed_seen > FB_MB_SLOTS) {
        mb.freed_seen = __atomic_load_n(&mb.out->ack.freed, __ATOMIC_ACQUIRE);
        if (m - mb.freed_seen > FB_MB_SLOTS) {
            fb_idle(&idle, fb_spin_mb);
        }
    }
    memcpy(s->data, fb.hdr, sizeof(fb.hdr));
    if (v != NULL) {
        memcpy(s->data + sizeof(fb.hdr), v, sizeof(*v));
    }
    __atomic_store_n(&s->seq, m, __ATOMIC_RELEASE); /* the one publishing store */
}

static double fb_mb_wait(void)
{
    uint64_t            m = mb.received + 1;
    const fb_mb_slot_t *s = &mb.in->slot[(m - 1) % FB_MB_SLOTS];
    unsigned            idle = 0;
    double              v;

    while (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != m) {
        fb_idle(&idle, fb_spin_mb);
    }
    memcpy(&v, s->data + FB_HDR_BYTES, sizeof(v)); /* in place */
    mb.received = m;
    if ((m % FB_MB_ACK_EVERY) == 0) {
        __atomic_store_n(&mb.in->ack.freed, m, __ATOMIC_RELEASE);
    }
    return v;
}

static void fb_send(int tr, const double *v)
{
    if (tr == FB_T_AM) {
        fb_raw_send(v);
    } else if (tr == FB_T_TAG) {
        fb_tag_send(v);
    } else {
        fb_mb_send(v);
    }
}

static double fb_wait(int tr)
{
    if (tr == FB_T_AM) {
        return fb_raw_wait();
    }
    return (tr == FB_T_TAG) ? fb_tag_wait() : fb_mb_wait();
}

/* The segment, when both ranks share a node: rank 0 creates it (a name no
 * other job or run can hold: the PMIx namespace and rank 0's pid), rank 1
 * opens and unlinks it at once, rank 0 unlinks it again (ENOENT is fine)
 * once both hold it mapped, so nothing is left in /dev/shm however the job
 * ends after that. Both ranks agree whether it exists. */
static void fb_mb_init(void)
{
    MPI_Comm    node;
    const char *ns = getenv("PMIX_NAMESPACE");
    char        name[128] = "";
    void       *p         = MAP_FAILED;
    int         local, fd = -1, ok, all;
    size_t      i, n;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    if (local != 2) {
        mb.why = "the two ranks do not share a node";
        return;
    }
    if (fb_rank == 0) {
        n = (size_t)snprintf(name, sizeof(name), "/amcoll_floor_%ld_", (long)getpid());
        for (i = 0; (ns != NULL) && (ns[i] != '\0') && (n + 1 < sizeof(name)); i++) {
            name[n++] = ((ns[i] >= 'a' && ns[i] <= 'z') || (ns[i] >= 'A' && ns[i] <= 'Z') ||
                         (ns[i] >= '0' && ns[i] <= '9')) ? ns[i] : '_';
        }
        name[n] = '\0';
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0) {
            fprintf(stderr, "floor_bench: shm_open %s: %s\n", name, strerror(errno));
            name[0] = '\0';
        } else if (ftruncate(fd, (off_t)sizeof(fb_mb_seg_t)) != 0) {
            fprintf(stderr, "floor_bench: ftruncate %s: %s\n", name, strerror(errno));
            close(fd); /* the name stays, to be unlinked below */
            fd = -1;
        }
    }
    MPI_Bcast(name, (int)sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
    if ((fb_rank == 1) && (name[0] != '\0')) {
        fd = shm_open(name, O_RDWR, 0);
        if (fd < 0) {
            fprintf(stderr, "floor_bench: rank 1: shm_open %s: %s\n", name, strerror(errno));
        } else {
            (void)shm_unlink(name);
        }
    }
    if (fd >= 0) {
        p = mmap(NULL, sizeof(fb_mb_seg_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "floor_bench: rank %d: mmap %s: %s\n", fb_rank, name,
                    strerror(errno));
        }
        close(fd);
    }
    ok = (p != MAP_FAILED);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* both mapped */
    if ((fb_rank == 0) && (name[0] != '\0') && (shm_unlink(name) != 0) && (errno != ENOENT)) {
        fprintf(stderr, "floor_bench: shm_unlink %s: %s\n", name, strerror(errno));
    }
    if (!all) {
        if (p != MAP_FAILED) {
            munmap(p, sizeof(fb_mb_seg_t));
        }
        mb.why = "no shared-memory segment (see the messages above)";
        return;
    }
    mb.seg = p; /* zero-filled by ftruncate: every sequence word 0 */
    mb.out = &mb.seg->ring[fb_rank];
    mb.in  = &mb.seg->ring[1 - fb_rank];
}

/* amcoll spins fb_spin empty progress passes before it yields; a mailbox
 * poll costs a small part of a pass, so the mailbox spins as long in time:
 * fb_spin times (idle pass / idle poll), each the fastest of a few tries. */
static void fb_calibrate(void)
{
    const unsigned n = 2000;
    double         pass = 1e9, poll = 1e9, t0;
    unsigned       k, idle;
    int            j;

    fb_spin_mb = fb_spin;
    if ((fb_spin == 0) || (mb.seg == NULL)) {
        return;
    }
    for (j = 0; j < 5; j++) {
        t0 = bu_now();
        for (k = 0; k < n; k++) {
            (void)ucp_worker_progress(fb.worker);
        }
        t0 = bu_now() - t0;
        pass = (t0 < pass) ? t0 : pass;
        idle = 0;
        t0   = bu_now();
        for (k = 0; k < n; k++) { /* the wait's loop, on a value never written */
            if (__atomic_load_n(&mb.in->slot[mb.received % FB_MB_SLOTS].seq, __ATOMIC_ACQUIRE) ==
                UINT64_MAX) {
                break;
            }
            fb_idle(&idle, UINT32_MAX);
        }
        t0 = bu_now() - t0;
        poll = (t0 < poll) ? t0 : poll;
    }
    if ((poll > 0.0) && (pass > poll)) {
        t0         = (double)fb_spin * pass / poll;
        fb_spin_mb = (t0 < 1e9) ? (unsigned)t0 : 1000000000u;
    }
}

static void fb_mb_cleanup(void)
{
    if (mb.seg != NULL) {
        munmap(mb.seg, sizeof(fb_mb_seg_t));
        mb.seg = NULL;
    }
}

/* UCP as amcoll sets it up (active messages, 256-byte FIFO elements unless
 * the user chose), one endpoint to the peer through an MPI address exchange. */
static void fb_raw_init(void)
{
    ucp_params_t           params;
    ucp_worker_params_t    wparams;
    ucp_ep_params_t        eparams;
    ucp_am_handler_param_t hparams;
    ucp_config_t          *config;
    ucp_address_t         *addr;
    size_t                 addr_len;
    int                    len, peer_len;
    char                  *peer_addr;
    ucs_status_t           status;

    if ((status = ucp_config_read(NULL, NULL, &config)) != UCS_OK) {
        fb_fail("ucp_config_read", status);
    }
    if (getenv("UCX_MM_FIFO_ELEM_SIZE") == NULL) {
        (void)ucp_config_modify(config, "MM_FIFO_ELEM_SIZE", "256");
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_AM | UCP_FEATURE_TAG; /* tag: the tag floor */
    status            = ucp_init(&params, config, &fb.context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        fb_fail("ucp_init", status);
    }
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    if ((status = ucp_worker_create(fb.context, &wparams, &fb.worker)) != UCS_OK) {
        fb_fail("ucp_worker_create", status);
    }
    if ((status = ucp_worker_get_address(fb.worker, &addr, &addr_len)) != UCS_OK) {
        fb_fail("ucp_worker_get_address", status);
    }
    len = (int)addr_len;
    MPI_Sendrecv(&len, 1, MPI_INT, 1 - fb_rank, 0, &peer_len, 1, MPI_INT, 1 - fb_rank, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    peer_addr = malloc((size_t)peer_len);
    if (peer_addr == NULL) {
        fb_fail("malloc", UCS_ERR_NO_MEMORY);
    }
    MPI_Sendrecv(addr, len, MPI_BYTE, 1 - fb_rank, 1, peer_addr, peer_len, MPI_BYTE,
                 1 - fb_rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ucp_worker_release_address(fb.worker, addr);
    memset(&eparams, 0, sizeof(eparams));
    eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    eparams.address    = (const ucp_address_t *)peer_addr;
    if ((status = ucp_ep_create(fb.worker, &eparams, &fb.ep)) != UCS_OK) {
        fb_fail("ucp_ep_create", status);
    }
    free(peer_addr);
    memset(&hparams, 0, sizeof(hparams));
    hparams.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
    hparams.id         = FB_AM_ID;
    hparams.cb         = fb_am_cb;
    if ((status = ucp_worker_set_am_recv_handler(fb.worker, &hparams)) != UCS_OK) {
        fb_fail("ucp_worker_set_am_recv_handler", status);
    }
}

static void fb_raw_cleanup(void)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    req;

    memset(&param, 0, sizeof(param));
    req = ucp_ep_close_nbx(fb.ep, &param);
    if (UCS_PTR_IS_PTR(req)) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(fb.worker);
        }
        ucp_request_free(req);
    }
    ucp_worker_destroy(fb.worker);
    ucp_cleanup(fb.context);
}

/* The raw collectives over one transport (two ranks; rank 0 is the root). */
static void fb_raw_barrier(int tr)
{
    fb_send(tr, NULL);
    (void)fb_wait(tr);
}

static void fb_raw_call(int tr, int coll, const double *in, double *out)
{
    switch (coll) {
    case FB_BARRIER:
        fb_raw_barrier(tr);
        break;
    case FB_BCAST:
        if (fb_rank == 0) {
            *out = *in;
            fb_send(tr, in);
        } else {
            *out = fb_wait(tr);
        }
        break;
    case FB_REDUCE:
        if (fb_rank == 0) {
            *out = *in + fb_wait(tr);
        } else {
            fb_send(tr, in);
        }
        break;
    default:
        fb_send(tr, in);
        *out = *in + fb_wait(tr);
        break;
    }
}

static void fb_amcoll_call(int coll, const double *in, double *out)
{
    int rc;

    switch (coll) {
    case FB_BARRIER:
        rc = amc_barrier(AMC_COMM_WORLD);
        break;
    case FB_BCAST:
        *out = *in;
        rc   = amc_bcast(out, 1, AMC_DOUBLE, 0, AMC_COMM_WORLD);
        break;
    case FB_REDUCE:
        rc = amc_reduce(in, out, 1, AMC_DOUBLE, AMC_SUM, 0, AMC_COMM_WORLD);
        break;
    default:
        rc = amc_allreduce(in, out, 1, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
        break;
    }
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "floor_bench: rank %d: amcoll %s: %s\n", fb_rank, fb_coll_names[coll],
                amc_strerror(rc));
        bu_abort(1);
    }
}

static void fb_openmpi_call(int coll, const double *in, double *out)
{
    switch (coll) {
    case FB_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case FB_BCAST:
        *out = *in;
        MPI_Bcast(out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
    case FB_REDUCE:
        MPI_Reduce(in, out, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    default:
        MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
}

static void fb_call(int method, int coll, const double *in, double *out)
{
    if (method == FB_RAW) {
        fb_raw_call(FB_T_AM, coll, in, out);
    } else if (method == FB_AMCOLL) {
        fb_amcoll_call(coll, in, out);
    } else if (method == FB_OPENMPI) {
        fb_openmpi_call(coll, in, out);
    } else {
        fb_raw_call((method == FB_TAGM) ? FB_T_TAG : FB_T_SHM, coll, in, out);
    }
}

/* One block, OSU's way: the mean time of one call, each timed alone after
 * the method's own barrier. */
static double fb_block(int method, int coll, long calls)
{
    double in = 1.0 + fb_rank, out = 0.0, sum = 0.0, t0;
    long   i;

    for (i = 0; i < calls; i++) {
        fb_call(method, FB_BARRIER, NULL, NULL);
        t0 = bu_now();
        fb_call(method, coll, &in, &out);
        sum += bu_now() - t0;
    }
    /* results are checked where they are defined: a floor that computed
     * nothing would be no floor */
    if (((coll == FB_ALLREDUCE) || ((coll == FB_REDUCE) && (fb_rank == 0))) && (out != 3.0)) {
        fprintf(stderr, "floor_bench: rank %d: %s %s gave %g, not 3\n", fb_rank,
                fb_method_names[method], fb_coll_names[coll], out);
        bu_abort(1);
    }
    if ((coll == FB_BCAST) && (out != 1.0)) {
        fprintf(stderr, "floor_bench: rank %d: %s bcast gave %g, not 1\n", fb_rank,
                fb_method_names[method], out);
        bu_abort(1);
    }
    /* every rank done before another method runs: a rank waiting in one
     * library does not progress the other */
    MPI_Barrier(MPI_COMM_WORLD);
    return sum / (double)calls;
}

/* One-way latency: half a raw ping-pong's round trip (8 B each way). */
static double fb_hop(int tr, long calls)
{
    double t0, zero = 0.0;
    long   i;

    fb_raw_barrier(tr);
    t0 = bu_now();
    for (i = 0; i < calls; i++) {
        if (fb_rank == 0) {
            fb_send(tr, &zero);
            (void)fb_wait(tr);
        } else {
            (void)fb_wait(tr);
            fb_send(tr, &zero);
        }
    }
    t0 = (bu_now() - t0) / (2.0 * (double)calls);
    MPI_Barrier(MPI_COMM_WORLD);
    return t0;
}

/* One floor block; 0 where the floor cannot run (both ranks agree). */
static double fb_floor(int f, long calls)
{
    switch (f) {
    case FB_F_HOP_AM:
        return fb_hop(FB_T_AM, calls);
    case FB_F_HOP_TAG:
        return fb_hop(FB_T_TAG, calls);
    case FB_F_HOP_SHM:
        return (mb.seg != NULL) ? fb_hop(FB_T_SHM, calls) : 0.0;
    case FB_F_BAR_TAG:
        return fb_block(FB_TAGM, FB_BARRIER, calls);
    default:
        return (mb.seg != NULL) ? fb_block(FB_SHM, FB_BARRIER, calls) : 0.0;
    }
}

/* The floors against the UCP AM hop and the barriers of the main table;
 * barrier_ucp_am is the main table's raw barrier, repeated to sit beside the
 * other transports'. */
static void fb_print_floors(const double *fmed, const double *bar)
{
    static const struct {
        const char *name;
        int         floor; /* -1: the main table's raw barrier */
    } rows[] = { { "hop_ucp_am", FB_F_HOP_AM },     { "hop_ucp_tag", FB_F_HOP_TAG },
                 { "hop_shm_mbox", FB_F_HOP_SHM },  { "barrier_ucp_am", -1 },
                 { "barrier_ucp_tag", FB_F_BAR_TAG }, { "barrier_shm_mbox", FB_F_BAR_SHM } };
    double h = fmed[FB_F_HOP_AM], us;
    size_t i;

    printf("# floors, same job and reps (hop: half a ping-pong's round trip, 8 B; barrier: "
           "OSU's method, one message each way)\n");
    printf("# waits: %u empty UCP progress passes (amcoll's spin count), or %u mailbox polls "
           "(as long), then sched_yield\n", fb_spin, fb_spin_mb);
    printf("# %-16s %9s | %9s %13s %11s\n", "floor", "us", "x/AM hop", "amcoll bar/x",
           "OMPI bar/x");
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (((rows[i].floor == FB_F_HOP_SHM) || (rows[i].floor == FB_F_BAR_SHM)) &&
            (mb.seg == NULL)) {
            printf("# %-16s skipped: %s\n", rows[i].name, mb.why);
            continue;
        }
        us = (rows[i].floor < 0) ? bar[FB_RAW] : fmed[rows[i].floor];
        printf("RESULT floor=%s us=%.3f\n", rows[i].name, us);
        printf("  %-16s %9.3f | %9.2f %13.2f %11.2f\n", rows[i].name, us, us / h,
               bar[FB_AMCOLL] / us, bar[FB_OPENMPI] / us);
    }
}

int main(int argc, char **argv)
{
    static double t[FB_NCOLLS][FB_NMETHODS][FB_MAX_REPS], fl[FB_NFLOORS][FB_MAX_REPS];
    double        mean[FB_NCOLLS * FB_NMETHODS + FB_NFLOORS], med[FB_NCOLLS][FB_NMETHODS], h;
    double        fmed[FB_NFLOORS];
    amc_wait_policy_t policy;
    long          reps = 21, calls = 2000;
    int           size, r, c, k, m, i, f;

    bu_prog = "floor_bench";
    bu_init(&argc, &argv, &fb_rank, &size);
    if (((argc > 1) && (bu_parse_long("reps", argv[1], 1, FB_MAX_REPS, &reps) != 0)) ||
        ((argc > 2) && (bu_parse_long("calls", argv[2], 1, 100000000, &calls) != 0))) {
        bu_abort(2);
    }
    if (size != 2) {
        if (fb_rank == 0) {
            fprintf(stderr, "floor_bench: the floor is a two-rank measure; run it with -np 2\n");
        }
        bu_finalize();
        return 2;
    }
    if ((i = amc_wait_policy_current(&policy)) != AMC_SUCCESS) {
        fprintf(stderr, "floor_bench: amc_wait_policy_current: %s\n", amc_strerror(i));
        bu_abort(1);
    }
    fb_spin = policy.spin_count;
    fb_raw_init();
    fb_mb_init();
    MPI_Barrier(MPI_COMM_WORLD);
    for (c = 0; c < FB_NCOLLS; c++) { /* wire-up and warm caches, every method */
        for (m = 0; m < FB_NMETHODS; m++) {
            (void)fb_block(m, c, FB_WARMUP);
        }
    }
    for (f = 0; f < FB_NFLOORS; f++) {
        (void)fb_floor(f, FB_WARMUP);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fb_calibrate();
    MPI_Barrier(MPI_COMM_WORLD);
    for (r = 0; r < reps; r++) {
        for (c = 0; c < FB_NCOLLS; c++) {
            for (k = 0; k < FB_NMETHODS; k++) {
                m = (k + r) % FB_NMETHODS; /* rotated: no method always goes first */
                mean[c * FB_NMETHODS + m] = fb_block(m, c, calls);
            }
        }
        for (k = 0; k < FB_NFLOORS; k++) {
            f = (k + r) % FB_NFLOORS; /* rotated as well */
            mean[FB_NCOLLS * FB_NMETHODS + f] = fb_floor(f, calls);
        }
        if (bu_allmean(mean, FB_NCOLLS * FB_NMETHODS + FB_NFLOORS) != 0) {
            bu_abort(1);
        }
        for (i = 0; i < FB_NCOLLS * FB_NMETHODS; i++) {
            t[i / FB_NMETHODS][i % FB_NMETHODS][r] = mean[i] * 1e6;
        }
        for (f = 0; f < FB_NFLOORS; f++) {
            fl[f][r] = mean[FB_NCOLLS * FB_NMETHODS + f] * 1e6;
        }
    }
    for (f = 0; f < FB_NFLOORS; f++) {
        fmed[f] = bu_median(fl[f], (int)reps);
    }
    h = fmed[FB_F_HOP_AM];
    for (c = 0; c < FB_NCOLLS; c++) {
        for (m = 0; m < FB_NMETHODS; m++) {
            med[c][m] = bu_median(t[c][m], (int)reps);
        }
    }
    if (fb_rank == 0) {
        printf("# floor_bench N=2, 8 B, OSU's method, median of %ld reps x %ld calls; "
               "raw UCX AM one-way latency %.3f us\n", reps, calls, h);
        printf("# %-10s %9s %9s %9s | %11s %11s %13s %10s\n", "collective", "raw us",
               "amcoll us", "OMPI us", "amcoll/raw", "OMPI/raw", "amcoll/OMPI", "amcoll/hop");
        for (c = 0; c < FB_NCOLLS; c++) {
            printf("RESULT coll=%s raw_us=%.3f amcoll_us=%.3f openmpi_us=%.3f hop_us=%.3f\n",
                   fb_coll_names[c], med[c][FB_RAW], med[c][FB_AMCOLL], med[c][FB_OPENMPI], h);
            printf("  %-10s %9.3f %9.3f %9.3f | %11.2f %11.2f %13.2f %10.2f\n", fb_coll_names[c],
                   med[c][FB_RAW], med[c][FB_AMCOLL], med[c][FB_OPENMPI],
                   med[c][FB_AMCOLL] / med[c][FB_RAW], med[c][FB_OPENMPI] / med[c][FB_RAW],
                   med[c][FB_AMCOLL] / med[c][FB_OPENMPI], med[c][FB_AMCOLL] / h);
        }
        fb_print_floors(fmed, med[FB_BARRIER]);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fb_mb_cleanup();
    fb_raw_cleanup();
    bu_finalize();
    return 0;
}
