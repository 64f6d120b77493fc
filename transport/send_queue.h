/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sends that wait in the transport, in order: for a connection that only
 * the progress path may make (transport/ucx.c), for room in a full mailbox
 * (transport/shm.c). The caller's header and data stay valid until the
 * send's completion runs, as for any send, so a waiting send keeps
 * pointers, never copies. The owner's lock guards the queue.
 */
#ifndef AMC_SEND_QUEUE_H
#define AMC_SEND_QUEUE_H

#include "transport/transport.h"

#include <stdlib.h>

typedef struct amc_send_pend {
    struct amc_send_pend *next;
    void                 *to;      /* the owner's record of the destination */
    const void           *hdr;
    size_t                hdr_len;
    const void           *data;
    size_t                len;
    unsigned              mode;
    amc_completion_t     *comp;
} amc_send_pend_t;

typedef struct amc_send_queue {
    amc_send_pend_t *head, *tail;
} amc_send_queue_t;

/* Appends a send; NULL if out of memory (the caller logs and fails it). */
static inline amc_send_pend_t *amc_send_queue_push(amc_send_queue_t *q, void *to,
                                                   const void *hdr, size_t hdr_len,
                                                   const void *data, size_t len, unsigned mode,
                                                   amc_completion_t *comp)
{
    amc_send_pend_t *pend = malloc(sizeof(*pend));

    if (pend == NULL) {
        return NULL;
    }
    pend->next    = NULL;
    pend->to      = to;
    pend->hdr     = hdr;
    pend->hdr_len = hdr_len;
    pend->data    = data;
    pend->len     = len;
    pend->mode    = mode;
    pend->comp    = comp;
    if (q->tail != NULL) {
        q->tail->next = pend;
    } else {
        q->head = pend;
    }
    q->tail = pend;
    return pend;
}

/* Takes the first send off (the caller frees it once it is done). */
static inline amc_send_pend_t *amc_send_queue_pop(amc_send_queue_t *q)
{
    amc_send_pend_t *pend = q->head;

    if (pend != NULL) {
        q->head = pend->next;
        if (q->head == NULL) {
            q->tail = NULL;
        }
    }
    return pend;
}

/* Frees every send still waiting: abandoned with their collectives. */
static inline void amc_send_queue_drop(amc_send_queue_t *q)
{
    amc_send_pend_t *pend;

    while ((pend = amc_send_queue_pop(q)) != NULL) {
        free(pend);
    }
}

#endif
