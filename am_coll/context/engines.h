/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the context needs of the two engines that sit above it (the
 * barrier's on the control structure, am_coll/barrier/, and the schedules',
 * am_coll/coll/): their arrival handlers, and what teardown, a dead peer
 * and a failed wait ask of their state. The context calls them through this
 * table, which am_coll/api/context_open.c fills in, so that nothing in the
 * context's room includes an engine: the layers run one way (doc/design.md,
 * "Layers").
 */
#ifndef AMC_ENGINES_H
#define AMC_ENGINES_H

#include "ctrl/coll_ctrl.h"
#include "handlers/wire.h"

#include <stddef.h>

struct amc_comm;
struct amc_context;
struct amc_request;
struct amc_sched;

typedef struct amc_engines {
    /* A message of kind AMC_WIRE_BARRIER (always eager: no descriptor). */
    void (*barrier_arrival)(struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                            const void *data, size_t len);
    /* A message of kind AMC_WIRE_COLL (desc: rendezvous data at the sender). */
    void (*coll_arrival)(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                         size_t len, void *desc);
    /* Rank dead (transport rank) was found dead: the instances that wait
     * for it fail, and the job is told. */
    void (*peer_dead)(struct amc_context *ctx, int dead);
    /* A communicator's teardown: an instance left in a slot, a cached
     * schedule. */
    void (*inst_discard)(struct amc_coll_inst *inst);
    void (*sched_release)(struct amc_sched *sched);
    /* With ctrl->lock held, req not complete, its slot running inst: fails
     * req with status (cancelling inst, or letting a barrier run on
     * detached), what it waited for described into why when timed out.
     * Returns non-zero when the context has notices to flush. */
    int  (*inst_fail)(struct amc_coll_inst *inst, struct amc_request *req, int status,
                      int timed_out, char *why, size_t len);
    /* With ctrl->lock held: what a barrier's slot waits for, in words. */
    void (*barrier_describe)(struct amc_comm *comm, const amc_coll_slot_t *slot, char *buf,
                             size_t len);
    /* A message of kind AMC_WIRE_FT: revoke and agreement
     * (am_coll/coll/coll_ft.h); eager only (no descriptor). Last: the
     * fields above keep their places. */
    void (*ft_arrival)(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                       size_t len);
} amc_engines_t;

#endif
