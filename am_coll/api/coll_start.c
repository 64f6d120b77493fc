#include "am_coll/api/coll_start.h"
#include "am_coll/alg/alg.h"
#include "am_coll/barrier/barrier.h"
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/coll/coll.h"
#include "base/status.h"

int amc_coll_start(amc_comm_t comm, const amc_coll_args_t *call, struct amc_request *req)
{
    amc_coll_args_t  args;
    const amc_alg_t *alg;
    int              status = amc_coll_select(comm, call, &args, &alg);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((alg->flags & AMC_ALG_FLAG_CTRL) && amc_ctrl_coll_ok(comm, &args, alg)) {
        return amc_barrier_enter(comm, req, &args);
    }
    return amc_coll_start_alg(comm, &args, alg, req);
}
