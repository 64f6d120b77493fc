/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A built-in collective's schedule as GOAL (amc_goal export): every rank's
 * engine schedule, built by its algorithm, written act for act. A message's
 * tag is its index among the pair's messages (what the engine matches by),
 * so GOAL's matching pairs them exactly as the engine does. Without data,
 * local acts become calc (their bytes as the cost) and the result is plain
 * GOAL for LogGOPSim; with data, copies and reductions stay, and a receive
 * that reduces becomes a receive into a staging buffer and a reduce.
 */
#include "am_coll/goal/goal.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/topo.h"

#include <stdlib.h>
#include <string.h>

static const amc_alg_t *amc_goal_builtin_alg(int coll, const char *name)
{
    size_t i;

    if (strcmp(name, "auto") != 0) {
        return amc_alg_find(coll, name);
    }
    for (i = 0; i < amc_alg_count(); i++) {
        if (amc_alg_at(i)->coll == coll) {
            return amc_alg_at(i);
        }
    }
    return NULL;
}

/* Rank r's engine schedule into g. */
static int amc_goal_add_sched(amc_goal_t g, int r, const amc_sched_t *s, int with_data,
                              const amc_coll_args_t *args)
{
    uint32_t *done_as, i, k;
    int       status = AMC_SUCCESS, x, y, stage = AMC_GOAL_BUF_TMP + 5;

    done_as = malloc(((size_t)s->nacts + 1) * sizeof(*done_as));
    if (done_as == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    if (with_data && (s->nbufs > (uint32_t)stage)) {
        free(done_as);
        return AMC_ERR_UNSUPPORTED; /* no name left for the staging buffer */
    }
    /* acts first (the act's index, and, for a receive that reduces, the
     * reduce that completes it), then the graph's edges */
    for (i = 0; (i < s->nacts) && (status == AMC_SUCCESS); i++) {
        const amc_sched_act_t *act = &s->acts[i];
        int                    buf = with_data ? act->buf : AMC_GOAL_BUF_TMP;
        size_t                 off = with_data ? act->off : 0;

        switch (act->type) {
        case AMC_ACT_SEND:
            status = amc_goal_send(g, r, act->peer, (int)act->tag, act->bytes, buf, off, &x);
            break;
        case AMC_ACT_RECV:
            status = amc_goal_recv(g, r, act->peer, (int)act->tag, act->bytes, buf, off, &x);
            break;
        case AMC_ACT_RECV_REDUCE:
        case AMC_ACT_RECV_REDUCE_R:
            if (!with_data) {
                status = amc_goal_recv(g, r, act->peer, (int)act->tag, act->bytes, buf, 0, &x);
                break;
            }
            status = amc_goal_recv(g, r, act->peer, (int)act->tag, act->bytes, stage, act->off2,
                                   &y);
            if (status == AMC_SUCCESS) {
                status = amc_goal_reduce(g, r, act->buf, act->off, stage, act->off2,
                                         act->bytes, args->dt, args->op,
                                         act->type == AMC_ACT_RECV_REDUCE_R, &x);
            }
            if (status == AMC_SUCCESS) {
                status = amc_goal_requires(g, r, x, y);
            }
            break;
        case AMC_ACT_COPY:
            status = with_data ? amc_goal_copy(g, r, act->buf, act->off, act->buf2, act->off2,
                                               act->bytes, &x)
                               : amc_goal_calc(g, r, act->bytes, &x);
            break;
        case AMC_ACT_REDUCE:
        case AMC_ACT_REDUCE_R:
            status = with_data ? amc_goal_reduce(g, r, act->buf, act->off, act->buf2,
                                                 act->off2, act->bytes, args->dt, args->op,
                                                 act->type == AMC_ACT_REDUCE_R, &x)
                               : amc_goal_calc(g, r, act->bytes, &x);
            break;
        default:
            status = amc_goal_calc(g, r, 0, &x);
            break;
        }
        done_as[i] = (uint32_t)x;
    }
    for (i = 0; (i < s->nacts) && (status == AMC_SUCCESS); i++) {
        for (k = 0; (k < s->acts[i].nsucc) && (status == AMC_SUCCESS); k++) {
            uint32_t succ  = s->succ[s->acts[i].succ + k];
            int      first = (int)done_as[succ];

            /* a split receive starts with its receive, the act before it */
            if (with_data && ((s->acts[succ].type == AMC_ACT_RECV_REDUCE) ||
                              (s->acts[succ].type == AMC_ACT_RECV_REDUCE_R))) {
                first--;
            }
            status = amc_goal_requires(g, r, first, (int)done_as[i]);
        }
    }
    free(done_as);
    return status;
}

int amc_goal_from_builtin(const char *coll_name, const char *alg_name, int nranks, size_t bytes,
                          int root, int with_data, amc_goal_t *goal, char *err, size_t errlen)
{
    return amc_goal_from_builtin_nodes(coll_name, alg_name, nranks, bytes, root, 0, with_data,
                                       goal, err, errlen);
}

int amc_goal_from_builtin_nodes(const char *coll_name, const char *alg_name, int nranks,
                                size_t bytes, int root, int node_size, int with_data,
                                amc_goal_t *goal, char *err, size_t errlen)
{
    amc_topo_t         *topo = NULL;
    const amc_alg_t    *alg;
    amc_coll_args_t     args;
    amc_sched_builder_t b;
    amc_sched_t        *s;
    amc_goal_t          g;
    size_t             *vcounts;
    int                 coll, r, status;

    for (coll = 1; coll < AMC_COLL_LAST; coll++) {
        if (!strcmp(amc_coll_name(coll), coll_name)) {
            break;
        }
    }
    alg = (coll < AMC_COLL_LAST) ? amc_goal_builtin_alg(coll, alg_name) : NULL;
    if ((alg == NULL) || (alg->build == NULL)) {
        snprintf(err, errlen, "no algorithm %s for collective %s", alg_name, coll_name);
        return AMC_ERR_ARG;
    }
    if ((nranks < 1) || (root < 0) || (root >= nranks)) {
        snprintf(err, errlen, "root %d is not a rank of %d", root, nranks);
        return AMC_ERR_ARG;
    }
    memset(&args, 0, sizeof(args));
    args.coll        = (uint8_t)coll;
    args.root        = root;
    args.dt          = ((bytes % sizeof(int32_t)) == 0) ? AMC_INT32 : AMC_UINT8;
    (void)amc_datatype_size(args.dt, &args.dt_size);
    args.count       = bytes / args.dt_size;
    args.op          = AMC_SUM;
    args.commutative = 1;
    args.segment     = 32768;
    args.bruck_block = 256;    /* AMC_ALLTOALLV_BRUCK_BLOCK's default */
    args.pull_bytes  = 16384;  /* AMC_RNDV_THRESH's */
    args.sendbuf     = "";
    args.recvbuf     = &args;  /* never touched: building reads no buffer */
    /* the v-forms with every rank's block of the given size, laid out in
     * rank order: the same messages as the regular form's, so its schedule
     * can be compared with theirs */
    vcounts = malloc(2 * (size_t)nranks * sizeof(*vcounts));
    if (vcounts == NULL) {
        snprintf(err, errlen, "out of memory");
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < nranks; r++) {
        vcounts[r]          = args.count;
        vcounts[nranks + r] = (size_t)r * args.count;
    }
    args.scount  = args.count;
    args.rcount  = args.count;
    args.scounts = vcounts;
    args.rcounts = vcounts;
    args.sdispls = vcounts + nranks;
    args.rdispls = vcounts + nranks;
    status = amc_topo_create_block(nranks, node_size, &topo);
    if (status == AMC_SUCCESS) {
        args.topo = topo;
        status    = amc_goal_create(nranks, &g);
    }
    if (status != AMC_SUCCESS) {
        amc_topo_free(topo);
        free(vcounts);
        snprintf(err, errlen, "out of memory");
        return status;
    }
    for (r = 0; (r < nranks) && (status == AMC_SUCCESS); r++) {
        status = amc_sb_init(&b);
        if (status == AMC_SUCCESS) {
            status = alg->build(&b, &args, r, nranks);
            if (status == AMC_SUCCESS) {
                status = amc_sb_finish(&b, &s);
            } else if (amc_sb_finish(&b, &s) == AMC_SUCCESS) {
                amc_sched_free(s);
            }
        }
        if (status == AMC_SUCCESS) {
            status = amc_goal_add_sched(g, r, s, with_data, &args);
            amc_sched_free(s);
        }
    }
    free(vcounts);
    amc_topo_free(topo);
    if (status != AMC_SUCCESS) {
        snprintf(err, errlen, "building %s/%s for rank %d of %d failed: %s", coll_name,
                 alg->name, r - 1, nranks, amc_strerror(status));
        amc_goal_free(&g);
        return status;
    }
    *goal = g;
    return AMC_SUCCESS;
}
