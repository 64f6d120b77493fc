/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timelines out (am_coll/goal/timeline_out.h): recording on the default
 * context turned on and off, every rank's records gathered to rank 0 over
 * the public API, and records written as trace-event JSON and a gnuplot PNG.
 * The recorder is the engine's (am_coll/coll/timeline.c).
 */
#include "am_coll/goal/timeline_out.h"
#include "am_coll/api/api.h"
#include "am_coll/coll/coll.h"
#include "am_coll/coll/timeline.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static amc_context_t *amc_timeline_ctx(void)
{
    amc_comm_t world = amc_comm_world();

    return (world != AMC_COMM_NULL) ? world->ctx : NULL;
}

int amc_timeline_enable(int on)
{
    amc_context_t *ctx = amc_timeline_ctx();

    return (ctx == NULL) ? AMC_ERR_NOT_INITIALIZED : amc_timeline_on(ctx, on);
}

/* ---------------------------------------------------------------- output */

static const char *amc_tl_kind(uint8_t type)
{
    switch (type) {
    case AMC_ACT_SEND:          return "send";
    case AMC_ACT_RECV:          return "recv";
    case AMC_ACT_RECV_REDUCE:
    case AMC_ACT_RECV_REDUCE_R: return "recv+reduce";
    case AMC_ACT_COPY:          return "copy";
    case AMC_ACT_REDUCE:
    case AMC_ACT_REDUCE_R:      return "reduce";
    default:                    return "calc";
    }
}

static int amc_tl_is_recv(uint8_t type)
{
    return (type >= AMC_ACT_RECV) && (type <= AMC_ACT_RECV_REDUCE_R);
}

/* The receive record of a send's message, or -1: same communicator,
 * instance number and tag, the ends swapped. */
static long amc_tl_mate(const amc_tl_rec_t *recs, size_t n, const amc_tl_rec_t *s)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const amc_tl_rec_t *r = &recs[i];

        if (amc_tl_is_recv(r->type) && (r->rank == s->peer) && (r->peer == s->rank) &&
            (r->cid == s->cid) && (r->seq == s->seq) && (r->tag == s->tag)) {
            return (long)i;
        }
    }
    return -1;
}

static int amc_tl_write(const char *out, amc_tl_rec_t *recs, size_t n)
{
    char   path[512];
    FILE  *f, *acts, *msgs;
    size_t i;
    long   m;
    int    first = 1, nranks = 0;
    double tmax = 0, tmin = 0;

    snprintf(path, sizeof(path), "%s.json", out);
    f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "timeline: cannot write %s\n", path);
        return AMC_ERR_ARG;
    }
    fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    for (i = 0; i < n; i++) {
        tmin = ((i == 0) || (recs[i].start < tmin)) ? recs[i].start : tmin;
    }
    for (i = 0; i < n; i++) {
        recs[i].start -= tmin;
        if (recs[i].end >= 0) {
            recs[i].end -= tmin;
        }
    }
    for (i = 0; i < n; i++) {
        const amc_tl_rec_t *r = &recs[i];
        double              end = (r->end < 0) ? r->start : r->end;
        char                name[64], rel[64];

        nranks = (r->rank + 1 > nranks) ? r->rank + 1 : nranks;
        tmax   = (end > tmax) ? end : tmax;
        if (r->peer >= 0) {
            snprintf(name, sizeof(name), "%s %s %d", amc_tl_kind(r->type),
                     (r->type == AMC_ACT_SEND) ? "to" : "from", r->peer);
        } else {
            snprintf(name, sizeof(name), "%s", amc_tl_kind(r->type));
        }
        if (r->released_by == UINT32_MAX) {
            snprintf(rel, sizeof(rel), "start");
        } else {
            snprintf(rel, sizeof(rel), "act %u (%s)", r->released_by,
                     amc_tl_kind(r->released_type));
        }
        fprintf(f, "%s{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"B\", \"ts\": %.3f, "
                "\"pid\": %d, \"tid\": %u, \"args\": {\"act\": %u, \"peer\": %d, \"bytes\": "
                "%llu, \"released_by\": \"%s\", \"seq\": %llu, \"coll\": \"%s\"}},\n",
                first ? "" : ",", name, amc_tl_kind(r->type), r->start * 1e6, r->rank,
                (unsigned)(r->seq & 0xffff), r->act, r->peer, (unsigned long long)r->bytes,
                rel, (unsigned long long)r->seq, amc_coll_name(r->coll));
        fprintf(f, "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"E\", \"ts\": %.3f, "
                "\"pid\": %d, \"tid\": %u}\n", name, amc_tl_kind(r->type), end * 1e6, r->rank,
                (unsigned)(r->seq & 0xffff));
        first = 0;
        if ((r->type == AMC_ACT_SEND) && ((m = amc_tl_mate(recs, n, r)) >= 0)) {
            double rend = (recs[m].end < 0) ? recs[m].start : recs[m].end;

            /* a flow arrow from the send's start to the receive's end */
            fprintf(f, ",{\"name\": \"msg\", \"cat\": \"msg\", \"ph\": \"s\", \"id\": %zu, "
                    "\"ts\": %.3f, \"pid\": %d, \"tid\": %u}\n", i, r->start * 1e6, r->rank,
                    (unsigned)(r->seq & 0xffff));
            fprintf(f, ",{\"name\": \"msg\", \"cat\": \"msg\", \"ph\": \"f\", \"bp\": \"e\", "
                    "\"id\": %zu, \"ts\": %.3f, \"pid\": %d, \"tid\": %u}\n", i, rend * 1e6,
                    recs[m].rank, (unsigned)(recs[m].seq & 0xffff));
        }
    }
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
        return AMC_ERR_ARG;
    }

    /* the PNG: gnuplot draws acts as thick bars per rank, messages as arrows */
    snprintf(path, sizeof(path), "%s.acts.dat", out);
    acts = fopen(path, "w");
    snprintf(path, sizeof(path), "%s.msgs.dat", out);
    msgs = fopen(path, "w");
    if ((acts == NULL) || (msgs == NULL)) {
        if (acts != NULL) {
            fclose(acts);
        }
        if (msgs != NULL) {
            fclose(msgs);
        }
        return AMC_ERR_ARG;
    }
    for (i = 0; i < n; i++) {
        const amc_tl_rec_t *r = &recs[i];
        double              end = (r->end < 0) ? r->start : r->end;
        int                 color = (r->type == AMC_ACT_SEND) ? 1 : amc_tl_is_recv(r->type) ? 2
                                    : 3;

        fprintf(acts, "%.3f %d %.3f %d\n", r->start * 1e6, r->rank, (end - r->start) * 1e6,
                color);
        if ((r->type == AMC_ACT_SEND) && ((m = amc_tl_mate(recs, n, r)) >= 0)) {
            double rend = (recs[m].end < 0) ? recs[m].start : recs[m].end;

            fprintf(msgs, "%.3f %d %.3f %d\n", r->start * 1e6, r->rank,
                    (rend - r->start) * 1e6, recs[m].rank - r->rank);
        }
    }
    fclose(acts);
    fclose(msgs);
    snprintf(path, sizeof(path), "%s.gp", out);
    f = fopen(path, "w");
    if (f == NULL) {
        return AMC_ERR_ARG;
    }
    fprintf(f, "set terminal pngcairo size 1200,%d\n"
               "set output '%s.png'\n"
               "set title 'amcoll timeline: ranks down, time across (us); bars: send (1), "
               "receive (2), local (3); arrows: messages'\n"
               "set xlabel 'time (us)'\nset ylabel 'rank'\n"
               "set yrange [%d.5:-0.5]\nset ytics 1\nset xrange [0:%.3f]\n"
               "plot '%s.acts.dat' using 1:2:3:(0):4 with vectors nohead lw 8 lc variable "
               "notitle, \\\n"
               "     '%s.msgs.dat' using 1:2:3:4 with vectors head filled lc rgb '#555555' "
               "notitle\n",
            200 + 40 * nranks, out, nranks - 1, tmax * 1e6 * 1.02 + 1e-3, out, out);
    fclose(f);
    snprintf(path, sizeof(path), "gnuplot '%s.gp' 2>/dev/null", out);
    if (system(path) != 0) {
        fprintf(stderr, "timeline: gnuplot failed; %s.json is written\n", out);
    }
    return AMC_SUCCESS;
}

int amc_timeline_gather_write(amc_comm_t comm, const char *out)
{
    size_t              n;
    const amc_tl_rec_t *recs = amc_timeline_records(comm->ctx, &n);
    amc_tl_rec_t       *all = NULL;
    size_t             *counts = NULL, *displs = NULL, mine = recs ? n * sizeof(*recs) : 0,
                        total = 0;
    int             i, status, rank = comm->rank, size = comm->size;

    counts = calloc((size_t)size, sizeof(*counts));
    displs = calloc((size_t)size, sizeof(*displs));
    if ((counts == NULL) || (displs == NULL)) {
        free(counts);
        free(displs);
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_gather(&mine, counts, 1, AMC_UINT64, 0, comm);
    if ((status == AMC_SUCCESS) && (rank == 0)) {
        for (i = 0; i < size; i++) {
            displs[i] = total;
            total    += counts[i];
        }
        all = malloc(total + 1);
        status = (all != NULL) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
    }
    if (status == AMC_SUCCESS) {
        status = amc_gatherv(recs ? (const void *)recs : (const void *)"", mine, all, counts, displs,
                             AMC_BYTE, 0, comm);
    }
    if ((status == AMC_SUCCESS) && (rank == 0)) {
        status = amc_tl_write(out, all, total / sizeof(*all));
    }
    free(all);
    free(counts);
    free(displs);
    return status;
}

int amc_timeline_merge(const char *out, int nfiles, char **files)
{
    amc_tl_rec_t *all = NULL, *g;
    size_t        n = 0, cap = 0, got;
    FILE         *f;
    int           i, status;

    for (i = 0; i < nfiles; i++) {
        f = fopen(files[i], "rb");
        if (f == NULL) {
            fprintf(stderr, "timeline: cannot read %s\n", files[i]);
            free(all);
            return AMC_ERR_ARG;
        }
        do {
            g = amc_tl_grow(all, &cap, n + 256, sizeof(*all));
            if (g == NULL) {
                fclose(f);
                free(all);
                return AMC_ERR_NO_MEMORY;
            }
            all = g;
            got = fread(all + n, sizeof(*all), cap - n, f);
            n  += got;
        } while (got > 0);
        fclose(f);
    }
    status = amc_tl_write(out, all, n);
    free(all);
    return status;
}
