/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL schedules (include/amcoll.h): every rank's graph as the user gave it,
 * and what compiling makes of it, one engine schedule per rank. The text
 * form (am_coll/goal/goal_text.c) fills the same structure.
 */
#ifndef AMC_GOAL_H
#define AMC_GOAL_H

#include "amcoll.h"
#include "am_coll/sched/sched.h"

#include <stdint.h>
#include <stdio.h>

typedef enum {
    AMC_GOAL_SEND,
    AMC_GOAL_RECV,
    AMC_GOAL_CALC,
    AMC_GOAL_COPY,
    AMC_GOAL_REDUCE
} amc_goal_act_type_t;

typedef struct amc_goal_act {
    uint8_t        type;
    uint8_t        buf;      /* SEND: source; RECV, COPY, REDUCE: target */
    uint8_t        buf2;     /* COPY, REDUCE: source */
    uint8_t        right;    /* REDUCE: dst = dst (op) src */
    uint8_t        explicit_buf; /* SEND / RECV: a buffer was named (text) */
    int            peer;     /* SEND / RECV; AMC_GOAL_ANY: any source */
    int            tag;      /* SEND / RECV; AMC_GOAL_ANY: any tag */
    int            cpu;
    int            nic;
    size_t         off;
    size_t         off2;
    size_t         bytes;    /* CALC: its cost */
    amc_datatype_t dt;
    amc_op_t       op;
    char          *label;    /* text: its label (NULL: none) */
    uint32_t       line;     /* text: where it was written (0: from C) */
    uint32_t       col;
    /* compiled */
    int            mate_rank; /* the message's other end */
    int            mate_act;
    uint32_t       wire_tag;  /* its index among the pair's messages */
} amc_goal_act_t;

typedef struct amc_goal_dep {
    uint32_t act;
    uint32_t dep;
    uint8_t  start;          /* irequires */
    uint32_t line;
    uint32_t col;
} amc_goal_dep_t;

typedef struct amc_goal_rank {
    amc_goal_act_t *acts;
    uint32_t        nacts;
    uint32_t        cap_acts;
    amc_goal_dep_t *deps;
    uint32_t        ndeps;
    uint32_t        cap_deps;
    size_t          extent[AMC_GOAL_NBUFS]; /* bytes of each buffer its acts touch */
    amc_sched_t    *sched;                  /* compiled */
    uint32_t       *where;                  /* [nacts] the act's index in sched */
} amc_goal_rank_t;

struct amc_goal {
    int              nranks;
    amc_goal_rank_t *ranks;
    int              compiled;
    int              has_reduce;
    amc_datatype_t   dt;
    amc_op_t         op;
    char             name[256];   /* the file's, for messages */
    char             err[512];
    struct amc_comm *comm;        /* the last start's: amc_goal_free locks it */
};

/* The text parser's way in: a new act of rank, zeroed, filled by the caller. */
int amc_goal_add_act(amc_goal_t g, int rank, int type, amc_goal_act_t **act_p);

/* The schedule of a built-in collective (its algorithm by name, "auto" for
 * the default) as GOAL, for export: every rank's part, local acts as calc
 * (with data: as copy and reduce). */
int amc_goal_from_builtin(const char *coll, const char *alg, int nranks, size_t bytes, int root,
                          int with_data, amc_goal_t *goal, char *err, size_t errlen);
/* The same with node_size consecutive ranks per node (0: one node), the
 * layout the node-aware algorithms build for (AMC_NODE_SIZE's). */
int amc_goal_from_builtin_nodes(const char *coll, const char *alg, int nranks, size_t bytes,
                                int root, int node_size, int with_data, amc_goal_t *goal,
                                char *err, size_t errlen);

/* The engine act that goal act index of rank runs as (after compiling). */
static inline uint32_t amc_goal_sched_index(const amc_goal_t g, int rank, uint32_t act)
{
    return g->ranks[rank].where[act];
}

#endif
