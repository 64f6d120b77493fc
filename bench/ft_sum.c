/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An iterative sum that goes on when ranks die: each iteration is an
 * allreduce; on an error a rank revokes the communicator (so every rank
 * leaves its loop), the survivors shrink it, agree on the first iteration
 * one of them has not finished, and go on without the dead.
 *
 *   mpirun --mca orte_enable_recovery 1 -np 5 bench/ft_sum [ITERS [RANK ITER]]
 *
 * kills world rank RANK at iteration ITER (default: the last rank at
 * ITERS / 2) to show it; each survivor checks every sum.
 */
#include "amcoll.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    amc_comm_t comm, newcomm;
    int64_t    iter = 0, iters, x, sum, want, failed = 0;
    int        me, size, victim, kill_at, rc, recoveries = 0;

    if (amc_init(&argc, &argv) != AMC_SUCCESS) {
        return 1;
    }
    comm  = amc_comm_world();
    amc_comm_rank(comm, &me);
    amc_comm_size(comm, &size);
    iters   = (argc > 1) ? atol(argv[1]) : 1000;
    victim  = (argc > 3) ? atoi(argv[2]) : size - 1;
    kill_at = (argc > 3) ? atoi(argv[3]) : (int)(iters / 2);

    while (iter < iters) {
        if ((me == victim) && (iter == kill_at) && (size > 1)) {
            raise(SIGKILL);
        }
        x  = iter;
        rc = amc_allreduce(&x, &sum, 1, AMC_INT64, AMC_SUM, comm);
        if (rc == AMC_SUCCESS) {
            amc_comm_size(comm, &size);
            want = iter * size;
            failed += (sum != want);
            iter++;
            continue;
        }
        /* AMC_ERR_PEER here, AMC_ERR_REVOKED where another rank revoked */
        amc_comm_revoke(comm);
        if (amc_comm_shrink(comm, &newcomm) != AMC_SUCCESS) {
            break;
        }
        if (comm != amc_comm_world()) {
            amc_comm_free(&comm);
        }
        comm = newcomm;
        recoveries++;
        /* if this fails too (another death), the next allreduce does and
         * the loop shrinks again */
        (void)amc_allreduce(AMC_IN_PLACE, &iter, 1, AMC_INT64, AMC_MIN, comm);
    }
    amc_comm_rank(comm, &me);
    amc_comm_size(comm, &size);
    if (me == 0) {
        printf("ft_sum: %lld iterations, %d ranks left after %d recoveries, %lld wrong sums\n",
               (long long)iter, size, recoveries, (long long)failed);
    }
    if (comm != amc_comm_world()) {
        amc_comm_free(&comm);
    }
    amc_finalize();
    return (failed == 0 && iter == iters) ? 0 : 1;
}
