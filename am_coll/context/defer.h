/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport calls decided on under a lock, made after it is released.
 *
 * With AMC_THREAD_MULTIPLE or the progress thread, UCX takes its worker lock
 * around progress, so a handler runs with the worker lock held and then takes
 * a control structure's lock. An application thread that called UCX while
 * holding that control lock would take the two in the other order: a
 * deadlock. So nothing calls the transport under an amcoll lock. A handler
 * that must pull rendezvous data (or give a descriptor back) queues the call
 * here, and whoever releases the lock runs the queue: the patent's rule (no
 * blocking communication under the short lock), applied to every thread.
 */
#ifndef AMC_DEFER_H
#define AMC_DEFER_H

#include "base/spinlock.h"
#include "transport/transport.h"

#include <stddef.h>

typedef enum {
    AMC_DEFER_FETCH,    /* pull data into buf; comp runs when it is there */
    AMC_DEFER_RELEASE,  /* drop a message's data unread */
    AMC_DEFER_CALL      /* call(op, tp): sends of the caller's own making */
} amc_defer_kind_t;

typedef struct amc_defer_op amc_defer_op_t;

/* AMC_DEFER_CALL: makes the transport calls with tp, or with tp NULL only
 * frees what op belongs to (the queue was closed: no transport is left). */
typedef void (*amc_defer_call_fn_t)(amc_defer_op_t *op, amc_transport_t *tp);

struct amc_defer_op {
    struct amc_defer_op *next;
    amc_defer_kind_t     kind;
    int                  heap;   /* allocated by the queue, freed after it ran */
    void                *desc;
    void                *buf;
    size_t               len;
    amc_completion_t    *comp;
    amc_defer_call_fn_t  call;
};

/* Releases queued without memory for a node (calling the transport under the
 * caller's lock instead could deadlock). */
#define AMC_DEFER_RESERVE 64

typedef struct amc_defer_queue {
    amc_spinlock_t   lock;      /* a leaf: nothing else is taken under it */
    amc_defer_op_t  *head;
    amc_defer_op_t **tail;
    int              closed;    /* the transport is gone: drop, do not call */
    unsigned         reserved;
    int              any_reserved;
    void            *reserve[AMC_DEFER_RESERVE];
} amc_defer_queue_t;

void amc_defer_init(amc_defer_queue_t *q, const int *lock_live);

/* op is the caller's storage, alive until comp runs. AMC_ERR_TRANSPORT when
 * no transport call is left to make (closed): then comp never runs. */
int  amc_defer_fetch(amc_defer_queue_t *q, amc_defer_op_t *op, void *desc, void *buf,
                     size_t len, amc_completion_t *comp);

/* op is the caller's storage; call runs exactly once, op may be freed in it.
 * AMC_ERR_TRANSPORT when closed: then call never runs. */
int  amc_defer_call(amc_defer_queue_t *q, amc_defer_op_t *op, amc_defer_call_fn_t call);

/* AMC_ERR_NO_MEMORY when neither a node nor a reserve slot is left; the
 * caller then still holds desc. */
int  amc_defer_release(amc_defer_queue_t *q, void *desc);

static inline int amc_defer_pending(const amc_defer_queue_t *q)
{
    return (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE) != NULL) ||
           __atomic_load_n(&q->any_reserved, __ATOMIC_ACQUIRE);
}

/* Makes the queued calls; with no amcoll lock held. */
void amc_defer_run(amc_defer_queue_t *q, amc_transport_t *tp);

/* From now on nothing reaches the transport; queued calls are dropped. */
void amc_defer_close(amc_defer_queue_t *q);

#endif
