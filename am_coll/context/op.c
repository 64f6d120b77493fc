/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/op.h"
#include "am_coll/context/datatype.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- predefined ops */

/*
 * One element: _x is in (the left operand), _y is inout. _W is the type the
 * arithmetic runs in: unsigned for the integers, so that overflow wraps as
 * MPI implementations do instead of being undefined (and so that a narrow
 * unsigned product cannot overflow int after promotion); the type itself for
 * floats. The logical ops use & | ^ on 0/1 rather than && ||, which would
 * branch and keep the loop from vectorizing.
 */
#define amc_op_elem_sum(_W, _x, _y)  ((_W)(_x) + (_W)(_y))
#define amc_op_elem_prod(_W, _x, _y) ((_W)(_x) * (_W)(_y))
#define amc_op_elem_min(_W, _x, _y)  (((_x) < (_y)) ? (_x) : (_y))
#define amc_op_elem_max(_W, _x, _y)  (((_x) > (_y)) ? (_x) : (_y))
#define amc_op_elem_land(_W, _x, _y) (((_x) != 0) & ((_y) != 0))
#define amc_op_elem_lor(_W, _x, _y)  (((_x) != 0) | ((_y) != 0))
#define amc_op_elem_lxor(_W, _x, _y) (((_x) != 0) ^ ((_y) != 0))
#define amc_op_elem_band(_W, _x, _y) ((_x) & (_y))
#define amc_op_elem_bor(_W, _x, _y)  ((_x) | (_y))
#define amc_op_elem_bxor(_W, _x, _y) ((_x) ^ (_y))

/*
 * A float's min and max must not depend on the operands' order: the
 * engine's algorithms put a commutative op's operands either way round,
 * and with max(-0.0, +0.0) = the right one ranks of one allreduce got
 * zeros of different signs (recursive doubling at N = 3, in place). So
 * -0.0 is below +0.0 (IEEE 754-2019's minimum and maximum) and a NaN wins
 * whichever side it is on; equal values otherwise have the same bits.
 */
#define amc_op_elem_fmin(_W, _x, _y) \
    ((((_x) != (_x)) || ((_x) < (_y)) || (((_x) == (_y)) && signbit(_x))) ? (_x) : (_y))
#define amc_op_elem_fmax(_W, _x, _y) \
    ((((_x) != (_x)) || ((_x) > (_y)) || (((_x) == (_y)) && signbit(_y))) ? (_x) : (_y))

/*
 * The aligned loop runs in blocks of a fixed 64 bytes (the widest vector
 * there is) and a tail: GCC 12 at -O2 uses the "very cheap" vectorizer cost
 * model, which refuses a loop of unknown trip count that would need a
 * scalar epilogue (and, for doubles, even a plain one), but vectorizes the
 * fixed-length inner loop. Unaligned buffers, which the engine may hand over
 * at an odd offset into a message, go through memcpy per element.
 */
#define AMC_OP_BLOCK_BYTES 64

static inline int amc_op_aligned(const void *p, size_t align)
{
    return ((uintptr_t)p % align) == 0;
}

#define AMC_OP_KERNEL(_tname, _T, _W, _op) AMC_OP_KERNEL_AS(_tname, _T, _W, _op, _op)

/* The kernel of op _op for type _tname, by element function _elem. */
#define AMC_OP_KERNEL_AS(_tname, _T, _W, _op, _elem) \
    static void amc_op_##_op##_##_tname(const void *restrict in_v, void *restrict inout_v, \
                                        size_t count) \
    { \
        const size_t block = AMC_OP_BLOCK_BYTES / sizeof(_T); \
        size_t       i     = 0, j; \
        \
        if (count == 1) { /* the usual small call's: no alignment test, no loop */ \
            _T x, y; \
            \
            memcpy(&x, in_v, sizeof(_T)); \
            memcpy(&y, inout_v, sizeof(_T)); \
            y = (_T)amc_op_elem_##_elem(_W, x, y); \
            memcpy(inout_v, &y, sizeof(_T)); \
            return; \
        } \
        if (amc_op_aligned(in_v, _Alignof(_T)) && amc_op_aligned(inout_v, _Alignof(_T))) { \
            const _T *in    = in_v; \
            _T       *inout = inout_v; \
            \
            for (; count - i >= block; i += block) { \
                for (j = 0; j < block; j++) { \
                    inout[i + j] = (_T)amc_op_elem_##_elem(_W, in[i + j], inout[i + j]); \
                } \
            } \
            for (; i < count; i++) { \
                inout[i] = (_T)amc_op_elem_##_elem(_W, in[i], inout[i]); \
            } \
        } else { \
            const unsigned char *src = in_v; \
            unsigned char       *dst = inout_v; \
            _T                   x, y; \
            \
            for (; i < count; i++) { \
                memcpy(&x, src + i * sizeof(_T), sizeof(_T)); \
                memcpy(&y, dst + i * sizeof(_T), sizeof(_T)); \
                y = (_T)amc_op_elem_##_elem(_W, x, y); \
                memcpy(dst + i * sizeof(_T), &y, sizeof(_T)); \
            } \
        } \
    }

#define AMC_OP_INT_KERNELS(_tname, _T, _W) \
    AMC_OP_KERNEL(_tname, _T, _W, sum) \
    AMC_OP_KERNEL(_tname, _T, _W, prod) \
    AMC_OP_KERNEL(_tname, _T, _W, min) \
    AMC_OP_KERNEL(_tname, _T, _W, max) \
    AMC_OP_KERNEL(_tname, _T, _W, land) \
    AMC_OP_KERNEL(_tname, _T, _W, lor) \
    AMC_OP_KERNEL(_tname, _T, _W, lxor) \
    AMC_OP_KERNEL(_tname, _T, _W, band) \
    AMC_OP_KERNEL(_tname, _T, _W, bor) \
    AMC_OP_KERNEL(_tname, _T, _W, bxor)

#define AMC_OP_FLOAT_KERNELS(_tname, _T) \
    AMC_OP_KERNEL(_tname, _T, _T, sum) \
    AMC_OP_KERNEL(_tname, _T, _T, prod) \
    AMC_OP_KERNEL_AS(_tname, _T, _T, min, fmin) \
    AMC_OP_KERNEL_AS(_tname, _T, _T, max, fmax)

/* Types narrower than int compute in unsigned int: uint16_t * uint16_t would
 * promote to (signed) int and could overflow. */
AMC_OP_INT_KERNELS(int8, int8_t, unsigned)
AMC_OP_INT_KERNELS(int16, int16_t, unsigned)
AMC_OP_INT_KERNELS(int32, int32_t, uint32_t)
AMC_OP_INT_KERNELS(int64, int64_t, uint64_t)
AMC_OP_INT_KERNELS(uint8, uint8_t, unsigned)
AMC_OP_INT_KERNELS(uint16, uint16_t, unsigned)
AMC_OP_INT_KERNELS(uint32, uint32_t, uint32_t)
AMC_OP_INT_KERNELS(uint64, uint64_t, uint64_t)
AMC_OP_INT_KERNELS(int, int, unsigned)
AMC_OP_INT_KERNELS(long, long, unsigned long)
AMC_OP_FLOAT_KERNELS(float, float)
AMC_OP_FLOAT_KERNELS(double, double)

#define AMC_OP_INT_ROW(_tname) \
    { \
        [AMC_SUM] = amc_op_sum_##_tname, [AMC_PROD] = amc_op_prod_##_tname, \
        [AMC_MIN] = amc_op_min_##_tname, [AMC_MAX] = amc_op_max_##_tname, \
        [AMC_LAND] = amc_op_land_##_tname, [AMC_LOR] = amc_op_lor_##_tname, \
        [AMC_LXOR] = amc_op_lxor_##_tname, [AMC_BAND] = amc_op_band_##_tname, \
        [AMC_BOR] = amc_op_bor_##_tname, [AMC_BXOR] = amc_op_bxor_##_tname \
    }

/* Logical and bitwise ops stay NULL: MPI defines them on integers only. */
#define AMC_OP_FLOAT_ROW(_tname) \
    { \
        [AMC_SUM] = amc_op_sum_##_tname, [AMC_PROD] = amc_op_prod_##_tname, \
        [AMC_MIN] = amc_op_min_##_tname, [AMC_MAX] = amc_op_max_##_tname \
    }

/* The table is MPI's rules: a NULL entry is a forbidden pair. AMC_BYTE and
 * AMC_CHAR take no reduction at all (MPI: MPI_BYTE is opaque, MPI_CHAR is
 * text), so their rows stay empty. */
const amc_op_kernel_t amc_op_kernels[AMC_DATATYPE_COUNT][AMC_OP_PREDEFINED_COUNT] = {
    [AMC_INT8]   = AMC_OP_INT_ROW(int8),
    [AMC_INT16]  = AMC_OP_INT_ROW(int16),
    [AMC_INT32]  = AMC_OP_INT_ROW(int32),
    [AMC_INT64]  = AMC_OP_INT_ROW(int64),
    [AMC_UINT8]  = AMC_OP_INT_ROW(uint8),
    [AMC_UINT16] = AMC_OP_INT_ROW(uint16),
    [AMC_UINT32] = AMC_OP_INT_ROW(uint32),
    [AMC_UINT64] = AMC_OP_INT_ROW(uint64),
    [AMC_INT]    = AMC_OP_INT_ROW(int),
    [AMC_LONG]   = AMC_OP_INT_ROW(long),
    [AMC_FLOAT]  = AMC_OP_FLOAT_ROW(float),
    [AMC_DOUBLE] = AMC_OP_FLOAT_ROW(double),
};

static const char *const amc_op_names[AMC_OP_PREDEFINED_COUNT] = {
    [AMC_SUM] = "AMC_SUM",   [AMC_PROD] = "AMC_PROD", [AMC_MIN] = "AMC_MIN",
    [AMC_MAX] = "AMC_MAX",   [AMC_LAND] = "AMC_LAND", [AMC_LOR] = "AMC_LOR",
    [AMC_LXOR] = "AMC_LXOR", [AMC_BAND] = "AMC_BAND", [AMC_BOR] = "AMC_BOR",
    [AMC_BXOR] = "AMC_BXOR",
};

/* ---------------------------------------------------------------- user ops */

typedef struct amc_op_user {
    amc_user_fn_t      fn;       /* both NULL: a free slot */
    amc_user_data_fn_t data_fn;
    void              *data;
    int                commute;
} amc_op_user_t;

static inline int amc_op_user_live(const amc_op_user_t *u)
{
    return (u->fn != NULL) || (u->data_fn != NULL);
}

/* Process-wide, like the default context: handles outlive any one context
 * and may be created before amc_init. create and free are rare, so one mutex
 * is enough; the reduction path avoids it through amc_op_bind. */
static pthread_mutex_t amc_op_lock = PTHREAD_MUTEX_INITIALIZER;
static amc_op_user_t  *amc_op_users;
static size_t          amc_op_user_used;   /* slots ever handed out */
static size_t          amc_op_user_cap;

/* The largest slot count whose handles still fit amc_op_t. */
#define AMC_OP_USER_MAX ((size_t)INT_MAX - AMC_OP_USER_BASE + 1)

/* Copies the live entry of a user handle; 0 if op is no live user op. */
static int amc_op_user_lookup(amc_op_t op, amc_op_user_t *entry)
{
    size_t slot;
    int    found = 0;

    if (op < AMC_OP_USER_BASE) {
        return 0;
    }
    slot = (size_t)op - AMC_OP_USER_BASE;
    pthread_mutex_lock(&amc_op_lock);
    if ((slot < amc_op_user_used) && amc_op_user_live(&amc_op_users[slot])) {
        *entry = amc_op_users[slot];
        found  = 1;
    }
    pthread_mutex_unlock(&amc_op_lock);
    return found;
}

static int amc_op_user_add(const amc_op_user_t *user, amc_op_t *op)
{
    amc_op_user_t *grown;
    size_t         slot, cap;
    int            status;

    pthread_mutex_lock(&amc_op_lock);
    /* the lowest freed slot first, so that create/free cycles do not grow
     * the table; a handle is reused only once it was freed, as in MPI */
    for (slot = 0; slot < amc_op_user_used; slot++) {
        if (!amc_op_user_live(&amc_op_users[slot])) {
            break;
        }
    }
    if (slot == amc_op_user_cap) {
        if (amc_op_user_cap >= AMC_OP_USER_MAX) {
            status = AMC_ERR_NO_MEMORY;
            goto out_unlock;
        }
        cap = (amc_op_user_cap == 0) ? 8 : 2 * amc_op_user_cap;
        if (cap > AMC_OP_USER_MAX) {
            cap = AMC_OP_USER_MAX;
        }
        grown = realloc(amc_op_users, cap * sizeof(*grown));
        if (grown == NULL) {
            status = AMC_ERR_NO_MEMORY;
            goto out_unlock;
        }
        amc_op_users    = grown;
        amc_op_user_cap = cap;
    }
    if (slot == amc_op_user_used) {
        amc_op_user_used++;
    }
    amc_op_users[slot] = *user;
    *op                = (amc_op_t)(AMC_OP_USER_BASE + slot);
    status             = AMC_SUCCESS;

out_unlock:
    pthread_mutex_unlock(&amc_op_lock);
    return status;
}

int amc_op_user_create(amc_user_fn_t fn, amc_user_data_fn_t data_fn, void *data, int commute,
                       amc_op_t *op)
{
    amc_op_user_t user = {.fn = fn, .data_fn = data_fn, .data = data, .commute = (commute != 0)};

    return amc_op_user_add(&user, op);
}

int amc_op_user_free(amc_op_t *op)
{
    size_t slot;
    int    status;

    /* predefined ops belong to the library */
    if (*op < AMC_OP_USER_BASE) {
        return AMC_ERR_ARG;
    }
    slot = (size_t)*op - AMC_OP_USER_BASE;

    pthread_mutex_lock(&amc_op_lock);
    if ((slot >= amc_op_user_used) || !amc_op_user_live(&amc_op_users[slot])) {
        status = AMC_ERR_ARG;
        goto out_unlock;
    }
    memset(&amc_op_users[slot], 0, sizeof(amc_op_users[slot]));
    *op                   = AMC_OP_INVALID;
    status                = AMC_SUCCESS;

out_unlock:
    pthread_mutex_unlock(&amc_op_lock);
    return status;
}

/* ---------------------------------------------------------------- both */

int amc_op_bind(amc_op_t op, amc_datatype_t dt, amc_op_bound_t *bound)
{
    amc_op_user_t user;

    if ((bound == NULL) || !amc_datatype_is_valid(dt)) {
        return AMC_ERR_ARG;
    }
    if (amc_op_is_predefined(op)) {
        if (amc_op_kernels[dt][op] == NULL) {
            return AMC_ERR_ARG;
        }
        bound->kernel       = amc_op_kernels[dt][op];
        bound->user_fn      = NULL;
        bound->user_data_fn = NULL;
        bound->user_data    = NULL;
        bound->commute      = 1;
    } else if (amc_op_user_lookup(op, &user)) {
        bound->kernel       = NULL;
        bound->user_fn      = user.fn;
        bound->user_data_fn = user.data_fn;
        bound->user_data    = user.data;
        bound->commute      = user.commute;
    } else {
        return AMC_ERR_ARG;
    }
    bound->op = op;
    bound->dt = dt;
    return AMC_SUCCESS;
}

int amc_op_check_any(amc_op_t op, amc_datatype_t dt)
{
    amc_op_bound_t bound;

    return amc_op_bind(op, dt, &bound);
}

void amc_op_bound_reduce(const amc_op_bound_t *bound, const void *in, void *inout, size_t count)
{
    if (count == 0) {
        return;
    }
    if (bound->kernel != NULL) {
        bound->kernel(in, inout, count);
    } else if (bound->user_fn != NULL) {
        bound->user_fn(in, inout, count, bound->dt);
    } else {
        bound->user_data_fn(in, inout, count, bound->dt, bound->user_data);
    }
}

void amc_op_reduce(amc_op_t op, amc_datatype_t dt, const void *in, void *inout, size_t count)
{
    amc_op_bound_t bound;

    if (amc_op_bind(op, dt, &bound) == AMC_SUCCESS) {
        amc_op_bound_reduce(&bound, in, inout, count);
    }
}

int amc_op_user_commutes(amc_op_t op)
{
    amc_op_user_t user;

    return amc_op_user_lookup(op, &user) ? user.commute : 0;
}

const char *amc_op_name(amc_op_t op)
{
    amc_op_user_t user;

    if (amc_op_is_predefined(op)) {
        return amc_op_names[op];
    }
    return amc_op_user_lookup(op, &user) ? "user op" : "invalid op";
}
