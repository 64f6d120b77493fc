/* SPDX-License-Identifier: BSD-3-Clause */
/* Monotonic time in microseconds and seconds, for wait loops and timeouts. */
#ifndef AMC_CLOCK_H
#define AMC_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t amc_clock_usec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline double amc_clock_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
