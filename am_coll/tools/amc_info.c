/* SPDX-License-Identifier: BSD-3-Clause */
/* amc_info: prints the AMC_* configuration table (defaults, current values,
 * documentation), the rules of AMC_TUNING_FILE in effect, and the build's
 * version. No launcher or peers needed.
 * amc_info --stats, started by a launcher: every rank joins the job, runs
 * one barrier and prints its counters (amc_stat_get): the endpoints it made
 * (one per peer it sent to, not one per rank of the job). */
#include "am_coll/api/config_read.h"
#include "am_coll/alg/tuning.h"
#include "transport/shm.h"
#include "amcoll.h"

#include <stdio.h>
#include <string.h>

static int amc_info_stats(int argc, char **argv)
{
    static const char *names[] = { "ranks", "endpoints", "mailboxes_out", "mailboxes_in",
                                   "flow_peers", "flow_bytes" };
    unsigned long long v[6] = { 0, 0, 0, 0, 0, 0 };
    size_t             i;
    int                rank = 0, status;

    status = amc_init(&argc, &argv);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_info: amc_init: %s\n", amc_strerror(status));
        return 1;
    }
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    status = amc_barrier(AMC_COMM_WORLD);
    for (i = 0; (status == AMC_SUCCESS) && (i < 6); i++) {
        status = amc_stat_get(names[i], &v[i]);
    }
    if (status == AMC_SUCCESS) {
        printf("amc_info rank %d after amc_init and one barrier:", rank);
        for (i = 0; i < 6; i++) {
            printf(" %s %llu", names[i], v[i]);
        }
        printf("\n");
    } else {
        fprintf(stderr, "amc_info: rank %d: %s\n", rank, amc_strerror(status));
    }
    return ((amc_finalize() == AMC_SUCCESS) && (status == AMC_SUCCESS)) ? 0 : 1;
}

int main(int argc, char **argv)
{
    amc_log_t    log = amc_log_from_env();
    amc_config_t cfg;
    amc_tuning_t tuning;
    int          status, tstatus;

    if ((argc > 1) && ((strcmp(argv[1], "-h") == 0) || (strcmp(argv[1], "--help") == 0))) {
        printf("usage: %s [--stats]\n  prints every AMC_* variable with its default, its value "
               "in this environment and what it does\n  --stats (under a launcher: mpirun -np N "
               "%s --stats): each rank runs amc_init and one barrier and prints its counters "
               "(endpoints made, peers with flow-control state)\n", argv[0], argv[0]);
        return 0;
    }
    if ((argc > 1) && (strcmp(argv[1], "--stats") == 0)) {
        return amc_info_stats(argc, argv);
    }
    status = amc_config_read(&cfg, &log);
    printf("# amcoll %d.%d configuration (AMC_* environment variables)\n",
           AMC_VERSION_MAJOR, AMC_VERSION_MINOR);
    amc_config_print(stdout, &cfg);
    /* the mailboxes' fixed memory (doc/design.md, "Mailboxes") */
    printf("#\n# mailboxes (AMC_SHM=1): a ring per (sender, receiver) pair of a node, %zu bytes "
           "(touched only once its sender writes);\n# an inbox of L-1 rings on a node of L "
           "ranks: %zu bytes at L=2, %zu at L=32; messages up to %zu bytes of header and data;\n"
           "# %u rendezvous pulls in flight per ring (AMC_SHM_PULL=1), more go by UCX\n",
           amc_shm_ring_bytes(), amc_shm_inbox_bytes(1), amc_shm_inbox_bytes(31),
           amc_shm_max_message(), AMC_SHM_PULLS);
    tstatus = amc_tuning_load(&tuning, cfg.tuning_file, (int)cfg.tuning_builtin,
                              &log); /* logs what is wrong */
    if (tstatus == AMC_SUCCESS) {
        amc_tuning_print(stdout, &tuning, cfg.tuning_file);
        amc_tuning_free(&tuning);
    } else {
        printf("#\n# rules in effect: none, %s is rejected (amc_init fails with it)\n",
               cfg.tuning_file);
        status = (status != AMC_SUCCESS) ? status : tstatus;
    }
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_info: %s\n", amc_strerror(status));
        return 1;
    }
    return 0;
}
