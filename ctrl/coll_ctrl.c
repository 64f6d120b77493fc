/* SPDX-License-Identifier: BSD-3-Clause */
#include "ctrl/coll_ctrl.h"

#include <stdlib.h>
#include <string.h>

void amc_coll_ctrl_init(amc_coll_ctrl_t *ctrl, unsigned early_max, const int *lock_live,
                        amc_early_release_fn_t drop_early, void *drop_arg, unsigned nhdr,
                        int payload)
{
    int i;

    memset(ctrl, 0, sizeof(*ctrl));
    amc_spinlock_init(&ctrl->lock, lock_live);
    ctrl->drop_early = drop_early;
    ctrl->drop_arg  = drop_arg;
    ctrl->early_max = early_max;
    ctrl->nhdr      = (nhdr < AMC_CTRL_MAX_ROUNDS) ? nhdr : AMC_CTRL_MAX_ROUNDS;
    ctrl->pay_max   = !payload ? 0 : AMC_CTRL_PAY_MAX;
    ctrl->pay       = payload ? AMC_CTRL_SMALL_BYTES + (ctrl->nhdr + 1) * 2 * ctrl->pay_max : 0;
    ctrl->pay_off   = (sizeof(amc_coll_slot_t) + ctrl->nhdr * sizeof(amc_wire_packed_t) + 15) &
                      ~(size_t)15;
    ctrl->ahead_max = amc_coll_ctrl_ahead_max(early_max, 1, 0); /* the communicator sets it */
    for (i = 0; i < AMC_CTRL_ABORTED; i++) {
        ctrl->aborted[i] = UINT64_MAX;
    }
}

uint64_t amc_coll_ctrl_ahead_max(unsigned early_max, int size, unsigned tokens)
{
    uint64_t peers = (size > 1) ? (uint64_t)(size - 1) : 0;

    return 2 * ((uint64_t)AMC_CTRL_WINDOW + early_max) + peers * tokens;
}

void amc_coll_ctrl_note_aborted(amc_coll_ctrl_t *ctrl, uint64_t seq)
{
    if (!amc_coll_ctrl_was_aborted(ctrl, seq)) {
        ctrl->aborted[ctrl->aborted_next++ % AMC_CTRL_ABORTED] = seq;
    }
}

int amc_coll_ctrl_was_aborted(const amc_coll_ctrl_t *ctrl, uint64_t seq)
{
    int i;

    for (i = 0; i < AMC_CTRL_ABORTED; i++) {
        if (ctrl->aborted[i] == seq) {
            return 1;
        }
    }
    return 0;
}

static void amc_coll_slot_free(amc_coll_slot_t *slot, void (*drop)(amc_coll_slot_t *slot))
{
    if (drop != NULL) {
        drop(slot);
    }
    /* teardown: the transport is gone, and its descriptors with it */
    amc_early_list_free(&slot->early, NULL, NULL);
    free(slot);
}

static void amc_coll_slot_list_free(amc_coll_slot_t *slot, void (*drop)(amc_coll_slot_t *slot))
{
    amc_coll_slot_t *next;

    for (; slot != NULL; slot = next) {
        next = slot->next;
        amc_coll_slot_free(slot, drop);
    }
}

void amc_coll_ctrl_cleanup(amc_coll_ctrl_t *ctrl, void (*drop)(amc_coll_slot_t *slot))
{
    int i;

    for (i = 0; i < AMC_CTRL_WINDOW; i++) {
        if (ctrl->window[i] != NULL) {
            amc_coll_slot_free(ctrl->window[i], drop);
        }
    }
    amc_coll_slot_list_free(ctrl->early, drop);
    amc_coll_slot_list_free(ctrl->free_slots, NULL);
    amc_spinlock_destroy(&ctrl->lock);
}

static amc_coll_slot_t *amc_coll_slot_alloc(amc_coll_ctrl_t *ctrl, uint64_t seq,
                                            struct amc_comm *comm)
{
    amc_coll_slot_t *slot = ctrl->free_slots;

    if (slot != NULL) {
        ctrl->free_slots = slot->next;
    } else {
        /* no blocking call under the lock; malloc only off the common path */
        slot = malloc(ctrl->pay_off + ctrl->pay);
        if (slot == NULL) {
            return NULL;
        }
    }
    slot->seq           = seq;
    slot->kind          = 0;
    slot->freed         = 0;
    slot->inst          = NULL;
    slot->early         = NULL;
    slot->barrier.bitvec        = 0;
    slot->barrier.cur_val       = -1;
    slot->barrier.rounds_sent   = 0;
    slot->barrier.send_posted   = 0;
    slot->barrier.send_complete = 0;
    slot->barrier.coll          = 0;
    slot->barrier.reduced       = 0;
    slot->barrier.told          = 0;
    slot->barrier.bytes         = 0;
    slot->barrier.rbytes        = 0;
    slot->barrier.oneway        = AMC_CTRL_BOTH;
    slot->barrier.root          = -1;
    slot->status        = 0;
    slot->done          = 0;
    slot->req           = NULL;
    slot->comm          = comm;
    slot->next          = NULL;
    ctrl->active++;
    return slot;
}

amc_coll_slot_t *amc_coll_ctrl_find(amc_coll_ctrl_t *ctrl, uint64_t seq)
{
    amc_coll_slot_t *slot;

    if (seq < ctrl->seq_base) {
        return NULL;
    }
    if (seq - ctrl->seq_base < AMC_CTRL_WINDOW) {
        slot = ctrl->window[seq & AMC_CTRL_WINDOW_MASK];
        return ((slot != NULL) && (slot->seq == seq)) ? slot : NULL;
    }
    for (slot = ctrl->early; (slot != NULL) && (slot->seq <= seq); slot = slot->next) {
        if (slot->seq == seq) {
            return slot;
        }
    }
    return NULL;
}

amc_coll_lookup_t amc_coll_ctrl_slot(amc_coll_ctrl_t *ctrl, uint64_t seq,
                                     struct amc_comm *comm, amc_coll_slot_t **slot_p)
{
    amc_coll_slot_t **link, *slot;

    if (seq < ctrl->seq_base) {
        return AMC_CTRL_OLDER;
    }

    if (seq - ctrl->seq_base < AMC_CTRL_WINDOW) {
        link = &ctrl->window[seq & AMC_CTRL_WINDOW_MASK];
        if (*link == NULL) {
            *link = amc_coll_slot_alloc(ctrl, seq, comm);
            if (*link == NULL) {
                return AMC_CTRL_NO_MEMORY;
            }
        }
        *slot_p = *link;
        return AMC_CTRL_FOUND;
    }

    for (link = &ctrl->early; (*link != NULL) && ((*link)->seq < seq); link = &(*link)->next) {
    }
    if ((*link != NULL) && ((*link)->seq == seq)) {
        *slot_p = *link;
        return AMC_CTRL_FOUND;
    }
    /* not a count: what peers may send ahead is bounded by the protocol
     * (amc_coll_ctrl_ahead_max), and this rank's own starts by
     * amc_coll_ctrl_may_start; refusing a message a peer may send would
     * drop it, and its instance would never finish */
    if (seq - ctrl->seq_base >= ctrl->ahead_max) {
        return AMC_CTRL_NO_ROOM;
    }
    slot = amc_coll_slot_alloc(ctrl, seq, comm);
    if (slot == NULL) {
        return AMC_CTRL_NO_MEMORY;
    }
    slot->next = *link;
    *link      = slot;
    ctrl->early_count++;
    *slot_p = slot;
    return AMC_CTRL_FOUND;
}

/* Moves early-store slots that the window now covers into it. */
static void amc_coll_ctrl_fill_window(amc_coll_ctrl_t *ctrl)
{
    amc_coll_slot_t *slot;

    while (((slot = ctrl->early) != NULL) &&
           (slot->seq - ctrl->seq_base < AMC_CTRL_WINDOW)) {
        ctrl->early = slot->next;
        ctrl->early_count--;
        slot->next = NULL;
        ctrl->window[slot->seq & AMC_CTRL_WINDOW_MASK] = slot;
    }
}

/* Slides the window past the finished slots at its start. */
static void amc_coll_ctrl_slide(amc_coll_ctrl_t *ctrl)
{
    amc_coll_slot_t **link, *slot;

    for (;;) {
        link = &ctrl->window[ctrl->seq_base & AMC_CTRL_WINDOW_MASK];
        slot = *link;
        if ((slot == NULL) || (slot->seq != ctrl->seq_base) || !slot->done) {
            break;
        }
        *link            = NULL;
        amc_early_list_free(&slot->early, ctrl->drop_early, ctrl->drop_arg);
        slot->next       = ctrl->free_slots;
        ctrl->free_slots = slot;
        ctrl->active--;
        ctrl->seq_base++;
    }
    amc_coll_ctrl_fill_window(ctrl);
}

void amc_coll_ctrl_release(amc_coll_ctrl_t *ctrl, amc_coll_slot_t *slot)
{
    /* A finished slot stays until the window slides past it, so that a
     * message for its seq is recognisably a duplicate, not a new instance. */
    slot->done = 1;
    slot->req  = NULL;
    amc_coll_ctrl_slide(ctrl);
}

void amc_coll_ctrl_pass(amc_coll_ctrl_t *ctrl)
{
    ctrl->seq_next++;
    ctrl->seq_base++;
    ctrl->full_logged = 0;
    /* the usual pass (nothing of the next instance here yet) has nothing
     * to slide: the slide's first look, without its call */
    if ((ctrl->window[ctrl->seq_base & AMC_CTRL_WINDOW_MASK] != NULL) || (ctrl->early != NULL)) {
        amc_coll_ctrl_slide(ctrl);
    }
}
