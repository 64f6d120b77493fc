/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/api/coll_start.h"
#include "am_coll/alg/alg.h"
#include "am_coll/barrier/barrier_entry.h"
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"
#include "base/compiler.h"
#include "base/status.h"

#include <stdint.h>

/*
 * A communicator remembers, per collective, the last call's choice: which
 * algorithm, and whether it ran on the barrier's rounds. Both read only the
 * call's collective, count, datatype, op (and whether the op commutes)
 * besides what the communicator and the configuration fix for its life
 * (size, nodes, AMC_* settings, tuning rules), so the same five give the
 * same choice, on every rank alike. A vector form's is kept where it ran
 * on the rounds (N=2), keyed by its two message lengths instead of a count.
 * A loop of one collective skips the selection and its argument copy
 * (callgrind, bcast 8 B at N=2: ~110 of the root's 1,350 instructions a
 * call; gatherv's sender 1,508 -> ~1,200).
 *
 * One word per collective, read and written whole (a thread never sees
 * half of one): the key in the high bits (a non-blocking tree's call,
 * count, whether the op commutes,
 * op, collective, datatype), the algorithm's index and the rounds bit in the
 * low byte.
 */
#define AMC_CHOICE_CTRL     0x80u
#define AMC_CHOICE_ALG_MASK 0x7fu

_Static_assert(AMC_COLL_LAST <= 0x100, "a collective fits the choice's byte");

/* The key's count field for a vector form at N=2 whose call may run on
 * the barrier's rounds: the bytes it sends the other rank and the bytes it
 * takes from it (each 0 .. 1024 there). They decide whether it runs on the
 * rounds (amc_ctrl_coll_ok, with the op and datatype), and what the
 * algorithm's selection reads of the counts is their sum (allgatherv's and
 * reduce_scatter's total; gatherv, scatterv and alltoallv read none). A
 * gatherv's or scatterv's non-root has no vectors, only its own count,
 * which is one of the two. ~0: no key (more ranks, or longer messages,
 * which the engine takes by counts the key does not hold). */
static inline size_t amc_choice_vcount(amc_comm_t comm, const amc_coll_args_t *a)
{
    size_t sbytes, rbytes;

    if (comm->size != 2) {
        return ~(size_t)0;
    }
    amc_ctrl_coll_vlens(comm, a, &sbytes, &rbytes);
    _Static_assert(AMC_CTRL_PAY_MAX < (1 << 11), "a length fits the key's 11 bits");
    return ((sbytes > AMC_CTRL_PAY_MAX) || (rbytes > AMC_CTRL_PAY_MAX))
               ? ~(size_t)0 : ((sbytes << 11) | rbytes);
}

/* A tree past N=2 (ctrl_tree.h) synchronizes its ranks, every rank
 * sending each round: it takes blocking calls only, which MPI lets
 * synchronize. A non-blocking or persistent one keeps the engine, whose
 * root is done once its sends are out and whose ranks pass the data on
 * before their own call (the patent's late inner rank). In a correct
 * program every rank's call of an instance is blocking, or none is. */
static inline int amc_choice_tree_nb(amc_comm_t comm, const amc_coll_args_t *a,
                                     const struct amc_request *req)
{
    return amc_alg_rounds_tree(a->coll, comm->size) && (req->heap || req->persistent);
}

/* The call's key, or 0 where it cannot have one (a count, datatype or op
 * beyond the key's fields; a vector form off the barrier's rounds' range).
 * A user op's handle may come back for another function once freed: its
 * algorithms depend only on whether it commutes, which the key holds, and
 * a user op never runs on the barrier's rounds (no kernel of ours). */
static inline uint64_t amc_choice_key(amc_comm_t comm, const amc_coll_args_t *a,
                                      const struct amc_request *req)
{
    size_t count = amc_alg_rounds_vector(a->coll) ? amc_choice_vcount(comm, a) : a->count;

    if ((count >= ((size_t)1 << 22)) || ((unsigned)a->dt > 0xffu) ||
        ((unsigned)(a->op + 1) > 0xffffu)) {
        return 0;
    }
    return ((uint64_t)amc_choice_tree_nb(comm, a, req) << 63) | ((uint64_t)count << 41) |
           ((uint64_t)(a->commutative != 0) << 40) |
           ((uint64_t)(unsigned)(a->op + 1) << 24) | ((uint64_t)a->coll << 16) |
           ((uint64_t)a->dt << 8);
}

/* A vector form's choice is kept only where it ran on the rounds: the
 * engine's algorithms may read counts the key does not hold. */
static void amc_choice_keep(amc_comm_t comm, uint64_t key, const amc_alg_t *alg, int ctrl)
{
    size_t i = amc_alg_index(alg);

    if ((key != 0) && (i <= AMC_CHOICE_ALG_MASK) &&
        (ctrl || !amc_alg_rounds_vector((unsigned)(key >> 16) & 0xffu))) {
        __atomic_store_n(&comm->choice[(key >> 16) & 0xff],
                         key | i | (ctrl ? AMC_CHOICE_CTRL : 0), __ATOMIC_RELAXED);
    }
}

/* amc_coll_start where the choice is not the barrier's rounds or not
 * known yet: in a frame of its own, the arguments' copy in it. */
static __attribute__((noinline)) int amc_coll_start_chosen(amc_comm_t comm,
                                                           const amc_coll_args_t *call,
                                                           struct amc_request *req,
                                                           uint64_t key, uint64_t known)
{
    amc_coll_args_t  args;
    const amc_alg_t *alg;
    int              status, ctrl;

    if ((known != 0) && ((known & ~(uint64_t)0xff) == key)) {
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
    ctrl = (alg->flags & AMC_ALG_FLAG_CTRL) && amc_ctrl_coll_ok(comm, &args, alg) &&
           !amc_choice_tree_nb(comm, &args, req);
    amc_choice_keep(comm, key, alg, ctrl);
    if (ctrl) {
        return amc_barrier_enter(comm, req, &args);
    }
    return amc_coll_start_alg(comm, &args, alg, req);
}

/* The usual call (a loop of one collective on the barrier's rounds): the
 * choice known, no frame of its own. */
AMC_INLINE_ACROSS int amc_coll_start_rounds(amc_comm_t comm, const amc_coll_args_t *call,
                                            struct amc_request *req, int *rounds)
{
    uint64_t key = amc_choice_key(comm, call, req), known;

    known   = (key != 0) ? __atomic_load_n(&comm->choice[call->coll], __ATOMIC_RELAXED) : 0;
    *rounds = (known & AMC_CHOICE_CTRL) && ((known & ~(uint64_t)0xff) == key);
    if (*rounds) {
        return amc_barrier_enter(comm, req, call);
    }
    return amc_coll_start_chosen(comm, call, req, key, known);
}

AMC_INLINE_ACROSS int amc_coll_start(amc_comm_t comm, const amc_coll_args_t *call,
                                     struct amc_request *req)
{
    int rounds;

    return amc_coll_start_rounds(comm, call, req, &rounds);
}
