/* SPDX-License-Identifier: BSD-3-Clause */
/* amc_goal: GOAL schedules from the command line.
 *
 *   amc_goal check FILE                 static validation across all ranks
 *   amc_goal run [--iters K] [--timeline OUT] FILE
 *                                       every rank runs its block (under a
 *                                       PMIx launcher), reports times
 *   amc_goal export [--data] [--node-size K] COLL ALG N BYTES [ROOT]
 *                                       a built-in collective as GOAL text
 *   amc_goal timeline OUT PREFIX.*.tl   AMC_TIMELINE's files as OUT.json, OUT.png
 */
#include "am_coll/goal/goal.h"
#include "am_coll/goal/timeline_out.h"
#include "amcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int amc_goal_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s check FILE\n"
            "       %s run [--iters K] [--timeline OUT] FILE   (under mpirun)\n"
            "       %s export [--data] [--node-size K] COLL ALG N BYTES [ROOT]\n"
            "       %s timeline OUT FILE.tl...             (files of AMC_TIMELINE=PREFIX)\n"
            "  check   validates the schedule across all ranks: labels, cycles, matching of\n"
            "          every send and receive, sizes, deadlock with rendezvous messages\n"
            "  run     each rank runs its block over UCX active messages; prints each rank's\n"
            "          time and the total (--timeline: OUT.json for Perfetto, OUT.png)\n"
            "  export  writes a built-in collective (ALG: a name amc_info lists, or auto)\n"
            "          for N ranks and BYTES per rank as GOAL text (--data: with buffers,\n"
            "          copies and reductions, amcoll's extensions; --node-size: K\n"
            "          consecutive ranks per node, for the node-aware algorithms)\n"
            "  timeline  merges the ranks' AMC_TIMELINE files into OUT.json and OUT.png\n",
            prog, prog, prog, prog);
    return 2;
}

static char *amc_goal_slurp(const char *path, size_t *len)
{
    FILE  *f = fopen(path, "rb");
    char  *text = NULL, *grown;
    size_t cap = 0, n = 0, got;

    if (f == NULL) {
        return NULL;
    }
    do {
        if (n + 65536 > cap) {
            cap   = 2 * cap + 65536;
            grown = realloc(text, cap);
            if (grown == NULL) {
                free(text);
                fclose(f);
                return NULL;
            }
            text = grown;
        }
        got = fread(text + n, 1, cap - n, f);
        n  += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return text;
}

static int amc_goal_load(const char *path, amc_goal_t *g)
{
    char   err[512];
    size_t len;
    char  *text = amc_goal_slurp(path, &len);
    int    status;

    if (text == NULL) {
        fprintf(stderr, "amc_goal: cannot read %s\n", path);
        return AMC_ERR_ARG;
    }
    status = amc_goal_parse(text, len, path, g, err, sizeof(err));
    free(text);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "%s\n", err);
        return status;
    }
    status = amc_goal_compile(*g);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "%s\n", amc_goal_error(*g));
        amc_goal_free(g);
    }
    return status;
}

static int amc_goal_cmd_check(const char *path)
{
    amc_goal_t g;
    unsigned   acts = 0, msgs = 0;
    uint32_t   a;
    int        r;

    if (amc_goal_load(path, &g) != AMC_SUCCESS) {
        return 1;
    }
    for (r = 0; r < g->nranks; r++) {
        acts += g->ranks[r].nacts;
        for (a = 0; a < g->ranks[r].nacts; a++) {
            msgs += (g->ranks[r].acts[a].type == AMC_GOAL_SEND);
        }
    }
    printf("%s: ok: %d ranks, %u actions, %u messages, every one matched, no cycle, no "
           "deadlock\n", path, g->nranks, acts, msgs);
    amc_goal_free(&g);
    return 0;
}

static int amc_goal_cmd_export(int argc, char **argv)
{
    amc_goal_t g;
    char       err[256];
    int        data = 0, n, root = 0, node_size = 0;

    while (argc > 0) {
        if (!strcmp(argv[0], "--data")) {
            data = 1;
        } else if (!strcmp(argv[0], "--node-size") && (argc > 1)) {
            node_size = atoi(argv[1]);
            argc--;
            argv++;
        } else {
            break;
        }
        argc--;
        argv++;
    }
    if ((argc < 4) || (argc > 5)) {
        return amc_goal_usage("amc_goal");
    }
    n    = atoi(argv[2]);
    root = (argc == 5) ? atoi(argv[4]) : 0;
    if (amc_goal_from_builtin_nodes(argv[0], argv[1], n, (size_t)strtoull(argv[3], NULL, 0),
                                    root, node_size, data, &g, err,
                                    sizeof(err)) != AMC_SUCCESS) {
        fprintf(stderr, "amc_goal export: %s\n", err);
        return 1;
    }
    printf("// %s, algorithm %s, %d ranks, %s bytes, root %d: written by amc_goal export\n",
           argv[0], argv[1], n, argv[3], root);
    amc_goal_write(g, stdout);
    amc_goal_free(&g);
    return 0;
}

static int amc_goal_cmd_run(int argc, char **argv)
{
    const char   *path = NULL, *timeline = NULL;
    amc_goal_t    g = NULL;
    amc_request_t req;
    unsigned char *sbuf = NULL, *rbuf = NULL;
    size_t        sbytes = 0, rbytes = 0, k;
    double        t0, t, *all = NULL, max = 0;
    int           iters = 1, i, rank, size, status, failed = 0;

    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && (i + 1 < argc)) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--timeline") && (i + 1 < argc)) {
            timeline = argv[++i];
        } else if (path == NULL) {
            path = argv[i];
        } else {
            return amc_goal_usage("amc_goal");
        }
    }
    if ((path == NULL) || (iters < 1)) {
        return amc_goal_usage("amc_goal");
    }
    status = amc_init(NULL, NULL);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_goal run: amc_init: %s\n", amc_strerror(status));
        return 1;
    }
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    amc_comm_size(AMC_COMM_WORLD, &size);
    /* every rank reads and checks the file alike: a bad one fails everywhere */
    if (amc_goal_load(path, &g) != AMC_SUCCESS) {
        amc_finalize();
        return 1;
    }
    if (g->nranks != size) {
        if (rank == 0) {
            fprintf(stderr, "amc_goal run: %s is for %d ranks, the job has %d\n", path,
                    g->nranks, size);
        }
        amc_goal_free(&g);
        amc_finalize();
        return 1;
    }
    amc_goal_buffer_bytes(g, rank, AMC_GOAL_BUF_SEND, &sbytes);
    amc_goal_buffer_bytes(g, rank, AMC_GOAL_BUF_RECV, &rbytes);
    sbuf = malloc(sbytes + 1);
    rbuf = calloc(rbytes + 1, 1);
    all  = calloc((size_t)size, sizeof(*all));
    if ((sbuf == NULL) || (rbuf == NULL) || (all == NULL)) {
        fprintf(stderr, "amc_goal run: out of memory\n");
        return 1;
    }
    for (k = 0; k < sbytes; k++) {
        sbuf[k] = (unsigned char)(rank + k);
    }
    amc_barrier(AMC_COMM_WORLD);
    if (timeline != NULL) {
        amc_timeline_enable(1);
    }
    t0 = amc_wtime();
    for (i = 0; (i < iters) && !failed; i++) {
        status = amc_goal_start(g, sbuf, rbuf, AMC_COMM_WORLD, &req);
        if (status == AMC_SUCCESS) {
            status = amc_wait(&req); /* completes only once every receive matched */
        }
        if (status != AMC_SUCCESS) {
            fprintf(stderr, "amc_goal run: rank %d: %s\n", rank, amc_strerror(status));
            failed = 1;
        }
    }
    t = (amc_wtime() - t0) / iters;
    if (timeline != NULL) {
        amc_timeline_enable(0);
    }
    status = amc_gather(&t, all, 1, AMC_DOUBLE, 0, AMC_COMM_WORLD);
    if ((status == AMC_SUCCESS) && (timeline != NULL)) {
        status = amc_timeline_gather_write(AMC_COMM_WORLD, timeline);
    }
    if ((status == AMC_SUCCESS) && (rank == 0)) {
        for (i = 0; i < size; i++) {
            printf("rank %d: %.2f us\n", i, all[i] * 1e6);
            max = (all[i] > max) ? all[i] : max;
        }
        printf("total: %.2f us per run (slowest rank, %d run%s) of %s\n", max * 1e6, iters,
               (iters == 1) ? "" : "s", path);
        if (timeline != NULL) {
            printf("timeline: %s.json %s.png\n", timeline, timeline);
        }
    }
    failed |= (status != AMC_SUCCESS);
    amc_goal_free(&g);
    free(sbuf);
    free(rbuf);
    free(all);
    amc_finalize();
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return amc_goal_usage(argv[0]);
    }
    if (!strcmp(argv[1], "check") && (argc == 3)) {
        return amc_goal_cmd_check(argv[2]);
    }
    if (!strcmp(argv[1], "export")) {
        return amc_goal_cmd_export(argc - 2, argv + 2);
    }
    if (!strcmp(argv[1], "timeline") && (argc >= 4)) {
        return (amc_timeline_merge(argv[2], argc - 3, argv + 3) == AMC_SUCCESS) ? 0 : 1;
    }
    if (!strcmp(argv[1], "run")) {
        return amc_goal_cmd_run(argc - 2, argv + 2);
    }
    return amc_goal_usage(argv[0]);
}
