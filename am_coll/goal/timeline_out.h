/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timelines out of the recorder (am_coll/coll/timeline.h): over the public
 * API, for amc_goal (run --timeline, timeline).
 */
#ifndef AMC_TIMELINE_OUT_H
#define AMC_TIMELINE_OUT_H

#include "am_coll/coll/timeline.h"
#include "amcoll.h"

/* Recording on the default context, on or off (off keeps what was taken). */
int  amc_timeline_enable(int on);

/* Collective over comm: every rank's records to rank 0, which writes
 * OUT.json and OUT.png. */
int  amc_timeline_gather_write(amc_comm_t comm, const char *out);

/* Rank files (PREFIX.RANK.tl) merged into OUT.json and OUT.png. */
int  amc_timeline_merge(const char *out, int nfiles, char **files);

#endif
