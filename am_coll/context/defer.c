/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/defer.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

void amc_defer_init(amc_defer_queue_t *q, const int *lock_live)
{
    amc_spinlock_init(&q->lock, lock_live);
    q->head     = NULL;
    q->tail     = &q->head;
    q->closed   = 0;
    q->reserved = 0;
    q->any_reserved = 0;
}

static int amc_defer_push(amc_defer_queue_t *q, amc_defer_op_t *op)
{
    int closed;

    op->next = NULL;
    amc_spin_lock(&q->lock);
    closed = q->closed;
    if (!closed) {
        if (q->head == NULL) {
            __atomic_store_n(&q->head, op, __ATOMIC_RELEASE); /* read by pending() unlocked */
        } else {
            *q->tail = op;
        }
        q->tail = &op->next;
    }
    amc_spin_unlock(&q->lock);
    return closed ? AMC_ERR_TRANSPORT : AMC_SUCCESS;
}

int amc_defer_fetch(amc_defer_queue_t *q, amc_defer_op_t *op, void *desc, void *buf,
                    size_t len, amc_completion_t *comp)
{
    op->kind = AMC_DEFER_FETCH;
    op->heap = 0;
    op->desc = desc;
    op->buf  = buf;
    op->len  = len;
    op->comp = comp;
    return amc_defer_push(q, op);
}

int amc_defer_call(amc_defer_queue_t *q, amc_defer_op_t *op, amc_defer_call_fn_t call)
{
    op->kind = AMC_DEFER_CALL;
    op->heap = 0;
    op->desc = NULL;
    op->comp = NULL;
    op->call = call;
    return amc_defer_push(q, op);
}

int amc_defer_release(amc_defer_queue_t *q, void *desc)
{
    amc_defer_op_t *op = malloc(sizeof(*op));
    int             status = AMC_SUCCESS;

    if (op == NULL) {
        /* no memory: a slot of the reserve, else the caller holds desc */
        amc_spin_lock(&q->lock);
        if (q->closed) {
            desc = NULL;
        } else if (q->reserved < AMC_DEFER_RESERVE) {
            q->reserve[q->reserved++] = desc;
            __atomic_store_n(&q->any_reserved, 1, __ATOMIC_RELEASE);
        } else {
            status = AMC_ERR_NO_MEMORY;
        }
        amc_spin_unlock(&q->lock);
        return status;
    }
    op->kind = AMC_DEFER_RELEASE;
    op->heap = 1;
    op->desc = desc;
    op->comp = NULL;
    if (amc_defer_push(q, op) != AMC_SUCCESS) {
        free(op); /* the transport and its descriptors are gone */
    }
    return AMC_SUCCESS;
}

static amc_defer_op_t *amc_defer_take_all(amc_defer_queue_t *q, void **reserve,
                                          unsigned *reserved)
{
    amc_defer_op_t *ops;

    amc_spin_lock(&q->lock);
    ops = q->head;
    __atomic_store_n(&q->head, NULL, __ATOMIC_RELEASE);
    q->tail = &q->head;
    *reserved = q->reserved;
    memcpy(reserve, q->reserve, q->reserved * sizeof(*reserve));
    q->reserved = 0;
    __atomic_store_n(&q->any_reserved, 0, __ATOMIC_RELEASE);
    amc_spin_unlock(&q->lock);
    return ops;
}

void amc_defer_run(amc_defer_queue_t *q, amc_transport_t *tp)
{
    amc_defer_op_t *op, *next;
    void           *reserve[AMC_DEFER_RESERVE];
    unsigned        reserved, i;
    int             status, heap;

    /* a completion run here may queue more: loop until the queue stays empty */
    while (((op = amc_defer_take_all(q, reserve, &reserved)) != NULL) || (reserved > 0)) {
        for (i = 0; i < reserved; i++) {
            tp->ops->release(tp, reserve[i]);
        }
        for (; op != NULL; op = next) {
            /* a fetch's op may be reused once its comp ran */
            next = op->next;
            heap = op->heap;
            if (op->kind == AMC_DEFER_RELEASE) {
                tp->ops->release(tp, op->desc);
            } else if (op->kind == AMC_DEFER_CALL) {
                op->call(op, tp); /* may free op: next and heap were read */
            } else {
                status = tp->ops->fetch(tp, op->desc, op->buf, op->len, op->comp);
                if (status != AMC_INPROGRESS) {
                    op->comp->fn(op->comp, status);
                }
            }
            if (heap) {
                free(op);
            }
        }
    }
}

void amc_defer_close(amc_defer_queue_t *q)
{
    amc_defer_op_t *op, *next;

    amc_spin_lock(&q->lock);
    __atomic_store_n(&q->closed, 1, __ATOMIC_RELEASE);
    op        = q->head;
    __atomic_store_n(&q->head, NULL, __ATOMIC_RELEASE);
    q->tail     = &q->head;
    q->reserved = 0;
    amc_spin_unlock(&q->lock);
    /* the instances a fetch would complete are torn down with their
     * communicators; running their completions now would send */
    for (; op != NULL; op = next) {
        next = op->next;
        if (op->kind == AMC_DEFER_CALL) {
            op->call(op, NULL); /* its owner frees it */
        } else if (op->heap) {
            free(op);
        }
    }
}
