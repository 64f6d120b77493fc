/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives as schedules (LibNBC's rounds; GOAL's dependencies reduced to
 * round order). A schedule is what one rank does in one collective: a list of
 * rounds, each with local actions (copy, reduce), sends and receives. Round
 * r+1 starts when every send of round r completed and every receive of round
 * r arrived; at its start the round's local actions run, then its sends are
 * issued. A schedule depends only on (collective, algorithm, size, rank,
 * root, count, datatype, in-place, commutativity) and is cached per
 * communicator; buffers are named, not pointed to, so one schedule serves
 * every call with the same shape.
 *
 * Adding an algorithm means writing one am_coll/alg/alg_*.c file that fills a
 * schedule through the builder below.
 */
#ifndef AMC_SCHED_H
#define AMC_SCHED_H

#include "amcoll.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    AMC_COLL_NONE = 0,
    AMC_COLL_BCAST,
    AMC_COLL_REDUCE,
    AMC_COLL_ALLREDUCE,
    AMC_COLL_GATHER,
    AMC_COLL_GATHERV,
    AMC_COLL_SCATTER,
    AMC_COLL_SCATTERV,
    AMC_COLL_ALLGATHER,
    AMC_COLL_ALLGATHERV,
    AMC_COLL_ALLTOALL,
    AMC_COLL_ALLTOALLV,
    AMC_COLL_REDUCE_SCATTER_BLOCK,
    AMC_COLL_REDUCE_SCATTER,
    AMC_COLL_SCAN,
    AMC_COLL_EXSCAN,
    AMC_COLL_BARRIER,   /* on the engine only with AMC_BARRIER_ALG=dissemination */
    AMC_COLL_GOAL,      /* a user's GOAL schedule (am_coll/goal/goal.c) */
    AMC_COLL_LAST
} amc_coll_type_t;

const char *amc_coll_name(int coll);

/* Named buffers of an instance: the caller's two, the scratch, and up to
 * AMC_NBUFS - 3 more scratch buffers an algorithm asks for (amc_sb_buffer). */
enum {
    AMC_BUF_SEND,   /* the caller's send buffer */
    AMC_BUF_RECV,   /* the caller's receive buffer */
    AMC_BUF_TMP,    /* scratch of sched->tmp_bytes, one per instance */
    AMC_BUF_EXTRA   /* the first of the buffers from amc_sb_buffer */
};

#define AMC_NBUFS 8

typedef enum {
    AMC_ACT_SEND,          /* peer <- buf[off, off+bytes) */
    AMC_ACT_RECV,          /* buf[off, off+bytes) <- peer */
    AMC_ACT_RECV_REDUCE,   /* buf = message (op) buf: the message is the left operand */
    AMC_ACT_RECV_REDUCE_R, /* buf = buf (op) message */
    AMC_ACT_COPY,          /* buf[off] <- buf2[off2], bytes */
    AMC_ACT_REDUCE,        /* buf = buf2 (op) buf */
    AMC_ACT_REDUCE_R,      /* buf = buf (op) buf2 */
    AMC_ACT_NOP,           /* a join the builder adds: many acts wait for many */
    AMC_ACT_STAMP,         /* buf[off, off+8) <- the value off2: what a block that travels
                            * through other ranks says about itself (its length) */
    AMC_ACT_CHECK          /* buf[off, off+8) must hold the value off2, else the instance
                            * fails with AMC_ERR_TRUNCATE; peer: the rank it came from */
} amc_act_type_t;

/* Bytes a stamp takes: whole elements of every datatype. */
#define AMC_SCHED_STAMP_BYTES 8

/* A stamp's value for a block that goes another way than the stamp (straight
 * to its destination): no length matches it. */
#define AMC_SCHED_STAMP_ELSEWHERE UINT64_MAX

typedef struct amc_sched_act {
    uint8_t  type;
    uint8_t  last;   /* SEND / RECV*: the last message between this rank and peer in
                      * that direction; the sender flags it (AMC_WIRE_FLAG_LAST), so
                      * a receiver whose count disagrees with its sender's learns it
                      * even when every message has the size it expects */
    uint8_t  exact;  /* RECV*: a message of another length aborts the instance (the
                      * schedule reads it by a layout computed from its length) rather
                      * than only failing it (amc_sb_exact) */
    uint8_t  pad;
    uint32_t ndeps;  /* acts it requires (GOAL's requires edges) */
    uint32_t succ;   /* sched->succ[succ .. succ+nsucc): the acts that require it */
    uint32_t nsucc;
    uint8_t  buf;    /* SEND: source; others: target */
    uint8_t  buf2;   /* COPY / REDUCE*: source */
    int      peer;   /* SEND / RECV*: rank in the communicator */
    uint32_t round;  /* the round it belongs to */
    uint32_t tag;    /* SEND / RECV*: its index among this instance's messages
                      * between this rank and peer in that direction; the
                      * header carries it, so ranks need not agree on rounds */
    size_t   off;
    size_t   off2;
    size_t   bytes;
} amc_sched_act_t;

/* A round's acts are stored locals first, then sends, then receives (each
 * kind in the order the algorithm added them), so starting a round walks
 * exactly what it runs. */
typedef struct amc_sched_round {
    uint32_t first;   /* acts[first .. first+count) */
    uint32_t count;
    uint32_t nlocal;  /* acts[first .. first+nlocal): copies and reductions */
    uint32_t nsend;   /* then the sends */
    uint32_t nrecv;   /* then the receives */
    uint8_t  implicit; /* its acts require the previous round's (amc_sb_round) */
} amc_sched_round_t;

/* What a schedule depends on; equal keys give equal schedules. */
typedef struct amc_sched_key {
    uint8_t        coll;
    uint8_t        alg;
    uint8_t        in_place;
    uint8_t        commutative;
    int            root;
    size_t         count;
    amc_datatype_t dt;
} amc_sched_key_t;

typedef struct amc_sched {
    amc_sched_key_t    key;
    uint32_t           nrounds;
    uint32_t           nacts;       /* the rounds' acts, then the joins */
    amc_sched_round_t *rounds;
    amc_sched_act_t   *acts;
    uint32_t          *succ;        /* successor lists, indexed by act->succ */
    uint32_t          *ndeps;       /* [nacts] each act's ndeps: an instance's start counts */
    uint32_t          *roots;       /* acts that require nothing: ready at the start */
    uint32_t           nroots;
    size_t             tmp_bytes;
    uint32_t           nbufs;       /* named buffers in use: AMC_BUF_EXTRA + extras */
    size_t             buf_bytes[AMC_NBUFS]; /* extra scratch buffers: size, and */
    size_t             buf_off[AMC_NBUFS];   /* place in the instance's scratch */
    size_t             stage_off;   /* the staging area's place in the scratch */
    size_t             reduce_bytes; /* the largest reduction: its operand is copied
                                      * there when the op's order or a user function's
                                      * alignment needs it (amc_sched_reduce_off) */
    size_t             stage_bytes; /* after the scratch: where reducing receives whose
                                     * data is pulled land first (act->off2 each) */
    uint32_t          *recv_by_key; /* receive acts sorted by (peer, tag): arrival lookup */
    uint32_t           nrecv;
    unsigned           users;       /* running instances; a cached one is freed at 0 */
    void              *spare;       /* a finished instance kept for the next call of
                                     * this shape, scratch and all (am_coll/coll/coll_engine.c) */
    int                cached;
    size_t            *vsig;        /* vector forms: the counts and displacements it
                                     * was built from (am_coll/coll/coll_cache.c) */
    size_t             nvsig;
    struct amc_sched  *next;        /* the communicator's cache */
} amc_sched_t;

/* Filling a schedule. Errors (out of memory) are remembered and reported by
 * finish, so algorithms need not check every call. */
typedef struct amc_sched_edge {
    uint32_t act;
    uint32_t dep;
} amc_sched_edge_t;

typedef struct amc_sched_builder {
    amc_sched_t      *sched;
    uint32_t          cap_rounds;
    uint32_t          cap_acts;
    amc_sched_edge_t *edges;      /* explicit requires edges (amc_sb_requires) */
    uint32_t          nedges;
    uint32_t          cap_edges;
    int               status;
} amc_sched_builder_t;

int  amc_sb_init(amc_sched_builder_t *b);
/* A new round: its acts require every act of the round before (the LibNBC
 * shorthand). Within a round, copies and reductions run first, in the order
 * added, then its sends and receives start. */
void amc_sb_round(amc_sched_builder_t *b);
/* A new round whose acts require only what amc_sb_requires says: for
 * algorithms that gain from finer edges (a pipeline forwards each segment
 * as it lands). */
void amc_sb_stage(amc_sched_builder_t *b);
/* The index of the act added last (for amc_sb_requires), or -1. */
int  amc_sb_last(const amc_sched_builder_t *b);
/* act may start only once dep is done (dep added before act). */
void amc_sb_requires(amc_sched_builder_t *b, int act, int dep);
void amc_sb_send(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes);
void amc_sb_recv(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes);
/* right: the local value is the left operand, the message the right one */
void amc_sb_recv_reduce(amc_sched_builder_t *b, int peer, int buf, size_t off, size_t bytes,
                        int right);
void amc_sb_copy(amc_sched_builder_t *b, int dst, size_t dst_off, int src, size_t src_off,
                 size_t bytes);
void amc_sb_reduce(amc_sched_builder_t *b, int dst, size_t dst_off, int src, size_t src_off,
                   size_t bytes, int right);
void amc_sb_tmp(amc_sched_builder_t *b, size_t bytes);  /* at least this much scratch */
/* A stamp of value at buf[off] (AMC_SCHED_STAMP_BYTES), and its check at
 * the other end: the block that came from peer carries value there, or the
 * ranks' counts disagree. */
void amc_sb_stamp(amc_sched_builder_t *b, int buf, size_t off, uint64_t value);
void amc_sb_check(amc_sched_builder_t *b, int buf, size_t off, uint64_t value, int peer);
/* The receive act: a message of another length than it expects aborts the
 * instance and tells the other ranks, instead of failing it and running
 * on; for messages whose contents are found by a layout both ends compute
 * (Bruck's slots), where a sender that laid them out otherwise would make
 * everything after misread. */
void amc_sb_exact(amc_sched_builder_t *b, int act);
/* An act that does nothing but take its place in the graph (GOAL's calc:
 * its cost is for simulators, not run here). */
void amc_sb_nop(amc_sched_builder_t *b);
/* Another scratch buffer of bytes, one per instance: its name (a buffer
 * index for the acts), or -1 when all AMC_NBUFS are taken (an error that
 * amc_sb_finish reports). */
int  amc_sb_buffer(amc_sched_builder_t *b, size_t bytes);
/* Numbers the messages per peer, drops empty trailing rounds, turns rounds
 * and explicit edges into the dependency graph; on success *sched_p is the
 * schedule. */
int  amc_sb_finish(amc_sched_builder_t *b, amc_sched_t **sched_p);
void amc_sched_free(amc_sched_t *sched);

/* Where an instance's scratch holds the copy of a reduction's operand
 * (after the scratch and the staging area, aligned for any datatype), and
 * the scratch's whole size. */
static inline size_t amc_sched_reduce_off(const amc_sched_t *s)
{
    return (s->stage_off + s->stage_bytes + 63) & ~(size_t)63;
}

static inline size_t amc_sched_scratch_bytes(const amc_sched_t *s)
{
    return (s->reduce_bytes > 0) ? amc_sched_reduce_off(s) + s->reduce_bytes
                                 : s->stage_off + s->stage_bytes;
}

/* Bytes of named buffer buf that the schedule owns (scratch), or 0 for the
 * caller's buffers. */
static inline size_t amc_sched_buf_bytes(const amc_sched_t *s, int buf)
{
    return (buf == AMC_BUF_TMP) ? s->tmp_bytes : (buf > AMC_BUF_TMP) ? s->buf_bytes[buf] : 0;
}

/* After the caller changed the tags of a finished schedule (GOAL pairs
 * messages by its own matching, am_coll/goal/goal.c): the arrival index and the
 * last flags again. ntags[peer * 2 + (0 send, 1 receive)] is how many
 * messages go each way; npeers the size of the communicator. */
int  amc_sched_retag(amc_sched_t *sched, const uint32_t *ntags, int npeers);

/* The receive act for the tag-th message from peer, or -1. O(log receives). */
int  amc_sched_find_recv(const amc_sched_t *sched, int peer, uint32_t tag);

#endif
