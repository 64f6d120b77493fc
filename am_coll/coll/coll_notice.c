/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Abort notices: a rank that gives up a data collective's instance (its
 * call failed its own argument checks, or it found that the ranks' calls
 * differ) tells every other rank of the communicator. Without it, a rank
 * that waits for a message of the abandoned instance, and never sees the
 * cause itself, would wait for ever (AMC_TIMEOUT is off by default): the
 * children of a rank that stopped forwarding, the partners of a rank that
 * runs another algorithm.
 *
 * A notice is one header-only message per peer (AMC_WIRE_FLAG_ABORT, the
 * error in hdr.status). It is decided under the control structure's lock
 * and sent by the next amc_context_flush, once no lock is held (defer.h).
 * A rank that receives one does not pass it on: the rank that gave up told
 * everyone itself.
 *
 * Death notices: a rank that finds a peer dead by its own means (the pid of
 * a peer on its node, UCX's error on an endpoint to another node, PMIx)
 * tells every live rank of the job once (AMC_WIRE_DEAD, the dead transport
 * rank in hdr.root). A rank on another node with no endpoint to the dead
 * one would otherwise wait for its message for ever; one that hears it
 * marks the rank dead as if it had seen it, and does not pass it on.
 */
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

typedef struct amc_coll_notice {
    struct amc_coll_notice  *next;     /* the context's notices in flight */
    struct amc_coll_notice **prev;
    amc_context_t           *ctx;
    amc_defer_op_t           op;       /* queued until no lock is held */
    amc_completion_t         comp;     /* every send of it completes here */
    amc_wire_packed_t        wire;     /* one header for all: alive until the last send
                                        * completes */
    size_t                   wire_len;
    const void              *data;     /* after dest[], or NULL */
    size_t                   len;
    uint32_t                 left;     /* sends not complete, plus one while they are posted */
    int                      ndest;
    int                      dest[];   /* transport ranks: the communicator may be gone by
                                        * then */
} amc_coll_notice_t;

static void amc_coll_notice_unlink(amc_coll_notice_t *notice)
{
    if (notice->next != NULL) {
        notice->next->prev = notice->prev;
    }
    *notice->prev = notice->next;
}

static void amc_coll_notice_put(amc_coll_notice_t *notice, uint32_t count)
{
    amc_context_t *ctx = notice->ctx;

    if (__atomic_sub_fetch(&notice->left, count, __ATOMIC_ACQ_REL) == 0) {
        amc_spin_lock(&ctx->notice_lock);
        amc_coll_notice_unlink(notice);
        amc_spin_unlock(&ctx->notice_lock);
        free(notice);
    }
}

void amc_coll_notices_free(amc_context_t *ctx)
{
    amc_coll_notice_t *notice;

    while ((notice = ctx->notices) != NULL) {
        amc_coll_notice_unlink(notice);
        free(notice);
    }
}

static void amc_coll_notice_on_complete(amc_completion_t *comp, int status)
{
    (void)status; /* a lost notice costs only what it would have saved */
    amc_coll_notice_put(amc_container_of(comp, amc_coll_notice_t, comp), 1);
}

static void amc_coll_notice_send(amc_defer_op_t *op, amc_transport_t *tp)
{
    amc_coll_notice_t *notice = amc_container_of(op, amc_coll_notice_t, op);
    uint32_t           done   = 0;
    int                i, status;

    for (i = 0; i < notice->ndest; i++) {
        status = (tp == NULL) ? AMC_ERR_TRANSPORT
                              : tp->ops->send(tp, notice->dest[i], &notice->wire,
                                              notice->wire_len, notice->data, notice->len,
                                              AMC_SEND_EAGER, &notice->comp);
        done += (status != AMC_INPROGRESS);
    }
    amc_coll_notice_put(notice, done + 1);
}

/* Sends hdr to the notice's ndest ranks from the next flush, tracked until
 * every send completes: a transport torn down with them pending never
 * completes them (amc_coll_notices_free). */
static void amc_coll_notice_post(amc_context_t *ctx, amc_coll_notice_t *notice,
                                 const amc_wire_hdr_t *hdr)
{
    notice->wire_len = amc_wire_pack(hdr, &notice->wire);
    notice->comp.fn  = amc_coll_notice_on_complete;
    notice->left     = (uint32_t)notice->ndest + 1;
    notice->ctx      = ctx;
    amc_spin_lock(&ctx->notice_lock);
    notice->next = ctx->notices;
    notice->prev = &ctx->notices;
    if (notice->next != NULL) {
        notice->next->prev = &notice->next;
    }
    ctx->notices = notice;
    amc_spin_unlock(&ctx->notice_lock);
    if (amc_defer_call(&ctx->defer, &notice->op, amc_coll_notice_send) != AMC_SUCCESS) {
        amc_coll_notice_put(notice, notice->left); /* finalizing: nobody is left to tell */
    }
}

static amc_coll_notice_t *amc_coll_notice_new_data(int ndest, const void *data, size_t len)
{
    size_t             off = sizeof(amc_coll_notice_t) + (size_t)ndest * sizeof(int);
    amc_coll_notice_t *notice;

    off = (off + 7) & ~(size_t)7;
    /* off the common path: a malloc under the lock is acceptable here */
    notice = malloc(off + len);
    if (notice != NULL) {
        notice->data = (len > 0) ? (char *)notice + off : NULL;
        notice->len  = len;
        if (len > 0) {
            memcpy((char *)notice + off, data, len);
        }
    }
    return notice;
}

static amc_coll_notice_t *amc_coll_notice_new(int ndest)
{
    return amc_coll_notice_new_data(ndest, NULL, 0);
}

int amc_coll_notice_to(amc_context_t *ctx, const amc_wire_hdr_t *hdr, const void *data,
                         size_t len, const int *dest, int ndest)
{
    amc_coll_notice_t *notice;

    if (ndest <= 0) {
        return AMC_SUCCESS;
    }
    notice = amc_coll_notice_new_data(ndest, data, len);
    if (notice == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    memcpy(notice->dest, dest, (size_t)ndest * sizeof(int));
    notice->ndest = ndest;
    amc_coll_notice_post(ctx, notice, hdr);
    return AMC_SUCCESS;
}

void amc_coll_notify_abort(amc_comm_t comm, uint64_t seq, uint8_t coll, int32_t root,
                           int status)
{
    amc_coll_notice_t *notice;
    amc_wire_hdr_t     hdr;
    int                i, n = 0;

    if (comm->size <= 1) {
        return;
    }
    notice = amc_coll_notice_new(comm->size - 1);
    if (notice == NULL) {
        amc_error(&comm->ctx->log, "out of memory for the abort notice of %s seq %llu: peers "
                  "waiting for this rank's part wait until AMC_TIMEOUT",
                  amc_coll_name(coll), (unsigned long long)seq);
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind   = AMC_WIRE_COLL;
    hdr.coll   = coll;
    hdr.src    = (uint32_t)comm->rank;
    hdr.cid    = comm->cid;
    hdr.seq    = seq;
    hdr.root   = root;
    hdr.flags  = AMC_WIRE_FLAG_ABORT;
    hdr.status = (uint8_t)status;
    for (i = 0; i < comm->size; i++) {
        if (i != comm->rank) {
            notice->dest[n++] = amc_comm_peer(comm, i);
        }
    }
    notice->ndest = n;
    amc_coll_notice_post(comm->ctx, notice, &hdr);
}

void amc_coll_notify_dead(amc_context_t *ctx, int dead)
{
    amc_transport_t   *tp = ctx->tp;
    amc_coll_notice_t *notice;
    amc_wire_hdr_t     hdr;
    int                r, n = 0;

    notice = amc_coll_notice_new(tp->size);
    if (notice == NULL) {
        amc_error(&ctx->log, "out of memory for the notice of rank %d's death: peers that "
                  "cannot see it wait for it until AMC_TIMEOUT", dead);
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind = AMC_WIRE_DEAD;
    hdr.src  = (uint32_t)tp->rank; /* no communicator: transport ranks */
    hdr.root = dead;
    for (r = 0; r < tp->size; r++) {
        if ((r != tp->rank) && !amc_peer_set_test(&tp->dead, r)) {
            notice->dest[n++] = r;
        }
    }
    notice->ndest = n;
    amc_coll_notice_post(ctx, notice, &hdr);
}

int amc_coll_notice_status(const amc_wire_hdr_t *hdr)
{
    /* from the wire: only an error code is taken as one */
    return ((hdr->status > AMC_SUCCESS) && (hdr->status < AMC_ERR_LAST)) ? hdr->status
                                                                         : AMC_ERR_PROTOCOL;
}
