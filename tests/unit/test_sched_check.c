/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross-rank checks of every schedule the algorithm table builds, without a
 * transport. For each algorithm, communicator size N (1..64), root, count,
 * in-place choice, commutativity and (vector forms) count pattern, the N
 * per-rank schedules are built as am_coll/coll.c builds them and checked
 * together:
 *
 *  - structure: rounds and acts agree with each other (a round's acts are
 *    stored locals, then sends, then receives); acts past the rounds are the
 *    joins the builder adds (AMC_ACT_NOP) and nothing else; message tags
 *    number each rank's messages per peer and direction from 0 and
 *    amc_sched_find_recv finds every receive by its tag; offsets and sizes
 *    are whole elements;
 *  - graph: successor lists lie in the successor array and do not overlap,
 *    no act requires itself, ndeps is the number of acts that list it as a
 *    successor (and the start count sched->ndeps an instance copies), the
 *    roots are exactly the acts with ndeps 0, and the graph
 *    is acyclic (every act is reached from the roots in a topological
 *    sort);
 *  - bounds: every range lies in the buffer its act names, the user buffers
 *    taken at the sizes MPI gives them on that rank (not significant: size
 *    0), the scratch at tmp_bytes, extra buffers (amc_sb_buffer) at their
 *    sizes and a reducing receive's staging range at stage_bytes; nothing
 *    is written into the send buffer (it is const);
 *  - races: the engine runs an act once everything it requires is done, in
 *    any order otherwise. So two acts of a rank that touch overlapping bytes
 *    of one buffer, at least one of them writing, must be ordered by the
 *    graph (one reachable from the other): a receive writes its target from
 *    when it is ready until it is done, a send reads its range from when it
 *    is ready until it is done (a rendezvous send is read when the receiver
 *    pulls), a local act writes its target and reads its source. Reducing
 *    receives write their staging range (a pull lands there first) and must
 *    be ordered when those overlap. Reachability is a bitset per act;
 *  - matching: the k-th send from src to dst pairs with the k-th receive at
 *    dst from src, with equal sizes; no message lacks its other end; peers
 *    lie in [0, N) and no rank messages itself (no algorithm needs to: a
 *    rank's own block is a local copy, and a message to itself is almost
 *    always a peer computed wrongly);
 *  - progress: the executor's rule on the graph (an act is ready once every
 *    act it requires is done) under the strictest transport: locals and
 *    joins are done once ready; a receive is done once it is ready and its
 *    sender posted the send (the send is ready); a send is done only once
 *    the receiver's receive is ready (rendezvous: the receiver pulls, and
 *    only into a ready receive). Run to a fixed point; a rank that cannot
 *    finish is a deadlock, reported with what its ready acts wait for;
 *  - data (N <= 32): the acts run on real buffers of symbolic 64-bit
 *    elements (a mask of the ranks an element combines and its index in the
 *    ranks' input) in a topological order of the ranks' graphs joined by
 *    their messages: a local act runs when it is ready, a send is read when
 *    it is posted, a receive lands when it is done. Twice, in different
 *    orders: the strict transport taking ready acts first in first out,
 *    and an eager one (a send is done once posted, so its successors may
 *    run before the message lands) taking them last in first out, then
 *    once more in a seeded random order for N <= 8. The race check makes
 *    every order give one result; running two or three shows it. A
 *    reduction checks that both operands are data for the same index, that
 *    no rank is counted twice and, for a non-commutative op, that the left
 *    operand covers the ranks just below the right one's. The receive
 *    buffers are then compared cell by cell with MPI's result (untouched
 *    where MPI defines nothing, gaps between blocks included), and the send
 *    buffers with their input.
 *
 * Before the sweep, schedules broken on purpose (a pipeline that forwards a
 * segment without waiting for it, an exchange whose receive requires its own
 * send, a join out of place, a cycle) must each be reported by the check
 * meant to catch them: a checker that cannot fail proves nothing.
 *
 * A violation names the shape (algorithm, N, root, count or pattern,
 * in-place, commutative), the rank and the act.
 */
#include "tests/unit/harness.h"
#include "am_coll/alg/alg.h"
#include "am_coll/sched/sched.h"
#include "am_coll/context/topo.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N       64
#define FULL_ROOTS  17       /* every root up to this N; 0, 1, N/2, N-1 beyond */
#define DATA_MAX_N  32       /* a symbolic element carries a 32-bit rank mask */
#define RANDOM_MAX_N 8       /* a third data run, in a seeded random order */
#define DT_SIZE     8        /* AMC_INT64: one symbolic element per element */
#define SEGMENT     100      /* bcast pipeline: not a whole number of elements */
#define SEGMENT_MIN 5        /* below one element: one element per segment */
/* alltoallv bruck: every block straight but the empty ones, blocks up to 2
 * elements in steps (the patterns' blocks are 0..4 elements, and larger),
 * and the default */
static const size_t bruck_blocks[] = { 0, 16, 256 };
/* None pulled, every block, and blocks of 2 elements or more (count 1's
 * are not; a vector pattern's mixed) */
static const size_t pull_sizes[] = { SIZE_MAX, 1, 2 * DT_SIZE };
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

/* What a violation is about: the self-test expects each broken schedule to
 * be caught by the check meant for it. */
typedef enum {
    KIND_STRUCTURE,   /* rounds, acts, tags, bounds, matching */
    KIND_GRAPH,       /* ndeps, successors, roots, cycles, joins */
    KIND_RACE,
    KIND_DEADLOCK,
    KIND_DATA,
    NKINDS
} kind_t;

static char          shape_name[256];   /* the shape being checked */
static char          run_name[64];      /* the data run: its transport and order */
static unsigned long violations;
static unsigned long kind_count[NKINDS];
static kind_t        cur_kind;          /* the check running now */
static int           quiet;             /* self-test: count, do not print */
static int           shape_failed;      /* later phases need a sound structure */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
    va_list ap;

    shape_failed = 1;
    kind_count[cur_kind]++;
    if (quiet || (++violations > MAX_REPORTS)) {
        return;
    }
    fprintf(stderr, "FAIL %s%s: ", shape_name, run_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const char *act_name(int type)
{
    static const char *names[] = { "SEND", "RECV", "RECV_REDUCE", "RECV_REDUCE_R", "COPY",
                                   "REDUCE", "REDUCE_R", "NOP", "STAMP", "CHECK" };

    return ((type >= 0) && (type <= AMC_ACT_CHECK)) ? names[type] : "?";
}

static const char *buf_name(int buf)
{
    static const char *names[] = { "SEND", "RECV", "TMP", "EXTRA3", "EXTRA4", "EXTRA5",
                                   "EXTRA6", "EXTRA7", "EXTRA8", "EXTRA9" };

    return ((buf >= 0) && (buf < AMC_NBUFS) && (buf < (int)(sizeof(names) / sizeof(names[0]))))
               ? names[buf] : "?";
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

/* A stamp writes its 8 bytes, a check reads them; neither has a source. */
static int act_is_stamp(const amc_sched_act_t *act)
{
    return (act->type == AMC_ACT_STAMP) || (act->type == AMC_ACT_CHECK);
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
    size_t           bruck_block; /* alltoallv bruck: the largest block in its steps */
    size_t           pull_bytes;  /* blocks from this size are pulled (amc_alg_pulled) */
    int              layout;      /* node-aware algorithms: LAYOUT_* (the nodes) */
    /* self-test: breaks rank's schedule after it was built (NULL: none) */
    void           (*mutate)(amc_sched_t *sched, int rank);
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
    unsigned char  *buf[MAX_N][AMC_NBUFS];
    unsigned char  *init[MAX_N][AMC_NBUFS]; /* the buffers before the first data run */
    uint64_t       *recv_init[MAX_N];
    unsigned char **msg[MAX_N];         /* per send act: its data, read when it is posted */
    /* simulation (am_coll/coll/coll_engine.c's rules) */
    uint32_t       *pending[MAX_N];     /* per act: what it still requires */
    uint8_t        *state[MAX_N];       /* per act: SIM_* */
} world_t;

static world_t world;

/* Node layouts for the node-aware algorithms: every k consecutive ranks
 * (the last node short when k does not divide N), ranks dealt round-robin
 * to 3 nodes (no node is a block of ranks), and one node. */
enum { LAYOUT_ONE, LAYOUT_BLOCK2, LAYOUT_BLOCK3, LAYOUT_BLOCK4, LAYOUT_CYCLIC3, NLAYOUTS };

static const char *layout_name[NLAYOUTS] = { "one node", "nodes of 2", "nodes of 3",
                                             "nodes of 4", "round-robin on 3 nodes" };

static int layout_key(void *arg, int r)
{
    int layout = *(const int *)arg;

    switch (layout) {
    case LAYOUT_BLOCK2:  return r / 2;
    case LAYOUT_BLOCK3:  return r / 3;
    case LAYOUT_BLOCK4:  return r / 4;
    case LAYOUT_CYCLIC3: return r % 3;
    default:             return 0;
    }
}

static amc_topo_t *shape_topo;   /* the shape's nodes, NULL for a flat algorithm */

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

    amc_topo_free(shape_topo);
    shape_topo = NULL;
    if ((sh->alg->flags & AMC_ALG_FLAG_NODES) &&
        (amc_topo_create(n, layout_key, (void *)&sh->layout, &shape_topo) != AMC_SUCCESS)) {
        fail("out of memory");
    }
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
        a->bruck_block = sh->bruck_block;
        a->pull_bytes  = sh->pull_bytes;
        a->topo        = shape_topo;
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

/* ---------------------------------------------------------------- ranges */

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
        /* the scratch, or a buffer the algorithm asked for (amc_sb_buffer) */
        return amc_sched_buf_bytes(world.sched[r], buf);
    }
}

static void check_range(int r, uint32_t i, const char *what, int buf, size_t off, size_t bytes)
{
    const amc_sched_act_t *act = &world.sched[r]->acts[i];

    if ((buf >= AMC_NBUFS) || (buf >= (int)world.sched[r]->nbufs)) {
        fail("rank %d act %u (%s, round %u): %s names buffer %d of %u", r, i,
             act_name(act->type), act->round, what, buf, world.sched[r]->nbufs);
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

/* ---------------------------------------------------------------- the graph */

/* Reachability of one rank's graph: row i is the set of acts reachable from
 * act i through successor edges (i itself excluded). */
typedef struct {
    uint32_t  n;
    uint32_t  words;   /* 64-bit words per row */
    uint64_t *bits;
} reach_t;

static int reach_has(const reach_t *g, uint32_t from, uint32_t to)
{
    return (int)((g->bits[(size_t)from * g->words + to / 64] >> (to % 64)) & 1);
}

static int reach_ordered(const reach_t *g, uint32_t a, uint32_t b)
{
    return reach_has(g, a, b) || reach_has(g, b, a);
}

static uint32_t sched_nedges(const amc_sched_t *s)
{
    uint32_t i, e = 0;

    for (i = 0; i < s->nacts; i++) {
        e += s->acts[i].nsucc;
    }
    return e;
}

/* The acts a topological sort reaches from the roots, in that order, in
 * topo[]; returns how many (all of them unless there is a cycle or a root
 * is missing). Successor lists must have been checked to lie in range. */
static uint32_t graph_sort(const amc_sched_t *s, uint32_t *topo, uint32_t *indeg)
{
    const amc_sched_act_t *act;
    uint32_t               i, k, head = 0, len = 0, next;

    for (i = 0; i < s->nacts; i++) {
        indeg[i] = s->acts[i].ndeps;
    }
    for (i = 0; i < s->nroots; i++) {
        if ((s->roots[i] < s->nacts) && (indeg[s->roots[i]] == 0)) {
            indeg[s->roots[i]] = UINT32_MAX; /* queued */
            topo[len++]        = s->roots[i];
        }
    }
    while (head < len) {
        act = &s->acts[topo[head++]];
        for (k = 0; k < act->nsucc; k++) {
            next = s->succ[act->succ + k];
            if ((indeg[next] != UINT32_MAX) && (indeg[next] > 0) && (--indeg[next] == 0)) {
                indeg[next] = UINT32_MAX;
                topo[len++] = next;
            }
        }
    }
    return len;
}

/* ndeps, successor lists, roots and cycles. On success *topo_p is a
 * topological order of all acts (the caller frees it); else NULL. */
static void check_graph(int r, uint32_t **topo_p)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    uint32_t               nedges = sched_nedges(s), i, k, next, sorted, *indeg, *topo;
    uint8_t               *used, *is_root;
    int                    ok = 1;

    *topo_p = NULL;
    cur_kind = KIND_GRAPH;
    indeg   = calloc((size_t)s->nacts + 1, sizeof(*indeg));
    topo    = malloc(((size_t)s->nacts + 1) * sizeof(*topo));
    used    = calloc((size_t)nedges + 1, 1);
    is_root = calloc((size_t)s->nacts + 1, 1);
    if ((indeg == NULL) || (topo == NULL) || (used == NULL) || (is_root == NULL)) {
        fail("out of memory");
        goto out;
    }
    for (i = 0; i < s->nacts; i++) {
        act = &s->acts[i];
        if ((act->succ > nedges) || (act->nsucc > nedges - act->succ)) {
            fail("rank %d act %u (%s): successors [%u, +%u) outside the %u edges", r, i,
                 act_name(act->type), act->succ, act->nsucc, nedges);
            ok = 0;
            continue;
        }
        for (k = 0; k < act->nsucc; k++) {
            if (used[act->succ + k]++) {
                fail("rank %d act %u (%s): successor entry %u shared with another act", r, i,
                     act_name(act->type), act->succ + k);
                ok = 0;
            }
            next = s->succ[act->succ + k];
            if (next >= s->nacts) {
                fail("rank %d act %u (%s): successor %u of %u acts", r, i, act_name(act->type),
                     next, s->nacts);
                ok = 0;
            } else if (next == i) {
                fail("rank %d act %u (%s) requires itself", r, i, act_name(act->type));
                ok = 0;
            } else {
                indeg[next]++;
            }
        }
    }
    if (!ok) {
        goto out;
    }
    for (i = 0; i < s->nacts; i++) {
        act = &s->acts[i];
        if (indeg[i] != act->ndeps) {
            fail("rank %d act %u (%s, round %u): ndeps %u, but %u acts list it as a successor",
                 r, i, act_name(act->type), act->round, act->ndeps, indeg[i]);
            ok = 0;
        }
        if ((s->ndeps == NULL) || (s->ndeps[i] != act->ndeps)) {
            /* the instance's start counts are copied from sched->ndeps */
            fail("rank %d act %u (%s, round %u): ndeps %u, the start count %u", r, i,
                 act_name(act->type), act->round, act->ndeps,
                 (s->ndeps != NULL) ? s->ndeps[i] : 0);
            ok = 0;
        }
        if ((act->type == AMC_ACT_NOP) && ((act->ndeps == 0) || (act->nsucc == 0))) {
            fail("rank %d act %u: a join with %u deps and %u successors joins nothing", r, i,
                 act->ndeps, act->nsucc);
        }
    }
    for (i = 0; i < s->nroots; i++) {
        if ((s->roots[i] >= s->nacts) || is_root[s->roots[i]]++ ||
            (s->acts[s->roots[i]].ndeps != 0)) {
            fail("rank %d: root %u of %u is act %u: out of range, listed twice or with deps", r,
                 i, s->nroots, s->roots[i]);
            ok = 0;
        }
    }
    for (i = 0; i < s->nacts; i++) {
        if ((s->acts[i].ndeps == 0) && !is_root[i]) {
            fail("rank %d act %u (%s, round %u) requires nothing but is not a root", r, i,
                 act_name(s->acts[i].type), s->acts[i].round);
            ok = 0;
        }
    }
    if (!ok) {
        goto out;
    }
    sorted = graph_sort(s, topo, indeg);
    if (sorted != s->nacts) {
        for (i = 0; (i < s->nacts) && (indeg[i] == UINT32_MAX); i++) {
        }
        fail("rank %d: a cycle: %u of %u acts are never ready (act %u, %s, round %u, among "
             "them)", r, s->nacts - sorted, s->nacts, i, act_name(s->acts[i].type),
             s->acts[i].round);
        goto out;
    }
    *topo_p = topo;
    topo    = NULL;
out:
    free(indeg);
    free(topo);
    free(used);
    free(is_root);
}

/* Row i = the union of (successor, its row) over i's successors, rows
 * filled in reverse topological order. O(edges * acts / 64). */
static int reach_build(const amc_sched_t *s, const uint32_t *topo, reach_t *g)
{
    const amc_sched_act_t *act;
    uint64_t              *row, *srow;
    uint32_t               t, k, w, next;

    g->n     = s->nacts;
    g->words = (s->nacts + 63) / 64;
    g->bits  = calloc((size_t)g->n * g->words + 1, sizeof(*g->bits));
    if (g->bits == NULL) {
        return -1;
    }
    for (t = s->nacts; t-- > 0;) {
        act = &s->acts[topo[t]];
        row = &g->bits[(size_t)topo[t] * g->words];
        for (k = 0; k < act->nsucc; k++) {
            next = s->succ[act->succ + k];
            srow = &g->bits[(size_t)next * g->words];
            row[next / 64] |= 1ull << (next % 64);
            for (w = 0; w < g->words; w++) {
                row[w] |= srow[w];
            }
        }
    }
    return 0;
}

/* The rounds' shorthand (sched.h): an act of a round made by amc_sb_round
 * follows every act of the last non-empty round before it; within such a
 * round, each local follows the one before it and the sends and receives
 * follow the last local. A stage (amc_sb_stage) has only the algorithm's
 * edges. Joins may carry these edges; reachability sees through them. */
static void check_round_edges(int r, const reach_t *g)
{
    const amc_sched_t       *s = world.sched[r];
    const amc_sched_round_t *round, *prev = NULL;
    uint32_t                 k, i, j, last;
    int                      reported = 0;

    cur_kind = KIND_GRAPH;
    for (k = 0; (k < s->nrounds) && (reported < 3); k++) {
        round = &s->rounds[k];
        if (round->count == 0) {
            continue;
        }
        for (i = round->first;
             round->implicit && (i < round->first + round->count) && (reported < 3); i++) {
            for (j = prev ? prev->first : 0; prev && (j < prev->first + prev->count); j++) {
                if (!reach_has(g, j, i)) {
                    fail("rank %d round %u: act %u (%s) does not follow act %u (%s) of round "
                         "%u", r, k, i, act_name(s->acts[i].type), j,
                         act_name(s->acts[j].type), s->acts[j].round);
                    reported++;
                    break;
                }
            }
            last = (i < round->first + round->nlocal) ? i : round->first + round->nlocal;
            if ((last > round->first) && !reach_has(g, last - 1, i)) {
                fail("rank %d round %u: act %u (%s) does not follow local act %u", r, k, i,
                     act_name(s->acts[i].type), last - 1);
                reported++;
            }
        }
        prev = round;
    }
}

/* ---------------------------------------------------------------- races */

#define STAGE_BUF AMC_NBUFS   /* reducing receives' staging area, as a buffer */

typedef struct {
    uint32_t act;
    uint8_t  buf;
    uint8_t  write;
    size_t   off;
    size_t   bytes;
} access_t;

static int access_cmp(const void *a_v, const void *b_v)
{
    const access_t *a = a_v, *b = b_v;

    if (a->buf != b->buf) {
        return (a->buf < b->buf) ? -1 : 1;
    }
    if (a->off != b->off) {
        return (a->off < b->off) ? -1 : 1;
    }
    return (a->act < b->act) ? -1 : (a->act > b->act);
}

static void access_describe(int r, const access_t *x, char *out, size_t len)
{
    const amc_sched_act_t *act = &world.sched[r]->acts[x->act];

    if (act_is_msg(act)) {
        snprintf(out, len, "act %u (%s %s %d, round %u) %s %s [%zu, %zu)", x->act,
                 act_name(act->type), (act->type == AMC_ACT_SEND) ? "to" : "from", act->peer,
                 act->round, x->write ? "writes" : "reads",
                 (x->buf == STAGE_BUF) ? "staging" : buf_name(x->buf), x->off, x->off + x->bytes);
    } else {
        snprintf(out, len, "act %u (%s, round %u) %s %s [%zu, %zu)", x->act, act_name(act->type),
                 act->round, x->write ? "writes" : "reads", buf_name(x->buf), x->off,
                 x->off + x->bytes);
    }
}

static unsigned long stat_race_pairs;

/* Every pair of accesses to overlapping bytes of one buffer, one of them a
 * write, by acts the graph does not order. Accesses sorted by start, so
 * each is compared only with those that start inside it. */
static void check_races(int r, const reach_t *g)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    access_t              *acc;
    size_t                 n = 0, i, j;
    uint32_t               k;
    char                   da[160], db[160];
    int                    reported = 0;

    cur_kind = KIND_RACE;
    acc      = malloc(((size_t)s->nacts * 2 + 1) * sizeof(*acc));
    if (acc == NULL) {
        fail("out of memory");
        return;
    }
    for (k = 0; k < s->nacts; k++) {
        act = &s->acts[k];
        if (act->bytes == 0) {
            continue;
        }
        if (act->type == AMC_ACT_SEND) {
            acc[n++] = (access_t){ k, act->buf, 0, act->off, act->bytes };
        } else if (act_is_recv(act)) {
            acc[n++] = (access_t){ k, act->buf, 1, act->off, act->bytes };
            if (act->type != AMC_ACT_RECV) {
                acc[n++] = (access_t){ k, STAGE_BUF, 1, act->off2, act->bytes };
            }
        } else if (act_is_local(act)) {
            acc[n++] = (access_t){ k, act->buf, 1, act->off, act->bytes };
            acc[n++] = (access_t){ k, act->buf2, 0, act->off2, act->bytes };
        } else if (act_is_stamp(act)) {
            acc[n++] = (access_t){ k, act->buf, act->type == AMC_ACT_STAMP, act->off,
                                   act->bytes };
        }
    }
    qsort(acc, n, sizeof(*acc), access_cmp);
    for (i = 0; (i < n) && (reported < 3); i++) {
        for (j = i + 1; (j < n) && (acc[j].buf == acc[i].buf) &&
                        (acc[j].off < acc[i].off + acc[i].bytes); j++) {
            if ((acc[i].act == acc[j].act) || (!acc[i].write && !acc[j].write)) {
                continue;
            }
            stat_race_pairs++;
            if (reach_ordered(g, acc[i].act, acc[j].act)) {
                continue;
            }
            access_describe(r, &acc[i], da, sizeof(da));
            access_describe(r, &acc[j], db, sizeof(db));
            fail("rank %d: race: %s and %s, not ordered by the graph", r, da, db);
            if (++reported >= 3) {
                break;
            }
        }
    }
    free(acc);
}

/* ---------------------------------------------------------------- one schedule */

static void check_sched(const shape_t *sh, int r)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act;
    uint32_t               stag[MAX_N], rtag[MAX_N], k, i, first = 0, nsend, nrecv, nlocal;
    uint32_t               nrecv_all = 0, *topo;
    reach_t                g;
    int                    found, kind, prev_kind;

    cur_kind = KIND_STRUCTURE;
    memset(stag, 0, sizeof(stag));
    memset(rtag, 0, sizeof(rtag));
    for (k = 0; k < s->nrounds; k++) {
        const amc_sched_round_t *round = &s->rounds[k];

        if ((round->first != first) || (round->count > s->nacts - first)) {
            fail("rank %d round %u: acts [%u, +%u) where [%u, ...) was expected (%u acts)", r,
                 k, round->first, round->count, first, s->nacts);
            return;
        }
        first    += round->count;
        nsend     = 0;
        nrecv     = 0;
        nlocal    = 0;
        prev_kind = 0;
        for (i = round->first; i < round->first + round->count; i++) {
            act = &s->acts[i];
            if (act->round != k) {
                fail("rank %d act %u says round %u, lies in round %u", r, i, act->round, k);
            }
            if (act->type == AMC_ACT_NOP) {
                fail("rank %d act %u: a join inside round %u (joins follow the rounds' acts)", r,
                     i, k);
            }
            kind = (act->type == AMC_ACT_SEND) ? 1 : act_is_recv(act) ? 2 : 0;
            if (kind < prev_kind) {
                fail("rank %d round %u: act %u (%s) after a %s (locals, sends, receives is the "
                     "order)", r, k, i, act_name(act->type), (prev_kind == 1) ? "send" :
                     "receive");
            }
            prev_kind = kind;
            nsend    += (kind == 1);
            nrecv    += (kind == 2);
            nlocal   += (kind == 0);
        }
        if ((nsend != round->nsend) || (nrecv != round->nrecv) || (nlocal != round->nlocal)) {
            fail("rank %d round %u counts %u locals, %u sends and %u receives, has %u, %u and %u",
                 r, k, round->nlocal, round->nsend, round->nrecv, nlocal, nsend, nrecv);
        }
    }
    for (i = first; i < s->nacts; i++) {
        act = &s->acts[i];
        if (act->type != AMC_ACT_NOP) {
            fail("rank %d act %u (%s): outside every round (the rounds cover %u of %u acts) and "
                 "not a join", r, i, act_name(act->type), first, s->nacts);
        } else if (act->round >= s->nrounds) {
            fail("rank %d act %u (NOP): round %u of %u", r, i, act->round, s->nrounds);
        }
    }

    for (i = 0; i < s->nacts; i++) {
        act = &s->acts[i];
        if (act->type > AMC_ACT_CHECK) {
            fail("rank %d act %u: unknown type %d", r, i, act->type);
            continue;
        }
        if (act->type == AMC_ACT_NOP) {
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
        } else if (act_is_stamp(act)) {
            if ((act->buf == AMC_BUF_SEND) || (act->bytes != AMC_SCHED_STAMP_BYTES)) {
                fail("rank %d act %u (%s, round %u): %zu bytes of %s", r, i,
                     act_name(act->type), act->round, act->bytes, buf_name(act->buf));
            }
            check_range(r, i, (act->type == AMC_ACT_STAMP) ? "writes" : "reads", act->buf,
                        act->off, act->bytes);
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
    if (shape_failed) {
        return;
    }

    check_graph(r, &topo);
    if (topo == NULL) {
        return;
    }
    if (reach_build(s, topo, &g) != 0) {
        fail("out of memory");
    } else {
        check_round_edges(r, &g);
        check_races(r, &g);
        free(g.bits);
    }
    free(topo);
}

/* ---------------------------------------------------------------- across ranks */

static void check_matching(const shape_t *sh)
{
    const amc_sched_act_t *act, *peer_act;
    amc_sched_t           *s;
    uint32_t               i;
    int                    r, j;

    cur_kind = KIND_STRUCTURE;
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

/* One act on the data: a local runs, a send's range is read (the message),
 * a receive's message lands. */
static void data_exec(const shape_t *sh, int r, uint32_t i)
{
    const amc_sched_act_t *act = &world.sched[r]->acts[i];
    const unsigned char   *data;
    unsigned char         *target;

    if (act->bytes == 0) {
        return;
    }
    switch (act->type) {
    case AMC_ACT_COPY:
        memmove(buf_at(r, act->buf, act->off), buf_at(r, act->buf2, act->off2), act->bytes);
        break;
    case AMC_ACT_REDUCE: /* buf = buf2 (op) buf */
        sym_reduce(sh, r, i, buf_at(r, act->buf2, act->off2), buf_at(r, act->buf, act->off),
                   buf_at(r, act->buf, act->off), act->bytes);
        break;
    case AMC_ACT_REDUCE_R: /* buf = buf (op) buf2 */
        sym_reduce(sh, r, i, buf_at(r, act->buf, act->off), buf_at(r, act->buf2, act->off2),
                   buf_at(r, act->buf, act->off), act->bytes);
        break;
    case AMC_ACT_STAMP:
        memcpy(buf_at(r, act->buf, act->off), &act->off2, AMC_SCHED_STAMP_BYTES);
        break;
    case AMC_ACT_CHECK: {
        uint64_t said;

        memcpy(&said, buf_at(r, act->buf, act->off), sizeof(said));
        if (said != (uint64_t)act->off2) {
            fail("rank %d act %u (CHECK from %d, round %u): the block says %llu, this rank "
                 "expects %llu", r, i, act->peer, act->round, (unsigned long long)said,
                 (unsigned long long)act->off2);
        }
        break;
    }
    case AMC_ACT_SEND:
        if (world.msg[r][i] == NULL) {
            world.msg[r][i] = malloc(act->bytes);
        }
        if (world.msg[r][i] == NULL) {
            fail("out of memory");
            break;
        }
        memcpy(world.msg[r][i], buf_at(r, act->buf, act->off), act->bytes);
        break;
    case AMC_ACT_RECV:
    case AMC_ACT_RECV_REDUCE:
    case AMC_ACT_RECV_REDUCE_R:
        data   = world.msg[act->peer][world.match[r][i]];
        target = buf_at(r, act->buf, act->off);
        if (data == NULL) {
            break; /* reported */
        }
        if (act->type == AMC_ACT_RECV) {
            memcpy(target, data, act->bytes);
        } else if (act->type == AMC_ACT_RECV_REDUCE) { /* message (op) buf */
            sym_reduce(sh, r, i, data, target, target, act->bytes);
        } else {
            sym_reduce(sh, r, i, target, data, target, act->bytes);
        }
        break;
    default:
        break; /* a join */
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
        for (b = 0; b < AMC_NBUFS; b++) {
            bytes[b]     = buf_bytes(r, b);
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
        for (b = AMC_BUF_TMP; b < AMC_NBUFS; b++) {
            cells_fill(w->buf[r][b], 0, bytes[b] / DT_SIZE, 0, 0);
        }
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
        for (b = 0; b < AMC_NBUFS; b++) {
            if (bytes[b] > 0) {
                w->init[r][b] = malloc(bytes[b]);
                if (w->init[r][b] == NULL) {
                    return -1;
                }
                memcpy(w->init[r][b], w->buf[r][b], bytes[b]);
            }
        }
    }
    return 0;
}

/* The buffers as data_setup left them, no message read yet: for the next
 * run. */
static void data_reset(const shape_t *sh)
{
    uint32_t i;
    int      r, b;

    for (r = 0; r < sh->n; r++) {
        for (b = 0; b < AMC_NBUFS; b++) {
            if (world.init[r][b] != NULL) {
                memcpy(world.buf[r][b], world.init[r][b], buf_bytes(r, b));
            }
        }
        for (i = 0; i < world.sched[r]->nacts; i++) {
            free(world.msg[r][i]);
            world.msg[r][i] = NULL;
        }
    }
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
            free(world.init[r][b]);
            world.init[r][b] = NULL;
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

/* Per act of the simulation. */
enum {
    SIM_READY  = 1,  /* everything it requires is done */
    SIM_POSTED = 2,  /* a send: its message is on its way (read, with data) */
    SIM_RUN    = 4,  /* executed: a local ran, a receive landed */
    SIM_DONE   = 8
};

typedef enum {
    PICK_FIFO,
    PICK_LIFO,
    PICK_RANDOM
} pick_t;

/* What the simulation may do next: run an act that is ready (post a send),
 * or complete a send whose receive is ready (strict transport). Which
 * runnable item goes next is the order under test. */
typedef struct {
    int      rank;
    uint32_t act;
    int      send_done;
} item_t;

static struct {
    item_t        *items;    /* a ring of cap */
    size_t         cap, head, len;
    int            strict;   /* sends complete only into ready receives */
    int            data;
    pick_t         pick;
    amc_test_rng_t rng;
} sim;

static unsigned long stat_runs;

static void sim_push(int r, uint32_t i, int send_done)
{
    if (sim.len == sim.cap) {
        fail("simulation queue overflow (an act made runnable twice)");
        return;
    }
    sim.items[(sim.head + sim.len++) % sim.cap] = (item_t){ r, i, send_done };
}

static item_t sim_pop(void)
{
    item_t it;
    size_t k;

    if (sim.pick == PICK_FIFO) {
        it       = sim.items[sim.head];
        sim.head = (sim.head + 1) % sim.cap;
        sim.len--;
        return it;
    }
    if (sim.pick == PICK_RANDOM) {
        /* the chosen one trades places with the last */
        k = (sim.head + amc_test_rng_below(&sim.rng, sim.len)) % sim.cap;
        it = sim.items[k];
        sim.items[k] = sim.items[(sim.head + sim.len - 1) % sim.cap];
        sim.items[(sim.head + sim.len - 1) % sim.cap] = it;
    }
    return sim.items[(sim.head + --sim.len) % sim.cap];
}

static void sim_ready(int r, uint32_t i);

static void sim_done(int r, uint32_t i)
{
    const amc_sched_t     *s   = world.sched[r];
    const amc_sched_act_t *act = &s->acts[i];
    uint32_t               k, next;

    world.state[r][i] |= SIM_DONE;
    for (k = 0; k < act->nsucc; k++) {
        next = s->succ[act->succ + k];
        if (--world.pending[r][next] == 0) {
            sim_ready(r, next);
        }
    }
}

/* A send and its receive meet: the receive may land, and under the strict
 * transport the send completes (the receiver pulls). */
static void sim_meet(int sr, uint32_t si, int rr, uint32_t ri)
{
    sim_push(rr, ri, 0);
    if (sim.strict) {
        sim_push(sr, si, 1);
    }
}

static void sim_ready(int r, uint32_t i)
{
    const amc_sched_act_t *act = &world.sched[r]->acts[i];
    int                    peer;
    uint32_t               other;

    world.state[r][i] |= SIM_READY;
    if (!act_is_recv(act)) {
        sim_push(r, i, 0); /* a local or join runs, a send is posted */
        return;
    }
    peer  = act->peer;
    other = (uint32_t)world.match[r][i];
    if (world.state[peer][other] & SIM_POSTED) {
        sim_meet(peer, other, r, i);
    }
}

static void sim_run(const shape_t *sh, item_t it)
{
    const amc_sched_act_t *act = &world.sched[it.rank]->acts[it.act];
    int                    peer;
    uint32_t               other;

    if (it.send_done) {
        sim_done(it.rank, it.act);
        return;
    }
    if (sim.data) {
        data_exec(sh, it.rank, it.act);
    }
    if (act->type != AMC_ACT_SEND) {
        world.state[it.rank][it.act] |= SIM_RUN;
        sim_done(it.rank, it.act);
        return;
    }
    world.state[it.rank][it.act] |= SIM_POSTED;
    peer  = act->peer;
    other = (uint32_t)world.match[it.rank][it.act];
    if (world.state[peer][other] & SIM_READY) {
        sim_meet(it.rank, it.act, peer, other);
    }
    if (!sim.strict) {
        sim_done(it.rank, it.act); /* eager: done once posted */
    }
}

/* What rank r's acts that are ready but not done wait for. */
static void report_stuck(const shape_t *sh, int r, int stuck)
{
    const amc_sched_t     *s = world.sched[r];
    const amc_sched_act_t *act, *other;
    char                   waits[600];
    size_t                 used = 0;
    uint32_t               i, left = 0, o;
    int                    shown = 0;

    waits[0] = '\0';
    for (i = 0; i < s->nacts; i++) {
        left += !(world.state[r][i] & SIM_DONE);
    }
    for (i = 0; (i < s->nacts) && (used < sizeof(waits) - 1); i++) {
        act = &s->acts[i];
        if (!(world.state[r][i] & SIM_READY) || (world.state[r][i] & SIM_DONE)) {
            continue;
        }
        if (++shown > 4) {
            snprintf(waits + used, sizeof(waits) - used, " ...");
            break;
        }
        o     = (uint32_t)world.match[r][i];
        other = &world.sched[act->peer]->acts[o];
        if (act->type == AMC_ACT_SEND) {
            used += (size_t)snprintf(waits + used, sizeof(waits) - used,
                                     " act %u (SEND to %d, round %u) for rank %d's act %u (%s, "
                                     "round %u) to be ready (%u deps left);", i, act->peer,
                                     act->round, act->peer, o, act_name(other->type),
                                     other->round, world.pending[act->peer][o]);
        } else {
            used += (size_t)snprintf(waits + used, sizeof(waits) - used,
                                     " act %u (%s from %d, round %u) for rank %d's act %u (SEND, "
                                     "round %u) to be posted (%u deps left);", i,
                                     act_name(act->type), act->peer, act->round, act->peer, o,
                                     other->round, world.pending[act->peer][o]);
        }
        if (used >= sizeof(waits)) {
            used = sizeof(waits) - 1; /* truncated */
        }
    }
    fail("deadlock (%d of %d ranks stuck): rank %d has %u of %u acts not done; waiting:%s",
         stuck, sh->n, r, left, s->nacts, waits);
}

/* The ranks' graphs to a fixed point; with data, the acts run on the way.
 * Returns the ranks that could not finish. */
static int simulate(const shape_t *sh, int strict, int data, pick_t pick, uint64_t seed)
{
    size_t   total = 0;
    uint32_t i;
    int      r, stuck = 0;

    for (r = 0; r < sh->n; r++) {
        total += world.sched[r]->nacts;
    }
    sim.cap    = 2 * total + 1;
    sim.items  = malloc(sim.cap * sizeof(*sim.items));
    sim.head   = 0;
    sim.len    = 0;
    sim.strict = strict;
    sim.data   = data;
    sim.pick   = pick;
    amc_test_rng_seed(&sim.rng, seed);
    for (r = 0; r < sh->n; r++) {
        world.pending[r] = malloc((world.sched[r]->nacts + 1) * sizeof(uint32_t));
        world.state[r]   = calloc(world.sched[r]->nacts + 1, 1);
    }
    for (r = 0; r < sh->n; r++) {
        if ((sim.items == NULL) || (world.pending[r] == NULL) || (world.state[r] == NULL)) {
            fail("out of memory");
            goto out;
        }
        for (i = 0; i < world.sched[r]->nacts; i++) {
            world.pending[r][i] = world.sched[r]->acts[i].ndeps;
        }
    }
    stat_runs++;
    cur_kind = KIND_DEADLOCK;
    for (r = 0; r < sh->n; r++) {
        for (i = 0; i < world.sched[r]->nroots; i++) {
            sim_ready(r, world.sched[r]->roots[i]);
        }
    }
    cur_kind = KIND_DATA; /* what a run reports on the way: reductions */
    while ((sim.len > 0) && !(shape_failed && (violations > MAX_REPORTS))) {
        sim_run(sh, sim_pop());
    }
    cur_kind = KIND_DEADLOCK;
    for (r = 0; r < sh->n; r++) {
        for (i = 0; (i < world.sched[r]->nacts) && (world.state[r][i] & SIM_DONE); i++) {
        }
        stuck += (i < world.sched[r]->nacts);
    }
    for (r = 0; (r < sh->n) && (stuck > 0); r++) {
        for (i = 0; (i < world.sched[r]->nacts) && (world.state[r][i] & SIM_DONE); i++) {
        }
        if (i < world.sched[r]->nacts) {
            report_stuck(sh, r, stuck);
        }
    }
    if (data && (stuck == 0)) {
        cur_kind = KIND_DATA;
        data_compare(sh);
    }
out:
    for (r = 0; r < sh->n; r++) {
        free(world.pending[r]);
        free(world.state[r]);
        world.pending[r] = NULL;
        world.state[r]   = NULL;
    }
    free(sim.items);
    sim.items = NULL;
    return stuck;
}

/* ---------------------------------------------------------------- one shape */

static void shape_describe(const shape_t *sh)
{
    char what[64];

    if (sh->alg->build == amc_alg_alltoallv_bruck) {
        snprintf(what, sizeof(what), "pattern=%d bruck_block=%zu", sh->pattern,
                 sh->bruck_block);
    } else if (coll_is_vector(sh->coll)) {
        snprintf(what, sizeof(what), "pattern=%d", sh->pattern);
    } else {
        snprintf(what, sizeof(what), "count=%zu", sh->count);
    }
    snprintf(shape_name, sizeof(shape_name),
             "%s/%s N=%d root=%d %s in_place=%d commutative=%d%s%s%s", amc_coll_name(sh->coll),
             sh->alg->name, sh->n, sh->root, what, sh->in_place, sh->commutative,
             (sh->alg->build == amc_alg_bcast_pipeline) ? ((sh->segment == SEGMENT) ?
                                                           " segment=100" : " segment=5") : "",
             (sh->alg->flags & AMC_ALG_FLAG_NODES) ? " " : "",
             (sh->alg->flags & AMC_ALG_FLAG_NODES) ? layout_name[sh->layout] : "");
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
        cur_kind = KIND_STRUCTURE;
        status   = amc_sb_init(&b);
        if (status == AMC_SUCCESS) {
            /* as am_coll/coll/coll_cache.c does: finish frees all on an error */
            status = sh->alg->build(&b, &world.args[r], r, sh->n);
            if ((status != AMC_SUCCESS) && (b.status == AMC_SUCCESS)) {
                b.status = status;
            }
            status = amc_sb_finish(&b, &world.sched[r]);
        }
        if (status != AMC_SUCCESS) {
            world.sched[r] = NULL;
            fail("rank %d: building the schedule failed (%d)", r, status);
            break;
        }
        if (sh->mutate != NULL) {
            sh->mutate(world.sched[r], r);
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
                snprintf(run_name, sizeof(run_name), " [strict transport, FIFO]");
                if ((simulate(sh, 1, 1, PICK_FIFO, 0) == 0) && !shape_failed) {
                    snprintf(run_name, sizeof(run_name), " [eager transport, LIFO]");
                    data_reset(sh);
                    simulate(sh, 0, 1, PICK_LIFO, 0);
                }
                if ((sh->n <= RANDOM_MAX_N) && !shape_failed) {
                    snprintf(run_name, sizeof(run_name), " [eager transport, random %lu]",
                             stat_shapes);
                    data_reset(sh);
                    simulate(sh, 0, 1, PICK_RANDOM, stat_shapes);
                }
                run_name[0] = '\0';
            }
            data_free(sh);
        } else {
            simulate(sh, 1, 0, PICK_FIFO, 0);
        }
    }
    for (r = 0; r < sh->n; r++) {
        amc_sched_free(world.sched[r]);
        free(world.match[r]);
        world.sched[r] = NULL;
        world.match[r] = NULL;
    }
}

/* ---------------------------------------------------------------- self-test */

/* The pipelined bcast without its requires edge: an inner rank may forward
 * segment j before segment j landed (a send reads what a receive of the same
 * stage writes). */
static int broken_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size, seg = a->dt_size, j;
    int    vr = amc_alg_rel(rank, a->root, size), mask = 1, m;

    while ((mask < size) && !(vr & mask)) {
        mask <<= 1;
    }
    amc_sb_stage(b);
    for (j = 0; j * seg < bytes; j++) {
        if (vr != 0) {
            amc_sb_recv(b, amc_alg_abs(vr - mask, a->root, size), AMC_BUF_RECV, j * seg, seg);
        }
        for (m = mask >> 1; m > 0; m >>= 1) {
            if (vr + m < size) {
                amc_sb_send(b, amc_alg_abs(vr + m, a->root, size), AMC_BUF_RECV, j * seg, seg);
            }
        }
    }
    return AMC_SUCCESS;
}

/* A two-rank allreduce by exchange: each rank sends its value and receives
 * the partner's into scratch, then reduces. edge: the receive requires the
 * rank's own send (deadlocks once sends complete only into ready receives);
 * flip: the operands the wrong way round (wrong for an order-sensitive op). */
static int exchange(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int edge,
                    int flip)
{
    size_t bytes = a->count * a->dt_size;
    int    send, peer = rank ^ 1;

    amc_sb_tmp(b, bytes);
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
    amc_sb_round(b);
    amc_sb_send(b, peer, AMC_BUF_RECV, 0, bytes);
    send = amc_sb_last(b);
    amc_sb_recv(b, peer, AMC_BUF_TMP, 0, bytes);
    if (edge) {
        amc_sb_requires(b, amc_sb_last(b), send);
    }
    amc_sb_round(b);
    amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, bytes, (peer > rank) != flip);
    return AMC_SUCCESS;
}

static int good_exchange(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    (void)size;
    return exchange(b, a, rank, 0, 0);
}

static int exchange_own_send(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    (void)size;
    return exchange(b, a, rank, 1, 0);
}

static int exchange_flipped(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size)
{
    (void)size;
    return exchange(b, a, rank, 0, 1);
}

/* Rank 0's join becomes a copy of nothing: an act outside the rounds that
 * is not a join. */
static void mutate_join(amc_sched_t *s, int rank)
{
    uint32_t i;

    for (i = 0; (rank == 0) && (i < s->nacts); i++) {
        if (s->acts[i].type == AMC_ACT_NOP) {
            s->acts[i].type = AMC_ACT_COPY;
            return;
        }
    }
}

/* In rank 0's graph, an edge b -> c becomes b -> a where a -> b and a
 * requires something itself; the dependency counts are kept right, so only
 * the cycle a -> b -> a is wrong. */
static void mutate_cycle(amc_sched_t *s, int rank)
{
    uint32_t a, k, bi, c;

    for (a = 0; (rank == 0) && (a < s->nacts); a++) {
        if (s->acts[a].ndeps == 0) {
            continue;
        }
        for (k = 0; k < s->acts[a].nsucc; k++) {
            bi = s->succ[s->acts[a].succ + k];
            if (s->acts[bi].nsucc > 0) {
                c = s->succ[s->acts[bi].succ];
                s->succ[s->acts[bi].succ] = a;
                s->ndeps[c] = --s->acts[c].ndeps;
                s->ndeps[a] = ++s->acts[a].ndeps;
                if (s->acts[c].ndeps == 0) {
                    s->roots[s->nroots++] = c; /* roots has room for every act */
                }
                return;
            }
        }
    }
}

/* Rank 0's last edge is dropped (the end of the successor array: counts
 * and roots kept right, no hole left): a round's shorthand edge missing. */
static void mutate_drop_edge(amc_sched_t *s, int rank)
{
    uint32_t a, c;

    for (a = s->nacts; (rank == 0) && (a-- > 0);) {
        if (s->acts[a].nsucc > 0) {
            c = s->succ[s->acts[a].succ + --s->acts[a].nsucc];
            s->ndeps[c] = --s->acts[c].ndeps;
            if (s->acts[c].ndeps == 0) {
                s->roots[s->nroots++] = c;
            }
            return;
        }
    }
}

/* Each broken schedule must be caught by the check meant for it, and the
 * sound exchange by none. */
static void selftest(void)
{
    static const amc_alg_t algs[] = {
        { AMC_COLL_BCAST, 200, "broken_pipeline", broken_pipeline, 0 },
        { AMC_COLL_ALLREDUCE, 201, "exchange", good_exchange, 0 },
        { AMC_COLL_ALLREDUCE, 202, "exchange_own_send", exchange_own_send, 0 },
        { AMC_COLL_ALLREDUCE, 203, "exchange_flipped", exchange_flipped, 0 },
    };
    static const struct {
        const char *what;
        int         alg;        /* algs[] index, or -1: the table's, by collective */
        int         coll;
        const char *name;
        int         n;
        int         commutative;
        void      (*mutate)(amc_sched_t *, int);
        int         kind;       /* the check that must fail, or -1: none */
    } cases[] = {
        { "forward before the segment landed", 0, 0, NULL, 4, 1, NULL, KIND_RACE },
        { "sound exchange", 1, 0, NULL, 2, 0, NULL, -1 },
        { "receive requires its own send", 2, 0, NULL, 2, 1, NULL, KIND_DEADLOCK },
        { "operands the wrong way round", 3, 0, NULL, 2, 0, NULL, KIND_DATA },
        { "a copy among the joins", -1, AMC_COLL_ALLGATHER, "ring", 6, 1, mutate_join,
          KIND_STRUCTURE },
        { "a cycle", -1, AMC_COLL_ALLGATHER, "ring", 6, 1, mutate_cycle, KIND_GRAPH },
        { "a round's edge dropped", -1, AMC_COLL_ALLGATHER, "ring", 6, 1, mutate_drop_edge,
          KIND_GRAPH },
    };
    const amc_alg_t *alg;
    shape_t          sh;
    unsigned long    before[NKINDS];
    size_t           i, k;
    int              kind, others;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        alg = (cases[i].alg >= 0) ? &algs[cases[i].alg] :
                                    amc_alg_find(cases[i].coll, cases[i].name);
        CHECK(alg != NULL, "self-test %zu: no algorithm", i);
        if (alg == NULL) {
            continue;
        }
        memset(&sh, 0, sizeof(sh));
        sh.alg         = alg;
        sh.coll        = alg->coll;
        sh.n           = cases[i].n;
        sh.root        = coll_is_rooted(sh.coll) ? 0 : -1;
        sh.count       = 5;
        sh.commutative = coll_is_reduction(sh.coll) ? cases[i].commutative : 0;
        sh.segment     = SEGMENT;
        sh.mutate      = cases[i].mutate;
        memcpy(before, kind_count, sizeof(before));
        violations = 0;
        /* SCHED_CHECK_SELFTEST_SHOW=1 prints what the self-test catches */
        quiet = (getenv("SCHED_CHECK_SELFTEST_SHOW") == NULL);
        shape_check(&sh);
        quiet = 0;
        kind  = cases[i].kind;
        for (others = 0, k = 0; k < NKINDS; k++) {
            if ((int)k != kind) {
                others += (kind_count[k] != before[k]);
            }
        }
        if (kind < 0) {
            CHECK(others == 0, "self-test \"%s\": violations reported for a sound schedule",
                  cases[i].what);
        } else {
            CHECK(kind_count[kind] > before[kind], "self-test \"%s\": not caught",
                  cases[i].what);
        }
        printf("self-test: %-36s %s\n", cases[i].what,
               (kind < 0) ? ((others == 0) ? "passes" : "FAILS") :
               (kind_count[kind] > before[kind]) ? "caught" : "NOT CAUGHT");
    }
    memset(kind_count, 0, sizeof(kind_count));
    violations = 0;
    stat_shapes = stat_scheds = stat_pairs = stat_data_shapes = stat_race_pairs = 0;
    stat_runs = 0;
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

/* Every shape of alg at sh->n ranks (and sh->layout). */
static void alg_sweep_n(shape_t *sh)
{
    const amc_alg_t *alg = sh->alg;
    int              roots[MAX_N], nroots, ri, ci, ncounts, ip, cm, si;
    size_t           counts[4];
    size_t           segments[2] = { SEGMENT, SEGMENT_MIN };
    int              pipeline = (alg->build == amc_alg_bcast_pipeline);
    int              vbruck   = (alg->build == amc_alg_alltoallv_bruck);
    /* a receiver's own work after the pulls, or before */
    int              pulls    = (alg->build == amc_alg_gather_linear) ||
                                (alg->build == amc_alg_gatherv_linear) ||
                                (alg->build == amc_alg_gather_binomial) ||
                                (alg->build == amc_alg_reduce_linear) ||
                                (alg->build == amc_alg_scan_linear) ||
                                (alg->build == amc_alg_scan_doubling);
    int              bi, pi;

    nroots = roots_of(sh->coll, sh->n, roots);
    /* none, one, one that no N > 1 divides, and one the pipeline cuts
     * into several segments (and uneven ring chunks) */
    counts[0] = 0;
    counts[1] = 1;
    counts[2] = (size_t)sh->n + 1;
    counts[3] = 3 * (size_t)sh->n + 29;
    ncounts   = coll_is_vector(sh->coll) ? NPATTERNS : (sh->coll == AMC_COLL_BARRIER) ? 1 : 4;
    for (ri = 0; ri < nroots; ri++) {
        sh->root = roots[ri];
        for (ci = 0; ci < ncounts; ci++) {
            sh->count   = coll_is_vector(sh->coll) ? 0 : counts[ci];
            sh->pattern = coll_is_vector(sh->coll) ? ci : -1;
            for (ip = 0; ip <= coll_has_in_place(sh->coll); ip++) {
                sh->in_place = ip;
                for (cm = 1; cm >= (coll_is_reduction(sh->coll) ? 0 : 1); cm--) {
                    /* alg_select.c never runs the ring or the node-aware
                     * ones for an order-sensitive op */
                    if (!cm && (alg->flags & AMC_ALG_FLAG_COMMUTATIVE)) {
                        continue;
                    }
                    sh->commutative = coll_is_reduction(sh->coll) ? cm : 0;
                    for (si = 0; si < (pipeline ? 2 : 1); si++) {
                        sh->segment = segments[si];
                        for (bi = 0; bi < (vbruck ? 3 : 1); bi++) {
                            sh->bruck_block = bruck_blocks[vbruck ? bi : 2];
                            for (pi = 0; pi < (pulls ? 3 : 1); pi++) {
                                sh->pull_bytes = pull_sizes[pi];
                                shape_check(sh);
                            }
                        }
                    }
                }
            }
        }
    }
}

/* AMCTEST_QUICK=1 (the sanitizer pass): N 1..24 and the sizes around 32
 * and 64, where the folds, the data runs' limit and MAX_N sit. */
static int sweep_n(int n)
{
    return !amc_test_quick() || (n <= 24) || (n == 31) || (n == 32) || (n == 33) || (n == 63) ||
           (n == 64);
}

static void alg_sweep(const amc_alg_t *alg)
{
    shape_t sh;
    int     li;

    memset(&sh, 0, sizeof(sh));
    sh.alg  = alg;
    sh.coll = alg->coll;
    for (sh.n = 1; sh.n <= MAX_N; sh.n++) {
        if (!sweep_n(sh.n)) {
            continue;
        }
        if (!(alg->flags & AMC_ALG_FLAG_NODES)) {
            alg_sweep_n(&sh);
            continue;
        }
        /* node-aware: every layout up to FULL_ROOTS ranks, beyond that
         * nodes of 4 and round-robin */
        for (li = 0; li < NLAYOUTS; li++) {
            if ((sh.n <= FULL_ROOTS) || (li == LAYOUT_BLOCK4) || (li == LAYOUT_CYCLIC3)) {
                sh.layout = li;
                alg_sweep_n(&sh);
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
    selftest();
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
    amc_topo_free(shape_topo);
    shape_topo = NULL;
    CHECK(amc_alg_at(amc_alg_count()) == NULL, "amc_alg_at past the end");
    CHECK(violations == 0, "%lu violations (the first %d above)", violations, MAX_REPORTS);
    printf("test_sched_check: %zu algorithms, N 1..%d: %lu shapes, %lu schedules checked, "
           "%lu message pairs matched, %lu conflicting access pairs found ordered, %lu "
           "simulations (%lu shapes run on data, N <= %d); %lu violations; %.1f s\n",
           amc_alg_count(), MAX_N, stat_shapes, stat_scheds, stat_pairs, stat_race_pairs,
           stat_runs, stat_data_shapes, DATA_MAX_N, violations, now_sec() - t0);
    return amc_test_summary("test_sched_check");
}
