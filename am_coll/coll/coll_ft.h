/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Going on after a failure (doc/design.md, "Revoke, agree and shrink"):
 * the revoke notice, flooded by every rank that first hears it, and the
 * fault-tolerant agreement, a two-phase commit led by the lowest live rank
 * with a takeover by the next. Both run on messages of their own kind
 * (AMC_WIRE_FT), apart from the communicator's sequence numbers, so a
 * revoked communicator whose instances are out of step still agrees.
 */
#ifndef AMC_COLL_FT_H
#define AMC_COLL_FT_H

#include "am_coll/context/comm.h"
#include "handlers/wire.h"

#include <stddef.h>
#include <stdint.h>

/* The agreement's failed sets travel as bit maps of this many ranks at most. */
#define AMC_FT_MAX_RANKS 1024
#define AMC_FT_WORDS     (AMC_FT_MAX_RANKS / 64)

/* AMC_WIRE_FT messages: hdr.round */
enum {
    AMC_FT_REVOKE = 1,  /* comm is revoked; no data */
    AMC_FT_CONTRIB,     /* agreement hdr.seq: the sender's flag and failed set */
    AMC_FT_PROPOSE,     /* the value coordinator hdr.root proposes */
    AMC_FT_ACK,         /* the sender accepted hdr.root's proposal; no data */
    AMC_FT_COMMIT,      /* the value decided (passed on by every rank that hears it) */
    AMC_FT_LAST
};

/* What an agreement decides, and its wire form (only the words of the
 * communicator's size are sent). */
typedef struct amc_ft_value {
    int32_t  flag;                 /* AND of the flags that took part */
    int32_t  leader;               /* transport rank that reserved num */
    uint64_t num;                  /* an id number for a shrink (context.h) */
    uint64_t failed[AMC_FT_WORDS]; /* communicator ranks */
} amc_ft_value_t;

/* One rank's agreement, as amc_ft_agree_begin starts it. */
typedef struct amc_ft_agree {
    amc_comm_t     comm;
    uint64_t       epoch;   /* which agreement on comm, from 1 */
    amc_ft_value_t result;  /* once amc_ft_agree_test returned a status */
} amc_ft_agree_t;

static inline int amc_ft_bit(const uint64_t *bits, int i)
{
    return (int)((bits[i / 64] >> (i % 64)) & 1u);
}

/* Marks comm revoked here and tells every other live rank, each of which
 * tells the others in turn. AMC_ERR_NO_MEMORY if the notice could not go. */
int  amc_ft_revoke(amc_comm_t comm);

/* Joins the next agreement on comm with flag. AMC_ERR_UNSUPPORTED past
 * AMC_FT_MAX_RANKS, AMC_ERR_NO_MEMORY. */
int  amc_ft_agree_begin(amc_comm_t comm, int flag, amc_ft_agree_t *op);

/* Advances the agreement (no progress of the transport: the caller's).
 * AMC_INPROGRESS, or its status (AMC_SUCCESS, AMC_ERR_PEER when the
 * decided failed set is not empty) with op->result filled. */
int  amc_ft_agree_test(amc_ft_agree_t *op);

/* bits (AMC_FT_WORDS): the ranks of comm this rank knows dead, with every
 * failed set an agreement on comm decided. */
void amc_ft_failed(amc_comm_t comm, uint64_t *bits);

/* engines.h's ft_arrival. */
void amc_ft_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                       size_t len);

#endif
