/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening and closing a context (am_coll/context/context.h): the one place
 * that wires everything a context holds together: its configuration with
 * the algorithms and tuning rules resolved, the dispatch table, flow
 * control, the world communicator, the timeline recorder and the progress
 * thread; and takes them apart again. amc_init and the unit tests call it.
 */
#ifndef AMC_CONTEXT_OPEN_H
#define AMC_CONTEXT_OPEN_H

#include "am_coll/context/context.h"

/* Takes ownership of tp (destroyed with the context, also on failure).
 * threaded: application threads may be inside the library at once
 * (AMC_THREAD_MULTIPLE); cfg->progress_thread adds a thread of its own. */
int  amc_context_create(const amc_config_t *cfg, amc_transport_t *tp, int threaded,
                        amc_context_t **ctx_p);
void amc_context_destroy(amc_context_t *ctx);

#endif
