/*
 * The header handler: the transport calls it for every arriving active
 * message. It checks the wire header, finds the communicator by context id
 * and hands the message to the collective's handler. It never blocks.
 */
#ifndef AMC_AM_HANDLER_H
#define AMC_AM_HANDLER_H

#include <stddef.h>

struct amc_context;
struct amc_comm;

/* amc_recv_cb_t; arg is the amc_context_t */
void amc_am_recv(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len,
                 void *desc);

/* Replays a held message (raw bytes as they arrived) to its communicator. */
void amc_am_dispatch_bytes(struct amc_context *ctx, struct amc_comm *comm,
                           const void *hdr, size_t hdr_len, const void *data, size_t len,
                           void *desc);

#endif
