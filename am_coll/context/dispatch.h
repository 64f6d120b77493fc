/* SPDX-License-Identifier: BSD-3-Clause */
/* The context's entries in the header handler's dispatch table. */
#ifndef AMC_DISPATCH_H
#define AMC_DISPATCH_H

#include <stddef.h>

struct amc_context;
struct amc_comm;

/* Registers this context's handlers in ctx->am. */
void amc_dispatch_init(struct amc_context *ctx);

/* Hands a message held for comm before it existed (its header as raw bytes,
 * checked when it arrived) to comm's engine. */
void amc_dispatch_replay(struct amc_context *ctx, struct amc_comm *comm, const void *hdr_bytes,
                         const void *data, size_t len, void *desc);

#endif
