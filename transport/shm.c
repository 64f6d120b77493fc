#define _GNU_SOURCE /* memfd_create, pipe2 */
#include "transport/shm.h"
#include "transport/shm_pull.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static size_t amc_shm_hdr_bytes(unsigned nrings)
{
    size_t reg = (size_t)nrings * sizeof(int32_t);

    return sizeof(amc_shm_inbox_t) + ((reg + AMC_SHM_CELL - 1) / AMC_SHM_CELL) * AMC_SHM_CELL;
}

size_t amc_shm_ring_bytes(void)
{
    return sizeof(amc_shm_ring_t) + (size_t)AMC_SHM_NCELLS * AMC_SHM_CELL;
}

size_t amc_shm_inbox_bytes(unsigned nrings)
{
    return amc_shm_hdr_bytes(nrings) + (size_t)nrings * amc_shm_ring_bytes();
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

int amc_shm_create(amc_transport_t *tp, unsigned nrings, const char *tag, const amc_log_t *log,
                   amc_shm_t **shm_p)
{
    amc_shm_t *shm;
    char       name[64];
    int        fds[2];

    if ((nrings == 0) || (nrings > (1u << 20))) {
        return AMC_ERR_ARG;
    }
    shm = calloc(1, sizeof(*shm));
    if (shm == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    shm->tp        = tp;
    shm->log       = *log;
    shm->nrings    = nrings;
    shm->inbox_fd  = -1;
    shm->bell_r    = -1;
    shm->bell_w    = -1;
    shm->inbox_len = amc_shm_inbox_bytes(nrings);
    shm->in        = calloc(nrings, sizeof(*shm->in));
    if (shm->in == NULL) {
        goto err_free;
    }
    /* no name in any file system: gone with the last process that maps it */
    snprintf(name, sizeof(name), "amc-mbox-%s-%d", tag, tp->rank);
    shm->inbox_fd = memfd_create(name, MFD_CLOEXEC);
    if (shm->inbox_fd < 0) {
        amc_debug(&shm->log, "memfd_create: %s; no mailboxes", strerror(errno));
        goto err_free;
    }
    /* peers open it through /proc as the same user; nobody else may */
    if ((fchmod(shm->inbox_fd, S_IRUSR | S_IWUSR) != 0) ||
        (ftruncate(shm->inbox_fd, (off_t)shm->inbox_len) != 0)) {
        amc_debug(&shm->log, "sizing the inbox: %s; no mailboxes", strerror(errno));
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
    shm->pull_ok    = amc_shm_pull_allowed(&shm->log);
    *shm_p          = shm;
    return AMC_SUCCESS;

err_unmap:
    munmap(shm->inbox, shm->inbox_len);
err_close:
    close(shm->inbox_fd);
err_free:
    free(shm->in);
    free(shm);
    return AMC_ERR_TRANSPORT;
}

void amc_shm_addr(const amc_shm_t *shm, amc_shm_addr_t *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->magic    = AMC_SHM_MAGIC;
    addr->version  = AMC_SHM_VERSION;
    addr->pid      = (int32_t)getpid();
    addr->inbox_fd = shm->inbox_fd;
    addr->bell_fd  = shm->bell_w;
    addr->nrings   = shm->nrings;
    addr->ncells   = AMC_SHM_NCELLS;
    addr->flags    = (shm->barrier_ok ? AMC_SHM_ADDR_MEMBARRIER : 0) |
                     (shm->pull_ok ? AMC_SHM_ADDR_PULL : 0);
}

int amc_shm_connect(amc_shm_t *shm, int dest, const amc_shm_addr_t *addr, amc_shm_out_t **out_p)
{
    amc_shm_inbox_t *inbox;
    amc_shm_out_t   *out;
    struct stat      st;
    size_t           len;
    uint32_t         idx;
    int              fd;

    if ((addr->magic != AMC_SHM_MAGIC) || (addr->version != AMC_SHM_VERSION) ||
        (addr->ncells != AMC_SHM_NCELLS) || (addr->nrings == 0) ||
        (addr->nrings > (1u << 20)) || (addr->pid <= 0) ||
        (addr->flags & ~(AMC_SHM_ADDR_MEMBARRIER | AMC_SHM_ADDR_PULL))) {
        amc_debug(&shm->log, "rank %d's mailbox address is not one this build reads", dest);
        return AMC_ERR_TRANSPORT;
    }
    len = amc_shm_inbox_bytes(addr->nrings);
    fd  = amc_shm_proc_open(addr->pid, addr->inbox_fd, O_RDWR);
    if (fd < 0) {
        amc_debug(&shm->log, "rank %d's inbox: %s; UCX carries its messages", dest,
                  strerror(errno));
        return AMC_ERR_TRANSPORT;
    }
    /* a shorter file would fault on access */
    if ((fstat(fd, &st) != 0) || ((size_t)st.st_size < len)) {
        close(fd);
        amc_debug(&shm->log, "rank %d's inbox is smaller than it says", dest);
        return AMC_ERR_TRANSPORT;
    }
    inbox = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (inbox == MAP_FAILED) {
        amc_debug(&shm->log, "mapping rank %d's inbox: %s", dest, strerror(errno));
        return AMC_ERR_TRANSPORT;
    }
    out = calloc(1, sizeof(*out));
    if (out == NULL) {
        munmap(inbox, len);
        return AMC_ERR_NO_MEMORY;
    }
    /* once per pair: the only read-modify-write on the shared memory */
    idx = __atomic_fetch_add(&inbox->nreg, 1, __ATOMIC_ACQ_REL);
    if (idx >= addr->nrings) {
        munmap(inbox, len);
        free(out);
        amc_debug(&shm->log, "rank %d's inbox has no ring left", dest);
        return AMC_ERR_TRANSPORT;
    }
    out->ring     = amc_shm_ring_at(inbox, addr->nrings, idx);
    out->sleepers = &inbox->sleepers;
    out->map      = inbox;
    out->map_len  = len;
    out->dest     = dest;
    out->pid      = addr->pid;
    out->bell_fd  = addr->bell_fd;
    out->bell     = -1;
    out->fence    = !shm->barrier_ok || !(addr->flags & AMC_SHM_ADDR_MEMBARRIER);
    out->pull     = shm->pull_ok && (addr->flags & AMC_SHM_ADDR_PULL);
    /* where a pull's end wakes this rank, read once registered */
    out->ring->wpid  = (int32_t)getpid();
    out->ring->wbell = shm->bell_w;
    __atomic_store_n(&inbox->reg[idx], (int32_t)shm->tp->rank + 1, __ATOMIC_RELEASE);
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
    amc_shm_bell_ring(&out->bell, out->pid, out->bell_fd);
}

static inline size_t amc_shm_cells(size_t hdr_len, size_t len)
{
    return (sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len) + len + AMC_SHM_CELL - 1) / AMC_SHM_CELL;
}

/* Copies at most 32 bytes into a cell without a call: loads first, then
 * stores that may overlap; only [dst, dst + n) is written and only
 * [src, src + n) read. */
static inline void amc_shm_copy_short(uint8_t *dst, const void *src, size_t n)
{
    const uint8_t *s = src;
    uint64_t       a, b, c, d;
    uint32_t       x, y;
    uint16_t       h, k;

    if (n >= 16) {
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 16, 8);
        memcpy(&d, s + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + 8, &b, 8);
        memcpy(dst + n - 16, &c, 8);
        memcpy(dst + n - 8, &d, 8);
    } else if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + n - 4, &y, 4);
    } else if (n >= 2) {
        memcpy(&h, s, 2);
        memcpy(&k, s + n - 2, 2);
        memcpy(dst, &h, 2);
        memcpy(dst + n - 2, &k, 2);
    } else if (n == 1) {
        dst[0] = s[0];
    }
}

static inline void amc_shm_store_word(uint8_t *dst, const uint8_t *src)
{
    uint64_t w;

    memcpy(&w, src, 8);
    /* relaxed atomic: a plain 8-byte store that the compiler may not merge
     * with its neighbours into a vector store across two lines */
    __atomic_store_n((uint64_t *)(void *)dst, w, __ATOMIC_RELAXED);
}

/* Copies n bytes to dst, 8-byte aligned in a ring, in aligned 8-byte
 * stores, none across two lines. glibc's memcpy stores with 32- and 64-byte
 * vectors from wherever dst starts, so most of them straddle two cells, and
 * a store that straddles two lines the reader holds stalls the writer: perf
 * put 88% of memcpy's samples on one such store, and a two-cell allreduce
 * (40 B) took 0.58-0.67 us back to back against 0.43-0.51 with this copy;
 * bcast 1 KiB 1.30 against 1.13. Four words a round: a loop of one word a
 * round spent ~7 instructions a word (callgrind: 74 of a 64-byte gatherv's
 * 191 in amc_shm_put). */
static inline void amc_shm_copy_words(uint8_t *dst, const void *src, size_t n)
{
    const uint8_t *s = src;
    size_t         i = 0;

    for (; i + 32 <= n; i += 32) {
        amc_shm_store_word(dst + i, s + i);
        amc_shm_store_word(dst + i + 8, s + i + 8);
        amc_shm_store_word(dst + i + 16, s + i + 16);
        amc_shm_store_word(dst + i + 24, s + i + 24);
    }
    for (; i + 8 <= n; i += 8) {
        amc_shm_store_word(dst + i, s + i);
    }
    if (i < n) { /* a header of 36 or 44 bytes, data of odd length */
        amc_shm_copy_short(dst + i, s + i, n - i);
    }
}

static inline int amc_shm_stale_test(const amc_shm_out_t *out, size_t cell)
{
    return (int)((out->stale[cell / 64] >> (cell % 64)) & 1u);
}

static inline void amc_shm_stale_set(amc_shm_out_t *out, size_t cell, int on)
{
    if (on) {
        out->stale[cell / 64] |= (uint64_t)1 << (cell % 64);
    } else {
        out->stale[cell / 64] &= ~((uint64_t)1 << (cell % 64));
    }
}

/* Marks where a message of cells cells at off leaves payload in first
 * words, and clears the first word of the cell after it, where the reader
 * looks next, if an earlier message left payload there: a reader must never
 * take payload for a control word. Done by the writer, before the message's
 * control word (stores become visible in order), so the reader only ever
 * reads the ring: a reader that cleared the cells it read took every line
 * of a long message from the writer's cache and gave it back on the next
 * lap (at 1 KiB, 16 lines each way). The room for the next cell was
 * checked. */
static inline void amc_shm_mark(amc_shm_out_t *out, size_t off, size_t cells)
{
    size_t next = (off + cells) % AMC_SHM_NCELLS, i;

    amc_shm_stale_set(out, off, 0);
    for (i = 1; i < cells; i++) {
        amc_shm_stale_set(out, off + i, 1);
    }
    if (amc_shm_stale_test(out, next)) {
        __atomic_store_n((uint64_t *)(out->ring->cells + next * AMC_SHM_CELL), 0,
                         __ATOMIC_RELAXED);
        amc_shm_stale_set(out, next, 0);
    }
}

static inline uint64_t amc_shm_ctl(uint64_t position, size_t hdr_len, size_t len)
{
    return AMC_SHM_CTL_VALID | ((uint64_t)(hdr_len & 0xff) << 48) |
           ((uint64_t)(len & 0xffff) << 32) | (uint32_t)position;
}

/* Copies one message into out's ring if it has room: 1, else 0; flags are
 * the control word's (0 or AMC_SHM_CTL_PULL). Lock held. */
static int amc_shm_put(amc_shm_out_t *out, const void *hdr, size_t hdr_len, const void *data,
                       size_t len, uint64_t flags)
{
    uint64_t  head = out->head;
    size_t    need = amc_shm_cells(hdr_len, len);
    size_t    off  = (size_t)(head % AMC_SHM_NCELLS);
    size_t    skip = 0, at = off;
    uint8_t  *cell;

    if (off + need > AMC_SHM_NCELLS) {
        skip = AMC_SHM_NCELLS - off;
        at   = 0;
    }
    /* one cell more than the message: the one after it may be cleared */
    if (head + skip + need + 1 - out->tail_seen > AMC_SHM_NCELLS) {
        out->tail_seen = __atomic_load_n(&out->ring->tail, __ATOMIC_ACQUIRE);
        if (head + skip + need + 1 - out->tail_seen > AMC_SHM_NCELLS) {
            return 0;
        }
    }
    cell = out->ring->cells + at * AMC_SHM_CELL;
    if (hdr_len <= 32) {
        amc_shm_copy_short(cell + sizeof(uint64_t), hdr, hdr_len); /* at a cell's start */
    } else {
        amc_shm_copy_words(cell + sizeof(uint64_t), hdr, hdr_len);
    }
    if (len > 0) {
        amc_shm_copy_words(cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), data, len);
    }
    amc_shm_mark(out, at, need);
    /* last: a sender that dies before it leaves nothing readable */
    __atomic_store_n((uint64_t *)cell, amc_shm_ctl(head + skip, hdr_len, len) | flags,
                     __ATOMIC_RELEASE);
    if (skip > 0) {
        /* the rest of the ring unused: published after the message at 0,
         * so a reader that follows it finds the message there */
        amc_shm_stale_set(out, off, 0);
        __atomic_store_n((uint64_t *)(out->ring->cells + off * AMC_SHM_CELL),
                         AMC_SHM_CTL_VALID | AMC_SHM_CTL_SKIP | (uint32_t)head,
                         __ATOMIC_RELEASE);
    }
    out->head = head + skip + need;
    return 1;
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

    if (!out->pull || !amc_shm_fits(hdr_len, sizeof(amc_shm_pull_desc_t))) {
        return AMC_SHM_TOO_BIG;
    }
    held = amc_shm_lock(shm, &out->lock);
    p    = amc_shm_pull_reserve(shm, out, data, len, comp);
    if (p == NULL) {
        amc_shm_unlock(&out->lock, held);
        return AMC_SHM_TOO_BIG; /* as many in flight as the ring has slots */
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

/* Rings whose writers registered since the last look. */
static void amc_shm_adopt(amc_shm_t *shm)
{
    uint32_t      n = __atomic_load_n(&shm->inbox->nreg, __ATOMIC_ACQUIRE);
    amc_shm_in_t *in;
    int32_t       who;

    if (n > shm->nrings) {
        n = shm->nrings;  /* writers turned away */
    }
    while (shm->nin < n) {
        who = __atomic_load_n(&shm->inbox->reg[shm->nin], __ATOMIC_ACQUIRE);
        if (who == 0) {
            return;        /* taken, not ready yet */
        }
        in         = &shm->in[shm->nin];
        in->ring   = amc_shm_ring_at(shm->inbox, shm->nrings, shm->nin);
        in->tail   = 0;
        in->next   = (const uint64_t *)in->ring->cells;
        in->idle   = 0;
        in->src    = who - 1;
        in->pid    = in->ring->wpid;
        in->bell_fd = in->ring->wbell;
        in->bell   = -1;
        amc_shm_pull_in_init(in);
        in->broken = (who < 1) || (who > shm->tp->size) || (who - 1 == shm->tp->rank);
        if (in->broken) {
            in->next = &in->idle;
            amc_error(&shm->log, "rejected mailbox: a writer registered as rank %d of %d",
                      who - 1, shm->tp->size);
        }
        __atomic_store_n(&shm->nin, shm->nin + 1, __ATOMIC_RELEASE); /* amc_shm_rings_in */
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

/* Why the word at in's tail is not the next message, or NULL if it is;
 * *kind says which (AMC_SHM_WORD_*; with a reason, MESSAGE). */
static inline const char *amc_shm_check(const amc_shm_in_t *in, uint64_t w, int *kind)
{
    uint32_t behind = (uint32_t)in->tail - AMC_SHM_CTL_POS(w);
    size_t   off    = (size_t)(in->tail % AMC_SHM_NCELLS);

    *kind = AMC_SHM_WORD_MESSAGE;
    if ((w & (AMC_SHM_CTL_VALID | AMC_SHM_CTL_FLAGS | 0xffffffffull)) !=
        (AMC_SHM_CTL_VALID | (uint32_t)in->tail)) {
        /* not the usual word (a message at its place, without flags,
         * whose lengths are all that is left to check) */
        if (amc_shm_nothing_yet(in, w)) {
            *kind = AMC_SHM_WORD_EMPTY;
            return NULL;
        }
        if (!(w & AMC_SHM_CTL_VALID) || (behind != 0)) {
            return "wrong sequence";
        }
        if ((w & AMC_SHM_CTL_FLAGS) & ~(AMC_SHM_CTL_SKIP | AMC_SHM_CTL_PULL)) {
            return "unknown flags";
        }
        if (w & AMC_SHM_CTL_SKIP) {
            if (w & AMC_SHM_CTL_PULL) {
                return "a skip with flags";
            }
            if ((AMC_SHM_CTL_HDR(w) | AMC_SHM_CTL_LEN(w)) != 0) {
                return "a skip with a length";
            }
            *kind = AMC_SHM_WORD_FLAGGED;
            return NULL;
        }
        if (AMC_SHM_CTL_LEN(w) != sizeof(amc_shm_pull_desc_t)) {
            return "a pull without a pull's descriptor";
        }
        /* a pull: its lengths are checked as any message's */
        *kind = AMC_SHM_WORD_FLAGGED;
    }
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
        if (w & AMC_SHM_CTL_PULL) {
            why = amc_shm_pull_arrive(shm, in, cell + sizeof(uint64_t), hdr_len,
                                      cell + sizeof(uint64_t) + AMC_SHM_ALIGN8(hdr_len), len,
                                      closing);
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

    if ((shm->take_at < shm->nin) && (shm->in[shm->take_at].src == src)) {
        return &shm->in[shm->take_at];
    }
    if (__atomic_load_n(&shm->inbox->nreg, __ATOMIC_RELAXED) != shm->nin) {
        amc_shm_adopt(shm);
    }
    for (i = 0; i < shm->nin; i++) {
        if (shm->in[i].src == src) {
            shm->take_at = i;
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
    if (__atomic_load_n(&shm->inbox->nreg, __ATOMIC_RELAXED) != shm->nin) {
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
        (__atomic_load_n(&shm->inbox->nreg, __ATOMIC_RELAXED) != shm->nin)) {
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
    found = (__atomic_load_n(&shm->inbox->nreg, __ATOMIC_ACQUIRE) != shm->nin) ||
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
    /* a locked add: a full barrier before the look at the rings */
    __atomic_add_fetch(&shm->inbox->sleepers, 1, __ATOMIC_SEQ_CST);
#if defined(SYS_membarrier)
    if (shm->barrier_ok &&
        (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)) {
        shm->barrier_ok = 0; /* not seen: registered, queried; sleep lightly */
        return 1;
    }
#endif
    return amc_shm_pending(shm);
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
        if (out->bell >= 0) {
            close(out->bell);
        }
        munmap(out->map, out->map_len);
        free(out);
    }
    for (i = 0; i < shm->nin; i++) {
        amc_shm_pull_in_close(&shm->in[i]);
    }
    munmap(shm->inbox, shm->inbox_len);
    close(shm->inbox_fd);
    close(shm->bell_r);
    close(shm->bell_w);
    free(shm->in);
    free(shm);
}
