/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL schedules: building them (the C interface of include/amcoll.h),
 * compiling them to one engine schedule per rank, and starting them.
 *
 * Compiling decides what the engine cannot: which send pairs with which
 * receive. GOAL matches as MPI does (tags, any-source, any-tag), at run time;
 * the engine pairs a message with its receive by (sender, index among the
 * pair's messages), fixed when the schedule is built. Every rank holds the
 * whole schedule, so every rank can run MPI's matching on it ahead of time,
 * once and alike: an event-driven simulation of all ranks (posted and
 * unexpected queues, in the order acts become ready) pairs the messages;
 * the pairs are numbered in the sender's order and both ends get the
 * number. A second simulation, with every message rendezvous (a send done
 * only once its receive started, and the other way round), finds the
 * schedules that would hang in the engine when messages are large or the
 * eager tokens run out.
 *
 * irequires (start dependency) becomes plain edges: an act starts as soon as
 * what it requires is done, so "a may start once b started" is "a requires
 * what b requires" (and, through b's own irequires, what those require).
 */
#include "am_coll/goal/goal.h"
#include "am_coll/goal/goal_names.h"
#include "am_coll/api/api.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/op.h"
#include "am_coll/context/request.h"
#include "base/log.h"
#include "base/spinlock.h"
#include "am_coll/context/wait.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- errors */

static int amc_goal_fail(amc_goal_t g, int rank, const amc_goal_act_t *at, uint32_t line,
                         uint32_t col, const char *fmt, ...)
{
    va_list ap;
    size_t  n;

    if ((at != NULL) && (line == 0)) {
        line = at->line;
        col  = at->col;
    }
    if (line > 0) {
        n = (size_t)snprintf(g->err, sizeof(g->err), "%s:%u:%u: ",
                             g->name[0] ? g->name : "<goal>", line, col);
    } else if (at != NULL) {
        n = (size_t)snprintf(g->err, sizeof(g->err), "rank %d act %u: ", rank,
                             (unsigned)(at - g->ranks[rank].acts));
    } else {
        n = (size_t)snprintf(g->err, sizeof(g->err), "rank %d: ", rank);
    }
    if (n < sizeof(g->err)) {
        va_start(ap, fmt);
        vsnprintf(g->err + n, sizeof(g->err) - n, fmt, ap);
        va_end(ap);
    }
    return AMC_ERR_ARG;
}

const char *amc_goal_error(amc_goal_t goal)
{
    return (goal == NULL) ? "no schedule" : goal->err;
}

/* How an act is named in a message: its label, or its kind and number. */
static const char *amc_goal_act_desc(const amc_goal_t g, int rank, uint32_t a, char *buf,
                                     size_t len)
{
    static const char *kind[] = { "send", "recv", "calc", "copy", "reduce" };
    const amc_goal_act_t *act = &g->ranks[rank].acts[a];

    if (act->label != NULL) {
        snprintf(buf, len, "rank %d's %s (%s)", rank, act->label, kind[act->type]);
    } else {
        snprintf(buf, len, "rank %d's act %u (%s)", rank, a, kind[act->type]);
    }
    return buf;
}

/* ---------------------------------------------------------------- building */

int amc_goal_create(int nranks, amc_goal_t *goal)
{
    amc_goal_t g;

    if ((goal == NULL) || (nranks < 1)) {
        return AMC_ERR_ARG;
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    g->ranks = calloc((size_t)nranks, sizeof(*g->ranks));
    if (g->ranks == NULL) {
        free(g);
        return AMC_ERR_NO_MEMORY;
    }
    g->nranks = nranks;
    g->op     = -1;
    *goal     = g;
    return AMC_SUCCESS;
}

static amc_goal_act_t *amc_goal_add(amc_goal_t g, int rank, int type, int *act_p)
{
    amc_goal_rank_t *r;
    amc_goal_act_t  *grown;
    uint32_t         cap;

    if ((g == NULL) || g->compiled || (rank < 0) || (rank >= g->nranks)) {
        return NULL;
    }
    r = &g->ranks[rank];
    if (r->nacts == r->cap_acts) {
        cap   = r->cap_acts ? 2 * r->cap_acts : 16;
        grown = realloc(r->acts, cap * sizeof(*grown));
        if (grown == NULL) {
            return NULL;
        }
        r->acts     = grown;
        r->cap_acts = cap;
    }
    if (act_p != NULL) {
        *act_p = (int)r->nacts;
    }
    grown = &r->acts[r->nacts++];
    memset(grown, 0, sizeof(*grown));
    grown->type      = (uint8_t)type;
    grown->op        = -1;
    grown->dt        = AMC_BYTE;
    grown->mate_rank = -1;
    grown->mate_act  = -1;
    return grown;
}

int amc_goal_add_act(amc_goal_t g, int rank, int type, amc_goal_act_t **act_p)
{
    *act_p = amc_goal_add(g, rank, type, NULL);
    return (*act_p != NULL) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
}

static int amc_goal_msg(amc_goal_t g, int type, int rank, int peer, int tag, size_t bytes,
                        int buf, size_t off, int *act_p)
{
    amc_goal_act_t *act;

    if ((g == NULL) || (buf < 0) || (buf >= AMC_GOAL_NBUFS) || (tag < AMC_GOAL_ANY) ||
        (peer < AMC_GOAL_ANY) || ((type == AMC_GOAL_SEND) && ((peer < 0) || (tag < 0)))) {
        return AMC_ERR_ARG;
    }
    act = amc_goal_add(g, rank, type, act_p);
    if (act == NULL) {
        return ((g->compiled) || (rank < 0) || (rank >= g->nranks)) ? AMC_ERR_ARG
                                                                    : AMC_ERR_NO_MEMORY;
    }
    act->peer  = peer;
    act->tag   = tag;
    act->bytes = bytes;
    act->buf   = (uint8_t)buf;
    act->off   = off;
    return AMC_SUCCESS;
}

int amc_goal_send(amc_goal_t goal, int rank, int peer, int tag, size_t bytes, int buf,
                  size_t off, int *act)
{
    return amc_goal_msg(goal, AMC_GOAL_SEND, rank, peer, tag, bytes, buf, off, act);
}

int amc_goal_recv(amc_goal_t goal, int rank, int peer, int tag, size_t bytes, int buf,
                  size_t off, int *act)
{
    return amc_goal_msg(goal, AMC_GOAL_RECV, rank, peer, tag, bytes, buf, off, act);
}

int amc_goal_calc(amc_goal_t goal, int rank, unsigned long long cost, int *act_p)
{
    amc_goal_act_t *act = amc_goal_add(goal, rank, AMC_GOAL_CALC, act_p);

    if (act == NULL) {
        return ((goal == NULL) || goal->compiled || (rank < 0) || (rank >= goal->nranks))
                   ? AMC_ERR_ARG : AMC_ERR_NO_MEMORY;
    }
    act->bytes = (size_t)cost;
    return AMC_SUCCESS;
}

static int amc_goal_local(amc_goal_t g, int type, int rank, int dst, size_t dst_off, int src,
                          size_t src_off, size_t bytes, int *act_p, amc_goal_act_t **act_pp)
{
    amc_goal_act_t *act;

    if ((g == NULL) || (dst < 0) || (dst >= AMC_GOAL_NBUFS) || (src < 0) ||
        (src >= AMC_GOAL_NBUFS)) {
        return AMC_ERR_ARG;
    }
    act = amc_goal_add(g, rank, type, act_p);
    if (act == NULL) {
        return (g->compiled || (rank < 0) || (rank >= g->nranks)) ? AMC_ERR_ARG
                                                                   : AMC_ERR_NO_MEMORY;
    }
    act->buf   = (uint8_t)dst;
    act->off   = dst_off;
    act->buf2  = (uint8_t)src;
    act->off2  = src_off;
    act->bytes = bytes;
    *act_pp    = act;
    return AMC_SUCCESS;
}

int amc_goal_copy(amc_goal_t goal, int rank, int dst, size_t dst_off, int src, size_t src_off,
                  size_t bytes, int *act_p)
{
    amc_goal_act_t *act;

    return amc_goal_local(goal, AMC_GOAL_COPY, rank, dst, dst_off, src, src_off, bytes, act_p,
                          &act);
}

int amc_goal_reduce(amc_goal_t goal, int rank, int dst, size_t dst_off, int src, size_t src_off,
                    size_t bytes, amc_datatype_t dt, amc_op_t op, int right, int *act_p)
{
    amc_goal_act_t *act;
    int             status;

    if (!amc_datatype_is_valid(dt) || (op < 0)) {
        return AMC_ERR_ARG;
    }
    status = amc_goal_local(goal, AMC_GOAL_REDUCE, rank, dst, dst_off, src, src_off, bytes,
                            act_p, &act);
    if (status == AMC_SUCCESS) {
        act->dt    = dt;
        act->op    = op;
        act->right = (uint8_t)!!right;
    }
    return status;
}

static int amc_goal_dep(amc_goal_t g, int rank, int act, int dep, int start)
{
    amc_goal_rank_t *r;
    amc_goal_dep_t  *grown;
    uint32_t         cap;

    if ((g == NULL) || g->compiled || (rank < 0) || (rank >= g->nranks)) {
        return AMC_ERR_ARG;
    }
    r = &g->ranks[rank];
    if ((act < 0) || (dep < 0) || ((uint32_t)act >= r->nacts) || ((uint32_t)dep >= r->nacts) ||
        (act == dep)) {
        return AMC_ERR_ARG;
    }
    if (r->ndeps == r->cap_deps) {
        cap   = r->cap_deps ? 2 * r->cap_deps : 16;
        grown = realloc(r->deps, cap * sizeof(*grown));
        if (grown == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        r->deps     = grown;
        r->cap_deps = cap;
    }
    grown = &r->deps[r->ndeps++];
    memset(grown, 0, sizeof(*grown));
    grown->act   = (uint32_t)act;
    grown->dep   = (uint32_t)dep;
    grown->start = (uint8_t)start;
    return AMC_SUCCESS;
}

int amc_goal_requires(amc_goal_t goal, int rank, int act, int dep)
{
    return amc_goal_dep(goal, rank, act, dep, 0);
}

int amc_goal_irequires(amc_goal_t goal, int rank, int act, int dep)
{
    return amc_goal_dep(goal, rank, act, dep, 1);
}

int amc_goal_buffer_bytes(amc_goal_t goal, int rank, int buf, size_t *bytes)
{
    if ((goal == NULL) || !goal->compiled || (rank < 0) || (rank >= goal->nranks) ||
        (buf < 0) || (buf >= AMC_GOAL_NBUFS) || (bytes == NULL)) {
        return AMC_ERR_ARG;
    }
    *bytes = goal->ranks[rank].extent[buf];
    return AMC_SUCCESS;
}

/* ---------------------------------------------------------------- compiling */

/* Per rank while compiling: the topological order and the effective edges
 * (requires, and irequires resolved), as lists per act. */
typedef struct {
    uint32_t *order;      /* [nacts] acts, every one after what it depends on */
    uint32_t *eff_first;  /* [nacts + 1] eff[eff_first[a] .. eff_first[a+1]) */
    uint32_t *eff;        /* what a requires in the engine */
    uint32_t *succ_first; /* [nacts + 1] the inverse */
    uint32_t *succ;
} amc_goal_graph_t;

static void amc_goal_graph_free(amc_goal_graph_t *gr)
{
    free(gr->order);
    free(gr->eff_first);
    free(gr->eff);
    free(gr->succ_first);
    free(gr->succ);
    memset(gr, 0, sizeof(*gr));
}

static int amc_goal_check_acts(amc_goal_t g, int rank)
{
    amc_goal_rank_t *r = &g->ranks[rank];
    size_t           dt_size, end;
    uint32_t         a;

    memset(r->extent, 0, sizeof(r->extent));
    for (a = 0; a < r->nacts; a++) {
        amc_goal_act_t *act = &r->acts[a];

        if ((act->type == AMC_GOAL_SEND) || (act->type == AMC_GOAL_RECV)) {
            if ((act->peer >= g->nranks) ||
                ((act->type == AMC_GOAL_SEND) && (act->peer == AMC_GOAL_ANY))) {
                return amc_goal_fail(g, rank, act, 0, 0, "peer %d is not a rank of %d",
                                     act->peer, g->nranks);
            }
            if (act->peer == rank) {
                return amc_goal_fail(g, rank, act, 0, 0, "a message to itself (rank %d): "
                                     "use copy", rank);
            }
        }
        if (act->type == AMC_GOAL_REDUCE) {
            if (amc_op_check(act->op, act->dt) != AMC_SUCCESS) {
                return amc_goal_fail(g, rank, act, 0, 0, "op %d does not apply to %s",
                                     (int)act->op, amc_datatype_name(act->dt));
            }
            if (g->has_reduce && ((act->op != g->op) || (act->dt != g->dt))) {
                return amc_goal_fail(g, rank, act, 0, 0, "every reduction of a schedule "
                                     "uses one op and datatype (%s %s before)",
                                     amc_goal_op_name(g->op) ? amc_goal_op_name(g->op) : "user",
                                     amc_datatype_name(g->dt));
            }
            if ((amc_datatype_size(act->dt, &dt_size) != AMC_SUCCESS) ||
                (act->bytes % dt_size)) {
                return amc_goal_fail(g, rank, act, 0, 0, "%zu bytes are no whole number of "
                                     "%s", act->bytes, amc_datatype_name(act->dt));
            }
            g->has_reduce = 1;
            g->op         = act->op;
            g->dt         = act->dt;
        }
        if (act->type == AMC_GOAL_CALC) {
            continue;
        }
        end = act->off + act->bytes;
        if (end < act->off) {
            return amc_goal_fail(g, rank, act, 0, 0, "offset and size overflow");
        }
        if ((act->bytes > 0) && (end > r->extent[act->buf])) {
            r->extent[act->buf] = end;
        }
        if ((act->type == AMC_GOAL_COPY) || (act->type == AMC_GOAL_REDUCE)) {
            end = act->off2 + act->bytes;
            if (end < act->off2) {
                return amc_goal_fail(g, rank, act, 0, 0, "offset and size overflow");
            }
            if ((act->bytes > 0) && (end > r->extent[act->buf2])) {
                r->extent[act->buf2] = end;
            }
        }
    }
    return AMC_SUCCESS;
}

/* The rank's deps grouped by an act (a counting sort): by the act they
 * release (by_act 0: d.dep) or by the act that has them (by_act 1: d.act);
 * group a is list[first[a] .. first[a + 1]), first[n + 1] zeroed before. */
static void amc_goal_group_deps(const amc_goal_rank_t *r, uint32_t n, int by_act,
                                uint32_t *first, uint32_t *list)
{
    uint32_t i, a;

    for (i = 0; i < r->ndeps; i++) {
        first[(by_act ? r->deps[i].act : r->deps[i].dep) + 1]++;
    }
    for (a = 0; a < n; a++) {
        first[a + 1] += first[a];
    }
    for (i = 0; i < r->ndeps; i++) {
        list[first[by_act ? r->deps[i].act : r->deps[i].dep]++] = i;
    }
    for (a = n; a > 0; a--) {
        first[a] = first[a - 1];
    }
    first[0] = 0;
}

/* The order (Kahn's), or the cycle's error. */
static int amc_goal_order(amc_goal_t g, int rank, amc_goal_graph_t *gr)
{
    amc_goal_rank_t *r = &g->ranks[rank];
    uint32_t        *indeg, *first, *out, n = r->nacts, a, i, head = 0, tail = 0, k;
    int              status = AMC_SUCCESS;

    indeg = calloc(2 * (size_t)n + 2 + r->ndeps, sizeof(*indeg));
    if (indeg == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    first = indeg + n;          /* [n + 1] deps grouped by the act they release */
    out   = first + n + 1;      /* [ndeps] */
    for (i = 0; i < r->ndeps; i++) {
        indeg[r->deps[i].act]++;
    }
    amc_goal_group_deps(r, n, 0, first, out);
    for (a = 0; a < n; a++) {
        if (indeg[a] == 0) {
            gr->order[tail++] = a;
        }
    }
    while (head < tail) {
        a = gr->order[head++];
        for (k = first[a]; k < first[a + 1]; k++) {
            if (--indeg[r->deps[out[k]].act] == 0) {
                gr->order[tail++] = r->deps[out[k]].act;
            }
        }
    }
    if (tail < n) {
        /* walk back along unfinished deps until an act repeats: a cycle */
        uint32_t *seen = calloc(n, sizeof(*seen)), step = 1, d = 0;
        char      da[96], db[96];

        if (seen == NULL) {
            free(indeg);
            return AMC_ERR_NO_MEMORY;
        }
        for (a = 0; indeg[a] == 0; a++) {
        }
        while (seen[a] == 0) {
            seen[a] = step++;
            for (d = 0; d < r->ndeps; d++) {
                if ((r->deps[d].act == a) && (indeg[r->deps[d].dep] > 0)) {
                    break;
                }
            }
            a = r->deps[d].dep;
        }
        status = amc_goal_fail(g, rank, NULL, r->deps[d].line, r->deps[d].col,
                               "cycle: %s %s %s, which depends on it again",
                               amc_goal_act_desc(g, rank, r->deps[d].act, da, sizeof(da)),
                               r->deps[d].start ? "irequires" : "requires",
                               amc_goal_act_desc(g, rank, r->deps[d].dep, db, sizeof(db)));
        free(seen);
    }
    free(indeg);
    return status;
}

/* eff(a) = requires(a) + eff(c) for every c that a irequires, in order;
 * duplicates dropped. */
static int amc_goal_effective(amc_goal_t g, int rank, amc_goal_graph_t *gr)
{
    amc_goal_rank_t *r = &g->ranks[rank];
    uint32_t         n = r->nacts, i, k, a, c, cap = 0, len = 0, *stamp, *dfirst, *dl;
    uint32_t        *grown;
    size_t           total;

    stamp  = calloc(2 * (size_t)n + 2 + r->ndeps, sizeof(*stamp));
    if (stamp == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    dfirst = stamp + n;          /* deps grouped by the act that has them */
    dl     = dfirst + n + 1;
    amc_goal_group_deps(r, n, 1, dfirst, dl);
    /* lists are built in topological order, so an act's irequires targets
     * have theirs; eff_first is per act, eff appended as acts come */
    uint32_t *efirst = calloc((size_t)n, sizeof(*efirst));
    uint32_t *elen   = calloc((size_t)n, sizeof(*elen));

    if ((efirst == NULL) || (elen == NULL)) {
        free(efirst);
        free(elen);
        free(stamp);
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < n; i++) {
        a = gr->order[i];
        efirst[a] = len;
        for (k = dfirst[a]; k < dfirst[a + 1]; k++) {
            const amc_goal_dep_t *d = &r->deps[dl[k]];
            uint32_t              from = d->start ? efirst[d->dep] : 0;
            uint32_t              cnt  = d->start ? elen[d->dep] : 1;
            uint32_t              j;

            for (j = 0; j < cnt; j++) {
                c = d->start ? gr->eff[from + j] : d->dep;
                if (stamp[c] == a + 1) {
                    continue;
                }
                stamp[c] = a + 1;
                if (len == cap) {
                    cap   = cap ? 2 * cap : 64;
                    grown = realloc(gr->eff, cap * sizeof(*grown));
                    if (grown == NULL) {
                        free(efirst);
                        free(elen);
                        free(stamp);
                        return AMC_ERR_NO_MEMORY;
                    }
                    gr->eff = grown;
                }
                gr->eff[len++] = c;
            }
        }
        elen[a] = len - efirst[a];
    }
    /* into act order, and the inverse */
    total = len;
    gr->eff_first  = calloc((size_t)n + 1, sizeof(*gr->eff_first));
    gr->succ_first = calloc((size_t)n + 2, sizeof(*gr->succ_first));
    gr->succ       = malloc((total + 1) * sizeof(*gr->succ));
    grown          = malloc((total + 1) * sizeof(*grown));
    if ((gr->eff_first == NULL) || (gr->succ_first == NULL) || (gr->succ == NULL) ||
        (grown == NULL)) {
        free(grown);
        free(efirst);
        free(elen);
        free(stamp);
        return AMC_ERR_NO_MEMORY;
    }
    for (a = 0; a < n; a++) {
        gr->eff_first[a + 1] = gr->eff_first[a] + elen[a];
        if (elen[a] > 0) {
            memcpy(grown + gr->eff_first[a], gr->eff + efirst[a], elen[a] * sizeof(*grown));
        }
    }
    free(gr->eff);
    gr->eff = grown;
    for (k = 0; k < total; k++) {
        gr->succ_first[gr->eff[k] + 2]++;
    }
    for (a = 0; a < n; a++) {
        gr->succ_first[a + 2] += gr->succ_first[a + 1];
    }
    for (a = 0; a < n; a++) {
        for (k = gr->eff_first[a]; k < gr->eff_first[a + 1]; k++) {
            gr->succ[gr->succ_first[gr->eff[k] + 1]++] = a;
        }
    }
    free(efirst);
    free(elen);
    free(stamp);
    return AMC_SUCCESS;
}

/* The simulation of all ranks. */
typedef struct {
    int      rank;
    uint32_t act;
} amc_goal_ref_t;

typedef struct {
    amc_goal_ref_t *items;
    uint32_t        n;
    uint32_t        cap;
} amc_goal_refs_t;

static int amc_goal_refs_push(amc_goal_refs_t *q, int rank, uint32_t act)
{
    amc_goal_ref_t *grown;

    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        grown  = realloc(q->items, q->cap * sizeof(*grown));
        if (grown == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        q->items = grown;
    }
    q->items[q->n].rank = rank;
    q->items[q->n].act  = act;
    q->n++;
    return AMC_SUCCESS;
}

typedef struct {
    amc_goal_t        g;
    amc_goal_graph_t *gr;
    uint32_t        **pending;  /* [rank][act] */
    uint8_t         **state;    /* [rank][act] 1 ready, 2 done */
    amc_goal_refs_t   queue;
    uint32_t          head;
    amc_goal_refs_t  *posted;   /* [rank] receives waiting for a message */
    amc_goal_refs_t  *unexp;    /* [rank] sends to it waiting for a receive */
} amc_goal_sim_t;

static int amc_goal_sim_done(amc_goal_sim_t *sim, int rank, uint32_t a)
{
    amc_goal_graph_t *gr = &sim->gr[rank];
    uint32_t          k;

    sim->state[rank][a] |= 2;
    for (k = gr->succ_first[a]; k < gr->succ_first[a + 1]; k++) {
        if ((--sim->pending[rank][gr->succ[k]] == 0) &&
            (amc_goal_refs_push(&sim->queue, rank, gr->succ[k]) != AMC_SUCCESS)) {
            return AMC_ERR_NO_MEMORY;
        }
    }
    return AMC_SUCCESS;
}

static int amc_goal_accepts(const amc_goal_act_t *recv, int src, const amc_goal_act_t *send)
{
    return ((recv->peer == AMC_GOAL_ANY) || (recv->peer == src)) &&
           ((recv->tag == AMC_GOAL_ANY) || (recv->tag == send->tag));
}

static void amc_goal_pair(amc_goal_t g, int s, uint32_t sa, int r, uint32_t ra)
{
    g->ranks[s].acts[sa].mate_rank = r;
    g->ranks[s].acts[sa].mate_act  = (int)ra;
    g->ranks[r].acts[ra].mate_rank = s;
    g->ranks[r].acts[ra].mate_act  = (int)sa;
}

static void amc_goal_sim_free(amc_goal_sim_t *sim)
{
    int r;

    for (r = 0; r < sim->g->nranks; r++) {
        if (sim->pending != NULL) {
            free(sim->pending[r]);
        }
        if (sim->state != NULL) {
            free(sim->state[r]);
        }
        if (sim->posted != NULL) {
            free(sim->posted[r].items);
        }
        if (sim->unexp != NULL) {
            free(sim->unexp[r].items);
        }
    }
    free(sim->pending);
    free(sim->state);
    free(sim->posted);
    free(sim->unexp);
    free(sim->queue.items);
}

static int amc_goal_sim_init(amc_goal_sim_t *sim, amc_goal_t g, amc_goal_graph_t *gr)
{
    int      r;
    uint32_t a;

    memset(sim, 0, sizeof(*sim));
    sim->g       = g;
    sim->gr      = gr;
    sim->pending = calloc((size_t)g->nranks, sizeof(*sim->pending));
    sim->state   = calloc((size_t)g->nranks, sizeof(*sim->state));
    sim->posted  = calloc((size_t)g->nranks, sizeof(*sim->posted));
    sim->unexp   = calloc((size_t)g->nranks, sizeof(*sim->unexp));
    if ((sim->pending == NULL) || (sim->state == NULL) || (sim->posted == NULL) ||
        (sim->unexp == NULL)) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < g->nranks; r++) {
        uint32_t n = g->ranks[r].nacts;

        sim->pending[r] = malloc(((size_t)n + 1) * sizeof(uint32_t));
        sim->state[r]   = calloc((size_t)n + 1, 1);
        if ((sim->pending[r] == NULL) || (sim->state[r] == NULL)) {
            return AMC_ERR_NO_MEMORY;
        }
        for (a = 0; a < n; a++) {
            sim->pending[r][a] = gr[r].eff_first[a + 1] - gr[r].eff_first[a];
        }
    }
    /* rank by rank, each in its topological order: the order acts become
     * ready in is what decides the matching, so it is fixed */
    for (r = 0; r < g->nranks; r++) {
        for (a = 0; a < g->ranks[r].nacts; a++) {
            uint32_t x = gr[r].order[a];

            if ((sim->pending[r][x] == 0) &&
                (amc_goal_refs_push(&sim->queue, r, x) != AMC_SUCCESS)) {
                return AMC_ERR_NO_MEMORY;
            }
        }
    }
    return AMC_SUCCESS;
}

/* Matching: sends done once posted (eager), receives once they have their
 * message. */
static int amc_goal_match(amc_goal_t g, amc_goal_graph_t *gr)
{
    amc_goal_sim_t sim;
    int            status, r;
    uint32_t       k, a;
    char           da[96], db[96];

    status = amc_goal_sim_init(&sim, g, gr);
    while ((status == AMC_SUCCESS) && (sim.head < sim.queue.n)) {
        amc_goal_ref_t  ref = sim.queue.items[sim.head++];
        amc_goal_act_t *act = &g->ranks[ref.rank].acts[ref.act];

        sim.state[ref.rank][ref.act] |= 1;
        if (act->type == AMC_GOAL_SEND) {
            amc_goal_refs_t *q = &sim.posted[act->peer];

            for (k = 0; k < q->n; k++) {
                if (amc_goal_accepts(&g->ranks[act->peer].acts[q->items[k].act], ref.rank,
                                     act)) {
                    break;
                }
            }
            if (k < q->n) {
                uint32_t ra = q->items[k].act;

                memmove(&q->items[k], &q->items[k + 1], (q->n - k - 1) * sizeof(*q->items));
                q->n--;
                amc_goal_pair(g, ref.rank, ref.act, act->peer, ra);
                status = amc_goal_sim_done(&sim, act->peer, ra);
            } else {
                status = amc_goal_refs_push(&sim.unexp[act->peer], ref.rank, ref.act);
            }
            if (status == AMC_SUCCESS) {
                status = amc_goal_sim_done(&sim, ref.rank, ref.act);
            }
        } else if (act->type == AMC_GOAL_RECV) {
            amc_goal_refs_t *q = &sim.unexp[ref.rank];

            for (k = 0; k < q->n; k++) {
                if (amc_goal_accepts(act, q->items[k].rank,
                                     &g->ranks[q->items[k].rank].acts[q->items[k].act])) {
                    break;
                }
            }
            if (k < q->n) {
                amc_goal_ref_t s = q->items[k];

                memmove(&q->items[k], &q->items[k + 1], (q->n - k - 1) * sizeof(*q->items));
                q->n--;
                amc_goal_pair(g, s.rank, s.act, ref.rank, ref.act);
                status = amc_goal_sim_done(&sim, ref.rank, ref.act);
            } else {
                status = amc_goal_refs_push(&sim.posted[ref.rank], ref.rank, ref.act);
            }
        } else {
            status = amc_goal_sim_done(&sim, ref.rank, ref.act);
        }
    }
    for (r = 0; (status == AMC_SUCCESS) && (r < g->nranks); r++) {
        if (sim.unexp[r].n > 0) {
            amc_goal_ref_t s = sim.unexp[r].items[0];

            status = amc_goal_fail(g, s.rank, &g->ranks[s.rank].acts[s.act], 0, 0,
                                   "%s to rank %d with tag %d has no matching receive on "
                                   "rank %d", amc_goal_act_desc(g, s.rank, s.act, da,
                                                                sizeof(da)),
                                   r, g->ranks[s.rank].acts[s.act].tag, r);
        }
    }
    for (r = 0; (status == AMC_SUCCESS) && (r < g->nranks); r++) {
        if (sim.posted[r].n > 0) {
            amc_goal_ref_t x = sim.posted[r].items[0];
            amc_goal_act_t *act = &g->ranks[r].acts[x.act];

            status = amc_goal_fail(g, r, act, 0, 0, "%s from rank %d with tag %d has no "
                                   "matching send", amc_goal_act_desc(g, r, x.act, da,
                                                                      sizeof(da)),
                                   act->peer, act->tag);
        }
    }
    for (r = 0; (status == AMC_SUCCESS) && (r < g->nranks); r++) {
        for (a = 0; a < g->ranks[r].nacts; a++) {
            amc_goal_act_t *act = &g->ranks[r].acts[a];
            amc_goal_act_t *mate;

            if (act->type != AMC_GOAL_SEND) {
                continue;
            }
            mate = &g->ranks[act->mate_rank].acts[act->mate_act];
            if (mate->bytes != act->bytes) {
                status = amc_goal_fail(g, act->mate_rank, mate, 0, 0,
                                       "size mismatch: %s of %zu bytes gets %s of %zu bytes",
                                       amc_goal_act_desc(g, act->mate_rank,
                                                         (uint32_t)act->mate_act, da,
                                                         sizeof(da)),
                                       mate->bytes, amc_goal_act_desc(g, r, a, db, sizeof(db)),
                                       act->bytes);
                break;
            }
        }
    }
    amc_goal_sim_free(&sim);
    return status;
}

/* With the pairs fixed: every message rendezvous. */
static int amc_goal_rendezvous(amc_goal_t g, amc_goal_graph_t *gr)
{
    amc_goal_sim_t sim;
    int            status, r;
    uint32_t       a;
    char           da[96], db[96];

    status = amc_goal_sim_init(&sim, g, gr);
    while ((status == AMC_SUCCESS) && (sim.head < sim.queue.n)) {
        amc_goal_ref_t  ref = sim.queue.items[sim.head++];
        amc_goal_act_t *act = &g->ranks[ref.rank].acts[ref.act];

        sim.state[ref.rank][ref.act] |= 1;
        if ((act->type == AMC_GOAL_SEND) || (act->type == AMC_GOAL_RECV)) {
            if (sim.state[act->mate_rank][act->mate_act] & 1) {
                status = amc_goal_sim_done(&sim, ref.rank, ref.act);
                if (status == AMC_SUCCESS) {
                    status = amc_goal_sim_done(&sim, act->mate_rank, (uint32_t)act->mate_act);
                }
            }
        } else {
            status = amc_goal_sim_done(&sim, ref.rank, ref.act);
        }
    }
    for (r = 0; (status == AMC_SUCCESS) && (r < g->nranks); r++) {
        for (a = 0; a < g->ranks[r].nacts; a++) {
            amc_goal_act_t *act = &g->ranks[r].acts[a];

            if ((sim.state[r][a] == 1) && ((act->type == AMC_GOAL_SEND) ||
                                           (act->type == AMC_GOAL_RECV))) {
                status = amc_goal_fail(g, r, act, 0, 0,
                                       "deadlock when messages go by rendezvous: %s started "
                                       "but %s never starts (it waits for this rank)",
                                       amc_goal_act_desc(g, r, a, da, sizeof(da)),
                                       amc_goal_act_desc(g, act->mate_rank,
                                                         (uint32_t)act->mate_act, db,
                                                         sizeof(db)));
                break;
            }
        }
    }
    amc_goal_sim_free(&sim);
    return status;
}

/* One engine schedule for rank: one stage, acts in topological order, the
 * effective edges, the pairs' numbers as tags. */
static int amc_goal_build(amc_goal_t g, int rank, amc_goal_graph_t *gr)
{
    amc_goal_rank_t    *r = &g->ranks[rank];
    amc_sched_builder_t b;
    uint32_t           *bidx = NULL, *ntags = NULL, i, a, k, nloc = 0, nsend = 0, nl = 0,
                        ns = 0, nr = 0;
    int                 status, buf;

    r->where = malloc(((size_t)r->nacts + 1) * sizeof(*r->where));
    bidx     = malloc(((size_t)r->nacts + 1) * sizeof(*bidx));
    ntags    = calloc(2 * (size_t)g->nranks, sizeof(*ntags));
    if ((r->where == NULL) || (bidx == NULL) || (ntags == NULL)) {
        free(bidx);
        free(ntags);
        return AMC_ERR_NO_MEMORY;
    }
    for (a = 0; a < r->nacts; a++) {
        amc_goal_act_t *act = &r->acts[a];

        if (act->type == AMC_GOAL_SEND) {
            ntags[act->peer * 2]++;
        } else if (act->type == AMC_GOAL_RECV) {
            ntags[act->mate_rank * 2 + 1]++;
        }
    }
    status = amc_sb_init(&b);
    if (status != AMC_SUCCESS) {
        goto out;
    }
    amc_sb_stage(&b);
    amc_sb_tmp(&b, r->extent[AMC_GOAL_BUF_TMP]);
    for (buf = AMC_GOAL_BUF_TMP + 1; buf < AMC_GOAL_NBUFS; buf++) {
        int used = 0, k2;

        for (k2 = buf; k2 < AMC_GOAL_NBUFS; k2++) {
            used |= (r->extent[k2] > 0);
        }
        if (used) {
            (void)amc_sb_buffer(&b, r->extent[buf]); /* names in order: buf, buf+1 ... */
        }
    }
    for (i = 0; i < r->nacts; i++) {
        a = gr->order[i];
        amc_goal_act_t *act = &r->acts[a];

        bidx[a] = i;
        switch (act->type) {
        case AMC_GOAL_SEND:
            amc_sb_send(&b, act->mate_rank, act->buf, act->off, act->bytes);
            nsend++;
            break;
        case AMC_GOAL_RECV:
            amc_sb_recv(&b, act->mate_rank, act->buf, act->off, act->bytes);
            break;
        case AMC_GOAL_COPY:
            if ((act->bytes > 0) && ((act->buf != act->buf2) || (act->off != act->off2))) {
                amc_sb_copy(&b, act->buf, act->off, act->buf2, act->off2, act->bytes);
            } else {
                amc_sb_nop(&b); /* the builder drops copies of nothing */
            }
            nloc++;
            break;
        case AMC_GOAL_REDUCE:
            if (act->bytes > 0) {
                amc_sb_reduce(&b, act->buf, act->off, act->buf2, act->off2, act->bytes,
                              act->right);
            } else {
                amc_sb_nop(&b);
            }
            nloc++;
            break;
        default:
            amc_sb_nop(&b);
            nloc++;
            break;
        }
        for (k = gr->eff_first[a]; k < gr->eff_first[a + 1]; k++) {
            amc_sb_requires(&b, (int)i, (int)bidx[gr->eff[k]]);
        }
    }
    status = amc_sb_finish(&b, &r->sched);
    if (status != AMC_SUCCESS) {
        goto out;
    }
    /* the builder lays a stage out locals, sends, receives, each kind in the
     * order added (am_coll/sched/sched.c) */
    for (i = 0; i < r->nacts; i++) {
        a = gr->order[i];
        switch (r->acts[a].type) {
        case AMC_GOAL_SEND: r->where[a] = nloc + ns++; break;
        case AMC_GOAL_RECV: r->where[a] = nloc + nsend + nr++; break;
        default:            r->where[a] = nl++; break;
        }
    }
    for (a = 0; a < r->nacts; a++) {
        amc_sched_act_t *sa  = &r->sched->acts[r->where[a]];
        amc_goal_act_t  *act = &r->acts[a];

        if ((act->type == AMC_GOAL_SEND) || (act->type == AMC_GOAL_RECV)) {
            if ((sa->type != ((act->type == AMC_GOAL_SEND) ? AMC_ACT_SEND : AMC_ACT_RECV)) ||
                (sa->peer != act->mate_rank) || (sa->bytes != act->bytes)) {
                status = amc_goal_fail(g, rank, act, 0, 0, "internal: the schedule's layout "
                                       "is not the one expected");
                goto out;
            }
            sa->tag = act->wire_tag;
        }
    }
    status = amc_sched_retag(r->sched, ntags, g->nranks);
out:
    free(bidx);
    free(ntags);
    return status;
}

/* The pairs' numbers, in each sender's act order; both ends get them. */
static int amc_goal_number(amc_goal_t g)
{
    uint32_t *cnt = calloc((size_t)g->nranks, sizeof(*cnt)), a;
    int       r;

    if (cnt == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < g->nranks; r++) {
        memset(cnt, 0, (size_t)g->nranks * sizeof(*cnt));
        for (a = 0; a < g->ranks[r].nacts; a++) {
            amc_goal_act_t *act = &g->ranks[r].acts[a];

            if (act->type == AMC_GOAL_SEND) {
                act->wire_tag = cnt[act->peer]++;
                g->ranks[act->mate_rank].acts[act->mate_act].wire_tag = act->wire_tag;
            }
        }
    }
    free(cnt);
    return AMC_SUCCESS;
}

int amc_goal_compile(amc_goal_t g)
{
    amc_goal_graph_t *gr;
    int               r, status = AMC_SUCCESS;

    if (g == NULL) {
        return AMC_ERR_ARG;
    }
    if (g->compiled) {
        return AMC_SUCCESS;
    }
    g->err[0]     = '\0';
    g->has_reduce = 0;
    gr = calloc((size_t)g->nranks, sizeof(*gr));
    if (gr == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; (r < g->nranks) && (status == AMC_SUCCESS); r++) {
        gr[r].order = malloc(((size_t)g->ranks[r].nacts + 1) * sizeof(*gr[r].order));
        if (gr[r].order == NULL) {
            status = AMC_ERR_NO_MEMORY;
            break;
        }
        status = amc_goal_check_acts(g, r);
        if (status == AMC_SUCCESS) {
            status = amc_goal_order(g, r, &gr[r]);
        }
        if (status == AMC_SUCCESS) {
            status = amc_goal_effective(g, r, &gr[r]);
        }
    }
    if (status == AMC_SUCCESS) {
        status = amc_goal_match(g, gr);
    }
    if (status == AMC_SUCCESS) {
        status = amc_goal_rendezvous(g, gr);
    }
    if (status == AMC_SUCCESS) {
        status = amc_goal_number(g);
    }
    for (r = 0; (r < g->nranks) && (status == AMC_SUCCESS); r++) {
        status = amc_goal_build(g, r, &gr[r]);
    }
    for (r = 0; r < g->nranks; r++) {
        amc_goal_graph_free(&gr[r]);
        if (status != AMC_SUCCESS) {
            amc_sched_free(g->ranks[r].sched);
            g->ranks[r].sched = NULL;
            free(g->ranks[r].where);
            g->ranks[r].where = NULL;
        }
    }
    free(gr);
    if ((status == AMC_ERR_NO_MEMORY) && (g->err[0] == '\0')) {
        snprintf(g->err, sizeof(g->err), "out of memory");
    }
    g->compiled = (status == AMC_SUCCESS);
    return status;
}

/* ---------------------------------------------------------------- running */

int amc_goal_start(amc_goal_t g, const void *sendbuf, void *recvbuf, amc_comm_t comm,
                   amc_request_t *req_p)
{
    amc_coll_args_t     args;
    struct amc_request *req;
    amc_goal_rank_t    *r;
    int                 status;

    status = amc_api_check_comm(comm);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((g == NULL) || (req_p == NULL)) {
        return AMC_ERR_ARG;
    }
    if (!g->compiled || (comm->size != g->nranks)) {
        amc_error(&comm->ctx->log, "amc_goal_start: %s", !g->compiled
                  ? "the schedule is not compiled" : "the communicator's size is not the "
                  "schedule's");
        return AMC_ERR_ARG;
    }
    r = &g->ranks[comm->rank];
    if (((r->extent[AMC_GOAL_BUF_SEND] > 0) && (sendbuf == NULL)) ||
        ((r->extent[AMC_GOAL_BUF_RECV] > 0) && (recvbuf == NULL))) {
        amc_error(&comm->ctx->log, "amc_goal_start: rank %d's part uses a buffer passed as "
                  "NULL", comm->rank);
        return AMC_ERR_ARG;
    }
    memset(&args, 0, sizeof(args));
    args.coll        = AMC_COLL_GOAL;
    args.root        = -1;
    args.dt          = g->has_reduce ? g->dt : AMC_BYTE;
    args.op          = g->has_reduce ? g->op : -1;
    args.commutative = 1;
    args.sendbuf     = sendbuf;
    args.recvbuf     = recvbuf;
    (void)amc_datatype_size(args.dt, &args.dt_size);
    req = amc_request_alloc(comm);
    if (req == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    g->comm = comm;
    amc_request_begin_nb(req);
    status = amc_coll_start_kept(comm, &args, r->sched, req);
    amc_request_end_start(req, status);
    if (status != AMC_SUCCESS) {
        amc_request_release(req);
        return status;
    }
    *req_p = req;
    return AMC_SUCCESS;
}

int amc_goal_free(amc_goal_t *goal_p)
{
    amc_goal_t g;
    int        r, locked = 0;
    uint32_t   a;

    if ((goal_p == NULL) || ((g = *goal_p) == NULL)) {
        return AMC_ERR_ARG;
    }
    /* an instance may be finishing in a handler right after its request
     * completed: its schedule is freed under its communicator's lock (a
     * freed communicator's handle stays readable; after amc_finalize no
     * instance is left) */
    if ((g->comm != NULL) && (amc_api_state() != AMC_API_FINALIZED) &&
        (amc_comm_check(g->comm) == AMC_SUCCESS)) {
        amc_spin_lock(&g->comm->ctrl.lock);
        locked = 1;
    }
    for (r = 0; r < g->nranks; r++) {
        amc_goal_rank_t *rk = &g->ranks[r];

        if (rk->sched != NULL) {
            if (rk->sched->users == 0) {
                amc_coll_sched_release(rk->sched);
            } else {
                rk->sched->cached = 0; /* its last instance frees it */
            }
        }
        for (a = 0; a < rk->nacts; a++) {
            free(rk->acts[a].label);
        }
        free(rk->acts);
        free(rk->deps);
        free(rk->where);
    }
    if (locked) {
        amc_spin_unlock(&g->comm->ctrl.lock);
    }
    free(g->ranks);
    free(g);
    *goal_p = NULL;
    return AMC_SUCCESS;
}
