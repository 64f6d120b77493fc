/*
 * libamcoll_mpi: MPI_Init / MPI_Init_thread / MPI_Finalize start and stop
 * amcoll inside the MPI library's own calls; the controls (AMCOLL_MPI,
 * AMCOLL_MPI_COLLS, AMCOLL_MPI_STATS); the error codes; the statistics.
 */
#include "mpi/amcmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

amcm_global_t amcm_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .poke_comm = MPI_COMM_NULL};

const char *const amcm_coll_names[AMCM_NCOLL] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan"};

static const char *const amcm_why_names[AMCM_NWHY] = {"routed", "off",  "filter", "comm",
                                                      "type",   "op",   "arg"};

/* ------------------------------------------------------------------ errors */

static int amcm_class_of(int rc)
{
    switch (rc) {
    case AMC_ERR_ARG:         return MPI_ERR_ARG;
    case AMC_ERR_COMM:        return MPI_ERR_COMM;
    case AMC_ERR_NO_MEMORY:   return MPI_ERR_NO_MEM;
    case AMC_ERR_TRUNCATE:    return MPI_ERR_TRUNCATE;
    case AMC_ERR_TRANSPORT:   return MPI_ERR_INTERN;
    case AMC_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    default:                  return MPI_ERR_OTHER; /* protocol, peer, timeout, ... */
    }
}

/* One MPI error code per amcoll code, in the matching class, whose string is
 * amcoll's: MPI_ERRORS_ARE_FATAL prints it, MPI_Error_string returns it. */
void amcm_errors_init(void)
{
    char msg[MPI_MAX_ERROR_STRING];
    int  rc, code;

    for (rc = 1; rc < AMC_ERR_LAST; rc++) {
        amcm_g.ecode[rc] = amcm_class_of(rc);
        if (PMPI_Add_error_code(amcm_class_of(rc), &code) == MPI_SUCCESS) {
            snprintf(msg, sizeof(msg), "amcoll: %s", amc_strerror(rc));
            PMPI_Add_error_string(code, msg);
            amcm_g.ecode[rc] = code;
        }
    }
}

int amcm_mpi_code(int rc)
{
    if (rc == AMC_SUCCESS) {
        return MPI_SUCCESS;
    }
    return ((rc > 0) && (rc < AMC_ERR_LAST)) ? amcm_g.ecode[rc] : MPI_ERR_OTHER;
}

int amcm_raise(MPI_Comm comm, int rc)
{
    int code = amcm_mpi_code(rc);

    if (code != MPI_SUCCESS) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        /* the MPI library's own report of a fatal error can be lost when
         * ranks abort at once: say it here first */
        if ((PMPI_Comm_get_errhandler(comm, &eh) == MPI_SUCCESS) &&
            (eh == MPI_ERRORS_ARE_FATAL)) {
            fprintf(stderr, "amcoll_mpi: rank %d: collective failed: amcoll: %s (fatal)\n",
                    amcm_g.world_rank, amc_strerror(rc));
            fflush(stderr);
        }
        if (eh != MPI_ERRHANDLER_NULL) {
            PMPI_Errhandler_free(&eh);
        }
        PMPI_Comm_call_errhandler(comm, code);
    }
    return code;
}

/* ------------------------------------------------------------------ controls */

static unsigned amcm_parse_colls(const char *s)
{
    unsigned bits = 0;
    char     name[64];
    int      i;

    while (s && *s) {
        size_t len = strcspn(s, ", ");
        if (len > 0 && len < sizeof(name)) {
            memcpy(name, s, len);
            name[len] = '\0';
            for (i = 0; i < AMCM_NCOLL; i++) {
                if (strcmp(name, amcm_coll_names[i]) == 0) {
                    bits |= 1u << i;
                    break;
                }
            }
            if (strcmp(name, "all") == 0) {
                bits = (1u << AMCM_NCOLL) - 1;
            } else if (i == AMCM_NCOLL && amcm_g.world_rank == 0) {
                fprintf(stderr, "amcoll_mpi: AMCOLL_MPI_COLLS: unknown collective '%s' ignored\n",
                        name);
            }
        }
        s += len;
        s += strspn(s, ", ");
    }
    return bits;
}

static int amcm_amc_level(int mpi_level)
{
    if (mpi_level == MPI_THREAD_MULTIPLE) {
        return AMC_THREAD_MULTIPLE;
    }
    if ((mpi_level == MPI_THREAD_SERIALIZED) || (mpi_level == MPI_THREAD_FUNNELED)) {
        return AMC_THREAD_SERIALIZED;
    }
    return AMC_THREAD_SINGLE;
}

/* amcoll's idle hook: one pass of MPI's progress while this rank waits in
 * amcoll (requests.c, "MPI's own requests", says why). An Iprobe on a
 * communicator of our own matches nothing and runs the progress engine in
 * Open MPI and MPICH alike. */
static void amcm_mpi_poke(void *arg)
{
    int flag;

    (void)arg;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, amcm_g.poke_comm, &flag, MPI_STATUS_IGNORE);
}

/* After PMPI_Init*: start amcoll, check that its world is MPI's, agree. */
static void amcm_start(int *argc, char ***argv, int mpi_provided)
{
    const char *env = getenv("AMCOLL_MPI");
    int         wrank = 0, wsize = 1, ok, all = 0, rc, arank = -1, asize = -1, prov = 0;
    int         need = amcm_amc_level(mpi_provided);
    amc_comm_t  self = AMC_COMM_NULL;

    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    amcm_g.world_rank = wrank;
    amcm_g.mt         = (mpi_provided == MPI_THREAD_MULTIPLE);
    env               = getenv("AMCOLL_MPI_STATS");
    amcm_g.stats      = (env != NULL) && (atoi(env) != 0);
    env               = getenv("AMCOLL_MPI_COLLS");
    amcm_g.colls      = (env != NULL) ? amcm_parse_colls(env) : (1u << AMCM_NCOLL) - 1;
    env               = getenv("AMCOLL_MPI");
    if ((env != NULL) && (strcmp(env, "0") == 0)) {
        return; /* off: not a single extra call (the same value on every rank) */
    }
    amcm_errors_init();
    amcm_dtype_init();
    {
        /* ranks on this node, as the launcher tells (Open MPI, MPICH) */
        const char *l = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        long        cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (l == NULL) {
            l = getenv("MPI_LOCALNRANKS");
        }
        amcm_g.oversub = (l != NULL) && (cores > 0) && (atol(l) > cores);
    }

    ok = 1;
    rc = amc_init_thread(argc, argv, need, &prov);
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "amcoll_mpi: rank %d: amc_init failed (%s): collectives stay on MPI\n",
                wrank, amc_strerror(rc));
        ok = 0;
    } else {
        amcm_g.inited = 1;
        amc_comm_rank(AMC_COMM_WORLD, &arank);
        amc_comm_size(AMC_COMM_WORLD, &asize);
        if ((arank != wrank) || (asize != wsize)) {
            fprintf(stderr,
                    "amcoll_mpi: rank %d of %d in MPI_COMM_WORLD is rank %d of %d in amcoll "
                    "(no common PMIx job?): collectives stay on MPI\n",
                    wrank, wsize, arank, asize);
            ok = 0;
        } else if (prov < need) {
            fprintf(stderr, "amcoll_mpi: amcoll gives thread level %d < %d: collectives stay on MPI\n",
                    prov, need);
            ok = 0;
        }
    }
    /* every rank routes or none does */
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (ok && (wrank == 0)) {
            fprintf(stderr, "amcoll_mpi: another rank could not start amcoll: collectives stay "
                            "on MPI\n");
        }
        if (amcm_g.inited) {
            amc_finalize();
            amcm_g.inited = 0;
        }
        return;
    }
    if (amcm_comm_add(MPI_COMM_WORLD, AMC_COMM_WORLD) != MPI_SUCCESS) {
        /* only memory can fail here; keep every rank alike */
        ok = 0;
    }
    /* MPI_COMM_SELF: a split of the world with one member per colour, made
     * here where every rank is */
    rc = amc_comm_split(AMC_COMM_WORLD, wrank, 0, &self);
    if ((rc == AMC_SUCCESS) && (self != AMC_COMM_NULL)) {
        amcm_comm_add(MPI_COMM_SELF, self);
    }
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        amcm_comm_forget_all();
    } else if (PMPI_Comm_dup(MPI_COMM_SELF, &amcm_g.poke_comm) == MPI_SUCCESS) {
        amc_set_idle_hook(amcm_mpi_poke, NULL);
    }
    amcm_g.on = all;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;

    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        amcm_start(argc, argv, provided);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);

    if (rc == MPI_SUCCESS) {
        amcm_start(argc, argv, *provided);
    }
    return rc;
}

int MPI_Finalize(void)
{
    if (amcm_g.inited) {
        amcm_detached_poll(1);
        if (amcm_g.stats) {
            amcm_stats_print();
        }
        amcm_g.on = 0;
        amcm_comm_forget_all();
        if (amcm_g.poke_comm != MPI_COMM_NULL) {
            amc_set_idle_hook(NULL, NULL);
            PMPI_Comm_free(&amcm_g.poke_comm);
        }
        amc_finalize();
        amcm_g.inited = 0;
        amcm_req_pool_drain();
    } else if (amcm_g.stats) {
        amcm_stats_print();
    }
    return PMPI_Finalize();
}

/* ------------------------------------------------------------------ statistics */

void amcm_stats_print(void)
{
    char          line[4096];
    size_t        o = 0;
    unsigned long r_all = 0, f_all = 0;
    unsigned long long eps;
    int           c, w;

    for (c = 0; c < AMCM_NCOLL; c++) {
        unsigned long r = amcm_g.routed[c][0] + amcm_g.routed[c][1] + amcm_g.routed[c][2];
        unsigned long f = 0;
        for (w = 1; w < AMCM_NWHY; w++) {
            f += amcm_g.fell[c][w];
        }
        r_all += r;
        f_all += f;
        if ((r == 0) && (f == 0)) {
            continue;
        }
        o += (size_t)snprintf(line + o, sizeof(line) - o,
                              " %s: routed %lu (b %lu, nb %lu, p %lu; fast %lu)",
                              amcm_coll_names[c], r, amcm_g.routed[c][0], amcm_g.routed[c][1],
                              amcm_g.routed[c][2], amcm_g.routed_fast[c]);
        if (f > 0 && o < sizeof(line)) {
            o += (size_t)snprintf(line + o, sizeof(line) - o, " fell through %lu (", f);
            for (w = 1; w < AMCM_NWHY && o < sizeof(line); w++) {
                if (amcm_g.fell[c][w]) {
                    o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s %lu",
                                          line[o - 1] == '(' ? "" : ", ", amcm_why_names[w],
                                          amcm_g.fell[c][w]);
                }
            }
            if (o < sizeof(line)) {
                o += (size_t)snprintf(line + o, sizeof(line) - o, ")");
            }
        }
        if (o < sizeof(line)) {
            o += (size_t)snprintf(line + o, sizeof(line) - o, ";");
        }
        if (o >= sizeof(line)) {
            o = sizeof(line) - 1;
            break;
        }
    }
    line[o] = '\0';
    /* the endpoints amcoll made: one per peer it sent to (doc/design.md, "Scale") */
    if (!amcm_g.inited || (amc_stat_get("endpoints", &eps) != AMC_SUCCESS)) {
        eps = 0;
    }
    fprintf(stderr, "amcoll_mpi stats rank %d: %s; routed %lu, fell through %lu;%s endpoints "
            "%llu;\n", amcm_g.world_rank, amcm_g.on || amcm_g.inited ? "on" : "off", r_all, f_all,
            line, eps);
}
