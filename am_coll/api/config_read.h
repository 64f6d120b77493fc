/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration (am_coll/context/config.h) from the environment: the
 * table of AMC_* variables, their defaults, parsers and documentation. It
 * checks AMC_<COLL>_ALG against the algorithms (am_coll/alg/alg.h), so it
 * sits above them; amc_init, amc_info and the tests read it.
 */
#ifndef AMC_CONFIG_READ_H
#define AMC_CONFIG_READ_H

#include "am_coll/context/config.h"
#include "base/log.h"

#include <stdio.h>

void amc_config_defaults(amc_config_t *cfg);

/* Reads the environment; an unknown AMC_* variable draws a warning, a bad
 * value is AMC_ERR_ARG with a message naming the variable. */
int  amc_config_read(amc_config_t *cfg, const amc_log_t *log);

/* The table: name, default, current value and documentation of every variable. */
void amc_config_print(FILE *stream, const amc_config_t *cfg);

#endif
