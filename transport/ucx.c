/* SPDX-License-Identifier: BSD-3-Clause */
#include "transport/ucx.h"
#include "transport/proc_watch.h"
#include "transport/send_queue.h"
#include "transport/shm.h"
#include "transport/shm_pull.h"
#include "base/clock.h"
#include "base/status.h"

#include "base/spinlock.h"
#include "base/sparse.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define AMC_UCX_ADDR_KEY  "amc.ucx.wa"  /* the worker address, PMIX_GLOBAL */
#define AMC_UCX_IDENT_KEY "amc.ucx.id"  /* amc_ucx_local_t, PMIX_LOCAL: the pid watch, the mailbox */

/* What a rank tells the peers on its node. */
typedef struct amc_ucx_local {
    amc_proc_ident_t ident;
    amc_shm_addr_t   mbox;   /* magic 0: no mailboxes */
} amc_ucx_local_t;

/* The UCX active-message id all amcoll traffic uses. */
#define AMC_UCX_AM_ID 0

/* Longest sleep while a detector needs looking at (peers checked by pid,
 * UCX keepalive in PEER mode): nothing wakes the sleeper when they fire. */
#define AMC_UCX_DEAD_POLL_MSEC 250

/* Watched peers whose pidfds a sleep adds to its poll set. */
#define AMC_UCX_SLEEP_PIDFDS 64
#define AMC_UCX_FIFO_ELEM_SIZE "256"

/* With mailboxes, progress looks at UCX on one pass in AMC_UCX_POLL_EVERY
 * (a power of 2) while UCX is quiet: an empty UCX pass costs a dozen empty
 * mailbox looks, and a spinning receiver sees a mailbox message only
 * between two of them. UCX is busy for AMC_UCX_HOT_PASSES passes after
 * any of our UCX sends or fetches went on in the background or any UCX
 * progress did something; every pass looks at it then. */
#define AMC_UCX_POLL_EVERY 8u
#define AMC_UCX_HOT_PASSES 256u

/* How often the teardown's waits look for peers that died meanwhile. */
#define AMC_UCX_TEARDOWN_CHECK_SEC 0.05

struct amc_ucx_transport;

/* What this rank keeps of a peer it sent to: made on the first send to it
 * (doc/design.md, "Scale"), never before. */
typedef struct amc_ucx_peer {
    ucp_ep_h                  ep;       /* NULL until connected (atomic) */
    amc_shm_out_t            *mbox;     /* its mailbox, if it has one for us (atomic) */
    amc_shm_in_t             *mbox_in;  /* its ring into ours, once chan_get found it */
    int                       mbox_tried; /* on first contact (conn_lock) */
    int                       rank;
    unsigned                  pending;  /* sends queued for it (conn_lock) */
    int                       connecting; /* a thread is making ep (conn_lock) */
    struct amc_ucx_transport *tp;       /* the PEER-mode error callback's way back */
    struct amc_ucx_peer      *next;     /* every peer record, for teardown */
} amc_ucx_peer_t;

/* Sends made inside ucp_worker_progress (a handler or a completion that
 * advanced a collective) to a peer not yet connected wait in a queue
 * (transport/send_queue.h; `to` is the peer's record): connecting asks
 * PMIx, which a handler must not wait for, so they go from the progress
 * path right after (amc_ucx_drain). */

typedef struct amc_ucx_transport {
    amc_transport_t  super;
    amc_log_t        log;
    amc_bootstrap_t *boot;     /* how the job started (PMIx, or the caller's exchange) */
    ucp_context_h    context;
    ucp_worker_h     worker;
    int              efd;
    amc_sparse_t     peers;     /* rank -> amc_ucx_peer_t, filled on first contact */
    amc_ucx_peer_t  *peer_list; /* every record (conn_lock) */
    pthread_mutex_t  conn_lock; /* making records and endpoints, the pending queue */
    amc_send_queue_t pend;      /* sends waiting for a connection (conn_lock) */
    int              npending;  /* atomic: the sleep looks at it without the lock */
    void            *my_addr;   /* this worker's address: the endpoint to self */
    size_t           my_addr_len;
    int              guarded;   /* AMC_UCX_THREADS_GUARDED */
    pthread_mutex_t  guard;     /* recursive: handlers inside progress send */
    int              closing;   /* teardown began: no send, no handler (amc_ucx_destroy) */
    int              err_mode;  /* AMC_UCX_ERR_MODE_PEER: 0 none, 1 every endpoint, 2 off-node ones */
    int              err_peer;  /* some endpoints are in UCP_ERR_HANDLING_MODE_PEER */
    amc_peer_set_t   on_node;   /* PMIX_LOCAL_PEERS: the ranks on this node */
    int              on_node_known;
    double           fin_timeout;
    int              published; /* the address is out: the teardown fences */
    amc_proc_watch_t *watch;    /* peers on this node, by pid */
    amc_shm_t       *shm;       /* this rank's mailboxes; NULL: none (AMC_SHM=0, alone on the node) */
    unsigned         hot;       /* passes left that look at UCX each time (racy: a pace) */
    unsigned         passes;    /* progress passes (racy: a pace) */
    double           next_check; /* teardown: the next look for dead peers */
} amc_ucx_transport_t;


/* Set while this thread is inside ucp_worker_progress or an AM callback: a
 * send made then comes from a handler or a completion, and must not wait
 * for PMIx. Initial-exec: one load off the thread pointer on every progress
 * pass and message, not a __tls_get_addr call (an int fits glibc's spare
 * static TLS, also when the library is dlopen'ed). */
static __thread int amc_ucx_in_progress __attribute__((tls_model("initial-exec")));

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
    int                  was;

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
    /* a handler: its sends to peers not yet connected are queued (also when
     * it runs inside ucp_am_send_nbx, for a message to self) */
    was = amc_ucx_in_progress;
    amc_ucx_in_progress = 1;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        /* data is a descriptor: the handler fetches or releases it, now or
         * when its collective gets there; the sender completes after that */
        self->super.recv_cb(self->super.recv_arg, header, header_length, NULL, length, data);
        amc_ucx_in_progress = was;
        return UCS_INPROGRESS;
    }
    self->super.recv_cb(self->super.recv_arg, header, header_length, data, length, NULL);
    amc_ucx_in_progress = was;
    return UCS_OK;
}

static void amc_ucx_send_cb(void *request, ucs_status_t status, void *user_data)
{
    amc_completion_t *comp = user_data;

    ucp_request_free(request);
    comp->fn(comp, (status == UCS_OK) ? AMC_SUCCESS : AMC_ERR_TRANSPORT);
}

static void amc_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status);

static int amc_ucx_ep_err_peer(const amc_ucx_transport_t *self, int rank)
{
    if (self->err_mode == AMC_UCX_ERR_MODE_ALL) {
        return 1;
    }
    /* off-node ones only, and only where the node's ranks are known */
    return (self->err_mode == AMC_UCX_ERR_MODE_OFF_NODE) && self->on_node_known &&
           !amc_peer_set_test(&self->on_node, rank);
}

/* The endpoint to peer: its address from PMIx (direct modex), then
 * ucp_ep_create. Never inside a UCX callback, never with conn_lock held;
 * the caller marked peer->connecting, so no other thread makes it too. */
static int amc_ucx_connect(amc_ucx_transport_t *self, amc_ucx_peer_t *peer)
{
    ucp_ep_params_t eparams;
    ucs_status_t    status;
    ucp_ep_h        ep;
    void           *addr = NULL;
    size_t          len;
    int             result, held;

    if (peer->rank == self->super.rank) {
        addr = self->my_addr;
    } else {
        result = self->boot->ops->get(self->boot, peer->rank, AMC_UCX_ADDR_KEY, &addr, &len);
        if (result != AMC_SUCCESS) {
            return result;
        }
    }
    memset(&eparams, 0, sizeof(eparams));
    eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    eparams.address    = (const ucp_address_t *)addr;
    /* PEER mode moves shared-memory traffic to TCP (ucx-pmix-notes §1), so
     * by default only endpoints to other nodes have it: a peer on this node
     * is watched by pid, one elsewhere only UCX can see go */
    eparams.err_mode   = UCP_ERR_HANDLING_MODE_NONE;
    if (amc_ucx_ep_err_peer(self, peer->rank)) {
        eparams.field_mask     |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        eparams.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
        eparams.err_handler.cb  = amc_ucx_ep_error;
        eparams.err_handler.arg = peer;
    }
    held   = amc_ucx_enter(self);
    status = ucp_ep_create(self->worker, &eparams, &ep);
    amc_ucx_leave(self, held);
    if (addr != self->my_addr) {
        free(addr); /* needed only during the call */
    }
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_ep_create to rank %d failed: %s", peer->rank,
                  ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }
    __atomic_store_n(&peer->ep, ep, __ATOMIC_RELEASE);
    __atomic_add_fetch(&self->super.eps_created, 1, __ATOMIC_RELAXED);
    return AMC_SUCCESS;
}

/* The record of dest, made now if this is the first contact. conn_lock held. */
static amc_ucx_peer_t *amc_ucx_peer_get(amc_ucx_transport_t *self, int dest)
{
    amc_ucx_peer_t *peer = amc_sparse_get(&self->peers, dest);

    if (peer != NULL) {
        return peer;
    }
    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        return NULL;
    }
    peer->rank = dest;
    peer->tp   = self;
    if (amc_sparse_insert(&self->peers, dest, peer) != peer) {
        free(peer); /* out of memory (inserts are under conn_lock: no race) */
        return NULL;
    }
    peer->next      = self->peer_list;
    self->peer_list = peer;
    return peer;
}

static int amc_ucx_post(amc_ucx_transport_t *self, ucp_ep_h ep, int dest, const void *hdr,
                        size_t hdr_len, const void *data, size_t len, unsigned mode,
                        amc_completion_t *comp)
{
    ucp_request_param_t param;
    ucs_status_ptr_t    request;
    int                 held;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send      = amc_ucx_send_cb;
    param.user_data    = comp;
    /* eager data is copied or reduced where it lands by the handler; rndv
     * data is pulled by the receiver straight into place */
    param.flags        = (mode == AMC_SEND_RNDV) ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;
    held    = amc_ucx_enter(self);
    request = ucp_am_send_nbx(ep, AMC_UCX_AM_ID, hdr, hdr_len, data, len, &param);
    amc_ucx_leave(self, held);
    if (request == NULL) {
        return AMC_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(request)) {
        amc_error(&self->log, "ucp_am_send_nbx to rank %d failed: %s", dest,
                  ucs_status_string(UCS_PTR_STATUS(request)));
        return AMC_ERR_TRANSPORT;
    }
    self->hot = AMC_UCX_HOT_PASSES;
    return AMC_INPROGRESS;
}

/* Queues a send for amc_ucx_drain. conn_lock held. */
static int amc_ucx_queue(amc_ucx_transport_t *self, amc_ucx_peer_t *peer, const void *hdr,
                         size_t hdr_len, const void *data, size_t len, unsigned mode,
                         amc_completion_t *comp)
{
    if (amc_send_queue_push(&self->pend, peer, hdr, hdr_len, data, len, mode, comp) == NULL) {
        amc_error(&self->log, "out of memory queueing a send to rank %d", peer->rank);
        return AMC_ERR_NO_MEMORY;
    }
    peer->pending++;
    __atomic_add_fetch(&self->npending, 1, __ATOMIC_RELEASE);
    return AMC_INPROGRESS;
}

/* A peer on this node gets a mailbox on first contact: its address came
 * with its identity at start-up, so this asks nobody and may run inside a
 * handler. conn_lock held. */
static void amc_ucx_mbox_connect(amc_ucx_transport_t *self, amc_ucx_peer_t *peer)
{
    amc_shm_out_t *out;

    if ((self->shm != NULL) && amc_shm_knows(self->shm, peer->rank) &&
        (amc_shm_connect(self->shm, peer->rank, &out) == AMC_SUCCESS)) {
        __atomic_store_n(&peer->mbox, out, __ATOMIC_RELEASE);
    }
    /* after the mailbox: a reader that sees it tried sees the mailbox it has
     * for good (amc_ucx_send_now) */
    __atomic_store_n(&peer->mbox_tried, 1, __ATOMIC_RELEASE);
}

/* A message to a peer with a mailbox: eager ones that fit go in it, and
 * rendezvous data by pull; AMC_SHM_TOO_BIG: by UCX. */
static inline int amc_ucx_mbox_send(amc_ucx_transport_t *self, amc_shm_out_t *out,
                                    const void *hdr, size_t hdr_len, const void *data,
                                    size_t len, unsigned mode, amc_completion_t *comp)
{
    if (mode == AMC_SEND_RNDV) {
        return amc_shm_pull_send(self->shm, out, hdr, hdr_len, data, len, comp);
    }
    return amc_shm_fits(hdr_len, len) ? amc_shm_send(self->shm, out, hdr, hdr_len, data, len, comp)
                                      : AMC_SHM_TOO_BIG;
}

/* First contact with dest: connect now, or, inside progress, queue the send
 * for amc_ucx_drain. A send that finds sends to dest queued, or another
 * thread connecting to it, is queued behind them. conn_lock is never held
 * across a call into UCX or PMIx: a thread inside ucp_worker_progress (which
 * holds UCX's worker lock in MULTI mode, ours in GUARDED mode) may be
 * waiting for it. */
static int amc_ucx_send_slow(amc_ucx_transport_t *self, int dest, const void *hdr,
                             size_t hdr_len, const void *data, size_t len, unsigned mode,
                             amc_completion_t *comp)
{
    amc_ucx_peer_t *peer;
    amc_shm_out_t  *out;
    ucp_ep_h        ep;
    int             status;

    if ((dest < 0) || (dest >= self->super.size)) {
        amc_error(&self->log, "send to rank %d of %d", dest, self->super.size);
        return AMC_ERR_TRANSPORT;
    }
    pthread_mutex_lock(&self->conn_lock);
    peer = amc_ucx_peer_get(self, dest);
    if (peer == NULL) {
        pthread_mutex_unlock(&self->conn_lock);
        amc_error(&self->log, "out of memory for the record of rank %d", dest);
        return AMC_ERR_NO_MEMORY;
    }
    if (!peer->mbox_tried) {
        amc_ucx_mbox_connect(self, peer);
    }
    out = peer->mbox;
    if (out != NULL) {
        pthread_mutex_unlock(&self->conn_lock);
        status = amc_ucx_mbox_send(self, out, hdr, hdr_len, data, len, mode, comp);
        if (status != AMC_SHM_TOO_BIG) {
            return status;
        }
        pthread_mutex_lock(&self->conn_lock);
    }
    ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    if ((ep == NULL) && (amc_ucx_in_progress || (peer->pending > 0) || peer->connecting)) {
        status = amc_ucx_queue(self, peer, hdr, hdr_len, data, len, mode, comp);
        pthread_mutex_unlock(&self->conn_lock);
        return status;
    }
    peer->connecting = (ep == NULL);
    pthread_mutex_unlock(&self->conn_lock);
    if (ep == NULL) {
        status = amc_ucx_connect(self, peer);
        pthread_mutex_lock(&self->conn_lock);
        peer->connecting = 0;
        pthread_mutex_unlock(&self->conn_lock);
        if (status != AMC_SUCCESS) {
            return status;
        }
        ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    }
    return amc_ucx_post(self, ep, dest, hdr, hdr_len, data, len, mode, comp);
}

/* The progress path, outside any UCX callback: connects the peers that
 * sends queued inside progress are for, and makes those sends, in order.
 * Returns how many it made. */
static int amc_ucx_drain(amc_ucx_transport_t *self)
{
    amc_send_pend_t *pend;
    amc_ucx_peer_t  *peer;
    ucp_ep_h         ep;
    int              n = 0, status, connect;

    while (__atomic_load_n(&self->npending, __ATOMIC_ACQUIRE) > 0) {
        pthread_mutex_lock(&self->conn_lock);
        pend = self->pend.head;
        if ((pend == NULL) || ((amc_ucx_peer_t *)pend->to)->connecting) {
            /* empty, or another thread is connecting that peer: later */
            pthread_mutex_unlock(&self->conn_lock);
            break;
        }
        peer    = pend->to;
        connect = (__atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE) == NULL);
        peer->connecting = connect;
        (void)amc_send_queue_pop(&self->pend);
        peer->pending--;
        __atomic_sub_fetch(&self->npending, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&self->conn_lock);
        status = AMC_SUCCESS;
        if (connect) {
            status = amc_ucx_connect(self, peer);
            pthread_mutex_lock(&self->conn_lock);
            peer->connecting = 0;
            pthread_mutex_unlock(&self->conn_lock);
        }
        ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
        if (self->closing) {
            status = AMC_ERR_TRANSPORT; /* as a send now would be refused */
        } else if (amc_peer_set_test(&self->super.dead, peer->rank)) {
            status = AMC_SUCCESS;       /* dropped, as amc_ucx_send drops it */
        } else if (status == AMC_SUCCESS) {
            status = amc_ucx_post(self, ep, peer->rank, pend->hdr, pend->hdr_len, pend->data,
                                  pend->len, pend->mode, pend->comp);
        }
        /* the caller was told AMC_INPROGRESS: it hears the end from here
         * now, or from UCX's callback later */
        if (status != AMC_INPROGRESS) {
            pend->comp->fn(pend->comp, status);
        }
        free(pend);
        n++;
    }
    return n;
}

static int amc_ucx_send(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                        const void *data, size_t len, unsigned mode, amc_completion_t *comp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    amc_ucx_peer_t      *peer;
    amc_shm_out_t       *out;
    ucp_ep_h             ep;

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
    peer = amc_sparse_get(&self->peers, dest);
    if (peer == NULL) {
        return amc_ucx_send_slow(self, dest, hdr, hdr_len, data, len, mode, comp);
    }
    out = __atomic_load_n(&peer->mbox, __ATOMIC_ACQUIRE);
    if (out != NULL) {
        int status = amc_ucx_mbox_send(self, out, hdr, hdr_len, data, len, mode, comp);

        if (status != AMC_SHM_TOO_BIG) {
            return status;
        }
    }
    ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    if (ep == NULL) {
        return amc_ucx_send_slow(self, dest, hdr, hdr_len, data, len, mode, comp);
    }
    return amc_ucx_post(self, ep, dest, hdr, hdr_len, data, len, mode, comp);
}

static int amc_ucx_send_now(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                            const void *data, size_t len)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    amc_ucx_peer_t      *peer;
    amc_shm_out_t       *out;

    /* a peer not met yet, or dead: send's way */
    if (self->closing || amc_peer_set_test(&tp->dead, dest) ||
        ((peer = amc_sparse_get(&self->peers, dest)) == NULL)) {
        return (self->shm != NULL) ? AMC_SEND_NOT_NOW : AMC_SEND_NEVER; /* AMC_SHM=0 */
    }
    out = __atomic_load_n(&peer->mbox, __ATOMIC_ACQUIRE);
    if (out != NULL) {
        return amc_shm_send_now(self->shm, out, hdr, hdr_len, data, len);
    }
    /* its first message connects it; once tried, the mailbox it has is
     * for good: another node's peer, or an inbox that would not open */
    return __atomic_load_n(&peer->mbox_tried, __ATOMIC_ACQUIRE) &&
                   (__atomic_load_n(&peer->mbox, __ATOMIC_ACQUIRE) == NULL)
               ? AMC_SEND_NEVER : AMC_SEND_NOT_NOW;
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

    if (amc_shm_pull_is_desc(desc)) {
        if (self->closing) {
            amc_shm_pull_release(self->shm, desc);
            return AMC_ERR_TRANSPORT;
        }
        return amc_shm_pull_fetch(self->shm, desc, buf, len, comp);
    }
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
    self->hot = AMC_UCX_HOT_PASSES;
    return AMC_INPROGRESS;
}

static void amc_ucx_release(amc_transport_t *tp, void *desc)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    int                  held;

    if (amc_shm_pull_is_desc(desc)) {
        amc_shm_pull_release(self->shm, desc);
        return;
    }
    held = amc_ucx_enter(self);
    ucp_am_data_release(self->worker, desc);
    amc_ucx_leave(self, held);
}

/* Out of line: the idle pass saves no registers. */
static __attribute__((noinline)) int amc_ucx_progress_all(amc_ucx_transport_t *self);

static int amc_ucx_progress(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;

    /* a spinning wait's usual pass: UCX's turn has not come and the
     * mailboxes are empty, seen by a look that takes no lock (so only while
     * threads cannot meet: the pass counters are the lock holder's then) */
    if ((self->shm != NULL) && !amc_lock_live(tp->lock_live) && (self->hot == 0) &&
        (((self->passes + 1) & (AMC_UCX_POLL_EVERY - 1)) != 0) &&
        (__atomic_load_n(&self->npending, __ATOMIC_RELAXED) == 0) && amc_shm_idle(self->shm)) {
        self->passes++;
        return 0;
    }
    return amc_ucx_progress_all(self);
}

static int amc_ucx_progress_all(amc_ucx_transport_t *self)
{
    int      held = amc_ucx_enter(self);
    unsigned count;

    amc_ucx_in_progress = 1;
    if (self->shm == NULL) {
        count = ucp_worker_progress(self->worker);
    } else {
        /* UCX's turn finds the mailboxes empty more often than not */
        count = amc_shm_idle(self->shm) ? 0 : (unsigned)amc_shm_progress(self->shm, self->closing);
        if ((self->hot > 0) || ((++self->passes & (AMC_UCX_POLL_EVERY - 1)) == 0)) {
            unsigned ucx = ucp_worker_progress(self->worker);

            count    += ucx;
            self->hot = (ucx > 0) ? AMC_UCX_HOT_PASSES : (self->hot - (self->hot > 0));
        }
    }
    amc_ucx_in_progress = 0;
    if (__atomic_load_n(&self->npending, __ATOMIC_ACQUIRE) > 0) {
        count += (unsigned)amc_ucx_drain(self);
    }
    amc_ucx_leave(self, held);
    return (int)count;
}

static void amc_ucx_sleep(amc_transport_t *tp, int timeout_ms)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    struct pollfd        pfd[2 + AMC_UCX_SLEEP_PIDFDS];
    int                  ranks[AMC_UCX_SLEEP_PIDFDS];
    ucs_status_t         status;
    int                  held, npid, nfd = 1;

    if (__atomic_load_n(&self->npending, __ATOMIC_ACQUIRE) > 0) {
        return; /* sends to make: the caller's next progress makes them */
    }
    /* announced before the last look at the mailboxes: a message written
     * after it rings the bell (doc/design.md, "Mailboxes") */
    if ((self->shm != NULL) && amc_shm_sleep_begin(self->shm)) {
        goto out; /* a mailbox message: the caller progresses it */
    }
    held   = amc_ucx_enter(self);
    status = ucp_worker_arm(self->worker);
    amc_ucx_leave(self, held);
    if (status == UCS_ERR_BUSY) {
        goto out; /* events are pending: the caller progresses them */
    }
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_arm failed: %s", ucs_status_string(status));
        goto out;
    }
    /* a local peer's exit wakes us too: its pidfd becomes readable */
    pfd[0].fd      = self->efd;
    pfd[0].events  = POLLIN;
    pfd[0].revents = 0;
    if (self->shm != NULL) {
        pfd[1].fd      = amc_shm_bell_fd(self->shm);
        pfd[1].events  = POLLIN;
        pfd[1].revents = 0;
        nfd            = 2;
    }
    npid = amc_proc_watch_pollfds(self->watch, &tp->dead, pfd + nfd, ranks, AMC_UCX_SLEEP_PIDFDS);
    if ((self->shm != NULL) && (amc_shm_sleep_max_ms(self->shm) >= 0) &&
        ((timeout_ms < 0) || (timeout_ms > amc_shm_sleep_max_ms(self->shm)))) {
        timeout_ms = amc_shm_sleep_max_ms(self->shm);
    }
    if ((self->err_peer || amc_proc_watch_needs_polling(self->watch)) &&
        ((timeout_ms < 0) || (timeout_ms > AMC_UCX_DEAD_POLL_MSEC))) {
        timeout_ms = AMC_UCX_DEAD_POLL_MSEC;
    }
    if ((poll(pfd, (nfds_t)(nfd + npid), timeout_ms) > 0) && (npid > 0)) {
        (void)amc_proc_watch_mark(pfd + nfd, ranks, npid, &tp->dead);
    }
out:
    if (self->shm != NULL) {
        amc_shm_sleep_end(self->shm);
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

    if (self->shm != NULL) {
        /* drops what arrives, and frees the room our peers' last sends wait for */
        (void)amc_shm_progress(self->shm, 1);
    }
    ucp_worker_progress(self->worker);
    /* a peer that died will never join the fence */
    return amc_ucx_teardown_any_dead(self);
}

static void amc_ucx_close_eps(amc_ucx_transport_t *self, double deadline)
{
    ucp_request_param_t param;
    ucs_status_t        status;
    amc_ucx_peer_t     *peer;
    int                 dead;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    for (peer = self->peer_list; peer != NULL; peer = peer->next) {
        ucp_ep_h ep = peer->ep;

        if (ep == NULL) {
            continue;
        }
        dead = amc_peer_set_test(&self->super.dead, peer->rank);
        if (dead && !amc_ucx_ep_err_peer(self, peer->rank)) {
            /* a flush would wait for a peer that is gone, and FORCE is
             * invalid without PEER error mode: ucp_worker_destroy discards it */
            continue;
        }
        /* flush: FORCE is invalid for endpoints without PEER error mode */
        param.flags = dead ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        __atomic_store_n(&peer->ep, NULL, __ATOMIC_RELEASE); /* before the wait progresses:
                                                                no use of a closing endpoint */
        status = amc_ucx_wait_request(self, ucp_ep_close_nbx(ep, &param), deadline, peer->rank);
        if ((status != UCS_OK) && !amc_peer_set_test(&self->super.dead, peer->rank)) {
            amc_warn(&self->log, "closing the endpoint to rank %d: %s", peer->rank,
                     ucs_status_string(status));
        }
    }
}

/* Flushes what this rank sent to the peers that are alive (a worker flush
 * would also wait for sends to the dead, which never complete). Only the
 * peers this rank connected to: nothing was sent to the others. */
static void amc_ucx_flush_live(amc_ucx_transport_t *self, double deadline)
{
    ucp_request_param_t param;
    amc_ucx_peer_t     *peer;

    param.op_attr_mask = 0;
    for (peer = self->peer_list; peer != NULL; peer = peer->next) {
        if ((peer->ep != NULL) && !amc_peer_set_test(&self->super.dead, peer->rank) &&
            (amc_ucx_wait_request(self, ucp_ep_flush_nbx(peer->ep, &param), deadline,
                                  peer->rank) == UCS_ERR_TIMED_OUT)) {
            amc_warn(&self->log, "finalize: the flush to rank %d did not end within "
                     "AMC_FINALIZE_TIMEOUT; going on without it", peer->rank);
        }
    }
}

/* Mailbox messages still queued for room: a peer alive still waits for
 * them (its last collective), and it frees the room while it waits. */
static void amc_ucx_flush_mbox(amc_ucx_transport_t *self, double deadline)
{
    while ((self->shm != NULL) && (amc_shm_queued(self->shm) > 0)) {
        (void)amc_ucx_fence_progress(self);
        if ((deadline > 0.0) && (amc_clock_sec() > deadline)) {
            amc_warn(&self->log, "finalize: %u mailbox messages found no room within "
                     "AMC_FINALIZE_TIMEOUT; going on without them", amc_shm_queued(self->shm));
            break;
        }
        sched_yield();
    }
}

/* Sends still queued for a connection at teardown: abandoned with their
 * collectives (nothing is sent once closing), and the records freed. */
static void amc_ucx_free_peers(amc_ucx_transport_t *self)
{
    amc_ucx_peer_t *peer;

    amc_send_queue_drop(&self->pend);
    while ((peer = self->peer_list) != NULL) {
        self->peer_list = peer->next;
        free(peer);
    }
    amc_sparse_cleanup(&self->peers);
    free(self->my_addr);
    self->my_addr = NULL;
}

/* Teardown that never leaves a live peer stuck and never waits for a dead
 * one: flush, fence, close, fence, each bounded by AMC_FINALIZE_TIMEOUT.
 * Collectives still pending stop here (amc_finalize): from the first step
 * on, arrivals are dropped and sends refused. Progress goes on, for the
 * flush and the fences; without this, a late message of a pending barrier
 * handled in the second fence sent its next round on a closed endpoint.
 * With a peer known dead the fences are skipped (it never joins them; a
 * fence with it hung finalize), and one that a death
 * interrupts is given up. */
static void amc_ucx_destroy(amc_transport_t *tp)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    double               deadline = 0.0;
    int                  fenced;

    /* no PMIx event may signal the worker once it is gone */
    self->boot->ops->unwatch(self->boot);
    if (self->fin_timeout > 0.0) {
        deadline = amc_clock_sec() + self->fin_timeout;
    }
    self->closing = 1;
    if (self->published) {
        /* a peer that died since the idle paths last looked: not waited for */
        self->next_check = 0.0;
        (void)amc_ucx_teardown_any_dead(self);
        amc_ucx_flush_live(self, deadline);
        amc_ucx_flush_mbox(self, deadline);
        fenced = !amc_ucx_teardown_any_dead(self) &&
                 (self->boot->ops->fence(self->boot, amc_ucx_fence_progress, self, deadline) ==
                  AMC_SUCCESS);
        amc_ucx_close_eps(self, deadline);
        if (fenced) {
            (void)self->boot->ops->fence(self->boot, amc_ucx_fence_progress, self, deadline);
        }
    }
    if (self->worker != NULL) {
        ucp_worker_destroy(self->worker);
    }
    if (self->context != NULL) {
        ucp_cleanup(self->context);
    }
    amc_ucx_free_peers(self);
    amc_shm_destroy(self->shm);
    pthread_mutex_destroy(&self->conn_lock);
    if (self->guarded) {
        pthread_mutex_destroy(&self->guard);
    }
    amc_proc_watch_destroy(self->watch);
    amc_peer_set_cleanup(&tp->dead);
    amc_peer_set_cleanup(&self->on_node);
    self->boot->ops->finalize(self->boot);
    amc_node_map_free(&self->super.nodes);
    free(self);
}

/* Only the mailboxes: what comes by UCX comes through progress. */
static int amc_ucx_take_now(amc_transport_t *tp, int src, amc_take_fn_t take, void *arg)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    int                  rc;

    if (self->shm == NULL) {
        return AMC_TAKE_NEVER; /* AMC_SHM=0, or alone on the node */
    }
    if (self->closing) {
        return AMC_TAKE_OTHER;
    }
    rc = amc_shm_take_now(self->shm, src, take, arg);
    if (rc != AMC_SHM_NO_RING) {
        return rc;
    }
    /* not yet, or never: a peer of another node (or one whose mailbox this
     * rank could not open) has no address here, and its messages come by UCX */
    return amc_shm_knows(self->shm, src) ? AMC_TAKE_EMPTY : AMC_TAKE_NEVER;
}

/* A peer's channel is its record (made here if this rank never sent to it:
 * a round may only take from a peer), for a peer of this node with
 * mailboxes. A direction whose ring is not there yet goes the way send_now
 * and take_now go until it is: a first message to the peer connects its
 * mailbox, and the peer's first message makes its ring here. */
static void *amc_ucx_chan_get(amc_transport_t *tp, int peer_rank)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    amc_ucx_peer_t      *peer;

    if ((self->shm == NULL) || self->closing || amc_lock_live(tp->lock_live) ||
        (peer_rank < 0) || (peer_rank >= tp->size) || !amc_shm_knows(self->shm, peer_rank)) {
        return NULL;
    }
    peer = amc_sparse_get(&self->peers, peer_rank);
    if (peer == NULL) {
        pthread_mutex_lock(&self->conn_lock);
        peer = amc_ucx_peer_get(self, peer_rank);
        pthread_mutex_unlock(&self->conn_lock);
        if (peer == NULL) {
            return NULL; /* out of memory: each send and take looks the peer up */
        }
    }
    if (peer->mbox_in == NULL) {
        peer->mbox_in = amc_shm_in_find(self->shm, peer_rank); /* threads cannot meet */
    }
    return peer;
}

static int amc_ucx_chan_send(amc_transport_t *tp, void *chan, const void *hdr, size_t hdr_len,
                             const void *data, size_t len)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    amc_ucx_peer_t      *peer = chan;
    amc_shm_out_t       *out  = __atomic_load_n(&peer->mbox, __ATOMIC_ACQUIRE);

    if (out == NULL) {
        return amc_ucx_send_now(tp, peer->rank, hdr, hdr_len, data, len); /* not yet, or never */
    }
    return self->closing ? AMC_SEND_NOT_NOW
                         : amc_shm_send_now(self->shm, out, hdr, hdr_len, data, len);
}

static int amc_ucx_chan_take(amc_transport_t *tp, void *chan, amc_take_fn_t take, void *arg)
{
    amc_ucx_transport_t *self = (amc_ucx_transport_t *)tp;
    amc_ucx_peer_t      *peer = chan;

    if (self->closing) {
        return AMC_TAKE_OTHER;
    }
    if (peer->mbox_in == NULL) {
        peer->mbox_in = amc_shm_in_find(self->shm, peer->rank);
        if (peer->mbox_in == NULL) {
            return AMC_TAKE_EMPTY; /* nothing from it yet (chan_get: a peer of this node) */
        }
    }
    return amc_shm_take_in(self->shm, peer->mbox_in, take, arg);
}

static const amc_transport_ops_t amc_ucx_ops = {
    .send     = amc_ucx_send,
    .send_now = amc_ucx_send_now,
    .take_now = amc_ucx_take_now,
    .chan_get  = amc_ucx_chan_get,
    .chan_send = amc_ucx_chan_send,
    .chan_take = amc_ucx_chan_take,
    .fetch    = amc_ucx_fetch,
    .release  = amc_ucx_release,
    .progress = amc_ucx_progress,
    .sleep    = amc_ucx_sleep,
    .wake     = amc_ucx_wake,
    .check_peers = amc_ucx_check_peers,
    .destroy  = amc_ucx_destroy,
};


/* Shared memory's short path (a message written whole into the receiver's
 * FIFO element) ends at the element size less UCX's headers: 100 bytes of
 * header and payload with the default 128-byte elements, so a collective
 * message left it above 52 B of payload and went by bcopy, which costs more
 * per message and maps the peer's descriptor segments on first use
 * (milliseconds while ranks share cores). 256-byte elements keep messages up
 * to about 180 B of payload on the short path, for 8 KiB more per FIFO.
 * The user's UCX_ variables win. */
static void amc_ucx_config_fifo(amc_ucx_transport_t *self, ucp_config_t *config)
{
    ucs_status_t status;

    if ((getenv("UCX_MM_FIFO_ELEM_SIZE") != NULL) || (getenv("UCX_POSIX_FIFO_ELEM_SIZE") != NULL) ||
        (getenv("UCX_SYSV_FIFO_ELEM_SIZE") != NULL)) {
        return;
    }
    /* a key UCP does not know is kept and applied to every transport that
     * has it: MM_ is the table posix and sysv share (checked with a probe on
     * uct_mm_ep_am_bcopy: no bcopy left for 64 B collectives) */
    status = ucp_config_modify(config, "MM_FIFO_ELEM_SIZE", AMC_UCX_FIFO_ELEM_SIZE);
    if (status != UCS_OK) {
        amc_debug(&self->log, "UCX keeps its FIFO_ELEM_SIZE: %s", ucs_status_string(status));
    }
}

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
    amc_ucx_config_fifo(self, config);
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

/* Runs inside progress: records only. arg is the peer's record. */
static void amc_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    amc_ucx_peer_t      *peer = arg;
    amc_ucx_transport_t *self = peer->tp;

    (void)ep;
    if (amc_peer_set_mark(&self->super.dead, peer->rank)) {
        amc_info(&self->log, "UCX reports the endpoint to rank %d failed: %s", peer->rank,
                 ucs_status_string(status));
    }
}

/* On the launcher's thread (PMIx's): record, and wake a sleeper (ucp_worker_signal is
 * thread-safe); never anything else of UCX's. */
static void amc_ucx_boot_dead(void *arg, int rank)
{
    amc_ucx_transport_t *self = arg;

    if (amc_peer_set_mark(&self->super.dead, rank)) {
        (void)ucp_worker_signal(self->worker);
    }
}

/* Gives the mailboxes a local peer's address for its first contact, if it
 * has mailboxes and this rank can open them (same kernel and pid
 * namespace). */
static void amc_ucx_keep_mbox_addr(amc_ucx_transport_t *self, int rank,
                                   const amc_ucx_local_t *me, const amc_ucx_local_t *peer)
{
    if ((self->shm == NULL) || (peer->mbox.magic != AMC_SHM_MAGIC) ||
        !amc_proc_ident_same_kernel(&me->ident, &peer->ident)) {
        return;
    }
    (void)amc_shm_peer_add(self->shm, rank, &peer->mbox); /* else UCX carries its messages */
}

/* The peers on this node, by pid: their identities (PMIX_LOCAL, one per
 * rank on the node, whatever the size of the job), and their mailboxes.
 * Without them the peers are left to the other detectors, and to UCX. */
static int amc_ucx_watch_local(amc_ucx_transport_t *self, const amc_ucx_local_t *me)
{
    amc_proc_ident_t *ids = NULL;
    int              *ranks = NULL, n = 0, m = 0, i, result;
    void             *val;
    size_t            len;

    if (self->boot->singleton ||
        (self->boot->ops->local_peers(self->boot, &ranks, &n) != AMC_SUCCESS)) {
        return amc_proc_watch_create(&me->ident, NULL, NULL, 0, &self->watch);
    }
    ids = calloc((n > 0) ? (size_t)n : 1, sizeof(*ids));
    if (ids == NULL) {
        free(ranks);
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < n; i++) {
        (void)amc_peer_set_mark(&self->on_node, ranks[i]);
    }
    self->on_node_known = 1;
    for (i = 0; i < n; i++) {
        if (ranks[i] == self->super.rank) {
            continue;
        }
        if (self->boot->ops->get(self->boot, ranks[i], AMC_UCX_IDENT_KEY, &val, &len) !=
            AMC_SUCCESS) {
            continue; /* logged; that peer is not watched by pid */
        }
        if (len == sizeof(amc_ucx_local_t)) {
            amc_ucx_keep_mbox_addr(self, ranks[i], me, val);
            memcpy(&ids[m], &((const amc_ucx_local_t *)val)->ident, sizeof(ids[m]));
            ranks[m++] = ranks[i];
        }
        free(val);
    }
    result = amc_proc_watch_create(&me->ident, ids, ranks, m, &self->watch);
    free(ids);
    free(ranks);
    return result;
}

/* Publishes this worker's address (PMIX_GLOBAL) and this process's
 * identity (PMIX_LOCAL), fences without collecting them, and watches the
 * peers on this node. No endpoint yet: each is made on the first send to
 * its peer (amc_ucx_send_slow). */
static int amc_ucx_publish(amc_ucx_transport_t *self)
{
    ucp_address_t    *addr;
    size_t            addr_len;
    amc_ucx_local_t   me;
    ucs_status_t      status;
    double            t0, t1;
    int               result;

    status = ucp_worker_get_address(self->worker, &addr, &addr_len);
    if (status != UCS_OK) {
        amc_error(&self->log, "ucp_worker_get_address failed: %s", ucs_status_string(status));
        return AMC_ERR_TRANSPORT;
    }
    self->my_addr = malloc(addr_len);
    if (self->my_addr == NULL) {
        ucp_worker_release_address(self->worker, addr);
        return AMC_ERR_NO_MEMORY;
    }
    memcpy(self->my_addr, addr, addr_len);
    self->my_addr_len = addr_len;
    ucp_worker_release_address(self->worker, addr);
    memset(&me, 0, sizeof(me));
    amc_proc_ident_self(&me.ident);
    if (self->shm != NULL) {
        amc_shm_addr(self->shm, &me.mbox);
    }
    t0     = amc_clock_sec();
    result = self->boot->ops->publish(self->boot, AMC_UCX_ADDR_KEY, self->my_addr, addr_len,
                                   AMC_UCX_IDENT_KEY, &me, sizeof(me));
    if (result != AMC_SUCCESS) {
        return result;
    }
    self->published = 1;
    t1     = amc_clock_sec();
    result = amc_ucx_watch_local(self, &me);
    if (result != AMC_SUCCESS) {
        return result;
    }
    amc_debug(&self->log, "address published, fence without data collection: %.3f ms; "
              "identities of %d peers on this node read: %.3f ms", (t1 - t0) * 1e3,
              amc_proc_watch_count(self->watch), (amc_clock_sec() - t1) * 1e3);
    self->boot->ops->watch(self->boot, amc_ucx_boot_dead, self);
    return AMC_SUCCESS;
}

static int amc_ucx_int_cmp(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The inbox for the other ranks of this node (AMC_SHM, and not alone on
 * it); without one everything goes by UCX. Its ring in a peer's inbox is
 * named by its place among the node's ranks in rank order. */
static void amc_ucx_init_mbox(amc_ucx_transport_t *self, const amc_ucx_params_t *params)
{
    int *ranks = NULL, n = 0, place;

    if (!params->shm || (self->super.local_size <= 1) ||
        (self->boot->ops->local_peers(self->boot, &ranks, &n) != AMC_SUCCESS) || (n <= 1)) {
        free(ranks);
        return;
    }
    qsort(ranks, (size_t)n, sizeof(*ranks), amc_ucx_int_cmp);
    for (place = 0; (place < n) && (ranks[place] != self->super.rank); place++) {
    }
    free(ranks);
    if ((place == n) ||
        (amc_shm_create(&self->super, (unsigned)(n - 1), (unsigned)place,
                        self->boot->job, &self->log, &self->shm) != AMC_SUCCESS)) {
        self->shm = NULL;
        amc_info(&self->log, "no mailboxes: UCX carries the messages on this node");
        return;
    }
    if (!params->shm_pull) {
        amc_shm_without_pull(self->shm);
    }
    self->super.pass_scale = AMC_UCX_POLL_EVERY;
}

int amc_ucx_transport_create(amc_bootstrap_t *boot, const amc_ucx_params_t *params,
                             const amc_log_t *log, amc_transport_t **tp_p)
{
    amc_ucx_transport_t *self;
    amc_ucx_threads_t    threads = params->threads;
    int                  status;

    self = calloc(1, sizeof(*self));
    if (self == NULL) {
        boot->ops->finalize(boot);
        return AMC_ERR_NO_MEMORY;
    }
    self->super.ops  = &amc_ucx_ops;
    self->super.name = "ucx";
    self->super.rank = boot->rank;
    self->super.size = boot->size;
    self->super.local_size = boot->local_size;
    boot->ops->node_map(boot, &self->super.nodes);
    self->log        = *log;
    self->boot       = boot;
    self->efd        = -1;
    self->err_mode   = params->err_mode_peer;
    self->err_peer   = (params->err_mode_peer == AMC_UCX_ERR_MODE_ALL) ||
                       ((params->err_mode_peer == AMC_UCX_ERR_MODE_OFF_NODE) &&
                        (self->super.local_size < self->super.size));
    self->fin_timeout = params->finalize_timeout;
    if (threads == AMC_UCX_THREADS_GUARDED) {
        pthread_mutexattr_t attr;

        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&self->guard, &attr);
        pthread_mutexattr_destroy(&attr);
        self->guarded = 1;
    }

    pthread_mutex_init(&self->conn_lock, NULL);
    status = amc_peer_set_init(&self->super.dead, self->super.size);
    if (status == AMC_SUCCESS) {
        status = amc_peer_set_init(&self->on_node, self->super.size);
    }
    if (status == AMC_SUCCESS) {
        status = amc_sparse_init(&self->peers, self->super.size);
    }
    if (status != AMC_SUCCESS) {
        goto err;
    }
    status = amc_ucx_init_worker(self, threads);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    amc_ucx_init_mbox(self, params);
    status = amc_ucx_publish(self);
    if (status != AMC_SUCCESS) {
        goto err;
    }
    *tp_p = &self->super;
    return AMC_SUCCESS;

err:
    /* once published, the teardown fences: peers may still connect to us */
    amc_ucx_destroy(&self->super);
    return status;
}
