/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: what a datatype is to amcoll (size, density, signature),
 * and which amcoll op an MPI op is on it.
 */
#ifndef AMCM_DTYPE_H
#define AMCM_DTYPE_H

#include "mpi/map.h"
#include "mpi/state.h"

#pragma GCC visibility push(hidden)

/* A user op bound for one named type (dtype.c): counted, see there. */
typedef struct amcm_ubind amcm_ubind_t;
void amcm_ubind_put(amcm_ubind_t *b);


typedef struct {
    int          size;     /* MPI_Type_size */
    MPI_Aint     extent;
    int          dense;    /* count elements are count * size contiguous bytes at buf */
    int          atype;    /* amcoll type of the signature's basic element, -1 if none */
    long         n;        /* basic elements per datatype element */
    MPI_Datatype basic;    /* the named MPI type of those elements */
    int          named;    /* predefined: needs no dup to outlive the call */
} amcm_dt_t;
/* A predefined type: its amcoll type (-1: data only), what ops it takes, its size. */
typedef struct {
    MPI_Datatype dt;
    int          atype, cls, size;
} amcm_named_t;
#define AMCM_NAMED_HASH 64 /* power of two */
extern const amcm_named_t *amcm_named_tab[AMCM_NAMED_HASH]; /* direct-mapped, by handle */
const amcm_named_t *amcm_named_search(MPI_Datatype dt); /* past the table: a search */
static inline unsigned amcm_named_slot(MPI_Datatype dt)
{
    return (unsigned)((AMCM_KEY(dt) * 0x9e3779b97f4a7c15ULL) >> 58) & (AMCM_NAMED_HASH - 1);
}
/* NULL: not one of them. Inline: every fast path asks it once or twice. */
static inline const amcm_named_t *amcm_named_find(MPI_Datatype dt)
{
    const amcm_named_t *e = amcm_named_tab[amcm_named_slot(dt)];

    return ((e != NULL) && (e->dt == dt)) ? e : amcm_named_search(dt);
}
int  amcm_op_fast(MPI_Op op, const amcm_named_t *nm, amc_op_t *aop); /* 1: a predefined op on nm */
int  amcm_dt_info(MPI_Datatype dt, amcm_dt_t *info); /* MPI error code */
/* AMCM_ROUTE (*ref: a user op's binding, held for the request), a reason not
 * to route, or AMCM_FAIL + an amcoll code */
int  amcm_op_map(MPI_Op op, const amcm_dt_t *dt, amc_op_t *aop, amcm_ubind_t **ref);
void amcm_op_forget(MPI_Op op);
void amcm_dtype_init(void);
/* Where the ops come from when no MPI_Op_create hook saw them (the Open MPI
 * component reads the op itself): 1 and its C function and commutativity
 * for a user's C op, 0 for any other; the same answer on every rank. */
typedef int (*amcm_op_resolver_t)(MPI_Op op, MPI_User_function **fn, int *commute);
void amcm_op_set_resolver(amcm_op_resolver_t fn);
/* A user op MPI_Op_create made (the library's hook): remembered so that
 * reductions with it can be routed; MPI error code. */
int  amcm_op_remember(MPI_Op op, MPI_User_function *fn, int commute);
/* Which types MPI_Type_get_envelope cannot read (the Open MPI component:
 * types Open MPI makes inside itself record no constructor arguments, and
 * asking for them calls the error handler, MPI_ERRORS_ARE_FATAL on
 * MPI_COMM_WORLD): 1 and whether count elements of such a type are count *
 * size contiguous bytes, read from the MPI's own datatype object; 0 for a
 * type the envelope reads. Such a type is data only (no signature: its
 * reductions stay with MPI), alike on every rank, since the same internal
 * call makes the same kind of type everywhere. None set (the PMPI
 * library): every type is read through the envelope. */
typedef int (*amcm_dt_opaque_t)(MPI_Datatype dt, int *dense);
void amcm_dt_set_opaque(amcm_dt_opaque_t fn);

#pragma GCC visibility pop

#endif /* AMCM_DTYPE_H */
