/* SPDX-License-Identifier: BSD-3-Clause */
#include "ctrl/early_store.h"

#include <stdlib.h>
#include <string.h>

amc_early_msg_t *amc_early_msg_new(const amc_wire_hdr_t *hdr, const void *data, size_t len,
                                   void *desc)
{
    amc_early_msg_t *msg = malloc(sizeof(*msg) + ((desc != NULL) ? 0 : len));

    if (msg == NULL) {
        return NULL;
    }
    msg->next = NULL;
    msg->hdr  = *hdr;
    msg->len  = len;
    msg->desc  = desc;
    msg->eager = (desc == NULL);
    if ((desc == NULL) && (len > 0)) {
        memcpy(msg->data, data, len);
    }
    return msg;
}

void amc_early_list_append(amc_early_msg_t **list, amc_early_msg_t *msg)
{
    while (*list != NULL) {
        list = &(*list)->next;
    }
    *list = msg;
}

amc_early_msg_t *amc_early_list_take(amc_early_msg_t **list, uint32_t round)
{
    amc_early_msg_t *msg;

    for (; (msg = *list) != NULL; list = &msg->next) {
        if (msg->hdr.round == round) {
            *list     = msg->next;
            msg->next = NULL;
            return msg;
        }
    }
    return NULL;
}

void amc_early_list_free(amc_early_msg_t **list, amc_early_release_fn_t release, void *arg)
{
    amc_early_msg_t *msg, *next;

    for (msg = *list; msg != NULL; msg = next) {
        next = msg->next;
        if (release != NULL) {
            release(arg, msg);
        }
        free(msg);
    }
    *list = NULL;
}
