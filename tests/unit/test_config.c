/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AMC_* table: defaults parse, values are read, bad values are rejected
 * with a message naming the variable, unknown AMC_* variables draw a warning
 * (the benchmarks' AMC_BENCH_* none), and the printed table lists every
 * variable.
 */
#include "tests/unit/harness.h"
#include "am_coll/api/config_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


typedef struct { amc_config_t cfg; int status; } read_result_t;

static void do_read(void *arg)
{
    read_result_t *r   = arg;
    amc_log_t      log = { AMC_LOG_WARN, -1 };

    r->status = amc_config_read(&r->cfg, &log);
}

static void test_defaults(void)
{
    amc_config_t cfg;

    amc_config_defaults(&cfg);
    CHECK(cfg.log_level == AMC_LOG_WARN, "default log level");
    CHECK(cfg.timeout_sec == 0.0, "no timeout by default");
    CHECK(cfg.wait.spin_count == AMC_SPIN_AUTO, "spin count decided per node");
    CHECK(amc_wait_spin_auto(1) > 0, "a rank alone on a node spins first");
    CHECK(amc_wait_spin_auto(100000) == 0, "an oversubscribed node yields at once");
    CHECK(cfg.wait.yield_usec > 0, "yield time");
    CHECK(cfg.wait.sleep_msec > 0, "sleep bound");
    CHECK(cfg.early_max > 0 && cfg.orphan_max > 0, "store bounds");
}

static void test_values(void)
{
    read_result_t r;
    char          err[4096];

    setenv("AMC_TIMEOUT", "2.5", 1);
    setenv("AMC_LOG_LEVEL", "debug", 1);
    setenv("AMC_SPIN_COUNT", "7", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_SUCCESS, "valid values: %s", err);
    CHECK(r.cfg.timeout_sec == 2.5, "AMC_TIMEOUT read");
    CHECK(r.cfg.log_level == AMC_LOG_DEBUG, "AMC_LOG_LEVEL read");
    CHECK(r.cfg.wait.spin_count == 7, "AMC_SPIN_COUNT read");
    unsetenv("AMC_LOG_LEVEL");
    unsetenv("AMC_SPIN_COUNT");

    setenv("AMC_TIMEOUT", "soon", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_ERR_ARG, "non-numeric timeout is rejected");
    CHECK(strstr(err, "AMC_TIMEOUT") != NULL, "the message names the variable: '%s'", err);
    setenv("AMC_TIMEOUT", "-1", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_ERR_ARG, "negative timeout is rejected");
    unsetenv("AMC_TIMEOUT");

    setenv("AMC_SPIN_COUNT", "auto", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_SUCCESS && r.cfg.wait.spin_count == AMC_SPIN_AUTO, "auto is accepted");
    setenv("AMC_SPIN_COUNT", "-3", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_ERR_ARG, "negative count is rejected");
    setenv("AMC_SPIN_COUNT", "12abc", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_ERR_ARG, "trailing junk is rejected");
    unsetenv("AMC_SPIN_COUNT");

    setenv("AMC_LOG_LEVEL", "loud", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_ERR_ARG, "unknown log level is rejected");
    unsetenv("AMC_LOG_LEVEL");

    setenv("AMC_TYPO_VARIABLE", "1", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_SUCCESS, "an unknown variable is not fatal");
    CHECK(strstr(err, "AMC_TYPO_VARIABLE") != NULL, "but draws a warning: '%s'", err);
    unsetenv("AMC_TYPO_VARIABLE");

    setenv("AMC_BENCH_SIZES", "8,64", 1);
    amc_test_capture_stderr(do_read, &r, err, sizeof(err));
    CHECK(r.status == AMC_SUCCESS, "a benchmark's variable is read");
    CHECK(strstr(err, "AMC_BENCH_SIZES") == NULL, "without a warning: '%s'", err);
    unsetenv("AMC_BENCH_SIZES");
}

static void test_print(void)
{
    static const char *names[] = { "AMC_LOG_LEVEL", "AMC_TIMEOUT", "AMC_SPIN_COUNT",
                                   "AMC_YIELD_USEC", "AMC_SLEEP_MSEC", "AMC_EARLY_MAX",
                                   "AMC_ORPHAN_MAX" };
    amc_config_t cfg;
    char         buf[8192];
    FILE        *tmp = tmpfile();
    size_t       got, i;

    amc_config_defaults(&cfg);
    cfg.wait.spin_count = 12345;
    amc_config_print(tmp, &cfg);
    rewind(tmp);
    got      = fread(buf, 1, sizeof(buf) - 1, tmp);
    buf[got] = '\0';
    fclose(tmp);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        CHECK(strstr(buf, names[i]) != NULL, "%s is in the table", names[i]);
    }
    CHECK(strstr(buf, "AMC_SPIN_COUNT=12345") != NULL, "current values are printed");
    CHECK(strstr(buf, "default: auto") != NULL, "defaults are printed");
    cfg.wait.spin_count = AMC_SPIN_AUTO;
    tmp = tmpfile();
    amc_config_print(tmp, &cfg);
    rewind(tmp);
    got      = fread(buf, 1, sizeof(buf) - 1, tmp);
    buf[got] = '\0';
    fclose(tmp);
    CHECK(strstr(buf, "AMC_SPIN_COUNT=auto") != NULL, "auto is printed as such");
}

int main(void)
{
    test_defaults();
    test_values();
    test_print();
    return amc_test_summary("test_config");
}
