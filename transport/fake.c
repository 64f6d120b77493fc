#include "transport/fake.h"
#include "am_coll/status.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
} amc_fake_msg_t;

typedef struct amc_fake_transport {
    amc_transport_t    super;
    amc_fake_fabric_t *fabric;
} amc_fake_transport_t;

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
    unsigned long         *eager_data;    /* per destination: eager messages with data */
};

static int amc_fake_enqueue(amc_fake_fabric_t *fabric, const amc_fake_msg_t *msg)
{
    amc_fake_msg_t *queue;
    size_t          capacity;

    if (fabric->queued == fabric->capacity) {
        capacity = fabric->capacity ? 2 * fabric->capacity : 64;
        queue    = realloc(fabric->queue, capacity * sizeof(*queue));
        if (queue == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        fabric->queue    = queue;
        fabric->capacity = capacity;
    }
    fabric->queue[fabric->queued++] = *msg;
    return AMC_SUCCESS;
}

static int amc_fake_send(amc_transport_t *tp, int dest, const void *hdr, size_t hdr_len,
                         const void *data, size_t len, unsigned mode, amc_completion_t *comp)
{
    amc_fake_transport_t *self   = (amc_fake_transport_t *)tp;
    amc_fake_fabric_t    *fabric = self->fabric;
    amc_fake_msg_t        msg;
    int                   status;

    if ((dest < 0) || (dest >= fabric->nranks) || (hdr_len > AMC_FAKE_HDR_MAX)) {
        return AMC_ERR_TRANSPORT;
    }

    memset(&msg, 0, sizeof(msg));
    msg.src     = tp->rank;
    msg.dst     = dest;
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
        status   = amc_fake_enqueue(fabric, &msg);
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
    if (fabric->completion == AMC_FAKE_COMPLETE_ON_DELIVERY) {
        msg.comp = comp;
    } else {
        msg.hdr_ptr = NULL; /* done at once: the sender may reuse its storage */
    }

    status = amc_fake_enqueue(fabric, &msg);
    if (status != AMC_SUCCESS) {
        free(msg.data);
        return status;
    }
    return (fabric->completion == AMC_FAKE_COMPLETE_ON_DELIVERY) ? AMC_INPROGRESS
                                                                 : AMC_SUCCESS;
}

/* A message whose data waits at the sender. */
typedef struct amc_fake_rndv {
    amc_fake_fabric_t *fabric;
    amc_fake_msg_t     msg;
} amc_fake_rndv_t;

/* Ends a rendezvous: the sender's send completes now. */
static void amc_fake_rndv_done(amc_fake_rndv_t *desc)
{
    amc_fake_fabric_t *fabric = desc->fabric;

    fabric->rndv_pending--;
    if ((desc->msg.comp != NULL) && (fabric->ranks[desc->msg.src] != NULL)) {
        desc->msg.comp->fn(desc->msg.comp, AMC_SUCCESS);
    }
    free(desc);
}

static int amc_fake_fetch(amc_transport_t *tp, void *desc_v, void *buf, size_t len,
                          amc_completion_t *comp)
{
    amc_fake_rndv_t *desc = desc_v;

    (void)tp;
    (void)comp;
    if (len != desc->msg.len) {
        amc_fake_rndv_done(desc);
        return AMC_ERR_TRANSPORT;
    }
    if (len > 0) {
        memcpy(buf, desc->msg.data, len);
    }
    amc_fake_rndv_done(desc);
    return AMC_SUCCESS;
}

static void amc_fake_release(amc_transport_t *tp, void *desc)
{
    (void)tp;
    amc_fake_rndv_done(desc);
}

/* The test drives delivery; a rank's own progress has nothing to do. */
static int amc_fake_progress(amc_transport_t *tp)
{
    (void)tp;
    return 0;
}

static void amc_fake_sleep(amc_transport_t *tp, int timeout_ms)
{
    (void)tp;
    (void)timeout_ms;
}

static void amc_fake_destroy(amc_transport_t *tp)
{
    amc_fake_transport_t *self = (amc_fake_transport_t *)tp;

    self->fabric->ranks[tp->rank] = NULL;
    free(self);
}

static const amc_transport_ops_t amc_fake_ops = {
    .send     = amc_fake_send,
    .fetch    = amc_fake_fetch,
    .release  = amc_fake_release,
    .progress = amc_fake_progress,
    .sleep    = amc_fake_sleep,
    .destroy  = amc_fake_destroy,
};

int amc_fake_fabric_create(int nranks, amc_fake_completion_t completion,
                           amc_fake_fabric_t **fabric_p)
{
    amc_fake_fabric_t *fabric;

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
    if (fabric->eager_data == NULL) {
        free(fabric->held);
        goto err_free_ranks;
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

void amc_fake_fabric_destroy(amc_fake_fabric_t *fabric)
{
    size_t i;

    if (fabric == NULL) {
        return;
    }
    for (i = 0; i < fabric->queued; i++) {
        if (fabric->queue[i].mode != AMC_SEND_RNDV) {
            free(fabric->queue[i].data); /* rndv data is the sender's buffer */
        }
    }
    free(fabric->queue);
    free(fabric->eager_data);
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
    fabric->ranks[rank] = self;
    *tp_p = &self->super;
    return AMC_SUCCESS;
}

size_t amc_fake_deliverable(const amc_fake_fabric_t *fabric)
{
    size_t i, count = 0;

    for (i = 0; i < fabric->queued; i++) {
        count += !fabric->held[fabric->queue[i].dst];
    }
    return count;
}

int amc_fake_deliver(amc_fake_fabric_t *fabric, size_t index)
{
    amc_fake_transport_t *dst;
    amc_fake_msg_t        msg;
    size_t                i;

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

    if ((msg.hdr_ptr != NULL) && (memcmp(msg.hdr_ptr, msg.hdr_copy, msg.hdr_len) != 0)) {
        fabric->violations++;
    }

    dst = fabric->ranks[msg.dst];
    fabric->delivered++;
    if (msg.mode == AMC_SEND_RNDV) {
        amc_fake_rndv_t *desc = malloc(sizeof(*desc));

        if (desc == NULL) {
            return 1; /* lost, as a dead peer's message would be */
        }
        desc->fabric = fabric;
        desc->msg    = msg;
        fabric->rndv_pending++;
        if ((dst != NULL) && (dst->super.recv_cb != NULL)) {
            dst->super.recv_cb(dst->super.recv_arg, msg.hdr_copy, msg.hdr_len, NULL, msg.len,
                               desc);
        }
        return 1;
    }
    fabric->eager_data[msg.dst] += (msg.len > 0);
    if ((dst != NULL) && (dst->super.recv_cb != NULL)) {
        dst->super.recv_cb(dst->super.recv_arg, msg.hdr_copy, msg.hdr_len, msg.data, msg.len,
                           NULL);
    }
    free(msg.data);

    if ((msg.comp != NULL) && (fabric->ranks[msg.src] != NULL)) {
        msg.comp->fn(msg.comp, AMC_SUCCESS);
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
    amc_fake_msg_t msg;

    if ((dst < 0) || (dst >= fabric->nranks) || (hdr_len > AMC_FAKE_HDR_MAX)) {
        return AMC_ERR_ARG;
    }
    memset(&msg, 0, sizeof(msg));
    msg.src     = src;
    msg.dst     = dst;
    msg.hdr_len = hdr_len;
    memcpy(msg.hdr_copy, hdr, hdr_len);
    return amc_fake_enqueue(fabric, &msg);
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

unsigned long amc_fake_delivered(const amc_fake_fabric_t *fabric)
{
    return fabric->delivered;
}
