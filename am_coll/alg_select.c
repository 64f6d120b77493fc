/* Which algorithm runs a call. One per collective for now; the table is
 * where size- and count-dependent choices and AMC_<COLL>_ALG overrides go. */
#include "am_coll/alg.h"

#include <stddef.h>

static const amc_alg_t amc_alg_table[] = {
    { AMC_COLL_BCAST,     1, "binomial",           amc_alg_bcast_binomial },
    { AMC_COLL_REDUCE,    1, "binomial",           amc_alg_reduce_binomial },
    { AMC_COLL_ALLREDUCE, 1, "recursive_doubling", amc_alg_allreduce_recdbl },
    { AMC_COLL_GATHER,    1, "linear",             amc_alg_gather_linear },
    { AMC_COLL_SCATTER,   1, "linear",             amc_alg_scatter_linear },
    { AMC_COLL_ALLGATHER, 1, "ring",               amc_alg_allgather_ring },
    { AMC_COLL_ALLTOALL,  1, "pairwise",           amc_alg_alltoall_pairwise },
};

const amc_alg_t *amc_alg_select(struct amc_comm *comm, const amc_coll_args_t *args)
{
    size_t i;

    (void)comm;
    for (i = 0; i < sizeof(amc_alg_table) / sizeof(amc_alg_table[0]); i++) {
        if (amc_alg_table[i].coll == args->coll) {
            return &amc_alg_table[i];
        }
    }
    return NULL;
}
