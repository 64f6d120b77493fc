/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/sched/sched.h"

#include <stdlib.h>
#include <string.h>

const char *amc_coll_name(int coll)
{
    static const char *names[AMC_COLL_LAST] = {
        [AMC_COLL_NONE] = "none",
        [AMC_COLL_BCAST] = "bcast",
        [AMC_COLL_REDUCE] = "reduce",
        [AMC_COLL_ALLREDUCE] = "allreduce",
        [AMC_COLL_GATHER] = "gather",
        [AMC_COLL_GATHERV] = "gatherv",
        [AMC_COLL_SCATTER] = "scatter",
        [AMC_COLL_SCATTERV] = "scatterv",
        [AMC_COLL_ALLGATHER] = "allgather",
        [AMC_COLL_ALLGATHERV] = "allgatherv",
        [AMC_COLL_ALLTOALL] = "alltoall",
        [AMC_COLL_ALLTOALLV] = "alltoallv",
        [AMC_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
        [AMC_COLL_REDUCE_SCATTER] = "reduce_scatter",
        [AMC_COLL_SCAN] = "scan",
        [AMC_COLL_EXSCAN] = "exscan",
        [AMC_COLL_BARRIER] = "barrier",
        [AMC_COLL_GOAL] = "goal",
    };

    return ((coll >= 0) && (coll < AMC_COLL_LAST) && (names[coll] != NULL)) ? names[coll] : "?";
}

int amc_sb_init(amc_sched_builder_t *b)
{
    memset(b, 0, sizeof(*b));
    b->sched = calloc(1, sizeof(*b->sched));
    if (b->sched == NULL) {
        b->status = AMC_ERR_NO_MEMORY;
        return b->status;
    }
    return AMC_SUCCESS;
}

static int amc_sb_grow(void **array, uint32_t *cap, uint32_t need, size_t elem)
{
    uint32_t cap_new;
    void    *grown;

    if (need <= *cap) {
        return AMC_SUCCESS;
    }
    cap_new = (*cap != 0) ? *cap : 8;
    while (cap_new < need) {
        cap_new *= 2;
    }
    grown = realloc(*array, (size_t)cap_new * elem);
    if (grown == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    *array = grown;
    *cap   = cap_new;
    return AMC_SUCCESS;
}

static void amc_sb_new_round(amc_sched_builder_t *b, int implicit)
{
    amc_sched_t       *s = b->sched;
    amc_sched_round_t *round;

    if (b->status != AMC_SUCCESS) {
        return;
    }
    b->status = amc_sb_grow((void **)&s->rounds, &b->cap_rounds, s->nrounds + 1,
                            sizeof(*s->rounds));
    if (b->status != AMC_SUCCESS) {
        return;
    }
    round = &s->rounds[s->nrounds++];
    memset(round, 0, sizeof(*round));
    round->first    = s->nacts;
    round->implicit = (uint8_t)implicit;
}

void amc_sb_round(amc_sched_builder_t *b)
{
    amc_sb_new_round(b, 1);
}

void amc_sb_stage(amc_sched_builder_t *b)
{
    amc_sb_new_round(b, 0);
}

int amc_sb_last(const amc_sched_builder_t *b)
{
    return ((b->status == AMC_SUCCESS) && (b->sched->nacts > 0)) ? (int)b->sched->nacts - 1 : -1;
}

static void amc_sb_edge(amc_sched_builder_t *b, uint32_t act, uint32_t dep)
{
    if (b->status != AMC_SUCCESS) {
        return;
    }
    b->status = amc_sb_grow((void **)&b->edges, &b->cap_edges, b->nedges + 1,
                            sizeof(*b->edges));
    if (b->status == AMC_SUCCESS) {
        b->edges[b->nedges].act = act;
        b->edges[b->nedges].dep = dep;
        b->nedges++;
    }
}

void amc_sb_requires(amc_sched_builder_t *b, int act, int dep)
{
    if ((b->status == AMC_SUCCESS) && ((act < 0) || (dep < 0) || (dep >= act) ||
                                       ((uint32_t)act >= b->sched->nacts))) {
        b->status = AMC_ERR_ARG; /* a builder bug: edges point backwards */
        return;
    }
    amc_sb_edge(b, (uint32_t)act, (uint32_t)dep);
}

static amc_sched_act_t *amc_sb_act(amc_sched_builder_t *b, int type)
{
    amc_sched_t     *s = b->sched;
    amc_sched_act_t *act;

    if (b->status != AMC_SUCCESS) {
        return NULL;
    }
    if (s->nrounds == 0) {
        amc_sb_round(b);
        if (b->status != AMC_SUCCESS) {
            return NULL;
        }
    }
    b->status = amc_sb_grow((void **)&s->acts, &b->cap_acts, s->nacts + 1, sizeof(*s->acts));
    if (b->status != AMC_SUCCESS) {
        return NULL;
    }
    act = &s->acts[s->nacts++];
    memset(act, 0, sizeof(*act));
    act->type  = (uint8_t)type;
    act->round = s->nrounds - 1;
    s->rounds[s->nrounds - 1].count++;
    return act;
}

void amc_sb_send(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes)
{
    amc_sched_act_t *act = amc_sb_act(b, AMC_ACT_SEND);

    if (act != NULL) {
        act->peer  = peer;
        act->buf   = (uint8_t)buf;
        act->off   = off;
        act->bytes = bytes;
        b->sched->rounds[b->sched->nrounds - 1].nsend++;
    }
}

static void amc_sb_recv_any(amc_sched_builder_t *b, int type, int peer, int buf, size_t off,
                            size_t bytes)
{
    amc_sched_act_t *act = amc_sb_act(b, type);

    if (act != NULL) {
        act->peer  = peer;
        act->buf   = (uint8_t)buf;
        act->off   = off;
        act->bytes = bytes;
        b->sched->rounds[b->sched->nrounds - 1].nrecv++;
    }
}

void amc_sb_recv(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes)
{
    amc_sb_recv_any(b, AMC_ACT_RECV, peer, buf, off, bytes);
}

void amc_sb_recv_reduce(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes,
                        int right)
{
    amc_sb_recv_any(b, right ? AMC_ACT_RECV_REDUCE_R : AMC_ACT_RECV_REDUCE, peer, buf, off,
                    bytes);
}

static void amc_sb_local(amc_sched_builder_t *b, int type, int dst, size_t dst_off, int src,
                         size_t src_off, size_t bytes)
{
    amc_sched_act_t *act;

    if (bytes == 0) {
        return;
    }
    act = amc_sb_act(b, type);
    if (act != NULL) {
        act->buf   = (uint8_t)dst;
        act->off   = dst_off;
        act->buf2  = (uint8_t)src;
        act->off2  = src_off;
        act->bytes = bytes;
    }
}

void amc_sb_copy(amc_sched_builder_t *b, int dst, size_t dst_off, int src, size_t src_off,
                 size_t bytes)
{
    if ((dst != src) || (dst_off != src_off)) {
        amc_sb_local(b, AMC_ACT_COPY, dst, dst_off, src, src_off, bytes);
    }
}

void amc_sb_reduce(amc_sched_builder_t *b, int dst, size_t dst_off, int src, size_t src_off,
                   size_t bytes, int right)
{
    amc_sb_local(b, right ? AMC_ACT_REDUCE_R : AMC_ACT_REDUCE, dst, dst_off, src, src_off,
                 bytes);
}

/* A stamp or its check: value at buf[off], AMC_SCHED_STAMP_BYTES. */
static void amc_sb_stamp_act(amc_sched_builder_t *b, int type, int buf, size_t off,
                             uint64_t value, int peer)
{
    amc_sched_act_t *act = amc_sb_act(b, type);

    if (act != NULL) {
        act->buf   = (uint8_t)buf;
        act->off   = off;
        act->off2  = (size_t)value;
        act->bytes = AMC_SCHED_STAMP_BYTES;
        act->peer  = peer;
    }
}

void amc_sb_stamp(amc_sched_builder_t *b, int buf, size_t off, uint64_t value)
{
    amc_sb_stamp_act(b, AMC_ACT_STAMP, buf, off, value, 0);
}

void amc_sb_check(amc_sched_builder_t *b, int buf, size_t off, uint64_t value, int peer)
{
    amc_sb_stamp_act(b, AMC_ACT_CHECK, buf, off, value, peer);
}

void amc_sb_exact(amc_sched_builder_t *b, int act)
{
    if ((b->status == AMC_SUCCESS) && (act >= 0) && ((uint32_t)act < b->sched->nacts)) {
        b->sched->acts[act].exact = 1;
    }
}

void amc_sb_nop(amc_sched_builder_t *b)
{
    (void)amc_sb_act(b, AMC_ACT_NOP);
}

int amc_sb_buffer(amc_sched_builder_t *b, size_t bytes)
{
    amc_sched_t *s = b->sched;

    if (b->status != AMC_SUCCESS) {
        return -1;
    }
    if (s->nbufs < AMC_BUF_EXTRA) {
        s->nbufs = AMC_BUF_EXTRA;
    }
    if (s->nbufs >= AMC_NBUFS) {
        b->status = AMC_ERR_ARG; /* a builder asking for more names than there are */
        return -1;
    }
    s->buf_bytes[s->nbufs] = bytes;
    return (int)s->nbufs++;
}

/* The scratch's layout: the scratch buffer, the extra buffers, the staging
 * area, each aligned for any datatype (the reduction copy comes after, see
 * amc_sched_reduce_off). */
static void amc_sched_layout_buffers(amc_sched_t *s)
{
    size_t   off = s->tmp_bytes;
    uint32_t k;

    if (s->nbufs < AMC_BUF_EXTRA) {
        s->nbufs = AMC_BUF_EXTRA;
    }
    for (k = AMC_BUF_EXTRA; k < s->nbufs; k++) {
        off          = (off + 63) & ~(size_t)63;
        s->buf_off[k] = off;
        off         += s->buf_bytes[k];
    }
    s->stage_off = (off + 63) & ~(size_t)63;
    if ((s->stage_bytes == 0) && (off == s->tmp_bytes)) {
        s->stage_off = s->tmp_bytes; /* nothing after the scratch: no padding */
    }
}

void amc_sb_tmp(amc_sched_builder_t *b, size_t bytes)
{
    if ((b->sched != NULL) && (bytes > b->sched->tmp_bytes)) {
        b->sched->tmp_bytes = bytes;
    }
}

static int amc_act_is_recv(const amc_sched_act_t *act)
{
    return (act->type >= AMC_ACT_RECV) && (act->type <= AMC_ACT_RECV_REDUCE_R);
}

/* Both ends of a pair list their messages to each other in the same order
 * (the algorithms guarantee it, as MPI's non-overtaking rule does for
 * point-to-point), so the k-th send to a peer matches its k-th receive.
 * Numbers the messages with a counter per peer and direction, and indexes the
 * receives by (peer, tag) for the arrival handler: a counting sort by peer,
 * since tags already grow in act order. The peers are first numbered densely
 * in their order (a sort of the few a schedule talks to), so that the
 * counters cost O(peers talked to), not O(communicator size): at 65,536
 * ranks those would be 768 KiB cleared per schedule built. */
static int amc_sched_cmp_int(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;

    return (a > b) - (a < b);
}

/* The dense number of peer among the npeers sorted distinct ones. */
static uint32_t amc_sched_dense(const int *peers, int npeers, int peer)
{
    int lo = 0, hi = npeers - 1, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (peers[mid] < peer) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (uint32_t)lo;
}

static int amc_sched_is_msg(const amc_sched_act_t *act)
{
    return (act->type == AMC_ACT_SEND) || amc_act_is_recv(act);
}

static int amc_sched_number_messages(amc_sched_t *s)
{
    uint32_t *sends, *recvs, *first, *dense, i, d;
    int      *peers;
    int       npeers = 0, p;

    peers = malloc(((size_t)s->nacts + 1) * (sizeof(*peers) + sizeof(*dense)));
    if (peers == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    dense = (uint32_t *)(peers + s->nacts + 1);
    for (i = 0; i < s->nacts; i++) {
        if (amc_sched_is_msg(&s->acts[i])) {
            peers[npeers++] = s->acts[i].peer;
        }
    }
    qsort(peers, (size_t)npeers, sizeof(*peers), amc_sched_cmp_int);
    for (i = 0, p = 0; i < (uint32_t)npeers; i++) {
        if ((p == 0) || (peers[p - 1] != peers[i])) {
            peers[p++] = peers[i];
        }
    }
    npeers = p;
    for (i = 0; i < s->nacts; i++) {
        dense[i] = amc_sched_is_msg(&s->acts[i]) ? amc_sched_dense(peers, npeers,
                                                                   s->acts[i].peer) : 0;
    }
    sends = calloc(3 * (size_t)npeers + 1, sizeof(*sends));
    if (sends == NULL) {
        free(peers);
        return AMC_ERR_NO_MEMORY;
    }
    recvs = sends + npeers;
    first = recvs + npeers;
    for (i = 0; i < s->nacts; i++) {
        if (s->acts[i].type == AMC_ACT_SEND) {
            s->acts[i].tag = sends[dense[i]]++;
        } else if (amc_act_is_recv(&s->acts[i])) {
            s->acts[i].tag = recvs[dense[i]]++;
            s->nrecv++;
        }
    }
    for (i = 0; i < s->nacts; i++) {
        if (s->acts[i].type == AMC_ACT_SEND) {
            s->acts[i].last = (s->acts[i].tag + 1 == sends[dense[i]]);
        } else if (amc_act_is_recv(&s->acts[i])) {
            s->acts[i].last = (s->acts[i].tag + 1 == recvs[dense[i]]);
        }
    }
    if (s->nrecv > 0) {
        s->recv_by_key = malloc((size_t)s->nrecv * sizeof(*s->recv_by_key));
        if (s->recv_by_key == NULL) {
            free(sends);
            free(peers);
            return AMC_ERR_NO_MEMORY;
        }
        for (p = 1; p < npeers; p++) {
            first[p] = first[p - 1] + recvs[p - 1];
        }
        for (i = 0; i < s->nacts; i++) {
            if (amc_act_is_recv(&s->acts[i])) {
                d                           = dense[i];
                s->recv_by_key[first[d]++] = i;
            }
        }
    }
    free(sends);
    free(peers);
    return AMC_SUCCESS;
}

int amc_sched_retag(amc_sched_t *s, const uint32_t *ntags, int npeers)
{
    uint32_t *first, i, k, j;
    int       p;

    first = calloc((size_t)npeers + 1, sizeof(*first));
    if (first == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < s->nacts; i++) {
        amc_sched_act_t *act = &s->acts[i];

        if (act->type == AMC_ACT_SEND) {
            act->last = (act->tag + 1 == ntags[act->peer * 2]);
        } else if (amc_act_is_recv(act)) {
            act->last = (act->tag + 1 == ntags[act->peer * 2 + 1]);
        }
    }
    /* by peer (counting), then by tag within a peer (insertion: few each) */
    for (p = 1; p <= npeers; p++) {
        first[p] = first[p - 1] + ntags[(p - 1) * 2 + 1];
    }
    for (i = 0; i < s->nacts; i++) {
        if (amc_act_is_recv(&s->acts[i])) {
            s->recv_by_key[first[s->acts[i].peer]++] = i;
        }
    }
    for (k = 1; k < s->nrecv; k++) {
        uint32_t v = s->recv_by_key[k];

        for (j = k; (j > 0) && (s->acts[s->recv_by_key[j - 1]].peer == s->acts[v].peer) &&
                    (s->acts[s->recv_by_key[j - 1]].tag > s->acts[v].tag); j--) {
            s->recv_by_key[j] = s->recv_by_key[j - 1];
        }
        s->recv_by_key[j] = v;
    }
    free(first);
    return AMC_SUCCESS;
}

int amc_sched_find_recv(const amc_sched_t *s, int peer, uint32_t tag)
{
    const amc_sched_act_t *act;
    uint32_t               lo = 0, hi = s->nrecv, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        act = &s->acts[s->recv_by_key[mid]];
        if ((act->peer < peer) || ((act->peer == peer) && (act->tag < tag))) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < s->nrecv) {
        act = &s->acts[s->recv_by_key[lo]];
        if ((act->peer == peer) && (act->tag == tag)) {
            return (int)s->recv_by_key[lo];
        }
    }
    return -1;
}

/* Receives that reduce may have their data pulled (rendezvous): it needs a
 * place of its own before it is reduced into the target, from when the
 * receive is ready until it is done. The receives of one round may be in
 * flight together, so each gets its own range. A round made by
 * amc_sb_round starts only once the round before it is done, so it reuses
 * the area. A stage requires nothing of what came before: its receives may
 * be in flight with those of every earlier round, and so may those of the
 * rounds after it (they wait for the stage only). So a (non-empty) stage
 * starts an area of its own after everything laid out so far. */
static void amc_sched_layout_stage(amc_sched_t *s)
{
    uint32_t r, i;
    size_t   off, base = 0;

    for (r = 0; r < s->nrounds; r++) {
        if ((s->rounds[r].count > 0) && !s->rounds[r].implicit) {
            base = s->stage_bytes;
        }
        off = base;
        for (i = s->rounds[r].first; i < s->rounds[r].first + s->rounds[r].count; i++) {
            if ((s->acts[i].type == AMC_ACT_RECV_REDUCE) ||
                (s->acts[i].type == AMC_ACT_RECV_REDUCE_R)) {
                s->acts[i].off2 = off;
                off            += s->acts[i].bytes;
            }
        }
        if (off > s->stage_bytes) {
            s->stage_bytes = off;
        }
        for (i = s->rounds[r].first; i < s->rounds[r].first + s->rounds[r].count; i++) {
            if ((s->acts[i].type >= AMC_ACT_RECV_REDUCE) &&
                (s->acts[i].type <= AMC_ACT_REDUCE_R) && (s->acts[i].type != AMC_ACT_COPY) &&
                (s->acts[i].bytes > s->reduce_bytes)) {
                s->reduce_bytes = s->acts[i].bytes;
            }
        }
    }
}

static int amc_act_kind_rank(const amc_sched_act_t *act)
{
    return (act->type == AMC_ACT_SEND) ? 1 : amc_act_is_recv(act) ? 2 : 0;
}

/* Locals, sends, receives within each round, each kind in its own order.
 * The round's edges (amc_sched_link) keep what the order meant, and message
 * numbering follows the order within a kind, so this changes nothing but how
 * the acts are laid out. where[old index] is the new index. */
static int amc_sched_sort_rounds(amc_sched_t *s, uint32_t *where)
{
    amc_sched_act_t *tmp;
    uint32_t         r, i, k, n;

    if (s->nacts == 0) {
        return AMC_SUCCESS;
    }
    tmp = malloc((size_t)s->nacts * sizeof(*tmp));
    if (tmp == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < s->nrounds; r++) {
        amc_sched_round_t *round = &s->rounds[r];

        n = 0;
        for (k = 0; k < 3; k++) {
            for (i = round->first; i < round->first + round->count; i++) {
                if (amc_act_kind_rank(&s->acts[i]) == (int)k) {
                    where[i]   = round->first + n;
                    tmp[n++]   = s->acts[i];
                }
            }
        }
        memcpy(&s->acts[round->first], tmp, (size_t)n * sizeof(*tmp));
        round->nlocal = round->count - round->nsend - round->nrecv;
    }
    free(tmp);
    return AMC_SUCCESS;
}

/* Every act of from[0..nfrom) before every act of to[0..nto): directly, or
 * through one join when that takes fewer edges (a linear gather's root
 * waits for N-1 receives before N-1 sends). */
static void amc_sched_link(amc_sched_builder_t *b, const uint32_t *from, uint32_t nfrom,
                           const uint32_t *to, uint32_t nto)
{
    amc_sched_t     *s = b->sched;
    amc_sched_act_t *join;
    uint32_t         i, j, jid;

    if ((nfrom == 0) || (nto == 0)) {
        return;
    }
    if ((uint64_t)nfrom * nto <= (uint64_t)nfrom + nto) {
        for (i = 0; i < nfrom; i++) {
            for (j = 0; j < nto; j++) {
                amc_sb_edge(b, to[j], from[i]);
            }
        }
        return;
    }
    b->status = (b->status != AMC_SUCCESS) ? b->status :
                amc_sb_grow((void **)&s->acts, &b->cap_acts, s->nacts + 1, sizeof(*s->acts));
    if (b->status != AMC_SUCCESS) {
        return;
    }
    jid  = s->nacts++;
    join = &s->acts[jid];
    memset(join, 0, sizeof(*join));
    join->type  = AMC_ACT_NOP;
    join->round = s->acts[to[0]].round;
    for (i = 0; i < nfrom; i++) {
        amc_sb_edge(b, jid, from[i]);
    }
    for (j = 0; j < nto; j++) {
        amc_sb_edge(b, to[j], jid);
    }
}

/* The rounds' implicit edges: a round's first local requires every act of
 * the last non-empty round before it, each local the one before it, and the
 * round's sends and receives its last local (or, without locals, the round
 * before). A stage (amc_sb_stage) gets none of them, not even among its own
 * acts: a local that reads what a receive of its stage wrote requires that
 * receive, and an edge making the receive wait for the local would close a
 * cycle that never runs. */
static void amc_sched_round_edges(amc_sched_builder_t *b, uint32_t *ids)
{
    amc_sched_t *s = b->sched;
    uint32_t     r, i, prev_first = 0, prev_count = 0, nreal = s->nacts;

    for (i = 0; i < nreal; i++) {
        ids[i] = i;
    }
    for (r = 0; (r < s->nrounds) && (b->status == AMC_SUCCESS); r++) {
        amc_sched_round_t *round = &s->rounds[r];
        uint32_t           comms = round->nsend + round->nrecv;

        if (round->count == 0) {
            continue;
        }
        if (!round->implicit) {
            prev_first = round->first;
            prev_count = round->count;
            continue;
        }
        if (round->nlocal > 0) {
            amc_sched_link(b, &ids[prev_first], prev_count, &ids[round->first], 1);
            for (i = round->first + 1; i < round->first + round->nlocal; i++) {
                amc_sb_edge(b, i, i - 1);
            }
            amc_sched_link(b, &ids[round->first + round->nlocal - 1], 1,
                           &ids[round->first + round->nlocal], comms);
        } else {
            amc_sched_link(b, &ids[prev_first], prev_count, &ids[round->first], comms);
        }
        prev_first = round->first;
        prev_count = round->count;
    }
}

/* Edges to successor lists (CSR) and dependency counts; the acts that
 * require nothing are the roots. */
static int amc_sched_graph(amc_sched_builder_t *b)
{
    amc_sched_t *s = b->sched;
    uint32_t     i, e, *fill;

    for (i = 0; i < s->nacts; i++) {
        s->acts[i].ndeps = 0;
        s->acts[i].nsucc = 0;
    }
    for (e = 0; e < b->nedges; e++) {
        s->acts[b->edges[e].act].ndeps++;
        s->acts[b->edges[e].dep].nsucc++;
    }
    s->succ  = malloc(((size_t)b->nedges + 1) * sizeof(*s->succ));
    s->roots = malloc(((size_t)s->nacts + 1) * sizeof(*s->roots));
    s->ndeps = malloc(((size_t)s->nacts + 1) * sizeof(*s->ndeps));
    fill     = calloc((size_t)s->nacts + 1, sizeof(*fill));
    if ((s->succ == NULL) || (s->roots == NULL) || (s->ndeps == NULL) || (fill == NULL)) {
        free(fill);
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0, e = 0; i < s->nacts; i++) {
        s->ndeps[i]     = s->acts[i].ndeps;
        s->acts[i].succ = e;
        e              += s->acts[i].nsucc;
        if (s->acts[i].ndeps == 0) {
            s->roots[s->nroots++] = i;
        }
    }
    for (e = 0; e < b->nedges; e++) {
        const amc_sched_edge_t *edge = &b->edges[e];

        s->succ[s->acts[edge->dep].succ + fill[edge->dep]++] = edge->act;
    }
    free(fill);
    return AMC_SUCCESS;
}

/* Sorts each round, carries the explicit edges over to the new places, adds
 * the rounds' edges, and builds the graph. */
static int amc_sched_order(amc_sched_builder_t *b)
{
    amc_sched_t *s = b->sched;
    uint32_t    *where, e;
    int          status;

    where = malloc(((size_t)s->nacts + 1) * sizeof(*where));
    if (where == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_sched_sort_rounds(s, where);
    if (status == AMC_SUCCESS) {
        for (e = 0; e < b->nedges; e++) {
            b->edges[e].act = where[b->edges[e].act];
            b->edges[e].dep = where[b->edges[e].dep];
        }
        /* ids: the identity over the sorted acts, for amc_sched_link */
        amc_sched_round_edges(b, where);
        status = (b->status != AMC_SUCCESS) ? b->status : amc_sched_graph(b);
    }
    free(where);
    return status;
}

static void amc_sb_cleanup(amc_sched_builder_t *b)
{
    free(b->edges);
    b->edges  = NULL;
    b->nedges = 0;
}

int amc_sb_finish(amc_sched_builder_t *b, amc_sched_t **sched_p)
{
    amc_sched_t *s = b->sched;
    int          status = b->status;

    if (status != AMC_SUCCESS) {
        amc_sb_cleanup(b);
        amc_sched_free(s);
        b->sched = NULL;
        return status;
    }
    while ((s->nrounds > 0) && (s->rounds[s->nrounds - 1].count == 0)) {
        s->nrounds--;
    }
    amc_sched_layout_stage(s);
    amc_sched_layout_buffers(s);
    status = amc_sched_order(b);
    if (status == AMC_SUCCESS) {
        status = amc_sched_number_messages(s);
    }
    amc_sb_cleanup(b);
    if (status != AMC_SUCCESS) {
        amc_sched_free(s);
        b->sched = NULL;
        return status;
    }
    *sched_p = s;
    b->sched = NULL;
    return AMC_SUCCESS;
}

void amc_sched_free(amc_sched_t *sched)
{
    if (sched == NULL) {
        return;
    }
    free(sched->rounds);
    free(sched->acts);
    free(sched->recv_by_key);
    free(sched->succ);
    free(sched->roots);
    free(sched->ndeps);
    free(sched->vsig);
    free(sched);
}
