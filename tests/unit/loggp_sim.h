/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scale simulator: N ranks in one process over the fake
 * transport's timed mode (a discrete-event clock with LogGP costs, one
 * parameter set within a node and one across), each running the library's
 * real schedules and handlers for one collective; it checks the results and
 * reports the predicted completion time. bench/amc_sim is its command line,
 * tests/unit/test_loggp_sim its test; doc/design.md, "Scale simulator".
 */
#ifndef AMC_TEST_LOGGP_SIM_H
#define AMC_TEST_LOGGP_SIM_H

#include "transport/fake.h"

#include <stddef.h>
#include <stdint.h>

/* LogGP in picoseconds ({ L, o, g, G }). Within a node: fitted to UCX
 * active messages over shared memory measured on this machine (ucx_perftest
 * ucp_am_lat 8 B: 0.58 us half round trip = L + 2o; ucp_am_bw 8 B: 0.18 us
 * a message = g; 1 MiB: 3.9 GB/s = 1/G). Across nodes: HDR InfiniBand as
 * its vendor publishes it (about 1 us half round trip, 200 Gb/s, some 200
 * million messages a second per NIC), o as within a node. FAST: shared
 * memory as cheap as on a current server node (0.15 us half round trip),
 * for what-if runs. doc/design.md, "Scale simulator". */
#define AMC_LSIM_INTRA_DEFAULT { 180000, 200000, 200000, 257 }
#define AMC_LSIM_INTER_DEFAULT { 600000, 200000, 5000, 40 }
#define AMC_LSIM_INTRA_FAST    { 50000, 50000, 50000, 100 }

typedef enum {
    AMC_LSIM_DATA_AUTO,    /* private buffers while they fit AMC_LSIM_DATA_MAX */
    AMC_LSIM_DATA_PRIVATE, /* a buffer per rank: results checked */
    AMC_LSIM_DATA_SHARED   /* one buffer for all ranks: timing only, unchecked */
} amc_lsim_data_t;

#define AMC_LSIM_DATA_MAX (2ull << 30) /* bytes of private buffers in all */

typedef struct amc_lsim_params {
    const char      *coll;      /* a collective's name (amc_coll_name), not a v-form */
    const char      *alg;       /* an algorithm's name, or "auto" */
    int              n;
    size_t           bytes;     /* per rank and block (int64 elements, but bcast) */
    int              node_size; /* 0: one node */
    amc_fake_loggp_t intra, inter;
    amc_lsim_data_t  data;
    int              dup;       /* 0: on world; 1: on a dup of world, whose bytes
                                 * are measured (its agreement's first contacts
                                 * included); 2: a dup made and freed first, so
                                 * that the measured one's bytes are its own */
} amc_lsim_params_t;

typedef struct amc_lsim_result {
    uint64_t      time_ps;        /* the last rank's finish */
    int           checked;        /* results compared (private buffers) */
    int           correct;        /* every request done, every result right */
    unsigned long events;         /* messages delivered in the timed collective */
    double        wall_s;         /* the whole run, setup and teardown included */
    double        setup_s;        /* of which contexts, communicator, buffers */
    double        coll_s;         /* and the collective */
    long          peak_rss_kib;
    size_t        setup_per_rank; /* heap per rank for context, world, transport */
    size_t        comm_per_rank;  /* heap per rank for the dup (dup > 0) */
    size_t        coll_per_rank;  /* heap per rank left after the collective on it */
    size_t        fake_per_rank;  /* of setup: the fake transport's share */
} amc_lsim_result_t;

int  amc_lsim_coll_id(const char *name);
/* Runs one simulation; AMC_SUCCESS if it ran (result->correct tells the
 * rest), else an error with a message on stderr. */
int  amc_lsim_run(const amc_lsim_params_t *params, amc_lsim_result_t *result);

#endif
