/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selection by measurement: the rules file AMC_TUNING_FILE names, read once
 * when a context is created (bench/amc_tune.sh writes one), followed by the
 * library's built-in rules (am_coll/alg/tuning_builtin.rules, compiled in: the
 * defaults measured here; AMC_TUNING_BUILTIN=0 leaves them out). A rule says
 * which algorithm a collective runs for a range of communicator sizes and
 * bytes:
 *
 *   COLL  MIN_RANKS  MAX_RANKS  MIN_BYTES  MAX_BYTES  ALGORITHM
 *
 * bounds inclusive, the first matching rule wins, '#' starts a comment.
 * Precedence: a forced AMC_<COLL>_ALG, then the file's rules, then the
 * built-in ones, then amc_alg_auto.
 */
#ifndef AMC_TUNING_H
#define AMC_TUNING_H

#include "am_coll/context/tuning_rules.h"
#include "base/log.h"

#include <stddef.h>
#include <stdio.h>

/* The built-in rules' text (am_coll/alg/tuning_builtin.c, made from
 * am_coll/alg/tuning_builtin.rules by the build). */
extern const char amc_tuning_builtin_text[];

/* Reads path ("" : no file), then, if builtin, the built-in rules. A file
 * that cannot be read, an unknown collective or algorithm, a malformed line
 * or a MIN above its MAX is AMC_ERR_ARG, logged once here with file:line.
 * *t is empty on failure. */
int  amc_tuning_load(amc_tuning_t *t, const char *path, int builtin, const amc_log_t *log);
void amc_tuning_free(amc_tuning_t *t);

/* One line per rule in effect, or one saying there is none (amc_info). */
void amc_tuning_print(FILE *stream, const amc_tuning_t *t, const char *path);

#endif
