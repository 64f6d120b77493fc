/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A barrier simulation over the fake transport: N ranks enter a series of
 * barriers (non-blocking, up to max_outstanding at a time, with random
 * lateness if skew is set) while the fabric delivers messages in the chosen
 * order. It checks the barrier's semantics at every completion: no rank
 * leaves barrier k before every rank entered barrier k.
 */
#ifndef AMC_TEST_SIM_H
#define AMC_TEST_SIM_H

#include "tests/unit/harness.h"

typedef enum {
    AMC_SIM_FIFO,
    AMC_SIM_REVERSE,
    AMC_SIM_RANDOM
} amc_sim_order_t;

typedef struct amc_sim_params {
    int                   n;
    int                   nbarriers;
    int                   max_outstanding;
    int                   skew;        /* ranks enter late at random */
    amc_sim_order_t       order;
    uint64_t              seed;
    amc_fake_completion_t completion;
} amc_sim_params_t;

/* Runs one simulation; failures are CHECKs. Returns 0 if it passed. */
int amc_sim_run(const amc_sim_params_t *params);

#endif
