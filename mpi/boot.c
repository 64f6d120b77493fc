/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi, libamcoll_mpich: amcoll's start inside MPI_Init (boot.h).
 *
 * MPI's exchange runs in rounds over the private communicator: each of
 * amcoll's allgathers is an allreduce of every rank's state (going on,
 * done, failed) and then, if every rank goes on, the allgather itself. A
 * rank whose start fails takes part in the round the others are in, with
 * "failed" instead of its bytes; they give up their start in that round
 * (quietly: the rank that failed says why), and every rank stops after
 * that same round, so none waits in a collective the others never call.
 * A rank whose start failed after the last allgather, or that started,
 * says so in one more round (amcm_boot_agree), which the others are in
 * too.
 */
#include "mpi/boot.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

enum { AMCM_BOOT_PMIX, AMCM_BOOT_MPI };

/* A rank's state in a round: the smallest wins. */
enum { AMCM_ROUND_FAILED, AMCM_ROUND_DONE, AMCM_ROUND_GO };

static struct {
    int         way;         /* AMCM_BOOT_* */
    const char *why;
    MPI_Comm    comm;        /* MPI's exchange: a duplicate of MPI_COMM_WORLD */
    int         steps;       /* allgathers so far */
    int         fail_at;     /* AMCOLL_MPI_TEST_FAIL on this rank: the step, else -1 */
    int         over;        /* a round ended the start, alike on every rank */
    int         failure;     /* AMCM_BOOT_FAIL_* of this rank's failed start */
    int         started;     /* every rank started: the teardown's barriers are real */
} amcm_boot = { .comm = MPI_COMM_NULL, .fail_at = -1 };

/* ------------------------------------------------------------------ the way */

/* Open MPI's mpirun, PRRTE and Slurm's pmix plugin give their ranks the
 * server's name and address; Hydra and srun --mpi=pmi2 give PMI_* only. */
static int amcm_pmix_server_seen(void)
{
    char **e;

    if (getenv("PMIX_NAMESPACE") != NULL) {
        return 1;
    }
    for (e = environ; (e != NULL) && (*e != NULL); e++) {
        if (strncmp(*e, "PMIX_SERVER_URI", strlen("PMIX_SERVER_URI")) == 0) {
            return 1;
        }
    }
    return 0;
}

void amcm_boot_choose(void)
{
    const char *env = getenv("AMCOLL_MPI_BOOT");
    int         mpi, any = 0;

    if ((env != NULL) && (strcmp(env, "mpi") == 0)) {
        mpi           = 1;
        amcm_boot.why = "AMCOLL_MPI_BOOT=mpi";
    } else if ((env != NULL) && (strcmp(env, "pmix") == 0)) {
        mpi           = 0;
        amcm_boot.why = "AMCOLL_MPI_BOOT=pmix";
    } else {
        if ((env != NULL) && (*env != '\0') && (strcmp(env, "auto") != 0) &&
            (amcm_g.world_rank == 0)) {
            fprintf(stderr,
                    AMCM_LIB ": AMCOLL_MPI_BOOT=%s: not auto, pmix or mpi; taken as auto\n", env);
        }
        mpi           = !amcm_pmix_server_seen();
        amcm_boot.why = mpi ? "no PMIx server in the environment"
                            : "a PMIx server in the environment";
    }
    /* a rank in PMIx's fence and another in MPI's allgather would wait for
     * ever: where any rank lacks a server, all take MPI's exchange */
    PMPI_Allreduce(&mpi, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !mpi) {
        amcm_boot.why = "another rank sees no PMIx server";
    }
    amcm_boot.way = any ? AMCM_BOOT_MPI : AMCM_BOOT_PMIX;
}

/* ------------------------------------------------------------------ the test's failure */

/* AMCOLL_MPI_TEST_FAIL=RANK[:STEP] (tests only): that rank acts as if its
 * start failed, at the STEP-th allgather of MPI's exchange, before the
 * first (STEP 0, the default), or after amcoll started (a STEP past the
 * last allgather, or under PMIx, whose fences cannot be left). */
static void amcm_boot_test_read(void)
{
    const char *env = getenv("AMCOLL_MPI_TEST_FAIL");
    char       *end;
    long        r;

    if (env == NULL) {
        return;
    }
    r = strtol(env, &end, 10);
    if ((end != env) && (r == amcm_g.world_rank)) {
        amcm_boot.fail_at = (*end == ':') ? atoi(end + 1) : 0;
    }
}

static void amcm_boot_test_say(const char *when)
{
    fprintf(stderr, AMCM_LIB ": rank %d: AMCOLL_MPI_TEST_FAIL: acting as if amcoll could not "
            "start (%s): collectives stay on MPI\n", amcm_g.world_rank, when);
    amcm_boot.failure = AMCM_BOOT_FAIL_SAID;
}

int amcm_boot_test_fail(int ok)
{
    if (ok && (amcm_boot.fail_at >= 0)) {
        amcm_boot_test_say("after its start");
        return 0;
    }
    return ok;
}

/* ------------------------------------------------------------------ MPI's exchange */

static int amcm_boot_round(int state)
{
    int all = AMCM_ROUND_FAILED;

    if (PMPI_Allreduce(&state, &all, 1, MPI_INT, MPI_MIN, amcm_boot.comm) != MPI_SUCCESS) {
        return AMCM_ROUND_FAILED;
    }
    return all;
}

static int amcm_boot_allgather(void *arg, const void *mine, void *all, size_t len)
{
    int state = AMCM_ROUND_GO;

    (void)arg;
    amcm_boot.steps++;
    if (amcm_boot.steps == amcm_boot.fail_at) {
        char when[64];

        snprintf(when, sizeof(when), "at allgather %d of MPI's exchange", amcm_boot.steps);
        amcm_boot_test_say(when);
        amcm_boot.fail_at = -1;
        state             = AMCM_ROUND_FAILED;
    } else if (len > INT_MAX) {
        state = AMCM_ROUND_FAILED; /* not an address: amcoll refuses those first */
    }
    if (amcm_boot_round(state) != AMCM_ROUND_GO) {
        amcm_boot.over = 1;
        if ((state == AMCM_ROUND_GO) && (amcm_boot.failure == AMCM_BOOT_FAIL_HERE)) {
            amcm_boot.failure = AMCM_BOOT_FAIL_ELSEWHERE;
        }
        return -1;
    }
    return (PMPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, amcm_boot.comm) ==
            MPI_SUCCESS) ? 0 : -1;
}

/* Before every rank agreed that amcoll started, a rank tears down alone
 * (its start failed, or another's) and no peer waits for it: nothing went
 * through amcoll yet. After, a real barrier that lets amcoll progress. */
static int amcm_boot_barrier(void *arg, int (*progress)(void *ctx), void *ctx)
{
    MPI_Request req;
    unsigned    passes = 0;
    int         flag   = 0;

    (void)arg;
    if (!amcm_boot.started || (PMPI_Ibarrier(amcm_boot.comm, &req) != MPI_SUCCESS)) {
        return 1;
    }
    for (;;) {
        if (PMPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return 1;
        }
        if (flag) {
            return 0;
        }
        if (progress(ctx)) {
            return 1; /* amcoll gave up (a peer died): the request stays, it is the teardown */
        }
        if (amcm_g.oversub || ((++passes & 63) == 0)) {
            sched_yield();
        }
    }
}

/* The node: the smallest world rank among the ranks that share memory. */
static int amcm_boot_node(int rank, int *node)
{
    MPI_Comm shared = MPI_COMM_NULL;
    int      rc;

    rc = PMPI_Comm_split_type(amcm_boot.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Allreduce(&rank, node, 1, MPI_INT, MPI_MIN, shared);
        PMPI_Comm_free(&shared);
    }
    return rc;
}

int amcm_boot_start(int *argc, char ***argv, int required, int *provided)
{
    amc_boot_t b;

    amcm_boot_test_read();
    if (amcm_boot.way == AMCM_BOOT_PMIX) {
        return amc_init_thread(argc, argv, required, provided);
    }
    memset(&b, 0, sizeof(b));
    /* inside MPI_Init the world's handler is MPI_ERRORS_ARE_FATAL: these
     * calls do not fail on one rank while the others go on */
    if ((PMPI_Comm_dup(MPI_COMM_WORLD, &amcm_boot.comm) != MPI_SUCCESS) ||
        (PMPI_Comm_rank(amcm_boot.comm, &b.rank) != MPI_SUCCESS) ||
        (PMPI_Comm_size(amcm_boot.comm, &b.size) != MPI_SUCCESS) ||
        (amcm_boot_node(b.rank, &b.node) != MPI_SUCCESS)) {
        amcm_boot.over = 1;
        return AMC_ERR_TRANSPORT;
    }
    b.allgather = amcm_boot_allgather;
    b.barrier   = amcm_boot_barrier;
    if (amcm_boot.fail_at == 0) {
        amcm_boot_test_say("before its start");
        amcm_boot.fail_at = -1;
        return AMC_ERR_TRANSPORT; /* in the others' first round by amcm_boot_agree */
    }
    return amc_init_boot(argc, argv, required, provided, &b);
}

int amcm_boot_failure(void)
{
    return amcm_boot.failure;
}

/* ------------------------------------------------------------------ agreement */

/* The info line: AMC_LOG_LEVEL info or finer, world rank 0. */
static void amcm_boot_say(void)
{
    const char *lvl = getenv("AMC_LOG_LEVEL");

    if ((amcm_g.world_rank != 0) || (lvl == NULL) ||
        ((strcasecmp(lvl, "info") != 0) && (strcasecmp(lvl, "debug") != 0) &&
         (strcasecmp(lvl, "trace") != 0))) {
        return;
    }
    fprintf(stderr, AMCM_LIB ": amcoll started by %s (%s)\n",
            (amcm_boot.way == AMCM_BOOT_MPI) ? "MPI's exchange over a duplicate of MPI_COMM_WORLD"
                                              : "the job's PMIx",
            amcm_boot.why);
}

int amcm_boot_agree(int ok)
{
    int all = 0;

    if (amcm_boot.way == AMCM_BOOT_PMIX) {
        PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    } else if (!amcm_boot.over) {
        all = (amcm_boot_round(ok ? AMCM_ROUND_DONE : AMCM_ROUND_FAILED) == AMCM_ROUND_DONE);
    }
    amcm_boot.started = all;
    if (all) {
        amcm_boot_say();
    }
    return all;
}

void amcm_boot_free(void)
{
    amcm_boot.started = 0;
    if (amcm_boot.comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&amcm_boot.comm);
    }
}
