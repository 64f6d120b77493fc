/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rooted collective's sender at N=2 (bcast's and scatter's root, the
 * other rank of a reduce or a gather, scan's rank 0, and their v-forms)
 * waits for nothing when its message goes on an eager token: on the
 * barrier's machine its instance ends within the call, once the send
 * completes. Where the transport copies the message out at once (a
 * mailbox with room: send_now) and nothing came for the instance yet, the
 * machine's slot would be taken, loaded, advanced and released again
 * within the call for no reader: the call sends straight from the
 * caller's buffer and the control structure moves past the instance
 * (amc_coll_ctrl_pass). What the peer sees is the same message.
 *
 * Why it matters more than its instructions: in a loop of calls (OSU's
 * method) the receiver's time runs from the barrier before the call to
 * the message's arrival, so the sender's path from its call to the send
 * is on it, and on the sender's own time too.
 */
#include "am_coll/barrier/ctrl_send_now.h"
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/barrier/round_hdr.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "am_coll/context/flow.h"
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/request.h"
#include "base/status.h"

int amc_ctrl_coll_send_now(struct amc_comm *comm, struct amc_request *req,
                           const amc_coll_args_t *args)
{
    amc_context_t   *ctx  = comm->ctx;
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    int              root = amc_alg_rounds_root(args->root);
    const uint8_t   *data;
    size_t           bytes;
    int              dest;

    /* a slot is the machine's: what came for the instance, a peer dead or
     * a communicator broken (amc_comm_enter's checks), threads that may
     * meet in the control structure */
    if ((comm->size != 2) || !amc_alg_rounds_rooted(args->coll) ||
        !amc_alg_rounds_sends(args->coll, comm->rank, root) || !amc_round_may_send_now(comm) ||
        !amc_coll_ctrl_idle(ctrl) || amc_peer_watch_news(ctx) ||
        __atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    dest = amc_comm_peer(comm, comm->rank ^ 1);
    if (!amc_flow_take(&ctx->flow, dest)) {
        return 0; /* its message asks for an answer, which the machine waits for */
    }
    data = amc_ctrl_coll_rooted_out(args, &bytes);
    if (amc_round_send_now(comm, args->coll, AMC_CTRL_SENDS, root, ctrl->seq_next, AMC_SUCCESS,
                           comm->rank ^ 1, data, bytes) != AMC_SUCCESS) {
        amc_flow_give(&ctx->flow, dest, 1); /* the token, unused */
        return 0;
    }
    amc_coll_ctrl_pass(ctrl);
    amc_request_complete(req, AMC_SUCCESS);
    return 1;
}
