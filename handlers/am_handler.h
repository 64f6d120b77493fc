/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The header handler: the transport calls it for every arriving active
 * message. It checks the wire header and dispatches on the message's kind
 * through a table that the layers above register into (UCX's
 * UCP_DEFINE_AM is the model), so nothing here knows communicators or
 * engines. It never blocks.
 */
#ifndef AMC_AM_HANDLER_H
#define AMC_AM_HANDLER_H

#include "handlers/wire.h"

#include <stddef.h>

/* A message of one kind, its header checked and copied out (aligned). data
 * is the payload, or NULL with desc the transport's descriptor of data left
 * at the sender (rendezvous): the handler fetches or releases it. */
typedef void (*amc_am_handler_fn_t)(void *arg, const amc_wire_hdr_t *hdr, const void *data,
                                    size_t len, void *desc);

/* A message that failed the checks (hdr NULL when even the header is bad);
 * desc, if any, must be released. */
typedef void (*amc_am_reject_fn_t)(void *arg, const char *why, const amc_wire_hdr_t *hdr,
                                   void *desc);

/* After every message: what its handler queued under a lock. */
typedef void (*amc_am_flush_fn_t)(void *arg);

typedef struct amc_am_table {
    amc_am_handler_fn_t handler[AMC_WIRE_KINDS];
    void               *handler_arg[AMC_WIRE_KINDS];
    amc_am_reject_fn_t  reject;
    amc_am_flush_fn_t   flush;
    void               *arg;      /* of reject and flush */
} amc_am_table_t;

void amc_am_table_init(amc_am_table_t *table, amc_am_reject_fn_t reject,
                       amc_am_flush_fn_t flush, void *arg);

/* fn handles messages of kind (an AMC_WIRE_* value). */
void amc_am_register(amc_am_table_t *table, int kind, amc_am_handler_fn_t fn, void *arg);

/* amc_recv_cb_t; arg is the amc_am_table_t. */
void amc_am_recv(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len,
                 void *desc);

/* The header of a message held as raw bytes, checked when it arrived. */
static inline void amc_am_decode(const void *hdr_bytes, amc_wire_hdr_t *hdr)
{
    __builtin_memcpy(hdr, hdr_bytes, sizeof(*hdr));
}

#endif
