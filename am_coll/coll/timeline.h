/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timelines of scheduled collectives: every act's start (ready) and end
 * (done), its peer, bytes, and the act whose completion released it,
 * recorded through the engine's act hook (amc_context_t.act_trace: one
 * predictable branch per act when off), written as trace-event JSON
 * (Perfetto, chrome://tracing) and a gnuplot PNG (ranks down, time across,
 * messages as arrows).
 *
 * Two ways in: amc_goal run --timeline OUT (recording around the runs,
 * gathered to rank 0 at the end), and AMC_TIMELINE=PREFIX for any program
 * (each rank writes PREFIX.RANK.tl at amc_finalize; amc_goal timeline OUT
 * PREFIX.*.tl merges them).
 */
#ifndef AMC_TIMELINE_H
#define AMC_TIMELINE_H

#include "amcoll.h"

#include <stddef.h>
#include <stdint.h>

struct amc_context;

/* One act of one instance, as recorded and exchanged. */
typedef struct amc_tl_rec {
    double   start;        /* seconds since the rank's recording began */
    double   end;          /* < 0: never done */
    uint64_t cid;
    uint64_t seq;
    uint64_t bytes;
    uint64_t inst;         /* the instance's address: a key while recording */
    uint32_t act;
    uint32_t released_by;  /* the act whose completion made it ready; UINT32_MAX: none */
    uint32_t tag;
    int32_t  peer;         /* SEND / RECV*: comm rank; else -1 */
    int32_t  rank;
    uint8_t  type;         /* AMC_ACT_* */
    uint8_t  coll;
    uint8_t  released_type;
    uint8_t  pad[5];
} amc_tl_rec_t;

/* Recording on ctx, on or off (off keeps what was taken). */
int  amc_timeline_on(struct amc_context *ctx, int on);

/* The context's AMC_TIMELINE: at its creation and destruction. */
int  amc_timeline_context_init(struct amc_context *ctx);
void amc_timeline_context_fini(struct amc_context *ctx);

/* p (an array of *cap elements of elem bytes) grown to hold need, *cap
 * updated; NULL if out of memory (p is still valid then). */
void *amc_tl_grow(void *p, size_t *cap, size_t need, size_t elem);

/* What ctx recorded so far (*n records; NULL if it never recorded). */
const amc_tl_rec_t *amc_timeline_records(const struct amc_context *ctx, size_t *n);

#endif
