/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A table of pointers indexed by rank, filled on first contact: per-peer
 * state whose memory follows the peers a rank talks to, not the size of the
 * job (doc/design.md, "Scale"). Ranks are grouped in chunks of
 * AMC_SPARSE_CHUNK slots, allocated when a slot in them is first set; the
 * top level is one pointer per chunk (2 KiB at 65,536 ranks). Lookups take
 * no lock, from any thread; an insert that races another one for the same
 * slot loses and gets the winner's value (the caller frees its own).
 */
#ifndef AMC_SPARSE_H
#define AMC_SPARSE_H

#include "base/status.h"

#include <stdlib.h>

#define AMC_SPARSE_SHIFT 8
#define AMC_SPARSE_CHUNK (1 << AMC_SPARSE_SHIFT)

typedef struct amc_sparse {
    void ***chunks;    /* [nchunks]; NULL: no slot of that chunk set yet */
    int     size;
    int     nchunks;
    unsigned nalloc;   /* chunks allocated (atomic): memory accounting */
} amc_sparse_t;

static inline int amc_sparse_init(amc_sparse_t *sp, int size)
{
    sp->size    = size;
    sp->nalloc  = 0;
    sp->nchunks = (size + AMC_SPARSE_CHUNK - 1) >> AMC_SPARSE_SHIFT;
    sp->chunks  = calloc((sp->nchunks > 0) ? (size_t)sp->nchunks : 1, sizeof(*sp->chunks));
    return (sp->chunks != NULL) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
}

/* Frees the table, not what its slots point to (the owner keeps a list). */
static inline void amc_sparse_cleanup(amc_sparse_t *sp)
{
    int i;

    for (i = 0; (sp->chunks != NULL) && (i < sp->nchunks); i++) {
        free(sp->chunks[i]);
    }
    free(sp->chunks);
    sp->chunks = NULL;
}

static inline void *amc_sparse_get(const amc_sparse_t *sp, int i)
{
    void **chunk;

    if ((i < 0) || (i >= sp->size)) {
        return NULL;
    }
    chunk = __atomic_load_n(&sp->chunks[i >> AMC_SPARSE_SHIFT], __ATOMIC_ACQUIRE);
    if (chunk == NULL) {
        return NULL;
    }
    return __atomic_load_n(&chunk[i & (AMC_SPARSE_CHUNK - 1)], __ATOMIC_ACQUIRE);
}

/* Sets slot i to value unless it is set: returns what the slot holds after
 * the call (value, or the earlier one), NULL when out of memory or range. */
static inline void *amc_sparse_insert(amc_sparse_t *sp, int i, void *value)
{
    void **chunk, **fresh, *expected = NULL;

    if ((i < 0) || (i >= sp->size)) {
        return NULL;
    }
    chunk = __atomic_load_n(&sp->chunks[i >> AMC_SPARSE_SHIFT], __ATOMIC_ACQUIRE);
    if (chunk == NULL) {
        fresh = calloc(AMC_SPARSE_CHUNK, sizeof(*fresh));
        if (fresh == NULL) {
            return NULL;
        }
        chunk = NULL;
        if (__atomic_compare_exchange_n(&sp->chunks[i >> AMC_SPARSE_SHIFT], &chunk, fresh, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            chunk = fresh;
            __atomic_add_fetch(&sp->nalloc, 1, __ATOMIC_RELAXED);
        } else {
            free(fresh); /* another thread made it: chunk is theirs */
        }
    }
    if (__atomic_compare_exchange_n(&chunk[i & (AMC_SPARSE_CHUNK - 1)], &expected, value, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return value;
    }
    return expected;
}

/* Bytes the table itself holds. */
static inline size_t amc_sparse_bytes(const amc_sparse_t *sp)
{
    return (size_t)sp->nchunks * sizeof(void **) +
           (size_t)__atomic_load_n(&sp->nalloc, __ATOMIC_RELAXED) * AMC_SPARSE_CHUNK *
           sizeof(void *);
}

#endif
