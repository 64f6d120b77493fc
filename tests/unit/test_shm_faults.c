/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mailboxes (transport/shm.h) between real processes under faults: a
 * peer of the node that dies or misbehaves never takes a live rank with it.
 *   - A receiver killed while asleep on its doorbell: the sender's next
 *     messages ring a bell with no reader left, and the sender lives (no
 *     SIGPIPE), 20 rounds; its pidfd then says the peer is gone.
 *   - Another process of the user opens an inbox through /proc and tries
 *     to shrink or grow it: refused (sealed), and its owner reads every
 *     page of it afterwards (no SIGBUS).
 *   - A pid reused in a pid namespace (ns_last_pid hands a dead peer's pid
 *     to a stranger with files at the same descriptor numbers): the first
 *     contact is refused, the doorbell is not rung there, and a pull's
 *     chunk is not written into the stranger; the stranger's files and
 *     memory are unchanged.
 *   - A sender that holds a chunk of a pull (its write in flight) and is
 *     marked dead: the fetch waits, and ends with AMC_ERR_PEER once the
 *     sender's process exited.
 * Needs root or user namespaces for the pid namespace (CI runs as root).
 */
#define _GNU_SOURCE
#include "tests/unit/harness.h"
#include "transport/shm.h"
#include "transport/shm_pull.h"
#include "tests/unit/shm_connect.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_HDR 16

/* A write of a pull's chunk may be held in flight, and a read slowed, so
 * that a chunk is surely the sender's (the test's definitions come before
 * libc's, for the library's calls too). */
static int hold_write, slow_read; /* atomic */

ssize_t process_vm_readv(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
                         const struct iovec *rvec, unsigned long riovcnt, unsigned long flags)
{
    if (__atomic_load_n(&slow_read, __ATOMIC_ACQUIRE)) {
        usleep(20000);
    }
    return syscall(SYS_process_vm_readv, pid, lvec, liovcnt, rvec, riovcnt, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
                          const struct iovec *rvec, unsigned long riovcnt, unsigned long flags)
{
    while (__atomic_load_n(&hold_write, __ATOMIC_ACQUIRE)) {
        usleep(1000);
    }
    return syscall(SYS_process_vm_writev, pid, lvec, liovcnt, rvec, riovcnt, flags);
}

typedef struct rank {
    amc_transport_t tp;
    amc_log_t       log;
    amc_shm_t      *shm;
    unsigned long   got;
    void           *desc;   /* the last pull's */
} rank_t;

static void on_recv(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len,
                    void *desc)
{
    rank_t *r = arg;

    (void)hdr;
    (void)hdr_len;
    (void)data;
    (void)len;
    r->got++;
    r->desc = desc;
}

static void rank_init(rank_t *r, int rank)
{
    memset(r, 0, sizeof(*r));
    amc_test_shm_rank(&r->tp, &r->log, &r->shm, rank, 2, on_recv, r);
}

static void rank_fini(rank_t *r)
{
    amc_test_shm_free(r->shm, &r->tp);
}

static void put_all(int fd, const void *p, size_t n)
{
    if (write(fd, p, n) != (ssize_t)n) {
        _exit(90);
    }
}

static int get_all(int fd, void *p, size_t n)
{
    size_t  got = 0;
    ssize_t k;

    while (got < n) {
        k = read(fd, (char *)p + got, n - got);
        if (k <= 0) {
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

static void send_one(rank_t *from, amc_shm_out_t *out, int *status)
{
    uint8_t hdr[TEST_HDR] = { 1 }, data[8] = { 2 };

    *status = amc_shm_send(from->shm, out, hdr, TEST_HDR, data, sizeof(data), NULL);
}

/* Rank 1 announces its sleep and is killed asleep; rank 0 goes on sending
 * to it, so its bell rings with no reader left. */
static void test_sleeper_killed(void)
{
    int round, bad = 0, rounds = 20;

    for (round = 0; round < rounds; round++) {
        int             c2p[2], p2c[2], status, st1 = -1, st2 = -1;
        amc_shm_addr_t  mine, theirs;
        amc_shm_out_t  *out;
        amc_shm_peer_t *peer;
        rank_t          r0;
        pid_t           child;
        char            c;

        CHECK(pipe(c2p) == 0 && pipe(p2c) == 0, "pipes");
        child = fork();
        if (child == 0) {
            rank_t r1;

            rank_init(&r1, 1);
            amc_shm_addr(r1.shm, &mine);
            put_all(c2p[1], &mine, sizeof(mine));
            if ((get_all(p2c[0], &theirs, sizeof(theirs)) != 0) ||
                (amc_shm_peer_add(r1.shm, 0, &theirs) != AMC_SUCCESS)) {
                _exit(91);
            }
            (void)amc_shm_sleep_begin(r1.shm); /* asleep from here: a sender rings */
            put_all(c2p[1], "s", 1);
            for (;;) {
                pause();
            }
        }
        rank_init(&r0, 0);
        amc_shm_addr(r0.shm, &mine);
        CHECK(get_all(c2p[0], &theirs, sizeof(theirs)) == 0, "rank 1's address");
        put_all(p2c[1], &mine, sizeof(mine));
        CHECK(amc_shm_peer_add(r0.shm, 1, &theirs) == AMC_SUCCESS, "added");
        CHECK(amc_shm_connect(r0.shm, 1, &out) == AMC_SUCCESS, "connected");
        CHECK(get_all(c2p[0], &c, 1) == 0, "rank 1 sleeps");
        send_one(&r0, out, &st1); /* rings: the bell is open from here */
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        usleep(20000);
        send_one(&r0, out, &st2); /* its reader is gone: a write() to it would raise SIGPIPE */
        bad += (st1 != AMC_SUCCESS) || (st2 != AMC_SUCCESS);
        peer = amc_shm_peer_find(r0.shm, 1);
        usleep(200);
        CHECK(!amc_shm_peer_alive(r0.shm, peer) && amc_peer_set_test(&r0.tp.dead, 1),
              "round %d: its pidfd says it is gone", round);
        rank_fini(&r0);
        close(c2p[0]);
        close(c2p[1]);
        close(p2c[0]);
        close(p2c[1]);
    }
    CHECK(bad == 0, "the sender lived through %d killed sleepers, every send ended well "
          "(%d did not)", rounds, bad);
}

/* Another process of the user shrinks or grows an inbox it opened through
 * /proc: refused. */
static void test_inbox_sealed(void)
{
    rank_t          r0, r1;
    amc_shm_addr_t  addr;
    amc_shm_out_t  *out;
    int             res[4] = { 0, 0, 0, 0 }, p[2], status, st;
    volatile uint8_t sum = 0;
    pid_t           child;
    size_t          len, i;

    rank_init(&r0, 0);
    rank_init(&r1, 1);
    amc_shm_addr(r0.shm, &addr);
    len = amc_shm_inbox_bytes(addr.nrings);
    CHECK(pipe(p) == 0, "pipe");
    child = fork();
    if (child == 0) {
        char path[64];
        int  fd;

        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getppid(), addr.inbox_fd);
        fd     = open(path, O_RDWR);
        res[0] = ftruncate(fd, 0);
        res[1] = errno;
        res[2] = ftruncate(fd, (off_t)len * 2);
        res[3] = errno;
        put_all(p[1], res, sizeof(res));
        _exit(fd < 0);
    }
    CHECK(get_all(p[0], res, sizeof(res)) == 0, "the other process's answers");
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "it opened the inbox");
    CHECK(res[0] == -1 && res[1] == EPERM, "shrinking refused (%d, %s)", res[0], strerror(res[1]));
    CHECK(res[2] == -1 && res[3] == EPERM, "growing refused (%d, %s)", res[2], strerror(res[3]));
    for (i = 0; i < len; i += 4096) {
        sum += ((volatile uint8_t *)r0.shm->inbox)[i]; /* a shrunk file: SIGBUS here */
    }
    out = amc_test_shm_connect(r1.shm, 1, r0.shm, 0);
    send_one(&r1, out, &st);
    while (amc_shm_progress(r0.shm, 0) > 0) {
    }
    CHECK(st == AMC_SUCCESS && r0.got == 1, "the owner reads all of it and takes messages");
    close(p[0]);
    close(p[1]);
    rank_fini(&r0);
    rank_fini(&r1);
}

/* --- a pid reused in a pid namespace ------------------------------------- */

/* What the stranger reports: the address of its buffer, then its checks. */
typedef struct stranger_report {
    uint64_t buf;
    int      file_same;  /* its memfd at the inbox's number: untouched */
    int      pipe_empty; /* its pipe at the doorbell's number: nothing in it */
    int      buf_same;   /* its memory where a pull's chunk would go */
} stranger_report_t;

#define NS_BUF (1u << 20)

static void ns_say(int fd, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ns_say(int fd, int ok, const char *fmt, ...)
{
    char    line[512];
    va_list ap;
    int     n;

    n = snprintf(line, sizeof(line), "%s ", ok ? "PASS" : "FAIL");
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(line) - 1) {
        n = (int)sizeof(line) - 2;
    }
    line[n++] = '\n';
    put_all(fd, line, (size_t)n);
}

/* Pid 2 of the namespace after the peer that had it: files at the numbers
 * the peer published, and memory where a pull's chunk would go. */
static void ns_stranger(const amc_shm_addr_t *peer, size_t inbox_len, int report, int go)
{
    stranger_report_t r = { 0 };
    uint8_t          *mem = malloc(NS_BUF), *file;
    int               mfd, pp[2], bellw, i;
    char              c;

    mfd = memfd_create("stranger", 0);
    if ((mem == NULL) || (mfd < 0) || (ftruncate(mfd, (off_t)inbox_len) != 0) ||
        (pipe2(pp, O_NONBLOCK) != 0)) {
        _exit(80);
    }
    file = mmap(NULL, inbox_len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (file == MAP_FAILED) {
        _exit(81);
    }
    memset(file, 0x11, inbox_len);
    memset(mem, 0x22, NS_BUF);
    /* at the peer's numbers (pipes of this test may hold them: moved first) */
    bellw = pp[1];
    if (((pp[0] == peer->inbox_fd) || (pp[0] == peer->bell_fd)) &&
        ((pp[0] = fcntl(pp[0], F_DUPFD, 100)) < 0)) {
        _exit(82);
    }
    if ((dup2(mfd, peer->inbox_fd) < 0) || (dup2(bellw, peer->bell_fd) < 0)) {
        _exit(83);
    }
    r.buf = (uint64_t)(uintptr_t)mem;
    put_all(report, &r, sizeof(r));
    if (get_all(go, &c, 1) != 0) {
        _exit(84);
    }
    r.file_same = 1;
    for (i = 0; (size_t)i < inbox_len; i++) {
        r.file_same &= (file[i] == 0x11);
    }
    r.pipe_empty = (read(pp[0], &c, 1) < 0) && (errno == EAGAIN);
    r.buf_same   = 1;
    for (i = 0; i < (int)NS_BUF; i++) {
        r.buf_same &= (mem[i] == 0x22);
    }
    put_all(report, &r, sizeof(r));
    _exit(0);
}

static void pull_done(amc_completion_t *c, int status)
{
    (void)c;
    (void)status;
}

/* Pid 1 of a new pid namespace: rank 0 here, its peer rank 1 at pid 2 that
 * exits, and a stranger handed pid 2 after it. Reports PASS/FAIL lines. */
static void ns_init(int out_fd)
{
    int               c2p[2], p2c[2], s2p[2], p2s[2], status;
    amc_shm_addr_t    a1, a0;
    amc_shm_out_t    *out, *out2 = NULL;
    amc_shm_peer_t   *peer;
    stranger_report_t rep;
    amc_completion_t  comp = { pull_done };
    uint8_t           hdr[TEST_HDR] = { 0 }, *data;
    rank_t            r0, r0b;
    pid_t             a, b;
    FILE             *f;
    char              c;

    if ((mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) ||
        (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)) {
        ns_say(out_fd, 0, "a /proc of the new pid namespace: %s", strerror(errno));
        _exit(1);
    }
    if ((pipe(c2p) != 0) || (pipe(p2c) != 0) || (pipe(s2p) != 0) || (pipe(p2s) != 0)) {
        _exit(2);
    }
    rank_init(&r0, 0);
    amc_shm_addr(r0.shm, &a0);
    a = fork();
    if (a == 0) {
        rank_t r1;

        rank_init(&r1, 1);
        amc_shm_addr(r1.shm, &a1);
        put_all(c2p[1], &a1, sizeof(a1));
        if ((get_all(p2c[0], &a0, sizeof(a0)) != 0) ||
            (amc_shm_peer_add(r1.shm, 0, &a0) != AMC_SUCCESS)) {
            _exit(3);
        }
        put_all(c2p[1], "r", 1);
        (void)get_all(p2c[0], &c, 1); /* told to go */
        _exit(0);
    }
    if ((get_all(c2p[0], &a1, sizeof(a1)) != 0)) {
        _exit(4);
    }
    put_all(p2c[1], &a0, sizeof(a0));
    (void)get_all(c2p[0], &c, 1);
    ns_say(out_fd, a1.pid == 2, "the peer is pid %d of the namespace", (int)a1.pid);
    ns_say(out_fd, amc_shm_peer_add(r0.shm, 1, &a1) == AMC_SUCCESS, "its address added");
    ns_say(out_fd, amc_shm_connect(r0.shm, 1, &out) == AMC_SUCCESS, "connected while it lives");
    peer = amc_shm_peer_find(r0.shm, 1);
    amc_shm_bell_ring(r0.shm, peer); /* its doorbell open from here */
    /* the peer exits and is reaped; its pid goes to a stranger */
    put_all(p2c[1], "x", 1);
    waitpid(a, &status, 0);
    usleep(2000);
    f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if ((f == NULL) || (fprintf(f, "1") < 0) || (fclose(f) != 0)) {
        ns_say(out_fd, 0, "ns_last_pid: %s", strerror(errno));
        _exit(5);
    }
    b = fork();
    if (b == 0) {
        ns_stranger(&a1, amc_shm_inbox_bytes(a1.nrings), s2p[1], p2s[0]);
    }
    ns_say(out_fd, b == a, "the stranger got the peer's pid %d (it is %d)", (int)a, (int)b);
    if (get_all(s2p[0], &rep, sizeof(rep)) != 0) {
        ns_say(out_fd, 0, "the stranger's report");
        _exit(6);
    }
    /* (1) a pull to the old peer, opened by "it" into the stranger's memory:
     * the chunk must not be written there */
    data = malloc(NS_BUF);
    memset(data, 0x77, NS_BUF);
    ns_say(out_fd, amc_shm_pull_send(r0.shm, out, hdr, TEST_HDR, data, NS_BUF, &comp) ==
                       AMC_INPROGRESS, "a pull to the old peer goes out");
    __atomic_store_n(&out->ring->pull[0].dst, rep.buf, __ATOMIC_RELAXED);
    __atomic_store_n(&out->ring->pull[0].state, AMC_SHM_PULL_OPEN, __ATOMIC_RELEASE);
    (void)amc_shm_progress(r0.shm, 0);
    ns_say(out_fd, amc_peer_set_test(&r0.tp.dead, 1), "the old peer is found gone");
    /* (2) its doorbell: through the descriptor opened while it lived */
    amc_shm_bell_ring(r0.shm, peer);
    /* (3) a first contact with what it published, now the stranger's pid */
    rank_init(&r0b, 0);
    ns_say(out_fd, amc_shm_peer_add(r0b.shm, 1, &a1) == AMC_SUCCESS, "added again");
    r0b.shm->log.level = AMC_LOG_ERROR - 1; /* it says why at debug level */
    ns_say(out_fd, amc_shm_connect(r0b.shm, 1, &out2) != AMC_SUCCESS,
           "a first contact with the stranger is refused");
    amc_shm_bell_ring(r0b.shm, amc_shm_peer_find(r0b.shm, 1));
    put_all(p2s[1], "c", 1);
    if (get_all(s2p[0], &rep, sizeof(rep)) != 0) {
        ns_say(out_fd, 0, "the stranger's checks");
        _exit(7);
    }
    ns_say(out_fd, rep.file_same, "its file at the inbox's number is untouched");
    ns_say(out_fd, rep.pipe_empty, "its pipe at the doorbell's number got nothing");
    ns_say(out_fd, rep.buf_same, "its memory got no chunk of the pull");
    waitpid(b, &status, 0);
    free(data);
    _exit(0);
}

static void test_pid_reused(void)
{
    int   p[2], status, n = 0;
    pid_t outer;
    FILE *f;
    char  line[512];

    CHECK(pipe(p) == 0, "pipe");
    outer = fork();
    if (outer == 0) {
        pid_t init;

        close(p[0]);
        /* a pid and mount namespace of our own: as root, else inside a user
         * namespace where we are root */
        if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
            uid_t uid = getuid();
            gid_t gid = getgid();
            char  map[64];
            FILE *m;

            if (unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) != 0) {
                ns_say(p[1], 0, "no pid namespace (not root, no user namespaces): %s",
                       strerror(errno));
                _exit(1);
            }
            if ((m = fopen("/proc/self/setgroups", "w")) != NULL) {
                fputs("deny", m);
                fclose(m);
            }
            snprintf(map, sizeof(map), "0 %d 1", (int)uid);
            if ((m = fopen("/proc/self/uid_map", "w")) != NULL) {
                fputs(map, m);
                fclose(m);
            }
            snprintf(map, sizeof(map), "0 %d 1", (int)gid);
            if ((m = fopen("/proc/self/gid_map", "w")) != NULL) {
                fputs(map, m);
                fclose(m);
            }
        }
        init = fork();
        if (init == 0) {
            ns_init(p[1]);
        }
        waitpid(init, &status, 0);
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 100);
    }
    close(p[1]);
    f = fdopen(p[0], "r");
    while ((f != NULL) && (fgets(line, sizeof(line), f) != NULL)) {
        line[strcspn(line, "\n")] = '\0';
        CHECK(strncmp(line, "PASS ", 5) == 0, "pid namespace: %s", line + 5);
        n++;
    }
    if (f != NULL) {
        fclose(f);
    }
    waitpid(outer, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && n >= 11,
          "pid namespace: every step ran (%d reports, exit status 0x%x)", n, status);
}

/* --- a sender that exits holding a chunk ---------------------------------- */

static int counted_n, counted_status;

static void counted_fn(amc_completion_t *c, int status)
{
    (void)c;
    counted_status = status;
    counted_n++;
}

static amc_completion_t counted = { counted_fn };

static void test_sender_exits_holding(void)
{
    int             c2p[2], p2c[2], status, i, st;
    amc_shm_addr_t  mine, theirs;
    amc_completion_t comp = { pull_done };
    rank_t          r1;
    pid_t           child;
    uint8_t        *buf = malloc(NS_BUF);
    double          t0;
    char            c;

    CHECK(pipe(c2p) == 0 && pipe(p2c) == 0, "pipes");
    child = fork();
    if (child == 0) {
        amc_shm_out_t *out;
        rank_t         r0;
        uint8_t        hdr[TEST_HDR] = { 0 }, *data = malloc(NS_BUF);

        memset(data, 0x33, NS_BUF);
        rank_init(&r0, 0);
        amc_shm_addr(r0.shm, &mine);
        put_all(c2p[1], &mine, sizeof(mine));
        if ((get_all(p2c[0], &theirs, sizeof(theirs)) != 0) ||
            (amc_shm_peer_add(r0.shm, 1, &theirs) != AMC_SUCCESS) ||
            (amc_shm_connect(r0.shm, 1, &out) != AMC_SUCCESS) ||
            (amc_shm_pull_send(r0.shm, out, hdr, TEST_HDR, data, NS_BUF, &comp) !=
             AMC_INPROGRESS)) {
            _exit(92);
        }
        __atomic_store_n(&hold_write, 1, __ATOMIC_RELEASE); /* its chunk stays in flight */
        put_all(c2p[1], "p", 1);
        for (;;) {
            (void)amc_shm_progress(r0.shm, 0);
        }
    }
    rank_init(&r1, 1);
    amc_shm_addr(r1.shm, &mine);
    CHECK(get_all(c2p[0], &theirs, sizeof(theirs)) == 0, "rank 0's address");
    CHECK(amc_shm_peer_add(r1.shm, 0, &theirs) == AMC_SUCCESS, "added");
    put_all(p2c[1], &mine, sizeof(mine));
    CHECK(get_all(c2p[0], &c, 1) == 0, "rank 0 sent its pull");
    for (i = 0; (i < 1000000) && (r1.desc == NULL); i++) {
        (void)amc_shm_progress(r1.shm, 0);
    }
    CHECK(r1.desc != NULL && amc_shm_pull_is_desc(r1.desc), "the pull arrived");
    __atomic_store_n(&slow_read, 1, __ATOMIC_RELEASE); /* the sender surely takes a chunk */
    st = amc_shm_pull_fetch(r1.shm, r1.desc, buf, NS_BUF, &counted);
    __atomic_store_n(&slow_read, 0, __ATOMIC_RELEASE);
    CHECK(st == AMC_INPROGRESS, "the fetch waits for the sender's chunk (%d)", st);
    (void)amc_peer_set_mark(&r1.tp.dead, 0);
    for (t0 = amc_clock_sec(); amc_clock_sec() - t0 < 0.05;) {
        (void)amc_shm_progress(r1.shm, 0);
    }
    CHECK(counted_n == 0, "marked dead, alive, its write in flight: the fetch waits");
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    for (t0 = amc_clock_sec(); (counted_n == 0) && (amc_clock_sec() - t0 < 5.0);) {
        (void)amc_shm_progress(r1.shm, 0);
    }
    CHECK(counted_n == 1 && counted_status == AMC_ERR_PEER, "its process gone: AMC_ERR_PEER "
          "(%d, status %d)", counted_n, counted_status);
    rank_fini(&r1);
    free(buf);
    close(c2p[0]);
    close(c2p[1]);
    close(p2c[0]);
    close(p2c[1]);
}

int main(void)
{
    signal(SIGPIPE, SIG_DFL); /* a write to a bell without readers must not kill us */
    test_sleeper_killed();
    test_inbox_sealed();
    test_pid_reused();
    test_sender_exits_holding();
    return amc_test_summary("test_shm_faults");
}
