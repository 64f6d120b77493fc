/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bootstrap whose exchange the caller gives (amc_init_boot): two
 * allgathers at the start, the caller's barrier at the teardown. Every
 * rank's published values are kept (what PMIx fetches on demand), so the
 * memory is the job's size times an address: meant for an MPI world, not
 * for a million ranks.
 */
#include "transport/user_boot.h"
#include "base/clock.h"
#include "base/status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct amc_user_boot {
    amc_bootstrap_t super;     /* first: the transport's view of it */
    amc_boot_t      user;
    amc_log_t       log;
    int            *node_of;   /* [size]: each rank's node */
    char            job[48];
    /* after publish: each rank's values, in one block per rank */
    char            key[2][32];
    uint8_t        *vals;      /* size * stride */
    size_t          stride;
    size_t          local_at;  /* where a block's local value starts */
    uint64_t       *lens;      /* [size][2] */
} amc_user_boot_t;

/* What the first allgather carries. */
typedef struct amc_user_boot_id {
    int32_t node;
    int32_t rank;
    int32_t pid;
    int32_t size;
} amc_user_boot_id_t;

static int amc_user_boot_gather(amc_user_boot_t *b, const void *mine, void *all, size_t len,
                                const char *what)
{
    if (b->user.allgather(b->user.arg, mine, all, len) != 0) {
        /* the caller gave up, on every rank alike (a rank's start failed):
         * it says why, once, where a line here would come from each rank */
        amc_debug(&b->log, "the caller's allgather of %s failed", what);
        return AMC_ERR_TRANSPORT;
    }
    return AMC_SUCCESS;
}

static int amc_user_boot_publish(amc_bootstrap_t *bs, const char *key, const void *val,
                                 size_t len, const char *local_key, const void *local_val,
                                 size_t local_len)
{
    amc_user_boot_t *b = (amc_user_boot_t *)bs;
    uint64_t         mine[2] = { len, (local_key != NULL) ? local_len : 0 }, max[2] = { 0, 0 };
    uint8_t         *block;
    int              r, status;

    if ((strlen(key) >= sizeof(b->key[0])) ||
        ((local_key != NULL) && (strlen(local_key) >= sizeof(b->key[1])))) {
        return AMC_ERR_ARG;
    }
    snprintf(b->key[0], sizeof(b->key[0]), "%s", key);
    snprintf(b->key[1], sizeof(b->key[1]), "%s", (local_key != NULL) ? local_key : "");
    b->lens = calloc((size_t)b->super.size, sizeof(mine));
    if (b->lens == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    /* the lengths first: the values then go in blocks of the longest */
    status = amc_user_boot_gather(b, mine, b->lens, sizeof(mine), "the address lengths");
    if (status != AMC_SUCCESS) {
        return status;
    }
    for (r = 0; r < b->super.size; r++) {
        max[0] = (b->lens[2 * r] > max[0]) ? b->lens[2 * r] : max[0];
        max[1] = (b->lens[2 * r + 1] > max[1]) ? b->lens[2 * r + 1] : max[1];
    }
    if ((max[0] > (1u << 20)) || (max[1] > (1u << 20))) {
        amc_error(&b->log, "a rank published %llu bytes: not an address",
                  (unsigned long long)((max[0] > max[1]) ? max[0] : max[1]));
        return AMC_ERR_TRANSPORT;
    }
    b->stride   = (size_t)(max[0] + max[1]);
    b->local_at = (size_t)max[0];
    b->vals   = calloc((size_t)b->super.size + 1, b->stride ? b->stride : 1);
    if (b->vals == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    /* this rank's block, at the end: the gather's own source */
    block = b->vals + (size_t)b->super.size * b->stride;
    memcpy(block, val, len);
    if (mine[1] > 0) {
        memcpy(block + max[0], local_val, local_len);
    }
    return (b->stride == 0) ? AMC_SUCCESS
                            : amc_user_boot_gather(b, block, b->vals, b->stride, "the addresses");
}

static int amc_user_boot_get(amc_bootstrap_t *bs, int rank, const char *key, void **val_p,
                             size_t *len_p)
{
    amc_user_boot_t *b = (amc_user_boot_t *)bs;
    int              which;
    size_t           off = 0, len;

    if ((b->vals == NULL) || (rank < 0) || (rank >= b->super.size)) {
        return AMC_ERR_ARG;
    }
    if (strcmp(key, b->key[0]) == 0) {
        which = 0;
    } else if ((b->key[1][0] != '\0') && (strcmp(key, b->key[1]) == 0) &&
               (b->node_of[rank] == b->user.node)) {
        which = 1; /* a value for the ranks of its node only, as PMIX_LOCAL */
        off   = b->local_at;
    } else {
        return AMC_ERR_ARG;
    }
    len = (size_t)b->lens[2 * rank + which];
    *val_p = malloc(len ? len : 1);
    if (*val_p == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    memcpy(*val_p, b->vals + (size_t)rank * b->stride + off, len);
    *len_p = len;
    return AMC_SUCCESS;
}

static int amc_user_boot_local_peers(amc_bootstrap_t *bs, int **ranks_p, int *n_p)
{
    amc_user_boot_t *b = (amc_user_boot_t *)bs;
    int              r, n = 0;

    *ranks_p = malloc((size_t)b->super.local_size * sizeof(int));
    if (*ranks_p == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (r = 0; r < b->super.size; r++) {
        if (b->node_of[r] == b->user.node) {
            (*ranks_p)[n++] = r;
        }
    }
    *n_p = n;
    return AMC_SUCCESS;
}

static void amc_user_boot_node_map(amc_bootstrap_t *bs, amc_node_map_t *map)
{
    amc_user_boot_t *b = (amc_user_boot_t *)bs;
    int              nnodes;

    if (amc_node_map_from_ids(map, b->node_of, b->super.size, &nnodes) != AMC_SUCCESS) {
        amc_warn(&b->log, "no memory for the node map: treating the job as one node");
        return;
    }
    amc_debug(&b->log, "nodes from the caller's exchange: %d node%s", nnodes,
              (nnodes == 1) ? "" : "s");
}

/* The caller's barrier calls this while it waits. */
typedef struct amc_user_boot_wait {
    amc_boot_progress_fn_t progress;
    void                  *arg;
    double                 deadline;
    int                    why;  /* AMC_ERR_PEER, AMC_ERR_TIMEOUT once given up */
} amc_user_boot_wait_t;

static int amc_user_boot_wait_progress(void *ctx)
{
    amc_user_boot_wait_t *w = ctx;

    if ((w->progress != NULL) && w->progress(w->arg)) {
        w->why = AMC_ERR_PEER;
    } else if ((w->deadline > 0.0) && (amc_clock_sec() > w->deadline)) {
        w->why = AMC_ERR_TIMEOUT;
    }
    return w->why != AMC_SUCCESS;
}

static int amc_user_boot_fence(amc_bootstrap_t *bs, amc_boot_progress_fn_t progress, void *arg,
                               double deadline)
{
    amc_user_boot_t     *b = (amc_user_boot_t *)bs;
    amc_user_boot_wait_t w = { progress, arg, deadline, AMC_SUCCESS };

    if (b->super.singleton) {
        return AMC_SUCCESS;
    }
    if (b->user.barrier(b->user.arg, amc_user_boot_wait_progress, &w) == 0) {
        return AMC_SUCCESS;
    }
    if (w.why == AMC_ERR_TIMEOUT) {
        amc_warn(&b->log, "the caller's barrier: no answer by the deadline "
                 "(AMC_FINALIZE_TIMEOUT); going on without it");
    }
    return (w.why != AMC_SUCCESS) ? w.why : AMC_ERR_TRANSPORT;
}

static void amc_user_boot_watch(amc_bootstrap_t *bs, amc_boot_dead_fn_t fn, void *arg)
{
    /* the caller reports no deaths: the pid watch and UCX find them */
    (void)bs;
    (void)fn;
    (void)arg;
}

static void amc_user_boot_unwatch(amc_bootstrap_t *bs)
{
    (void)bs;
}

static void amc_user_boot_finalize(amc_bootstrap_t *bs)
{
    amc_user_boot_t *b = (amc_user_boot_t *)bs;

    if (b == NULL) {
        return;
    }
    free(b->vals);
    free(b->lens);
    free(b->node_of);
    free(b);
}

static const amc_bootstrap_ops_t amc_user_boot_ops = {
    .publish     = amc_user_boot_publish,
    .get         = amc_user_boot_get,
    .local_peers = amc_user_boot_local_peers,
    .node_map    = amc_user_boot_node_map,
    .fence       = amc_user_boot_fence,
    .watch       = amc_user_boot_watch,
    .unwatch     = amc_user_boot_unwatch,
    .finalize    = amc_user_boot_finalize,
};

int amc_user_bootstrap(const amc_boot_t *user, const amc_log_t *log, amc_bootstrap_t **bs_p)
{
    amc_user_boot_id_t  me, *ids = NULL;
    amc_user_boot_t    *b;
    int                 r, status;

    if ((user == NULL) || (user->size < 1) || (user->rank < 0) || (user->rank >= user->size) ||
        (user->node < 0) || (user->allgather == NULL) || (user->barrier == NULL)) {
        amc_error(log, "amc_init_boot: rank %d of %d on node %d, or a callback missing",
                  (user != NULL) ? user->rank : -1, (user != NULL) ? user->size : -1,
                  (user != NULL) ? user->node : -1);
        return AMC_ERR_ARG;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    b->user    = *user;
    b->log     = *log;
    b->node_of = malloc((size_t)user->size * sizeof(int));
    ids        = malloc((size_t)user->size * sizeof(*ids));
    if ((b->node_of == NULL) || (ids == NULL)) {
        status = AMC_ERR_NO_MEMORY;
        goto err;
    }
    /* who is where, and whether every rank tells the same story */
    me.node = user->node;
    me.rank = user->rank;
    me.pid  = (int32_t)getpid();
    me.size = user->size;
    status  = amc_user_boot_gather(b, &me, ids, sizeof(me), "the ranks' nodes");
    if (status != AMC_SUCCESS) {
        goto err;
    }
    for (r = 0; r < user->size; r++) {
        if ((ids[r].rank != r) || (ids[r].size != user->size) || (ids[r].node < 0)) {
            amc_error(log, "amc_init_boot: the caller's allgather put rank %d of %d (node %d) "
                      "at %d of %d", ids[r].rank, ids[r].size, ids[r].node, r, user->size);
            status = AMC_ERR_ARG;
            goto err;
        }
        b->node_of[r]     = ids[r].node;
        b->super.local_size += (ids[r].node == user->node);
    }
    /* a name the ranks share, for the inbox's memfd: rank 0's pid */
    snprintf(b->job, sizeof(b->job), "boot%d", (int)ids[0].pid);
    free(ids);
    b->super.ops       = &amc_user_boot_ops;
    b->super.kind      = "the caller's exchange";
    b->super.job       = b->job;
    b->super.rank      = user->rank;
    b->super.size      = user->size;
    b->super.singleton = (user->size == 1);
    *bs_p              = &b->super;
    return AMC_SUCCESS;

err:
    free(ids);
    amc_user_boot_finalize(&b->super);
    return status;
}
