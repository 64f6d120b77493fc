/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing a mailbox ring (transport/shm.c sends, transport/shm_pull.c
 * resends a pull's data through it): the copy into cells, the marks that
 * keep a later lap from taking payload for a control word, and the
 * publication by the control word's release store, last.
 */
#ifndef AMC_SHM_RING_H
#define AMC_SHM_RING_H

#include "transport/shm_layout.h"

#include <string.h>

static inline size_t amc_shm_cells(size_t hdr_len, size_t len)
{
    return (sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len) + len + AMC_SHM_CELL - 1) / AMC_SHM_CELL;
}

/* Copies at most 32 bytes into a cell without a call: loads first, then
 * stores that may overlap; only [dst, dst + n) is written and only
 * [src, src + n) read. */
static inline void amc_shm_copy_short(uint8_t *dst, const void *src, size_t n)
{
    const uint8_t *s = src;
    uint64_t       a, b, c, d;
    uint32_t       x, y;
    uint16_t       h, k;

    if (n >= 16) {
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 16, 8);
        memcpy(&d, s + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + 8, &b, 8);
        memcpy(dst + n - 16, &c, 8);
        memcpy(dst + n - 8, &d, 8);
    } else if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + n - 4, &y, 4);
    } else if (n >= 2) {
        memcpy(&h, s, 2);
        memcpy(&k, s + n - 2, 2);
        memcpy(dst, &h, 2);
        memcpy(dst + n - 2, &k, 2);
    } else if (n == 1) {
        dst[0] = s[0];
    }
}

static inline void amc_shm_store_word(uint8_t *dst, const uint8_t *src)
{
    uint64_t w;

    memcpy(&w, src, 8);
    /* relaxed atomic: a plain 8-byte store that the compiler may not merge
     * with its neighbours into a vector store across two lines */
    __atomic_store_n((uint64_t *)(void *)dst, w, __ATOMIC_RELAXED);
}

/* Copies n bytes to dst, 8-byte aligned in a ring, in aligned 8-byte
 * stores, none across two lines. glibc's memcpy stores with 32- and 64-byte
 * vectors from wherever dst starts, so most of them straddle two cells, and
 * a store that straddles two lines the reader holds stalls the writer: perf
 * put 88% of memcpy's samples on one such store, and a two-cell allreduce
 * (40 B) took 0.58-0.67 us back to back against 0.43-0.51 with this copy;
 * bcast 1 KiB 1.30 against 1.13. Four words a round: a loop of one word a
 * round spent ~7 instructions a word (callgrind: 74 of a 64-byte gatherv's
 * 191 in amc_shm_put). */
static inline void amc_shm_copy_words(uint8_t *dst, const void *src, size_t n)
{
    const uint8_t *s = src;
    size_t         i = 0;

    for (; i + 32 <= n; i += 32) {
        amc_shm_store_word(dst + i, s + i);
        amc_shm_store_word(dst + i + 8, s + i + 8);
        amc_shm_store_word(dst + i + 16, s + i + 16);
        amc_shm_store_word(dst + i + 24, s + i + 24);
    }
    for (; i + 8 <= n; i += 8) {
        amc_shm_store_word(dst + i, s + i);
    }
    if (i < n) { /* a header of 36 or 44 bytes, data of odd length */
        amc_shm_copy_short(dst + i, s + i, n - i);
    }
}

static inline int amc_shm_stale_test(const amc_shm_out_t *out, size_t cell)
{
    return (int)((out->stale[cell / 64] >> (cell % 64)) & 1u);
}

static inline void amc_shm_stale_set(amc_shm_out_t *out, size_t cell, int on)
{
    if (on) {
        out->stale[cell / 64] |= (uint64_t)1 << (cell % 64);
    } else {
        out->stale[cell / 64] &= ~((uint64_t)1 << (cell % 64));
    }
}

/* Marks where a message of cells cells at off leaves payload in first
 * words, and clears the first word of the cell after it, where the reader
 * looks next, if an earlier message left payload there: a reader must never
 * take payload for a control word. Done by the writer, before the message's
 * control word (stores become visible in order), so the reader only ever
 * reads the ring: a reader that cleared the cells it read took every line
 * of a long message from the writer's cache and gave it back on the next
 * lap (at 1 KiB, 16 lines each way). The room for the next cell was
 * checked. */
static inline void amc_shm_mark(amc_shm_out_t *out, size_t off, size_t cells)
{
    size_t next = (off + cells) % AMC_SHM_NCELLS, i;

    amc_shm_stale_set(out, off, 0);
    for (i = 1; i < cells; i++) {
        amc_shm_stale_set(out, off + i, 1);
    }
    if (amc_shm_stale_test(out, next)) {
        __atomic_store_n((uint64_t *)(out->ring->cells + next * AMC_SHM_CELL), 0,
                         __ATOMIC_RELAXED);
        amc_shm_stale_set(out, next, 0);
    }
}

/* Reads the receiver's tail into tail_seen: 0 if it is one no honest
 * receiver stores (behind what it read before, beyond what was written),
 * and then the ring takes nothing more (amc_shm_drain drops its sends). */
static inline int amc_shm_tail_read(amc_shm_out_t *out)
{
    uint64_t tail = __atomic_load_n(&out->ring->tail, __ATOMIC_ACQUIRE);

    if ((tail < out->tail_seen) || (tail > out->head) || out->bad_tail) {
        out->bad_tail = 1;
        return 0;
    }
    out->tail_seen = tail;
    return 1;
}

static inline uint64_t amc_shm_ctl(uint64_t position, size_t hdr_len, size_t len)
{
    return AMC_SHM_CTL_VALID | ((uint64_t)(hdr_len & 0xff) << 48) |
           ((uint64_t)(len & 0xffff) << 32) | (uint32_t)position;
}

/* Copies one message into out's ring if it has room: 1, else 0; flags are
 * the control word's (0 or AMC_SHM_CTL_PULL). Lock held. */
static inline int amc_shm_put(amc_shm_out_t *out, const void *hdr, size_t hdr_len, const void *data,
                       size_t len, uint64_t flags)
{
    uint64_t  head = out->head;
    size_t    need = amc_shm_cells(hdr_len, len);
    size_t    off  = (size_t)(head % AMC_SHM_NCELLS);
    size_t    skip = 0, at = off;
    uint8_t  *cell;

    if (off + need > AMC_SHM_NCELLS) {
        skip = AMC_SHM_NCELLS - off;
        at   = 0;
    }
    /* one cell more than the message: the one after it may be cleared */
    if (head + skip + need + 1 - out->tail_seen > AMC_SHM_NCELLS) {
        if (!amc_shm_tail_read(out)) {
            return 0;
        }
        if (head + skip + need + 1 - out->tail_seen > AMC_SHM_NCELLS) {
            return 0;
        }
    }
    cell = out->ring->cells + at * AMC_SHM_CELL;
    if (hdr_len <= 32) {
        amc_shm_copy_short(cell + sizeof(uint64_t), hdr, hdr_len); /* at a cell's start */
    } else {
        amc_shm_copy_words(cell + sizeof(uint64_t), hdr, hdr_len);
    }
    if (len > 0) {
        amc_shm_copy_words(cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), data, len);
    }
    amc_shm_mark(out, at, need);
    /* last: a sender that dies before it leaves nothing readable */
    __atomic_store_n((uint64_t *)cell, amc_shm_ctl(head + skip, hdr_len, len) | flags,
                     __ATOMIC_RELEASE);
    if (skip > 0) {
        /* the rest of the ring unused: published after the message at 0,
         * so a reader that follows it finds the message there */
        amc_shm_stale_set(out, off, 0);
        __atomic_store_n((uint64_t *)(out->ring->cells + off * AMC_SHM_CELL),
                         AMC_SHM_CTL_VALID | AMC_SHM_CTL_SKIP | (uint32_t)head,
                         __ATOMIC_RELEASE);
    }
    out->head = head + skip + need;
    return 1;
}

#endif
