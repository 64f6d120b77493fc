/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/comm.h"
#include "base/status.h"

#include <stdlib.h>

void amc_comm_drop_early(void *arg, amc_early_msg_t *msg)
{
    amc_comm_t comm = arg;

    if (msg->desc != NULL) {
        amc_context_release_desc(comm->ctx, msg->desc);
        msg->desc = NULL;
    }
    if (msg->eager && (msg->len > 0) && (msg->hdr.src < (uint32_t)comm->size)) {
        amc_flow_release_len(&comm->ctx->flow, amc_comm_peer(comm, msg->hdr.src), msg->len);
    }
    msg->eager = 0;
}

void amc_comm_group_release(amc_comm_group_t *group)
{
    if ((group != NULL) && (__atomic_sub_fetch(&group->refs, 1, __ATOMIC_ACQ_REL) == 0)) {
        free(group);
    }
}

int amc_comm_check(amc_comm_t comm)
{
    if ((comm == NULL) || (comm->magic != AMC_COMM_MAGIC_ALIVE)) {
        return AMC_ERR_COMM;
    }
    return AMC_SUCCESS;
}

int amc_comm_take_error(amc_comm_t comm)
{
    int status;

    if (__atomic_load_n(&comm->ctrl.pending_err, __ATOMIC_ACQUIRE) != AMC_SUCCESS) {
        status = __atomic_exchange_n(&comm->ctrl.pending_err, AMC_SUCCESS, __ATOMIC_ACQ_REL);
        if (status != AMC_SUCCESS) {
            return status;
        }
    }
    return amc_context_take_error(comm->ctx);
}
