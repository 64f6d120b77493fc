/* Linear gather and scatter: the root talks to every rank in one round, and
 * each block travels once, straight between the user buffers. */
#include "am_coll/alg.h"

int amc_alg_gather_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    i;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_send(b, a->root, AMC_BUF_SEND, 0, bytes);
        return AMC_SUCCESS;
    }
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    }
    for (i = 0; i < size; i++) {
        if (i != rank) {
            amc_sb_recv(b, i, AMC_BUF_RECV, (size_t)i * bytes, bytes);
        }
    }
    return AMC_SUCCESS;
}

int amc_alg_scatter_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    i;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_recv(b, a->root, AMC_BUF_RECV, 0, bytes);
        return AMC_SUCCESS;
    }
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, (size_t)rank * bytes, bytes);
    }
    for (i = 0; i < size; i++) {
        if (i != rank) {
            amc_sb_send(b, i, AMC_BUF_SEND, (size_t)i * bytes, bytes);
        }
    }
    return AMC_SUCCESS;
}
