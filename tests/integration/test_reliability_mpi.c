/*
 * Integration tests of the API's promise under misuse (issue 14): a clear
 * error, never a crash, a hang or a silent wrong answer. Real UCX, ranks
 * started by mpirun (PMIx).
 *
 *   test_reliability_mpi algmismatch   run under tests/integration/rank_env.sh,
 *                               which gives one rank AMC_ALLREDUCE_ALG=ring
 *                               and AMC_BCAST_ALG=pipeline, the others
 *                               recursive_doubling and binomial: the
 *                               allreduce fails with AMC_ERR_PROTOCOL on every
 *                               rank, so does the bcast that rank roots on
 *                               every other rank (none waits for AMC_TIMEOUT),
 *                               and barriers and an allgather work afterwards
 *
 * Rank 0 prints "ok <subtest> N=<n>"; failures print "FAIL ..." and the exit
 * status is non-zero.
 */
#include "amcoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tr_rank, tr_size;
static int tr_failures;

#define TR_CHECK(_cond, ...)                                                    \
    do {                                                                        \
        if (!(_cond)) {                                                         \
            fprintf(stderr, "FAIL rank %d/%d %s:%d: ", tr_rank, tr_size,        \
                    __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            tr_failures++;                                                      \
        }                                                                       \
    } while (0)

#define TR_OK(_call) \
    do { int _rc = (_call); TR_CHECK(_rc == AMC_SUCCESS, "%s: %s", #_call, amc_strerror(_rc)); } while (0)

/* An allgather of ranks, checked: the communicator works. */
static void tr_check_works(amc_comm_t comm, const char *after)
{
    int32_t mine = 1000 + tr_rank, *all = calloc((size_t)tr_size, sizeof(*all));
    int     i;

    TR_CHECK(all != NULL, "calloc");
    if (all == NULL) {
        return;
    }
    TR_OK(amc_barrier(comm));
    TR_OK(amc_allgather(&mine, all, 1, AMC_INT32, comm));
    for (i = 0; i < tr_size; i++) {
        TR_CHECK(all[i] == 1000 + i, "allgather after %s: [%d] = %d", after, i, (int)all[i]);
    }
    TR_OK(amc_barrier(comm));
    free(all);
}

/* ---------------------------------------------------------------- algmismatch */

static void tr_algmismatch(void)
{
    const char *odd_env = getenv("AMCTEST_ODD_RANK");
    int         odd     = (odd_env != NULL) ? atoi(odd_env) : 1;
    int32_t     in[64], out[64], buf[1024];
    int         i, rc;

    TR_CHECK(tr_size >= 2, "algmismatch needs at least 2 ranks");
    if (tr_size < 2) {
        return;
    }
    for (i = 0; i < 64; i++) {
        in[i] = tr_rank + i;
    }
    rc = amc_allreduce(in, out, 64, AMC_INT32, AMC_SUM, amc_comm_world());
    TR_CHECK(rc == AMC_ERR_PROTOCOL, "allreduce, rank %d with another AMC_ALLREDUCE_ALG: %s",
             odd, amc_strerror(rc));
    tr_check_works(amc_comm_world(), "the allreduce mismatch");

    /* the odd rank roots it: nobody else can finish without its data */
    for (i = 0; i < 1024; i++) {
        buf[i] = (tr_rank == odd) ? 7 * i : -1;
    }
    rc = amc_bcast(buf, 1024, AMC_INT32, odd, amc_comm_world());
    if (tr_rank == odd) {
        TR_CHECK((rc == AMC_SUCCESS) || (rc == AMC_ERR_PROTOCOL), "bcast root: %s",
                 amc_strerror(rc));
    } else {
        TR_CHECK(rc == AMC_ERR_PROTOCOL, "bcast from rank %d with another AMC_BCAST_ALG: %s",
                 odd, amc_strerror(rc));
    }
    tr_check_works(amc_comm_world(), "the bcast mismatch");
}

int main(int argc, char **argv)
{
    const char *sub = (argc > 1) ? argv[1] : "?";

    TR_OK(amc_init(&argc, &argv));
    amc_comm_rank(amc_comm_world(), &tr_rank);
    amc_comm_size(amc_comm_world(), &tr_size);

    if (strcmp(sub, "algmismatch") == 0) {
        tr_algmismatch();
    } else {
        TR_CHECK(0, "unknown subtest %s", sub);
    }
    TR_OK(amc_barrier(amc_comm_world()));
    if ((tr_rank == 0) && (tr_failures == 0)) {
        printf("ok %s N=%d\n", sub, tr_size);
    }
    amc_finalize();
    return tr_failures ? 1 : 0;
}
