/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL's names for datatypes, ops and buffers, both ways: the text parser
 * (goal_text.c) reads them, the compiler's messages (goal.c) and the
 * writers print them.
 */
#include "am_coll/goal/goal_names.h"

#include <string.h>

static const char *amc_goal_dt_names[] = {
    [AMC_BYTE] = "byte", [AMC_CHAR] = "char", [AMC_INT8] = "int8", [AMC_INT16] = "int16",
    [AMC_INT32] = "int32", [AMC_INT64] = "int64", [AMC_UINT8] = "uint8",
    [AMC_UINT16] = "uint16", [AMC_UINT32] = "uint32", [AMC_UINT64] = "uint64",
    [AMC_INT] = "int", [AMC_LONG] = "long", [AMC_FLOAT] = "float", [AMC_DOUBLE] = "double"
};

static const char *amc_goal_op_names[] = {
    [AMC_SUM] = "sum", [AMC_PROD] = "prod", [AMC_MIN] = "min", [AMC_MAX] = "max",
    [AMC_LAND] = "land", [AMC_LOR] = "lor", [AMC_LXOR] = "lxor", [AMC_BAND] = "band",
    [AMC_BOR] = "bor", [AMC_BXOR] = "bxor"
};

static const char *amc_goal_buf_names[AMC_GOAL_NBUFS] = {
    "send", "recv", "tmp", "tmp1", "tmp2", "tmp3", "tmp4", "tmp5"
};

#define AMC_GOAL_NELEMS(_a) (sizeof(_a) / sizeof((_a)[0]))

static int amc_goal_lookup(const char *const *names, size_t n, const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if ((names[i] != NULL) && (strlen(names[i]) == len) && !memcmp(names[i], s, len)) {
            return (int)i;
        }
    }
    return -1;
}

const char *amc_goal_dt_name(amc_datatype_t dt)
{
    return ((unsigned)dt < AMC_GOAL_NELEMS(amc_goal_dt_names)) ? amc_goal_dt_names[dt] : NULL;
}

const char *amc_goal_op_name(amc_op_t op)
{
    return ((op >= 0) && ((size_t)op < AMC_GOAL_NELEMS(amc_goal_op_names)))
               ? amc_goal_op_names[op] : NULL;
}

const char *amc_goal_buf_name(int buf)
{
    return ((buf >= 0) && (buf < AMC_GOAL_NBUFS)) ? amc_goal_buf_names[buf] : NULL;
}

int amc_goal_dt_parse(const char *name, size_t len)
{
    return amc_goal_lookup(amc_goal_dt_names, AMC_GOAL_NELEMS(amc_goal_dt_names), name, len);
}

int amc_goal_op_parse(const char *name, size_t len)
{
    return amc_goal_lookup(amc_goal_op_names, AMC_GOAL_NELEMS(amc_goal_op_names), name, len);
}

int amc_goal_buf_parse(const char *name, size_t len)
{
    return amc_goal_lookup(amc_goal_buf_names, AMC_GOAL_NBUFS, name, len);
}
