/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll: MPI-style collective operations run directly on UCX active messages.
 *
 * This header is the contract: what each call does, its arguments and its
 * errors are documented beside it. Every function returns AMC_SUCCESS (0) or
 * a positive error code (amc_strerror says which); none aborts the process.
 */
#ifndef AMCOLL_H
#define AMCOLL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AMC_VERSION_MAJOR 0
#define AMC_VERSION_MINOR 1

enum {
    AMC_SUCCESS = 0,
    AMC_ERR_ARG,
    AMC_ERR_COMM,
    AMC_ERR_NO_MEMORY,
    AMC_ERR_TRUNCATE,
    AMC_ERR_PROTOCOL,
    AMC_ERR_PEER,
    AMC_ERR_TIMEOUT,
    AMC_ERR_TRANSPORT,
    AMC_ERR_NOT_INITIALIZED,
    AMC_ERR_UNSUPPORTED,
    AMC_ERR_REVOKED,    /* the communicator was revoked (amc_comm_revoke) */
    AMC_ERR_LAST /* one past the last code; not a status */
};

typedef struct amc_comm    *amc_comm_t;
typedef struct amc_request *amc_request_t;

#define AMC_COMM_NULL    ((amc_comm_t)0)
#define AMC_REQUEST_NULL ((amc_request_t)0)

typedef enum {
    AMC_BYTE, AMC_CHAR, AMC_INT8, AMC_INT16, AMC_INT32, AMC_INT64,
    AMC_UINT8, AMC_UINT16, AMC_UINT32, AMC_UINT64,
    AMC_INT, AMC_LONG, AMC_FLOAT, AMC_DOUBLE
} amc_datatype_t;

/* The predefined ops, with MPI's rules: AMC_SUM, AMC_PROD, AMC_MIN and
 * AMC_MAX apply to every type but AMC_BYTE and AMC_CHAR, the logical and
 * bitwise ones to the integer types only (another pair is AMC_ERR_ARG). */
typedef int amc_op_t;
enum {
    AMC_SUM, AMC_PROD, AMC_MIN, AMC_MAX, AMC_LAND, AMC_LOR, AMC_LXOR,
    AMC_BAND, AMC_BOR, AMC_BXOR
};

/* A user reduction: inout[i] = in[i] (op) inout[i] for i < count. */
typedef void (*amc_user_fn_t)(const void *in, void *inout, size_t count, amc_datatype_t dt);
/* The same with the data given to amc_op_create_data: one function serves
 * many ops (a layer above maps its own ops onto amcoll's through it). */
typedef void (*amc_user_data_fn_t)(const void *in, void *inout, size_t count, amc_datatype_t dt,
                                   void *data);

#define AMC_IN_PLACE  ((void *)(-1L))
#define AMC_UNDEFINED (-32766)

enum {
    AMC_THREAD_SINGLE     = 0,
    AMC_THREAD_SERIALIZED = 2,
    AMC_THREAD_MULTIPLE   = 3
};

/* Environment */
/* amc_init_thread at AMC_THREAD_SINGLE. */
int         amc_init(int *argc, char ***argv);
/* Starts amcoll in this process, once: reads the AMC_* variables (amc_info
 * lists them), joins the job through PMIx (mpirun, srun --mpi=pmix,
 * prterun; run with no launcher, a job of one), opens UCX and makes
 * AMC_COMM_WORLD. Every rank of the job calls it. argc and argv are not
 * used (they may be NULL). required is an AMC_THREAD_* level; 1 (MPI's
 * FUNNELED) gets AMC_THREAD_SERIALIZED; *provided is the level granted.
 * AMC_ERR_ARG: a second call, a level out of range, a NULL provided or a
 * bad AMC_* value; AMC_ERR_NOT_INITIALIZED after amc_finalize (amcoll does
 * not start again); AMC_ERR_TRANSPORT when PMIx or UCX fails;
 * AMC_ERR_NO_MEMORY. A call that fails leaves amcoll uninitialized. */
int         amc_init_thread(int *argc, char ***argv, int required, int *provided);

/* Starting where no PMIx server is (MPICH's Hydra, srun --mpi=pmi2, a
 * vendor launcher): what a runtime that already started the job tells
 * amcoll instead. Every rank of the job calls amc_init_boot at once with
 * the same size; the callbacks run inside amc_init_boot (allgather, up to
 * three times) and inside amc_finalize (barrier, twice), on the calling
 * thread. */
typedef struct amc_boot {
    int   rank;     /* this process, in [0, size) */
    int   size;     /* the job's ranks */
    int   node;     /* >= 0: ranks with the same value share a node (memory) */
    void *arg;      /* the callbacks' first argument */
    /* Every rank's len bytes of mine, in rank order, into all (size * len
     * bytes); 0 on success. Non-zero gives the start up (AMC_ERR_TRANSPORT),
     * logged at debug level only: the caller says why. */
    int (*allgather)(void *arg, const void *mine, void *all, size_t len);
    /* Returns 0 once every rank has entered it. While it waits it calls
     * progress(ctx) now and then (amcoll's own transport must move meanwhile);
     * progress returns non-zero when amcoll gives up (a peer died, a
     * deadline passed): return non-zero then, without waiting further. */
    int (*barrier)(void *arg, int (*progress)(void *ctx), void *ctx);
} amc_boot_t;

/* amc_init_thread over boot (copied; its arg and callbacks stay valid
 * until amc_finalize returns). AMC_ERR_ARG: a NULL boot, a bad rank, size,
 * node or a missing callback; AMC_ERR_TRANSPORT: a callback failed. */
int         amc_init_boot(int *argc, char ***argv, int required, int *provided,
                          const amc_boot_t *boot);
/* Ends amcoll in this process; every rank calls it. It waits for the other
 * ranks at most AMC_FINALIZE_TIMEOUT seconds (a rank known dead not at
 * all), and AMC_STATS=1 prints the counters first (amc_stat_get).
 * Collectives still pending are abandoned (their handles die with the
 * library); their peers may then wait for them, as for any rank that stops
 * taking part. AMC_ERR_NOT_INITIALIZED when amcoll is not running (never
 * started, or already finalized). */
int         amc_finalize(void);
/* *flag: 1 between a successful amc_init and amc_finalize, else 0. Callable
 * at any time; AMC_ERR_ARG for a NULL flag. */
int         amc_initialized(int *flag);
/* Seconds on a monotonic clock from an arbitrary start, for intervals on
 * this process (not synchronized between ranks); callable at any time. */
double      amc_wtime(void);
/* A layer above with progress of its own (an MPI library whose collectives
 * run here) registers fn: every wait of the library calls it on each idle
 * pass once the wait stops spinning, and sleeps at most 1 ms at a time, so
 * that a peer waiting for that layer's messages from this process is not
 * held up while it waits here. Only the threads that wait call it, never
 * the progress thread. NULL removes it. Set it before starting collectives;
 * AMC_ERR_NOT_INITIALIZED before amc_init. */
int         amc_set_idle_hook(void (*fn)(void *arg), void *arg);
/* A counter of this process's library instance, by name: "ranks" (the job
 * size), "endpoints" (UCX endpoints this rank created: one per peer it has
 * sent to by UCX, made on the first such message), "mailboxes_out" and
 * "mailboxes_in" (shared-memory mailbox rings this rank writes into, one
 * per peer on its node it has sent to, and reads from; AMC_SHM),
 * "flow_peers" (peers this rank keeps
 * flow-control state for: those it exchanged data with), "flow_bytes" (the
 * memory of that state), "within_done" (blocking barriers and small
 * collectives on the barrier's rounds that ran within their call, reading
 * each round's message straight from the partner's mailbox) and
 * "within_left" (those that began so but finished on the barrier's
 * machine: something else came first, a peer was late or a message could
 * not go at once), "api_memo" (blocking calls that repeated their communicator's
 * last one on those rounds, the same arguments, and skipped its checks).
 * AMC_ERR_ARG for an unknown name or a NULL
 * argument, AMC_ERR_NOT_INITIALIZED outside amc_init .. amc_finalize.
 * AMC_STATS=1 prints them all at amc_finalize. */
int         amc_stat_get(const char *name, unsigned long long *value);
/* A short English text for a status code (a static string, never NULL;
 * "unknown amcoll status code" for a code that is none). Callable at any
 * time. */
const char *amc_strerror(int code);

/* Communicators. A call given a communicator returns AMC_ERR_COMM for a
 * handle that is no live communicator (AMC_COMM_NULL included), and
 * AMC_ERR_NOT_INITIALIZED after amc_finalize or, for AMC_COMM_NULL, before
 * amc_init. */
/* Every rank of the job, in job rank order; AMC_COMM_NULL when amcoll is
 * not running. It cannot be freed. */
amc_comm_t amc_comm_world(void);
#define AMC_COMM_WORLD (amc_comm_world())
/* This rank's rank in comm, in [0, size); AMC_ERR_ARG for a NULL rank. */
int amc_comm_rank(amc_comm_t comm, int *rank);
/* comm's number of ranks; AMC_ERR_ARG for a NULL size. */
int amc_comm_size(amc_comm_t comm, int *size);
/* A new communicator of comm's ranks in comm's order, whose collectives
 * never mix with comm's. Collective over comm (one agreement collective, in
 * comm's order like any other). AMC_ERR_ARG for a NULL newcomm. A failure
 * on any rank (memory, out of ids: AMC_ERR_NO_MEMORY) fails the call on
 * every rank with the same code and *newcomm AMC_COMM_NULL; an agreement
 * that itself fails (a timeout, a dead peer) fails on the ranks it failed
 * on. */
int amc_comm_dup(amc_comm_t comm, amc_comm_t *newcomm);
/* Non-blocking dup: starts the creation's agreement, a collective on comm in
 * its order like any other; *newcomm is written when req completes (test,
 * wait, any array form), AMC_COMM_NULL if the members agreed on a failure.
 * amc_request_free on it while it runs leaves *newcomm untouched. */
int amc_comm_idup(amc_comm_t comm, amc_comm_t *newcomm, amc_request_t *req);
/* As MPI_Comm_split: one new communicator per color, of the ranks of comm
 * that passed it, ordered by key (ties by rank in comm); color
 * AMC_UNDEFINED takes part and gets AMC_COMM_NULL. Collective over comm,
 * and fails as amc_comm_dup does (on every rank, every color, with one
 * code). AMC_ERR_ARG: a NULL newcomm, a color neither >= 0 nor
 * AMC_UNDEFINED. */
int amc_comm_split(amc_comm_t comm, int color, int key, amc_comm_t *newcomm);
/* Local: the handle dies now and *comm becomes AMC_COMM_NULL; collectives
 * already started on it still complete, and the communicator goes when the
 * last one has. AMC_ERR_ARG for a NULL comm, AMC_ERR_COMM for the world or
 * a handle that is no live communicator. */
int amc_comm_free(amc_comm_t *comm);

/* Going on after a failure (doc/design.md, "Revoke, agree and shrink"), as
 * MPI's fault tolerance proposal (MPIX_Comm_revoke/agree/shrink) does. */
/* Marks comm revoked on every live rank: this rank's and every other
 * rank's pending and later collectives, dups, splits and persistent starts
 * on it end with AMC_ERR_REVOKED (a revoked communicator takes that code
 * before AMC_ERR_PEER), whether or not a rank saw a failure itself; only
 * amc_comm_agree, amc_comm_shrink, amc_comm_failed and amc_comm_free still
 * work on it. Local and non-blocking: the notice spreads by the handlers.
 * Revoking twice is no error. */
int amc_comm_revoke(amc_comm_t comm);
/* A fault-tolerant agreement over comm, revoked or not: every rank of comm
 * calls it (agreements on comm are matched by their order, apart from its
 * collectives), and every rank that returns gets the same *flag, the
 * bitwise AND of the flags of the ranks that took part, and the same code:
 * AMC_SUCCESS, or AMC_ERR_PEER when ranks of comm failed before or during
 * it (the same failed set everywhere, included in amc_comm_failed from
 * then on). Returns even if ranks die while it runs (a death known to the
 * transport ends the wait for that rank at once, no timeout). AMC_ERR_ARG
 * for a NULL flag; AMC_ERR_UNSUPPORTED for a communicator of more than
 * 1024 ranks; AMC_ERR_TIMEOUT past AMC_TIMEOUT, if set. */
int amc_comm_agree(amc_comm_t comm, int *flag);
/* A new communicator of the ranks of comm (revoked or not) still alive, in
 * comm's order, agreed on by them all as amc_comm_agree agrees: a rank that
 * dies during the shrink is a member on every rank or on none (a member
 * that died makes the new one fail with AMC_ERR_PEER: shrink it again).
 * Every rank of comm alive calls it. The new communicator is like any
 * other (collectives, dup, split, persistent requests; free it with
 * amc_comm_free). Returns AMC_SUCCESS even when ranks failed; AMC_ERR_ARG
 * for a NULL newcomm; otherwise as amc_comm_agree, with *newcomm
 * AMC_COMM_NULL. */
int amc_comm_shrink(amc_comm_t comm, amc_comm_t *newcomm);
/* Local: the ranks of comm that this rank knows have failed, in increasing
 * order, at most max of them written to ranks; *count: how many there are
 * (may be more than max). AMC_ERR_ARG for a NULL count, or NULL ranks with
 * max > 0. */
int amc_comm_failed(amc_comm_t comm, int *ranks, int max, int *count);
/* For a host library that agrees on its communicators itself (the Open MPI
 * component): amc_comm_id_reserve gives, on one rank (the leader), an id no
 * other creation in the job uses; the host passes it to the other members by
 * its own means; then every member, and only the members, calls
 * amc_comm_create_group with the members' ranks in comm (in the new
 * communicator's order: ranks[i] becomes rank i) and that id. Local: nothing
 * is sent, so a member that fails must tell the others by the host's means
 * too. Each id serves one creation. */
/* *id: an id with this rank as the leader, which no other creation in the
 * job, on any rank, ever makes (doc/design.md, "Context ids"); comm only
 * names the library: any live communicator this rank is in. AMC_ERR_ARG
 * for a NULL id; AMC_ERR_NO_MEMORY once this rank's ids have run out. */
int amc_comm_id_reserve(amc_comm_t comm, uint64_t *id);
/* The communicator of comm's ranks[0 .. n), with id, made on this rank
 * alone. AMC_ERR_ARG: ranks or newcomm NULL, n not in [1, comm's size], a
 * rank not in comm, this rank not among them, or an id no reservation makes
 * (0, 1: any other id is trusted to come from amc_comm_id_reserve);
 * AMC_ERR_COMM: this rank already has a communicator with that id (an id
 * used twice); AMC_ERR_NO_MEMORY. A call that fails makes nothing. */
int amc_comm_create_group(amc_comm_t comm, const int ranks[], int n, uint64_t id,
                          amc_comm_t *newcomm);


/* Reduction operations; amc_op_free sets *op to an invalid handle */
/* A user op over any datatype, fn as amc_user_fn_t says. commute non-zero:
 * the algorithms may combine the ranks' values in any order; 0: in rank
 * order, as MPI (some algorithms then give way to others). Handles belong
 * to the process, not to one amc_init: they may be made before it.
 * AMC_ERR_ARG for a NULL fn or op, AMC_ERR_NO_MEMORY, and
 * AMC_ERR_NOT_INITIALIZED after amc_finalize. */
int amc_op_create(amc_user_fn_t fn, int commute, amc_op_t *op);
/* A collective binds its op when it starts: it completes with the function
 * and data it started with even if the op is freed meanwhile, so data must
 * live until the collectives started with the op are complete. */
int amc_op_create_data(amc_user_data_fn_t fn, void *data, int commute, amc_op_t *op);
/* Frees a user op (its handle may be handed out again later). AMC_ERR_ARG
 * for a NULL op, a predefined op or a handle that is no live user op;
 * AMC_ERR_NOT_INITIALIZED after amc_finalize. */
int amc_op_free(amc_op_t *op);

/* Collectives */
/* Returns once every rank of comm has entered the barrier. Fails as a data
 * collective does (below): AMC_ERR_COMM, AMC_ERR_TIMEOUT, AMC_ERR_PEER, ... */
int amc_barrier(amc_comm_t comm);
/* The barrier started; *req completes once every rank has entered it. A
 * NULL req is AMC_ERR_ARG here, and the other ranks' barriers fail with
 * AMC_ERR_ARG instead of waiting for this one. */
int amc_ibarrier(amc_comm_t comm, amc_request_t *req);

/* Data collectives, as in MPI-1 but with a per-rank count and one datatype for both sides.
 *
 * Argument errors are AMC_ERR_ARG (or AMC_ERR_TRUNCATE for a rank's block to
 * itself in a v-form). An invalid communicator, datatype, op, root or count
 * is in every rank's call alike: every rank finds it, and the call starts
 * nothing. An invalid argument only this rank's call carries (its buffers,
 * AMC_IN_PLACE where it is not allowed, the root's counts, displacements and
 * larger buffer, a v-form's counts, a non-blocking call's NULL request
 * pointer, amc_ibarrier's included) cannot be seen by the others: the call
 * still takes its place in the communicator's order and tells the other
 * ranks, whose calls return or complete with AMC_ERR_ARG instead of waiting
 * for its part (or succeed, if their part was already done). The persistent
 * forms (amc_X_init) only refuse such a call.
 *
 * A call that fails (a timeout, calls that disagree, a peer's error) never
 * touches its buffers after it returned or its request completed: the
 * collective is abandoned on every rank, whose calls fail with the same
 * error unless their part was already done. Calls that disagree in a way
 * no rank sees before its call returns (a bcast root that only sends) are
 * logged when the stray message arrives; they never fail a later call.
 *
 * count is in elements of dt: one rank's part (its block, or the vector
 * reduced). A buffer of "size blocks" holds one block per rank of comm,
 * one after the other in rank order. AMC_IN_PLACE is allowed only where a
 * call's comment says. */
/* The root's count elements of buf into every other rank's buf. */
int amc_bcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm);
/* The ranks' sendbufs combined by op, element by element, into the root's
 * recvbuf (other ranks' recvbuf is not used). The root's sendbuf may be
 * AMC_IN_PLACE: its input is then in recvbuf. */
int amc_reduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
               amc_op_t op, int root, amc_comm_t comm);
/* amc_reduce with the result on every rank; sendbuf AMC_IN_PLACE: the input
 * is in recvbuf. */
int amc_allreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_op_t op, amc_comm_t comm);
/* Every rank's block into the root's recvbuf (size blocks; other ranks'
 * recvbuf is not used). The root's sendbuf may be AMC_IN_PLACE: its own
 * block is already in place in recvbuf. */
int amc_gather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
               amc_comm_t comm);
/* Block i of the root's sendbuf (size blocks) into rank i's recvbuf; other
 * ranks' sendbuf is not used. The root's recvbuf may be AMC_IN_PLACE: its
 * own block stays in sendbuf. */
int amc_scatter(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                amc_comm_t comm);
/* amc_gather with the result on every rank; sendbuf AMC_IN_PLACE: this
 * rank's block is already in place in recvbuf. */
int amc_allgather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm);
/* Block i of every rank's sendbuf to rank i, where it lands as block j of
 * recvbuf for sender j (both buffers size blocks). sendbuf AMC_IN_PLACE:
 * the blocks sent are recvbuf's, replaced by those received. */
int amc_alltoall(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                 amc_comm_t comm);
/* The ranks' sendbufs (size blocks each) combined by op; block i of the
 * result into rank i's recvbuf. sendbuf AMC_IN_PLACE: the input is in
 * recvbuf (size blocks), and the result goes to its first block. */
int amc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count,
                             amc_datatype_t dt, amc_op_t op, amc_comm_t comm);
/* Rank i's recvbuf: the sendbufs of ranks 0 .. i combined by op. sendbuf
 * AMC_IN_PLACE: the input is in recvbuf. */
int amc_scan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
             amc_comm_t comm);
/* As amc_scan over ranks 0 .. i - 1. Rank 0's recvbuf is not written; it
 * may be NULL unless rank 0's sendbuf is AMC_IN_PLACE. */
int amc_exscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
               amc_comm_t comm);
/* Vector forms: counts and displacements in elements, as in MPI. Arrays
 * indexed by rank hold comm's size entries; only the root's are read in
 * the rooted forms. The block a rank sends itself must be as long on both
 * sides: AMC_ERR_TRUNCATE otherwise. */
/* Each rank's sendcount elements into the root's recvbuf: rank i's
 * recvcounts[i] at displs[i]. The root's sendbuf may be AMC_IN_PLACE: its
 * own block is already in place. */
int amc_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t recvcounts[],
                const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm);
/* sendcounts[i] elements at displs[i] of the root's sendbuf into rank i's
 * recvbuf (recvcount elements). The root's recvbuf may be AMC_IN_PLACE: its
 * own block stays in sendbuf. */
int amc_scatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                 void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm);
/* amc_gatherv with the result on every rank (every rank passes recvcounts
 * and displs); sendbuf AMC_IN_PLACE: this rank's block is already in
 * place. */
int amc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                   const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                   amc_comm_t comm);
/* sendcounts[i] elements at sdispls[i] to rank i; recvcounts[j] elements
 * from rank j at rdispls[j]. sendbuf AMC_IN_PLACE: the blocks sent are the
 * receive blocks, replaced by those received (sendcounts and sdispls are
 * not read). */
int amc_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                  void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                  amc_datatype_t dt, amc_comm_t comm);
/* The ranks' sendbufs (the sum of recvcounts elements each) combined by op;
 * rank i gets recvcounts[i] elements of the result, those after the blocks
 * of ranks below it. sendbuf AMC_IN_PLACE: the input is in recvbuf, and
 * the result goes to its start. */
int amc_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                       amc_datatype_t dt, amc_op_t op, amc_comm_t comm);

/* Non-blocking (and blocking) starts: a rank may have at most 8 + AMC_EARLY_MAX
 * collectives started on one communicator counted from the oldest that has not
 * finished on this rank. A start beyond that is AMC_ERR_NO_MEMORY and starts
 * nothing, not even its place in the communicator's order: complete some
 * requests and make the same call again (every rank must still make every
 * call, in the same order).
 *
 * amc_iX takes amc_X's arguments, with the same rules and errors, and *req:
 * the handle that amc_test, amc_wait and their array forms complete and
 * release, returning the collective's status. The buffers belong to the
 * collective until then. */
int amc_ibcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm,
               amc_request_t *req);
int amc_ireduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                amc_op_t op, int root, amc_comm_t comm, amc_request_t *req);
int amc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                   amc_op_t op, amc_comm_t comm, amc_request_t *req);
int amc_igather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                amc_comm_t comm, amc_request_t *req);
int amc_iscatter(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                 amc_comm_t comm, amc_request_t *req);
int amc_iallgather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                   amc_comm_t comm, amc_request_t *req);
int amc_ialltoall(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm, amc_request_t *req);
int amc_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count,
                              amc_datatype_t dt, amc_op_t op, amc_comm_t comm,
                              amc_request_t *req);
int amc_iscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
              amc_comm_t comm, amc_request_t *req);
int amc_iexscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                amc_op_t op, amc_comm_t comm, amc_request_t *req);
int amc_igatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t recvcounts[],
                 const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm,
                 amc_request_t *req);
int amc_iscatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                  void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm,
                  amc_request_t *req);
int amc_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                    const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                    amc_comm_t comm, amc_request_t *req);
int amc_ialltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                   void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                   amc_datatype_t dt, amc_comm_t comm, amc_request_t *req);
int amc_ireduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                        amc_datatype_t dt, amc_op_t op, amc_comm_t comm, amc_request_t *req);

/* Persistent collectives: the call is checked and kept; amc_start runs it, and test/wait
 * leave the request allocated and inactive until amc_request_free.
 *
 * amc_X_init takes amc_X's arguments and *req; it sends nothing, so an
 * invalid call is only refused here (AMC_ERR_ARG, AMC_ERR_COMM, ...), the
 * other ranks are not told. Its buffers and count arrays stay the caller's
 * and are used at every start: they must live until amc_request_free.
 * Every rank starts its request as it would make the call, in the same
 * order as its other collectives on the communicator. */
int amc_barrier_init(amc_comm_t comm, amc_request_t *req);
int amc_bcast_init(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm,
                   amc_request_t *req);
int amc_reduce_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                    amc_op_t op,
                    int root, amc_comm_t comm, amc_request_t *req);
int amc_allreduce_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                       amc_op_t op, amc_comm_t comm, amc_request_t *req);
int amc_gather_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                    amc_comm_t comm, amc_request_t *req);
int amc_scatter_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                     amc_comm_t comm, amc_request_t *req);
int amc_allgather_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                       amc_comm_t comm, amc_request_t *req);
int amc_alltoall_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                      amc_comm_t comm, amc_request_t *req);
int amc_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, size_t count,
                                  amc_datatype_t dt, amc_op_t op, amc_comm_t comm,
                                  amc_request_t *req);
int amc_scan_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
                  amc_comm_t comm, amc_request_t *req);
int amc_exscan_init(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                    amc_op_t op, amc_comm_t comm, amc_request_t *req);
int amc_gatherv_init(const void *sendbuf, size_t sendcount, void *recvbuf,
                     const size_t recvcounts[],
                     const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm,
                     amc_request_t *req);
int amc_scatterv_init(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                      void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm,
                      amc_request_t *req);
int amc_allgatherv_init(const void *sendbuf, size_t sendcount, void *recvbuf,
                        const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                        amc_comm_t comm, amc_request_t *req);
int amc_alltoallv_init(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                       void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                       amc_datatype_t dt, amc_comm_t comm, amc_request_t *req);
int amc_reduce_scatter_init(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                            amc_datatype_t dt, amc_op_t op, amc_comm_t comm, amc_request_t *req);

/* Requests. In the array forms a request other than AMC_REQUEST_NULL may
 * appear only once: a repeat is AMC_ERR_ARG, and nothing in the array is
 * completed, released or changed by that call.
 *
 * A request completes with its collective's status, which the call that
 * completes it returns. Completing releases it: *req becomes
 * AMC_REQUEST_NULL, but a persistent request stays, inactive.
 * AMC_REQUEST_NULL and inactive persistent requests count as complete,
 * with AMC_SUCCESS. Every call: AMC_ERR_ARG for a NULL pointer, a negative
 * n or a handle that is no request; AMC_ERR_NOT_INITIALIZED after
 * amc_finalize. */
/* One progress pass; *flag 1 if the request is complete (released, its
 * status returned), else 0 and AMC_SUCCESS. */
int amc_test(amc_request_t *req, int *flag);
/* Until the request completes; returns its status. A wait that cannot
 * complete returns AMC_ERR_TIMEOUT after AMC_TIMEOUT seconds (default:
 * never). */
int amc_wait(amc_request_t *req);
/* amc_test over reqs[0 .. n): *flag 1 only once all are complete, and then
 * all are released and the first error among them (in array order) is
 * returned; else *flag 0, none is released, AMC_SUCCESS. */
int amc_testall(int n, amc_request_t reqs[], int *flag);
/* Until all of reqs[0 .. n) complete; releases all and returns the first
 * error among them (in array order). */
int amc_waitall(int n, amc_request_t reqs[]);
/* Until one of reqs[0 .. n) completes: releases that one alone, *index its
 * position, returns its status. With no active request (all
 * AMC_REQUEST_NULL or inactive persistent) *index is AMC_UNDEFINED at once,
 * AMC_SUCCESS. */
int amc_waitany(int n, amc_request_t reqs[], int *index);
/* Starts an inactive persistent request (amc_X_init). AMC_ERR_ARG: not a
 * persistent request, or one still active; AMC_ERR_COMM: its communicator
 * was freed; and a start's own errors (AMC_ERR_NO_MEMORY beyond the limit of
 * started collectives, above), after which the request stays inactive. */
int amc_start(amc_request_t *req);
/* Frees a request whatever its state but a persistent one running
 * (AMC_ERR_ARG: wait for it first); *req becomes AMC_REQUEST_NULL. A
 * non-blocking collective still running completes on its own, unobserved
 * (its buffers stay its own until then); amc_comm_idup's frees the
 * communicator it makes. AMC_REQUEST_NULL is AMC_ERR_ARG. */
int amc_request_free(amc_request_t *req);

/* GOAL schedules (Hoefler et al., "Group Operation Assembly Language"): a
 * collective written as each rank's dependency graph of sends, receives and
 * local actions, run on the same engine as the built-in collectives.
 *
 * A schedule is made for a communicator size (amc_goal_create), filled rank
 * by rank (every rank's part, on every rank: matching is decided from the
 * whole schedule), compiled once (amc_goal_compile), and started on a
 * communicator of that size with this rank's buffers bound (amc_goal_start),
 * as often as wanted: a start returns a request that amc_test / amc_wait
 * complete and release, and the next start may follow once it completed
 * (persistent restart, without any allocation after the first). Every rank
 * of the communicator must start the schedule, in the same order as its
 * other collectives on it. The same schedule is also read and written as
 * text (amc_goal_parse, amc_goal_write: LogGOPSim's GOAL, doc/design.md).
 *
 * Actions return their index in *act (may be NULL), 0, 1, ... per rank.
 * Buffers: AMC_GOAL_BUF_SEND and AMC_GOAL_BUF_RECV are the caller's, bound
 * at each start (at least amc_goal_buffer_bytes long); AMC_GOAL_BUF_TMP + k
 * (k < 6) are scratch of the schedule's own, sized by what the actions
 * use. Messages: a send to peer with tag t pairs with a receive of peer's
 * from this rank (or from AMC_GOAL_ANY) with tag t (or AMC_GOAL_ANY);
 * compiling decides every pair by simulating MPI's matching (posted and
 * unexpected queues, non-overtaking) and fails on a send or receive left
 * unmatched, on unequal sizes of a pair, on a cycle, and on a schedule that
 * deadlocks when messages go by rendezvous (a send completes only once its
 * receive started, as above AMC_RNDV_THRESH). irequires (GOAL's start
 * dependency): act may start once dep started. calc only takes its place in
 * the graph (its cost is for simulators). All reductions of a schedule use
 * one op and datatype (AMC_ERR_ARG otherwise); bytes are whole elements.
 * A compiled schedule is read-only: adding to it is AMC_ERR_ARG. */
typedef struct amc_goal *amc_goal_t;

#define AMC_GOAL_ANY (-1)
enum {
    AMC_GOAL_BUF_SEND = 0,
    AMC_GOAL_BUF_RECV = 1,
    AMC_GOAL_BUF_TMP  = 2, /* AMC_GOAL_BUF_TMP + 0 .. 5 */
    AMC_GOAL_NBUFS    = 8
};

/* The adding calls below return AMC_ERR_ARG for a NULL or compiled
 * schedule, a rank not in [0, nranks) or a buffer not below AMC_GOAL_NBUFS,
 * and AMC_ERR_NO_MEMORY; what they cannot see alone (peers, sizes,
 * matching) amc_goal_compile checks. */
/* An empty schedule for nranks ranks; local, no amc_init needed.
 * AMC_ERR_ARG for nranks < 1 or a NULL goal, AMC_ERR_NO_MEMORY. */
int amc_goal_create(int nranks, amc_goal_t *goal);
/* rank sends bytes from buf at off to peer (another rank), with tag
 * (both >= 0). */
int amc_goal_send(amc_goal_t goal, int rank, int peer, int tag, size_t bytes, int buf,
                  size_t off, int *act);
/* rank receives bytes into buf at off from peer, with tag; either may be
 * AMC_GOAL_ANY. */
int amc_goal_recv(amc_goal_t goal, int rank, int peer, int tag, size_t bytes, int buf,
                  size_t off, int *act);
/* A local computation of cost on rank: a node of the graph that does
 * nothing here. */
int amc_goal_calc(amc_goal_t goal, int rank, unsigned long long cost, int *act);
/* dst[dst_off, +bytes) <- src[src_off, +bytes) */
int amc_goal_copy(amc_goal_t goal, int rank, int dst, size_t dst_off, int src, size_t src_off,
                  size_t bytes, int *act);
/* dst = src (op) dst over bytes; right: dst = dst (op) src. AMC_ERR_ARG
 * also for a datatype that is none or a negative op. */
int amc_goal_reduce(amc_goal_t goal, int rank, int dst, size_t dst_off, int src, size_t src_off,
                    size_t bytes, amc_datatype_t dt, amc_op_t op, int right, int *act);
/* On rank, action act starts only once action dep has completed (requires)
 * or started (irequires). AMC_ERR_ARG: a NULL or compiled schedule, a rank
 * out of range, act or dep not one of rank's actions, act == dep;
 * AMC_ERR_NO_MEMORY. */
int amc_goal_requires(amc_goal_t goal, int rank, int act, int dep);
int amc_goal_irequires(amc_goal_t goal, int rank, int act, int dep);
/* Validates and compiles; on an error amc_goal_error says what and where.
 * AMC_ERR_ARG: a NULL goal or a schedule that fails a check (above);
 * AMC_ERR_NO_MEMORY. Compiling a compiled schedule does nothing. */
int amc_goal_compile(amc_goal_t goal);
/* The last amc_goal_compile's error message ("" if none); "no schedule" for
 * NULL. The text is the schedule's: valid until amc_goal_free. */
const char *amc_goal_error(amc_goal_t goal);
/* Bytes of the caller's buffer buf that rank's part reads or writes; only
 * of a compiled schedule (AMC_ERR_ARG otherwise, and for a NULL argument or
 * a rank or buf out of range). */
int amc_goal_buffer_bytes(amc_goal_t goal, int rank, int buf, size_t *bytes);
/* This rank's part on comm (its size must be the schedule's). Errors as a
 * non-blocking collective's start, and AMC_ERR_ARG for a NULL goal or req,
 * a schedule not compiled or of another size, and a NULL buffer this
 * rank's part uses; these start nothing. */
int amc_goal_start(amc_goal_t goal, const void *sendbuf, void *recvbuf, amc_comm_t comm,
                   amc_request_t *req);
/* Call once every start's request completed, before the communicator it
 * last ran on is destroyed by anything but amc_comm_free or amc_finalize;
 * *goal becomes NULL. AMC_ERR_ARG for a NULL goal or *goal. */
int amc_goal_free(amc_goal_t *goal);
/* Text: parse a whole file's text (name for messages, may be NULL); on an
 * error *goal is NULL and err holds "name:line:column: message". The
 * schedule is not compiled yet (amc_goal_compile). AMC_ERR_ARG for a NULL
 * goal, NULL text with len > 0, and text that is no valid GOAL (memory
 * running out too: the message says so); err may be NULL, the message then
 * lost. */
int amc_goal_parse(const char *text, size_t len, const char *name, amc_goal_t *goal, char *err,
                   size_t errlen);
/* Writes the schedule as text: plain GOAL if every action moves data of the
 * default buffers (LogGOPSim's txt2bin reads it), else with amcoll's
 * extensions. Returns bytes written (as fprintf), or -1 for a NULL
 * argument or a write error. */
int amc_goal_write(amc_goal_t goal, FILE *file);

#ifdef __cplusplus
}
#endif

#endif /* AMCOLL_H */
