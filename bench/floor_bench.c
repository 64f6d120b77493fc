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
 *   mpirun -np 2 bench/floor_bench [reps [calls]]     (default 21 2000)
 *
 * Rank 0 prints one "RESULT coll=.. raw_us=.. amcoll_us=.. openmpi_us=.."
 * line per collective (medians over reps) and a table with the ratios.
 */
#include "config.h"

#include <amcoll.h>
#include "bench/bench_util.h"

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FB_AM_ID      3
#define FB_HDR_BYTES  20   /* amcoll's packed wire header, unrooted */
#define FB_MAX_REPS   201
#define FB_WARMUP     2000

enum { FB_BARRIER, FB_BCAST, FB_REDUCE, FB_ALLREDUCE, FB_NCOLLS };
enum { FB_RAW, FB_AMCOLL, FB_OPENMPI, FB_NMETHODS };

static const char *const fb_coll_names[FB_NCOLLS] = { "barrier", "bcast", "reduce",
                                                      "allreduce" };
static const char *const fb_method_names[FB_NMETHODS] = { "raw", "amcoll", "openmpi" };

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
        while (ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(fb.worker);
        }
        ucp_request_free(req);
    }
}

static double fb_raw_wait(void)
{
    fb.consumed++;
    while (fb.arrived < fb.consumed) {
        ucp_worker_progress(fb.worker);
    }
    return fb.value;
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
    params.features   = UCP_FEATURE_AM;
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

/* The raw collectives (two ranks; rank 0 is the root). */
static void fb_raw_barrier(void)
{
    fb_raw_send(NULL);
    (void)fb_raw_wait();
}

static void fb_raw_call(int coll, const double *in, double *out)
{
    switch (coll) {
    case FB_BARRIER:
        fb_raw_barrier();
        break;
    case FB_BCAST:
        if (fb_rank == 0) {
            *out = *in;
            fb_raw_send(in);
        } else {
            *out = fb_raw_wait();
        }
        break;
    case FB_REDUCE:
        if (fb_rank == 0) {
            *out = *in + fb_raw_wait();
        } else {
            fb_raw_send(in);
        }
        break;
    default:
        fb_raw_send(in);
        *out = *in + fb_raw_wait();
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
        fb_raw_call(coll, in, out);
    } else if (method == FB_AMCOLL) {
        fb_amcoll_call(coll, in, out);
    } else {
        fb_openmpi_call(coll, in, out);
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

/* One-way latency: half a raw ping-pong's round trip. */
static double fb_hop(long calls)
{
    double t0, zero = 0.0;
    long   i;

    fb_raw_barrier();
    t0 = bu_now();
    for (i = 0; i < calls; i++) {
        if (fb_rank == 0) {
            fb_raw_send(&zero);
            (void)fb_raw_wait();
        } else {
            (void)fb_raw_wait();
            fb_raw_send(&zero);
        }
    }
    t0 = (bu_now() - t0) / (2.0 * (double)calls);
    MPI_Barrier(MPI_COMM_WORLD);
    return t0;
}

static double fb_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), bu_cmp_double);
    return bu_quantile(v, n, 0.5);
}

int main(int argc, char **argv)
{
    static double t[FB_NCOLLS][FB_NMETHODS][FB_MAX_REPS], hop[FB_MAX_REPS];
    double        mean[FB_NCOLLS * FB_NMETHODS + 1], med[FB_NCOLLS][FB_NMETHODS], h;
    long          reps = 21, calls = 2000;
    int           size, r, c, k, m, i;

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
    fb_raw_init();
    MPI_Barrier(MPI_COMM_WORLD);
    for (c = 0; c < FB_NCOLLS; c++) { /* wire-up and warm caches, every method */
        for (m = 0; m < FB_NMETHODS; m++) {
            (void)fb_block(m, c, FB_WARMUP);
        }
    }
    for (r = 0; r < reps; r++) {
        for (c = 0; c < FB_NCOLLS; c++) {
            for (k = 0; k < FB_NMETHODS; k++) {
                m = (k + r) % FB_NMETHODS; /* rotated: no method always goes first */
                mean[c * FB_NMETHODS + m] = fb_block(m, c, calls);
            }
        }
        mean[FB_NCOLLS * FB_NMETHODS] = fb_hop(calls);
        if (bu_allmean(mean, FB_NCOLLS * FB_NMETHODS + 1) != 0) {
            bu_abort(1);
        }
        for (i = 0; i < FB_NCOLLS * FB_NMETHODS; i++) {
            t[i / FB_NMETHODS][i % FB_NMETHODS][r] = mean[i] * 1e6;
        }
        hop[r] = mean[FB_NCOLLS * FB_NMETHODS] * 1e6;
    }
    h = fb_median(hop, (int)reps);
    for (c = 0; c < FB_NCOLLS; c++) {
        for (m = 0; m < FB_NMETHODS; m++) {
            med[c][m] = fb_median(t[c][m], (int)reps);
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
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fb_raw_cleanup();
    bu_finalize();
    return 0;
}
