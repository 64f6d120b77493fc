/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* memfd_create, pipe2, F_ADD_SEALS */
#include "transport/shm.h"
#include "transport/shm_pull.h"
#include "transport/shm_peer.h"
#include "transport/proc_watch.h"
#include "transport/shm_ring.h"
#include "base/clock.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* The wake-up's two sides must not both miss: a sender stores its message
 * then loads the sleepers word, a sleeper stores that word then loads the
 * rings, and each side needs a full fence between its store and its load.
 * On the sender's side that fence waits for the message's store to reach
 * the receiver's cache (a third of the send's time, measured). So the
 * sleeper, the rare side, makes it for both: membarrier(GLOBAL_EXPEDITED)
 * runs a full barrier on every CPU running a process registered for it,
 * and the sender then needs only a compiler barrier. A process that cannot
 * register (old kernel, seccomp) says so in its address, and the senders
 * to it (and it, as a sender) fence on every message. */
static int amc_shm_membarrier_register(void)
{
#if defined(SYS_membarrier)
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

    return (cmds > 0) && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
           (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
           (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0);
#else
    return 0;
#endif
}

/* A sleep's bound where a wake-up may be lost (amc_shm_sleep_begin). */
#define AMC_SHM_LIGHT_SLEEP_MS 1

static size_t amc_shm_hdr_bytes(unsigned nrings)
{
    size_t reg = (size_t)nrings * sizeof(uint64_t);

    return sizeof(amc_shm_inbox_t) + ((reg + AMC_SHM_CELL - 1) / AMC_SHM_CELL) * AMC_SHM_CELL;
}

size_t amc_shm_ring_bytes(void)
{
    return sizeof(amc_shm_ring_t) + (size_t)AMC_SHM_NCELLS * AMC_SHM_CELL;
}

size_t amc_shm_inbox_bytes(unsigned nrings)
{
    /* in 64 bits: 2^20 rings are 8.9 GB, beyond a 32-bit size_t */
    uint64_t n = (uint64_t)amc_shm_hdr_bytes(0) + (uint64_t)nrings * sizeof(uint64_t) +
                 AMC_SHM_CELL + (uint64_t)nrings * amc_shm_ring_bytes();

    return (n > (uint64_t)(SIZE_MAX / 2)) ? 0 : amc_shm_hdr_bytes(nrings) +
                                                    (size_t)nrings * amc_shm_ring_bytes();
}

size_t amc_shm_max_message(void)
{
    return AMC_SHM_MAX_BYTES - sizeof(uint64_t);
}

static amc_shm_ring_t *amc_shm_ring_at(void *inbox, unsigned nrings, unsigned idx)
{
    return (amc_shm_ring_t *)((char *)inbox + amc_shm_hdr_bytes(nrings) +
                              (size_t)idx * amc_shm_ring_bytes());
}

/* A key nobody guesses by chance (and never 0, which says "none"). */
static uint64_t amc_shm_random_key(void)
{
    uint64_t key = 0;

    if (getrandom(&key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
        key = (uint64_t)amc_clock_usec() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
              (uint64_t)(uintptr_t)&key;
    }
    return key | 1u;
}

int amc_shm_create(amc_transport_t *tp, unsigned nrings, unsigned place, const char *tag,
                   const amc_log_t *log, amc_shm_t **shm_p)
{
    amc_shm_t *shm;
    char       name[64];
    int        fds[2], me;
    unsigned   i;

    if ((nrings == 0) || (nrings > (1u << 20)) || (place > nrings) ||
        (amc_shm_inbox_bytes(nrings) == 0)) {
        return AMC_ERR_ARG;
    }
    shm = calloc(1, sizeof(*shm));
    if (shm == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    shm->tp        = tp;
    shm->log       = *log;
    shm->nrings    = nrings;
    shm->place     = place;
    shm->inbox_fd  = -1;
    shm->bell_r    = -1;
    shm->bell_w    = -1;
    shm->inbox_len = amc_shm_inbox_bytes(nrings);
    shm->in        = calloc(nrings, sizeof(*shm->in));
    shm->peers     = calloc(nrings, sizeof(*shm->peers));
    shm->adopted   = calloc(nrings, 1);
    if ((shm->in == NULL) || (shm->peers == NULL) || (shm->adopted == NULL) ||
        (amc_peer_set_init(&shm->known, tp->size) != AMC_SUCCESS)) {
        goto err_free;
    }
    for (i = 0; i < nrings; i++) {
        shm->peers[i].rank  = -1;
        shm->peers[i].pidfd = -1;
        shm->peers[i].bell  = -1;
    }
    /* no name in any file system: gone with the last process that maps it */
    snprintf(name, sizeof(name), "amc-mbox-%s-%d", tag, tp->rank);
    shm->inbox_fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (shm->inbox_fd < 0) {
        amc_debug(&shm->log, "memfd_create: %s; no mailboxes", strerror(errno));
        goto err_free;
    }
    /* peers open it through /proc as the same user; nobody else may. Sealed
     * at its size: a process that shrank it would kill every mapper of it
     * with SIGBUS on its next touch */
    if ((fchmod(shm->inbox_fd, S_IRUSR | S_IWUSR) != 0) ||
        (ftruncate(shm->inbox_fd, (off_t)shm->inbox_len) != 0) ||
        (fcntl(shm->inbox_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)) {
        amc_debug(&shm->log, "sizing and sealing the inbox: %s; no mailboxes", strerror(errno));
        goto err_close;
    }
    shm->inbox = mmap(NULL, shm->inbox_len, PROT_READ | PROT_WRITE, MAP_SHARED, shm->inbox_fd, 0);
    if (shm->inbox == MAP_FAILED) {
        shm->inbox = NULL;
        amc_debug(&shm->log, "mapping the inbox: %s; no mailboxes", strerror(errno));
        goto err_close;
    }
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
        amc_debug(&shm->log, "the doorbell pipe: %s; no mailboxes", strerror(errno));
        goto err_unmap;
    }
    shm->bell_r     = fds[0];
    shm->bell_w     = fds[1];
    shm->barrier_ok = amc_shm_membarrier_register();
    /* pulls name pids: only where a pidfd can tell that a pid is still its peer */
    me              = amc_proc_pidfd_open(getpid());
    shm->pull_ok    = (me >= 0) && amc_shm_pull_allowed(&shm->log);
    if (me >= 0) {
        close(me);
    }
    shm->self.magic    = AMC_SHM_MAGIC;
    shm->self.version  = AMC_SHM_VERSION;
    shm->self.pid      = (int32_t)getpid();
    shm->self.inbox_fd = shm->inbox_fd;
    shm->self.bell_fd  = shm->bell_w;
    shm->self.nrings   = nrings;
    shm->self.ncells   = AMC_SHM_NCELLS;
    shm->self.place    = place;
    shm->self.key      = amc_shm_random_key();
    if ((amc_shm_file_identity(shm->inbox_fd, &shm->self.inbox_dev, &shm->self.inbox_ino) != 0) ||
        (amc_shm_file_identity(shm->bell_w, &shm->self.bell_dev, &shm->self.bell_ino) != 0)) {
        amc_debug(&shm->log, "fstat of the inbox: %s; no mailboxes", strerror(errno));
        goto err_pipe;
    }
    shm->inbox->key = shm->self.key;
    *shm_p          = shm;
    return AMC_SUCCESS;

err_pipe:
    close(shm->bell_r);
    close(shm->bell_w);
err_unmap:
    munmap(shm->inbox, shm->inbox_len);
err_close:
    close(shm->inbox_fd);
err_free:
    amc_peer_set_cleanup(&shm->known);
    free(shm->adopted);
    free(shm->peers);
    free(shm->in);
    free(shm);
    return AMC_ERR_TRANSPORT;
}

void amc_shm_addr(const amc_shm_t *shm, amc_shm_addr_t *addr)
{
    *addr       = shm->self;
    addr->flags = (shm->barrier_ok ? AMC_SHM_ADDR_MEMBARRIER : 0) |
                  (shm->pull_ok ? AMC_SHM_ADDR_PULL : 0);
}

int amc_shm_connect(amc_shm_t *shm, int dest, amc_shm_out_t **out_p)
{
    amc_shm_peer_t  *peer = amc_shm_peer_find(shm, dest);
    amc_shm_inbox_t *inbox;
    amc_shm_out_t   *out;
    amc_shm_ring_t  *ring;
    const char      *why = NULL;
    struct stat      st;
    size_t           len;
    unsigned         idx;
    int              fd, seals;

    if (peer == NULL) {
        amc_debug(&shm->log, "rank %d published no mailbox of this node", dest);
        return AMC_ERR_TRANSPORT;
    }
    /* its pid, for pulls: the inbox itself is checked below by what it is,
     * not by whose it is (a kernel without pidfd_open keeps mailboxes) */
    (void)amc_shm_peer_check(shm, peer);
    len = amc_shm_inbox_bytes(peer->addr.nrings);
    fd  = amc_shm_peer_open(peer, peer->addr.inbox_fd, peer->addr.inbox_dev, peer->addr.inbox_ino,
                            O_RDWR, &why);
    if (fd < 0) {
        amc_debug(&shm->log, "rank %d's inbox: %s; UCX carries its messages", dest, why);
        return AMC_ERR_TRANSPORT;
    }
    /* sealed at its size, so nobody shrinks it under our mapping */
    seals = fcntl(fd, F_GET_SEALS);
    if ((fstat(fd, &st) != 0) || ((size_t)st.st_size != len) || (seals < 0) ||
        ((seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) !=
         (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))) {
        close(fd);
        amc_error(&shm->log, "rank %d's inbox is not of its size or not sealed; UCX carries "
                  "its messages", dest);
        return AMC_ERR_TRANSPORT;
    }
    inbox = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (inbox == MAP_FAILED) {
        amc_debug(&shm->log, "mapping rank %d's inbox: %s", dest, strerror(errno));
        return AMC_ERR_TRANSPORT;
    }
    if (__atomic_load_n(&inbox->key, __ATOMIC_ACQUIRE) != peer->addr.key) {
        munmap(inbox, len);
        amc_error(&shm->log, "rank %d's inbox does not hold the key it published; UCX "
                  "carries its messages", dest);
        return AMC_ERR_TRANSPORT;
    }
    out = calloc(1, sizeof(*out));
    if (out == NULL) {
        munmap(inbox, len);
        return AMC_ERR_NO_MEMORY;
    }
    /* this rank's ring there is its own by place: nobody can take it */
    idx  = amc_shm_ring_of(shm->place, peer->addr.place);
    ring = amc_shm_ring_at(inbox, peer->addr.nrings, idx);
    memset(ring, 0, amc_shm_ring_bytes()); /* whatever another process left there */
    out->ring     = ring;
    out->sleepers = &inbox->sleepers;
    out->map      = inbox;
    out->map_len  = len;
    out->dest     = dest;
    out->shm      = shm;
    out->peer     = peer;
    out->fence    = !shm->barrier_ok || !(peer->addr.flags & AMC_SHM_ADDR_MEMBARRIER);
    out->pull     = shm->pull_ok && !__atomic_load_n(&shm->refused, __ATOMIC_ACQUIRE) &&
                    (peer->addr.flags & AMC_SHM_ADDR_PULL) &&
                    (__atomic_load_n(&peer->pidfd, __ATOMIC_ACQUIRE) >= 0);
    __atomic_store_n(&inbox->reg[idx], shm->self.key, __ATOMIC_RELEASE);
    __atomic_add_fetch(&inbox->gen, 1, __ATOMIC_RELEASE);
    /* progress walks the list without the caller's lock */
    out->next = shm->outs;
    __atomic_store_n(&shm->outs, out, __ATOMIC_RELEASE);
    __atomic_add_fetch(&shm->nout, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&shm->tp->mboxes_out, 1, __ATOMIC_RELAXED);
    *out_p = out;
    return AMC_SUCCESS;
}

/* The receiver sleeps. */
static __attribute__((noinline, cold)) void amc_shm_ring_bell(amc_shm_out_t *out)
{
    amc_shm_bell_ring(out->shm, out->peer);
}

static inline void amc_shm_notify(amc_shm_out_t *out)
{
    if (amc_shm_wakes(out)) {
        amc_shm_ring_bell(out);
    }
}

/* amc_shm_notify's bell, as a send's last act */
static __attribute__((noinline, cold)) int amc_shm_send_bell(amc_shm_out_t *out)
{
    amc_shm_ring_bell(out);
    return AMC_SUCCESS;
}

/* A send that found its ring full, or others waiting: in order behind
 * them, copied from progress. Lock held (held: by this call). mode
 * AMC_SEND_RNDV: a pull's message (comp NULL: the pull completes). */
static __attribute__((noinline)) int amc_shm_queue(amc_shm_t *shm, amc_shm_out_t *out,
                                                   const void *hdr, size_t hdr_len,
                                                   const void *data, size_t len, unsigned mode,
                                                   amc_completion_t *comp, int held)
{
    if (amc_send_queue_push(&out->q, out, hdr, hdr_len, data, len, mode, comp) == NULL) {
        amc_shm_unlock(&out->lock, held);
        amc_error(&shm->log, "out of memory queueing a message to rank %d", out->dest);
        return AMC_ERR_NO_MEMORY;
    }
    amc_shm_work_add(shm, &shm->nqueued, 1);
    amc_shm_unlock(&out->lock, held);
    return AMC_INPROGRESS;
}

static __attribute__((noinline)) int amc_shm_send_any(amc_shm_t *shm, amc_shm_out_t *out,
                                                      const void *hdr, size_t hdr_len,
                                                      const void *data, size_t len,
                                                      amc_completion_t *comp)
{
    int held;

    if (!amc_shm_fits(hdr_len, len)) {
        return AMC_SHM_TOO_BIG;
    }
    held = amc_shm_lock(shm, &out->lock);
    if ((out->q.head == NULL) && amc_shm_put(out, hdr, hdr_len, data, len, 0)) {
        amc_shm_unlock(&out->lock, held);
        amc_shm_notify(out);
        return AMC_SUCCESS;
    }
    return amc_shm_queue(shm, out, hdr, hdr_len, data, len, AMC_SEND_EAGER, comp, held);
}

/* The usual message (a header and a few words of data: one cell) while
 * threads cannot meet, to a ring known to have room and no sends waiting,
 * is amc_shm_put and amc_shm_notify without a call, a lock or a register
 * to save; every other goes the whole way. */
static inline __attribute__((always_inline)) int
amc_shm_send_cell(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                  const void *data, size_t len)
{
    uint64_t head;
    size_t   off, next;
    uint8_t *cell;

    /* the ring's fields are another thread's while threads may meet: not
     * read before that is known */
    if ((hdr_len > 32) || (len > 32) ||
        (sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len) + len > AMC_SHM_CELL) ||
        amc_lock_live(shm->tp->lock_live)) {
        return AMC_SEND_NOT_NOW;
    }
    head = out->head;
    if ((head + 2 - out->tail_seen > AMC_SHM_NCELLS) || (out->q.head != NULL)) {
        return AMC_SEND_NOT_NOW;
    }
    off  = (size_t)(head % AMC_SHM_NCELLS);
    cell = out->ring->cells + off * AMC_SHM_CELL;
    amc_shm_copy_short(cell + sizeof(uint64_t), hdr, hdr_len);
    if (len > 0) {
        amc_shm_copy_short(cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), data, len);
    }
    if ((out->stale[0] | out->stale[1]) != 0) {
        /* amc_shm_mark of one cell; a ring that only ever took one-cell
         * messages has no cell to mark */
        next = (off + 1) % AMC_SHM_NCELLS;
        amc_shm_stale_set(out, off, 0);
        if (amc_shm_stale_test(out, next)) {
            __atomic_store_n((uint64_t *)(out->ring->cells + next * AMC_SHM_CELL), 0,
                             __ATOMIC_RELAXED);
            amc_shm_stale_set(out, next, 0);
        }
    }
    __atomic_store_n((uint64_t *)cell, amc_shm_ctl(head, hdr_len, len), __ATOMIC_RELEASE);
    out->head = head + 1;
    if (amc_shm_wakes(out)) {
        return amc_shm_send_bell(out);
    }
    return AMC_SUCCESS;
}

int amc_shm_send(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                 const void *data, size_t len, amc_completion_t *comp)
{
    int status = amc_shm_send_cell(shm, out, hdr, hdr_len, data, len);

    return (status != AMC_SEND_NOT_NOW) ? status
                                        : amc_shm_send_any(shm, out, hdr, hdr_len, data, len,
                                                           comp);
}

/* amc_shm_send_now of a message longer than a cell: written whole where
 * it fits and nothing waits, never queued. In a frame of its own, so that
 * the one-cell send saves no registers for it (callgrind: 18 instructions
 * of the send's 82 were its prologue and epilogue). */
static __attribute__((noinline)) int amc_shm_send_now_long(amc_shm_t *shm, amc_shm_out_t *out,
                                                           const void *hdr, size_t hdr_len,
                                                           const void *data, size_t len)
{
    if (!amc_shm_fits(hdr_len, len) || amc_lock_live(shm->tp->lock_live) ||
        (out->q.head != NULL) || !amc_shm_put(out, hdr, hdr_len, data, len, 0)) {
        return AMC_SEND_NOT_NOW;
    }
    amc_shm_notify(out);
    return AMC_SUCCESS;
}

int amc_shm_send_now(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                     const void *data, size_t len)
{
    int status = amc_shm_send_cell(shm, out, hdr, hdr_len, data, len);

    return (status != AMC_SEND_NOT_NOW) ? status
                                        : amc_shm_send_now_long(shm, out, hdr, hdr_len, data, len);
}

int amc_shm_pull_send(amc_shm_t *shm, amc_shm_out_t *out, const void *hdr, size_t hdr_len,
                      const void *data, size_t len, amc_completion_t *comp)
{
    amc_shm_pull_out_t *p;
    int                 held;

    if (!__atomic_load_n(&out->pull, __ATOMIC_RELAXED) ||
        !amc_shm_fits(hdr_len, sizeof(amc_shm_pull_desc_t))) {
        return AMC_SHM_TOO_BIG;
    }
    held = amc_shm_lock(shm, &out->lock);
    p    = amc_shm_pull_reserve(shm, out, data, len, comp);
    if (p == NULL) {
        amc_shm_unlock(&out->lock, held);
        return AMC_SHM_TOO_BIG; /* as many in flight as the ring has slots, or no more pulls */
    }
    if ((out->q.head == NULL) &&
        amc_shm_put(out, hdr, hdr_len, &p->desc, sizeof(p->desc), AMC_SHM_CTL_PULL)) {
        amc_shm_unlock(&out->lock, held);
        amc_shm_notify(out);
        return AMC_INPROGRESS;
    }
    /* behind the messages that wait for room; the pull completes it */
    if (amc_shm_queue(shm, out, hdr, hdr_len, &p->desc, sizeof(p->desc), AMC_SEND_RNDV, NULL,
                      held) != AMC_INPROGRESS) {
        held = amc_shm_lock(shm, &out->lock);
        amc_shm_pull_unreserve(shm, out, p);
        amc_shm_unlock(&out->lock, held);
        return AMC_ERR_NO_MEMORY;
    }
    return AMC_INPROGRESS;
}

/* A receiver whose ring's tail no honest one would store: where it reads
 * is unknown, so it is treated as failed, as a writer of a malformed
 * message is. */
static __attribute__((noinline, cold)) void amc_shm_bad_tail(amc_shm_t *shm, amc_shm_out_t *out)
{
    if (amc_peer_set_mark(&shm->tp->dead, out->dest)) {
        amc_error(&shm->log, "rank %d's mailbox says it read beyond what was written to it "
                  "(tail 0x%016llx, written %llu cells); rank %d is treated as failed",
                  out->dest, (unsigned long long)__atomic_load_n(&out->ring->tail,
                                                                 __ATOMIC_RELAXED),
                  (unsigned long long)out->head, out->dest);
    }
}

/* Queued sends that fit now; to a peer that died, dropped (as a send to a
 * dead rank is). Completions run with no lock held: they may send. */
static int amc_shm_drain(amc_shm_t *shm)
{
    amc_shm_out_t   *out;
    amc_send_pend_t *pend;
    int              n = 0, held, dead, put;

    for (out = __atomic_load_n(&shm->outs, __ATOMIC_ACQUIRE); out != NULL; out = out->next) {
        for (;;) {
            held = amc_shm_lock(shm, &out->lock);
            pend = out->q.head;
            if (pend == NULL) {
                amc_shm_unlock(&out->lock, held);
                break;
            }
            dead = amc_peer_set_test(&shm->tp->dead, out->dest);
            put  = !dead && amc_shm_put(out, pend->hdr, pend->hdr_len, pend->data, pend->len,
                                        (pend->mode == AMC_SEND_RNDV) ? AMC_SHM_CTL_PULL : 0);
            if (!dead && !put) {
                amc_shm_unlock(&out->lock, held);
                if (out->bad_tail) {
                    amc_shm_bad_tail(shm, out);
                    continue; /* dropped now */
                }
                break;
            }
            (void)amc_send_queue_pop(&out->q);
            amc_shm_work_add(shm, &shm->nqueued, -1);
            amc_shm_unlock(&out->lock, held);
            if (put) {
                amc_shm_notify(out);
            }
            if (pend->comp != NULL) { /* a pull's message: the pull completes it */
                pend->comp->fn(pend->comp, AMC_SUCCESS);
            }
            free(pend);
            n++;
        }
    }
    return n;
}

/* Rings whose writers registered since the last look. A ring is its
 * writer's by place (amc_shm_ring_of), and counts only once it holds the
 * key that writer published: another process of this user that registers
 * there is refused and takes nothing from the real writer. */
static void amc_shm_adopt(amc_shm_t *shm)
{
    amc_shm_peer_t *peer;
    amc_shm_in_t   *in;
    uint64_t        key;
    unsigned        i;

    shm->gen_seen = __atomic_load_n(&shm->inbox->gen, __ATOMIC_ACQUIRE);
    for (i = 0; i < shm->nrings; i++) {
        if (shm->adopted[i] || ((key = __atomic_load_n(&shm->inbox->reg[i], __ATOMIC_ACQUIRE)) == 0)) {
            continue;
        }
        peer = &shm->peers[i];
        if ((__atomic_load_n(&peer->rank, __ATOMIC_ACQUIRE) < 0) || (key != peer->addr.key)) {
            if (!peer->warned) {
                peer->warned = 1;
                amc_error(&shm->log, "rejected mailbox registration in ring %u (rank %d's): "
                          "not the key %s published", i, peer->rank,
                          (peer->rank < 0) ? "any rank" : "that rank");
            }
            continue;
        }
        in         = &shm->in[shm->nin];
        in->ring   = amc_shm_ring_at(shm->inbox, shm->nrings, i);
        in->tail   = 0;
        in->next   = (const uint64_t *)in->ring->cells;
        in->idle   = 0;
        in->src    = peer->rank;
        in->peer   = peer;
        in->broken = 0;
        amc_shm_pull_in_init(in);
        /* its pulls name its pid: only once checked to be its process (without
         * that, its data is resent through the ring) */
        (void)amc_shm_peer_check(shm, peer);
        shm->adopted[i] = 1;
        __atomic_store_n(&shm->nin, shm->nin + 1, __ATOMIC_SEQ_CST); /* amc_shm_rings_in */
        if (__atomic_load_n(&shm->refused, __ATOMIC_SEQ_CST)) {
            amc_shm_pull_nopull(in);
        }
        __atomic_add_fetch(&shm->tp->mboxes_in, 1, __ATOMIC_RELAXED);
    }
}

/* Whether w, the word at in's tail, says nothing came yet: cleared, or
 * left from an earlier lap (a position a multiple of the ring behind). */
static inline int amc_shm_nothing_yet(const amc_shm_in_t *in, uint64_t w)
{
    uint32_t behind = (uint32_t)in->tail - AMC_SHM_CTL_POS(w);

    return (w == 0) || ((w & AMC_SHM_CTL_VALID) && (behind != 0) &&
                        (behind % AMC_SHM_NCELLS == 0) && (behind <= (1u << 31)));
}

/* What amc_shm_check found at in's tail, where it found nothing wrong. */
enum {
    AMC_SHM_WORD_MESSAGE, /* a message without flags: its handler's */
    AMC_SHM_WORD_EMPTY,   /* a word left from an earlier lap, or cleared: nothing yet */
    AMC_SHM_WORD_FLAGGED  /* a skip or a pull: progress's */
};

/* Whether a message's lengths, from the control word w at in's tail, lie
 * inside the mailbox: NULL, or why not. */
static inline const char *amc_shm_check_lengths(const amc_shm_in_t *in, uint64_t w)
{
    size_t off = (size_t)(in->tail % AMC_SHM_NCELLS);

    if (AMC_SHM_CTL_HDR(w) == 0) {
        return "no header";
    }
    if ((sizeof(uint64_t) + AMC_SHM_ALIGN8(AMC_SHM_CTL_HDR(w)) + AMC_SHM_CTL_LEN(w) >
         AMC_SHM_MAX_BYTES) ||
        (off + amc_shm_cells(AMC_SHM_CTL_HDR(w), AMC_SHM_CTL_LEN(w)) > AMC_SHM_NCELLS)) {
        return "a length beyond the mailbox";
    }
    return NULL;
}

/* amc_shm_check of a word at its place that has flags, or of one that is
 * not at its place: out of line, so that the usual message's check stays
 * a few instructions where it is inlined. */
static __attribute__((noinline)) const char *amc_shm_check_flagged(const amc_shm_in_t *in,
                                                                   uint64_t w, int *kind)
{
    uint32_t behind = (uint32_t)in->tail - AMC_SHM_CTL_POS(w);

    if (!(w & AMC_SHM_CTL_VALID) || (behind != 0)) {
        return "wrong sequence";
    }
    if ((w & AMC_SHM_CTL_FLAGS) & ~(AMC_SHM_CTL_SKIP | AMC_SHM_CTL_PULL | AMC_SHM_CTL_DATA)) {
        return "unknown flags";
    }
    if (w & AMC_SHM_CTL_SKIP) {
        if (w & (AMC_SHM_CTL_PULL | AMC_SHM_CTL_DATA)) {
            return "a skip with flags";
        }
        if ((AMC_SHM_CTL_HDR(w) | AMC_SHM_CTL_LEN(w)) != 0) {
            return "a skip with a length";
        }
        *kind = AMC_SHM_WORD_FLAGGED;
        return NULL;
    }
    if (w & AMC_SHM_CTL_DATA) {
        if ((w & AMC_SHM_CTL_PULL) || (AMC_SHM_CTL_HDR(w) != sizeof(amc_shm_pull_piece_t))) {
            return "a resent piece without a piece's header";
        }
    } else if (AMC_SHM_CTL_LEN(w) != sizeof(amc_shm_pull_desc_t)) {
        return "a pull without a pull's descriptor";
    }
    /* a pull or a piece: its lengths are checked as any message's */
    *kind = AMC_SHM_WORD_FLAGGED;
    return amc_shm_check_lengths(in, w);
}

/* Why the word at in's tail is not the next message, or NULL if it is;
 * *kind says which (AMC_SHM_WORD_*; with a reason, MESSAGE). */
static inline const char *amc_shm_check(const amc_shm_in_t *in, uint64_t w, int *kind)
{
    *kind = AMC_SHM_WORD_MESSAGE;
    if ((w & (AMC_SHM_CTL_VALID | AMC_SHM_CTL_FLAGS | 0xffffffffull)) !=
        (AMC_SHM_CTL_VALID | (uint32_t)in->tail)) {
        /* not the usual word (a message at its place, without flags,
         * whose lengths are all that is left to check) */
        if (amc_shm_nothing_yet(in, w)) {
            *kind = AMC_SHM_WORD_EMPTY;
            return NULL;
        }
        return amc_shm_check_flagged(in, w, kind);
    }
    return amc_shm_check_lengths(in, w);
}

/* Moves in's tail on by cells; nothing is known yet of the word there. */
static inline void amc_shm_in_advance(amc_shm_in_t *in, uint64_t cells)
{
    in->tail += cells;
    in->next  = (const uint64_t *)(in->ring->cells +
                                   (size_t)(in->tail % AMC_SHM_NCELLS) * AMC_SHM_CELL);
    in->idle  = 0;
}

/* The message at in's tail was read: its cells go back to the writer. */
static inline void amc_shm_in_free(amc_shm_in_t *in, size_t hdr_len, size_t len)
{
    /* the writer cleared where the next one starts (amc_shm_mark) */
    amc_shm_in_advance(in, amc_shm_cells(hdr_len, len));
    __atomic_store_n(&in->ring->tail, in->tail, __ATOMIC_RELEASE);
}

/* A malformed message: where the ring's next one starts is unknown now, so
 * the ring is closed and its writer treated as failed (clear errors on its
 * collectives, no hang). */
static __attribute__((noinline, cold)) void amc_shm_reject(amc_shm_t *shm, amc_shm_in_t *in,
                                                           uint64_t w, const char *why)
{
    in->broken = 1;
    in->next   = &in->idle;
    amc_error(&shm->log, "rejected mailbox message from rank %d (control word 0x%016llx at "
              "cell %llu): %s; rank %d is treated as failed", in->src, (unsigned long long)w,
              (unsigned long long)in->tail, why, in->src);
    (void)amc_peer_set_mark(&shm->tp->dead, in->src);
}

/* Takes up to the transport's poll_batch messages from one ring, following
 * skips to its start. One where ranks have a core each: the call waiting on
 * the message that completes it then sees so at once, where reading on
 * loaded the next cell while the peer, whose next call was right behind,
 * was writing it (perf: two thirds of amc_shm_progress's samples on that
 * load) and ran the next message's handler first. OSU's method at N=2,
 * bcast 8 B 0.52 -> 0.39 us, allreduce 40 B 0.60 -> 0.50. */
static int amc_shm_read(amc_shm_t *shm, amc_shm_in_t *in, int closing)
{
    amc_transport_t *tp    = shm->tp;
    unsigned         batch = (tp->poll_batch > 0) ? tp->poll_batch : 1;
    const char      *why;
    const uint8_t   *cell;
    uint64_t         w;
    size_t           hdr_len, len;
    int              n = 0, kind;

    while (!in->broken && ((unsigned)n < batch)) {
        w = __atomic_load_n(in->next, __ATOMIC_ACQUIRE);
        if (w == in->idle) {
            break;
        }
        why = amc_shm_check(in, w, &kind);
        if (kind == AMC_SHM_WORD_EMPTY) {
            in->idle = w;
            break;
        }
        if (why != NULL) {
            amc_shm_reject(shm, in, w, why);
            break;
        }
        if (w & AMC_SHM_CTL_SKIP) {
            /* not a message: the one at the ring's start is read now */
            amc_shm_in_advance(in, AMC_SHM_NCELLS - (in->tail % AMC_SHM_NCELLS));
            __atomic_store_n(&in->ring->tail, in->tail, __ATOMIC_RELEASE);
            continue;
        }
        cell    = (const uint8_t *)in->next;
        hdr_len = AMC_SHM_CTL_HDR(w);
        len     = AMC_SHM_CTL_LEN(w);
        if (w & (AMC_SHM_CTL_PULL | AMC_SHM_CTL_DATA)) {
            why = ((w & AMC_SHM_CTL_PULL) ? amc_shm_pull_arrive : amc_shm_pull_resent)(
                shm, in, cell + sizeof(uint64_t), hdr_len,
                cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), len, closing);
            if (why != NULL) {
                amc_shm_reject(shm, in, w, why);
                break;
            }
        } else if (!closing) {
            tp->recv_cb(tp->recv_arg, cell + sizeof(uint64_t), hdr_len,
                        cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), len, NULL);
        }
        amc_shm_in_free(in, hdr_len, len);
        n++;
    }
    return n;
}

amc_shm_in_t *amc_shm_in_find(amc_shm_t *shm, int src)
{
    unsigned i;

    unsigned *hint = &shm->take_at[(unsigned)src & (AMC_SHM_TAKE_HINTS - 1)];

    if ((*hint < shm->nin) && (shm->in[*hint].src == src)) {
        return &shm->in[*hint];
    }
    if (__atomic_load_n(&shm->inbox->gen, __ATOMIC_RELAXED) != shm->gen_seen) {
        amc_shm_adopt(shm);
    }
    for (i = 0; i < shm->nin; i++) {
        if (shm->in[i].src == src) {
            *hint = i;
            return &shm->in[i];
        }
    }
    return NULL;
}

/* amc_shm_take_in once threads are known not to meet. */
static int amc_shm_take_at(amc_shm_in_t *in, amc_take_fn_t take, void *arg)
{
    const uint8_t *cell;
    uint64_t       w;
    size_t         hdr_len, len;
    const char    *why;
    int            kind;

    w = __atomic_load_n(in->next, __ATOMIC_ACQUIRE);
    if (w == in->idle) {
        return AMC_TAKE_EMPTY; /* a broken ring's too: its next points at idle */
    }
    why = amc_shm_check(in, w, &kind);
    if (kind == AMC_SHM_WORD_EMPTY) {
        in->idle = w;
        return AMC_TAKE_EMPTY;
    }
    if ((why != NULL) || (kind != AMC_SHM_WORD_MESSAGE)) {
        return AMC_TAKE_OTHER; /* progress reports it, follows the skip or starts the pull */
    }
    cell    = (const uint8_t *)in->next;
    hdr_len = AMC_SHM_CTL_HDR(w);
    len     = AMC_SHM_CTL_LEN(w);
    if (!take(arg, cell + sizeof(uint64_t), hdr_len,
              cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), len)) {
        return AMC_TAKE_OTHER;
    }
    amc_shm_in_free(in, hdr_len, len);
    return AMC_SUCCESS;
}

int amc_shm_take_now(amc_shm_t *shm, int src, amc_take_fn_t take, void *arg)
{
    amc_shm_in_t *in;

    if (amc_lock_live(shm->tp->lock_live)) {
        return AMC_TAKE_OTHER; /* the poll lock's holder reads the rings */
    }
    in = amc_shm_in_find(shm, src);
    return (in != NULL) ? amc_shm_take_at(in, take, arg) : AMC_SHM_NO_RING;
}

int amc_shm_take_in(amc_shm_t *shm, amc_shm_in_t *in, amc_take_fn_t take, void *arg)
{
    if (amc_lock_live(shm->tp->lock_live)) {
        return AMC_TAKE_OTHER; /* the poll lock's holder reads the rings */
    }
    return amc_shm_take_at(in, take, arg);
}

int amc_shm_progress(amc_shm_t *shm, int closing)
{
    unsigned i;
    int      n = 0, held;

    if (__atomic_load_n(&shm->nqueued, __ATOMIC_ACQUIRE) > 0) {
        n += amc_shm_drain(shm);
    }
    if ((__atomic_load_n(&shm->pulls_out, __ATOMIC_ACQUIRE) |
         __atomic_load_n(&shm->pulls_in, __ATOMIC_ACQUIRE)) != 0) {
        n += amc_shm_pull_progress(shm);
    }
    if (amc_lock_live(shm->tp->lock_live)) {
        /* another thread reads the inbox: it runs what is there */
        if (__atomic_exchange_n(&shm->poll_lock, 1, __ATOMIC_ACQUIRE)) {
            return n;
        }
        held = 1;
    } else {
        held = 0;
    }
    if (__atomic_load_n(&shm->inbox->gen, __ATOMIC_RELAXED) != shm->gen_seen) {
        amc_shm_adopt(shm);
    }
    for (i = 0; i < shm->nin; i++) {
        n += amc_shm_read(shm, &shm->in[i], closing);
    }
    amc_shm_unlock(&shm->poll_lock, held);
    return n;
}

int amc_shm_idle(amc_shm_t *shm)
{
    const amc_shm_in_t *in, *end;

    if (amc_lock_live(shm->tp->lock_live) ||
        (__atomic_load_n(&shm->nwork, __ATOMIC_RELAXED) != 0) ||
        (__atomic_load_n(&shm->inbox->gen, __ATOMIC_RELAXED) != shm->gen_seen)) {
        return 0;
    }
    for (in = shm->in, end = in + shm->nin; in < end; in++) {
        if (__atomic_load_n(in->next, __ATOMIC_RELAXED) != in->idle) {
            return 0;
        }
    }
    return 1;
}

/* Whether a message or a new writer waits. The rings' read state belongs
 * to whoever holds the poll lock: a thread that reads them now runs what
 * came, so its sleeper need not sleep. */
static int amc_shm_pending(amc_shm_t *shm)
{
    const amc_shm_in_t *in;
    const char         *why;
    uint64_t            w;
    unsigned            i;
    int                 kind, held = 0, found = 0;

    if (amc_lock_live(shm->tp->lock_live)) {
        if (__atomic_exchange_n(&shm->poll_lock, 1, __ATOMIC_ACQUIRE)) {
            return 1;
        }
        held = 1;
    }
    found = (__atomic_load_n(&shm->inbox->gen, __ATOMIC_ACQUIRE) != shm->gen_seen) ||
            (__atomic_load_n(&shm->nqueued, __ATOMIC_ACQUIRE) > 0) || amc_shm_pull_pending(shm);
    for (i = 0; !found && (i < shm->nin); i++) {
        in = &shm->in[i];
        if (in->broken) {
            continue;
        }
        w = __atomic_load_n(in->next, __ATOMIC_ACQUIRE);
        if (w == in->idle) {
            continue;
        }
        why   = amc_shm_check(in, w, &kind);
        found = (kind != AMC_SHM_WORD_EMPTY) || (why != NULL);
    }
    amc_shm_unlock(&shm->poll_lock, held);
    return found;
}

int amc_shm_sleep_begin(amc_shm_t *shm)
{
    /* the pulls' receivers look at it after their DONE */
    amc_shm_pull_asleep(shm, 1);
    __atomic_add_fetch(&shm->inbox->sleepers, 1, __ATOMIC_SEQ_CST);
    /* a full fence between the announcement and the look at the rings: the
     * C11 model makes none of a read-modify-write alone (a locked add is one
     * on x86, not on POWER or Arm) */
#if !defined(__SANITIZE_THREAD__)
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
#if defined(SYS_membarrier)
    if (shm->barrier_ok &&
        (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)) {
        /* senders to this rank read "membarrier" in its address and skip
         * their fence, so a wake-up may be lost from now on: no sleep lasts
         * long. Not seen: registered, queried. */
        shm->barrier_ok  = 0;
        shm->light_sleep = 1;
        amc_warn(&shm->log, "membarrier failed after it was registered (%s): this rank's "
                 "sleeps last at most %d ms from now on", strerror(errno),
                 AMC_SHM_LIGHT_SLEEP_MS);
        return 1;
    }
#endif
    return amc_shm_pending(shm);
}

int amc_shm_sleep_max_ms(const amc_shm_t *shm)
{
    return shm->light_sleep ? AMC_SHM_LIGHT_SLEEP_MS : -1;
}

void amc_shm_sleep_end(amc_shm_t *shm)
{
    char buf[64];

    __atomic_sub_fetch(&shm->inbox->sleepers, 1, __ATOMIC_SEQ_CST);
    amc_shm_pull_asleep(shm, 0);
    while (read(shm->bell_r, buf, sizeof(buf)) > 0) {
    }
}

int amc_shm_bell_fd(const amc_shm_t *shm)
{
    return shm->bell_r;
}

unsigned amc_shm_queued(const amc_shm_t *shm)
{
    return __atomic_load_n(&shm->nqueued, __ATOMIC_ACQUIRE);
}

unsigned amc_shm_rings_out(const amc_shm_t *shm)
{
    return (shm != NULL) ? __atomic_load_n(&shm->nout, __ATOMIC_RELAXED) : 0;
}

unsigned amc_shm_rings_in(const amc_shm_t *shm)
{
    return (shm != NULL) ? __atomic_load_n(&shm->nin, __ATOMIC_ACQUIRE) : 0;
}

int amc_shm_forge(amc_shm_out_t *out, const void *bytes, size_t n)
{
    size_t   off   = (size_t)(out->head % AMC_SHM_NCELLS);
    size_t   room  = (AMC_SHM_NCELLS - off) * AMC_SHM_CELL;
    uint8_t *cell  = out->ring->cells + off * AMC_SHM_CELL;
    uint64_t w     = 0;
    size_t   cells;

    if (n > room) {
        n = room;
    }
    cells = (n + AMC_SHM_CELL - 1) / AMC_SHM_CELL;
    if (n > sizeof(w)) {
        memcpy(cell + sizeof(w), (const uint8_t *)bytes + sizeof(w), n - sizeof(w));
    }
    memcpy(&w, bytes, (n < sizeof(w)) ? n : sizeof(w));
    amc_shm_mark(out, off, (cells > 0) ? cells : 1);
    __atomic_store_n((uint64_t *)cell, w, __ATOMIC_RELEASE);
    out->head += cells;
    amc_shm_notify(out);
    return AMC_SUCCESS;
}

void amc_shm_without_membarrier(amc_shm_t *shm)
{
    shm->barrier_ok = 0;
}

uint64_t amc_shm_forge_position(const amc_shm_out_t *out)
{
    return out->head;
}

int amc_shm_owns(const amc_shm_t *shm, const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)shm->inbox;

    return (a >= lo) && (len <= shm->inbox_len) && (a - lo <= shm->inbox_len - len);
}

uint64_t amc_shm_ctl_word(uint64_t position, size_t hdr_len, size_t len)
{
    return amc_shm_ctl(position, hdr_len, len);
}

uint64_t amc_shm_ctl_pull_word(uint64_t position, size_t hdr_len)
{
    return amc_shm_ctl(position, hdr_len, sizeof(amc_shm_pull_desc_t)) | AMC_SHM_CTL_PULL;
}

uint64_t amc_shm_ctl_data_word(uint64_t position, size_t len)
{
    return amc_shm_ctl(position, sizeof(amc_shm_pull_piece_t), len) | AMC_SHM_CTL_DATA;
}

void amc_shm_without_pull(amc_shm_t *shm)
{
    shm->pull_ok = 0;
}

void amc_shm_destroy(amc_shm_t *shm)
{
    amc_shm_out_t *out;
    unsigned       i;

    if (shm == NULL) {
        return;
    }
    while ((out = shm->outs) != NULL) {
        shm->outs = out->next;
        amc_send_queue_drop(&out->q); /* abandoned with their collectives, as UCX's are */
        munmap(out->map, out->map_len);
        free(out);
    }
    for (i = 0; i < shm->nrings; i++) {
        if (shm->peers[i].pidfd >= 0) {
            close(shm->peers[i].pidfd);
        }
        if (shm->peers[i].bell >= 0) {
            close(shm->peers[i].bell);
        }
    }
    munmap(shm->inbox, shm->inbox_len);
    close(shm->inbox_fd);
    close(shm->bell_r);
    close(shm->bell_w);
    amc_peer_set_cleanup(&shm->known);
    free(shm->adopted);
    free(shm->peers);
    free(shm->in);
    free(shm);
}
