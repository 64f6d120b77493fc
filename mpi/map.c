/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: handle -> pointer maps.
 */
#include "mpi/map.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ handle maps */

static uint64_t amcm_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static int amcm_map_grow(amcm_map_t *m)
{
    amcm_map_t big = {0};
    size_t     i;

    big.cap  = m->cap ? 2 * m->cap : 64;
    big.keys = calloc(big.cap, sizeof(*big.keys));
    big.vals = calloc(big.cap, sizeof(*big.vals));
    if (!big.keys || !big.vals) {
        free(big.keys);
        free(big.vals);
        return -1;
    }
    for (i = 0; i < m->cap; i++) {
        if (m->vals[i] != NULL) {
            amcm_map_put(&big, m->keys[i], m->vals[i]);
        }
    }
    free(m->keys);
    free(m->vals);
    *m = big;
    return 0;
}

int amcm_map_put(amcm_map_t *m, uint64_t key, void *val)
{
    size_t i;

    if ((2 * (m->n + 1) > m->cap) && (amcm_map_grow(m) != 0)) {
        return -1;
    }
    for (i = amcm_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] == NULL) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->n++;
            return 0;
        }
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
    }
}

void *amcm_map_get(const amcm_map_t *m, uint64_t key)
{
    size_t i;

    if (m->n == 0) {
        return NULL;
    }
    for (i = amcm_hash(key) & (m->cap - 1); m->vals[i] != NULL; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            return m->vals[i];
        }
    }
    return NULL;
}

/* Linear probing with backward-shift deletion: no tombstones. */
void *amcm_map_del(amcm_map_t *m, uint64_t key)
{
    size_t i, j, home;
    void  *val;

    if (m->n == 0) {
        return NULL;
    }
    for (i = amcm_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] == NULL) {
            return NULL;
        }
        if (m->keys[i] == key) {
            break;
        }
    }
    val        = m->vals[i];
    m->vals[i] = NULL;
    m->n--;
    for (j = (i + 1) & (m->cap - 1); m->vals[j] != NULL; j = (j + 1) & (m->cap - 1)) {
        home = amcm_hash(m->keys[j]) & (m->cap - 1);
        /* move j into the hole at i unless its home lies cyclically in (i, j] */
        if ((i <= j) ? ((home <= i) || (home > j)) : ((home <= i) && (home > j))) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->vals[j] = NULL;
            i          = j;
        }
    }
    return val;
}

void amcm_map_clear(amcm_map_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}
