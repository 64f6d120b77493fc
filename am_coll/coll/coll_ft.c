/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Revoke and the fault-tolerant agreement (coll_ft.h; the algorithm and why
 * it is correct: doc/design.md, "Revoke, agree and shrink").
 *
 * Every rank sends its contribution to every other rank, so whichever rank
 * ends up leading already has them all. The leader of an agreement is the
 * lowest rank this rank does not know dead; its ballot is its rank. It
 * proposes the value it accepted last, else one made from the
 * contributions, waits until every rank not known dead accepted it, then
 * commits. A rank that hears a commit passes it on before it returns, and
 * accepts (and acknowledges) proposals from its handler even after it
 * returned, so a leader that takes over never waits for a rank that left.
 */
#include "am_coll/coll/coll_ft.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/peer_watch.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

/* Agreements a rank keeps: a live rank is at most one ahead of another, so
 * four slots leave room for late messages of dead ones. */
#define AMC_FT_SLOTS 4

typedef struct amc_ft_slot {
    uint64_t       epoch;     /* 0: unused */
    int            ballot;    /* the leader whose proposal this rank accepted, -1: none */
    int            proposed;  /* this rank proposed (as leader) */
    int            decided;
    int32_t        flag;      /* AND of the contributions that came */
    uint64_t       got[AMC_FT_WORDS];     /* ranks whose contribution came */
    uint64_t       failed[AMC_FT_WORDS];  /* OR of their failed sets */
    uint64_t       acks[AMC_FT_WORDS];    /* leader: ranks that accepted its proposal */
    amc_ft_value_t accepted;
    amc_ft_value_t decision;
} amc_ft_slot_t;

struct amc_ft {
    uint64_t      epoch_last;                 /* this rank's last agreement on comm */
    uint64_t      agreed[AMC_FT_WORDS];       /* failed sets decided so far */
    amc_ft_slot_t slot[AMC_FT_SLOTS];
};

static int amc_ft_words(const struct amc_comm *comm)
{
    return (comm->size + 63) / 64;
}

static size_t amc_ft_value_len(const struct amc_comm *comm)
{
    return offsetof(amc_ft_value_t, failed) + (size_t)amc_ft_words(comm) * sizeof(uint64_t);
}

static void amc_ft_set(uint64_t *bits, int i)
{
    bits[i / 64] |= (uint64_t)1 << (i % 64);
}

/* With ctrl.lock held. */
static struct amc_ft *amc_ft_get(struct amc_comm *comm)
{
    if (comm->ft == NULL) {
        comm->ft = calloc(1, sizeof(*comm->ft)); /* once per communicator, off the hot path */
    }
    return comm->ft;
}

/* The slot of agreement epoch, NULL for a message of one long over. */
static amc_ft_slot_t *amc_ft_slot(struct amc_ft *ft, uint64_t epoch)
{
    amc_ft_slot_t *s = &ft->slot[epoch % AMC_FT_SLOTS];

    if (s->epoch > epoch) {
        return NULL;
    }
    if (s->epoch < epoch) {
        memset(s, 0, sizeof(*s));
        s->epoch  = epoch;
        s->ballot = -1;
        s->flag   = -1; /* AND's identity */
    }
    return s;
}

/* The ranks of comm this rank knows dead. */
static void amc_ft_dead(const struct amc_comm *comm, uint64_t *bits)
{
    const amc_peer_set_t *dead = &comm->ctx->tp->dead;
    int                   i;

    memset(bits, 0, AMC_FT_WORDS * sizeof(uint64_t));
    if (amc_peer_set_count(dead) == 0) {
        return;
    }
    for (i = 0; i < comm->size; i++) {
        if (amc_peer_set_test(dead, amc_comm_peer(comm, i))) {
            amc_ft_set(bits, i);
        }
    }
}

/* Whether every rank of comm is in have or in dead. */
static int amc_ft_covers(const struct amc_comm *comm, const uint64_t *have, const uint64_t *dead)
{
    int w, n = amc_ft_words(comm);

    for (w = 0; w < n; w++) {
        uint64_t all = (w < n - 1 || comm->size % 64 == 0)
                           ? ~(uint64_t)0
                           : (((uint64_t)1 << (comm->size % 64)) - 1);

        if (((have[w] | dead[w]) & all) != all) {
            return 0;
        }
    }
    return 1;
}

/* Sends an AMC_WIRE_FT message to the ranks of comm other than this one and
 * except, which dead does not hold (dead NULL: none). Queued: it goes at the
 * next flush, so this may run under the lock. */
static int amc_ft_send(struct amc_comm *comm, int type, uint64_t epoch, int root,
                       const amc_ft_value_t *value, const uint64_t *dead, int only)
{
    int            dest[AMC_FT_MAX_RANKS];
    amc_wire_hdr_t hdr;
    int            i, n = 0, status;

    if (only >= 0) {
        dest[n++] = amc_comm_peer(comm, only);
    } else {
        for (i = 0; i < comm->size; i++) {
            if ((i != comm->rank) && ((dead == NULL) || !amc_ft_bit(dead, i))) {
                dest[n++] = amc_comm_peer(comm, i);
            }
        }
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind  = AMC_WIRE_FT;
    hdr.src   = (uint32_t)comm->rank;
    hdr.cid   = comm->cid;
    hdr.seq   = epoch;
    hdr.round = (uint32_t)type;
    hdr.root  = root;
    status    = amc_coll_notice_to(comm->ctx, &hdr, value,
                                   (value != NULL) ? amc_ft_value_len(comm) : 0, dest, n);
    if (status != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "out of memory for an agreement message on communicator "
                  "0x%llx: it may not end", (unsigned long long)comm->cid);
    }
    return status;
}

/* With ctrl.lock held: the revoked mark, and the pending error the wait
 * loops look at after a pass that progressed, so that a wait ends now. */
static int amc_ft_mark_revoked(struct amc_comm *comm)
{
    int old = __atomic_fetch_or(&comm->broken, AMC_COMM_BROKEN_REVOKED, __ATOMIC_ACQ_REL);

    if (old & AMC_COMM_BROKEN_REVOKED) {
        return 0;
    }
    __atomic_store_n(&comm->ctrl.pending_err, AMC_ERR_REVOKED, __ATOMIC_RELEASE);
    return 1;
}

int amc_ft_revoke(amc_comm_t comm)
{
    uint64_t dead[AMC_FT_WORDS];
    int      status = AMC_SUCCESS;

    amc_ft_dead(comm, dead);
    amc_spin_lock(&comm->ctrl.lock);
    if (amc_ft_mark_revoked(comm)) {
        status = amc_ft_send(comm, AMC_FT_REVOKE, 0, -1, NULL, dead, -1);
    }
    amc_spin_unlock(&comm->ctrl.lock);
    amc_context_flush(comm->ctx);
    return status;
}

int amc_ft_agree_begin(amc_comm_t comm, int flag, amc_ft_agree_t *op)
{
    amc_ft_value_t mine;
    struct amc_ft *ft;
    amc_ft_slot_t *s;
    uint64_t       dead[AMC_FT_WORDS];
    int            w, status;

    if (comm->size > AMC_FT_MAX_RANKS) {
        amc_error(&comm->ctx->log, "agreement on communicator 0x%llx: %d ranks, at most %d",
                  (unsigned long long)comm->cid, comm->size, AMC_FT_MAX_RANKS);
        return AMC_ERR_UNSUPPORTED;
    }
    amc_peer_watch_poll(comm->ctx);
    amc_ft_dead(comm, dead);
    memset(&mine, 0, sizeof(mine));
    mine.flag   = flag;
    mine.leader = -1;
    memcpy(mine.failed, dead, sizeof(dead));

    amc_spin_lock(&comm->ctrl.lock);
    ft = amc_ft_get(comm);
    if (ft == NULL) {
        amc_spin_unlock(&comm->ctrl.lock);
        return AMC_ERR_NO_MEMORY;
    }
    op->comm  = comm;
    op->epoch = ++ft->epoch_last;
    s         = amc_ft_slot(ft, op->epoch);
    amc_ft_set(s->got, comm->rank);
    s->flag &= flag;
    for (w = 0; w < AMC_FT_WORDS; w++) {
        s->failed[w] |= dead[w];
    }
    status = amc_ft_send(comm, AMC_FT_CONTRIB, op->epoch, -1, &mine, dead, -1);
    amc_spin_unlock(&comm->ctrl.lock);
    amc_context_flush(comm->ctx);
    return status;
}

/* With ctrl.lock held, as the leader: the next step once its time came. */
static void amc_ft_lead(struct amc_comm *comm, amc_ft_slot_t *s, const uint64_t *dead)
{
    amc_context_t *ctx = comm->ctx;
    int            w;

    if (!s->proposed) {
        if (!amc_ft_covers(comm, s->got, dead)) {
            return;
        }
        if (s->ballot < 0) {
            /* nothing accepted: no earlier leader's value can have been
             * decided (it needed this rank's acceptance) */
            memset(&s->accepted, 0, sizeof(s->accepted));
            s->accepted.flag = s->flag;
            for (w = 0; w < AMC_FT_WORDS; w++) {
                s->accepted.failed[w] = s->failed[w] | dead[w];
            }
            if (amc_context_cid_reserve(ctx, &s->accepted.num) != AMC_SUCCESS) {
                s->accepted.num = UINT64_MAX; /* a shrink then fails with AMC_ERR_NO_MEMORY */
            }
            s->accepted.leader = amc_comm_peer(comm, comm->rank);
        }
        s->ballot   = comm->rank;
        s->proposed = 1;
        memset(s->acks, 0, sizeof(s->acks));
        amc_ft_set(s->acks, comm->rank);
        (void)amc_ft_send(comm, AMC_FT_PROPOSE, s->epoch, comm->rank, &s->accepted, dead, -1);
    }
    if (amc_ft_covers(comm, s->acks, dead)) {
        s->decided  = 1;
        s->decision = s->accepted;
        (void)amc_ft_send(comm, AMC_FT_COMMIT, s->epoch, comm->rank, &s->decision, dead, -1);
    }
}

int amc_ft_agree_test(amc_ft_agree_t *op)
{
    struct amc_comm *comm = op->comm;
    amc_ft_slot_t   *s;
    uint64_t         dead[AMC_FT_WORDS];
    int              i, w, status = AMC_INPROGRESS;

    amc_peer_watch_poll(comm->ctx);
    amc_ft_dead(comm, dead);
    amc_spin_lock(&comm->ctrl.lock);
    s = amc_ft_slot(comm->ft, op->epoch);
    if (s == NULL) {
        amc_spin_unlock(&comm->ctrl.lock);
        return AMC_ERR_PROTOCOL; /* cannot happen: a live rank is at most one ahead */
    }
    if (!s->decided) {
        for (i = 0; (i < comm->rank) && amc_ft_bit(dead, i); i++) {
        }
        if (i == comm->rank) {
            amc_ft_lead(comm, s, dead);
        }
    }
    if (s->decided) {
        op->result = s->decision;
        status     = AMC_SUCCESS;
        for (w = 0; w < AMC_FT_WORDS; w++) {
            comm->ft->agreed[w] |= s->decision.failed[w];
            if (s->decision.failed[w] != 0) {
                status = AMC_ERR_PEER;
            }
        }
    }
    amc_spin_unlock(&comm->ctrl.lock);
    amc_context_flush(comm->ctx);
    return status;
}

void amc_ft_failed(amc_comm_t comm, uint64_t *bits)
{
    int w;

    amc_peer_watch_poll(comm->ctx);
    amc_ft_dead(comm, bits);
    amc_spin_lock(&comm->ctrl.lock);
    if (comm->ft != NULL) {
        for (w = 0; w < AMC_FT_WORDS; w++) {
            bits[w] |= comm->ft->agreed[w];
        }
    }
    amc_spin_unlock(&comm->ctrl.lock);
}

/* With ctrl.lock held: one agreement message. */
static void amc_ft_on_agree(struct amc_comm *comm, struct amc_ft *ft, const amc_wire_hdr_t *hdr,
                            const amc_ft_value_t *v)
{
    amc_ft_slot_t *s = amc_ft_slot(ft, hdr->seq);
    int            src = (int)hdr->src, w;

    if (s == NULL) {
        return; /* a dead rank's message of an agreement long over */
    }
    switch (hdr->round) {
    case AMC_FT_CONTRIB:
        amc_ft_set(s->got, src);
        s->flag &= v->flag;
        for (w = 0; w < AMC_FT_WORDS; w++) {
            s->failed[w] |= v->failed[w];
        }
        break;
    case AMC_FT_PROPOSE:
        /* a later leader's ballot is higher: an earlier one's proposal
         * arriving late is not taken over it */
        if ((hdr->root == src) && (hdr->root >= s->ballot)) {
            s->ballot   = hdr->root;
            s->accepted = *v;
            (void)amc_ft_send(comm, AMC_FT_ACK, hdr->seq, hdr->root, NULL, NULL, src);
        }
        break;
    case AMC_FT_ACK:
        if (s->proposed && (hdr->root == comm->rank) && (s->ballot == comm->rank)) {
            amc_ft_set(s->acks, src);
        }
        break;
    case AMC_FT_COMMIT:
        if (!s->decided) {
            uint64_t dead[AMC_FT_WORDS];

            s->decided  = 1;
            s->decision = *v;
            /* before this rank returns: a leader that took over would
             * otherwise wait for it, or decide without it */
            amc_ft_dead(comm, dead);
            (void)amc_ft_send(comm, AMC_FT_COMMIT, hdr->seq, hdr->root, v, dead, -1);
        }
        break;
    default:
        break;
    }
}

void amc_ft_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                       size_t len)
{
    amc_ft_value_t v;
    struct amc_ft *ft;
    uint64_t       dead[AMC_FT_WORDS];
    int            with_value;
    int            bad;

    with_value = (hdr->round == AMC_FT_CONTRIB) || (hdr->round == AMC_FT_PROPOSE) ||
                 (hdr->round == AMC_FT_COMMIT);
    bad = (hdr->src >= (uint32_t)comm->size) || (hdr->src == (uint32_t)comm->rank) ||
          (hdr->round < AMC_FT_REVOKE) || (hdr->round >= AMC_FT_LAST) ||
          (comm->size > AMC_FT_MAX_RANKS) ||
          (len != (with_value ? amc_ft_value_len(comm) : 0)) ||
          ((hdr->round != AMC_FT_REVOKE) && (hdr->seq == 0)) ||
          ((hdr->round >= AMC_FT_PROPOSE) && ((hdr->root < 0) || (hdr->root >= comm->size)));
    if (bad) {
        amc_error(&comm->ctx->log, "rejected agreement message (cid=0x%llx src=%u type=%u "
                  "len=%zu)", (unsigned long long)comm->cid, (unsigned)hdr->src,
                  (unsigned)hdr->round, len);
        amc_context_set_error(comm->ctx, AMC_ERR_PROTOCOL);
        return;
    }
    memset(&v, 0, sizeof(v));
    if (with_value) {
        memcpy(&v, data, len);
    }

    amc_spin_lock(&comm->ctrl.lock);
    ft = amc_ft_get(comm);
    if (ft == NULL) {
        amc_spin_unlock(&comm->ctrl.lock);
        amc_error(&comm->ctx->log, "out of memory for the agreement state of communicator "
                  "0x%llx", (unsigned long long)comm->cid);
        return;
    }
    if (hdr->round == AMC_FT_REVOKE) {
        if (amc_ft_mark_revoked(comm)) {
            amc_debug(&comm->ctx->log, "communicator 0x%llx revoked (heard from rank %u)",
                      (unsigned long long)comm->cid, (unsigned)hdr->src);
            /* every rank that first hears it tells the others: the
             * revoker may die while it tells them */
            amc_ft_dead(comm, dead);
            (void)amc_ft_send(comm, AMC_FT_REVOKE, 0, -1, NULL, dead, -1);
        }
    } else {
        amc_ft_on_agree(comm, ft, hdr, &v);
    }
    amc_spin_unlock(&comm->ctrl.lock);
}
