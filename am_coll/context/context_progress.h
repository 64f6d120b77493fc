/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One progress pass of a context (am_coll/context/context_progress.c).
 */
#ifndef AMC_CONTEXT_PROGRESS_H
#define AMC_CONTEXT_PROGRESS_H

#include "am_coll/context/context.h"

/* One progress pass: transport handlers, then freed communicators whose last
 * instance finished. Returns non-zero if anything happened. */
int  amc_context_progress(amc_context_t *ctx);

#endif
