/*
 * Run-time configuration: AMC_* environment variables, read once through one
 * table (config.c) that amc_info prints with defaults, values and docs.
 */
#ifndef AMC_CONFIG_H
#define AMC_CONFIG_H

#include "am_coll/log.h"
#include "am_coll/progress.h"

#include <stdio.h>

typedef struct amc_config {
    int               log_level;
    double            timeout_sec;   /* 0: waits never time out */
    amc_wait_policy_t wait;
    unsigned          early_max;     /* instances held per communicator beyond the window */
    unsigned          orphan_max;    /* messages held for communicators not created yet */
} amc_config_t;

void amc_config_defaults(amc_config_t *cfg);

/* Reads the environment; an unknown AMC_* variable draws a warning, a bad
 * value is AMC_ERR_ARG with a message naming the variable. */
int  amc_config_read(amc_config_t *cfg, const amc_log_t *log);

/* The table: name, default, current value and documentation of every variable. */
void amc_config_print(FILE *stream, const amc_config_t *cfg);

#endif
