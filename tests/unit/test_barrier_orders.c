/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The barrier state machine for N = 1..9, 16, 17, 32 under FIFO, reverse and
 * 200 seeded random delivery orders, with ranks entering late and running up
 * to four barriers ahead, so messages of barrier k+1 arrive while barrier k
 * runs (and further ahead than the control window).
 */
#include "tests/unit/sim.h"

#include <stdio.h>

int main(void)
{
    static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 32 };
    amc_sim_params_t p;
    size_t           i;
    int              seed, mode;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        p.n = sizes[i];

        /* deterministic orders, blocking-style (one barrier at a time) and
         * pipelined, with both send completion models */
        for (mode = 0; mode < 4; mode++) {
            p.nbarriers       = 6;
            p.max_outstanding = (mode & 2) ? 3 : 1;
            p.skew            = 0;
            p.seed            = 0;
            p.completion      = (mode & 1) ? AMC_FAKE_COMPLETE_ON_SEND
                                           : AMC_FAKE_COMPLETE_ON_DELIVERY;
            p.order = AMC_SIM_FIFO;
            amc_sim_run(&p);
            p.order = AMC_SIM_REVERSE;
            amc_sim_run(&p);
        }

        for (seed = 0; seed < 200; seed++) {
            p.nbarriers       = 4;
            p.max_outstanding = 1 + seed % 4;
            p.skew            = 1;
            p.order           = AMC_SIM_RANDOM;
            p.seed            = (uint64_t)seed * 7919u + (uint64_t)p.n;
            p.completion      = (seed & 1) ? AMC_FAKE_COMPLETE_ON_SEND
                                           : AMC_FAKE_COMPLETE_ON_DELIVERY;
            amc_sim_run(&p);
        }
    }

    /* far more outstanding than the window holds */
    p.n = 5; p.nbarriers = 40; p.max_outstanding = 40; p.skew = 1;
    p.completion = AMC_FAKE_COMPLETE_ON_DELIVERY;
    for (seed = 0; seed < 20; seed++) {
        p.order = AMC_SIM_RANDOM;
        p.seed  = (uint64_t)seed;
        amc_sim_run(&p);
    }
    return amc_test_summary("test_barrier_orders");
}
