/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public calls that make and free user-defined reduction ops
 * (include/amcoll.h): their arguments and the library's state are checked
 * here, the table of ops is the context room's (am_coll/context/op.c).
 */
#include "am_coll/api/api.h"
#include "am_coll/context/op.h"

/* A new op's arguments (a function, somewhere to put the handle) and the
 * library's state. */
static int amc_api_op_check(int has_fn, amc_op_t *op)
{
    if (!has_fn || (op == NULL)) {
        return AMC_ERR_ARG;
    }
    return amc_api_check_live();
}

int amc_op_create(amc_user_fn_t fn, int commute, amc_op_t *op)
{
    int status = amc_api_op_check(fn != NULL, op);

    return (status != AMC_SUCCESS) ? status : amc_op_user_create(fn, NULL, NULL, commute, op);
}

int amc_op_create_data(amc_user_data_fn_t fn, void *data, int commute, amc_op_t *op)
{
    int status = amc_api_op_check(fn != NULL, op);

    return (status != AMC_SUCCESS) ? status : amc_op_user_create(NULL, fn, data, commute, op);
}

int amc_op_free(amc_op_t *op)
{
    int status;

    if (op == NULL) {
        return AMC_ERR_ARG;
    }
    status = amc_api_check_live();
    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_op_user_free(op);
}
