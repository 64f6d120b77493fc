/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: the shared state, the error codes, the statistics.
 */
#include "mpi/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    case AMC_ERR_PEER:        return AMCM_ERR_PEER_CLASS;
    default:                  return MPI_ERR_OTHER; /* protocol, timeout, ... */
    }
}

/* One MPI error code per amcoll code, in the matching class, whose string is
 * amcoll's: MPI_ERRORS_ARE_FATAL prints it, MPI_Error_string returns it.
 * Where the MPI library cannot say it, the class is the code (impl.h). */
void amcm_errors_init(void)
{
    char msg[MPI_MAX_ERROR_STRING];
    int  rc, code;

    for (rc = 1; rc < AMC_ERR_LAST; rc++) {
        amcm_g.ecode[rc] = amcm_class_of(rc);
        if (AMCM_ADD_ERROR_CODES &&
            (PMPI_Add_error_code(amcm_class_of(rc), &code) == MPI_SUCCESS)) {
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
            fprintf(stderr, AMCM_LIB ": rank %d: collective failed: amcoll: %s (fatal)\n",
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

int amcm_thread_level(int mpi_level)
{
    if (mpi_level == MPI_THREAD_MULTIPLE) {
        return AMC_THREAD_MULTIPLE;
    }
    if ((mpi_level == MPI_THREAD_SERIALIZED) || (mpi_level == MPI_THREAD_FUNNELED)) {
        return AMC_THREAD_SERIALIZED;
    }
    return AMC_THREAD_SINGLE;
}


unsigned amcm_parse_colls(const char *s)
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
                fprintf(stderr, AMCM_LIB ": AMCOLL_MPI_COLLS: unknown collective '%s' ignored\n",
                        name);
            }
        }
        s += len;
        s += strspn(s, ", ");
    }
    return bits;
}

/* ------------------------------------------------------------------ statistics */

void amcm_stats_print(const char *who)
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
    fprintf(stderr, "%s stats rank %d: %s; routed %lu, fell through %lu;%s endpoints "
            "%llu;\n", who, amcm_g.world_rank, amcm_g.on || amcm_g.inited ? "on" : "off", r_all, f_all,
            line, eps);
}
