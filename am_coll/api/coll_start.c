#include "am_coll/api/coll_start.h"
#include "am_coll/alg/alg.h"
#include "am_coll/barrier/barrier.h"
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "base/status.h"

#include <stdint.h>

/*
 * A communicator remembers, per collective, the last non-vector call's
 * choice: which algorithm, and whether it ran on the barrier's rounds. Both
 * read only the call's collective, count, datatype, op (and whether the op
 * commutes) besides what the communicator and the configuration fix for
 * its life (size, nodes, AMC_* settings, tuning rules), so the same five
 * give the same choice, on every rank alike. A loop of one collective skips
 * the selection and its argument copy (callgrind, bcast 8 B at N=2: ~110
 * of the root's 1,350 instructions a call).
 *
 * One word per collective, read and written whole (a thread never sees
 * half of one): the key in the high bits (count, whether the op commutes,
 * op, collective, datatype), the algorithm's index and the rounds bit in the
 * low byte.
 */
#define AMC_CHOICE_CTRL     0x80u
#define AMC_CHOICE_ALG_MASK 0x7fu

_Static_assert(AMC_COLL_LAST <= 0x100, "a collective fits the choice's byte");

/* The call's key, or 0 where it cannot have one (a vector form: its counts
 * choose too, whether it runs on the barrier's rounds at N=2, and a
 * gatherv's or scatterv's non-root has no vectors, only its own count,
 * which the key does not hold; a count, datatype or op beyond the key's
 * fields). A user op's handle may come back for another function once
 * freed: its algorithms depend only on whether it commutes, which the key
 * holds, and a user op never runs on the barrier's rounds (no kernel of
 * ours). */
static inline uint64_t amc_choice_key(const amc_coll_args_t *a)
{
    if (amc_alg_rounds_vector(a->coll) || (a->count >= ((size_t)1 << 23)) ||
        ((unsigned)a->dt > 0xffu) || ((unsigned)(a->op + 1) > 0xffffu)) {
        return 0;
    }
    return ((uint64_t)a->count << 41) | ((uint64_t)(a->commutative != 0) << 40) |
           ((uint64_t)(unsigned)(a->op + 1) << 24) | ((uint64_t)a->coll << 16) |
           ((uint64_t)a->dt << 8);
}

static void amc_choice_keep(amc_comm_t comm, uint64_t key, const amc_alg_t *alg, int ctrl)
{
    size_t i = amc_alg_index(alg);

    if ((key != 0) && (i <= AMC_CHOICE_ALG_MASK)) {
        __atomic_store_n(&comm->choice[(key >> 16) & 0xff],
                         key | i | (ctrl ? AMC_CHOICE_CTRL : 0), __ATOMIC_RELAXED);
    }
}

int amc_coll_start(amc_comm_t comm, const amc_coll_args_t *call, struct amc_request *req)
{
    amc_coll_args_t  args;
    const amc_alg_t *alg;
    uint64_t         key = amc_choice_key(call), known;
    int              status, ctrl;

    known = (key != 0) ? __atomic_load_n(&comm->choice[call->coll], __ATOMIC_RELAXED) : 0;
    if ((known != 0) && ((known & ~(uint64_t)0xff) == key)) {
        if (known & AMC_CHOICE_CTRL) {
            return amc_barrier_enter(comm, req, call);
        }
        status = amc_coll_args_fill(comm, call, &args);
        return (status != AMC_SUCCESS) ? status
                                       : amc_coll_start_alg(comm, &args,
                                                            amc_alg_at(known & AMC_CHOICE_ALG_MASK),
                                                            req);
    }
    status = amc_coll_select(comm, call, &args, &alg);
    if (status != AMC_SUCCESS) {
        return status;
    }
    ctrl = (alg->flags & AMC_ALG_FLAG_CTRL) && amc_ctrl_coll_ok(comm, &args, alg);
    amc_choice_keep(comm, key, alg, ctrl);
    if (ctrl) {
        return amc_barrier_enter(comm, req, &args);
    }
    return amc_coll_start_alg(comm, &args, alg, req);
}
