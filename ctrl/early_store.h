/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Early-arrival buffers: a data message that arrives before the local rank
 * reached its round (or entered the collective at all) is copied here and
 * consumed when the schedule gets to it (the patent's second "added
 * complexity"). One list per instance slot, in arrival order.
 */
#ifndef AMC_EARLY_STORE_H
#define AMC_EARLY_STORE_H

#include "handlers/wire.h"

#include <stddef.h>
#include <stdint.h>

typedef struct amc_early_msg {
    struct amc_early_msg *next;
    amc_wire_hdr_t        hdr;
    size_t                len;
    void                 *desc;   /* data still at the sender (rendezvous): no copy */
    int                   eager;  /* data copied here: its sender spent a token on it */
    unsigned char         data[];
} amc_early_msg_t;

/* Gives back what a dropped message holds: its rendezvous descriptor to the
 * transport, or its sender's token. The list frees the message itself. */
typedef void (*amc_early_release_fn_t)(void *arg, amc_early_msg_t *msg);

/* A copy of the message, or with desc only the header and the descriptor;
 * NULL when out of memory. */
amc_early_msg_t *amc_early_msg_new(const amc_wire_hdr_t *hdr, const void *data, size_t len,
                                   void *desc);

void amc_early_list_append(amc_early_msg_t **list, amc_early_msg_t *msg);

/* Unlinks and returns the first message for round, or NULL. */
amc_early_msg_t *amc_early_list_take(amc_early_msg_t **list, uint32_t round);

/* Frees the list; each message goes through release first (NULL: teardown,
 * the transport and the peers are gone). */
void amc_early_list_free(amc_early_msg_t **list, amc_early_release_fn_t release, void *arg);

#endif
