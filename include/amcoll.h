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
/* Collectives still pending are abandoned (their handles die with the
 * library); their peers may then wait for them, as for any rank that stops
 * taking part. */
int         amc_finalize(void);
int         amc_initialized(int *flag);
double      amc_wtime(void);
/* A counter of this process's library instance, by name: "ranks" (the job
 * size), "endpoints" (UCX endpoints this rank created: one per peer it has
 * sent to, made on the first message), "flow_peers" (peers this rank keeps
 * flow-control state for: those it exchanged data with), "flow_bytes" (the
 * memory of that state). AMC_ERR_ARG for an unknown name or a NULL
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
int amc_comm_split(amc_comm_t comm, int color, int key, amc_comm_t *newcomm);
int amc_comm_free(amc_comm_t *comm);

/* Reduction operations; amc_op_free sets *op to an invalid handle */
int amc_op_create(amc_user_fn_t fn, int commute, amc_op_t *op);
int amc_op_free(amc_op_t *op);

/* Collectives */
int amc_barrier(amc_comm_t comm);
int amc_ibarrier(amc_comm_t comm, amc_request_t *req);

/* Data collectives: per-rank count, one datatype for both sides (api.md).
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

#ifdef __cplusplus
}
#endif

#endif /* AMCOLL_H */
