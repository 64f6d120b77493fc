/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL's names for datatypes, ops and buffers (goal_names.c), for the text
 * parser, the writers and the compiler's messages.
 */
#ifndef AMC_GOAL_NAMES_H
#define AMC_GOAL_NAMES_H

#include "amcoll.h"

#include <stddef.h>

/* Text: the datatype's and op's names (NULL if none) and back (-1). */
const char *amc_goal_dt_name(amc_datatype_t dt);
const char *amc_goal_op_name(amc_op_t op);
int         amc_goal_dt_parse(const char *name, size_t len);
int         amc_goal_op_parse(const char *name, size_t len);
const char *amc_goal_buf_name(int buf);
int         amc_goal_buf_parse(const char *name, size_t len);

#endif
