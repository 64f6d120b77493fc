/* SPDX-License-Identifier: BSD-3-Clause */
#include "transport/fake.h"
#include "base/spinlock.h"
#include "base/status.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AMC_FAKE_HDR_MAX 64

typedef struct amc_fake_msg {
    int           src;
    int           dst;
    const void   *hdr_ptr;                  /* the sender's storage, checked at delivery */
    size_t        hdr_len;
    unsigned char hdr_copy[AMC_FAKE_HDR_MAX];
    void         *data;      /* eager: a copy; rndv: the sender's buffer */
    size_t        len;
    unsigned      mode;
    amc_completion_t *comp;                 /* NULL: nothing to complete */
    int           completion_only;          /* run comp in dst's progress (or when delivered) */
    struct amc_fake_rndv *pull;             /* COMPLETE_LATER: a fetch to make now */
    void         *pull_buf;
    int           creator;                  /* the rank whose step queued it */
    unsigned long serial;                   /* events the creator queued before it */
    uint64_t      time;                     /* timed: when it arrives (or may be received) */
    uint64_t      seq;                      /* timed: send order, for ties */
} amc_fake_msg_t;

typedef struct amc_fake_transport {
    amc_transport_t    super;
    amc_fake_fabric_t *fabric;
    amc_peer_set_t     contacted;  /* peers sent to: an endpoint each over UCX */
} amc_fake_transport_t;

/* A node's NIC for sends across nodes: the intervals it is taken, in time
 * order. Several ranks share it, and a rank's handler stamps its sends at
 * once, some for when its CPU will be free: one "free from" time would let
 * such a reservation in the future block another rank's send now, while
 * the NIC is idle in between (a burst of sends from every rank of a node
 * then went one CPU overhead apart instead of g). A send takes the first
 * gap of g + (s-1)G at or after the time it asks for. */
typedef struct {
    uint64_t *iv; /* [2 n]: start, end of each, sorted, not overlapping */
    uint32_t  n, cap;
} amc_fake_nic_cal_t;

/* A rank killed after a number of its sends (amc_fake_kill_after). */
typedef struct amc_fake_fate {
    unsigned long sent;
    long          die_after;  /* -1: lives */
    int           killed;     /* sends nothing more, receives nothing more */
} amc_fake_fate_t;

struct amc_fake_fabric {
    int                    nranks;
    amc_fake_completion_t  completion;
    amc_fake_transport_t **ranks;
    int                   *held;
    amc_fake_msg_t        *queue;
    size_t                 queued;
    size_t                 capacity;
    unsigned long          violations;
    unsigned long          delivered;
    unsigned long          rndv_pending;  /* delivered, neither fetched nor released */
    struct amc_fake_rndv  *rndv_live;     /* their descriptors: freed with the fabric */
    unsigned long         *eager_data;    /* per destination: eager messages with data */
    unsigned long         *serials;       /* per rank: events its steps queued so far */
    amc_fake_fate_t       *fate;          /* per rank: sends so far, when it dies */
    /* Threaded mode: each rank's progress delivers its own messages, and a
     * send completes in the sender's progress, as with UCX. A recursive
     * mutex per rank stands for the UCX worker lock of THREAD_MODE_MULTI: it
     * is held around handlers and taken by the rank's sends, so a library
     * that called the transport under its own lock would deadlock (or be
     * reported by ThreadSanitizer) here too. */
    int                    threaded;
    pthread_mutex_t        mutex;         /* the queue and counters */
    pthread_cond_t         cond;          /* something queued, or a wake */
    pthread_mutex_t       *worker;        /* [nranks] */
    int                   *woken;         /* [nranks] */
    /* Timed mode (amc_fake_set_loggp): queue is a min-heap on (time, seq). */
    int                    timed;
    amc_fake_loggp_t       loggp[2];      /* [0] within a node, [1] across */
    int                    node_size;
    uint64_t               now;
    uint64_t               seq;
    uint64_t              *cpu_free;      /* [nranks] */
    uint64_t              *send_free;     /* [nranks] within a node: a rank's own */
    uint64_t              *recv_free;     /* [nranks] sending and receiving "NIC" */
    amc_fake_nic_cal_t    *node_send;     /* [nodes] across: the node's one NIC, */
    uint64_t              *node_recv;     /* which its ranks take turns at */
};

static void amc_fake_lock(amc_fake_fabric_t *fabric)
{
    if (fabric->threaded) {
        pthread_mutex_lock(&fabric->mutex);
    }
}

static void amc_fake_unlock(amc_fake_fabric_t *fabric)
{
    if (fabric->threaded) {
        pthread_mutex_unlock(&fabric->mutex);
    }
}

static void amc_fake_worker_lock(amc_fake_fabric_t *fabric, int rank)
{
    if (fabric->threaded) {
        pthread_mutex_lock(&fabric->worker[rank]);
    }
}

static void amc_fake_worker_unlock(amc_fake_fabric_t *fabric, int rank)
{
    if (fabric->threaded) {
        pthread_mutex_unlock(&fabric->worker[rank]);
    }
}

static int amc_fake_heap_before(const amc_fake_msg_t *a, const amc_fake_msg_t *b)
{
    return (a->time < b->time) || ((a->time == b->time) && (a->seq < b->seq));
}

static void amc_fake_heap_swap(amc_fake_msg_t *q, size_t a, size_t b)
{
    amc_fake_msg_t tmp = q[a];

    q[a] = q[b];
    q[b] = tmp;
}

/* Timed: the entry just appended at the end rises to its place. */
static void amc_fake_heap_up(amc_fake_fabric_t *fabric, size_t i)
{
    amc_fake_msg_t *q = fabric->queue;
    size_t          parent;

    while (i > 0) {
        parent = (i - 1) / 2;
        if (!amc_fake_heap_before(&q[i], &q[parent])) {
            break;
        }
        amc_fake_heap_swap(q, i, parent);
        i = parent;
    }
}

/* Timed: takes the earliest entry out. */
static void amc_fake_heap_pop(amc_fake_fabric_t *fabric, amc_fake_msg_t *msg)
{
    amc_fake_msg_t *q = fabric->queue;
    size_t          i = 0, child, n;

    *msg = q[0];
    n    = --fabric->queued;
    q[0] = q[n];
    for (;;) {
        child = 2 * i + 1;
        if (child >= n) {
            break;
        }
        if ((child + 1 < n) && amc_fake_heap_before(&q[child + 1], &q[child])) {
            child++;
        }
        if (!amc_fake_heap_before(&q[child], &q[i])) {
            break;
        }
        amc_fake_heap_swap(q, i, child);
        i = child;
    }
}

static int amc_fake_across(const amc_fake_fabric_t *fabric, int a, int b)
{
    return (fabric->node_size > 0) && ((a / fabric->node_size) != (b / fabric->node_size));
}

static const amc_fake_loggp_t *amc_fake_pair_loggp(const amc_fake_fabric_t *fabric, int a,
                                                   int b)
{
    return &fabric->loggp[amc_fake_across(fabric, a, b)];
}

/* The receiving NIC side of a message between a and b at rank: within a
 * node the rank's own (shared memory), across nodes its node's. Receives
 * take it at the current time only, so a "free from" time is exact. */
static uint64_t *amc_fake_nic(amc_fake_fabric_t *fabric, int a, int b, int rank)
{
    if (amc_fake_across(fabric, a, b)) {
        return &fabric->node_recv[rank / fabric->node_size];
    }
    return &fabric->recv_free[rank];
}

/* The first time at or after t that the NIC is free for len, taken; t
 * itself when there is no memory to remember it (then it may overlap). */
static uint64_t amc_fake_nic_take(amc_fake_nic_cal_t *cal, uint64_t now, uint64_t t,
                                  uint64_t len)
{
    uint32_t i, drop = 0;
    uint64_t *iv;

    while ((drop < cal->n) && (cal->iv[2 * drop + 1] <= now)) {
        drop++; /* over: no request starts before now */
    }
    if (drop > 0) {
        memmove(cal->iv, cal->iv + 2 * drop, 2 * (size_t)(cal->n - drop) * sizeof(*cal->iv));
        cal->n -= drop;
    }
    for (i = 0; i < cal->n; i++) {
        if (t + len <= cal->iv[2 * i]) {
            break;
        }
        t = (cal->iv[2 * i + 1] > t) ? cal->iv[2 * i + 1] : t;
    }
    if (cal->n == cal->cap) {
        iv = realloc(cal->iv, 2 * (size_t)(cal->cap ? 2 * cal->cap : 16) * sizeof(*iv));
        if (iv == NULL) {
            return t;
        }
        cal->iv  = iv;
        cal->cap = cal->cap ? 2 * cal->cap : 16;
    }
    memmove(cal->iv + 2 * (i + 1), cal->iv + 2 * i, 2 * (size_t)(cal->n - i) * sizeof(*cal->iv));
    cal->iv[2 * i]     = t;
    cal->iv[2 * i + 1] = t + len;
    cal->n++;
    return t;
}

static void amc_fake_nic_cals_free(amc_fake_fabric_t *fabric)
{
    size_t i, nodes;

    if (fabric->node_send != NULL) {
        nodes = (size_t)fabric->nranks / (size_t)fabric->node_size + 1;
        for (i = 0; i < nodes; i++) {
            free(fabric->node_send[i].iv);
        }
    }
    free(fabric->node_send);
    fabric->node_send = NULL;
}

/* (s-1)G: the first byte's time is in L and o, as in LogGP. */
static uint64_t amc_fake_bytes_time(const amc_fake_loggp_t *p, size_t len)
{
    return (len > 1) ? (uint64_t)(len - 1) * p->G : 0;
}

/* Timed: the sender's CPU and NIC are taken now, the message arrives later. */
static void amc_fake_stamp_send(amc_fake_fabric_t *fabric, amc_fake_msg_t *msg)
{
    const amc_fake_loggp_t *p = amc_fake_pair_loggp(fabric, msg->src, msg->dst);
    uint64_t                start = fabric->now, *nic, busy;

    if ((msg->src >= 0) && (msg->src < fabric->nranks)) {
        busy  = p->g + amc_fake_bytes_time(p, msg->len);
        start = (fabric->cpu_free[msg->src] > start) ? fabric->cpu_free[msg->src] : start;
        if (amc_fake_across(fabric, msg->src, msg->dst)) {
            start = amc_fake_nic_take(&fabric->node_send[msg->src / fabric->node_size],
                                      fabric->now, start, busy);
        } else {
            nic    = &fabric->send_free[msg->src];
            start  = (*nic > start) ? *nic : start;
            *nic   = start + busy;
        }
        fabric->cpu_free[msg->src] = start + p->o;
    }
    msg->time = start + p->o + p->L;
}

static int amc_fake_enqueue(amc_fake_fabric_t *fabric, const amc_fake_msg_t *msg)
{
    amc_fake_msg_t *queue;
    size_t          capacity;
    int             creator = msg->creator;

    if (fabric->queued == fabric->capacity) {
        capacity = fabric->capacity ? 2 * fabric->capacity : 64;
        queue    = realloc(fabric->queue, capacity * sizeof(*queue));
        if (queue == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        fabric->queue    = queue;
        fabric->capacity = capacity;
    }
    if ((creator < 0) || (creator >= fabric->nranks)) {
        creator = msg->dst; /* an injected message from nowhere */
    }
    fabric->queue[fabric->queued]         = *msg;
    fabric->queue[fabric->queued].creator = creator;
    fabric->queue[fabric->queued].serial  = fabric->serials[creator]++;
    fabric->queue[fabric->queued].seq     = fabric->seq++;
    fabric->queued++;
    if (fabric->timed) {
        amc_fake_heap_up(fabric, fabric->queued - 1);
    }
    if (fabric->threaded) {
        pthread_cond_broadcast(&fabric->cond);
    }
    return AMC_SUCCESS;
}

/* Threaded: comp runs in rank's next progress; COMPLETE_LATER: when the
 * test delivers it. creator: the rank whose step makes it due (the
 * receiver of what it completes). */
static void amc_fake_complete_later(amc_fake_fabric_t *fabric, int rank, amc_completion_t *comp,
                                    int creator)
{
    amc_fake_msg_t ev;

    memset(&ev, 0, sizeof(ev));
    ev.src             = rank;
    ev.dst             = rank;
    ev.creator         = creator;
    ev.comp            = comp;
    ev.completion_only = 1;
    amc_fake_lock(fabric);
    (void)amc_fake_enqueue(fabric, &ev); /* lost on no memory, as a dead link's would be */
    amc_fake_unlock(fabric);
}

static int amc_fake_send_locked(amc_fake_transport_t *self, int dest, const void *hdr,
                                size_t hdr_len, const void *data, size_t len, unsigned mode,
                                amc_completion_t *comp);

/* Whether rank is dead, or dies now instead of making its next send. A
 * rank's threads and its progress thread send at once (threaded mode),
 * outside its worker lock: the counts are atomic. */
static int amc_fake_fated(amc_fake_fabric_t *fabric, int rank)
{
    amc_fake_fate_t *fate      = &fabric->fate[rank];
    long             die_after = __atomic_load_n(&fate->die_after, __ATOMIC_RELAXED);

    if (__atomic_load_n(&fate->killed, __ATOMIC_ACQUIRE)) {
        return 1;
    }
    if ((die_after >= 0) &&
        (__atomic_load_n(&fate->sent, __ATOMIC_RELAXED) >= (unsigned long)die_after)) {
        amc_fake_kill(fabric, rank);
        return 1;
    }
    __atomic_add_fetch(&fate->sent, 1, __ATOMIC_RELAXED);
    return 0;
}

static int amc_fake_send(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                         const void *data, size_t len, unsigned mode, amc_completion_t *comp)
{
    amc_fake_transport_t *self   = (amc_fake_transport_t *)tp;
    amc_fake_fabric_t    *fabric = self->fabric;
    int                   status;

    if ((dest < 0) || (dest >= fabric->nranks) || (hdr_len > AMC_FAKE_HDR_MAX)) {
        return AMC_ERR_TRANSPORT;
    }
    if (amc_peer_set_test(&tp->dead, dest) || amc_fake_fated(fabric, tp->rank)) {
        return AMC_SUCCESS; /* dropped, as the UCX transport does */
    }
    if (amc_peer_set_mark(&self->contacted, dest)) {
        /* the UCX transport connects on the first send to a peer */
        __atomic_add_fetch(&tp->eps_created, 1, __ATOMIC_RELAXED);
    }
    amc_fake_worker_lock(fabric, tp->rank);
    status = amc_fake_send_locked(self, dest, hdr, hdr_len, data, len, mode, comp);
    amc_fake_worker_unlock(fabric, tp->rank);
    return status;
}

static int amc_fake_send_locked(amc_fake_transport_t *self, int dest, const void *hdr,
                                size_t hdr_len, const void *data, size_t len, unsigned mode,
                                amc_completion_t *comp)
{
    amc_transport_t      *tp     = &self->super;
    amc_fake_fabric_t    *fabric = self->fabric;
    amc_fake_msg_t        msg;
    int                   status;

    memset(&msg, 0, sizeof(msg));
    msg.src     = tp->rank;
    msg.dst     = dest;
    msg.creator = tp->rank;
    msg.hdr_ptr = hdr;
    msg.hdr_len = hdr_len;
    memcpy(msg.hdr_copy, hdr, hdr_len);
    msg.mode = mode;
    if (mode == AMC_SEND_RNDV) {
        /* the data stays in the sender's buffer until the receiver fetches it,
         * and the send completes only then, as with UCX */
        msg.data = (void *)(uintptr_t)data;
        msg.len  = len;
        msg.comp = comp;
        if (fabric->timed) {
            amc_fake_stamp_send(fabric, &msg);
        }
        amc_fake_lock(fabric);
        status   = amc_fake_enqueue(fabric, &msg);
        amc_fake_unlock(fabric);
        return (status == AMC_SUCCESS) ? AMC_INPROGRESS : status;
    }
    if (len > 0) {
        msg.data = malloc(len);
        if (msg.data == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        memcpy(msg.data, data, len);
        msg.len = len;
    }
    if (fabric->completion != AMC_FAKE_COMPLETE_ON_SEND) {
        msg.comp = comp;
    } else {
        msg.hdr_ptr = NULL; /* done at once: the sender may reuse its storage */
    }
    if (fabric->timed) {
        amc_fake_stamp_send(fabric, &msg);
    }

    amc_fake_lock(fabric);
    status = amc_fake_enqueue(fabric, &msg);
    amc_fake_unlock(fabric);
    if (status != AMC_SUCCESS) {
        free(msg.data);
        return status;
    }
    return (fabric->completion != AMC_FAKE_COMPLETE_ON_SEND) ? AMC_INPROGRESS : AMC_SUCCESS;
}

/* A message whose data waits at the sender. A library torn down with
 * instances running never fetches or releases some (UCX frees them with the
 * worker): the fabric keeps them in a list, to free them with it. */
typedef struct amc_fake_rndv {
    amc_completion_t     *fetch_comp; /* COMPLETE_LATER: the receiver's, once pulled */
    amc_fake_fabric_t    *fabric;
    amc_fake_msg_t        msg;
    struct amc_fake_rndv *prev, *next;
} amc_fake_rndv_t;

/* With the fabric's lock (if threaded). */
static void amc_fake_rndv_unlink(amc_fake_fabric_t *fabric, amc_fake_rndv_t *desc)
{
    fabric->rndv_pending--;
    if (desc->prev != NULL) {
        desc->prev->next = desc->next;
    } else {
        fabric->rndv_live = desc->next;
    }
    if (desc->next != NULL) {
        desc->next->prev = desc->prev;
    }
}

/* Ends a rendezvous: the sender's send completes now. */
static void amc_fake_rndv_done(amc_fake_rndv_t *desc)
{
    amc_fake_fabric_t *fabric = desc->fabric;

    if (fabric->threaded) {
        amc_fake_lock(fabric);
        amc_fake_rndv_unlink(fabric, desc);
        amc_fake_unlock(fabric);
        if (desc->msg.comp != NULL) {
            amc_fake_complete_later(fabric, desc->msg.src, desc->msg.comp, desc->msg.dst);
        }
        free(desc);
        return;
    }
    amc_fake_rndv_unlink(fabric, desc);
    if (fabric->completion == AMC_FAKE_COMPLETE_LATER) {
        if (desc->msg.comp != NULL) {
            amc_fake_complete_later(fabric, desc->msg.src, desc->msg.comp, desc->msg.dst);
        }
    } else if ((desc->msg.comp != NULL) && (fabric->ranks[desc->msg.src] != NULL)) {
        desc->msg.comp->fn(desc->msg.comp, AMC_SUCCESS);
    }
    free(desc);
}

/* COMPLETE_LATER: the fetch is an event of its own; the data is read from
 * the sender's buffer when the test delivers it. */
static int amc_fake_fetch_later(amc_fake_transport_t *self, amc_fake_rndv_t *desc, void *buf,
                                amc_completion_t *comp)
{
    amc_fake_fabric_t *fabric = self->fabric;
    amc_fake_msg_t     ev;

    memset(&ev, 0, sizeof(ev));
    ev.src           = desc->msg.src;
    ev.dst           = self->super.rank;
    ev.pull          = desc;
    ev.pull_buf      = buf;
    ev.creator       = self->super.rank;
    desc->fetch_comp = comp;
    if (amc_fake_enqueue(fabric, &ev) != AMC_SUCCESS) {
        amc_fake_rndv_done(desc);
        return AMC_ERR_TRANSPORT;
    }
    return AMC_INPROGRESS;
}

/* The pull: data into place, then two completions, each an event. */
static void amc_fake_pull(amc_fake_fabric_t *fabric, amc_fake_msg_t *ev)
{
    amc_fake_rndv_t *desc = ev->pull;

    if ((desc->msg.len > 0) && (ev->pull_buf != desc->msg.data)) {
        memcpy(ev->pull_buf, desc->msg.data, desc->msg.len);
    }
    amc_fake_complete_later(fabric, ev->dst, desc->fetch_comp, ev->dst);
    amc_fake_rndv_done(desc);
}

static int amc_fake_fetch(amc_transport_t *tp, void *desc_v, void *buf, size_t len,
                          amc_completion_t *comp)
{
    amc_fake_transport_t *self = (amc_fake_transport_t *)tp;
    amc_fake_rndv_t      *desc = desc_v;
    int                   status = AMC_SUCCESS;

    (void)comp;
    if ((self->fabric->completion == AMC_FAKE_COMPLETE_LATER) && (len == desc->msg.len)) {
        return amc_fake_fetch_later(self, desc, buf, comp);
    }
    amc_fake_worker_lock(self->fabric, tp->rank);
    if (len != desc->msg.len) {
        status = AMC_ERR_TRANSPORT;
    } else if ((len > 0) && (buf != desc->msg.data)) {
        memcpy(buf, desc->msg.data, len); /* the same: the simulator's shared buffer */
    }
    amc_fake_rndv_done(desc);
    amc_fake_worker_unlock(self->fabric, tp->rank);
    return status;
}

static void amc_fake_release(amc_transport_t *tp, void *desc)
{
    amc_fake_transport_t *self = (amc_fake_transport_t *)tp;

    amc_fake_worker_lock(self->fabric, tp->rank);
    amc_fake_rndv_done(desc);
    amc_fake_worker_unlock(self->fabric, tp->rank);
}

static int amc_fake_run(amc_fake_fabric_t *fabric, amc_fake_msg_t *msg);

/* Threaded: the first queued message or completion for this rank. */
static int amc_fake_take(amc_fake_fabric_t *fabric, int rank, amc_fake_msg_t *msg)
{
    size_t i;

    for (i = 0; i < fabric->queued; i++) {
        if (fabric->queue[i].dst == rank) {
            *msg = fabric->queue[i];
            memmove(&fabric->queue[i], &fabric->queue[i + 1],
                    (fabric->queued - i - 1) * sizeof(*msg));
            fabric->queued--;
            return 1;
        }
    }
    return 0;
}

/* Unthreaded, the test drives delivery and a rank's own progress has
 * nothing to do; threaded, it delivers what is queued for the rank. */
static int amc_fake_progress(amc_transport_t *tp)
{
    amc_fake_transport_t *self   = (amc_fake_transport_t *)tp;
    amc_fake_fabric_t    *fabric = self->fabric;
    amc_fake_msg_t        msg;
    int                   count = 0, found;

    if (!fabric->threaded) {
        return 0;
    }
    amc_fake_worker_lock(fabric, tp->rank);
    do {
        amc_fake_lock(fabric);
        found = amc_fake_take(fabric, tp->rank, &msg);
        if (found) {
            fabric->delivered++;
        }
        amc_fake_unlock(fabric);
        if (found) {
            count += amc_fake_run(fabric, &msg);
        }
    } while (found && (count < 16));
    amc_fake_worker_unlock(fabric, tp->rank);
    return count;
}

static void amc_fake_sleep(amc_transport_t *tp, int timeout_ms)
{
    amc_fake_transport_t *self   = (amc_fake_transport_t *)tp;
    amc_fake_fabric_t    *fabric = self->fabric;
    struct timespec       deadline;
    size_t                i;
    int                   pending = 0;

    if (!fabric->threaded) {
        return;
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec  += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&fabric->mutex);
    while (!fabric->woken[tp->rank]) {
        for (i = 0; (i < fabric->queued) && !pending; i++) {
            pending = (fabric->queue[i].dst == tp->rank);
        }
        if (pending || (pthread_cond_timedwait(&fabric->cond, &fabric->mutex, &deadline) ==
                        ETIMEDOUT)) {
            break;
        }
    }
    fabric->woken[tp->rank] = 0;
    pthread_mutex_unlock(&fabric->mutex);
}

static void amc_fake_wake(amc_transport_t *tp)
{
    amc_fake_transport_t *self   = (amc_fake_transport_t *)tp;
    amc_fake_fabric_t    *fabric = self->fabric;

    if (fabric->threaded) {
        pthread_mutex_lock(&fabric->mutex);
        fabric->woken[tp->rank] = 1;
        pthread_cond_broadcast(&fabric->cond);
        pthread_mutex_unlock(&fabric->mutex);
    }
}

static void amc_fake_destroy(amc_transport_t *tp)
{
    amc_fake_transport_t *self = (amc_fake_transport_t *)tp;

    amc_fake_lock(self->fabric);
    self->fabric->ranks[tp->rank] = NULL;
    amc_fake_unlock(self->fabric);
    amc_peer_set_cleanup(&tp->dead);
    amc_peer_set_cleanup(&self->contacted);
    free(self);
}

/* A fabric whose sends complete at once sends now, as a mailbox does; the
 * others complete later, and so never now (AMC_SEND_NEVER). */
static int amc_fake_send_now(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                             const void *data, size_t len)
{
    amc_fake_transport_t *self = (amc_fake_transport_t *)tp;

    if (self->fabric->completion != AMC_FAKE_COMPLETE_ON_SEND) {
        return AMC_SEND_NEVER;
    }
    if (amc_lock_live(tp->lock_live) || (dest < 0) || (dest >= self->fabric->nranks) ||
        amc_peer_set_test(&tp->dead, dest)) {
        return AMC_SEND_NOT_NOW;
    }
    return (amc_fake_send(tp, dest, hdr, hdr_len, data, len, AMC_SEND_EAGER, NULL) == AMC_SUCCESS)
               ? AMC_SUCCESS : AMC_SEND_NOT_NOW;
}

static const amc_transport_ops_t amc_fake_ops = {
    .send     = amc_fake_send,
    .send_now = amc_fake_send_now,
    .fetch    = amc_fake_fetch,
    .release  = amc_fake_release,
    .progress = amc_fake_progress,
    .sleep    = amc_fake_sleep,
    .wake     = amc_fake_wake,
    .destroy  = amc_fake_destroy,
};

int amc_fake_fabric_create(int nranks, amc_fake_completion_t completion,
                           amc_fake_fabric_t **fabric_p)
{
    amc_fake_fabric_t *fabric;
    int                i;

    if (nranks < 1) {
        return AMC_ERR_ARG;
    }
    fabric = calloc(1, sizeof(*fabric));
    if (fabric == NULL) {
        goto err;
    }
    fabric->ranks = calloc((size_t)nranks, sizeof(*fabric->ranks));
    if (fabric->ranks == NULL) {
        goto err_free_fabric;
    }
    fabric->held = calloc((size_t)nranks, sizeof(*fabric->held));
    if (fabric->held == NULL) {
        goto err_free_ranks;
    }
    fabric->eager_data = calloc((size_t)nranks, sizeof(*fabric->eager_data));
    fabric->serials    = calloc((size_t)nranks, sizeof(*fabric->serials));
    fabric->fate       = calloc((size_t)nranks, sizeof(*fabric->fate));
    if ((fabric->eager_data == NULL) || (fabric->serials == NULL) || (fabric->fate == NULL)) {
        free(fabric->eager_data);
        free(fabric->serials);
        free(fabric->fate);
        free(fabric->held);
        goto err_free_ranks;
    }
    for (i = 0; i < nranks; i++) {
        fabric->fate[i].die_after = -1;
    }
    fabric->nranks     = nranks;
    fabric->completion = completion;
    *fabric_p          = fabric;
    return AMC_SUCCESS;

err_free_ranks:
    free(fabric->ranks);
err_free_fabric:
    free(fabric);
err:
    return AMC_ERR_NO_MEMORY;
}

int amc_fake_fabric_create_threaded(int nranks, amc_fake_fabric_t **fabric_p)
{
    amc_fake_fabric_t  *fabric;
    pthread_mutexattr_t attr;
    int                 status, i;

    status = amc_fake_fabric_create(nranks, AMC_FAKE_COMPLETE_ON_DELIVERY, &fabric);
    if (status != AMC_SUCCESS) {
        return status;
    }
    fabric->worker = calloc((size_t)nranks, sizeof(*fabric->worker));
    fabric->woken  = calloc((size_t)nranks, sizeof(*fabric->woken));
    if ((fabric->worker == NULL) || (fabric->woken == NULL)) {
        amc_fake_fabric_destroy(fabric);
        return AMC_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&fabric->mutex, NULL);
    pthread_cond_init(&fabric->cond, NULL);
    pthread_mutexattr_init(&attr);
    /* a handler may send, and sending takes the worker lock, as in UCX */
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    for (i = 0; i < nranks; i++) {
        pthread_mutex_init(&fabric->worker[i], &attr);
    }
    pthread_mutexattr_destroy(&attr);
    fabric->threaded = 1;
    *fabric_p        = fabric;
    return AMC_SUCCESS;
}

void amc_fake_fabric_destroy(amc_fake_fabric_t *fabric)
{
    size_t i;

    if (fabric == NULL) {
        return;
    }
    if (fabric->threaded) {
        for (i = 0; i < (size_t)fabric->nranks; i++) {
            pthread_mutex_destroy(&fabric->worker[i]);
        }
        pthread_cond_destroy(&fabric->cond);
        pthread_mutex_destroy(&fabric->mutex);
    }
    free(fabric->worker);
    free(fabric->woken);
    for (i = 0; i < fabric->queued; i++) {
        if (fabric->queue[i].mode != AMC_SEND_RNDV) {
            free(fabric->queue[i].data); /* rndv data is the sender's buffer */
        }
    }
    while (fabric->rndv_live != NULL) {
        amc_fake_rndv_t *desc = fabric->rndv_live; /* queued pulls' among them */

        fabric->rndv_live = desc->next;
        free(desc);
    }
    free(fabric->queue);
    free(fabric->cpu_free);
    free(fabric->send_free);
    free(fabric->recv_free);
    amc_fake_nic_cals_free(fabric);
    free(fabric->node_recv);
    free(fabric->eager_data);
    free(fabric->serials);
    free(fabric->fate);
    free(fabric->held);
    free(fabric->ranks);
    free(fabric);
}

int amc_fake_transport_create(amc_fake_fabric_t *fabric, int rank, amc_transport_t **tp_p)
{
    amc_fake_transport_t *self;

    if ((rank < 0) || (rank >= fabric->nranks) || (fabric->ranks[rank] != NULL)) {
        return AMC_ERR_ARG;
    }
    self = calloc(1, sizeof(*self));
    if (self == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    self->super.ops  = &amc_fake_ops;
    self->super.name = "fake";
    self->super.rank = rank;
    self->super.size = fabric->nranks;
    self->super.local_size = 1; /* the test drives delivery; nobody waits */
    self->fabric     = fabric;
    if ((amc_peer_set_init(&self->super.dead, fabric->nranks) != AMC_SUCCESS) ||
        (amc_peer_set_init(&self->contacted, fabric->nranks) != AMC_SUCCESS)) {
        amc_peer_set_cleanup(&self->super.dead);
        amc_peer_set_cleanup(&self->contacted);
        free(self);
        return AMC_ERR_NO_MEMORY;
    }
    fabric->ranks[rank] = self;
    *tp_p = &self->super;
    return AMC_SUCCESS;
}

int amc_fake_event(const amc_fake_fabric_t *fabric, size_t index, amc_fake_event_t *ev)
{
    const amc_fake_msg_t *msg;
    size_t                i;

    if (fabric->timed) {
        return 0;
    }
    for (i = 0; i < fabric->queued; i++) {
        if (!fabric->held[fabric->queue[i].dst] && (index-- == 0)) {
            break;
        }
    }
    if (i == fabric->queued) {
        return 0;
    }
    msg          = &fabric->queue[i];
    ev->rank     = msg->dst;
    ev->creator  = msg->creator;
    ev->serial   = msg->serial;
    ev->kind     = msg->completion_only ? AMC_FAKE_EV_COMPLETION :
                   (msg->pull != NULL) ? AMC_FAKE_EV_PULL : AMC_FAKE_EV_MESSAGE;
    return 1;
}

size_t amc_fake_deliverable(const amc_fake_fabric_t *fabric)
{
    size_t i, count = 0;

    if (fabric->timed) {
        return fabric->queued;
    }
    for (i = 0; i < fabric->queued; i++) {
        count += !fabric->held[fabric->queue[i].dst];
    }
    return count;
}

/* Timed: the earliest message, once its receiver's CPU and NIC are free;
 * until then it goes back with the time they will be, as other messages may
 * come before it. */
static int amc_fake_deliver_timed(amc_fake_fabric_t *fabric)
{
    const amc_fake_loggp_t *p;
    amc_fake_msg_t          msg;
    uint64_t                start, bytes, *nic;
    int                     dst;

    if (fabric->queued == 0) {
        return 0;
    }
    amc_fake_heap_pop(fabric, &msg);
    dst   = msg.dst;
    nic   = amc_fake_nic(fabric, msg.src, dst, dst);
    start = msg.time;
    start = (fabric->cpu_free[dst] > start) ? fabric->cpu_free[dst] : start;
    start = (*nic > start) ? *nic : start;
    if (start > msg.time) {
        msg.time                       = start;
        fabric->queue[fabric->queued++] = msg;
        amc_fake_heap_up(fabric, fabric->queued - 1);
        return 1;
    }
    p     = amc_fake_pair_loggp(fabric, msg.src, dst);
    bytes = amc_fake_bytes_time(p, msg.len);
    fabric->now           = start;
    fabric->cpu_free[dst] = start + p->o + bytes;
    *nic                  = start + p->g + bytes;
    fabric->delivered++;
    return amc_fake_run(fabric, &msg);
}

int amc_fake_deliver(amc_fake_fabric_t *fabric, size_t index)
{
    amc_fake_msg_t        msg;
    size_t                i;

    if (fabric->timed) {
        return amc_fake_deliver_timed(fabric);
    }
    for (i = 0; i < fabric->queued; i++) {
        if (fabric->held[fabric->queue[i].dst]) {
            continue;
        }
        if (index-- == 0) {
            break;
        }
    }
    if (i == fabric->queued) {
        return 0;
    }

    /* dequeue first: the handler may send, which may grow the queue */
    msg = fabric->queue[i];
    memmove(&fabric->queue[i], &fabric->queue[i + 1],
            (fabric->queued - i - 1) * sizeof(msg));
    fabric->queued--;

    fabric->delivered++;
    return amc_fake_run(fabric, &msg);
}

/* Hands a dequeued message to its rank's handler (or runs a completion). */
static int amc_fake_run(amc_fake_fabric_t *fabric, amc_fake_msg_t *msg)
{
    amc_fake_transport_t *dst;

    if (msg->completion_only) {
        msg->comp->fn(msg->comp, AMC_SUCCESS);
        return 1;
    }
    if (msg->pull != NULL) {
        amc_fake_pull(fabric, msg);
        return 1;
    }
    if (__atomic_load_n(&fabric->fate[msg->dst].killed, __ATOMIC_ACQUIRE)) {
        /* a dead process reads nothing; its sender's send ends as dropped */
        if (msg->mode != AMC_SEND_RNDV) {
            free(msg->data);
        }
        if (msg->comp != NULL) {
            msg->comp->fn(msg->comp, AMC_SUCCESS);
        }
        return 1;
    }
    amc_fake_lock(fabric);
    if ((msg->hdr_ptr != NULL) && (memcmp(msg->hdr_ptr, msg->hdr_copy, msg->hdr_len) != 0)) {
        fabric->violations++;
    }
    dst = fabric->ranks[msg->dst];
    if (msg->mode != AMC_SEND_RNDV) {
        fabric->eager_data[msg->dst] += (msg->len > 0);
    }
    amc_fake_unlock(fabric);

    if (msg->mode == AMC_SEND_RNDV) {
        amc_fake_rndv_t *desc = malloc(sizeof(*desc));

        if (desc == NULL) {
            return 1; /* lost, as a dead peer's message would be */
        }
        desc->fabric     = fabric;
        desc->msg        = *msg;
        desc->fetch_comp = NULL;
        desc->prev       = NULL;
        amc_fake_lock(fabric);
        fabric->rndv_pending++;
        desc->next = fabric->rndv_live;
        if (desc->next != NULL) {
            desc->next->prev = desc;
        }
        fabric->rndv_live = desc;
        amc_fake_unlock(fabric);
        if ((dst != NULL) && (dst->super.recv_cb != NULL)) {
            dst->super.recv_cb(dst->super.recv_arg, msg->hdr_copy, msg->hdr_len, NULL, msg->len,
                               desc);
        }
        return 1;
    }
    if ((dst != NULL) && (dst->super.recv_cb != NULL)) {
        dst->super.recv_cb(dst->super.recv_arg, msg->hdr_copy, msg->hdr_len, msg->data,
                           msg->len, NULL);
    }
    free(msg->data);

    if (msg->comp == NULL) {
        return 1;
    }
    if (fabric->threaded || (fabric->completion == AMC_FAKE_COMPLETE_LATER)) {
        amc_fake_complete_later(fabric, msg->src, msg->comp, msg->dst);
    } else if (fabric->ranks[msg->src] != NULL) {
        msg->comp->fn(msg->comp, AMC_SUCCESS);
    }
    return 1;
}

void amc_fake_hold(amc_fake_fabric_t *fabric, int rank, int hold)
{
    if ((rank >= 0) && (rank < fabric->nranks)) {
        fabric->held[rank] = hold;
    }
}

int amc_fake_inject(amc_fake_fabric_t *fabric, int src, int dst,
                    const void *hdr, size_t hdr_len)
{
    return amc_fake_inject_data(fabric, src, dst, hdr, hdr_len, NULL, 0, AMC_SEND_EAGER);
}

int amc_fake_inject_data(amc_fake_fabric_t *fabric, int src, int dst, const void *hdr,
                         size_t hdr_len, const void *data, size_t len, unsigned mode)
{
    amc_fake_msg_t msg;
    int            status;

    if ((dst < 0) || (dst >= fabric->nranks) || (hdr_len > AMC_FAKE_HDR_MAX) ||
        ((len > 0) && (data == NULL))) {
        return AMC_ERR_ARG;
    }
    memset(&msg, 0, sizeof(msg));
    msg.src     = src;
    msg.dst     = dst;
    msg.creator = src;
    msg.hdr_len = hdr_len;
    memcpy(msg.hdr_copy, hdr, hdr_len);
    msg.mode = (mode == AMC_SEND_RNDV) ? AMC_SEND_RNDV : AMC_SEND_EAGER;
    msg.len  = len;
    if (msg.mode == AMC_SEND_RNDV) {
        msg.data = (void *)(uintptr_t)data; /* read at fetch time, as a sender's buffer */
    } else if (len > 0) {
        msg.data = malloc(len);
        if (msg.data == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        memcpy(msg.data, data, len);
    }
    if (fabric->timed) {
        amc_fake_stamp_send(fabric, &msg);
    }
    status = amc_fake_enqueue(fabric, &msg);
    if ((status != AMC_SUCCESS) && (msg.mode != AMC_SEND_RNDV)) {
        free(msg.data);
    }
    return status;
}

unsigned long amc_fake_header_violations(const amc_fake_fabric_t *fabric)
{
    return fabric->violations;
}

unsigned long amc_fake_eager_data(const amc_fake_fabric_t *fabric, int rank)
{
    return fabric->eager_data[rank];
}

unsigned long amc_fake_rndv_pending(const amc_fake_fabric_t *fabric)
{
    return fabric->rndv_pending;
}

void amc_fake_kill_after(amc_fake_fabric_t *fabric, int rank, long sends)
{
    __atomic_store_n(&fabric->fate[rank].die_after,
                     (sends < 0) ? -1 : (long)amc_fake_sent(fabric, rank) + sends,
                     __ATOMIC_RELAXED);
}

unsigned long amc_fake_sent(const amc_fake_fabric_t *fabric, int rank)
{
    return __atomic_load_n(&fabric->fate[rank].sent, __ATOMIC_RELAXED);
}

int amc_fake_killed(const amc_fake_fabric_t *fabric, int rank)
{
    return __atomic_load_n(&fabric->fate[rank].killed, __ATOMIC_ACQUIRE);
}

unsigned long amc_fake_delivered(const amc_fake_fabric_t *fabric)
{
    return fabric->delivered;
}

void amc_fake_kill(amc_fake_fabric_t *fabric, int rank)
{
    int i;

    __atomic_store_n(&fabric->fate[rank].killed, 1, __ATOMIC_RELEASE);
    for (i = 0; i < fabric->nranks; i++) {
        if ((i != rank) && (fabric->ranks[i] != NULL)) {
            (void)amc_peer_set_mark(&fabric->ranks[i]->super.dead, rank);
            amc_fake_wake(&fabric->ranks[i]->super);
        }
    }
}

int amc_fake_set_loggp(amc_fake_fabric_t *fabric, const amc_fake_loggp_t *intra,
                       const amc_fake_loggp_t *inter, int node_size)
{
    size_t n = (size_t)fabric->nranks, nodes;

    if (fabric->threaded || (fabric->completion == AMC_FAKE_COMPLETE_LATER) ||
        (fabric->queued > 0) || (node_size < 0)) {
        return AMC_ERR_ARG;
    }
    if (fabric->cpu_free == NULL) {
        fabric->cpu_free  = calloc(n, sizeof(*fabric->cpu_free));
        fabric->send_free = calloc(n, sizeof(*fabric->send_free));
        fabric->recv_free = calloc(n, sizeof(*fabric->recv_free));
        if ((fabric->cpu_free == NULL) || (fabric->send_free == NULL) ||
            (fabric->recv_free == NULL)) {
            return AMC_ERR_NO_MEMORY; /* freed with the fabric */
        }
    }
    amc_fake_nic_cals_free(fabric);
    free(fabric->node_recv);
    fabric->node_recv = NULL;
    if (node_size > 0) {
        nodes             = n / (size_t)node_size + 1;
        fabric->node_send = calloc(nodes, sizeof(*fabric->node_send));
        fabric->node_recv = calloc(nodes, sizeof(*fabric->node_recv));
        if ((fabric->node_send == NULL) || (fabric->node_recv == NULL)) {
            return AMC_ERR_NO_MEMORY;
        }
    }
    fabric->loggp[0]  = *intra;
    fabric->loggp[1]  = *inter;
    fabric->node_size = node_size;
    fabric->timed     = 1;
    amc_fake_clock_reset(fabric);
    return AMC_SUCCESS;
}

uint64_t amc_fake_now(const amc_fake_fabric_t *fabric)
{
    return fabric->now;
}

uint64_t amc_fake_rank_time(const amc_fake_fabric_t *fabric, int rank)
{
    return ((fabric->cpu_free != NULL) && (rank >= 0) && (rank < fabric->nranks))
               ? fabric->cpu_free[rank] : 0;
}

void amc_fake_clock_reset(amc_fake_fabric_t *fabric)
{
    size_t n = (size_t)fabric->nranks;

    fabric->now = 0;
    if (fabric->cpu_free != NULL) {
        memset(fabric->cpu_free, 0, n * sizeof(*fabric->cpu_free));
        memset(fabric->send_free, 0, n * sizeof(*fabric->send_free));
        memset(fabric->recv_free, 0, n * sizeof(*fabric->recv_free));
    }
    if (fabric->node_send != NULL) {
        n = n / (size_t)fabric->node_size + 1;
        while (n-- > 0) {
            fabric->node_send[n].n = 0;
            fabric->node_recv[n]   = 0;
        }
    }
}

size_t amc_fake_bytes_per_rank(const amc_fake_fabric_t *fabric)
{
    /* the per-rank arrays, the transport and its two peer bitmaps */
    size_t arrays = sizeof(*fabric->ranks) + sizeof(*fabric->held) +
                    sizeof(*fabric->eager_data) + sizeof(*fabric->serials) +
                    (fabric->timed ? 3 * sizeof(uint64_t) : 0);

    return arrays + sizeof(amc_fake_transport_t) +
           2 * (((size_t)fabric->nranks + 63) / 64) * sizeof(uint64_t);
}
