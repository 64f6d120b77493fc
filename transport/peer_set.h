/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The set of transport ranks known dead. Detectors on any thread mark (a PMIx
 * event on PMIx's thread, a UCX error callback in progress, a pid check in
 * an idle loop); a mark is never undone. Readers poll `count`, one word that
 * changes only when a rank dies, and test the bits only when it moved.
 */
#ifndef AMC_PEER_SET_H
#define AMC_PEER_SET_H

#include "base/status.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct amc_peer_set {
    uint64_t *bits;    /* size bits; NULL: a job of one (nobody can die) */
    int       size;
    unsigned  count;   /* ranks marked so far (atomic) */
} amc_peer_set_t;

static inline int amc_peer_set_init(amc_peer_set_t *set, int size)
{
    set->size  = size;
    set->count = 0;
    set->bits  = calloc(((size_t)size + 63) / 64, sizeof(*set->bits));
    return (set->bits != NULL) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
}

static inline void amc_peer_set_cleanup(amc_peer_set_t *set)
{
    free(set->bits);
    set->bits = NULL;
}

/* Returns 1 if rank was not marked before (the caller that logs it). */
static inline int amc_peer_set_mark(amc_peer_set_t *set, int rank)
{
    uint64_t bit = (uint64_t)1 << (rank % 64);

    if ((set->bits == NULL) || (rank < 0) || (rank >= set->size)) {
        return 0;
    }
    if (__atomic_fetch_or(&set->bits[rank / 64], bit, __ATOMIC_ACQ_REL) & bit) {
        return 0;
    }
    /* after the bit: whoever sees the new count finds the bit set */
    __atomic_add_fetch(&set->count, 1, __ATOMIC_RELEASE);
    return 1;
}

static inline int amc_peer_set_test(const amc_peer_set_t *set, int rank)
{
    if ((set->bits == NULL) || (rank < 0) || (rank >= set->size)) {
        return 0;
    }
    return (int)((__atomic_load_n(&set->bits[rank / 64], __ATOMIC_ACQUIRE) >> (rank % 64)) & 1);
}

static inline unsigned amc_peer_set_count(const amc_peer_set_t *set)
{
    return __atomic_load_n(&set->count, __ATOMIC_ACQUIRE);
}

#endif
