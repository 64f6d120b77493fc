/* SPDX-License-Identifier: BSD-3-Clause */
/* amc_sim: the scale simulator's command line (tests/unit/loggp_sim.h).
 *
 *   amc_sim [OPTIONS] COLL ALG N BYTES
 *       one run: predicted time, result check, events, wall time, peak RSS,
 *       heap bytes per rank (setup, per communicator, after the collective)
 *   amc_sim [OPTIONS] --sweep MAX COLL ALG BYTES
 *       N = 2, 4, ..., MAX: one line "N time_us correct" each, for plots
 *
 * OPTIONS: --node-size K (0: one node), --L --o --g NS and --G NS_PER_BYTE
 * within a node, --xL --xo --xg --xG across nodes, --data private|shared,
 * --dup 0|1|2 (the communicator: world, a dup whose bytes are measured, or
 * a dup after one made and freed).
 */
#include "tests/unit/loggp_sim.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int amc_sim_usage(void)
{
    fprintf(stderr,
            "usage: amc_sim [OPTIONS] COLL ALG N BYTES\n"
            "       amc_sim [OPTIONS] --sweep MAX COLL ALG BYTES\n"
            "  COLL: barrier, bcast, reduce, allreduce, gather, scatter, allgather, alltoall,\n"
            "        reduce_scatter_block, scan, exscan; ALG: a name amc_info lists, or auto\n"
            "  --node-size K     K consecutive ranks per node (default 0: one node)\n"
            "  --L --o --g NS    LogGP within a node, nanoseconds (--G: ns per byte)\n"
            "  --xL --xo --xg --xG  the same across nodes\n"
            "  --data MODE       private (a buffer per rank, results checked) or shared\n"
            "                    (one for all: timing only); default private while the\n"
            "                    buffers fit %llu MiB\n"
            "  --dup D           0: run on world (default); 1: on a dup of world, its\n"
            "                    bytes per rank printed (its agreement's first contacts'\n"
            "                    flow state included); 2: after a dup made and freed,\n"
            "                    so that the bytes are the communicator's own\n",
            (unsigned long long)(AMC_LSIM_DATA_MAX >> 20));
    return 2;
}

static uint64_t amc_sim_ps(const char *ns)
{
    return (uint64_t)(strtod(ns, NULL) * 1000.0 + 0.5);
}

/* A LogGP option: "--L" (within) or "--xL" (across). */
static int amc_sim_loggp_opt(amc_lsim_params_t *p, const char *opt, const char *val)
{
    amc_fake_loggp_t *set = &p->intra;

    if (opt[2] == 'x') {
        set = &p->inter;
        opt++;
    }
    if (!strcmp(opt + 2, "L")) {
        set->L = amc_sim_ps(val);
    } else if (!strcmp(opt + 2, "o")) {
        set->o = amc_sim_ps(val);
    } else if (!strcmp(opt + 2, "g")) {
        set->g = amc_sim_ps(val);
    } else if (!strcmp(opt + 2, "G")) {
        set->G = amc_sim_ps(val);
    } else {
        return -1;
    }
    return 0;
}

static void amc_sim_print(const amc_lsim_params_t *p, const amc_lsim_result_t *r)
{
    printf("amc_sim: %s %s N=%d bytes=%zu node_size=%d\n", p->coll, p->alg, p->n, p->bytes,
           p->node_size);
    printf("  LogGP ps within: L=%llu o=%llu g=%llu G=%llu; across: L=%llu o=%llu g=%llu "
           "G=%llu\n", (unsigned long long)p->intra.L, (unsigned long long)p->intra.o,
           (unsigned long long)p->intra.g, (unsigned long long)p->intra.G,
           (unsigned long long)p->inter.L, (unsigned long long)p->inter.o,
           (unsigned long long)p->inter.g, (unsigned long long)p->inter.G);
    printf("  predicted: %.3f us\n", (double)r->time_ps * 1e-6);
    printf("  result: %s\n", !r->correct ? "WRONG" :
           r->checked ? "correct (every rank's buffer checked)" :
                        "complete; data unchecked (one buffer shared by all ranks)");
    printf("  events: %lu messages\n", r->events);
    printf("  wall: %.2f s (setup %.2f s, collective %.2f s), peak RSS: %.1f MiB\n", r->wall_s,
           r->setup_s, r->coll_s, (double)r->peak_rss_kib / 1024.0);
    printf("  heap bytes per rank: setup %zu (of which fake transport %zu), ", r->setup_per_rank,
           r->fake_per_rank);
    if (p->dup > 0) {
        printf("per communicator %zu%s, ", r->comm_per_rank,
               (p->dup > 1) ? "" : " (with its agreement's first contacts)");
    }
    printf("after the collective +%zu (first contacts' flow state, cached schedule)\n",
           r->coll_per_rank);
}

int main(int argc, char **argv)
{
    static const amc_fake_loggp_t intra = AMC_LSIM_INTRA_DEFAULT, inter = AMC_LSIM_INTER_DEFAULT;
    amc_lsim_params_t p;
    amc_lsim_result_t r;
    const char       *pos[4];
    int               npos = 0, i, sweep = 0, n, failed = 0;

    /* 65,536 contexts grow the heap by small steps, each a brk and a trim:
     * grow it by 256 MiB at a time and never give it back (a fifth of the
     * setup's time) */
    (void)mallopt(M_TOP_PAD, 256 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
    memset(&p, 0, sizeof(p));
    p.intra = intra;
    p.inter = inter;
    for (i = 1; i < argc; i++) {
        if ((argv[i][0] == '-') && (argv[i][1] == '-') && (i + 1 < argc)) {
            if (!strcmp(argv[i], "--node-size")) {
                p.node_size = atoi(argv[++i]);
            } else if (!strcmp(argv[i], "--dup")) {
                p.dup = atoi(argv[++i]);
            } else if (!strcmp(argv[i], "--sweep")) {
                sweep = atoi(argv[++i]);
            } else if (!strcmp(argv[i], "--data")) {
                i++;
                p.data = !strcmp(argv[i], "shared") ? AMC_LSIM_DATA_SHARED :
                         !strcmp(argv[i], "private") ? AMC_LSIM_DATA_PRIVATE :
                                                       AMC_LSIM_DATA_AUTO;
            } else if (amc_sim_loggp_opt(&p, argv[i], argv[i + 1]) == 0) {
                i++;
            } else {
                return amc_sim_usage();
            }
        } else if (npos < 4) {
            pos[npos++] = argv[i];
        } else {
            return amc_sim_usage();
        }
    }
    if (npos != (sweep ? 3 : 4)) {
        return amc_sim_usage();
    }
    p.coll  = pos[0];
    p.alg   = pos[1];
    p.bytes = (size_t)strtoull(pos[sweep ? 2 : 3], NULL, 0);
    if (!sweep) {
        p.n = atoi(pos[2]);
        if (amc_lsim_run(&p, &r) != AMC_SUCCESS) {
            return 1;
        }
        amc_sim_print(&p, &r);
        return r.correct ? 0 : 1;
    }
    printf("# amc_sim %s %s bytes=%zu node_size=%d: N predicted_us correct wall_s\n", p.coll,
           p.alg, p.bytes, p.node_size);
    for (n = 2; n <= sweep; n *= 2) {
        p.n = n;
        if (amc_lsim_run(&p, &r) != AMC_SUCCESS) {
            return 1;
        }
        printf("%d %.3f %d %.2f\n", n, (double)r.time_ps * 1e-6, r.correct, r.wall_s);
        fflush(stdout);
        failed |= !r.correct;
    }
    return failed ? 1 : 0;
}
