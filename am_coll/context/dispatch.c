/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the header handler's table (handlers/am_handler.h) calls for this
 * context: a message for a communicator is found by its context id and
 * handed to its engine (the barrier's or the schedules', through the
 * context's table of them: engines.h), or held until this
 * rank creates that communicator; a credit message goes to flow control.
 */
#include "am_coll/context/dispatch.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/comm_table.h"

static void amc_dispatch_to_comm(struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                                 const void *data, size_t len, void *desc)
{
    if (hdr->kind == AMC_WIRE_BARRIER) {
        if (desc != NULL) {
            /* the barrier's rounds carry at most a few words, always eager */
            amc_context_release_desc(comm->ctx, desc);
            data = NULL;
            len  = (len != 0) ? SIZE_MAX : 0;
        }
        comm->ctx->engines.barrier_arrival(comm, hdr, data, len);
    } else {
        comm->ctx->engines.coll_arrival(comm, hdr, data, len, desc);
    }
}

static void amc_dispatch_reject(void *arg, const char *why, const amc_wire_hdr_t *hdr,
                                void *desc)
{
    amc_context_t *ctx = arg;

    if (desc != NULL) {
        amc_context_release_desc(ctx, desc); /* the sender must not wait for ever */
    }
    if (hdr != NULL) {
        amc_error(&ctx->log, "rejected message (cid=0x%llx seq=%llu round=%u src=%u): %s",
                  (unsigned long long)hdr->cid, (unsigned long long)hdr->seq,
                  (unsigned)hdr->round, (unsigned)hdr->src, why);
    } else {
        amc_error(&ctx->log, "rejected message: %s", why);
    }
    amc_context_set_error(ctx, AMC_ERR_PROTOCOL);
}

static void amc_dispatch_comm_msg(void *arg, const amc_wire_hdr_t *hdr, const void *data,
                                  size_t len, void *desc)
{
    amc_context_t   *ctx = arg;
    struct amc_comm *comm;
    int              status;

    comm = amc_context_lookup(ctx, hdr->cid);
    if (comm != NULL) {
        amc_dispatch_to_comm(comm, hdr, data, len, desc);
        amc_context_unlookup(ctx, comm);
        return;
    }
    if (amc_context_cid_is_dead(ctx, hdr->cid)) {
        amc_dispatch_reject(ctx, "communicator already freed", hdr, desc);
        return;
    }
    /* a peer may use a communicator before this rank has created it */
    status = amc_context_hold_orphan(ctx, hdr->cid, hdr, sizeof(*hdr), data, len, desc, &comm);
    if ((status == AMC_SUCCESS) && (comm != NULL)) {
        amc_dispatch_to_comm(comm, hdr, data, len, desc);
        amc_context_unlookup(ctx, comm);
        return;
    }
    if (status != AMC_SUCCESS) {
        amc_dispatch_reject(ctx, "unknown communicator and no room to hold its messages "
                            "(AMC_ORPHAN_MAX)", hdr, desc);
    }
}

/* Revoke and agreement (AMC_WIRE_FT): a handler of their own, so that the
 * collectives' messages pay no test for them. */
static void amc_dispatch_ft_to_comm(struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                                    const void *data, size_t len, void *desc)
{
    if (desc != NULL) {
        /* never sent by rendezvous: read as a message too long */
        amc_context_release_desc(comm->ctx, desc);
        data = NULL;
        len  = SIZE_MAX;
    }
    comm->ctx->engines.ft_arrival(comm, hdr, data, len);
}

static void amc_dispatch_ft_msg(void *arg, const amc_wire_hdr_t *hdr, const void *data,
                                size_t len, void *desc)
{
    amc_context_t   *ctx = arg;
    struct amc_comm *comm;
    int              status;

    comm = amc_context_lookup(ctx, hdr->cid);
    if (comm == NULL) {
        if (amc_context_cid_is_dead(ctx, hdr->cid)) {
            /* a revoke's or an agreement's echo after this rank freed the
             * communicator it left behind: nothing waits for it here */
            if (desc != NULL) {
                amc_context_release_desc(ctx, desc);
            }
            return;
        }
        /* a revoke may come before this rank made the communicator */
        status = amc_context_hold_orphan(ctx, hdr->cid, hdr, sizeof(*hdr), data, len, desc,
                                         &comm);
        if (status != AMC_SUCCESS) {
            amc_dispatch_reject(ctx, "unknown communicator and no room to hold its messages "
                                "(AMC_ORPHAN_MAX)", hdr, desc);
            return;
        }
        if (comm == NULL) {
            return;
        }
    }
    amc_dispatch_ft_to_comm(comm, hdr, data, len, desc);
    amc_context_unlookup(ctx, comm);
}

static void amc_dispatch_credit(void *arg, const amc_wire_hdr_t *hdr, const void *data,
                                size_t len, void *desc)
{
    amc_context_t *ctx = arg;

    (void)data;
    (void)len;
    if ((hdr->src >= (uint32_t)ctx->tp->size) || (desc != NULL)) {
        amc_dispatch_reject(ctx, "bad credit message", hdr, desc);
        return;
    }
    amc_flow_give(&ctx->flow, (int)hdr->src, hdr->credits);
}

/* A peer found rank hdr->root dead: marked as if this rank had seen it,
 * told first so that it is not passed on again (peer_watch.c). */
static void amc_dispatch_dead(void *arg, const amc_wire_hdr_t *hdr, const void *data,
                              size_t len, void *desc)
{
    amc_context_t   *ctx = arg;
    amc_transport_t *tp  = ctx->tp;

    (void)data;
    if ((hdr->src >= (uint32_t)tp->size) || (hdr->root < 0) || (hdr->root >= tp->size) ||
        (hdr->root == tp->rank) || (hdr->src == (uint32_t)hdr->root) || (len != 0) ||
        (desc != NULL)) {
        amc_dispatch_reject(ctx, "bad death notice", hdr, desc);
        return;
    }
    (void)amc_peer_set_mark(&ctx->dead_told, hdr->root);
    if (amc_peer_set_mark(&tp->dead, hdr->root)) {
        amc_info(&ctx->log, "rank %d says rank %d died", (int)hdr->src, (int)hdr->root);
    }
}

static void amc_dispatch_flush(void *arg)
{
    amc_context_flush(arg);
}

void amc_dispatch_init(amc_context_t *ctx)
{
    amc_am_table_init(&ctx->am, amc_dispatch_reject, amc_dispatch_flush, ctx);
    amc_am_register(&ctx->am, AMC_WIRE_BARRIER, amc_dispatch_comm_msg, ctx);
    amc_am_register(&ctx->am, AMC_WIRE_COLL, amc_dispatch_comm_msg, ctx);
    amc_am_register(&ctx->am, AMC_WIRE_FT, amc_dispatch_ft_msg, ctx);
    amc_am_register(&ctx->am, AMC_WIRE_CREDIT, amc_dispatch_credit, ctx);
    amc_am_register(&ctx->am, AMC_WIRE_DEAD, amc_dispatch_dead, ctx);
}

void amc_dispatch_replay(amc_context_t *ctx, struct amc_comm *comm, const void *hdr_bytes,
                         const void *data, size_t len, void *desc)
{
    amc_wire_hdr_t hdr;

    amc_am_decode(hdr_bytes, &hdr);
    if (hdr.kind == AMC_WIRE_FT) {
        amc_dispatch_ft_to_comm(comm, &hdr, data, len, desc);
    } else {
        amc_dispatch_to_comm(comm, &hdr, data, len, desc);
    }
    amc_context_flush(ctx);
}
