/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a rank costs before its first collective: per-rank RSS,
 * memory mappings and endpoints created, read in this process after
 * amc_init and after one barrier. Each rank prints one line; run_scale.sh
 * runs it at several N and averages. Built also against older trees (for
 * the before/after table): "endpoints" is read through amc_stat_get when
 * the library has it, else printed as -1.
 */
#define _GNU_SOURCE
#include "amcoll.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*amc_probe_stat_fn_t)(const char *name, unsigned long long *value);

static long probe_rss_kib(void)
{
    char  line[256];
    long  kib = -1;
    FILE *f   = fopen("/proc/self/status", "r");

    while ((f != NULL) && (fgets(line, sizeof(line), f) != NULL)) {
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kib;
}

static long probe_maps(void)
{
    char  line[4096];
    long  n = 0;
    FILE *f = fopen("/proc/self/maps", "r");

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        n += (strchr(line, '\n') != NULL);
    }
    fclose(f);
    return n;
}

/* AMC_BENCH_PROBE_SMAPS=1: the resident KiB after the barrier by what holds it
 * (a mapping's file's base name, [heap], [anon], a memfd), one line per kind:
 * "smaps N n rank r KIND rss_kib private_dirty_kib". What grows with N shows
 * where the memory that follows the job's size sits; the private dirty
 * part is what this process alone costs (RSS also counts the pages of
 * shared libraries it happened to touch). */
static void probe_smaps(int size, int rank)
{
    enum { KINDS = 64 };
    char  line[4096], kind[KINDS][96], cur[96] = "[anon]";
    long  kib[KINDS], dirty[KINDS], v;
    int   nk = 0, i;
    FILE *f = fopen("/proc/self/smaps", "r");

    while ((f != NULL) && (fgets(line, sizeof(line), f) != NULL)) {
        char *path, *slash;

        if ((sscanf(line, "Rss: %ld kB", &v) == 1) ||
            (sscanf(line, "Private_Dirty: %ld kB", &v) == 1)) {
            for (i = 0; (i < nk) && (strcmp(kind[i], cur) != 0); i++) {
            }
            if ((i == nk) && (nk < KINDS)) {
                snprintf(kind[nk], sizeof(kind[nk]), "%s", cur);
                kib[nk]     = 0;
                dirty[nk++] = 0;
            }
            if (i < nk) {
                if (line[0] == 'R') {
                    kib[i] += v;
                } else {
                    dirty[i] += v;
                }
            }
            continue;
        }
        /* a mapping's header line: "start-end perms offset dev inode [path]" */
        {
            unsigned long lo, hi;
            char          perms[8];

            if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) {
                continue;
            }
        }
        path = strchr(line, '/');
        if (path == NULL) {
            path = strchr(line, '[');
        }
        if (path == NULL) {
            snprintf(cur, sizeof(cur), "[anon]");
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        slash = strrchr(path, '/');
        snprintf(cur, sizeof(cur), "%s", (slash != NULL) ? slash + 1 : path);
        cur[strcspn(cur, " ")] = '\0';
    }
    if (f != NULL) {
        fclose(f);
    }
    for (i = 0; i < nk; i++) {
        if (kib[i] > 0) {
            printf("smaps N %d rank %d %s %ld %ld\n", size, rank, kind[i], kib[i], dirty[i]);
        }
    }
}

static long long probe_endpoints(void)
{
    amc_probe_stat_fn_t stat = (amc_probe_stat_fn_t)dlsym(RTLD_DEFAULT, "amc_stat_get");
    unsigned long long  v;

    if ((stat == NULL) || (stat("endpoints", &v) != AMC_SUCCESS)) {
        return -1;
    }
    return (long long)v;
}

static double probe_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long      rss0, maps0, rss1, maps1;
    long long eps0, eps1;
    double    t0, t1, t2;
    int       rank, size, rc;

    t0 = probe_now();
    rc = amc_init(&argc, &argv);
    t1 = probe_now();
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "scale_probe: amc_init: %s\n", amc_strerror(rc));
        return 1;
    }
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    amc_comm_size(AMC_COMM_WORLD, &size);
    rss0  = probe_rss_kib();
    maps0 = probe_maps();
    eps0  = probe_endpoints();
    rc    = amc_barrier(AMC_COMM_WORLD);
    t2    = probe_now();
    rss1  = probe_rss_kib();
    maps1 = probe_maps();
    eps1  = probe_endpoints();
    printf("probe N %d rank %d init_ms %.3f barrier_ms %.3f rss_init_kib %ld maps_init %ld "
           "eps_init %lld rss_barrier_kib %ld maps_barrier %ld eps_barrier %lld rc %d\n",
           size, rank, (t1 - t0) * 1e3, (t2 - t1) * 1e3, rss0, maps0, eps0, rss1, maps1, eps1,
           rc);
    if (getenv("AMC_BENCH_PROBE_SMAPS") != NULL) {
        probe_smaps(size, rank);
    }
    fflush(stdout);
    rc |= amc_finalize();
    return (rc == AMC_SUCCESS) ? 0 : 1;
}
