#include "transport/ucx.h"
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
} amc_ucx_transport_t;

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
    struct pollfd        pfd  = { .fd = self->efd, .events = POLLIN };
    ucs_status_t         status;
    int                  held = amc_ucx_enter(self);

    status = ucp_worker_arm(self->worker);
    amc_ucx_leave(self, held);
    if (status == UCS_ERR_BUSY) {
        return; /* events are pending: the caller progresses them */
    }
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_arm failed: %s", ucs_status_string(status));
        return;
    }
    (void)poll(&pfd, 1, timeout_ms);
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

/* Progresses a request of ours until it completes. */
static ucs_status_t amc_ucx_wait_request(amc_ucx_transport_t *self, ucs_status_ptr_t request)
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
    }
    ucp_request_free(request);
    return status;
}

static void amc_ucx_fence_progress(void *arg)
{
    amc_ucx_transport_t *self = arg;

    ucp_worker_progress(self->worker);
}

static void amc_ucx_close_eps(amc_ucx_transport_t *self)
{
    ucp_request_param_t param;
    ucs_status_t        status;
    int                 i;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = 0; /* flush: FORCE is invalid for endpoints without PEER error mode */
    for (i = 0; i < self->super.size; i++) {
        ucp_ep_h ep = self->eps[i];

        if (ep == NULL) {
            continue;
        }
        self->eps[i] = NULL; /* before the wait progresses: no use of a closing endpoint */
        status = amc_ucx_wait_request(self, ucp_ep_close_nbx(ep, &param));
        if (status != UCS_OK) {
            amc_warn(&self->log, "closing the endpoint to rank %d: %s", i,
                     ucs_status_string(status));
        }
    }
}

/* Teardown that never leaves a peer stuck: flush, fence, close, fence.
 * Collectives still pending stop here (amc_finalize): from the first step
 * on, arrivals are dropped and sends refused. Progress goes on, for the
 * flush and the fences; without this, a late message of a pending barrier
 * handled in the second fence sent its next round on a closed endpoint. */
static void amc_ucx_destroy(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    ucp_request_param_t  param;

    self->closing = 1;
    if (self->eps != NULL) {
        param.op_attr_mask = 0;
        (void)amc_ucx_wait_request(self, ucp_worker_flush_nbx(self->worker, &param));
        (void)amc_pmix_boot_fence(self->boot, amc_ucx_fence_progress, self);
        amc_ucx_close_eps(self);
        (void)amc_pmix_boot_fence(self->boot, amc_ucx_fence_progress, self);
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
    amc_pmix_boot_finalize(self->boot);
    free(self);
}

static const amc_transport_ops_t amc_ucx_ops = {
    .send     = amc_ucx_send,
    .fetch    = amc_ucx_fetch,
    .release  = amc_ucx_release,
    .progress = amc_ucx_progress,
    .sleep    = amc_ucx_sleep,
    .wake     = amc_ucx_wake,
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

static int amc_ucx_connect(amc_ucx_transport_t *self)
{
    ucp_address_t   *addr;
    size_t           addr_len, *lens = NULL;
    void           **addrs = NULL;
    ucp_ep_params_t  eparams;
    ucs_status_t     status;
    int              result, i;

    status = ucp_worker_get_address(self->worker, &addr, &addr_len);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_get_address failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }
    result = amc_pmix_boot_exchange(self->boot, AMC_UCX_ADDR_KEY, addr, addr_len, &addrs, &lens);
    ucp_worker_release_address(self->worker, addr);
    if (result != AMC_SUCCESS) {
        return result;
    }

    self->eps = calloc((size_t)self->super.size, sizeof(*self->eps));
    if (self->eps == NULL) {
        result = AMC_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < self->super.size; i++) {
        memset(&eparams, 0, sizeof(eparams));
        eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                             UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
        eparams.address    = addrs[i];
        /* PEER mode would move shared-memory traffic to TCP (ucx-pmix-notes §1) */
        eparams.err_mode   = UCP_ERR_HANDLING_MODE_NONE;
        status = ucp_ep_create(self->worker, &eparams, &self->eps[i]);
        if (status != UCS_OK) {
            amc_error(&self->log, "ucp_ep_create to rank %d failed: %s", i,
                      ucs_status_string(status));
            result = AMC_ERR_TRANSPORT;
            goto out;
        }
    }
    result = AMC_SUCCESS;
out:
    amc_pmix_boot_free_addrs(self->boot, addrs, lens);
    return result;
}

int amc_ucx_transport_create(amc_pmix_boot_t *boot, amc_ucx_threads_t threads,
                             const amc_log_t *log, amc_transport_t **tp_p)
{
    amc_ucx_transport_t *self;
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
    self->log        = *log;
    self->boot       = boot;
    self->efd        = -1;
    if (threads == AMC_UCX_THREADS_GUARDED) {
        pthread_mutexattr_t attr;

        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&self->guard, &attr);
        pthread_mutexattr_destroy(&attr);
        self->guarded = 1;
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
