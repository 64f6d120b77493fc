/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scheduled collectives: the running instance that the handlers advance
 * (am_coll/coll/coll_engine.c), over what a call asks for and the
 * algorithms that turn it into a schedule (am_coll/alg/coll_args.h).
 */
#ifndef AMC_COLL_H
#define AMC_COLL_H

#include "am_coll/alg/coll_args.h"
#include "am_coll/context/defer.h"
#include "am_coll/context/op.h"
#include "am_coll/sched/sched.h"
#include "ctrl/coll_ctrl.h"
#include "handlers/wire.h"
#include "transport/transport.h"
#include "amcoll.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct amc_comm;
struct amc_context;
struct amc_request;
struct amc_topo;

/* One message of an instance. A send's header lives here until the send
 * completes; a receive whose data was left at the sender is fetched through
 * it (into scratch first when it is to be reduced). */
typedef struct amc_coll_xfer {
    amc_completion_t      comp;
    struct amc_coll_inst *inst;
    amc_wire_packed_t     wire;       /* a send's header, credits added when posted */
    uint32_t              wire_len;   /* without the credits */
    void                 *scratch;
    amc_defer_op_t        fetch;      /* the pull, queued until the lock is released */
} amc_coll_xfer_t;

/* Per act of an instance (amc_coll_inst_t.state). */
enum {
    AMC_ACT_READY = 1,  /* everything it requires is done: a receive accepts its message */
    AMC_ACT_DONE  = 2,
    AMC_ACT_SEEN  = 4,  /* a receive's message arrived (early or in place) */
    AMC_ACT_PULL  = 8,  /* a receive's data is being pulled from its sender */
    AMC_ACT_OUT   = 16  /* local work taken by amc_coll_issue_sends, running unlocked */
};

/*
 * A running collective: the schedule's dependency graph executed GOAL's way.
 * Every act has a count of what it still waits for; when an act is done its
 * successors' counts drop, and those that reach zero go to the ready queue.
 * A ready local act runs at once, a ready send waits in the send queue until
 * the lock is released, a ready receive takes its message if it came early
 * (kept per act in early[]) or when it comes. All of it under ctrl->lock,
 * except what amc_coll_issue_sends takes from the send queue: posting the
 * sends, and local work of AMC_DEFER_BYTES or more (coll_engine.c says
 * which).
 */
typedef struct amc_coll_inst {
    amc_sched_t         *sched;
    struct amc_comm     *comm;
    amc_coll_slot_t     *slot;
    unsigned char       *buf[AMC_NBUFS];
    void                *tmp;
    amc_op_bound_t       op;          /* bound at start: handlers reduce without a lookup */
    amc_datatype_t       dt;
    size_t               dt_size;
    uint8_t              coll;
    int32_t              root;
    uint32_t             left;        /* acts not done yet */
    uint32_t             nready;      /* ready[0..nready): to be run by amc_coll_advance */
    uint32_t             sendq_head;  /* sendq[head..tail): ready sends (and big local
                                       * work) not taken yet */
    uint32_t             sendq_tail;
    uint32_t             send_busy;   /* taken from sendq: sends not complete, local
                                       * work running outside the lock */
    uint32_t             local_busy;  /* of those, the copies and reductions: they write
                                       * into the caller's buffers */
    uint32_t             pins;        /* amc_coll_issue_sends calls that may still read it */
    int                  started;     /* the roots were queued */
    int                  status;      /* first error: reported when it finishes */
    int                  aborted;     /* mismatch: request failed, waits only for its sends */
    int                  finished;    /* released: nothing may touch it (pins keep it alive) */
    uint32_t             fetch_busy;  /* pulls queued or in flight: they write into it */
    uint8_t              alg;         /* its algorithm's id, sent in every header */
    /* A bcast this rank forwards before it called bcast itself: the data
     * lives in fwd_buf until the call adopts the instance. */
    int                  forwarding;
    int                  fwd_token_peer; /* the sender whose tokens fwd_buf holds, or -1 */
    uint32_t             fwd_tokens;     /* how many (amc_flow_cost of its length) */
    unsigned char       *fwd_buf;
    int                  fwd_done;    /* forwarded everything; waits for the call */
    int                  adopted;     /* this rank's call came (its request may be freed
                                       * since: slot->req says nothing about the call) */
    void                *user_buf;    /* set by the call that adopts it */
    size_t               user_bytes;
    amc_coll_xfer_t     *xfers;       /* [nacts]; SEND and RECV* entries */
    uint32_t            *pending;     /* [nacts] acts each still requires */
    uint32_t            *ready;       /* [nacts] */
    uint32_t            *sendq;       /* [nacts] */
    amc_early_msg_t    **early;       /* [nacts] a receive's message, come before it was ready */
    uint8_t             *state;       /* [nacts] AMC_ACT_* */
} amc_coll_inst_t;

/* Events of amc_context_t.act_trace. */
enum {
    AMC_ACT_TRACE_READY, /* everything the act requires is done; it starts */
    AMC_ACT_TRACE_DONE
};

/* Bytes of an instance of sched, its per-act arrays included. */
size_t amc_coll_inst_size(const amc_sched_t *sched);

/* args = call, with what the engine's algorithms read of the communicator
 * and the configuration (segment sizes, nodes); an error (logged) when
 * there is no memory for the nodes. */
int  amc_coll_args_fill(struct amc_comm *comm, const amc_coll_args_t *call,
                        amc_coll_args_t *args);

/* The call with what it needs before it starts (the configuration's
 * segment sizes, comm's nodes) into args, and the algorithm chosen for it
 * into *alg_p; an error (logged) when there is none or no memory. */
int  amc_coll_select(struct amc_comm *comm, const amc_coll_args_t *call, amc_coll_args_t *args,
                     const amc_alg_t **alg_p);

/* Starts args (selected) as alg's schedule on comm; req completes when this
 * rank's part is done. amc_coll_start (am_coll/api/coll_start.h) chooses
 * between this engine and the barrier's rounds. */
int  amc_coll_start_alg(struct amc_comm *comm, const amc_coll_args_t *args,
                        const amc_alg_t *alg, struct amc_request *req);

/* Selects and starts a call on this engine, whatever the algorithm's flags. */
int  amc_coll_start_engine(struct amc_comm *comm, const amc_coll_args_t *args,
                           struct amc_request *req);

/* Tests: runs sched, built by the caller and taken over (freed with its
 * instance, or at once on an error), as args describes the call (kind,
 * root, buffers, datatype, op); req completes as with amc_coll_start_alg. */
int  amc_coll_start_sched(struct amc_comm *comm, const amc_coll_args_t *args, amc_sched_t *sched,
                          struct amc_request *req);

/* As amc_coll_start_sched, but the caller keeps sched (cached: a finished
 * instance stays as its spare for the next start) and releases it with
 * amc_coll_sched_release once sched->users is 0 under ctrl->lock, or, with
 * instances still running, clears cached so that the last one frees it. */
int  amc_coll_start_kept(struct amc_comm *comm, const amc_coll_args_t *args, amc_sched_t *sched,
                         struct amc_request *req);

/* A call whose own arguments failed its checks with status (api_coll.c):
 * it still takes its instance's place in comm's order, abandons it, and
 * tells the other ranks (amc_coll_notify_abort), whose calls fail with
 * status instead of waiting for this rank's part. */
void amc_coll_start_failed(struct amc_comm *comm, const amc_coll_args_t *args, int status);

/* Handler side: data of a binomial bcast this rank has not entered yet. Starts
 * an instance that forwards it to this rank's children at once (the patent's
 * third example); AMC_SUCCESS if it took the message. With ctrl->lock held. */
int  amc_coll_forward_start(struct amc_comm *comm, amc_coll_slot_t *slot,
                            const amc_wire_hdr_t *hdr, size_t len, amc_coll_inst_t **inst_p);

/* With ctrl->lock held: the call that finds a forwarding instance in its slot
 * takes it over (or fails it with AMC_ERR_PROTOCOL / AMC_ERR_TRUNCATE when
 * the call, or the algorithm it chose, disagrees with what was forwarded). */
void amc_coll_adopt(amc_coll_inst_t *fwd, struct amc_request *req, const amc_coll_args_t *args,
                    const amc_alg_t *alg);

/* Schedule cache (am_coll/coll/coll_cache.c). The schedule of a call's shape,
 * found or built (vector forms: built per call); with ctrl->lock held. */
int  amc_coll_sched_get(struct amc_comm *comm, const amc_alg_t *alg, const amc_coll_args_t *args,
                        amc_sched_t **sched_p);

/* An instance of sched for this call: the schedule's spare, or a new one. */
int  amc_coll_inst_new(struct amc_comm *comm, const amc_coll_args_t *args, const amc_alg_t *alg,
                       amc_sched_t *sched, amc_coll_inst_t **inst_p);

/* A finished instance: kept as its cached schedule's spare, or freed. */
void amc_coll_inst_free(amc_coll_inst_t *inst);

/* Teardown of a running instance: also frees the messages kept for its
 * receives (amc_coll_inst_free expects none). */
void amc_coll_inst_discard(amc_coll_inst_t *inst);

/* Frees a schedule and its spare instance. */
void amc_coll_sched_release(amc_sched_t *sched);

/* The engine's handlers (am_coll/coll/coll_engine.c). */
void amc_coll_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                         size_t len, void *desc);

/* With ctrl->lock held: runs what is ready, finishes the instance when all
 * is done; returns 1 if sends wait to be posted (the caller then calls
 * amc_coll_issue_sends after unlocking), else 0. */
int  amc_coll_advance(amc_coll_inst_t *inst);

/* Without the lock: posts the queued sends, until none is left. */
void amc_coll_issue_sends(amc_coll_inst_t *inst);

/* Abort notices (am_coll/coll/coll_notice.c). Tells every other rank of comm that
 * this rank gave up instance seq, which ends there with status instead of
 * waiting for this rank; queued, sent by the next amc_context_flush (with or
 * without ctrl->lock held). */
void amc_coll_notify_abort(struct amc_comm *comm, uint64_t seq, uint8_t coll, int32_t root,
                           int status);

/* Tells every live rank of the job that transport rank dead is dead
 * (AMC_WIRE_DEAD): for deaths this rank found itself (am_coll/context/peer_watch.c). */
void amc_coll_notify_dead(struct amc_context *ctx, int dead);

/* hdr with len bytes of data (copied) to the ndest transport ranks of dest,
 * eager, from the next amc_context_flush, kept until sent (lost only with
 * the transport). AMC_ERR_NO_MEMORY: nothing sent. */
int  amc_coll_notice_to(struct amc_context *ctx, const amc_wire_hdr_t *hdr, const void *data,
                          size_t len, const int *dest, int ndest);

/* At the context's destruction, after the transport's: notices whose sends
 * never completed (a transport that dropped them) are freed. */
void amc_coll_notices_free(struct amc_context *ctx);

/* The error a received notice carries (AMC_ERR_PROTOCOL if it is none). */
int  amc_coll_notice_status(const amc_wire_hdr_t *hdr);

/* With ctrl->lock held: the call gives up its running instance with status
 * (its timeout passed, an error was left on the communicator). The caller's
 * buffers are never touched after the request completes: the instance is
 * aborted (late messages for it are dropped, the other ranks are told, and
 * their calls fail with status too), and the request completes once no
 * pull into them is in flight. Flush the context after unlocking (the
 * notices). */
void amc_coll_cancel(amc_coll_inst_t *inst, int status);

/* With ctrl->lock held: what the instance waits for, for a timeout message. */
void amc_coll_describe(const amc_coll_inst_t *inst, char *buf, size_t len);

/* amc_engines_t's inst_fail (am_coll/context/engines.h): a wait gives up on
 * req, whose slot runs inst. */
int  amc_coll_fail_request(amc_coll_inst_t *inst, struct amc_request *req, int status,
                           int timed_out, char *why, size_t len);

#endif
