/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/flow.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

static void amc_flow_credit_send(amc_flow_credit_t *credit);

static amc_flow_peer_t *amc_flow_credit_peer(amc_flow_credit_t *credit)
{
    return amc_container_of(credit, amc_flow_peer_t, credit);
}

amc_flow_peer_t *amc_flow_peer_make(amc_flow_t *flow, int peer)
{
    amc_flow_peer_t *rec = amc_sparse_get(&flow->peers, peer), *won, *head;

    if (rec != NULL) {
        return rec;
    }
    rec = calloc(1, sizeof(*rec));
    if (rec == NULL) {
        return NULL;
    }
    rec->tokens      = flow->window;
    rec->credit.flow = flow;
    rec->credit.peer = peer;
    won = amc_sparse_insert(&flow->peers, peer, rec);
    if (won != rec) {
        free(rec); /* another thread made it first, or no memory (won is NULL) */
        return won;
    }
    head = __atomic_load_n(&flow->list, __ATOMIC_ACQUIRE);
    do {
        rec->next = head;
    } while (!__atomic_compare_exchange_n(&flow->list, &head, rec, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    __atomic_add_fetch(&flow->nrecords, 1, __ATOMIC_RELAXED);
    return rec;
}

static void amc_flow_credit_done(amc_completion_t *comp, int status)
{
    amc_flow_credit_t *credit = amc_container_of(comp, amc_flow_credit_t, comp);
    amc_flow_t        *flow   = credit->flow;

    (void)status; /* a lost credit only costs eager sends, never correctness */
    __atomic_store_n(&credit->busy, 0, __ATOMIC_RELEASE);
    if (__atomic_load_n(&amc_flow_credit_peer(credit)->owed, __ATOMIC_RELAXED) * 2 >=
        flow->window) {
        amc_flow_credit_send(credit);
    }
}

static void amc_flow_credit_send(amc_flow_credit_t *credit)
{
    amc_transport_t *tp = credit->flow->tp;
    amc_wire_hdr_t   hdr;
    uint32_t         n;
    size_t           len;
    int              status;

    if (__atomic_exchange_n(&credit->busy, 1, __ATOMIC_ACQ_REL)) {
        return; /* one in flight: its completion looks again */
    }
    n = __atomic_exchange_n(&amc_flow_credit_peer(credit)->owed, 0, __ATOMIC_ACQ_REL);
    if (n == 0) {
        __atomic_store_n(&credit->busy, 0, __ATOMIC_RELEASE);
        return;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind        = AMC_WIRE_CREDIT;
    hdr.src         = (uint32_t)tp->rank; /* no communicator: the transport rank */
    hdr.root        = -1;
    len             = amc_wire_add_credits(&credit->wire, amc_wire_pack(&hdr, &credit->wire), n);
    credit->comp.fn = amc_flow_credit_done;
    status = tp->ops->send(tp, credit->peer, &credit->wire, len, NULL, 0, AMC_SEND_EAGER,
                           &credit->comp);
    if (status != AMC_INPROGRESS) {
        __atomic_store_n(&credit->busy, 0, __ATOMIC_RELEASE);
    }
}

int amc_flow_init(amc_flow_t *flow, amc_transport_t *tp, int npeers, unsigned window,
                  size_t unit, const int *live)
{
    flow->live     = live;
    flow->tp       = tp;
    flow->window   = window;
    flow->unit     = unit;
    flow->any_due  = 0;
    flow->list     = NULL;
    flow->nrecords = 0;
    return amc_sparse_init(&flow->peers, npeers);
}

void amc_flow_cleanup(amc_flow_t *flow)
{
    amc_flow_peer_t *rec;

    while ((rec = flow->list) != NULL) {
        flow->list = rec->next;
        free(rec);
    }
    amc_sparse_cleanup(&flow->peers);
    flow->nrecords = 0;
}

void amc_flow_release_due(amc_flow_t *flow, amc_flow_peer_t *rec)
{
    /* sent by amc_flow_flush, once no lock is held (see defer.h) */
    __atomic_store_n(&rec->credit.due, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&flow->any_due, 1, __ATOMIC_RELEASE);
}

uint32_t amc_flow_tokens(const amc_flow_t *flow, int peer)
{
    const amc_flow_peer_t *rec = amc_sparse_get(&flow->peers, peer);

    return (rec != NULL) ? __atomic_load_n(&rec->tokens, __ATOMIC_ACQUIRE) : flow->window;
}

uint32_t amc_flow_owed(const amc_flow_t *flow, int peer)
{
    const amc_flow_peer_t *rec = amc_sparse_get(&flow->peers, peer);

    return (rec != NULL) ? __atomic_load_n(&rec->owed, __ATOMIC_ACQUIRE) : 0;
}

unsigned amc_flow_peers(const amc_flow_t *flow)
{
    return __atomic_load_n(&flow->nrecords, __ATOMIC_RELAXED);
}

size_t amc_flow_bytes(const amc_flow_t *flow)
{
    return (size_t)amc_flow_peers(flow) * sizeof(amc_flow_peer_t) + amc_sparse_bytes(&flow->peers);
}

void amc_flow_flush_slow(amc_flow_t *flow)
{
    amc_flow_peer_t *rec;

    if (!__atomic_exchange_n(&flow->any_due, 0, __ATOMIC_ACQ_REL)) {
        return;
    }
    for (rec = __atomic_load_n(&flow->list, __ATOMIC_ACQUIRE); rec != NULL; rec = rec->next) {
        if (__atomic_load_n(&rec->credit.due, __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&rec->credit.due, 0, __ATOMIC_ACQ_REL)) {
            amc_flow_credit_send(&rec->credit);
        }
    }
}
