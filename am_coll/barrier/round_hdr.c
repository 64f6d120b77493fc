/* SPDX-License-Identifier: BSD-3-Clause */
/* A communicator's channels to its members for the rounds' sends and
 * takes at a call's entry (am_coll/barrier/round_hdr.h). */
#include "am_coll/barrier/round_hdr.h"

#include <stdlib.h>

void *amc_round_chan_make(struct amc_comm *comm, int rank, int dest)
{
    amc_transport_t *tp = comm->ctx->tp;
    void            *chan;

    if (tp->ops->chan_get == NULL) {
        return NULL;
    }
    chan = tp->ops->chan_get(tp, dest);
    if (chan == NULL) {
        return NULL; /* none yet: the first messages both ways make it */
    }
    if (comm->now_chans == NULL) {
        comm->now_chans = calloc((size_t)comm->size, sizeof(*comm->now_chans));
        if (comm->now_chans == NULL) {
            return chan; /* looked up each time */
        }
    }
    comm->now_chans[rank] = chan;
    return chan;
}
