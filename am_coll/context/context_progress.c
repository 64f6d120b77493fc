/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/context_progress.h"
#include "am_coll/context/comm_life.h"

/* Destroys user-freed communicators whose instances have all finished. Runs
 * from progress in the caller's context, never from a handler. */
static int amc_context_reap(amc_context_t *ctx)
{
    struct amc_comm **link, *comm, *done = NULL;
    unsigned          active;
    int               reaped = 0;

    amc_spin_lock(&ctx->lock);
    for (link = &ctx->zombies; (comm = *link) != NULL;) {
        amc_spin_lock(&comm->ctrl.lock);
        active = comm->ctrl.active;
        amc_spin_unlock(&comm->ctrl.lock);
        if (active > 0) {
            link = &comm->list_next;
            continue;
        }
        *link           = comm->list_next;
        comm->list_next = done;
        done            = comm;
    }
    amc_spin_unlock(&ctx->lock);

    /* destroy takes ctx->lock itself */
    while ((comm = done) != NULL) {
        done = comm->list_next;
        amc_comm_destroy(comm);
        reaped = 1;
    }
    amc_context_flush(ctx);
    return reaped;
}

int amc_context_progress(amc_context_t *ctx)
{
    int progressed = ctx->tp->ops->progress(ctx->tp);

    amc_context_flush(ctx);
    if (__atomic_load_n(&ctx->zombies, __ATOMIC_RELAXED) != NULL) {
        progressed |= amc_context_reap(ctx);
    }
    return progressed;
}
