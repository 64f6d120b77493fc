/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration test of dead peers: one rank dies
 * (SIGKILL or abort()) in the middle of a loop of collectives, under
 * `mpirun --mca orte_enable_recovery 1` so that the job survives it, with
 * AMC_TIMEOUT unset. Every survivor must
 *
 *   - get AMC_ERR_PEER (not AMC_ERR_TIMEOUT, not a hang) from its loop within
 *     2 s of the death (the victim writes its death time to a shared file;
 *     CLOCK_MONOTONIC is one clock for the whole node),
 *   - get AMC_ERR_PEER from a non-blocking collective that was outstanding on
 *     another communicator containing the dead rank (the victim never joined
 *     it), within the same bound,
 *   - get AMC_ERR_PEER at once from later calls on communicators containing
 *     it (blocking, non-blocking, persistent start, dup, split),
 *   - keep working on a communicator that does not contain it (the half of
 *     the world without the victim),
 *   - return from amc_finalize within 10 s.
 *
 *   test_peer_mpi loop RESULT_DIR      the scenario above
 *   test_peer_mpi node RESULT_DIR      a node lost: every rank on one host
 *                                      (AMCTEST_KILL_HOST, default the last
 *                                      rank's) dies at once in the loop; the
 *                                      survivors get AMC_ERR_PEER within 5 s
 *                                      on the world, their node's
 *                                      communicator keeps working, finalize
 *                                      ends within its bound (run across
 *                                      hosts: tests/cluster/)
 *   test_peer_mpi finalize RESULT_DIR  the victim dies after a barrier, the
 *                                      survivors start an ibarrier and a
 *                                      4 KiB iallreduce and finalize
 *                                      AMCTEST_PAUSE_MS (default 300) later
 *                                      without waiting (item 9: finalize hung
 *                                      in the PMIx fence)
 *   test_peer_mpi sleeper RESULT_DIR   a peer that dies asleep: rank 0 works
 *                                      (sleeps) 150 ms before each of 3
 *                                      barriers, so the victim sleeps on its
 *                                      doorbell in each and rank 0's message
 *                                      rings it; in the fourth rank 0
 *                                      SIGKILLs it (seen asleep in /proc),
 *                                      waits 20 ms and enters that barrier
 *                                      and the next, whose messages ring the
 *                                      dead rank's bell: AMC_ERR_PEER from
 *                                      the second at the latest (the victim
 *                                      entered the first) within 2 s of the
 *                                      kill, never a death (the bell was a
 *                                      pipe whose only reader was the
 *                                      victim: SIGPIPE)
 *
 * Knobs (environment): AMCTEST_DEATH=sigkill|abort (default sigkill),
 * AMCTEST_OP=barrier|allreduce|bcast (the loop's collective, default barrier;
 * bcast: 1 MiB from each rank in turn, pulled on one node),
 * AMCTEST_VICTIM (default: the last rank), AMCTEST_DEATH_ITER (loop
 * iteration the victim dies at, default 200).
 *
 * Each survivor writes RESULT_DIR/rank.<r>: "ok ..." with its measurements,
 * or its failures. The launcher's exit status says nothing useful here (it
 * reports the killed rank), so the script checks these files instead.
 */
#define _GNU_SOURCE

#include "amcoll.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TP_LATENCY_MAX   2.0   /* seconds from the death to AMC_ERR_PEER */
#define TP_FINALIZE_MAX 10.0   /* seconds amc_finalize may take */
#define TP_AT_ONCE       0.5   /* a call on a broken communicator, seconds */
#define TP_NODE_LATENCY_MAX 5.0 /* seconds from a node's loss to AMC_ERR_PEER */
#define TP_HOST_LEN     64
#define TP_SLEEPER_ROUNDS    3   /* barriers with the victim asleep before the kill */
#define TP_SLEEPER_WORK_MS 150   /* rank 0's work before each: far past the others' yield */
#define TP_SLEEPER_GRACE_MS 20   /* from the kill to rank 0's barrier */

static int  tp_rank, tp_size, tp_victim;
static int  tp_failures;
static char tp_log[8192];
static size_t tp_log_len;

static double tp_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void tp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tp_note(const char *fmt, ...)
{
    va_list ap;
    int     n;

    if (tp_log_len >= sizeof(tp_log)) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(tp_log + tp_log_len, sizeof(tp_log) - tp_log_len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        tp_log_len += (size_t)n;
        if (tp_log_len > sizeof(tp_log)) {
            tp_log_len = sizeof(tp_log);
        }
    }
}

#define TP_CHECK(_cond, ...)                                                    \
    do {                                                                        \
        if (!(_cond)) {                                                         \
            tp_note("FAIL rank %d/%d line %d: ", tp_rank, tp_size, __LINE__);    \
            tp_note(__VA_ARGS__);                                               \
            tp_note("\n");                                                      \
            fprintf(stderr, "FAIL rank %d/%d %s:%d\n", tp_rank, tp_size,        \
                    __FILE__, __LINE__);                                        \
            tp_failures++;                                                      \
        }                                                                       \
    } while (0)

static const char *tp_env(const char *name, const char *dflt)
{
    const char *v = getenv(name);

    return ((v != NULL) && (v[0] != '\0')) ? v : dflt;
}

static void tp_death_path(const char *dir, char *buf, size_t len)
{
    snprintf(buf, len, "%s/death", dir);
}

/* The victim: its death time where the survivors find it, then the death.
 * Written aside and renamed into place: where several ranks die (a node
 * lost), one that truncated the file and was killed before writing it
 * (by the launcher, which kills the rest of a node's tasks) must not leave
 * it empty for a survivor to read. */
static void tp_die(const char *dir)
{
    char          path[4096], tmp[4200];
    struct rlimit no_core = { 0, 0 };
    double        t;
    FILE         *f;

    tp_death_path(dir, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.%d.%ld", path, tp_rank, (long)getpid());
    t = tp_now();
    f = fopen(tmp, "w");
    if (f != NULL) {
        fprintf(f, "%.9f\n", t);
        if ((fclose(f) != 0) || (rename(tmp, path) != 0)) {
            (void)unlink(tmp);
        }
    }
    if (strcmp(tp_env("AMCTEST_DEATH", "sigkill"), "abort") == 0) {
        (void)setrlimit(RLIMIT_CORE, &no_core); /* no core file to write first */
        abort();
    }
    raise(SIGKILL);
    _exit(99); /* not reached */
}

static double tp_death_time(const char *dir)
{
    char   path[4096];
    double t = 0.0;
    FILE  *f;

    tp_death_path(dir, path, sizeof(path));
    f = fopen(path, "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &t) != 1) {
            t = 0.0;
        }
        fclose(f);
    }
    return t;
}

/* A 1 MiB bcast from each rank in turn: on one node its data goes by pull,
 * so the victim may die at any point of one (its sender's chunk in flight,
 * its fetch half done). */
#define TP_BCAST_INTS (256 * 1024)

static int tp_bcast(amc_comm_t comm, int iter)
{
    static int32_t buf[TP_BCAST_INTS];
    int            i, rc, n, me, root;

    amc_comm_size(comm, &n);
    amc_comm_rank(comm, &me);
    root = iter % n;
    for (i = 0; i < TP_BCAST_INTS; i++) {
        buf[i] = (me == root) ? iter * 7 + i : -1;
    }
    rc = amc_bcast(buf, TP_BCAST_INTS, AMC_INT32, root, comm);
    for (i = 0; (rc == AMC_SUCCESS) && (i < TP_BCAST_INTS); i++) {
        if (buf[i] != iter * 7 + i) {
            TP_CHECK(0, "bcast %d: element %d is %d, expected %d", iter, i, (int)buf[i],
                     iter * 7 + i);
            break;
        }
    }
    return rc;
}

static int tp_op(amc_comm_t comm, int iter)
{
    int32_t in[4], out[4];
    int     i, rc, n;

    if (strcmp(tp_env("AMCTEST_OP", "barrier"), "bcast") == 0) {
        return tp_bcast(comm, iter);
    }
    if (strcmp(tp_env("AMCTEST_OP", "barrier"), "allreduce") != 0) {
        return amc_barrier(comm);
    }
    amc_comm_size(comm, &n);
    for (i = 0; i < 4; i++) {
        in[i] = iter + i;
    }
    rc = amc_allreduce(in, out, 4, AMC_INT32, AMC_SUM, comm);
    if ((rc == AMC_SUCCESS) && (out[3] != n * (iter + 3))) {
        TP_CHECK(0, "allreduce %d: %d, expected %d", iter, (int)out[3], n * (iter + 3));
    }
    return rc;
}

/* The survivors' loop until it fails: AMC_ERR_PEER within bound seconds of
 * the death. Returns the seconds it took; *iter the failing iteration. */
static double tp_loop_until_dead(const char *dir, double bound, int *iter)
{
    double t_err, t_death;
    int    i, rc = AMC_SUCCESS;

    for (i = 0; i < 100000000; i++) {
        rc = tp_op(amc_comm_world(), i);
        if (rc != AMC_SUCCESS) {
            break;
        }
    }
    t_err   = tp_now();
    t_death = tp_death_time(dir);
    *iter   = i;
    TP_CHECK(rc == AMC_ERR_PEER, "the loop ended at iteration %d with %s", i, amc_strerror(rc));
    TP_CHECK(t_death > 0.0, "no death time in %s", dir);
    TP_CHECK(t_err - t_death < bound, "AMC_ERR_PEER %.3f s after the death", t_err - t_death);
    return t_err - t_death;
}

/* A call on a communicator that contains the dead rank: AMC_ERR_PEER, now. */
#define TP_BROKEN(_call)                                                        \
    do {                                                                        \
        double _t0 = tp_now();                                                  \
        int    _rc = (_call);                                                   \
        double _dt = tp_now() - _t0;                                            \
        TP_CHECK(_rc == AMC_ERR_PEER, "%s on a broken communicator: %s", #_call, \
                 amc_strerror(_rc));                                            \
        TP_CHECK(_dt < TP_AT_ONCE, "%s took %.3f s", #_call, _dt);              \
    } while (0)

/* Collectives on the half of the world without the victim. */
static void tp_check_half(amc_comm_t half)
{
    int32_t one = 1, sum = 0;
    int     n, i, rc;

    amc_comm_size(half, &n);
    for (i = 0; i < 50; i++) {
        rc = amc_allreduce(&one, &sum, 1, AMC_INT32, AMC_SUM, half);
        TP_CHECK((rc == AMC_SUCCESS) && (sum == n), "allreduce %d on the live half: %s, %d "
                 "of %d", i, amc_strerror(rc), (int)sum, n);
        rc = amc_barrier(half);
        TP_CHECK(rc == AMC_SUCCESS, "barrier %d on the live half: %s", i, amc_strerror(rc));
        if (tp_failures > 0) {
            break;
        }
    }
}

static void tp_write_result(const char *dir, const char *what)
{
    char  path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/rank.%d", dir, tp_rank);
    f = fopen(path, "w");
    if (f == NULL) {
        return;
    }
    if (tp_failures == 0) {
        fprintf(f, "ok %s\n", what);
    }
    fputs(tp_log, f);
    fclose(f);
}

static void tp_loop(const char *dir, double *finalize_s)
{
    amc_comm_t    half = AMC_COMM_NULL, dupw = AMC_COMM_NULL, other = AMC_COMM_NULL;
    amc_request_t nb   = AMC_REQUEST_NULL, req = AMC_REQUEST_NULL, pers = AMC_REQUEST_NULL;
    int           die_at = atoi(tp_env("AMCTEST_DEATH_ITER", "200"));
    int           live_half = (tp_victim < tp_size / 2) ? 1 : 0;
    int           color = (tp_rank < tp_size / 2) ? 0 : 1;
    int32_t       one = 1, sum = 0;
    double        t_err, t_death, t_nb, t0;
    int           i, rc = AMC_SUCCESS;

    TP_CHECK(amc_comm_split(amc_comm_world(), color, tp_rank, &half) == AMC_SUCCESS, "split");
    TP_CHECK(amc_comm_dup(amc_comm_world(), &dupw) == AMC_SUCCESS, "dup");
    for (i = 0; i < 5; i++) {
        TP_CHECK(tp_op(amc_comm_world(), i) == AMC_SUCCESS, "warm-up %d", i);
    }
    if (tp_rank == tp_victim) {
        for (i = 0; i < die_at; i++) {
            (void)tp_op(amc_comm_world(), i);
        }
        tp_die(dir);
    }
    /* outstanding on dupw when the victim dies: it never joins */
    TP_CHECK(amc_ibarrier(dupw, &nb) == AMC_SUCCESS, "ibarrier on the dup");

    t_err = tp_loop_until_dead(dir, TP_LATENCY_MAX, &i);
    tp_note("loop ended at %d, %.3f s after the death\n", i, t_err);
    t_death = tp_death_time(dir);
    t_err  += t_death;

    rc   = amc_wait(&nb);
    t_nb = tp_now();
    TP_CHECK(rc == AMC_ERR_PEER, "the outstanding ibarrier on the dup: %s", amc_strerror(rc));
    TP_CHECK(t_nb - t_death < TP_LATENCY_MAX, "the outstanding ibarrier ended %.3f s after "
             "the death", t_nb - t_death);

    /* later calls on communicators that contain the dead rank */
    TP_BROKEN(amc_barrier(amc_comm_world()));
    TP_BROKEN(amc_allreduce(&one, &sum, 1, AMC_INT32, AMC_SUM, amc_comm_world()));
    TP_BROKEN(amc_iallreduce(&one, &sum, 1, AMC_INT32, AMC_SUM, dupw, &req));
    TP_BROKEN(amc_bcast(&one, 1, AMC_INT32, 0, dupw));
    TP_BROKEN(amc_comm_dup(amc_comm_world(), &other));
    TP_BROKEN(amc_comm_split(dupw, 0, 0, &other));
    TP_CHECK(amc_barrier_init(amc_comm_world(), &pers) == AMC_SUCCESS, "barrier_init");
    TP_BROKEN(amc_start(&pers));
    amc_request_free(&pers);
    if (color != live_half) {
        TP_BROKEN(amc_barrier(half)); /* the victim's half */
    } else {
        tp_check_half(half);          /* keeps working */
    }
    amc_comm_free(&dupw);
    amc_comm_free(&half);

    t0 = tp_now();
    TP_CHECK(amc_finalize() == AMC_SUCCESS, "amc_finalize");
    *finalize_s = tp_now() - t0;
    TP_CHECK(*finalize_s < TP_FINALIZE_MAX, "amc_finalize took %.3f s", *finalize_s);
    tp_note("latency %.3f s, outstanding %.3f s, finalize %.3f s\n", t_err - t_death,
            t_nb - t_death, *finalize_s);
}

/* The ranks on the victim host die together; the others carry on. */
static void tp_node(const char *dir, double *finalize_s)
{
    amc_comm_t node = AMC_COMM_NULL;
    char       host[TP_HOST_LEN], (*hosts)[TP_HOST_LEN];
    const char *victim;
    int        die_at = atoi(tp_env("AMCTEST_DEATH_ITER", "200"));
    int        color = -1, victims = 0, i;
    double     t_err, t0;

    memset(host, 0, sizeof(host));
    (void)gethostname(host, sizeof(host) - 1);
    hosts = calloc((size_t)tp_size, sizeof(*hosts));
    TP_CHECK(hosts != NULL, "no memory");
    if (hosts == NULL) {
        return;
    }
    TP_CHECK(amc_allgather(host, hosts, TP_HOST_LEN, AMC_BYTE, amc_comm_world()) == AMC_SUCCESS, "allgather of host names");
    victim = tp_env("AMCTEST_KILL_HOST", hosts[tp_size - 1]);
    for (i = 0; i < tp_size; i++) {
        if ((color < 0) && (strcmp(hosts[i], host) == 0)) {
            color = i; /* the node's first rank names it */
        }
        victims += (strcmp(hosts[i], victim) == 0);
    }
    TP_CHECK((victims > 0) && (victims < tp_size), "%d of %d ranks on host %s: the test "
             "needs ranks on it and elsewhere", victims, tp_size, victim);
    TP_CHECK(amc_comm_split(amc_comm_world(), color, tp_rank, &node) == AMC_SUCCESS,
             "split by host");
    for (i = 0; i < 5; i++) {
        TP_CHECK(tp_op(amc_comm_world(), i) == AMC_SUCCESS, "warm-up %d", i);
    }
    if ((tp_failures > 0) || (victims == 0) || (victims == tp_size)) {
        free(hosts);
        return;
    }
    if (strcmp(host, victim) == 0) {
        for (i = 0; i < die_at; i++) {
            (void)tp_op(amc_comm_world(), i);
        }
        tp_die(dir);
    }
    t_err = tp_loop_until_dead(dir, TP_NODE_LATENCY_MAX, &i);
    TP_BROKEN(amc_barrier(amc_comm_world()));
    tp_check_half(node); /* this node's communicator keeps working */
    amc_comm_free(&node);
    free(hosts);

    t0 = tp_now();
    TP_CHECK(amc_finalize() == AMC_SUCCESS, "amc_finalize");
    *finalize_s = tp_now() - t0;
    TP_CHECK(*finalize_s < TP_FINALIZE_MAX, "amc_finalize took %.3f s", *finalize_s);
    tp_note("host %s: loop ended at %d, %.3f s after the loss of %s (%d ranks), finalize "
            "%.3f s\n", host, i, t_err, victim, victims, *finalize_s);
}

static void tp_finalize_only(const char *dir, double *finalize_s)
{
    long            ms = atol(tp_env("AMCTEST_PAUSE_MS", "300"));
    struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
    amc_request_t   req[2];
    int32_t         in[1024], out[1024];
    double          t0;

    memset(in, 0, sizeof(in));
    TP_CHECK(amc_barrier(amc_comm_world()) == AMC_SUCCESS, "barrier");
    if (tp_rank == tp_victim) {
        tp_die(dir);
    }
    /* pending at finalize, never to complete: a barrier and a large
     * allreduce (its rendezvous messages to the dead rank are never pulled) */
    TP_CHECK(amc_ibarrier(amc_comm_world(), &req[0]) == AMC_SUCCESS, "ibarrier");
    TP_CHECK(amc_iallreduce(in, out, 1024, AMC_INT32, AMC_SUM, amc_comm_world(), &req[1]) ==
             AMC_SUCCESS, "iallreduce");
    nanosleep(&pause, NULL); /* the victim is gone before anyone finalizes */
    t0 = tp_now();
    TP_CHECK(amc_finalize() == AMC_SUCCESS, "amc_finalize");
    *finalize_s = tp_now() - t0;
    TP_CHECK(*finalize_s < TP_FINALIZE_MAX, "amc_finalize took %.3f s", *finalize_s);
    tp_note("finalize %.3f s\n", *finalize_s);
}

static void tp_pause_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

    while ((nanosleep(&t, &t) != 0) && (errno == EINTR)) {
    }
}

/* Process pid's state letter (/proc/PID/stat); '?' where it cannot be read. */
static char tp_proc_state(pid_t pid)
{
    char   path[64], buf[512], *p;
    size_t n;
    FILE  *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return '?';
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p      = strrchr(buf, ')'); /* the name may hold anything; the state follows it */
    return ((p != NULL) && (p[1] == ' ')) ? p[2] : '?';
}

/* Rank 0 kills the victim while it sleeps in a barrier, after its
 * messages rang the victim's doorbell (so the bell is open on rank 0),
 * and then sends into the dead rank's mailbox, whose sleeper count the
 * victim never took back: the send rings the bell again. */
static void tp_sleeper(double *finalize_s)
{
    int32_t me = (int32_t)getpid(), *pids;
    pid_t   victim_pid;
    double  t_kill = 0.0, t_err = 0.0, t0;
    char    state = '?';
    int     i, rc;

    pids = calloc((size_t)tp_size, sizeof(*pids));
    TP_CHECK(pids != NULL, "no memory");
    TP_CHECK(tp_victim != 0, "rank 0 kills: the victim must be another rank");
    if ((pids == NULL) || (tp_victim == 0)) {
        free(pids);
        return;
    }
    rc = amc_allgather(&me, pids, 1, AMC_INT32, amc_comm_world());
    TP_CHECK(rc == AMC_SUCCESS, "allgather of the pids: %s", amc_strerror(rc));
    victim_pid = (pid_t)pids[tp_victim];
    free(pids);
    for (i = 0; (i < TP_SLEEPER_ROUNDS) && (tp_failures == 0); i++) {
        if (tp_rank == 0) {
            tp_pause_ms(TP_SLEEPER_WORK_MS);
        }
        rc = amc_barrier(amc_comm_world());
        TP_CHECK(rc == AMC_SUCCESS, "barrier %d: %s", i, amc_strerror(rc));
    }
    if (tp_failures > 0) {
        return;
    }
    if (tp_rank == 0) {
        tp_pause_ms(TP_SLEEPER_WORK_MS);
        /* asleep: in poll on its doorbell, not between two sleeps */
        for (i = 0; (i < 1000) && ((state = tp_proc_state(victim_pid)) != 'S'); i++) {
            tp_pause_ms(1);
        }
        TP_CHECK(state == 'S', "the victim (pid %d) not seen asleep: state %c",
                 (int)victim_pid, state);
        t_kill = tp_now();
        TP_CHECK(kill(victim_pid, SIGKILL) == 0, "kill of pid %d: %s", (int)victim_pid,
                 strerror(errno));
        tp_pause_ms(TP_SLEEPER_GRACE_MS);
    }
    /* The victim sleeps in the first until it dies, and returns only if the
     * kill failed (rank 0's result says so). It entered that one (its
     * message waits in rank 0's mailbox), so it may still complete; never
     * the second. Each sends into the dead rank's mailbox. */
    for (i = 0; (i < 2) && ((rc = amc_barrier(amc_comm_world())) == AMC_SUCCESS); i++) {
    }
    if (tp_rank == tp_victim) {
        (void)amc_finalize();
        return;
    }
    t_err = tp_now() - t_kill;
    TP_CHECK(rc == AMC_ERR_PEER, "barrier %d after the kill: %s", i, amc_strerror(rc));
    TP_CHECK((tp_rank != 0) || (t_err < TP_LATENCY_MAX), "AMC_ERR_PEER %.3f s after the "
             "kill", t_err);

    t0 = tp_now();
    TP_CHECK(amc_finalize() == AMC_SUCCESS, "amc_finalize");
    *finalize_s = tp_now() - t0;
    TP_CHECK(*finalize_s < TP_FINALIZE_MAX, "amc_finalize took %.3f s", *finalize_s);
    if (tp_rank == 0) {
        tp_note("victim pid %d in state %c at the kill, AMC_ERR_PEER from barrier %d %.3f s "
                "after it, finalize %.3f s\n", (int)victim_pid, state, i, t_err, *finalize_s);
    } else {
        tp_note("finalize %.3f s\n", *finalize_s);
    }
}

int main(int argc, char **argv)
{
    const char *sub = (argc > 1) ? argv[1] : "?";
    const char *dir = (argc > 2) ? argv[2] : ".";
    const char *tmo = getenv("AMC_TIMEOUT");
    double      fin = 0.0;
    char        what[256];

    if (amc_init(&argc, &argv) != AMC_SUCCESS) {
        fprintf(stderr, "amc_init failed\n");
        return 1;
    }
    amc_comm_rank(amc_comm_world(), &tp_rank);
    amc_comm_size(amc_comm_world(), &tp_size);
    tp_victim = atoi(tp_env("AMCTEST_VICTIM", "-1"));
    if ((tp_victim < 0) || (tp_victim >= tp_size)) {
        tp_victim = tp_size - 1;
    }
    TP_CHECK((tmo == NULL) || (atof(tmo) == 0.0), "AMC_TIMEOUT=%s: the test needs it unset", tmo);
    TP_CHECK(tp_size >= 2, "needs at least 2 ranks");
    if (tp_size < 2) {
        tp_write_result(dir, "");
        return 1;
    }

    if (strcmp(sub, "loop") == 0) {
        tp_loop(dir, &fin);
    } else if (strcmp(sub, "node") == 0) {
        tp_node(dir, &fin);
    } else if (strcmp(sub, "finalize") == 0) {
        tp_finalize_only(dir, &fin);
    } else if (strcmp(sub, "sleeper") == 0) {
        tp_sleeper(&fin);
    } else {
        TP_CHECK(0, "unknown subtest %s", sub);
    }
    snprintf(what, sizeof(what), "%s rank %d of %d", sub, tp_rank, tp_size);
    tp_write_result(dir, what);
    return tp_failures ? 1 : 0;
}
