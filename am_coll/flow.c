#include "am_coll/flow.h"
#include "am_coll/context.h"
#include "base/status.h"

#include <stdlib.h>

static void amc_flow_credit_send(amc_flow_credit_t *credit);

static void amc_flow_credit_done(amc_completion_t *comp, int status)
{
    amc_flow_credit_t *credit = amc_container_of(comp, amc_flow_credit_t, comp);
    amc_flow_t        *flow   = &credit->ctx->flow;

    (void)status; /* a lost credit only costs eager sends, never correctness */
    __atomic_store_n(&credit->busy, 0, __ATOMIC_RELEASE);
    if (__atomic_load_n(&flow->owed[credit->peer], __ATOMIC_RELAXED) * 2 >= flow->window) {
        amc_flow_credit_send(credit);
    }
}

static void amc_flow_credit_send(amc_flow_credit_t *credit)
{
    amc_context_t   *ctx = credit->ctx;
    amc_transport_t *tp  = ctx->tp;
    uint32_t         n;
    int              status;

    if (__atomic_exchange_n(&credit->busy, 1, __ATOMIC_ACQ_REL)) {
        return; /* one in flight: its completion looks again */
    }
    n = __atomic_exchange_n(&ctx->flow.owed[credit->peer], 0, __ATOMIC_ACQ_REL);
    if (n == 0) {
        __atomic_store_n(&credit->busy, 0, __ATOMIC_RELEASE);
        return;
    }
    credit->hdr.magic   = AMC_WIRE_MAGIC;
    credit->hdr.version = AMC_WIRE_VERSION;
    credit->hdr.kind    = AMC_WIRE_CREDIT;
    credit->hdr.src     = (uint32_t)tp->rank; /* no communicator: the transport rank */
    credit->hdr.root    = -1;
    credit->hdr.credits = n;
    credit->comp.fn     = amc_flow_credit_done;
    status = tp->ops->send(tp, credit->peer, &credit->hdr, sizeof(credit->hdr), NULL, 0,
                           AMC_SEND_EAGER, &credit->comp);
    if (status != AMC_INPROGRESS) {
        __atomic_store_n(&credit->busy, 0, __ATOMIC_RELEASE);
    }
}

int amc_flow_init(amc_flow_t *flow, amc_context_t *ctx, int npeers, unsigned window,
                  const int *live)
{
    int i;

    flow->live   = live;
    flow->window = window;
    flow->npeers = npeers;
    flow->any_due = 0;
    flow->tokens = calloc((size_t)npeers, sizeof(*flow->tokens));
    flow->owed   = calloc((size_t)npeers, sizeof(*flow->owed));
    flow->credit = calloc((size_t)npeers, sizeof(*flow->credit));
    if ((flow->tokens == NULL) || (flow->owed == NULL) || (flow->credit == NULL)) {
        amc_flow_cleanup(flow);
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < npeers; i++) {
        flow->tokens[i]      = window;
        flow->credit[i].ctx  = ctx;
        flow->credit[i].peer = i;
    }
    return AMC_SUCCESS;
}

void amc_flow_cleanup(amc_flow_t *flow)
{
    free(flow->tokens);
    free(flow->owed);
    free(flow->credit);
    flow->tokens = NULL;
    flow->owed   = NULL;
    flow->credit = NULL;
}

int amc_flow_take(amc_flow_t *flow, int peer)
{
    return amc_live_take_u32(&flow->tokens[peer], flow->live);
}

uint32_t amc_flow_piggyback(amc_flow_t *flow, int peer)
{
    if (__atomic_load_n(&flow->owed[peer], __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    return amc_live_xchg_u32(&flow->owed[peer], 0, flow->live);
}

void amc_flow_give(amc_flow_t *flow, int peer, uint32_t credits)
{
    if (credits > 0) {
        (void)amc_live_add_u32(&flow->tokens[peer], credits, flow->live);
    }
}

void amc_flow_release(amc_flow_t *flow, int peer)
{
    uint32_t owed = amc_live_add_u32(&flow->owed[peer], 1, flow->live);

    if (owed * 2 >= flow->window) {
        /* sent by amc_flow_flush, once no lock is held (see defer.h) */
        __atomic_store_n(&flow->credit[peer].due, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&flow->any_due, 1, __ATOMIC_RELEASE);
    }
}

void amc_flow_flush_slow(amc_flow_t *flow)
{
    int i;

    if (!__atomic_exchange_n(&flow->any_due, 0, __ATOMIC_ACQ_REL)) {
        return;
    }
    for (i = 0; i < flow->npeers; i++) {
        if (__atomic_load_n(&flow->credit[i].due, __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&flow->credit[i].due, 0, __ATOMIC_ACQ_REL)) {
            amc_flow_credit_send(&flow->credit[i]);
        }
    }
}
