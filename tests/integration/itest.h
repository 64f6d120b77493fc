/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the integration programs that check amcoll's counters share: a
 * failure said with the program's name (ITEST_NAME) and rank and counted,
 * a call that must succeed, a counter of amc_stat_get, a sleep. The
 * program defines g_rank and g_fail before it includes this.
 */
#ifndef AMC_ITEST_H
#define AMC_ITEST_H

#include "amcoll.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void itest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void itest_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s rank %d: ", ITEST_NAME, g_rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    g_fail++;
}

#define ITEST_CHECK(_cond, ...) do { if (!(_cond)) itest_fail(__VA_ARGS__); } while (0)

static void itest_must(int rc, const char *what)
{
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "FAIL %s rank %d: %s: %s\n", ITEST_NAME, g_rank, what,
                amc_strerror(rc));
        exit(1);
    }
}

static unsigned long long itest_stat(const char *name)
{
    unsigned long long v = 0;

    itest_must(amc_stat_get(name, &v), name);
    return v;
}

static void itest_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

#endif
