/*
 * Cross-rank checks of every schedule the algorithm table builds, without a
 * transport. For each algorithm, communicator size N (1..64), root, count,
 * in-place choice, commutativity and (vector forms) count pattern, the N
 * per-rank schedules are built as am_coll/coll.c builds them and checked
 * together:
 *
 *  - structure: rounds and acts agree with each other; message tags number
 *    each rank's messages per peer and direction from 0 and
 *    amc_sched_find_recv finds every receive by its tag; offsets and sizes
 *    are whole elements;
 *  - bounds: every range lies in the buffer its act names, the user buffers
 *    taken at the sizes MPI gives them on that rank (not significant: size
 *    0), the scratch at tmp_bytes and a reducing receive's staging range at
 *    stage_bytes; nothing is written into the send buffer (it is const);
 *  - races: within one round no receive lands where a send of the round
 *    reads (an eager send copies when it is issued, after the round's early
 *    messages were delivered; a rendezvous send is read until it completes)
 *    nor where another receive of the round lands (their order is the
 *    network's), and reducing receives of a round have staging ranges of
 *    their own (their pulls may be in flight together);
 *  - matching: the k-th send from src to dst pairs with the k-th receive at
 *    dst from src, with equal sizes; no message lacks its other end; peers
 *    lie in [0, N) and no rank messages itself (no algorithm needs to: a
 *    rank's own block is a local copy, and a message to itself is almost
 *    always a peer computed wrongly);
 *  - progress: the engine's rule (round r+1 starts once every send of round
 *    r completed and every receive of round r arrived) under the strictest
 *    transport: a receive arrives once its sender started the send's round,
 *    a send completes only once its receiver reached the receive's round
 *    (rendezvous: the receiver pulls). Run to a fixed point; a rank that
 *    cannot finish is a deadlock, reported with what it waits for;
 *  - data (N <= 32): the same run executes the acts on real buffers of
 *    symbolic 64-bit elements (a mask of the ranks an element combines and
 *    its index in the ranks' input). A rank's locals run and its sends are
 *    read when it enters a round, its receives land when it leaves it; the
 *    race check above makes every order the engine may take give this
 *    result. A reduction checks that both operands are data for the same
 *    index, that no rank is counted twice and, for a non-commutative op,
 *    that the left operand covers the ranks just below the right one's. The
 *    receive buffers are then compared cell by cell with MPI's result
 *    (untouched where MPI defines nothing, gaps between blocks included),
 *    and the send buffers with their input.
 *
 * A violation names the shape (algorithm, N, root, count or pattern,
 * in-place, commutative), the rank and the act.
 */
#include "tests/unit/harness.h"
#include "am_coll/alg.h"
#include "am_coll/sched.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N       64
#define FULL_ROOTS  17       /* every root up to this N; 0, 1, N/2, N-1 beyond */
#define DATA_MAX_N  32       /* a symbolic element carries a 32-bit rank mask */
#define DT_SIZE     8        /* AMC_INT64: one symbolic element per element */
#define SEGMENT     100      /* bcast pipeline: not a whole number of elements */
#define SEGMENT_MIN 5        /* below one element: one element per segment */
#define NPATTERNS   4        /* count patterns of the vector forms */
#define EMPTY_DISPL 1000003u /* an empty block's displacement: never to be used */
#define MAX_REPORTS 40

/* A symbolic element: marker, index in the input, ranks combined. */
#define VAL_MARK   0x5aull
#define VAL_POISON 0xdeaddeaddeaddeadull
#define VAL_BROKEN 0xeeeeeeee00000000ull  /* a reduction that failed its check */

static uint64_t val(uint32_t mask, size_t elem)
{
    return (VAL_MARK << 56) | ((uint64_t)elem << 32) | mask;
}

static int val_is_data(uint64_t v)
{
    return (v >> 56) == VAL_MARK;
}

static uint32_t val_mask(uint64_t v)
{
    return (uint32_t)v;
}

static size_t val_elem(uint64_t v)
{
    return (size_t)((v >> 32) & 0xffffff);
}

/* The ranks a mask holds are consecutive. */
static int mask_is_run(uint32_t m)
{
    uint64_t x = m;

    return (x != 0) && (((x + (x & (~x + 1))) & x) == 0);
}

/* The run hi starts just above the run lo. */
static int mask_next(uint32_t lo, uint32_t hi)
{
    uint64_t x = lo, y = hi;

    return x + (x & (~x + 1)) == (y & (~y + 1));
}

/* ranks [lo, hi] */
static uint32_t range_mask(int lo, int hi)
{
    uint64_t m = 0;
    int      i;

    for (i = lo; i <= hi; i++) {
        m |= 1ull << i;
    }
    return (uint32_t)m;
}

static void val_describe(uint64_t v, char *buf, size_t len)
{
    if (v == VAL_POISON) {
        snprintf(buf, len, "uninitialized");
    } else if ((v & 0xffffffff00000000ull) == VAL_BROKEN) {
        snprintf(buf, len, "a failed reduction");
    } else if (val_is_data(v)) {
        snprintf(buf, len, "element %zu of ranks 0x%x", val_elem(v), val_mask(v));
    } else {
        snprintf(buf, len, "0x%016llx", (unsigned long long)v);
    }
}

/* ---------------------------------------------------------------- reporting */

static char          shape_name[256];   /* the shape being checked */
static unsigned long violations;
static int           shape_failed;      /* later phases need a sound structure */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    shape_failed = 1;
    if (++violations > MAX_REPORTS) {
        return;
    }
    fprintf(stderr, "FAIL %s: ", shape_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const char *act_name(int type)
{
    static const char *names[] = { "SEND", "RECV", "RECV_REDUCE", "RECV_REDUCE_R", "COPY",
                                   "REDUCE", "REDUCE_R" };

    return ((type >= 0) && (type <= AMC_ACT_REDUCE_R)) ? names[type] : "?";
}

static const char *buf_name(int buf)
{
    static const char *names[] = { "SEND", "RECV", "TMP" };

    return ((buf >= 0) && (buf < AMC_NBUFS)) ? names[buf] : "?";
}

static int act_is_msg(const amc_sched_act_t *act)
{
    return act->type <= AMC_ACT_RECV_REDUCE_R;
}

static int act_is_recv(const amc_sched_act_t *act)
{
    return (act->type >= AMC_ACT_RECV) && (act->type <= AMC_ACT_RECV_REDUCE_R);
}

static int act_is_local(const amc_sched_act_t *act)
{
    return (act->type >= AMC_ACT_COPY) && (act->type <= AMC_ACT_REDUCE_R);
}

/* ---------------------------------------------------------------- shapes */

static int coll_is_rooted(int coll)
{
    return (coll == AMC_COLL_BCAST) || (coll == AMC_COLL_REDUCE) || (coll == AMC_COLL_GATHER) ||
           (coll == AMC_COLL_GATHERV) || (coll == AMC_COLL_SCATTER) ||
           (coll == AMC_COLL_SCATTERV);
}

static int coll_is_reduction(int coll)
{
    return (coll == AMC_COLL_REDUCE) || (coll == AMC_COLL_ALLREDUCE) ||
           (coll == AMC_COLL_REDUCE_SCATTER_BLOCK) || (coll == AMC_COLL_REDUCE_SCATTER) ||
           (coll == AMC_COLL_SCAN) || (coll == AMC_COLL_EXSCAN);
}

static int coll_is_vector(int coll)
{
    return (coll == AMC_COLL_GATHERV) || (coll == AMC_COLL_SCATTERV) ||
           (coll == AMC_COLL_ALLGATHERV) || (coll == AMC_COLL_ALLTOALLV) ||
           (coll == AMC_COLL_REDUCE_SCATTER);
}

/* MPI allows AMC_IN_PLACE for every data collective but bcast */
static int coll_has_in_place(int coll)
{
    return (coll != AMC_COLL_BCAST) && (coll != AMC_COLL_BARRIER);
}

typedef struct {
    const amc_alg_t *alg;
    int              coll;
    int              n;
    int              root;        /* -1: unrooted */
    size_t           count;       /* fixed forms */
    int              pattern;     /* vector forms: the count pattern */
    int              in_place;    /* at the root only for rooted collectives */
    int              commutative;
    size_t           segment;
} shape_t;

/* Everything about the N ranks of the shape being checked. */
typedef struct {
    amc_coll_args_t args[MAX_N];
    size_t          send_cells[MAX_N];  /* user buffer sizes in elements, as MPI has them */
    size_t          recv_cells[MAX_N];
    /* vector forms: g[i] rank i's block (gatherv, scatterv, allgatherv,
     * reduce_scatter); vc[i][j] elements i sends j (alltoallv), vct the
     * transpose; sd/rd[r][j] rank r's displacement of block j */
    size_t          g[MAX_N];
    size_t          vc[MAX_N][MAX_N], vct[MAX_N][MAX_N];
    size_t          sd[MAX_N][MAX_N], rd[MAX_N][MAX_N];
    amc_sched_t    *sched[MAX_N];
    int            *match[MAX_N];       /* per act: the peer's act it pairs with, or -1 */
    uint32_t        cur[MAX_N];         /* simulation: the round a rank is in */
    unsigned char  *buf[MAX_N][AMC_NBUFS];
    uint64_t       *recv_init[MAX_N];
    unsigned char **msg[MAX_N];         /* per send act: its data, read at the round's start */
} world_t;

static world_t world;

static unsigned long stat_shapes, stat_scheds, stat_pairs, stat_data_shapes;

/* ---------------------------------------------------------------- inputs */

static size_t pattern_block(int pattern, int n, int i)
{
    switch (pattern) {
    case 0:
        return (size_t)((i * 7 + 3) % 5);                /* 0..4, zeros among them */
    case 1:
        return 0;                                        /* all empty */
    case 2:
        return (i == n - 1) ? (size_t)(2 * n + 3) : 0;   /* one rank has it all */
    default:
        return ((i % 3) == 1) ? 0 : (size_t)(i + 1);     /* growing, every third empty */
    }
}

static size_t pattern_pair(int pattern, int n, int i, int j)
{
    switch (pattern) {
    case 0:
        return (size_t)((i * 3 + j * 5 + 1) % 4);
    case 1:
        return 0;
    case 2:
        return (j == (i + 1) % n) ? (size_t)(i + 2) : 0;
    default:
        return (size_t)((i + 2 * j) % 5);
    }
}

/* Places n blocks of counts[] in a buffer in an order and with gaps that
 * depend on variant, as displacements; an empty block gets one far past the
 * end. Returns the buffer's extent in elements. */
static size_t layout(int n, const size_t *counts, int variant, size_t *displs)
{
    size_t off = (size_t)(variant % 3), extent = 0;
    int    k, j;

    for (k = 0; k < n; k++) {
        j = ((variant & 1) ? n - 1 - k : k);
        j = (j + variant) % n;
        if (counts[j] == 0) {
            displs[j] = EMPTY_DISPL;
            continue;
        }
        displs[j] = off;
        off      += counts[j] + (size_t)(j % 2);
        if (displs[j] + counts[j] > extent) {
            extent = displs[j] + counts[j];
        }
    }
    return extent;
}

/* The arguments of every rank, as api_coll.c fills them, and the sizes of
 * the user buffers MPI makes significant on each rank. */
static void shape_setup(const shape_t *sh)
{
    world_t *w = &world;
    int      n = sh->n, r, j, root = sh->root, ip;
    size_t   c = sh->count, total = 0;

    if (coll_is_vector(sh->coll)) {
        for (j = 0; j < n; j++) {
            w->g[j] = pattern_block(sh->pattern, n, j);
            total  += w->g[j];
        }
        for (r = 0; r < n; r++) {
            for (j = 0; j < n; j++) {
                /* MPI: in place, what r sends j is what r receives from j */
                w->vc[r][j] = sh->in_place ? pattern_pair(sh->pattern, n, (r < j) ? r : j,
                                                          (r < j) ? j : r)
                                           : pattern_pair(sh->pattern, n, r, j);
            }
        }
        for (r = 0; r < n; r++) {
            for (j = 0; j < n; j++) {
                w->vct[r][j] = w->vc[j][r];
            }
        }
    }

    for (r = 0; r < n; r++) {
        amc_coll_args_t *a = &w->args[r];

        memset(a, 0, sizeof(*a));
        ip             = sh->in_place && ((root < 0) || (r == root));
        a->coll        = (uint8_t)sh->coll;
        a->root        = root;
        a->count       = c;
        a->dt          = AMC_INT64;
        a->dt_size     = DT_SIZE;
        a->op          = coll_is_reduction(sh->coll) ? AMC_SUM : -1;
        a->commutative = sh->commutative;
        a->in_place    = ip;
        a->segment     = sh->segment;
        w->send_cells[r] = 0;
        w->recv_cells[r] = 0;

        switch (sh->coll) {
        case AMC_COLL_BCAST:
            /* the buffer is the receive buffer; a bcast a rank forwards before
             * its call (amc_coll_forward_start) has no send buffer at all */
            w->recv_cells[r] = c;
            break;
        case AMC_COLL_REDUCE:
            w->send_cells[r] = ip ? 0 : c;
            w->recv_cells[r] = (r == root) ? c : 0;
            break;
        case AMC_COLL_ALLREDUCE:
        case AMC_COLL_SCAN:
            w->send_cells[r] = ip ? 0 : c;
            w->recv_cells[r] = c;
            break;
        case AMC_COLL_EXSCAN:
            /* rank 0's result is undefined: its receive buffer matters only
             * when it holds the input */
            w->send_cells[r] = ip ? 0 : c;
            w->recv_cells[r] = ((r == 0) && !ip) ? 0 : c;
            break;
        case AMC_COLL_GATHER:
            w->send_cells[r] = ip ? 0 : c;
            w->recv_cells[r] = (r == root) ? (size_t)n * c : 0;
            break;
        case AMC_COLL_SCATTER:
            w->send_cells[r] = (r == root) ? (size_t)n * c : 0;
            w->recv_cells[r] = ip ? 0 : c;
            break;
        case AMC_COLL_ALLGATHER:
            w->send_cells[r] = ip ? 0 : c;
            w->recv_cells[r] = (size_t)n * c;
            break;
        case AMC_COLL_ALLTOALL:
            w->send_cells[r] = ip ? 0 : (size_t)n * c;
            w->recv_cells[r] = (size_t)n * c;
            break;
        case AMC_COLL_REDUCE_SCATTER_BLOCK:
            w->send_cells[r] = ip ? 0 : (size_t)n * c;
            w->recv_cells[r] = ip ? (size_t)n * c : c;
            break;
        case AMC_COLL_GATHERV:
            /* MPI: sendcount is ignored at an in-place root; receive
             * arguments are not significant elsewhere */
            a->scount = ip ? 12345 : w->g[r];
            w->send_cells[r] = ip ? 0 : w->g[r];
            if (r == root) {
                w->recv_cells[r] = layout(n, w->g, r, w->rd[r]);
                a->rcounts       = w->g;
                a->rdispls       = w->rd[r];
            }
            break;
        case AMC_COLL_SCATTERV:
            a->rcount = ip ? 12345 : w->g[r];
            w->recv_cells[r] = ip ? 0 : w->g[r];
            if (r == root) {
                w->send_cells[r] = layout(n, w->g, r + 1, w->sd[r]);
                a->scounts       = w->g;
                a->sdispls       = w->sd[r];
            }
            break;
        case AMC_COLL_ALLGATHERV:
            /* every rank its own displacements: a sender may use only its own */
            a->scount        = ip ? 12345 : w->g[r];
            a->rcounts       = w->g;
            a->rdispls       = w->rd[r];
            w->send_cells[r] = ip ? 0 : w->g[r];
            w->recv_cells[r] = layout(n, w->g, r, w->rd[r]);
            break;
        case AMC_COLL_ALLTOALLV:
            a->rcounts       = w->vct[r];
            a->rdispls       = w->rd[r];
            w->recv_cells[r] = layout(n, w->vct[r], r, w->rd[r]);
            if (!ip) {
                a->scounts       = w->vc[r];
                a->sdispls       = w->sd[r];
                w->send_cells[r] = layout(n, w->vc[r], r + 7, w->sd[r]);
            }
            break;
        case AMC_COLL_REDUCE_SCATTER:
            a->rcounts       = w->g;
            w->send_cells[r] = ip ? 0 : total;
            w->recv_cells[r] = ip ? total : w->g[r];
            break;
        default: /* barrier: no data */
            break;
        }
    }
}

/* ---------------------------------------------------------------- one schedule */

static int range_ok(size_t off, size_t bytes, size_t size)
{
    return (bytes == 0) || ((off <= size) && (bytes <= size - off));
}

static int ranges_overlap(size_t a_off, size_t a_bytes, size_t b_off, size_t b_bytes)
{
    return (a_bytes > 0) && (b_bytes > 0) && (a_off < b_off + b_bytes) &&
           (b_off < a_off + a_bytes);
}

static size_t buf_bytes(int r, int buf)
{
    switch (buf) {
    case AMC_BUF_SEND:
        return world.send_cells[r] * DT_SIZE;
    case AMC_BUF_RECV:
        return world.recv_cells[r] * DT_SIZE;
    default:
        return world.sched[r]->tmp_bytes;
    }
}

static void check_range(int r, uint32_t i, const char *what, int buf, size_t off, size_t bytes)
{
    const amc_sched_act_t *act = &world.sched[r]->acts[i];

    if (buf >= AMC_NBUFS) {
        fail("rank %d act %u (%s, round %u): %s names buffer %d", r, i, act_name(act->type),
             act->round, what, buf);
        return;
    }
    if (!range_ok(off, bytes, buf_bytes(r, buf))) {
        fail("rank %d act %u (%s, round %u): %s [%zu, %zu) outside %s of %zu bytes", r, i,
             act_name(act->type), act->round, what, off, off + bytes, buf_name(buf),
             buf_bytes(r, buf));
    }
    if (((off % DT_SIZE) != 0) || ((bytes % DT_SIZE) != 0)) {
        fail("rank %d act %u (%s, round %u): %s [%zu, %zu) of %s is not whole elements of %d "
             "bytes", r, i, act_name(act->type), act->round, what, off, off + bytes,
             buf_name(buf), DT_SIZE);
    }
}

/* Two acts of one round the engine may run in either order. */
static void check_race(int r, uint32_t i, uint32_t j)
{
    const amc_sched_act_t *a = &world.sched[r]->acts[i], *b = &world.sched[r]->acts[j];

    if ((a->buf == b->buf) && ranges_overlap(a->off, a->bytes, b->off, b->bytes)) {
        fail("rank %d round %u: act %u (%s from %d) lands in %s [%zu, %zu) where act %u (%s "
             "%s %d) %s [%zu, %zu) in the same round", r, a->round, i, act_name(a->type),
             a->peer, buf_name(a->buf), a->off, a->off + a->bytes, j, act_name(b->type),
             (b->type == AMC_ACT_SEND) ? "to" : "from", b->peer,
             (b->type == AMC_ACT_SEND) ? "reads" : "lands", b->off, b->off + b->bytes);
    }
    /* data pulled for reducing receives waits in the staging area */
    if ((a->type != AMC_ACT_RECV) && act_is_recv(b) && (b->type != AMC_ACT_RECV) &&
        ranges_overlap(a->off2, a->bytes, b->off2, b->bytes)) {
        fail("rank %d round %u: acts %u and %u (reducing receives from %d and %d) share staging "
             "bytes [%zu, +%zu) and [%zu, +%zu)", r, a->round, i, j, a->peer, b->peer, a->off2,
             a->bytes, b->off2, b->bytes);
    }
}

static void check_sched(const shape_t *sh, int r)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    uint32_t               stag[MAX_N], rtag[MAX_N], k, i, j, first = 0, nsend, nrecv;
    uint32_t               nrecv_all = 0;
    int                    found;

    memset(stag, 0, sizeof(stag));
    memset(rtag, 0, sizeof(rtag));
    for (k = 0; k < s->nrounds; k++) {
        const amc_sched_round_t *round = &s->rounds[k];

        if ((round->first != first) || (round->count > s->nacts - first)) {
            fail("rank %d round %u: acts [%u, +%u) where [%u, ...) was expected (%u acts)", r,
                 k, round->first, round->count, first, s->nacts);
            return;
        }
        first += round->count;
        nsend  = 0;
        nrecv  = 0;
        for (i = round->first; i < round->first + round->count; i++) {
            act = &s->acts[i];
            if (act->round != k) {
                fail("rank %d act %u says round %u, lies in round %u", r, i, act->round, k);
            }
            nsend += (act->type == AMC_ACT_SEND);
            nrecv += act_is_recv(act);
        }
        if ((nsend != round->nsend) || (nrecv != round->nrecv)) {
            fail("rank %d round %u counts %u sends and %u receives, has %u and %u", r, k,
                 round->nsend, round->nrecv, nsend, nrecv);
        }
    }
    if (first != s->nacts) {
        fail("rank %d: the rounds cover %u of %u acts", r, first, s->nacts);
        return;
    }

    for (i = 0; i < s->nacts; i++) {
        act = &s->acts[i];
        if (act->type > AMC_ACT_REDUCE_R) {
            fail("rank %d act %u: unknown type %d", r, i, act->type);
            continue;
        }
        if (act_is_msg(act)) {
            if ((act->peer < 0) || (act->peer >= sh->n)) {
                fail("rank %d act %u (%s, round %u): peer %d outside [0, %d)", r, i,
                     act_name(act->type), act->round, act->peer, sh->n);
                continue;
            }
            if (act->peer == r) {
                fail("rank %d act %u (%s, round %u): a message to itself", r, i,
                     act_name(act->type), act->round);
            }
            if (act->type == AMC_ACT_SEND) {
                if (act->tag != stag[act->peer]++) {
                    fail("rank %d act %u: send tag %u to %d, expected %u", r, i, act->tag,
                         act->peer, stag[act->peer] - 1);
                }
                check_range(r, i, "reads", act->buf, act->off, act->bytes);
            } else {
                nrecv_all++;
                if (act->tag != rtag[act->peer]++) {
                    fail("rank %d act %u: receive tag %u from %d, expected %u", r, i, act->tag,
                         act->peer, rtag[act->peer] - 1);
                }
                found = amc_sched_find_recv(s, act->peer, act->tag);
                if (found != (int)i) {
                    fail("rank %d act %u: amc_sched_find_recv(%d, %u) gives %d", r, i,
                         act->peer, act->tag, found);
                }
                if (act->buf == AMC_BUF_SEND) {
                    fail("rank %d act %u (%s, round %u): receives into the send buffer", r, i,
                         act_name(act->type), act->round);
                }
                check_range(r, i, "writes", act->buf, act->off, act->bytes);
                if ((act->type != AMC_ACT_RECV) &&
                    !range_ok(act->off2, act->bytes, s->stage_bytes)) {
                    fail("rank %d act %u (%s, round %u): staging [%zu, %zu) outside %zu bytes",
                         r, i, act_name(act->type), act->round, act->off2,
                         act->off2 + act->bytes, s->stage_bytes);
                }
            }
        } else {
            if (act->buf == AMC_BUF_SEND) {
                fail("rank %d act %u (%s, round %u): writes the send buffer", r, i,
                     act_name(act->type), act->round);
            }
            check_range(r, i, "writes", act->buf, act->off, act->bytes);
            check_range(r, i, "reads", act->buf2, act->off2, act->bytes);
            if ((act->type != AMC_ACT_COPY) && (act->buf == act->buf2) &&
                ranges_overlap(act->off, act->bytes, act->off2, act->bytes)) {
                fail("rank %d act %u (%s, round %u): operands overlap in %s ([%zu, +%zu) and "
                     "[%zu, +%zu))", r, i, act_name(act->type), act->round, buf_name(act->buf),
                     act->off, act->bytes, act->off2, act->bytes);
            }
        }
    }
    if (nrecv_all != s->nrecv) {
        fail("rank %d: nrecv %u, %u receive acts", r, s->nrecv, nrecv_all);
    }

    for (k = 0; k < s->nrounds; k++) {
        const amc_sched_round_t *round = &s->rounds[k];

        for (i = round->first; i < round->first + round->count; i++) {
            if (!act_is_recv(&s->acts[i])) {
                continue;
            }
            for (j = round->first; j < round->first + round->count; j++) {
                if ((j != i) && act_is_msg(&s->acts[j]) &&
                    ((s->acts[j].type == AMC_ACT_SEND) || (j > i))) {
                    check_race(r, i, j);
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- across ranks */

static void check_matching(const shape_t *sh)
{
    const amc_sched_act_t *act, *peer_act;
    amc_sched_t           *s;
    uint32_t               i;
    int                    r, j;

    for (r = 0; r < sh->n; r++) {
        s = world.sched[r];
        for (i = 0; i < s->nacts; i++) {
            act = &s->acts[i];
            if (act->type != AMC_ACT_SEND) {
                continue;
            }
            j = amc_sched_find_recv(world.sched[act->peer], r, act->tag);
            if (j < 0) {
                fail("rank %d act %u (SEND, round %u): message %u to rank %d (%zu bytes) has no "
                     "receive there", r, i, act->round, act->tag, act->peer, act->bytes);
                continue;
            }
            peer_act = &world.sched[act->peer]->acts[j];
            if (peer_act->bytes != act->bytes) {
                fail("rank %d act %u (SEND, round %u) sends %zu bytes to rank %d, whose act %d "
                     "(%s, round %u) expects %zu", r, i, act->round, act->bytes, act->peer, j,
                     act_name(peer_act->type), peer_act->round, peer_act->bytes);
            }
            world.match[r][i]         = j;
            world.match[act->peer][j] = (int)i;
            stat_pairs++;
        }
    }
    for (r = 0; r < sh->n; r++) {
        s = world.sched[r];
        for (i = 0; i < s->nacts; i++) {
            act = &s->acts[i];
            if (act_is_recv(act) && (world.match[r][i] < 0)) {
                fail("rank %d act %u (%s, round %u): message %u from rank %d (%zu bytes) is "
                     "never sent", r, i, act_name(act->type), act->round, act->tag, act->peer,
                     act->bytes);
            }
        }
    }
}

/* ---------------------------------------------------------------- data */

/* out = left (op) right, element by element, on symbolic values; out is
 * one of the two. A failed element says which act and why, once per act. */
static void sym_reduce(const shape_t *sh, int r, uint32_t i, const unsigned char *left_p,
                       const unsigned char *right_p, unsigned char *out_p, size_t bytes)
{
    uint64_t left, right, res, first_left = 0, first_right = 0;
    uint32_t lm, rm;
    size_t   k, nbad = 0, first = 0;
    char     ldesc[64], rdesc[64];
    int      bad, order = 0;

    for (k = 0; k < bytes / DT_SIZE; k++) {
        memcpy(&left, left_p + k * DT_SIZE, DT_SIZE);
        memcpy(&right, right_p + k * DT_SIZE, DT_SIZE);
        lm  = val_mask(left);
        rm  = val_mask(right);
        bad = !val_is_data(left) || !val_is_data(right) || (val_elem(left) != val_elem(right)) ||
              ((lm & rm) != 0);
        if (!bad && !sh->commutative &&
            !(mask_is_run(lm) && mask_is_run(rm) && mask_next(lm, rm))) {
            bad    = 1;
            order |= (nbad == 0); /* the reason of the element reported */
        }
        if (bad) {
            if (nbad++ == 0) {
                first       = k;
                first_left  = left;
                first_right = right;
            }
            res = VAL_BROKEN;
        } else {
            res = val(lm | rm, val_elem(left));
        }
        memcpy(out_p + k * DT_SIZE, &res, DT_SIZE);
    }
    if (nbad > 0) {
        val_describe(first_left, ldesc, sizeof(ldesc));
        val_describe(first_right, rdesc, sizeof(rdesc));
        fail("rank %d act %u (%s, round %u) element %zu (of %zu bad): combines %s (left) with %s "
             "(right)%s", r, i, act_name(world.sched[r]->acts[i].type),
             world.sched[r]->acts[i].round, first, nbad, ldesc, rdesc,
             order ? ": out of rank order" : "");
    }
}

static unsigned char *buf_at(int r, int buf, size_t off)
{
    return world.buf[r][buf] + off;
}

/* At the start of a round: its local acts in order, then its sends read. */
static void data_round_enter(const shape_t *sh, int r, uint32_t k)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    uint32_t               i;

    for (i = s->rounds[k].first; i < s->rounds[k].first + s->rounds[k].count; i++) {
        act = &s->acts[i];
        if (!act_is_local(act) || (act->bytes == 0)) {
            continue;
        }
        if (act->type == AMC_ACT_COPY) {
            memmove(buf_at(r, act->buf, act->off), buf_at(r, act->buf2, act->off2), act->bytes);
        } else if (act->type == AMC_ACT_REDUCE) { /* buf = buf2 (op) buf */
            sym_reduce(sh, r, i, buf_at(r, act->buf2, act->off2), buf_at(r, act->buf, act->off),
                       buf_at(r, act->buf, act->off), act->bytes);
        } else {                                  /* buf = buf (op) buf2 */
            sym_reduce(sh, r, i, buf_at(r, act->buf, act->off), buf_at(r, act->buf2, act->off2),
                       buf_at(r, act->buf, act->off), act->bytes);
        }
    }
    for (i = s->rounds[k].first; i < s->rounds[k].first + s->rounds[k].count; i++) {
        act = &s->acts[i];
        if ((act->type == AMC_ACT_SEND) && (act->bytes > 0)) {
            world.msg[r][i] = malloc(act->bytes);
            if (world.msg[r][i] == NULL) {
                fail("out of memory");
                continue;
            }
            memcpy(world.msg[r][i], buf_at(r, act->buf, act->off), act->bytes);
        }
    }
}

/* At the end of a round: its receives land. */
static void data_round_leave(const shape_t *sh, int r, uint32_t k)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    const unsigned char   *data;
    unsigned char         *target;
    uint32_t               i;

    for (i = s->rounds[k].first; i < s->rounds[k].first + s->rounds[k].count; i++) {
        act = &s->acts[i];
        if (!act_is_recv(act) || (act->bytes == 0)) {
            continue;
        }
        data = world.msg[act->peer][world.match[r][i]];
        if (data == NULL) {
            continue; /* reported */
        }
        target = buf_at(r, act->buf, act->off);
        if (act->type == AMC_ACT_RECV) {
            memcpy(target, data, act->bytes);
        } else if (act->type == AMC_ACT_RECV_REDUCE) { /* message (op) buf */
            sym_reduce(sh, r, i, data, target, target, act->bytes);
        } else {
            sym_reduce(sh, r, i, target, data, target, act->bytes);
        }
    }
}

static void cells_fill(unsigned char *p, size_t first, size_t cells, uint32_t mask,
                       size_t elem0)
{
    uint64_t v;
    size_t   k;

    for (k = 0; k < cells; k++) {
        v = (mask == 0) ? VAL_POISON : val(mask, elem0 + k);
        memcpy(p + (first + k) * DT_SIZE, &v, DT_SIZE);
    }
}

/* Buffers with every rank's input where MPI has it: the send buffer, or
 * in place the receive buffer. Elements are numbered by their place in the
 * rank's input, so reduced and moved elements can be told apart. */
static int data_setup(const shape_t *sh)
{
    world_t *w = &world;
    int      r, ip, n = sh->n;
    size_t   c = sh->count, bytes[AMC_NBUFS];
    int      b;

    for (r = 0; r < n; r++) {
        ip              = w->args[r].in_place;
        bytes[AMC_BUF_SEND] = w->send_cells[r] * DT_SIZE;
        bytes[AMC_BUF_RECV] = w->recv_cells[r] * DT_SIZE;
        bytes[AMC_BUF_TMP]  = w->sched[r]->tmp_bytes;
        for (b = 0; b < AMC_NBUFS; b++) {
            w->buf[r][b] = (bytes[b] > 0) ? malloc(bytes[b]) : NULL;
            if ((bytes[b] > 0) && (w->buf[r][b] == NULL)) {
                return -1;
            }
        }
        w->recv_init[r] = (bytes[AMC_BUF_RECV] > 0) ? malloc(bytes[AMC_BUF_RECV]) : NULL;
        w->msg[r]       = calloc(w->sched[r]->nacts + 1, sizeof(*w->msg[r]));
        if (((bytes[AMC_BUF_RECV] > 0) && (w->recv_init[r] == NULL)) || (w->msg[r] == NULL)) {
            return -1;
        }
        /* scratch is a previous call's leftovers (am_coll/coll.c keeps a spare) */
        cells_fill(w->buf[r][AMC_BUF_TMP], 0, bytes[AMC_BUF_TMP] / DT_SIZE, 0, 0);
        cells_fill(w->buf[r][AMC_BUF_SEND], 0, w->send_cells[r], 1u << r, 0);
        cells_fill(w->buf[r][AMC_BUF_RECV], 0, w->recv_cells[r], 0, 0);
        if (sh->coll == AMC_COLL_BCAST) {
            if (r == sh->root) {
                cells_fill(w->buf[r][AMC_BUF_RECV], 0, c, 1u << r, 0);
            }
        } else if (ip) {
            switch (sh->coll) {
            case AMC_COLL_ALLGATHER:
                cells_fill(w->buf[r][AMC_BUF_RECV], (size_t)r * c, c, 1u << r, 0);
                break;
            case AMC_COLL_GATHER:
                cells_fill(w->buf[r][AMC_BUF_RECV], (size_t)r * c, c, 1u << r, 0);
                break;
            case AMC_COLL_GATHERV:
            case AMC_COLL_ALLGATHERV:
                if (w->g[r] > 0) {
                    cells_fill(w->buf[r][AMC_BUF_RECV], w->rd[r][r], w->g[r], 1u << r, 0);
                }
                break;
            default:
                /* the whole receive buffer is the input (alltoallv: its gaps too) */
                cells_fill(w->buf[r][AMC_BUF_RECV], 0, w->recv_cells[r], 1u << r, 0);
                break;
            }
        }
        if (bytes[AMC_BUF_RECV] > 0) {
            memcpy(w->recv_init[r], w->buf[r][AMC_BUF_RECV], bytes[AMC_BUF_RECV]);
        }
    }
    return 0;
}

static void expect_set(uint64_t *exp, size_t first, size_t cells, uint32_t mask, size_t elem0)
{
    size_t k;

    for (k = 0; k < cells; k++) {
        exp[first + k] = val(mask, elem0 + k);
    }
}

/* MPI's result in rank d's receive buffer; cells it leaves undefined keep
 * what they held, except where care[] is cleared. */
static void expect_build(const shape_t *sh, int d, uint64_t *exp, uint8_t *care)
{
    world_t *w = &world;
    int      n = sh->n, root = sh->root, i, ip = w->args[d].in_place;
    uint32_t all = range_mask(0, n - 1);
    size_t   c = sh->count, cells = w->recv_cells[d], off, k;

    if (cells > 0) {
        memcpy(exp, w->recv_init[d], cells * DT_SIZE);
    }
    memset(care, 1, cells);
    switch (sh->coll) {
    case AMC_COLL_BCAST:
        expect_set(exp, 0, c, 1u << root, 0);
        break;
    case AMC_COLL_REDUCE:
        if (d == root) {
            expect_set(exp, 0, c, all, 0);
        }
        break;
    case AMC_COLL_ALLREDUCE:
        expect_set(exp, 0, c, all, 0);
        break;
    case AMC_COLL_SCAN:
        expect_set(exp, 0, c, range_mask(0, d), 0);
        break;
    case AMC_COLL_EXSCAN:
        if (d > 0) {
            expect_set(exp, 0, c, range_mask(0, d - 1), 0);
        }
        break;
    case AMC_COLL_GATHER:
        if (d == root) {
            for (i = 0; i < n; i++) {
                expect_set(exp, (size_t)i * c, c, 1u << i, 0);
            }
        }
        break;
    case AMC_COLL_SCATTER:
        if (cells > 0) {
            expect_set(exp, 0, c, 1u << root, (size_t)d * c);
        }
        break;
    case AMC_COLL_ALLGATHER:
        for (i = 0; i < n; i++) {
            expect_set(exp, (size_t)i * c, c, 1u << i, 0);
        }
        break;
    case AMC_COLL_ALLTOALL:
        for (i = 0; i < n; i++) {
            expect_set(exp, (size_t)i * c, c, 1u << i, (size_t)d * c);
        }
        break;
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        expect_set(exp, 0, c, all, (size_t)d * c);
        if (ip) {
            memset(care + c, 0, cells - c); /* MPI says nothing of the rest */
        }
        break;
    case AMC_COLL_REDUCE_SCATTER:
        for (off = 0, i = 0; i < d; i++) {
            off += w->g[i];
        }
        expect_set(exp, 0, w->g[d], all, off);
        if (ip) {
            memset(care + w->g[d], 0, cells - w->g[d]);
        }
        break;
    case AMC_COLL_GATHERV:
        if (d == root) {
            for (i = 0; i < n; i++) {
                if (w->g[i] > 0) {
                    expect_set(exp, w->rd[d][i], w->g[i], 1u << i, 0);
                }
            }
        }
        break;
    case AMC_COLL_SCATTERV:
        if (cells > 0) {
            expect_set(exp, 0, w->g[d], 1u << root, w->sd[root][d]);
        }
        break;
    case AMC_COLL_ALLGATHERV:
        for (i = 0; i < n; i++) {
            if (w->g[i] > 0) {
                expect_set(exp, w->rd[d][i], w->g[i], 1u << i, 0);
            }
        }
        break;
    case AMC_COLL_ALLTOALLV:
        for (i = 0; i < n; i++) {
            if (w->vc[i][d] > 0) {
                /* where rank i's input holds the block: in place its receive buffer */
                k = w->args[i].in_place ? w->rd[i][d] : w->sd[i][d];
                expect_set(exp, w->rd[d][i], w->vc[i][d], 1u << i, k);
            }
        }
        break;
    default:
        break;
    }
}

static void data_compare(const shape_t *sh)
{
    uint64_t *exp = NULL, got, want;
    uint8_t  *care = NULL;
    size_t    k, cells;
    char      gdesc[64], wdesc[64];
    int       r;

    for (r = 0; r < sh->n; r++) {
        cells = world.recv_cells[r];
        if (cells > 0) {
            exp  = malloc(cells * sizeof(*exp));
            care = malloc(cells);
            if ((exp == NULL) || (care == NULL)) {
                fail("out of memory");
                free(exp);
                free(care);
                return;
            }
            expect_build(sh, r, exp, care);
            for (k = 0; k < cells; k++) {
                memcpy(&got, world.buf[r][AMC_BUF_RECV] + k * DT_SIZE, DT_SIZE);
                if (care[k] && (got != exp[k])) {
                    val_describe(got, gdesc, sizeof(gdesc));
                    val_describe(exp[k], wdesc, sizeof(wdesc));
                    fail("rank %d: receive buffer element %zu holds %s, expected %s", r, k, gdesc,
                         wdesc);
                    break;
                }
            }
            free(exp);
            free(care);
        }
        for (k = 0; k < world.send_cells[r]; k++) {
            memcpy(&got, world.buf[r][AMC_BUF_SEND] + k * DT_SIZE, DT_SIZE);
            want = val(1u << r, k);
            if (got != want) {
                val_describe(got, gdesc, sizeof(gdesc));
                fail("rank %d: send buffer element %zu changed to %s", r, k, gdesc);
                break;
            }
        }
    }
}

static void data_free(const shape_t *sh)
{
    uint32_t i;
    int      r, b;

    for (r = 0; r < sh->n; r++) {
        for (b = 0; b < AMC_NBUFS; b++) {
            free(world.buf[r][b]);
            world.buf[r][b] = NULL;
        }
        free(world.recv_init[r]);
        world.recv_init[r] = NULL;
        if (world.msg[r] != NULL) {
            for (i = 0; i < world.sched[r]->nacts; i++) {
                free(world.msg[r][i]);
            }
            free(world.msg[r]);
            world.msg[r] = NULL;
        }
    }
}

/* ---------------------------------------------------------------- progress */

/* Whether rank r may leave round k: every send received, every receive sent. */
static int round_done(int r, uint32_t k)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    uint32_t               i;

    for (i = s->rounds[k].first; i < s->rounds[k].first + s->rounds[k].count; i++) {
        act = &s->acts[i];
        if (act_is_msg(act) &&
            (world.cur[act->peer] < world.sched[act->peer]->acts[world.match[r][i]].round)) {
            return 0;
        }
    }
    return 1;
}

static void report_deadlock(const shape_t *sh)
{
    const amc_sched_t     *s;
    const amc_sched_act_t *act, *other;
    char                   waits[512];
    size_t                 used;
    uint32_t               i, k;
    int                    r, stuck = 0, shown;

    for (r = 0; r < sh->n; r++) {
        stuck += (world.cur[r] < world.sched[r]->nrounds);
    }
    for (r = 0; r < sh->n; r++) {
        s = world.sched[r];
        k = world.cur[r];
        if (k >= s->nrounds) {
            continue;
        }
        used     = 0;
        shown    = 0;
        waits[0] = '\0';
        for (i = s->rounds[k].first; i < s->rounds[k].first + s->rounds[k].count; i++) {
            act = &s->acts[i];
            if (!act_is_msg(act)) {
                continue;
            }
            other = &world.sched[act->peer]->acts[world.match[r][i]];
            if ((world.cur[act->peer] >= other->round) || (used >= sizeof(waits) - 1)) {
                continue;
            }
            if (++shown > 4) {
                snprintf(waits + used, sizeof(waits) - used, " ...");
                break;
            }
            used += (size_t)snprintf(waits + used, sizeof(waits) - used,
                                     " act %u %s rank %d (its round %u, it is in round %u);", i,
                                     (act->type == AMC_ACT_SEND) ? "sends to" : "receives from",
                                     act->peer, other->round, world.cur[act->peer]);
            if (used >= sizeof(waits)) {
                used = sizeof(waits) - 1; /* truncated */
            }
        }
        fail("deadlock (%d of %d ranks stuck): rank %d in round %u of %u waits:%s", stuck,
             sh->n, r, k, s->nrounds, waits);
        if (violations > MAX_REPORTS) {
            break;
        }
    }
}

/* The strict model to a fixed point; with data, the acts run on the way. */
static void simulate(const shape_t *sh, int data)
{
    int      queue[MAX_N], inq[MAX_N], head = 0, len = 0, r, p;
    uint32_t i, k;

    for (r = 0; r < sh->n; r++) {
        world.cur[r] = 0;
        if (data && (world.sched[r]->nrounds > 0)) {
            data_round_enter(sh, r, 0);
        }
        queue[len++] = r;
        inq[r]       = 1;
    }
    while (len > 0) {
        r = queue[head];
        head = (head + 1) % MAX_N;
        len--;
        inq[r] = 0;
        while ((world.cur[r] < world.sched[r]->nrounds) && round_done(r, world.cur[r])) {
            if (data) {
                data_round_leave(sh, r, world.cur[r]);
            }
            k = ++world.cur[r];
            if (k >= world.sched[r]->nrounds) {
                break;
            }
            if (data) {
                data_round_enter(sh, r, k);
            }
            /* who may move now: the peers of the round entered */
            for (i = world.sched[r]->rounds[k].first;
                 i < world.sched[r]->rounds[k].first + world.sched[r]->rounds[k].count; i++) {
                if (act_is_msg(&world.sched[r]->acts[i])) {
                    p = world.sched[r]->acts[i].peer;
                    if (!inq[p]) {
                        queue[(head + len++) % MAX_N] = p;
                        inq[p] = 1;
                    }
                }
            }
        }
    }
    for (r = 0; r < sh->n; r++) {
        if (world.cur[r] < world.sched[r]->nrounds) {
            report_deadlock(sh);
            return;
        }
    }
    if (data) {
        data_compare(sh);
    }
}

/* ---------------------------------------------------------------- one shape */

static void shape_describe(const shape_t *sh)
{
    char what[64];

    if (coll_is_vector(sh->coll)) {
        snprintf(what, sizeof(what), "pattern=%d", sh->pattern);
    } else {
        snprintf(what, sizeof(what), "count=%zu", sh->count);
    }
    snprintf(shape_name, sizeof(shape_name),
             "%s/%s N=%d root=%d %s in_place=%d commutative=%d%s", amc_coll_name(sh->coll),
             sh->alg->name, sh->n, sh->root, what, sh->in_place, sh->commutative,
             (sh->alg->build == amc_alg_bcast_pipeline) ? ((sh->segment == SEGMENT) ?
                                                           " segment=100" : " segment=5") : "");
}

static void shape_check(const shape_t *sh)
{
    amc_sched_builder_t b;
    int                 r, status;
    uint32_t            i;

    shape_describe(sh);
    shape_failed = 0;
    stat_shapes++;
    shape_setup(sh);
    for (r = 0; r < sh->n; r++) {
        world.sched[r] = NULL;
        world.match[r] = NULL;
    }
    for (r = 0; (r < sh->n) && !shape_failed; r++) {
        status = amc_sb_init(&b);
        if (status == AMC_SUCCESS) {
            status = sh->alg->build(&b, &world.args[r], r, sh->n);
            if (status != AMC_SUCCESS) {
                amc_sched_free(b.sched);
            } else {
                status = amc_sb_finish(&b, &world.sched[r]);
            }
        }
        if (status != AMC_SUCCESS) {
            fail("rank %d: building the schedule failed (%d)", r, status);
            break;
        }
        stat_scheds++;
        world.match[r] = malloc((world.sched[r]->nacts + 1) * sizeof(int));
        if (world.match[r] == NULL) {
            fail("out of memory");
            break;
        }
        for (i = 0; i < world.sched[r]->nacts; i++) {
            world.match[r][i] = -1;
        }
    }
    for (r = 0; (r < sh->n) && !shape_failed; r++) {
        check_sched(sh, r);
    }
    if (!shape_failed) {
        check_matching(sh);
    }
    if (!shape_failed) {
        if (sh->n <= DATA_MAX_N) {
            stat_data_shapes++;
            if (data_setup(sh) != 0) {
                fail("out of memory");
            } else {
                simulate(sh, 1);
            }
            data_free(sh);
        } else {
            simulate(sh, 0);
        }
    }
    for (r = 0; r < sh->n; r++) {
        amc_sched_free(world.sched[r]);
        free(world.match[r]);
        world.sched[r] = NULL;
        world.match[r] = NULL;
    }
}

/* ---------------------------------------------------------------- the sweep */

static int roots_of(int coll, int n, int *roots)
{
    int cand[4] = { 0, 1, n / 2, n - 1 }, k = 0, i, j, dup;

    if (!coll_is_rooted(coll)) {
        roots[0] = -1;
        return 1;
    }
    if (n <= FULL_ROOTS) {
        for (i = 0; i < n; i++) {
            roots[i] = i;
        }
        return n;
    }
    for (i = 0; i < 4; i++) {
        for (dup = 0, j = 0; j < k; j++) {
            dup |= (roots[j] == cand[i]);
        }
        if (!dup) {
            roots[k++] = cand[i];
        }
    }
    return k;
}

static void alg_sweep(const amc_alg_t *alg)
{
    shape_t sh;
    int     roots[MAX_N], nroots, ri, ci, ncounts, ip, cm, si;
    size_t  counts[4];
    size_t  segments[2] = { SEGMENT, SEGMENT_MIN };
    int     pipeline = (alg->build == amc_alg_bcast_pipeline);

    memset(&sh, 0, sizeof(sh));
    sh.alg  = alg;
    sh.coll = alg->coll;
    for (sh.n = 1; sh.n <= MAX_N; sh.n++) {
        nroots = roots_of(sh.coll, sh.n, roots);
        /* none, one, one that no N > 1 divides, and one the pipeline cuts
         * into several segments (and uneven ring chunks) */
        counts[0] = 0;
        counts[1] = 1;
        counts[2] = (size_t)sh.n + 1;
        counts[3] = 3 * (size_t)sh.n + 29;
        ncounts   = coll_is_vector(sh.coll) ? NPATTERNS : (sh.coll == AMC_COLL_BARRIER) ? 1 : 4;
        for (ri = 0; ri < nroots; ri++) {
            sh.root = roots[ri];
            for (ci = 0; ci < ncounts; ci++) {
                sh.count   = coll_is_vector(sh.coll) ? 0 : counts[ci];
                sh.pattern = coll_is_vector(sh.coll) ? ci : -1;
                for (ip = 0; ip <= coll_has_in_place(sh.coll); ip++) {
                    sh.in_place = ip;
                    for (cm = 1; cm >= (coll_is_reduction(sh.coll) ? 0 : 1); cm--) {
                        /* alg_select.c never runs the ring for an order-sensitive op */
                        if (!cm && (alg->build == amc_alg_allreduce_ring)) {
                            continue;
                        }
                        sh.commutative = coll_is_reduction(sh.coll) ? cm : 0;
                        for (si = 0; si < (pipeline ? 2 : 1); si++) {
                            sh.segment = segments[si];
                            shape_check(&sh);
                        }
                    }
                }
            }
        }
    }
}

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    const amc_alg_t *alg;
    unsigned long    shapes0, scheds0, pairs0;
    double           t0 = now_sec(), t1;
    size_t           i;

    CHECK(amc_alg_count() > 0, "the algorithm table is empty");
    for (i = 0; i < amc_alg_count(); i++) {
        alg     = amc_alg_at(i);
        shapes0 = stat_shapes;
        scheds0 = stat_scheds;
        pairs0  = stat_pairs;
        t1      = now_sec();
        alg_sweep(alg);
        printf("%-22s %-20s %6lu shapes %8lu schedules %9lu pairs  %.2f s\n",
               amc_coll_name(alg->coll), alg->name, stat_shapes - shapes0, stat_scheds - scheds0,
               stat_pairs - pairs0, now_sec() - t1);
    }
    CHECK(amc_alg_at(amc_alg_count()) == NULL, "amc_alg_at past the end");
    CHECK(violations == 0, "%lu violations (the first %d above)", violations, MAX_REPORTS);
    printf("test_sched_check: %zu algorithms, N 1..%d: %lu shapes, %lu schedules checked, "
           "%lu message pairs matched, %lu shapes also run on data (N <= %d); %lu violations; "
           "%.1f s\n", amc_alg_count(), MAX_N, stat_shapes, stat_scheds, stat_pairs,
           stat_data_shapes, DATA_MAX_N, violations, now_sec() - t0);
    return amc_test_summary("test_sched_check");
}
