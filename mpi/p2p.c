/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: MPI's blocking point-to-point calls while routed
 * collectives are live on this rank.
 *
 * A rank blocked inside MPI runs only MPI's progress. A peer whose routed
 * collective needs this rank's handlers (a round of recursive doubling, a
 * tree's forwarding) then waits for ever, although MPI promises progress to
 * a started non-blocking collective while its rank blocks in any MPI call:
 * rank 0 posts MPI_Iallreduce and then MPI_Recv from rank 1, which sends
 * only after its own MPI_Wait on the allreduce. So while routed requests
 * are live, each blocking call becomes its non-blocking form and a wait that
 * runs amcoll's progress between MPI's tests (requests.c, "MPI's own
 * requests"). With none live they go straight to MPI, at no cost.
 */
#include "mpi/requests.h"

#include <stdlib.h>

/* A send and a receive posted together (the receive first in r[0]): its
 * status, and an error of either. */
static int amcm_wait_pair(MPI_Request r[2], MPI_Status *status)
{
    MPI_Status st[2];
    int        rc = amcm_native_waitall(2, r, st);

    if (status != MPI_STATUS_IGNORE) {
        *status = st[0];
    }
    if (rc == MPI_ERR_IN_STATUS) {
        rc = (st[0].MPI_ERROR != MPI_SUCCESS) ? st[0].MPI_ERROR : st[1].MPI_ERROR;
    }
    return rc;
}

/* MPI_X and its non-blocking form MPI_IX, for the four send modes */
#define AMCM_SEND(X, IX)                                                                       \
    int MPI_##X(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) \
    {                                                                                          \
        MPI_Request r;                                                                         \
        int         rc;                                                                        \
                                                                                               \
        if (!amcm_routed_live()) {                                                             \
            return PMPI_##X(buf, count, dt, dest, tag, comm);                                  \
        }                                                                                      \
        rc = PMPI_##IX(buf, count, dt, dest, tag, comm, &r);                                   \
        return (rc == MPI_SUCCESS) ? amcm_native_wait(&r, MPI_STATUS_IGNORE) : rc;             \
    }
AMCM_SEND(Send, Isend)
AMCM_SEND(Ssend, Issend)
AMCM_SEND(Rsend, Irsend)
AMCM_SEND(Bsend, Ibsend)

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Request r;
    int         rc;

    if (!amcm_routed_live()) {
        return PMPI_Recv(buf, count, dt, src, tag, comm, status);
    }
    rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r);
    return (rc == MPI_SUCCESS) ? amcm_native_wait(&r, status) : rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    MPI_Request r[2];
    int         rc;

    if (!amcm_routed_live()) {
        return PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm,
                             status);
    }
    rc = PMPI_Irecv(rbuf, rcount, rdt, src, rtag, comm, &r[0]);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = PMPI_Isend(sbuf, scount, sdt, dest, stag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    return amcm_wait_pair(r, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Request r[2];
    void       *tmp;
    int         size = 0, pos = 0, rc;

    if (!amcm_routed_live()) {
        return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status);
    }
    /* what goes out is packed first: the receive lands in buf meanwhile */
    rc = PMPI_Pack_size(count, dt, comm, &size);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if ((tmp = malloc((size > 0) ? (size_t)size : 1)) == NULL) {
        return MPI_ERR_NO_MEM;
    }
    rc = PMPI_Pack(buf, count, dt, tmp, size, &pos, comm);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Isend(tmp, pos, MPI_PACKED, dest, stag, comm, &r[1]);
    }
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Irecv(buf, count, dt, src, rtag, comm, &r[0]);
        if (rc != MPI_SUCCESS) {
            amcm_native_wait(&r[1], MPI_STATUS_IGNORE);
        }
    }
    if (rc == MPI_SUCCESS) {
        rc = amcm_wait_pair(r, status);
    }
    free(tmp);
    return rc;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0, rc;

    if (!amcm_routed_live()) {
        return PMPI_Probe(src, tag, comm, status);
    }
    for (;;) {
        rc = PMPI_Iprobe(src, tag, comm, &flag, status);
        if (flag || (rc != MPI_SUCCESS)) {
            return rc;
        }
        amcm_native_idle();
    }
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
    int flag = 0, rc;

    if (!amcm_routed_live()) {
        return PMPI_Mprobe(src, tag, comm, msg, status);
    }
    for (;;) {
        rc = PMPI_Improbe(src, tag, comm, &flag, msg, status);
        if (flag || (rc != MPI_SUCCESS)) {
            return rc;
        }
        amcm_native_idle();
    }
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
    MPI_Request r;
    int         rc;

    if (!amcm_routed_live()) {
        return PMPI_Mrecv(buf, count, dt, msg, status);
    }
    rc = PMPI_Imrecv(buf, count, dt, msg, &r);
    return (rc == MPI_SUCCESS) ? amcm_native_wait(&r, status) : rc;
}
