/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction operations: the predefined ops as typed loops, and user ops
 * (amc_op_create) in a process-wide table. MPI's order throughout:
 * inout[i] = in[i] (op) inout[i], in being the left operand, which matters
 * for a non-commutative user op.
 */
#ifndef AMC_OP_H
#define AMC_OP_H

#include "am_coll/context/datatype.h"
#include "amcoll.h"

#include <stddef.h>

/* AMC_BXOR is the last predefined op. */
#define AMC_OP_PREDEFINED_COUNT (AMC_BXOR + 1)

/* User handles start here, clear of the predefined values and of the
 * room they may grow into. */
#define AMC_OP_USER_BASE 1000

/* What amc_op_free leaves in the caller's handle: no op, predefined or user. */
#define AMC_OP_INVALID (-1)

/* A predefined op's loop over count elements of one datatype. */
typedef void (*amc_op_kernel_t)(const void *restrict in, void *restrict inout, size_t count);

/* An op looked up once for a datatype, as a collective should do when it
 * starts: reducing through it takes no lock, and the collective completes
 * with the function it started with even if the user op is freed (or its
 * handle reused) meanwhile, which MPI allows. */
typedef struct amc_op_bound {
    amc_op_t        op;
    amc_datatype_t  dt;
    amc_op_kernel_t kernel;    /* predefined op, else NULL */
    amc_user_fn_t   user_fn;   /* user op from amc_op_create, else NULL */
    amc_user_data_fn_t user_data_fn; /* user op from amc_op_create_data, else NULL */
    void           *user_data;
    int             commute;
} amc_op_bound_t;

/* The predefined ops' loops by datatype and op; a NULL entry is a pair
 * MPI's rules forbid. */
extern const amc_op_kernel_t amc_op_kernels[AMC_DATATYPE_COUNT][AMC_OP_PREDEFINED_COUNT];

static inline int amc_op_is_predefined(amc_op_t op)
{
    return (op >= 0) && (op < AMC_OP_PREDEFINED_COUNT);
}

/* A predefined op's loop for dt, or NULL (a user op, or a pair the rules
 * forbid): no lock, no lookup beyond the table. */
static inline amc_op_kernel_t amc_op_kernel(amc_op_t op, amc_datatype_t dt)
{
    return (amc_op_is_predefined(op) && amc_datatype_is_valid(dt)) ? amc_op_kernels[dt][op]
                                                                   : NULL;
}

/* amc_op_check for any op (a user op's is looked up under the table lock). */
int amc_op_check_any(amc_op_t op, amc_datatype_t dt);

/* AMC_SUCCESS if op applies to dt (MPI's rules; a user op applies to every
 * datatype), AMC_ERR_ARG for an unknown or freed op, an unknown datatype, or
 * a pair the rules forbid. Thread-safe. Inline: every reduction's call
 * checks its op, and a predefined one is a table entry. */
static inline int amc_op_check(amc_op_t op, amc_datatype_t dt)
{
    if (amc_op_is_predefined(op)) {
        return (amc_op_kernel(op, dt) != NULL) ? AMC_SUCCESS : AMC_ERR_ARG;
    }
    return amc_op_check_any(op, dt);
}

/* amc_op_check, then fills *bound. */
int amc_op_bind(amc_op_t op, amc_datatype_t dt, amc_op_bound_t *bound);

/* inout[i] = in[i] (op) inout[i] for i < count. in and inout must not
 * overlap. A predefined op takes either unaligned for the datatype (a slower
 * loop then); a user function gets the pointers as they are and, as in MPI,
 * may take them as typed arrays, so hand it buffers aligned for the datatype.
 * With count 0 nothing is touched (no user call) and either may be NULL. */
void amc_op_bound_reduce(const amc_op_bound_t *bound, const void *in, void *inout,
                         size_t count);

/* The same for an op not bound beforehand: a user op is looked up under the
 * table lock at every call. A pair amc_op_check rejects does nothing. */
void amc_op_reduce(amc_op_t op, amc_datatype_t dt, const void *in, void *inout, size_t count);

/* Whether user op op was created commutative; 0 for an unknown or freed
 * one. */
int amc_op_user_commutes(amc_op_t op);

/* 1 for the predefined ops and a user op created commutative; 0 for a
 * non-commutative user op and for an unknown or freed op, the order that is
 * always correct. */
static inline int amc_op_is_commutative(amc_op_t op)
{
    return amc_op_is_predefined(op) ? 1 : amc_op_user_commutes(op);
}

/* "AMC_SUM" etc., "user op", or "invalid op", for log messages; never NULL. */
const char *amc_op_name(amc_op_t op);

/* User-defined ops (amc_op_create, amc_op_create_data and amc_op_free in
 * am_coll/api/api_op.c check the arguments and the library's state first):
 * fn or data_fn with its data into the lowest free handle, and back. */
int amc_op_user_create(amc_user_fn_t fn, amc_user_data_fn_t data_fn, void *data, int commute,
                       amc_op_t *op);
int amc_op_user_free(amc_op_t *op);

#endif
