/* SPDX-License-Identifier: BSD-3-Clause */
#include "transport/pmix_boot.h"
#include "base/clock.h"
#include "base/log.h"
#include "amcoll.h"

#include <pmix.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct amc_pmix_boot {
    amc_bootstrap_t super;   /* first: the transport's view of it */
    pmix_proc_t myproc;
    int         rank;
    int         size;
    int         local_size;
    int         singleton;   /* no PMIx server: a job of one */
    int         initialized; /* PMIx_Init succeeded and needs PMIx_Finalize */
    amc_log_t   log;
    amc_boot_dead_fn_t dead_fn;  /* amc_pmix_boot_watch */
    void       *dead_arg;
    size_t      evhdlr_ref;
    int         watching;
};

/* PMIx calls an event handler without a user argument, and its events are
 * the process's anyway (one PMIx client per process): the watching boot. */
static amc_pmix_boot_t *amc_pmix_watched;

/* Job-level integer keys live on the wildcard rank only (ucx-pmix-notes §4). */
static int amc_pmix_get_job_int(amc_pmix_boot_t *boot, const char *key, int *size_p)
{
    pmix_proc_t   wildcard;
    pmix_value_t *value = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&wildcard, boot->myproc.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wildcard, key, NULL, 0, &value);
    if ((rc != PMIX_SUCCESS) || (value == NULL)) {
        amc_error(&boot->log, "PMIx_Get(%s) failed: %s", key, PMIx_Error_string(rc));
        return AMC_ERR_TRANSPORT;
    }
    switch (value->type) {
    case PMIX_UINT32: *size_p = (int)value->data.uint32; break;
    case PMIX_INT:    *size_p = value->data.integer;     break;
    case PMIX_UINT16: *size_p = (int)value->data.uint16; break;
    default:
        amc_error(&boot->log, "%s has unexpected type %d", key, (int)value->type);
        PMIX_VALUE_RELEASE(value);
        return AMC_ERR_TRANSPORT;
    }
    PMIX_VALUE_RELEASE(value);
    return AMC_SUCCESS;
}

int amc_pmix_boot_init(amc_pmix_boot_t **boot_p)
{
    amc_pmix_boot_t *boot;
    pmix_status_t    rc;
    int              status;

    boot = calloc(1, sizeof(*boot));
    if (boot == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    boot->log = amc_log_from_env();

    rc = PMIx_Init(&boot->myproc, NULL, 0);
    if ((rc == PMIX_ERR_UNREACH) || (rc == PMIX_ERR_NOT_FOUND)) {
        /* started without a launcher: PMIx still fills a singleton identity */
        boot->initialized = PMIx_Initialized();
        boot->singleton   = 1;
        boot->rank        = 0;
        boot->size        = 1;
        boot->local_size  = 1;
        *boot_p           = boot;
        return AMC_SUCCESS;
    }
    if (rc != PMIX_SUCCESS) {
        amc_error(&boot->log, "PMIx_Init failed: %s", PMIx_Error_string(rc));
        status = AMC_ERR_TRANSPORT;
        goto err_free;
    }
    boot->initialized = 1;
    boot->rank        = (int)boot->myproc.rank;
    boot->log.rank    = boot->rank;

    status = amc_pmix_get_job_int(boot, PMIX_JOB_SIZE, &boot->size);
    if (status != AMC_SUCCESS) {
        goto err_finalize;
    }
    /* only a hint for the wait policy: assume the job is on one node without it */
    if (amc_pmix_get_job_int(boot, PMIX_LOCAL_SIZE, &boot->local_size) != AMC_SUCCESS) {
        boot->local_size = boot->size;
    }
    if ((boot->size < 1) || (boot->rank < 0) || (boot->rank >= boot->size)) {
        amc_error(&boot->log, "PMIx gave rank %d of job size %d", boot->rank, boot->size);
        status = AMC_ERR_TRANSPORT;
        goto err_finalize;
    }
    *boot_p = boot;
    return AMC_SUCCESS;

err_finalize:
    PMIx_Finalize(NULL, 0);
err_free:
    free(boot);
    return status;
}

/* Source 1, PMIX_NODEID of every rank (ORTE, PRRTE). Job-level data every
 * rank holds alike: no modex, no fence. */
static int amc_pmix_boot_ids_from_nodeid(amc_pmix_boot_t *boot, int *node_of_rank)
{
    pmix_proc_t   peer;
    pmix_value_t *value;
    pmix_status_t rc;
    int           r;

    for (r = 0; r < boot->size; r++) {
        value = NULL;
        PMIX_LOAD_PROCID(&peer, boot->myproc.nspace, (pmix_rank_t)r);
        rc = PMIx_Get(&peer, PMIX_NODEID, NULL, 0, &value);
        if ((rc != PMIX_SUCCESS) || (value == NULL) || (value->type != PMIX_UINT32) ||
            (value->data.uint32 > INT32_MAX)) {
            amc_debug(&boot->log, "no PMIX_NODEID for rank %d (%s)", r,
                      (rc != PMIX_SUCCESS) ? PMIx_Error_string(rc) : "not a uint32 below 2^31");
            if (value != NULL) {
                PMIX_VALUE_RELEASE(value);
            }
            return AMC_ERR_TRANSPORT;
        }
        node_of_rank[r] = (int)value->data.uint32;
        PMIX_VALUE_RELEASE(value);
    }
    return AMC_SUCCESS;
}

/* Source 2, the job's node list and each node's ranks (Slurm's plugin,
 * which gives no PMIX_NODEID for other ranks): a node is its place in the
 * list. */
static int amc_pmix_boot_ids_from_peers(amc_pmix_boot_t *boot, int *node_of_rank)
{
    amc_node_list_t hosts = { 0 };
    pmix_proc_t    *procs;
    pmix_status_t   rc;
    const char     *why;
    char           *nodelist = NULL;
    size_t          nprocs, i;
    int           **ranks = NULL, *nranks = NULL;
    int             h, bad, status;

    rc = PMIx_Resolve_nodes(boot->myproc.nspace, &nodelist);
    if ((rc != PMIX_SUCCESS) || (nodelist == NULL)) {
        amc_debug(&boot->log, "no PMIx_Resolve_nodes (%s)", PMIx_Error_string(rc));
        return AMC_ERR_TRANSPORT;
    }
    status = amc_node_list_parse(&hosts, nodelist);
    free(nodelist);
    if (status != AMC_SUCCESS) {
        amc_debug(&boot->log, "no memory for PMIx_Resolve_nodes' node list");
        return status;
    }
    ranks  = calloc((size_t)hosts.n + 1, sizeof(*ranks));
    nranks = calloc((size_t)hosts.n + 1, sizeof(*nranks));
    if ((ranks == NULL) || (nranks == NULL)) {
        amc_debug(&boot->log, "no memory for PMIx_Resolve_peers' ranks");
        status = AMC_ERR_NO_MEMORY;
        goto out;
    }
    for (h = 0; h < hosts.n; h++) {
        procs  = NULL;
        nprocs = 0;
        rc     = PMIx_Resolve_peers(hosts.names[h], boot->myproc.nspace, &procs, &nprocs);
        if (rc != PMIX_SUCCESS) {
            amc_debug(&boot->log, "no PMIx_Resolve_peers(%s) (%s)", hosts.names[h],
                      PMIx_Error_string(rc));
            status = AMC_ERR_TRANSPORT;
            goto out;
        }
        ranks[h] = malloc((nprocs + 1) * sizeof(**ranks));
        for (i = 0; (ranks[h] != NULL) && (i < nprocs); i++) {
            /* a wildcard or another job's rank: out of range, so refused */
            ranks[h][i] = (PMIX_CHECK_NSPACE(procs[i].nspace, boot->myproc.nspace) &&
                           (procs[i].rank < (pmix_rank_t)boot->size)) ? (int)procs[i].rank : -1;
        }
        nranks[h] = (int)nprocs;
        PMIX_PROC_FREE(procs, nprocs);
        if (ranks[h] == NULL) {
            amc_debug(&boot->log, "no memory for PMIx_Resolve_peers' ranks");
            status = AMC_ERR_NO_MEMORY;
            goto out;
        }
    }
    why = amc_node_ids_from_hosts(node_of_rank, boot->size, (const int *const *)ranks, nranks,
                                  hosts.n, &bad);
    if (why != NULL) {
        amc_debug(&boot->log, "PMIx_Resolve_peers over %d nodes: rank %d %s", hosts.n, bad, why);
        status = AMC_ERR_TRANSPORT;
    }
out:
    for (h = 0; (ranks != NULL) && (h < hosts.n); h++) {
        free(ranks[h]);
    }
    free(ranks);
    free(nranks);
    amc_node_list_free(&hosts);
    return status;
}

/* Source 3, PMIX_HOSTNAME of every rank: nodes numbered as their names
 * first appear, so every rank numbers them alike. */
static int amc_pmix_boot_ids_from_hostname(amc_pmix_boot_t *boot, int *node_of_rank)
{
    pmix_value_t **values;
    const char   **names;
    pmix_proc_t    peer;
    pmix_status_t  rc;
    int            r, status = AMC_SUCCESS;

    values = calloc((size_t)boot->size, sizeof(*values));
    names  = calloc((size_t)boot->size, sizeof(*names));
    if ((values == NULL) || (names == NULL)) {
        amc_debug(&boot->log, "no memory for the ranks' PMIX_HOSTNAME");
        status = AMC_ERR_NO_MEMORY;
        goto out;
    }
    for (r = 0; r < boot->size; r++) {
        PMIX_LOAD_PROCID(&peer, boot->myproc.nspace, (pmix_rank_t)r);
        rc = PMIx_Get(&peer, PMIX_HOSTNAME, NULL, 0, &values[r]);
        if ((rc != PMIX_SUCCESS) || (values[r] == NULL) || (values[r]->type != PMIX_STRING) ||
            (values[r]->data.string == NULL)) {
            amc_debug(&boot->log, "no PMIX_HOSTNAME for rank %d (%s)", r,
                      (rc != PMIX_SUCCESS) ? PMIx_Error_string(rc) : "not a string");
            status = AMC_ERR_TRANSPORT;
            goto out;
        }
        names[r] = values[r]->data.string;
    }
    status = amc_node_ids_from_names(node_of_rank, names, boot->size);
    if (status != AMC_SUCCESS) {
        amc_debug(&boot->log, "no memory to number the ranks' PMIX_HOSTNAME");
    }
out:
    for (r = 0; (values != NULL) && (r < boot->size); r++) {
        if (values[r] != NULL) {
            PMIX_VALUE_RELEASE(values[r]);
        }
    }
    free(values);
    free(names);
    return status;
}

void amc_pmix_boot_node_map(amc_pmix_boot_t *boot, amc_node_map_t *map)
{
    static const struct {
        const char *name;
        int       (*fill)(amc_pmix_boot_t *boot, int *node_of_rank);
    } sources[] = {
        { "PMIX_NODEID",        amc_pmix_boot_ids_from_nodeid },
        { "PMIx_Resolve_peers", amc_pmix_boot_ids_from_peers },
        { "PMIX_HOSTNAME",      amc_pmix_boot_ids_from_hostname },
    };
    int *node_of_rank;
    int  i, n = (int)(sizeof(sources) / sizeof(sources[0])), nnodes;

    if (boot->singleton) {
        return;
    }
    node_of_rank = malloc((size_t)boot->size * sizeof(*node_of_rank));
    if (node_of_rank == NULL) {
        amc_warn(&boot->log, "no memory for the node map: treating the job as one node");
        return;
    }
    /* launchers differ in what they give: the first source that places
     * every rank decides (each failure says why at debug level) */
    for (i = 0; i < n; i++) {
        if (sources[i].fill(boot, node_of_rank) == AMC_SUCCESS) {
            break;
        }
    }
    if (i == n) {
        amc_debug(&boot->log, "no source gave every rank a node: treating the job as one node");
    } else if (amc_node_map_from_ids(map, node_of_rank, boot->size, &nnodes) != AMC_SUCCESS) {
        amc_warn(&boot->log, "no memory for the node map: treating the job as one node");
    } else {
        amc_debug(&boot->log, "nodes from %s: %d node%s", sources[i].name, nnodes,
                  (nnodes == 1) ? "" : "s");
    }
    free(node_of_rank);
}

int amc_pmix_boot_rank(const amc_pmix_boot_t *boot)
{
    return boot->rank;
}

int amc_pmix_boot_size(const amc_pmix_boot_t *boot)
{
    return boot->size;
}

int amc_pmix_boot_local_size(const amc_pmix_boot_t *boot)
{
    return boot->local_size;
}

const char *amc_pmix_boot_nspace(const amc_pmix_boot_t *boot)
{
    return boot->singleton ? "singleton" : boot->myproc.nspace;
}

int amc_pmix_boot_is_singleton(const amc_pmix_boot_t *boot)
{
    return boot->singleton;
}

/* Puts key (every rank may read it) and local_key (only this node's ranks:
 * NULL for none), commits, and fences, collecting the values or not. */
static int amc_pmix_boot_put_fence(amc_pmix_boot_t *boot, const char *key, const void *val,
                                   size_t len, const char *local_key, const void *local_val,
                                   size_t local_len, bool collect)
{
    pmix_value_t  value;
    pmix_info_t   info;
    pmix_status_t rc;

    value.type          = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)val;
    value.data.bo.size  = len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &value); /* copies the value */
    if ((rc == PMIX_SUCCESS) && (local_key != NULL)) {
        value.data.bo.bytes = (char *)local_val;
        value.data.bo.size  = local_len;
        rc = PMIx_Put(PMIX_LOCAL, local_key, &value);
    }
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Commit();
    }
    if (rc == PMIX_SUCCESS) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
    }
    if (rc != PMIX_SUCCESS) {
        amc_error(&boot->log, "publishing %s through PMIx failed: %s", key, PMIx_Error_string(rc));
        return AMC_ERR_TRANSPORT;
    }
    return AMC_SUCCESS;
}

int amc_pmix_boot_exchange(amc_pmix_boot_t *boot, const char *key,
                           const void *addr, size_t len,
                           void ***addrs_p, size_t **lens_p)
{
    pmix_value_t *got;
    pmix_proc_t   peer;
    pmix_status_t rc;
    void        **addrs;
    size_t       *lens;
    int           i, status;

    addrs = calloc((size_t)boot->size, sizeof(*addrs));
    lens  = calloc((size_t)boot->size, sizeof(*lens));
    if ((addrs == NULL) || (lens == NULL)) {
        status = AMC_ERR_NO_MEMORY;
        goto err;
    }

    if (boot->singleton) {
        /* nobody to talk to: our own address is the whole table */
        addrs[0] = malloc(len);
        if (addrs[0] == NULL) {
            status = AMC_ERR_NO_MEMORY;
            goto err;
        }
        memcpy(addrs[0], addr, len);
        lens[0] = len;
        goto out;
    }

    status = amc_pmix_boot_put_fence(boot, key, addr, len, NULL, NULL, 0, true);
    if (status != AMC_SUCCESS) {
        goto err;
    }

    for (i = 0; i < boot->size; i++) {
        PMIX_LOAD_PROCID(&peer, boot->myproc.nspace, (pmix_rank_t)i);
        got = NULL;
        rc  = PMIx_Get(&peer, key, NULL, 0, &got);
        if ((rc != PMIX_SUCCESS) || (got == NULL) || (got->type != PMIX_BYTE_OBJECT)) {
            amc_error(&boot->log, "PMIx_Get(%s) of rank %d failed: %s", key, i,
                      PMIx_Error_string(rc));
            if (got != NULL) {
                PMIX_VALUE_RELEASE(got);
            }
            status = AMC_ERR_TRANSPORT;
            goto err;
        }
        addrs[i] = malloc(got->data.bo.size);
        if (addrs[i] == NULL) {
            PMIX_VALUE_RELEASE(got);
            status = AMC_ERR_NO_MEMORY;
            goto err;
        }
        memcpy(addrs[i], got->data.bo.bytes, got->data.bo.size);
        lens[i] = got->data.bo.size;
        PMIX_VALUE_RELEASE(got);
    }

out:
    *addrs_p = addrs;
    *lens_p  = lens;
    return AMC_SUCCESS;

err:
    amc_pmix_boot_free_addrs(boot, addrs, lens);
    return status;
}

void amc_pmix_boot_free_addrs(amc_pmix_boot_t *boot, void **addrs, size_t *lens)
{
    int i;

    if (addrs != NULL) {
        for (i = 0; i < boot->size; i++) {
            free(addrs[i]);
        }
    }
    free(addrs);
    free(lens);
}

int amc_pmix_boot_publish(amc_pmix_boot_t *boot, const char *key, const void *val, size_t len,
                          const char *local_key, const void *local_val, size_t local_len)
{
    if (boot->singleton) {
        return AMC_SUCCESS; /* nobody to tell: a job of one reads nothing */
    }
    /* no data collection: a peer's value is fetched when it is first
     * needed (direct modex); the fence only says every rank committed,
     * so that such a fetch is answered at once, never waits for a peer */
    return amc_pmix_boot_put_fence(boot, key, val, len, local_key, local_val, local_len, false);
}

int amc_pmix_boot_get(amc_pmix_boot_t *boot, int rank, const char *key, void **val_p,
                      size_t *len_p)
{
    pmix_value_t *got = NULL;
    pmix_proc_t   peer;
    pmix_status_t rc;

    if (boot->singleton) {
        return AMC_ERR_TRANSPORT; /* nothing was published */
    }
    PMIX_LOAD_PROCID(&peer, boot->myproc.nspace, (pmix_rank_t)rank);
    rc = PMIx_Get(&peer, key, NULL, 0, &got);
    if ((rc != PMIX_SUCCESS) || (got == NULL) || (got->type != PMIX_BYTE_OBJECT)) {
        amc_error(&boot->log, "PMIx_Get(%s) of rank %d failed: %s", key, rank,
                  PMIx_Error_string(rc));
        if (got != NULL) {
            PMIX_VALUE_RELEASE(got);
        }
        return AMC_ERR_TRANSPORT;
    }
    *val_p = malloc((got->data.bo.size > 0) ? got->data.bo.size : 1);
    if (*val_p == NULL) {
        PMIX_VALUE_RELEASE(got);
        return AMC_ERR_NO_MEMORY;
    }
    memcpy(*val_p, got->data.bo.bytes, got->data.bo.size);
    *len_p = got->data.bo.size;
    PMIX_VALUE_RELEASE(got);
    return AMC_SUCCESS;
}

int amc_pmix_boot_local_peers(amc_pmix_boot_t *boot, int **ranks_p, int *n_p)
{
    pmix_proc_t   wildcard;
    pmix_value_t *got = NULL;
    pmix_status_t rc;
    const char   *p;
    char         *end;
    int          *ranks, n = 0, max = 0;
    long          r;

    *ranks_p = NULL;
    *n_p     = 0;
    if (boot->singleton) {
        return AMC_SUCCESS;
    }
    PMIX_LOAD_PROCID(&wildcard, boot->myproc.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wildcard, PMIX_LOCAL_PEERS, NULL, 0, &got);
    if ((rc != PMIX_SUCCESS) || (got == NULL) || (got->type != PMIX_STRING) ||
        (got->data.string == NULL)) {
        amc_warn(&boot->log, "PMIx_Get(%s) failed: %s; the peers on this node are not "
                 "watched by pid", PMIX_LOCAL_PEERS, PMIx_Error_string(rc));
        if (got != NULL) {
            PMIX_VALUE_RELEASE(got);
        }
        return AMC_ERR_TRANSPORT;
    }
    for (p = got->data.string; *p != '\0'; p++) {
        max += (*p == ',');
    }
    ranks = malloc(((size_t)max + 1) * sizeof(*ranks));
    if (ranks == NULL) {
        PMIX_VALUE_RELEASE(got);
        return AMC_ERR_NO_MEMORY;
    }
    /* "0,1,2,3": the ranks of this job on this node, this one included */
    for (p = got->data.string; (*p != '\0') && (n <= max); p = end) {
        r = strtol(p, &end, 10);
        if (end == p) {
            break;
        }
        if ((r >= 0) && (r < boot->size)) {
            ranks[n++] = (int)r;
        }
        while (*end == ',') {
            end++;
        }
    }
    PMIX_VALUE_RELEASE(got);
    *ranks_p = ranks;
    *n_p     = n;
    return AMC_SUCCESS;
}

/* A fence in flight. On the heap, not the waiter's stack: a fence given up
 * at its deadline may still complete later, on PMIx's thread, and its
 * callback must find memory that is still there (it is then left behind:
 * a few bytes, once, at the end of a job that lost a process). */
typedef struct amc_pmix_fence_op {
    int         done;      /* 0 running, 1 done, -1 failed */
    pmix_info_t info;
} amc_pmix_fence_op_t;

static void amc_pmix_fence_done(pmix_status_t status, void *cbdata)
{
    amc_pmix_fence_op_t *op = cbdata;

    /* runs on PMIx's own thread */
    __atomic_store_n(&op->done, (status == PMIX_SUCCESS) ? 1 : -1, __ATOMIC_RELEASE);
}

int amc_pmix_boot_fence(amc_pmix_boot_t *boot, amc_boot_progress_fn_t progress, void *arg,
                        double deadline)
{
    amc_pmix_fence_op_t *op;
    pmix_status_t        rc;
    double               now;
    int                  done, seconds;

    if (boot->singleton) {
        return AMC_SUCCESS;
    }
    op = calloc(1, sizeof(*op));
    if (op == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    if (deadline > 0.0) {
        /* the server may give up too, and tell the others */
        now     = amc_clock_sec();
        seconds = (deadline > now) ? (int)(deadline - now) + 1 : 1;
        PMIX_INFO_LOAD(&op->info, PMIX_TIMEOUT, &seconds, PMIX_INT);
    }
    rc = PMIx_Fence_nb(NULL, 0, (deadline > 0.0) ? &op->info : NULL, (deadline > 0.0) ? 1 : 0,
                       amc_pmix_fence_done, op);
    if (rc != PMIX_SUCCESS) {
        amc_error(&boot->log, "PMIx_Fence_nb failed: %s", PMIx_Error_string(rc));
        free(op);
        return AMC_ERR_TRANSPORT;
    }
    /* peers may need our progress (e.g. to flush) before they reach the fence */
    while ((done = __atomic_load_n(&op->done, __ATOMIC_ACQUIRE)) == 0) {
        if ((progress != NULL) && progress(arg)) {
            return AMC_ERR_PEER; /* op stays: the callback may still come */
        }
        if ((deadline > 0.0) && (amc_clock_sec() > deadline)) {
            amc_warn(&boot->log, "PMIx fence: no answer by the deadline "
                     "(AMC_FINALIZE_TIMEOUT); going on without it");
            return AMC_ERR_TIMEOUT; /* op stays: the callback may still come */
        }
        sched_yield();
    }
    free(op); /* the info holds an int: nothing to destruct */
    return (done == 1) ? AMC_SUCCESS : AMC_ERR_TRANSPORT;
}

/* Where the terminated process is named: the affected proc(s), else the
 * source of the event. */
static void amc_pmix_event_procs(amc_pmix_boot_t *boot, const pmix_proc_t *source,
                                 const pmix_info_t *info, size_t ninfo)
{
    const pmix_proc_t *procs = NULL;
    size_t             nprocs = 0, i;

    for (i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            (info[i].value.type == PMIX_PROC) && (info[i].value.data.proc != NULL)) {
            procs  = info[i].value.data.proc;
            nprocs = 1;
            break;
        }
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
            (info[i].value.type == PMIX_DATA_ARRAY) && (info[i].value.data.darray != NULL) &&
            (info[i].value.data.darray->type == PMIX_PROC)) {
            procs  = info[i].value.data.darray->array;
            nprocs = info[i].value.data.darray->size;
            break;
        }
    }
    if ((procs == NULL) && (source != NULL)) {
        procs  = source;
        nprocs = 1;
    }
    for (i = 0; i < nprocs; i++) {
        /* another job's process, the launcher, a wildcard, or this one: not a peer */
        if (!PMIX_CHECK_NSPACE(procs[i].nspace, boot->myproc.nspace) ||
            (procs[i].rank >= (pmix_rank_t)boot->size) ||
            (procs[i].rank == boot->myproc.rank)) {
            continue;
        }
        boot->dead_fn(boot->dead_arg, (int)procs[i].rank);
    }
}

/* Runs on PMIx's thread: records through dead_fn, which only marks and wakes. */
static void amc_pmix_event(size_t evhdlr_registration_id, pmix_status_t status,
                           const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                           pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    amc_pmix_boot_t *boot = __atomic_load_n(&amc_pmix_watched, __ATOMIC_ACQUIRE);

    (void)evhdlr_registration_id;
    (void)status;
    (void)results;
    (void)nresults;
    if ((boot != NULL) && (boot->dead_fn != NULL)) {
        amc_pmix_event_procs(boot, source, info, ninfo);
    }
    if (cbfunc != NULL) {
        /* not ACTION_COMPLETE: other handlers (Open MPI's) still get it */
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

void amc_pmix_boot_watch(amc_pmix_boot_t *boot, amc_boot_dead_fn_t fn, void *arg)
{
    pmix_status_t codes[] = { PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTING,
                              PMIX_PROC_TERMINATED, PMIX_ERR_PROC_TERM_WO_SYNC,
                              PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_KILLED_BY_CMD,
                              PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_EXIT_NONZERO_TERM };
    pmix_status_t rc;

    if (boot->singleton || !boot->initialized || boot->watching) {
        return;
    }
    boot->dead_fn  = fn;
    boot->dead_arg = arg;
    __atomic_store_n(&amc_pmix_watched, boot, __ATOMIC_RELEASE);
    /* no callback: a blocking call that returns the handler's reference */
    rc = PMIx_Register_event_handler(codes, sizeof(codes) / sizeof(codes[0]), NULL, 0,
                                     amc_pmix_event, NULL, NULL);
    if (rc < 0) {
        amc_warn(&boot->log, "PMIx_Register_event_handler failed: %s; peer failures are "
                 "found by the other detectors only", PMIx_Error_string(rc));
        __atomic_store_n(&amc_pmix_watched, NULL, __ATOMIC_RELEASE);
        return;
    }
    boot->evhdlr_ref = (size_t)rc;
    boot->watching   = 1;
}

void amc_pmix_boot_unwatch(amc_pmix_boot_t *boot)
{
    if ((boot == NULL) || !boot->watching) {
        return;
    }
    /* blocking without a callback: no event runs dead_fn after this */
    (void)PMIx_Deregister_event_handler(boot->evhdlr_ref, NULL, NULL);
    __atomic_store_n(&amc_pmix_watched, NULL, __ATOMIC_RELEASE);
    boot->watching = 0;
}

void amc_pmix_boot_finalize(amc_pmix_boot_t *boot)
{
    if (boot == NULL) {
        return;
    }
    amc_pmix_boot_unwatch(boot);
    if (boot->initialized) {
        PMIx_Finalize(NULL, 0);
    }
    free(boot);
}

/* ---------------------------------------------------------------- as a bootstrap */

static int amc_pmix_bs_publish(amc_bootstrap_t *bs, const char *key, const void *val, size_t len,
                               const char *local_key, const void *local_val, size_t local_len)
{
    return amc_pmix_boot_publish((amc_pmix_boot_t *)bs, key, val, len, local_key, local_val,
                                 local_len);
}

static int amc_pmix_bs_get(amc_bootstrap_t *bs, int rank, const char *key, void **val_p,
                           size_t *len_p)
{
    return amc_pmix_boot_get((amc_pmix_boot_t *)bs, rank, key, val_p, len_p);
}

static int amc_pmix_bs_local_peers(amc_bootstrap_t *bs, int **ranks_p, int *n_p)
{
    return amc_pmix_boot_local_peers((amc_pmix_boot_t *)bs, ranks_p, n_p);
}

static void amc_pmix_bs_node_map(amc_bootstrap_t *bs, amc_node_map_t *map)
{
    amc_pmix_boot_node_map((amc_pmix_boot_t *)bs, map);
}

static int amc_pmix_bs_fence(amc_bootstrap_t *bs, amc_boot_progress_fn_t progress, void *arg,
                             double deadline)
{
    return amc_pmix_boot_fence((amc_pmix_boot_t *)bs, progress, arg, deadline);
}

static void amc_pmix_bs_watch(amc_bootstrap_t *bs, amc_boot_dead_fn_t fn, void *arg)
{
    amc_pmix_boot_watch((amc_pmix_boot_t *)bs, fn, arg);
}

static void amc_pmix_bs_unwatch(amc_bootstrap_t *bs)
{
    amc_pmix_boot_unwatch((amc_pmix_boot_t *)bs);
}

static void amc_pmix_bs_finalize(amc_bootstrap_t *bs)
{
    amc_pmix_boot_finalize((amc_pmix_boot_t *)bs);
}

static const amc_bootstrap_ops_t amc_pmix_bs_ops = {
    .publish     = amc_pmix_bs_publish,
    .get         = amc_pmix_bs_get,
    .local_peers = amc_pmix_bs_local_peers,
    .node_map    = amc_pmix_bs_node_map,
    .fence       = amc_pmix_bs_fence,
    .watch       = amc_pmix_bs_watch,
    .unwatch     = amc_pmix_bs_unwatch,
    .finalize    = amc_pmix_bs_finalize,
};

int amc_pmix_bootstrap(amc_bootstrap_t **bs_p)
{
    amc_pmix_boot_t *boot;
    int              status = amc_pmix_boot_init(&boot);

    if (status != AMC_SUCCESS) {
        return status;
    }
    boot->super.ops        = &amc_pmix_bs_ops;
    boot->super.kind       = "PMIx";
    boot->super.job        = amc_pmix_boot_nspace(boot);
    boot->super.rank       = boot->rank;
    boot->super.size       = boot->size;
    boot->super.local_size = boot->local_size;
    boot->super.singleton  = boot->singleton;
    *bs_p                  = &boot->super;
    return AMC_SUCCESS;
}
