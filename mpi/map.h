/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: handle -> pointer maps (open addressing), for
 * communicators, user ops and requests. Includes no other module.
 */
#ifndef AMCM_MAP_H
#define AMCM_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#pragma GCC visibility push(hidden)

typedef struct {
    uint64_t *keys;
    void    **vals;
    size_t    cap, n;
} amcm_map_t;
int   amcm_map_put(amcm_map_t *m, uint64_t key, void *val);
void *amcm_map_get(const amcm_map_t *m, uint64_t key);
void *amcm_map_del(amcm_map_t *m, uint64_t key);
void  amcm_map_clear(amcm_map_t *m);
static inline uint64_t amcm_key(const void *handle, size_t size)
{
    uint64_t k = 0;
    uint32_t k32;
    const unsigned char *p = handle;
    size_t i;
    /* handles are pointers (Open MPI) or ints (MPICH): one load, not a loop */
    if (size == sizeof(k)) {
        memcpy(&k, handle, sizeof(k));
        return k;
    }
    if (size == sizeof(k32)) {
        memcpy(&k32, handle, sizeof(k32));
        return k32;
    }
    for (i = 0; (i < size) && (i < sizeof(k)); i++) {
        k |= (uint64_t)p[i] << (8 * i);
    }
    return k;
}
#define AMCM_KEY(h) amcm_key(&(h), sizeof(h))

#pragma GCC visibility pop

#endif /* AMCM_MAP_H */
