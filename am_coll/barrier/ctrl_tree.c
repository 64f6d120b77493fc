/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rooted collectives and the scans past N=2 on the barrier's rounds
 * (am_coll/barrier/ctrl_tree.h says the patterns). The machine
 * (ctrl_coll.c) and the call within it (rounds_now.c) both move the data
 * with these functions, so either leaves work as the other would.
 */
#include "am_coll/barrier/ctrl_tree.h"
#include "am_coll/barrier/ctrl_blocks.h"

#include <string.h>

size_t amc_ctrl_tree_work_len(const amc_ctrl_tree_t *t)
{
    switch (t->coll) {
    case AMC_COLL_GATHER:
    case AMC_COLL_REDUCE:
    case AMC_COLL_SCATTER: return (size_t)t->size * t->bytes;
    case AMC_COLL_EXSCAN:  return 2 * t->bytes;
    default:               return t->bytes;
    }
}

void amc_ctrl_tree_load(const amc_ctrl_tree_t *t, const amc_coll_args_t *args, uint8_t *work)
{
    const uint8_t *send = args->sendbuf;
    const uint8_t *recv = args->recvbuf;

    switch (t->coll) {
    case AMC_COLL_BCAST:
        if (t->rank == t->root) {
            memcpy(work, recv, t->bytes); /* the one buffer */
        }
        return;
    case AMC_COLL_SCATTER:
        if (t->rank == t->root) {
            amc_ctrl_blocks_bruck_load(AMC_COLL_ALLTOALL, t->rank, t->size, t->bytes, send, work);
        }
        return;
    case AMC_COLL_GATHER:
        /* in place (the root's): its block in its place in recvbuf */
        memcpy(work, (send != NULL) ? send : recv + (size_t)t->rank * t->bytes, t->bytes);
        return;
    default: /* reduce, scan, exscan: the operand (in place: in recvbuf) */
        memcpy(work, (send != NULL) ? send : recv, t->bytes);
        return;
    }
}

const uint8_t *amc_ctrl_tree_out(const amc_ctrl_tree_t *t, int round, uint8_t *work,
                                 uint8_t *msg)
{
    size_t step = (size_t)2 << round, k, end;
    uint8_t *m = msg;

    if (t->coll != AMC_COLL_SCATTER) {
        return work; /* the data, the blocks gathered, the partial result: at its start */
    }
    /* the blocks at 2^r + j 2^(r+1) */
    end = (size_t)(t->size - amc_ctrl_tree_from_root(t));
    for (k = step / 2; k < end; k += step) {
        memcpy(m, work + k * t->bytes, t->bytes);
        m += t->bytes;
    }
    return msg;
}

/* Aligned for any datatype's kernel: the mailbox's data is aligned for 8
 * bytes only. */
typedef union {
    uint8_t     b[AMC_CTRL_PAY_MAX];
    long double align;
} amc_ctrl_tree_buf_t;

void amc_ctrl_tree_in(const amc_ctrl_tree_t *t, int round, uint8_t *work, const void *msg,
                      amc_ctrl_kernel_t kernel, size_t count)
{
    amc_ctrl_tree_buf_t theirs;
    size_t              len = amc_ctrl_tree_len(t, round, 0), step = (size_t)2 << round, k;
    const uint8_t      *m   = msg;

    if (len == 0) {
        return;
    }
    switch (t->coll) {
    case AMC_COLL_BCAST:
        memcpy(work, msg, len);
        return;
    case AMC_COLL_SCATTER:
        for (k = 0; m < (const uint8_t *)msg + len; k += step) {
            memcpy(work + k * t->bytes, m, t->bytes);
            m += t->bytes;
        }
        return;
    case AMC_COLL_GATHER:
    case AMC_COLL_REDUCE:
        memcpy(work + ((size_t)t->bytes << round), msg, len);
        return;
    default: /* the lower ranks' partial result, on the left */
        memcpy(theirs.b, msg, len);
        if (t->coll == AMC_COLL_EXSCAN) {
            if (round == 0) {
                memcpy(work + len, theirs.b, len); /* the first that came */
            } else {
                kernel(theirs.b, work + len, count);
            }
        }
        kernel(theirs.b, work, count);
        return;
    }
}

void amc_ctrl_tree_result(const amc_ctrl_tree_t *t, const uint8_t *work, void *recvbuf,
                          amc_ctrl_kernel_t kernel, size_t count)
{
    switch (t->coll) {
    case AMC_COLL_BCAST:
        if (t->rank != t->root) {
            memcpy(recvbuf, work, t->bytes);
        }
        return;
    case AMC_COLL_SCATTER:
        if (recvbuf != NULL) { /* else the root's, in place: its block stays in sendbuf */
            memcpy(recvbuf, work, t->bytes);
        }
        return;
    case AMC_COLL_GATHER:
    case AMC_COLL_REDUCE:
        if (t->rank == t->root) {
            /* position k holds root - k's: Bruck's layout at the root */
            amc_ctrl_blocks_bruck_result((t->coll == AMC_COLL_REDUCE) ? AMC_COLL_ALLREDUCE
                                                                    : AMC_COLL_ALLGATHER,
                                       t->rank, t->size, t->bytes, work, recvbuf, kernel, count);
        }
        return;
    case AMC_COLL_EXSCAN:
        if (t->rank > 0) { /* rank 0's is undefined: its buffer is not written */
            memcpy(recvbuf, work + t->bytes, t->bytes);
        }
        return;
    default: /* scan */
        memcpy(recvbuf, work, t->bytes);
        return;
    }
}
