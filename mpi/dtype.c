/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: datatypes and ops.
 *
 * amcm_dt_info says of a datatype what the routing needs: its size, whether
 * count elements lie as count * size contiguous bytes at the buffer
 * (otherwise the call packs into a temporary), and for reductions the
 * signature: n copies of one named type per element, or none. The
 * signature is what MPI makes identical on every rank of a reduction, so a
 * decision taken from it is the same everywhere; the layout may differ from
 * rank to rank and never decides anything.
 */
#include "mpi/dtype.h"
#include "mpi/map.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* What MPI lets a predefined op do on a type (MPI-3.1 5.9.2). */
enum { AMCM_CL_NONE, AMCM_CL_INT, AMCM_CL_FLOAT, AMCM_CL_BYTE };

#define AMCM_NAMED_MAX 40
static amcm_named_t  amcm_named[AMCM_NAMED_MAX];
static int           amcm_nnamed;
const amcm_named_t  *amcm_named_tab[AMCM_NAMED_HASH]; /* direct-mapped, by handle */

static void amcm_named_add(MPI_Datatype dt, int atype, int cls, int want_size)
{
    int size = -1;

    if ((dt == MPI_DATATYPE_NULL) || (amcm_nnamed == AMCM_NAMED_MAX)) {
        return;
    }
    PMPI_Type_size(dt, &size);
    if (size != want_size) {
        /* amcoll's type would not be this one's: data only */
        atype = -1;
        cls   = AMCM_CL_NONE;
    }
    amcm_named[amcm_nnamed].dt    = dt;
    amcm_named[amcm_nnamed].atype = atype;
    amcm_named[amcm_nnamed].cls   = cls;
    amcm_named[amcm_nnamed].size  = size;
    if (amcm_named_tab[amcm_named_slot(dt)] == NULL) {
        amcm_named_tab[amcm_named_slot(dt)] = &amcm_named[amcm_nnamed]; /* else searched */
    }
    amcm_nnamed++;
}

void amcm_dtype_init(void)
{
    amcm_nnamed = 0;
    memset(amcm_named_tab, 0, sizeof(amcm_named_tab));
    /* the usual ones first: they win a shared slot of the table */
    amcm_named_add(MPI_INT, AMC_INT, AMCM_CL_INT, sizeof(int));
    amcm_named_add(MPI_DOUBLE, AMC_DOUBLE, AMCM_CL_FLOAT, sizeof(double));
#if AMCM_CHAR_REDUCES
    /* the MPI library reduces MPI_CHAR with every integer op, as the
     * platform's char (mpi/impl.h), and OSU's benchmarks reduce it by
     * default: the same arithmetic here, or those calls fell through to
     * the library's own path */
    amcm_named_add(MPI_CHAR, ((char)-1 < 0) ? AMC_INT8 : AMC_UINT8, AMCM_CL_INT, 1);
#else
    amcm_named_add(MPI_CHAR, AMC_CHAR, AMCM_CL_NONE, 1);
#endif
    amcm_named_add(MPI_BYTE, AMC_UINT8, AMCM_CL_BYTE, 1);
    amcm_named_add(MPI_FLOAT, AMC_FLOAT, AMCM_CL_FLOAT, sizeof(float));
    amcm_named_add(MPI_LONG, AMC_LONG, AMCM_CL_INT, sizeof(long));
    amcm_named_add(MPI_UNSIGNED, AMC_UINT32, AMCM_CL_INT, 4);
    amcm_named_add(MPI_UNSIGNED_LONG, sizeof(long) == 8 ? AMC_UINT64 : AMC_UINT32, AMCM_CL_INT,
                   sizeof(unsigned long));
    amcm_named_add(MPI_LONG_LONG_INT, AMC_INT64, AMCM_CL_INT, 8);
    amcm_named_add(MPI_UNSIGNED_LONG_LONG, AMC_UINT64, AMCM_CL_INT, 8);
    amcm_named_add(MPI_SHORT, AMC_INT16, AMCM_CL_INT, 2);
    amcm_named_add(MPI_UNSIGNED_SHORT, AMC_UINT16, AMCM_CL_INT, 2);
    amcm_named_add(MPI_SIGNED_CHAR, AMC_INT8, AMCM_CL_INT, 1);
    amcm_named_add(MPI_UNSIGNED_CHAR, AMC_UINT8, AMCM_CL_INT, 1);
    amcm_named_add(MPI_INT8_T, AMC_INT8, AMCM_CL_INT, 1);
    amcm_named_add(MPI_INT16_T, AMC_INT16, AMCM_CL_INT, 2);
    amcm_named_add(MPI_INT32_T, AMC_INT32, AMCM_CL_INT, 4);
    amcm_named_add(MPI_INT64_T, AMC_INT64, AMCM_CL_INT, 8);
    amcm_named_add(MPI_UINT8_T, AMC_UINT8, AMCM_CL_INT, 1);
    amcm_named_add(MPI_UINT16_T, AMC_UINT16, AMCM_CL_INT, 2);
    amcm_named_add(MPI_UINT32_T, AMC_UINT32, AMCM_CL_INT, 4);
    amcm_named_add(MPI_UINT64_T, AMC_UINT64, AMCM_CL_INT, 8);
    amcm_named_add(MPI_AINT, AMC_INT64, AMCM_CL_INT, 8);
    amcm_named_add(MPI_OFFSET, AMC_INT64, AMCM_CL_INT, 8);
    amcm_named_add(MPI_COUNT, AMC_INT64, AMCM_CL_INT, 8);
}

const amcm_named_t *amcm_named_search(MPI_Datatype dt)
{
    int i;

    for (i = 0; i < amcm_nnamed; i++) {
        if (amcm_named[i].dt == dt) {
            return &amcm_named[i];
        }
    }
    return NULL;
}

/* The signature of a datatype: n copies of basic, or mixed (ok = 0). */
typedef struct {
    int          ok;
    long         n;
    MPI_Datatype basic;
} amcm_sig_t;

static void amcm_sig_add(amcm_sig_t *acc, const amcm_sig_t *part, long times)
{
    if (!acc->ok) {
        return;
    }
    if (!part->ok) {
        acc->ok = 0;
        return;
    }
    if ((part->n == 0) || (times == 0)) {
        return;
    }
    if ((acc->n > 0) && (acc->basic != part->basic)) {
        acc->ok = 0;
        return;
    }
    acc->basic = part->basic;
    acc->n += part->n * times;
}

static amcm_dt_opaque_t amcm_dt_opaque;

void amcm_dt_set_opaque(amcm_dt_opaque_t fn)
{
    amcm_dt_opaque = fn;
}

/* 1: the envelope must not be asked about dt (dtype.h); *dense then set */
static inline int amcm_is_opaque(MPI_Datatype dt, int *dense)
{
    return (amcm_dt_opaque != NULL) && amcm_dt_opaque(dt, dense);
}

static int amcm_is_named(MPI_Datatype dt)
{
    int ni, na, nd, comb, dense;

    if (amcm_named_find(dt) != NULL) {
        return 1;
    }
    if (amcm_is_opaque(dt, &dense)) {
        return 0; /* derived: a non-blocking call dups it (MPI_Type_dup reads no arguments) */
    }
    if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        return 1; /* never free what we cannot name */
    }
    return comb == MPI_COMBINER_NAMED;
}

/* Walks the type constructors: the signature, and whether the layout is
 * dense by construction (a dup or contiguous of a dense named type). */
static void amcm_walk(MPI_Datatype dt, amcm_sig_t *sig, int *dense, int depth)
{
    int                 ni, na, nd, comb, i;
    int                *ints  = NULL;
    MPI_Aint           *aints = NULL;
    MPI_Datatype       *types = NULL;
    const amcm_named_t *nm;
    amcm_sig_t          sub;
    long                times = 0;

    sig->ok    = 1;
    sig->n     = 0;
    sig->basic = MPI_DATATYPE_NULL;
    *dense     = 0;
    if ((nm = amcm_named_find(dt)) != NULL) {
        sig->n     = 1;
        sig->basic = dt;
        *dense     = 1;
        return;
    }
    if (amcm_is_opaque(dt, dense)) {
        sig->ok = 0; /* no signature to read: data only */
        return;
    }
    if ((depth > 64) || (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)) {
        sig->ok = 0;
        return;
    }
    if (comb == MPI_COMBINER_NAMED) {
        /* a named type amcoll has no type for (pairs, long double, ...) */
        MPI_Aint lb = 0, ext = 0;
        int      size = 0;
        sig->ok    = 0;
        PMPI_Type_size(dt, &size);
        PMPI_Type_get_extent(dt, &lb, &ext);
        *dense = (lb == 0) && (ext == size);
        return;
    }
    ints  = malloc(sizeof(int) * (size_t)(ni + 1));
    aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (!ints || !aints || !types ||
        PMPI_Type_get_contents(dt, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        sig->ok = 0;
        free(ints);
        free(aints);
        free(types);
        return;
    }
    switch (comb) {
    case MPI_COMBINER_DUP:
        amcm_walk(types[0], sig, dense, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        amcm_walk(types[0], &sub, dense, depth + 1);
        amcm_sig_add(sig, &sub, ints[0]);
        break;
    case MPI_COMBINER_RESIZED:
        amcm_walk(types[0], sig, dense, depth + 1);
        *dense = 0;
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
#ifdef MPI_COMBINER_HINDEXED_BLOCK
    case MPI_COMBINER_HINDEXED_BLOCK:
#endif
        amcm_walk(types[0], &sub, dense, depth + 1);
        amcm_sig_add(sig, &sub, (long)ints[0] * ints[1]);
        *dense = 0;
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (i = 0; i < ints[0]; i++) {
            times += ints[1 + i];
        }
        amcm_walk(types[0], &sub, dense, depth + 1);
        amcm_sig_add(sig, &sub, times);
        *dense = 0;
        break;
    case MPI_COMBINER_STRUCT:
        for (i = 0; i < ints[0] && sig->ok; i++) {
            int d;
            amcm_walk(types[i], &sub, &d, depth + 1);
            amcm_sig_add(sig, &sub, ints[1 + i]);
        }
        *dense = 0;
        break;
    case MPI_COMBINER_SUBARRAY:
        times = 1;
        for (i = 0; i < ints[0]; i++) {
            times *= ints[1 + ints[0] + i];
        }
        amcm_walk(types[0], &sub, dense, depth + 1);
        amcm_sig_add(sig, &sub, times);
        *dense = 0;
        break;
    default: /* darray, Fortran parameterised types: not analysed */
        sig->ok = 0;
        *dense  = 0;
        break;
    }
    for (i = 0; i < nd; i++) {
        if (!amcm_is_named(types[i])) {
            PMPI_Type_free(&types[i]);
        }
    }
    free(ints);
    free(aints);
    free(types);
}

int amcm_dt_info(MPI_Datatype dt, amcm_dt_t *info)
{
    const amcm_named_t *nm = amcm_named_find(dt);
    amcm_sig_t          sig;
    MPI_Aint            lb = 0, tlb = 0, text = 0;
    int                 rc, dense = 0;

    if (nm != NULL) {
        info->size   = nm->size;
        info->extent = nm->size;
        info->dense  = 1;
        info->atype  = nm->atype;
        info->n      = 1;
        info->basic  = dt;
        info->named  = 1;
        return MPI_SUCCESS;
    }
    if (dt == MPI_DATATYPE_NULL) {
        return MPI_ERR_TYPE;
    }
    rc = PMPI_Type_size(dt, &info->size);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Type_get_extent(dt, &lb, &info->extent);
    }
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Type_get_true_extent(dt, &tlb, &text);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    amcm_walk(dt, &sig, &dense, 0);
    info->named = amcm_is_named(dt);
    info->dense = dense && (lb == 0) && (tlb == 0) && (info->extent == info->size) &&
                  (text == info->size);
    info->n     = sig.ok ? sig.n : 0;
    info->basic = sig.ok ? sig.basic : MPI_DATATYPE_NULL;
    info->atype = -1;
    if (sig.ok && (sig.n > 0) && ((nm = amcm_named_find(sig.basic)) != NULL)) {
        info->atype = nm->atype;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ ops */

/* User ops: MPI gives no way to read an op's function, so MPI_Op_create is
 * intercepted and remembered. Each (op, named type) pair is bound to one
 * amcoll op made with amc_op_create_data, whose data is the pair: the
 * function is called with that named type, in int-sized chunks.
 *
 * Whether a reduction on a user op is routed is decided from what every
 * rank of the call knows alike (the op was made by MPI_Op_create, the
 * datatype's signature): never from this rank's own resources. A pair that
 * cannot be bound here (no memory) is an error of this call, reported
 * through the communicator, not a fall-through to MPI that the other ranks
 * would not take (their next collective would run under another sequence
 * number). A pair is counted: the op's entry holds it until MPI_Op_free,
 * and each routed request that started with it until it is released, so
 * MPI_Op_free before the wait, which MPI allows, frees the pair only after
 * the last collective that uses it. */
struct amcm_ubind {
    struct amcm_ubind *next;
    MPI_User_function *fn;
    MPI_Datatype       basic;
    int                size;
    int                refs;
    amc_op_t           aop;
};

typedef struct {
    MPI_User_function *fn;
    int                commute;
    amcm_ubind_t      *binds; /* one per named type it was used with */
} amcm_uop_t;

static amcm_map_t amcm_uops;

static void amcm_ubind_run(const void *in, void *inout, size_t count, amc_datatype_t adt,
                           void *data)
{
    const amcm_ubind_t *b  = data;
    MPI_Datatype        dt = b->basic;
    const char         *x  = in;
    char               *y  = inout;

    (void)adt;
    while (count > 0) {
        int c = (count > (size_t)INT_MAX) ? INT_MAX : (int)count;
        b->fn((void *)x, y, &c, &dt);
        x += (size_t)c * (size_t)b->size;
        y += (size_t)c * (size_t)b->size;
        count -= (size_t)c;
    }
}

void amcm_ubind_put(amcm_ubind_t *b)
{
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        if (amcm_g.inited) {
            amc_op_free(&b->aop);
        }
        free(b);
    }
}

int amcm_op_remember(MPI_Op op, MPI_User_function *fn, int commute)
{
    amcm_uop_t *u;
    int         rc;

    if ((u = calloc(1, sizeof(*u))) == NULL) {
        return MPI_ERR_NO_MEM;
    }
    u->fn      = fn;
    u->commute = commute;
    amcm_lock();
    rc = amcm_map_put(&amcm_uops, AMCM_KEY(op), u);
    amcm_unlock();
    if (rc != 0) {
        free(u);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* An entry's bindings (each held until its last request is released) and
 * the entry. */
static void amcm_uop_drop(amcm_uop_t *u)
{
    amcm_ubind_t *b;

    while ((b = u->binds) != NULL) {
        u->binds = b->next;
        amcm_ubind_put(b); /* the entry's reference; requests may hold theirs */
    }
    free(u);
}

void amcm_op_forget(MPI_Op op)
{
    amcm_uop_t *u;

    amcm_lock();
    u = amcm_map_del(&amcm_uops, AMCM_KEY(op));
    amcm_unlock();
    if (u != NULL) {
        amcm_uop_drop(u);
    }
}

static amcm_op_resolver_t amcm_op_resolver;

void amcm_op_set_resolver(amcm_op_resolver_t fn)
{
    amcm_op_resolver = fn;
}
static int amcm_uop_map(MPI_Op op, const amcm_dt_t *dt, amc_op_t *aop, amcm_ubind_t **ref)
{
    amcm_uop_t   *u;
    amcm_ubind_t *b;
    int           why;

    MPI_User_function *fn = NULL;
    int                commute = 0, known = 0;

    if (amcm_op_resolver != NULL) {
        known = amcm_op_resolver(op, &fn, &commute);
        if (!known) {
            return AMCM_WHY_OP; /* predefined, or a Fortran or C++ op: alike on every rank */
        }
    }
    amcm_lock();
    u = amcm_map_get(&amcm_uops, AMCM_KEY(op));
    if (known && (u != NULL) && ((u->fn != fn) || (u->commute != commute))) {
        /* the handle of a freed op, now another's: the resolver saw no free */
        amcm_map_del(&amcm_uops, AMCM_KEY(op));
        amcm_uop_drop(u);
        u = NULL;
    }
    if (known && (u == NULL)) {
        /* decided alike (every rank has this op); a rank without memory for
         * it fails the call where the others run it, as with any temporary */
        if (((u = calloc(1, sizeof(*u))) == NULL) ||
            (amcm_map_put(&amcm_uops, AMCM_KEY(op), u) != 0)) {
            free(u);
            why = AMCM_FAIL + AMC_ERR_NO_MEMORY;
            goto out;
        }
        u->fn      = fn;
        u->commute = commute;
    }
    if (u == NULL) {
        why = AMCM_WHY_OP; /* not made by MPI_Op_create, on any rank */
        goto out;
    }
    /* the function sees the elements of the type it was given: with more
     * than one basic element per element amcoll's segments would split them */
    if ((dt->n != 1) || (dt->atype < 0) || (dt->atype == AMC_CHAR)) {
        why = AMCM_WHY_TYPE;
        goto out;
    }
    for (b = u->binds; (b != NULL) && (b->basic != dt->basic); b = b->next) {
    }
    if (b == NULL) {
        if ((b = calloc(1, sizeof(*b))) == NULL) {
            why = AMCM_FAIL + AMC_ERR_NO_MEMORY;
            goto out;
        }
        b->fn    = u->fn;
        b->basic = dt->basic;
        b->size  = dt->size;
        b->refs  = 1; /* the entry's */
        if (amc_op_create_data(amcm_ubind_run, b, u->commute, &b->aop) != AMC_SUCCESS) {
            free(b);
            why = AMCM_FAIL + AMC_ERR_NO_MEMORY;
            goto out;
        }
        b->next  = u->binds;
        u->binds = b;
    }
    __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED); /* the request's */
    *aop = b->aop;
    *ref = b;
    why  = AMCM_ROUTE;
out:
    amcm_unlock();
    return why;
}

enum { AMCM_OPK_ARITH, AMCM_OPK_MINMAX, AMCM_OPK_LOGIC, AMCM_OPK_BIT };

/* One of the ten predefined ops amcoll has: its op and kind. */
static inline int amcm_op_predef(MPI_Op op, amc_op_t *aop, int *kindp)
{
    int kind;

    if (op == MPI_SUM) {
        *aop = AMC_SUM, kind = AMCM_OPK_ARITH;
    } else if (op == MPI_MAX) {
        *aop = AMC_MAX, kind = AMCM_OPK_MINMAX;
    } else if (op == MPI_MIN) {
        *aop = AMC_MIN, kind = AMCM_OPK_MINMAX;
    } else if (op == MPI_PROD) {
        *aop = AMC_PROD, kind = AMCM_OPK_ARITH;
    } else if (op == MPI_LAND) {
        *aop = AMC_LAND, kind = AMCM_OPK_LOGIC;
    } else if (op == MPI_LOR) {
        *aop = AMC_LOR, kind = AMCM_OPK_LOGIC;
    } else if (op == MPI_LXOR) {
        *aop = AMC_LXOR, kind = AMCM_OPK_LOGIC;
    } else if (op == MPI_BAND) {
        *aop = AMC_BAND, kind = AMCM_OPK_BIT;
    } else if (op == MPI_BOR) {
        *aop = AMC_BOR, kind = AMCM_OPK_BIT;
    } else if (op == MPI_BXOR) {
        *aop = AMC_BXOR, kind = AMCM_OPK_BIT;
    } else {
        return 0;
    }
    *kindp = kind;
    return 1;
}

/* MPI-3.1 5.9.2: which kinds of op a class of types takes. */
static inline int amcm_op_allows(int kind, int cls)
{
    return (cls == AMCM_CL_INT) || ((cls == AMCM_CL_FLOAT) && (kind <= AMCM_OPK_MINMAX)) ||
           ((cls == AMCM_CL_BYTE) && (kind == AMCM_OPK_BIT));
}

int amcm_op_fast(MPI_Op op, const amcm_named_t *nm, amc_op_t *aop)
{
    int kind;

    return amcm_op_predef(op, aop, &kind) && (nm->atype >= 0) && amcm_op_allows(kind, nm->cls);
}

int amcm_op_map(MPI_Op op, const amcm_dt_t *dt, amc_op_t *aop, amcm_ubind_t **ref)
{
    const amcm_named_t *nm;
    int                 kind;

    if (!amcm_op_predef(op, aop, &kind)) {
        if ((op == MPI_MAXLOC) || (op == MPI_MINLOC) || (op == MPI_REPLACE) ||
            (op == MPI_NO_OP) || (op == MPI_OP_NULL)) {
            return AMCM_WHY_OP;
        }
        return amcm_uop_map(op, dt, aop, ref);
    }
    if ((dt->atype < 0) || (dt->n <= 0) || ((nm = amcm_named_find(dt->basic)) == NULL)) {
        return AMCM_WHY_TYPE;
    }
    /* else MPI itself reports the invalid pair */
    return amcm_op_allows(kind, nm->cls) ? AMCM_ROUTE : AMCM_WHY_OP;
}
