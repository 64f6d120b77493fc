/* The dissemination barrier as a schedule on the engine: in round r every
 * rank sends a zero-byte message to rank + 2^r and waits for the one from
 * rank - 2^r. The same algorithm as the barrier's own fast path
 * (am_coll/barrier.c); AMC_BARRIER_ALG=dissemination selects this
 * one, so the two can be timed against each other. */
#include "am_coll/alg.h"

int amc_alg_barrier_dissemination(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size)
{
    int dist;

    (void)a;
    for (dist = 1; dist < size; dist *= 2) {
        amc_sb_round(b);
        amc_sb_send(b, (rank + dist) % size, AMC_BUF_RECV, 0, 0);
        amc_sb_recv(b, (rank - dist + size) % size, AMC_BUF_RECV, 0, 0);
    }
    return AMC_SUCCESS;
}
