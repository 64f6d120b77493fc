#include "transport/ucx.h"
#include "transport/proc_watch.h"
#include "base/clock.h"
#include "base/status.h"

#include "base/spinlock.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define AMC_UCX_ADDR_KEY "amc.ucx.wa"

/* The UCX active-message id all amcoll traffic uses. */
#define AMC_UCX_AM_ID 0

/* Longest sleep while a detector needs looking at (peers checked by pid,
 * UCX keepalive in PEER mode): nothing wakes the sleeper when they fire. */
#define AMC_UCX_DEAD_POLL_MSEC 250

/* Watched peers whose pidfds a sleep adds to its poll set. */
#define AMC_UCX_SLEEP_PIDFDS 64

/* How often the teardown's waits look for peers that died meanwhile. */
#define AMC_UCX_TEARDOWN_CHECK_SEC 0.05

typedef struct amc_ucx_transport {
    amc_transport_t  super;
    amc_log_t        log;
    amc_pmix_boot_t *boot;
    ucp_context_h    context;
    ucp_worker_h     worker;
    int              efd;
    ucp_ep_h        *eps;
    int              guarded;   /* AMC_UCX_THREADS_GUARDED */
    pthread_mutex_t  guard;     /* recursive: handlers inside progress send */
    int              closing;   /* teardown began: no send, no handler (amc_ucx_destroy) */
    int              err_peer;  /* endpoints in UCP_ERR_HANDLING_MODE_PEER */
    double           fin_timeout;
    amc_proc_watch_t *watch;    /* peers on this node, by pid */
    double           next_check; /* teardown: the next look for dead peers */
} amc_ucx_transport_t;

/* What each rank publishes: who it is (for the pid watch), then its worker
 * address. */
typedef struct amc_ucx_blob {
    amc_proc_ident_t ident;
    unsigned char    addr[];
} amc_ucx_blob_t;

/* GUARDED mode: the worker lock, taken only while threads may meet. Returns
 * whether it was taken, for amc_ucx_leave. */
static inline int amc_ucx_enter(amc_ucx_transport_t *self)
{
    if (self->guarded && amc_lock_live(self->super.lock_live)) {
        pthread_mutex_lock(&self->guard);
        return 1;
    }
    return 0;
}

static inline void amc_ucx_leave(amc_ucx_transport_t *self, int held)
{
    if (held) {
        pthread_mutex_unlock(&self->guard);
    }
}

static ucs_status_t amc_ucx_am_cb(void *arg, const void *header, size_t header_length,
                                  void *data, size_t length, const ucp_am_recv_param_t *param)
{
    amc_ucx_transport_t *self = arg;

    if (self->closing) {
        /* finalize: nothing is dispatched to the collectives any more (a
         * late message of a pending one would make it send on an endpoint
         * about to close); rendezvous data is given back so that its
         * sender's flush does not wait for it */
        if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
            ucp_am_data_release(self->worker, data);
            return UCS_INPROGRESS;
        }
        return UCS_OK;
    }
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        /* data is a descriptor: the handler fetches or releases it, now or
         * when its collective gets there; the sender completes after that */
        self->super.recv_cb(self->super.recv_arg, header, header_length, NULL, length, data);
        return UCS_INPROGRESS;
    }
    self->super.recv_cb(self->super.recv_arg, header, header_length, data, length, NULL);
    return UCS_OK;
}

static void amc_ucx_send_cb(void *request, ucs_status_t status, void *user_data)
{
    amc_completion_t *comp = user_data;

    ucp_request_free(request);
    comp->fn(comp, (status == UCS_OK) ? AMC_SUCCESS : AMC_ERR_TRANSPORT);
}

static int amc_ucx_send(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                        const void *data, size_t len, unsigned mode, amc_completion_t *comp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    ucp_request_param_t  param;
    ucs_status_ptr_t     request;
    int                  held;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send      = amc_ucx_send_cb;
    param.user_data    = comp;
    /* eager data is copied or reduced where it lands by the handler; rndv
     * data is pulled by the receiver straight into place */
    param.flags        = (mode == AMC_SEND_RNDV) ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;

    if (self->closing) {
        /* a send completion in the teardown's flush advanced a pending
         * collective: it is abandoned, and the endpoint may be closed */
        return AMC_ERR_TRANSPORT;
    }
    if (amc_peer_set_test(&tp->dead, dest)) {
        /* it would wait in UCX for ever (a full FIFO, a pull that never
         * comes) and hold up the teardown; the message is lost, as it
         * would have been a moment later */
        return AMC_SUCCESS;
    }
    held    = amc_ucx_enter(self);
    request = ucp_am_send_nbx(self->eps[dest], AMC_UCX_AM_ID, hdr, hdr_len, data, len, &param);
    amc_ucx_leave(self, held);
    if (request == NULL) {
        return AMC_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(request)) {
        amc_error(&self->log, "ucp_am_send_nbx to rank %d failed: %s", dest,
                  ucs_status_string(UCS_PTR_STATUS(request)));
        return AMC_ERR_TRANSPORT;
    }
    return AMC_INPROGRESS;
}

static void amc_ucx_fetch_cb(void *request, ucs_status_t status, size_t length,
                             void *user_data)
{
    amc_completion_t *comp = user_data;

    (void)length;
    ucp_request_free(request);
    comp->fn(comp, (status == UCS_OK) ? AMC_SUCCESS : AMC_ERR_TRANSPORT);
}

static int amc_ucx_fetch(amc_transport_t *tp, void *desc, void *buf, size_t len,
                         amc_completion_t *comp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    ucp_request_param_t  param;
    ucs_status_ptr_t     request;
    int                  held;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am   = amc_ucx_fetch_cb;
    param.user_data    = comp;
    if (self->closing) {
        ucp_am_data_release(self->worker, desc); /* consumed either way */
        return AMC_ERR_TRANSPORT;
    }
    held    = amc_ucx_enter(self);
    request = ucp_am_recv_data_nbx(self->worker, desc, buf, len, &param);
    amc_ucx_leave(self, held);
    if (request == NULL) {
        return AMC_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(request)) {
        amc_error(&self->log, "ucp_am_recv_data_nbx of %zu bytes failed: %s", len,
                  ucs_status_string(UCS_PTR_STATUS(request)));
        return AMC_ERR_TRANSPORT;
    }
    return AMC_INPROGRESS;
}

static void amc_ucx_release(amc_transport_t *tp, void *desc)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    int                  held = amc_ucx_enter(self);

    ucp_am_data_release(self->worker, desc);
    amc_ucx_leave(self, held);
}

static int amc_ucx_progress(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    int                  held = amc_ucx_enter(self);
    unsigned             count;

    count = ucp_worker_progress(self->worker);
    amc_ucx_leave(self, held);
    return (int)count;
}

static void amc_ucx_sleep(amc_transport_t *tp, int timeout_ms)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    struct pollfd        pfd[1 + AMC_UCX_SLEEP_PIDFDS];
    int                  ranks[AMC_UCX_SLEEP_PIDFDS];
    ucs_status_t         status;
    int                  held = amc_ucx_enter(self), npid;

    status = ucp_worker_arm(self->worker);
    amc_ucx_leave(self, held);
    if (status == UCS_ERR_BUSY) {
        return; /* events are pending: the caller progresses them */
    }
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_arm failed: %s", ucs_status_string(status));
        return;
    }
    /* a local peer's exit wakes us too: its pidfd becomes readable */
    pfd[0].fd      = self->efd;
    pfd[0].events  = POLLIN;
    pfd[0].revents = 0;
    npid = amc_proc_watch_pollfds(self->watch, &tp->dead, pfd + 1, ranks, AMC_UCX_SLEEP_PIDFDS);
    if ((self->err_peer || amc_proc_watch_needs_polling(self->watch)) &&
        ((timeout_ms < 0) || (timeout_ms > AMC_UCX_DEAD_POLL_MSEC))) {
        timeout_ms = AMC_UCX_DEAD_POLL_MSEC;
    }
    if ((poll(pfd, (nfds_t)(1 + npid), timeout_ms) > 0) && (npid > 0)) {
        (void)amc_proc_watch_mark(pfd + 1, ranks, npid, &tp->dead);
    }
}

static int amc_ucx_check_peers(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;

    return amc_proc_watch_check(self->watch, &tp->dead);
}

static void amc_ucx_wake(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    ucs_status_t         status;

    status = ucp_worker_signal(self->worker);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_signal failed: %s", ucs_status_string(status));
    }
}

/* Teardown: looks for dead peers now and then; returns non-zero if any is known. */
static int amc_ucx_teardown_any_dead(amc_ucx_transport_t *self)
{
    double now = amc_clock_sec();

    if (now >= self->next_check) {
        self->next_check = now + AMC_UCX_TEARDOWN_CHECK_SEC;
        (void)amc_ucx_check_peers(&self->super);
    }
    return amc_peer_set_count(&self->super.dead) > 0;
}

/* Progresses a request of ours until it completes, deadline passes (0:
 * none) or peer (-1: none) is found dead; a request given up is freed (its
 * callback is then not called). */
static ucs_status_t amc_ucx_wait_request(amc_ucx_transport_t *self, ucs_status_ptr_t request,
                                         double deadline, int peer)
{
    ucs_status_t status;

    if (request == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return UCS_PTR_STATUS(request);
    }
    while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
        ucp_worker_progress(self->worker);
        if ((deadline > 0.0) && (amc_clock_sec() > deadline)) {
            status = UCS_ERR_TIMED_OUT;
            break;
        }
        if ((peer >= 0) && amc_ucx_teardown_any_dead(self) &&
            amc_peer_set_test(&self->super.dead, peer)) {
            status = UCS_ERR_CONNECTION_RESET;
            break;
        }
    }
    ucp_request_free(request);
    return status;
}

static int amc_ucx_fence_progress(void *arg)
{
    amc_ucx_transport_t *self = arg;

    ucp_worker_progress(self->worker);
    /* a peer that died will never join the fence */
    return amc_ucx_teardown_any_dead(self);
}

static void amc_ucx_close_eps(amc_ucx_transport_t *self, double deadline)
{
    ucp_request_param_t param;
    ucs_status_t        status;
    int                 i, dead;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    for (i = 0; i < self->super.size; i++) {
        ucp_ep_h ep = self->eps[i];

        if (ep == NULL) {
            continue;
        }
        dead = amc_peer_set_test(&self->super.dead, i);
        if (dead && !self->err_peer) {
            /* a flush would wait for a peer that is gone, and FORCE is
             * invalid without PEER error mode: ucp_worker_destroy discards it */
            continue;
        }
        /* flush: FORCE is invalid for endpoints without PEER error mode */
        param.flags  = dead ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        self->eps[i] = NULL; /* before the wait progresses: no use of a closing endpoint */
        status = amc_ucx_wait_request(self, ucp_ep_close_nbx(ep, &param), deadline, i);
        if ((status != UCS_OK) && !amc_peer_set_test(&self->super.dead, i)) {
            amc_warn(&self->log, "closing the endpoint to rank %d: %s", i,
                     ucs_status_string(status));
        }
    }
}

/* Flushes what this rank sent to the peers that are alive (a worker flush
 * would also wait for sends to the dead, which never complete). */
static void amc_ucx_flush_live(amc_ucx_transport_t *self, double deadline)
{
    ucp_request_param_t param;
    int                 i;

    param.op_attr_mask = 0;
    for (i = 0; i < self->super.size; i++) {
        if ((self->eps[i] != NULL) && !amc_peer_set_test(&self->super.dead, i) &&
            (amc_ucx_wait_request(self, ucp_ep_flush_nbx(self->eps[i], &param), deadline, i) ==
             UCS_ERR_TIMED_OUT)) {
            amc_warn(&self->log, "finalize: the flush to rank %d did not end within "
                     "AMC_FINALIZE_TIMEOUT; going on without it", i);
        }
    }
}

/* Teardown that never leaves a live peer stuck and never waits for a dead
 * one: flush, fence, close, fence, each bounded by AMC_FINALIZE_TIMEOUT.
 * Collectives still pending stop here (amc_finalize): from the first step
 * on, arrivals are dropped and sends refused. Progress goes on, for the
 * flush and the fences; without this, a late message of a pending barrier
 * handled in the second fence sent its next round on a closed endpoint.
 * With a peer known dead the fences are skipped (it never joins them; a
 * fence with it hung finalize, issue 14 item 9), and one that a death
 * interrupts is given up. */
static void amc_ucx_destroy(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    double               deadline = 0.0;
    int                  fenced;

    /* no PMIx event may signal the worker once it is gone */
    amc_pmix_boot_unwatch(self->boot);
    if (self->fin_timeout > 0.0) {
        deadline = amc_clock_sec() + self->fin_timeout;
    }
    self->closing = 1;
    if (self->eps != NULL) {
        /* a peer that died since the idle paths last looked: not waited for */
        self->next_check = 0.0;
        (void)amc_ucx_teardown_any_dead(self);
        amc_ucx_flush_live(self, deadline);
        fenced = !amc_ucx_teardown_any_dead(self) &&
                 (amc_pmix_boot_fence(self->boot, amc_ucx_fence_progress, self, deadline) ==
                  AMC_SUCCESS);
        amc_ucx_close_eps(self, deadline);
        if (fenced) {
            (void)amc_pmix_boot_fence(self->boot, amc_ucx_fence_progress, self, deadline);
        }
        free(self->eps);
    }
    if (self->worker != NULL) {
        ucp_worker_destroy(self->worker);
    }
    if (self->context != NULL) {
        ucp_cleanup(self->context);
    }
    if (self->guarded) {
        pthread_mutex_destroy(&self->guard);
    }
    amc_proc_watch_destroy(self->watch);
    amc_peer_set_cleanup(&tp->dead);
    amc_pmix_boot_finalize(self->boot);
    amc_node_map_free(&self->super.nodes);
    free(self);
}

static const amc_transport_ops_t amc_ucx_ops = {
    .send     = amc_ucx_send,
    .fetch    = amc_ucx_fetch,
    .release  = amc_ucx_release,
    .progress = amc_ucx_progress,
    .sleep    = amc_ucx_sleep,
    .wake     = amc_ucx_wake,
    .check_peers = amc_ucx_check_peers,
    .destroy  = amc_ucx_destroy,
};

static int amc_ucx_init_worker(amc_ucx_transport_t *self, amc_ucx_threads_t threads)
{
    ucp_config_t          *config;
    ucp_params_t           params;
    ucp_worker_params_t    wparams;
    ucp_am_handler_param_t hparams;
    ucs_status_t           status;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_config_read failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }
    if ((threads == AMC_UCX_THREADS_MULTI) && (getenv("UCX_USE_MT_MUTEX") == NULL)) {
        /* UCX's default worker lock is a pure spinlock: with more threads
         * than cores a waiter spins away the time slice of the holder it
         * waits for; a mutex lets it sleep */
        (void)ucp_config_modify(config, "USE_MT_MUTEX", "y");
    }
    memset(&params, 0, sizeof(params));
    params.field_mask        = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features          = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.estimated_num_eps = (size_t)self->super.size;
    status = ucp_init(&params, config, &self->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_init failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }

    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = (threads == AMC_UCX_THREADS_MULTI)  ? UCS_THREAD_MODE_MULTI
                          : (threads == AMC_UCX_THREADS_SINGLE) ? UCS_THREAD_MODE_SINGLE
                                                                 : UCS_THREAD_MODE_SERIALIZED;
    status = ucp_worker_create(self->context, &wparams, &self->worker);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_create failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }

    /* before the address is published: a peer's first message must find it */
    memset(&hparams, 0, sizeof(hparams));
    hparams.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                         UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hparams.id         = AMC_UCX_AM_ID;
    hparams.flags      = UCP_AM_FLAG_WHOLE_MSG;
    hparams.cb         = amc_ucx_am_cb;
    hparams.arg        = self;
    status = ucp_worker_set_am_recv_handler(self->worker, &hparams);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_set_am_recv_handler failed: %s",
                  ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }

    status = ucp_worker_get_efd(self->worker, &self->efd);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_get_efd failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }
    return AMC_SUCCESS;
}

/* Runs inside progress: records only. */
static void amc_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    amc_ucx_transport_t *self = arg;
    int                  i;

    for (i = 0; i < self->super.size; i++) {
        if ((self->eps != NULL) && (self->eps[i] == ep)) {
            if (amc_peer_set_mark(&self->super.dead, i)) {
                amc_info(&self->log, "UCX reports the endpoint to rank %d failed: %s", i,
                         ucs_status_string(status));
            }
            return;
        }
    }
}

/* On PMIx's thread: record, and wake a sleeper (ucp_worker_signal is
 * thread-safe); never anything else of UCX's. */
static void amc_ucx_pmix_dead(void *arg, int rank)
{
    amc_ucx_transport_t *self = arg;

    if (amc_peer_set_mark(&self->super.dead, rank)) {
        (void)ucp_worker_signal(self->worker);
    }
}

static int amc_ucx_connect(amc_ucx_transport_t *self)
{
    ucp_address_t    *addr;
    size_t            addr_len, *lens = NULL;
    void            **addrs = NULL;
    amc_ucx_blob_t   *blob;
    const amc_proc_ident_t **idents = NULL;
    ucp_ep_params_t   eparams;
    ucs_status_t      status;
    int               result, i;

    status = ucp_worker_get_address(self->worker, &addr, &addr_len);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_get_address failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }
    blob = malloc(sizeof(*blob) + addr_len);
    if (blob == NULL) {
        ucp_worker_release_address(self->worker, addr);
        return AMC_ERR_NO_MEMORY;
    }
    amc_proc_ident_self(&blob->ident);
    memcpy(blob->addr, addr, addr_len);
    ucp_worker_release_address(self->worker, addr);
    result = amc_pmix_boot_exchange(self->boot, AMC_UCX_ADDR_KEY, blob,
                                    sizeof(*blob) + addr_len, &addrs, &lens);
    free(blob);
    if (result != AMC_SUCCESS) {
        return result;
    }

    self->eps = calloc((size_t)self->super.size, sizeof(*self->eps));
    idents    = calloc((size_t)self->super.size, sizeof(*idents));
    if ((self->eps == NULL) || (idents == NULL)) {
        result = AMC_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < self->super.size; i++) {
        if (lens[i] <= sizeof(*blob)) {
            amc_error(&self->log, "rank %d published %zu bytes, no address", i, lens[i]);
            result = AMC_ERR_TRANSPORT;
            goto out;
        }
        blob      = addrs[i];
        idents[i] = &blob->ident;
        memset(&eparams, 0, sizeof(eparams));
        eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                             UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
        eparams.address    = (const ucp_address_t *)blob->addr;
        /* PEER mode moves shared-memory traffic to TCP (ucx-pmix-notes §1):
         * only when asked for (AMC_UCX_ERR_MODE_PEER) */
        eparams.err_mode   = UCP_ERR_HANDLING_MODE_NONE;
        if (self->err_peer) {
            eparams.field_mask    |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
            eparams.err_mode       = UCP_ERR_HANDLING_MODE_PEER;
            eparams.err_handler.cb  = amc_ucx_ep_error;
            eparams.err_handler.arg = self;
        }
        status = ucp_ep_create(self->worker, &eparams, &self->eps[i]);
        if (status != UCS_OK) {
            amc_error(&self->log, "ucp_ep_create to rank %d failed: %s", i,
                      ucs_status_string(status));
            result = AMC_ERR_TRANSPORT;
            goto out;
        }
    }
    result = amc_proc_watch_create(idents, self->super.size, self->super.rank, &self->watch);
    if (result != AMC_SUCCESS) {
        goto out;
    }
    amc_pmix_boot_watch(self->boot, amc_ucx_pmix_dead, self);
out:
    free(idents);
    amc_pmix_boot_free_addrs(self->boot, addrs, lens);
    return result;
}

int amc_ucx_transport_create(amc_pmix_boot_t *boot, const amc_ucx_params_t *params,
                             const amc_log_t *log, amc_transport_t **tp_p)
{
    amc_ucx_transport_t *self;
    amc_ucx_threads_t    threads = params->threads;
    int                  status;

    self = calloc(1, sizeof(*self));
    if (self == NULL) {
        amc_pmix_boot_finalize(boot);
        return AMC_ERR_NO_MEMORY;
    }
    self->super.ops  = &amc_ucx_ops;
    self->super.name = "ucx";
    self->super.rank = amc_pmix_boot_rank(boot);
    self->super.size = amc_pmix_boot_size(boot);
    self->super.local_size = amc_pmix_boot_local_size(boot);
    amc_pmix_boot_node_map(boot, &self->super.nodes);
    self->log        = *log;
    self->boot       = boot;
    self->efd        = -1;
    self->err_peer   = params->err_mode_peer;
    self->fin_timeout = params->finalize_timeout;
    if (threads == AMC_UCX_THREADS_GUARDED) {
        pthread_mutexattr_t attr;

        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&self->guard, &attr);
        pthread_mutexattr_destroy(&attr);
        self->guarded = 1;
    }

    status = amc_peer_set_init(&self->super.dead, self->super.size);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    status = amc_ucx_init_worker(self, threads);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    status = amc_ucx_connect(self);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    *tp_p = &self->super;
    return AMC_SUCCESS;

err:
    /* eps is freed only after a fence: peers may still connect to us */
    amc_ucx_destroy(&self->super);
    return status;
}
