/* SPDX-License-Identifier: BSD-3-Clause */
#include "handlers/am_handler.h"

#include <string.h>

void amc_am_table_init(amc_am_table_t *table, amc_am_reject_fn_t reject,
                       amc_am_flush_fn_t flush, void *arg)
{
    memset(table, 0, sizeof(*table));
    table->reject = reject;
    table->flush  = flush;
    table->arg    = arg;
}

void amc_am_register(amc_am_table_t *table, int kind, amc_am_handler_fn_t fn, void *arg)
{
    if ((kind > 0) && (kind < AMC_WIRE_KINDS)) {
        table->handler[kind]     = fn;
        table->handler_arg[kind] = arg;
    }
}

static void amc_am_recv_one(amc_am_table_t *table, const void *hdr_bytes, size_t hdr_len,
                            const void *data, size_t len, void *desc)
{
    amc_wire_hdr_t hdr;
    const char    *why = amc_wire_unpack_inline(hdr_bytes, hdr_len, &hdr);

    if (why != NULL) {
        table->reject(table->arg, why, NULL, desc);
        return;
    }
    if ((hdr.kind >= AMC_WIRE_KINDS) || (table->handler[hdr.kind] == NULL)) {
        table->reject(table->arg, "unknown message kind", &hdr, desc);
        return;
    }
    table->handler[hdr.kind](table->handler_arg[hdr.kind], &hdr, data, len, desc);
}

void amc_am_recv(void *arg, const void *hdr_bytes, size_t hdr_len, const void *data, size_t len,
                 void *desc)
{
    amc_am_table_t *table = arg;

    amc_am_recv_one(table, hdr_bytes, hdr_len, data, len, desc);
    table->flush(table->arg);
}
