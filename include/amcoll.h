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
int         amc_init(int *argc, char ***argv);
int         amc_init_thread(int *argc, char ***argv, int required, int *provided);

/* Starting where no PMIx server is (MPICH's Hydra, srun --mpi=pmi2, a
 * vendor launcher): what a runtime that already started the job tells
 * amcoll instead. Every rank of the job calls amc_init_boot at once with
 * the same size; the callbacks run inside amc_init_boot (allgather, twice)
 * and inside amc_finalize (barrier, twice), on the calling thread. */
typedef struct amc_boot {
    int   rank;     /* this process, in [0, size) */
    int   size;     /* the job's ranks */
    int   node;     /* >= 0: ranks with the same value share a node (memory) */
    void *arg;      /* the callbacks' first argument */
    /* Every rank's len bytes of mine, in rank order, into all (size * len
     * bytes); 0 on success. */
    int (*allgather)(void *arg, const void *mine, void *all, size_t len);
    /* Returns 0 once every rank has entered it. While it waits it calls
     * progress(ctx) now and then (amcoll's own transport must move meanwhile);
     * progress returns non-zero when amcoll gives up (a peer died, a
     * deadline passed): return non-zero then, without waiting further. */
    int (*barrier)(void *arg, int (*progress)(void *ctx), void *ctx);
} amc_boot_t;

/* amc_init_thread over boot (copied; its arg and callbacks stay valid
 * until amc_finalize returns). AMC_ERR_ARG: a bad rank, size, node or a
 * missing callback. */
int         amc_init_boot(int *argc, char ***argv, int required, int *provided,
                          const amc_boot_t *boot);
/* Collectives still pending are abandoned (their handles die with the
 * library); their peers may then wait for them, as for any rank that stops
 * taking part. */
int         amc_finalize(void);
int         amc_initialized(int *flag);
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
 * memory of that state), "pair_done" (blocking barriers and small
 * exchanges on 2 ranks that ran within their call, reading the peer's
 * message straight from its mailbox) and "pair_sent" (those that sent so
 * but finished the usual way: something else came first, or the peer was
 * late), "api_memo" (blocking calls that repeated their communicator's
 * last one on those rounds, the same arguments, and skipped its checks).
 * AMC_ERR_ARG for an unknown name or a NULL
 * argument, AMC_ERR_NOT_INITIALIZED outside amc_init .. amc_finalize.
 * AMC_STATS=1 prints them all at amc_finalize. */
int         amc_stat_get(const char *name, unsigned long long *value);
const char *amc_strerror(int code);

/* Communicators */
amc_comm_t amc_comm_world(void);
#define AMC_COMM_WORLD (amc_comm_world())
int amc_comm_rank(amc_comm_t comm, int *rank);
int amc_comm_size(amc_comm_t comm, int *size);
int amc_comm_dup(amc_comm_t comm, amc_comm_t *newcomm);
/* Non-blocking dup: starts the creation's agreement, a collective on comm in
 * its order like any other; *newcomm is written when req completes (test,
 * wait, any array form), AMC_COMM_NULL if the members agreed on a failure.
 * amc_request_free on it while it runs leaves *newcomm untouched. */
int amc_comm_idup(amc_comm_t comm, amc_comm_t *newcomm, amc_request_t *req);
int amc_comm_split(amc_comm_t comm, int color, int key, amc_comm_t *newcomm);
int amc_comm_free(amc_comm_t *comm);
/* For a host library that agrees on its communicators itself (the Open MPI
 * component): amc_comm_id_reserve gives, on one rank (the leader), an id no
 * other creation in the job uses; the host passes it to the other members by
 * its own means; then every member, and only the members, calls
 * amc_comm_create_group with the members' ranks in comm (in the new
 * communicator's order: ranks[i] becomes rank i) and that id. Local: nothing
 * is sent, so a member that fails must tell the others by the host's means
 * too. Each id serves one creation. */
int amc_comm_id_reserve(amc_comm_t comm, uint64_t *id);
int amc_comm_create_group(amc_comm_t comm, const int ranks[], int n, uint64_t id,
                          amc_comm_t *newcomm);


/* Reduction operations; amc_op_free sets *op to an invalid handle */
int amc_op_create(amc_user_fn_t fn, int commute, amc_op_t *op);
/* A collective binds its op when it starts: it completes with the function
 * and data it started with even if the op is freed meanwhile, so data must
 * live until the collectives started with the op are complete. */
int amc_op_create_data(amc_user_data_fn_t fn, void *data, int commute, amc_op_t *op);
int amc_op_free(amc_op_t *op);

/* Collectives */
int amc_barrier(amc_comm_t comm);
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
 * logged when the stray message arrives; they never fail a later call. */
int amc_bcast(void *buf, size_t count, amc_datatype_t dt, int root, amc_comm_t comm);
int amc_reduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
               amc_op_t op, int root, amc_comm_t comm);
int amc_allreduce(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_op_t op, amc_comm_t comm);
int amc_gather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
               amc_comm_t comm);
int amc_scatter(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, int root,
                amc_comm_t comm);
int amc_allgather(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                  amc_comm_t comm);
int amc_alltoall(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt,
                 amc_comm_t comm);
int amc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count,
                             amc_datatype_t dt, amc_op_t op, amc_comm_t comm);
int amc_scan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
             amc_comm_t comm);
int amc_exscan(const void *sendbuf, void *recvbuf, size_t count, amc_datatype_t dt, amc_op_t op,
               amc_comm_t comm);
/* Vector forms: counts and displacements in elements, as in MPI */
int amc_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t recvcounts[],
                const size_t displs[], amc_datatype_t dt, int root, amc_comm_t comm);
int amc_scatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                 void *recvbuf, size_t recvcount, amc_datatype_t dt, int root, amc_comm_t comm);
int amc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                   const size_t recvcounts[], const size_t displs[], amc_datatype_t dt,
                   amc_comm_t comm);
int amc_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                  void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                  amc_datatype_t dt, amc_comm_t comm);
int amc_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                       amc_datatype_t dt, amc_op_t op, amc_comm_t comm);

/* Non-blocking (and blocking) starts: a rank may have at most 8 + AMC_EARLY_MAX
 * collectives started on one communicator counted from the oldest that has not
 * finished on this rank. A start beyond that is AMC_ERR_NO_MEMORY and starts
 * nothing, not even its place in the communicator's order: complete some
 * requests and make the same call again (every rank must still make every
 * call, in the same order). */
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
 * leave the request allocated and inactive until amc_request_free. */
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
 * completed, released or changed by that call. */
int amc_test(amc_request_t *req, int *flag);
int amc_wait(amc_request_t *req);
int amc_testall(int n, amc_request_t reqs[], int *flag);
int amc_waitall(int n, amc_request_t reqs[]);
int amc_waitany(int n, amc_request_t reqs[], int *index);
int amc_start(amc_request_t *req);
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

int amc_goal_create(int nranks, amc_goal_t *goal);
int amc_goal_send(amc_goal_t goal, int rank, int peer, int tag, size_t bytes, int buf,
                  size_t off, int *act);
int amc_goal_recv(amc_goal_t goal, int rank, int peer, int tag, size_t bytes, int buf,
                  size_t off, int *act);
int amc_goal_calc(amc_goal_t goal, int rank, unsigned long long cost, int *act);
/* dst[dst_off, +bytes) <- src[src_off, +bytes) */
int amc_goal_copy(amc_goal_t goal, int rank, int dst, size_t dst_off, int src, size_t src_off,
                  size_t bytes, int *act);
/* dst = src (op) dst over bytes; right: dst = dst (op) src */
int amc_goal_reduce(amc_goal_t goal, int rank, int dst, size_t dst_off, int src, size_t src_off,
                    size_t bytes, amc_datatype_t dt, amc_op_t op, int right, int *act);
int amc_goal_requires(amc_goal_t goal, int rank, int act, int dep);
int amc_goal_irequires(amc_goal_t goal, int rank, int act, int dep);
/* Validates and compiles; on an error amc_goal_error says what and where. */
int amc_goal_compile(amc_goal_t goal);
const char *amc_goal_error(amc_goal_t goal);
/* Bytes of the caller's buffer buf that rank's part reads or writes. */
int amc_goal_buffer_bytes(amc_goal_t goal, int rank, int buf, size_t *bytes);
/* This rank's part on comm (its size must be the schedule's). */
int amc_goal_start(amc_goal_t goal, const void *sendbuf, void *recvbuf, amc_comm_t comm,
                   amc_request_t *req);
/* Call once every start's request completed, before the communicator it
 * last ran on is destroyed by anything but amc_comm_free or amc_finalize;
 * *goal becomes NULL. */
int amc_goal_free(amc_goal_t *goal);
/* Text: parse a whole file's text (name for messages, may be NULL); on an
 * error *goal is NULL and err holds "name:line:column: message". */
int amc_goal_parse(const char *text, size_t len, const char *name, amc_goal_t *goal, char *err,
                   size_t errlen);
/* Writes the schedule as text: plain GOAL if every action moves data of the
 * default buffers (LogGOPSim's txt2bin reads it), else with amcoll's
 * extensions. Returns bytes written (as fprintf) or -1. */
int amc_goal_write(amc_goal_t goal, FILE *file);

#ifdef __cplusplus
}
#endif

#endif /* AMCOLL_H */
