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
#include "base/spinlock.h"
#include "base/status.h"

int amc_ctrl_coll_send_now(struct amc_comm *comm, struct amc_request *req,
                           const amc_coll_args_t *args)
{
    amc_context_t    *ctx  = comm->ctx;
    amc_transport_t  *tp   = ctx->tp;
    amc_coll_ctrl_t  *ctrl = &comm->ctrl;
    int               root = (args->root >= 0) ? args->root : 0; /* scan's: rank 0 */
    amc_wire_packed_t hdr;
    const uint8_t    *data;
    size_t            bytes, hdr_len;
    int               dest, status;

    /* a slot is the machine's: what came for the instance, a peer dead or
     * a communicator broken (amc_comm_enter's checks), threads that may
     * meet in the control structure */
    if ((comm->size != 2) || comm->never_now || (tp->ops->send_now == NULL) ||
        !amc_alg_rounds_rooted(args->coll) ||
        !amc_alg_rounds_sends(args->coll, comm->rank, root) || amc_lock_live(ctx->lock_live_p) ||
        !amc_coll_ctrl_idle(ctrl) || amc_peer_watch_news(ctx) ||
        __atomic_load_n(&comm->broken, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    dest = amc_comm_peer(comm, comm->rank ^ 1);
    if (!amc_flow_take(&ctx->flow, dest)) {
        return 0; /* its message asks for an answer, which the machine waits for */
    }
    data    = amc_ctrl_coll_rooted_out(args, &bytes);
    hdr_len = amc_round_hdr_pack(comm, args->coll, AMC_CTRL_SENDS, root, ctrl->seq_next,
                                 AMC_SUCCESS, 0, &hdr);
    status = tp->ops->send_now(tp, dest, &hdr, hdr_len, data, bytes);
    if (status != AMC_SUCCESS) {
        amc_flow_give(&ctx->flow, dest, 1); /* the token, unused */
        if (status == AMC_SEND_NEVER) {
            comm->never_now = 1;
        }
        return 0;
    }
    amc_coll_ctrl_pass(ctrl);
    amc_request_complete(req, AMC_SUCCESS);
    return 1;
}
