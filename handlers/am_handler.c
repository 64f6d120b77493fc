#include "handlers/am_handler.h"
#include "handlers/barrier_handler.h"
#include "handlers/coll_handler.h"
#include "handlers/wire.h"
#include "am_coll/comm.h"
#include "am_coll/context.h"

#include <string.h>

static inline void amc_am_dispatch(struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                                   const void *data, size_t len, void *desc)
{
    if (hdr->kind == AMC_WIRE_BARRIER) {
        if (desc != NULL) {
            amc_context_release_desc(comm->ctx, desc); /* barriers carry no data */
        }
        amc_barrier_on_arrival(comm, hdr);
    } else {
        amc_coll_on_arrival(comm, hdr, data, len, desc);
    }
}

static void amc_am_reject(amc_context_t *ctx, const char *why, const amc_wire_hdr_t *hdr,
                          void *desc)
{
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

static void amc_am_recv_one(amc_context_t *ctx, const void *hdr_bytes, size_t hdr_len,
                            const void *data, size_t len, void *desc)
{
    amc_wire_hdr_t  hdr;
    struct amc_comm *comm;
    int             status;

    if (hdr_len != sizeof(hdr)) {
        amc_am_reject(ctx, (hdr_len < sizeof(hdr)) ? "truncated header" : "oversized header",
                      NULL, desc);
        return;
    }
    /* the transport's header may be unaligned */
    memcpy(&hdr, hdr_bytes, sizeof(hdr));
    if ((hdr.magic != AMC_WIRE_MAGIC) || (hdr.version != AMC_WIRE_VERSION)) {
        amc_am_reject(ctx, "bad magic or wire version", NULL, desc);
        return;
    }
    if (hdr.kind == AMC_WIRE_CREDIT) {
        if ((hdr.src >= (uint32_t)ctx->tp->size) || (desc != NULL)) {
            amc_am_reject(ctx, "bad credit message", &hdr, desc);
            return;
        }
        amc_flow_give(&ctx->flow, (int)hdr.src, hdr.credits);
        return;
    }
    if ((hdr.kind != AMC_WIRE_BARRIER) && (hdr.kind != AMC_WIRE_COLL)) {
        amc_am_reject(ctx, "unknown message kind", &hdr, desc);
        return;
    }

    comm = amc_context_lookup(ctx, hdr.cid);
    if (comm != NULL) {
        amc_am_dispatch(comm, &hdr, data, len, desc);
        amc_context_unlookup(ctx, comm);
        return;
    }

    if (amc_context_cid_is_dead(ctx, hdr.cid)) {
        amc_am_reject(ctx, "communicator already freed", &hdr, desc);
        return;
    }
    /* a peer may use a communicator before this rank has created it */
    status = amc_context_hold_orphan(ctx, hdr.cid, &hdr, sizeof(hdr), data, len, desc, &comm);
    if ((status == AMC_SUCCESS) && (comm != NULL)) {
        amc_am_dispatch(comm, &hdr, data, len, desc);
        amc_context_unlookup(ctx, comm);
        return;
    }
    if (status != AMC_SUCCESS) {
        amc_am_reject(ctx, "unknown communicator and no room to hold its messages "
                      "(AMC_ORPHAN_MAX)", &hdr, desc);
    }
}

void amc_am_recv(void *arg, const void *hdr_bytes, size_t hdr_len, const void *data, size_t len,
                 void *desc)
{
    amc_context_t *ctx = arg;

    amc_am_recv_one(ctx, hdr_bytes, hdr_len, data, len, desc);
    /* what the handler queued under its locks (am_coll/defer.h) */
    amc_context_flush(ctx);
}

void amc_am_dispatch_bytes(amc_context_t *ctx, struct amc_comm *comm,
                           const void *hdr_bytes, size_t hdr_len, const void *data, size_t len,
                           void *desc)
{
    amc_wire_hdr_t hdr;

    (void)hdr_len; /* checked before it was held */
    memcpy(&hdr, hdr_bytes, sizeof(hdr));
    amc_am_dispatch(comm, &hdr, data, len, desc);
    amc_context_flush(ctx);
}
