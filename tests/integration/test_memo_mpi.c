/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A blocking call that repeats its communicator's last one on the
 * barrier's rounds runs without its checks (am_coll/api/api_memo.h), with
 * real UCX, started by mpirun:
 *
 *   test_memo_mpi memo [SHARED_FILE]
 *
 *   - loops of each of the ten collectives that may be kept (allreduce,
 *     bcast, reduce, gather, scatter, allgather, alltoall,
 *     reduce_scatter_block, scan, exscan), 2 int32 a rank, the same
 *     buffers and new values every call: every result right, and at N=2
 *     (where all ten run on the rounds) the counter "api_memo" grows by all
 *     but the first two calls of each loop;
 *   - loops of the five vector forms (gatherv, scatterv, allgatherv,
 *     alltoallv, reduce_scatter), the same buffers and arrays: results
 *     right, at N=2 all but the first two calls from the memo; then every
 *     third call rewrites the arrays in place (the same pointers): the
 *     displacements reversed, the counts changed, counts past what the
 *     rounds carry, or one count or displacement that overflows (the first
 *     or the second rank's; alltoallv's on its send side): every result the
 *     call's own, AMC_ERR_ARG where a rank reads the bad entry; and other
 *     arrays with the same values while the first ones hold garbage;
 *   - the same buffers with what the memo compares changed call by call:
 *     AMC_IN_PLACE or not, the count (1..3: the elements past it untouched),
 *     the datatype (FLOAT or INT32 over the same bytes), the op (SUM or
 *     MAX), bcast's root: every result the call's own;
 *   - an op that does not apply to the datatype, after the memo holds that
 *     call with SUM: AMC_ERR_ARG on every rank, the next call right;
 *   - a freed communicator's handle after its memo was used: AMC_ERR_COMM;
 *     after amc_finalize: AMC_ERR_NOT_INITIALIZED.
 *
 * Prints "ok memo N" from rank 0 when every rank passed.
 */
#include "amcoll.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TM_ITERS 20
#define TM_COUNT 2
#define TM_MAXN  64

static int g_rank, g_size, g_fail;

static void tm_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "FAIL memo rank %d: ", g_rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    g_fail++;
}

#define TM_CHECK(_cond, ...) do { if (!(_cond)) tm_fail(__VA_ARGS__); } while (0)

static void tm_must(int rc, const char *what)
{
    if (rc != AMC_SUCCESS) {
        fprintf(stderr, "FAIL memo rank %d: %s: %s\n", g_rank, what, amc_strerror(rc));
        exit(1);
    }
}

static unsigned long long tm_memo(void)
{
    unsigned long long v = 0;

    tm_must(amc_stat_get("api_memo", &v), "api_memo");
    return v;
}

/* rank r's element k of call i; a block for rank d (alltoall, scatter,
 * reduce_scatter_block) adds 10 * d */
static int32_t tm_val(int r, int i, int k)
{
    return 1000 * (r + 1) + 7 * i + k;
}

/* the sum of tm_val over ranks lo .. hi-1 */
static int32_t tm_sum(int lo, int hi, int i, int k)
{
    int32_t s = 0;
    int     r;

    for (r = lo; r < hi; r++) {
        s += tm_val(r, i, k);
    }
    return s;
}

enum { TM_ALLREDUCE, TM_BCAST, TM_REDUCE, TM_GATHER, TM_SCATTER, TM_ALLGATHER, TM_ALLTOALL,
       TM_RSB, TM_SCAN, TM_EXSCAN, TM_NCOLLS };

static const char *const tm_names[TM_NCOLLS] = {
    "allreduce", "bcast", "reduce", "gather", "scatter", "allgather", "alltoall",
    "reduce_scatter_block", "scan", "exscan"
};

/* One loop of coll on comm: the same buffers, new values each call. */
static void tm_loop(amc_comm_t comm, int coll)
{
    static int32_t in[TM_MAXN * TM_COUNT], out[TM_MAXN * TM_COUNT];
    const int      root = g_size - 1, n = g_size, me = g_rank, c = TM_COUNT;
    int            i, k, d, rc = AMC_SUCCESS, bad = 0;
    int32_t        want;

    for (i = 0; i < TM_ITERS; i++) {
        for (d = 0; d < n; d++) {
            for (k = 0; k < c; k++) {
                in[d * c + k] = tm_val(me, i, k) + 10 * d;
            }
        }
        memset(out, 0x5a, sizeof(out));
        switch (coll) {
        case TM_ALLREDUCE:
            rc = amc_allreduce(in, out, c, AMC_INT32, AMC_SUM, comm);
            break;
        case TM_BCAST:
            memcpy(out, in, sizeof(int32_t) * c);
            rc = amc_bcast(out, c, AMC_INT32, root, comm);
            break;
        case TM_REDUCE:
            rc = amc_reduce(in, out, c, AMC_INT32, AMC_SUM, root, comm);
            break;
        case TM_GATHER:
            rc = amc_gather(in, out, c, AMC_INT32, root, comm);
            break;
        case TM_SCATTER:
            rc = amc_scatter(in, out, c, AMC_INT32, root, comm);
            break;
        case TM_ALLGATHER:
            rc = amc_allgather(in, out, c, AMC_INT32, comm);
            break;
        case TM_ALLTOALL:
            rc = amc_alltoall(in, out, c, AMC_INT32, comm);
            break;
        case TM_RSB:
            rc = amc_reduce_scatter_block(in, out, c, AMC_INT32, AMC_SUM, comm);
            break;
        case TM_SCAN:
            rc = amc_scan(in, out, c, AMC_INT32, AMC_SUM, comm);
            break;
        default:
            rc = amc_exscan(in, out, c, AMC_INT32, AMC_SUM, comm);
            break;
        }
        if (rc != AMC_SUCCESS) {
            tm_fail("%s call %d: %s", tm_names[coll], i, amc_strerror(rc));
            return;
        }
        for (d = 0; d < n; d++) {
            for (k = 0; k < c; k++) {
                int32_t got = out[d * c + k];

                switch (coll) {
                case TM_ALLREDUCE: want = (d == 0) ? tm_sum(0, n, i, k) : 0x5a5a5a5a; break;
                case TM_BCAST:     want = (d == 0) ? tm_val(root, i, k) : 0x5a5a5a5a; break;
                case TM_REDUCE:
                    want = ((d == 0) && (me == root)) ? tm_sum(0, n, i, k) : 0x5a5a5a5a;
                    if ((d == 0) && (me != root)) {
                        continue; /* not significant */
                    }
                    break;
                case TM_GATHER:
                    if (me != root) {
                        continue;
                    }
                    want = tm_val(d, i, k);
                    break;
                case TM_SCATTER:   want = (d == 0) ? tm_val(root, i, k) + 10 * me : 0x5a5a5a5a; break;
                case TM_ALLGATHER: want = tm_val(d, i, k); break;
                case TM_ALLTOALL:  want = tm_val(d, i, k) + 10 * me; break;
                case TM_RSB:
                    want = (d == 0) ? tm_sum(0, n, i, k) + 10 * me * n : 0x5a5a5a5a;
                    break;
                case TM_SCAN:      want = (d == 0) ? tm_sum(0, me + 1, i, k) : 0x5a5a5a5a; break;
                default:
                    if ((d == 0) && (me == 0)) {
                        continue; /* rank 0's result is undefined */
                    }
                    want = (d == 0) ? tm_sum(0, me, i, k) : 0x5a5a5a5a;
                    break;
                }
                if ((got != want) && (bad++ < 3)) {
                    tm_fail("%s call %d: element %d is %d, expected %d", tm_names[coll], i,
                            d * c + k, (int)got, (int)want);
                }
            }
        }
    }
}

enum { TM_GATHERV, TM_SCATTERV, TM_ALLGATHERV, TM_ALLTOALLV, TM_RSV, TM_NVCOLLS };

static const char *const tm_vnames[TM_NVCOLLS] = {
    "gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter"
};

#define TM_SLOT 320 /* elements a rank's block may take */
#define TM_BIG  300 /* 1,200 bytes: past what the rounds carry (1 KiB) */

/* Call i's layout: 2 elements a rank at d * TM_SLOT; with change 1 the
 * displacements reversed, with change 2 the counts 1 + d % 2 * 2 (alltoallv:
 * 1 for every pair, as its two sides must agree), with change 3 TM_BIG
 * each (such a call runs on the engine, not on the rounds). */
static void tm_vlayout(int coll, int change, size_t *counts, size_t *displs)
{
    int d;

    for (d = 0; d < g_size; d++) {
        counts[d] = (change == 3) ? TM_BIG : (change != 2) ? 2
                    : (coll == TM_ALLTOALLV) ? 1 : (size_t)(1 + d % 2 * 2);
        displs[d] = (size_t)((change == 1) ? g_size - 1 - d : d) * TM_SLOT;
    }
}

/* One loop of a vector form on comm, the same buffers and arrays, the
 * arrays rewritten in place every third call where changes. */
static void tm_vloop(amc_comm_t comm, int coll, int changes)
{
    static int32_t in[TM_MAXN * TM_SLOT], out[TM_MAXN * TM_SLOT];
    static size_t  counts[TM_MAXN], displs[TM_MAXN], scounts[TM_MAXN], sdispls[TM_MAXN];
    static size_t  counts2[TM_MAXN], displs2[TM_MAXN];
    size_t        *c_at, *d_at;
    const int      root = g_size - 1, n = g_size, me = g_rank;
    int            i, k, d, rc, change, bad = 0, bad_entry = -1;
    size_t         off, *bad_in = NULL;
    int32_t        want;

    for (i = 0; i < (changes ? 24 : TM_ITERS); i++) {
        change = (changes && (i % 3 == 2)) ? 1 + (i / 3) % 8 : 0;
        tm_vlayout(coll, (change > 3) ? 0 : change, counts, displs);
        memcpy(scounts, counts, sizeof(counts)); /* alltoallv's send side */
        memcpy(sdispls, displs, sizeof(displs));
        memset(out, 0x5a, sizeof(out));
        memset(in, 0x33, sizeof(in));
        for (d = 0; d < n; d++) {
            for (k = 0; k < (int)counts[d]; k++) {
                switch (coll) {
                case TM_SCATTERV:
                case TM_ALLTOALLV: in[displs[d] + k] = tm_val(me, i, k) + 10 * d; break;
                default:           in[d * TM_SLOT + k] = tm_val(me, i, d * TM_SLOT + k); break;
                }
            }
        }
        for (k = 0; k < (int)counts[me]; k++) {
            if ((coll == TM_GATHERV) || (coll == TM_ALLGATHERV)) {
                in[k] = tm_val(me, i, k); /* the block it sends */
            }
        }
        for (off = 0, d = 0; d < me; d++) {
            off += counts[d]; /* reduce_scatter: where this rank's block starts */
        }
        if (coll == TM_RSV) {
            for (d = 0, k = 0; d < n; d++) { /* the whole vector, packed */
                int j;

                for (j = 0; j < (int)counts[d]; j++, k++) {
                    in[k] = tm_val(me, i, k);
                }
            }
        }
        c_at = counts;
        d_at = displs;
        if (change == 8) {
            /* the same values in other arrays, the first ones garbage */
            memcpy(counts2, counts, sizeof(counts));
            memcpy(displs2, displs, sizeof(displs));
            memset(counts, 0xff, sizeof(counts));
            memset(displs, 0xff, sizeof(displs));
            c_at = counts2;
            d_at = displs2;
            memcpy(scounts, counts2, sizeof(counts));
            memcpy(sdispls, displs2, sizeof(displs));
        } else if (change > 3) {
            /* 4, 5: a count of the first or second rank; 6, 7: a
             * displacement (reduce_scatter has none: its count again);
             * alltoallv's on its send side */
            bad_in    = ((change < 6) || (coll == TM_RSV)) ? counts : displs;
            if (coll == TM_ALLTOALLV) {
                bad_in = (bad_in == counts) ? scounts : sdispls;
            }
            bad_entry = (change % 2 == 0) ? 0 : 1;
            bad_in[bad_entry] = SIZE_MAX / 2;
        }
        switch (coll) {
        case TM_GATHERV:
            rc = amc_gatherv(in, c_at[me], out, c_at, d_at, AMC_INT32, root, comm);
            break;
        case TM_SCATTERV:
            rc = amc_scatterv(in, c_at, d_at, out, c_at[me], AMC_INT32, root, comm);
            break;
        case TM_ALLGATHERV:
            rc = amc_allgatherv(in, c_at[me], out, c_at, d_at, AMC_INT32, comm);
            break;
        case TM_ALLTOALLV:
            rc = amc_alltoallv(in, scounts, sdispls, out, c_at, d_at, AMC_INT32, comm);
            break;
        default:
            rc = amc_reduce_scatter(in, out, c_at, AMC_INT32, AMC_SUM, comm);
            break;
        }
        if ((change > 3) && (change < 8)) {
            /* the ranks that read the entry fail; a rooted one's other rank
             * may have ended before it hears of that */
            int reads = ((coll != TM_GATHERV) && (coll != TM_SCATTERV)) || (me == root) ||
                        ((bad_entry == me) && (bad_in == counts));

            TM_CHECK((rc == AMC_ERR_ARG) || (!reads && (rc == AMC_SUCCESS)), "%s call %d "
                     "(change %d: an entry of SIZE_MAX / 2): %s, expected AMC_ERR_ARG%s",
                     tm_vnames[coll], i, change, amc_strerror(rc), reads ? "" : " or success");
            continue;
        }
        if (rc != AMC_SUCCESS) {
            tm_fail("%s call %d (change %d): %s", tm_vnames[coll], i, change, amc_strerror(rc));
            return;
        }
        for (d = 0; d < n; d++) {
            for (k = 0; k < (int)c_at[d]; k++) {
                int32_t got;

                switch (coll) {
                case TM_GATHERV:
                    if (me != root) {
                        continue;
                    }
                    got  = out[d_at[d] + k];
                    want = tm_val(d, i, k);
                    break;
                case TM_SCATTERV:
                    if (d != me) {
                        continue;
                    }
                    got  = out[k];
                    want = tm_val(root, i, k) + 10 * me;
                    break;
                case TM_ALLGATHERV:
                    got  = out[d_at[d] + k];
                    want = tm_val(d, i, k);
                    break;
                case TM_ALLTOALLV:
                    got  = out[d_at[d] + k];
                    want = tm_val(d, i, k) + 10 * me;
                    break;
                default:
                    if (d != me) {
                        continue;
                    }
                    got  = out[k];
                    want = tm_sum(0, n, i, (int)off + k);
                    break;
                }
                if ((got != want) && (bad++ < 3)) {
                    tm_fail("%s call %d (change %d): rank %d's element %d is %d, expected %d",
                            tm_vnames[coll], i, change, d, k, (int)got, (int)want);
                }
            }
        }
    }
}

/* The same buffers, one of the memo's fields changed every third call: the
 * two calls before it keep the memo (the second finds the choice the first
 * made), so the changed one meets a memo that is not its call. */
static void tm_changes(amc_comm_t comm)
{
    static int32_t buf[8], res[8], other[4];
    static float   fin[4], fres[4];
    int            i, k, r, count, v, in_place;
    int32_t        want, *into;

    for (i = 0; i < 12; i++) {
        /* in place into the same result buffer (the send buffer then
         * holds what must not be read), or into another */
        v        = (i % 3 == 2); /* the changed call */
        in_place = v && ((i / 3) % 2 == 0);
        into     = (v && !in_place) ? other : res;

        for (k = 0; k < 4; k++) {
            buf[k]   = in_place ? -1000 : tm_val(g_rank, i, k);
            res[k]   = in_place ? tm_val(g_rank, i, k) : -1;
            other[k] = -1;
        }
        tm_must(amc_allreduce(in_place ? AMC_IN_PLACE : buf, into, 2, AMC_INT32, AMC_SUM, comm),
                "allreduce in place or not");
        for (k = 0; k < 2; k++) {
            TM_CHECK(into[k] == tm_sum(0, g_size, i, k), "%s, call %d: element %d is %d, "
                     "expected %d", in_place ? "in place" : (into == other) ? "another result "
                     "buffer" : "not in place", i, k, (int)into[k], (int)tm_sum(0, g_size, i, k));
        }
    }
    for (i = 0; i < 12; i++) {
        /* the count: what lies past it stays */
        count = (i % 3 == 2) ? 1 + i % 2 * 2 : 2;
        for (k = 0; k < 8; k++) {
            buf[k] = tm_val(g_rank, i, k);
            res[k] = -7;
        }
        tm_must(amc_allreduce(buf, res, (size_t)count, AMC_INT32, AMC_SUM, comm), "count");
        for (k = 0; k < 8; k++) {
            want = (k < count) ? tm_sum(0, g_size, i, k) : -7;
            TM_CHECK(res[k] == want, "count %d, call %d: element %d is %d, expected %d", count, i,
                     k, (int)res[k], (int)want);
        }
    }
    for (i = 0; i < 12; i++) {
        /* the datatype over the same bytes: float sums, or int32 sums of
         * their bits */
        v = (i % 3 == 2);
        for (k = 0; k < 2; k++) {
            fin[k] = (float)(g_rank + 1 + k) * 0x1p-100f; /* sums exact in any order */
        }
        tm_must(amc_allreduce(fin, fres, 2, v ? AMC_INT32 : AMC_FLOAT, AMC_SUM, comm),
                "datatype");
        for (k = 0; k < 2; k++) {
            float   fw = 0.0f, one;
            int32_t iw = 0, bits;

            for (r = 0; r < g_size; r++) {
                one = (float)(r + 1 + k) * 0x1p-100f;
                fw += one;
                memcpy(&bits, &one, sizeof(bits));
                iw += bits;
            }
            memcpy(&bits, &fres[k], sizeof(bits));
            if (v) {
                TM_CHECK(bits == iw, "INT32 over floats, call %d: element %d is %d, expected %d",
                         i, k, (int)bits, (int)iw);
            } else {
                TM_CHECK(fres[k] == fw, "FLOAT, call %d: element %d is %g, expected %g", i, k,
                         (double)fres[k], (double)fw);
            }
        }
    }
    for (i = 0; i < 12; i++) {
        /* the op */
        v = (i % 3 == 2);
        for (k = 0; k < 2; k++) {
            buf[k] = tm_val(g_rank, i, k);
        }
        tm_must(amc_allreduce(buf, res, 2, AMC_INT32, v ? AMC_MAX : AMC_SUM, comm), "op");
        for (k = 0; k < 2; k++) {
            want = v ? tm_val(g_size - 1, i, k) : tm_sum(0, g_size, i, k);
            TM_CHECK(res[k] == want, "%s, call %d: element %d is %d, expected %d",
                     v ? "MAX" : "SUM", i, k, (int)res[k], (int)want);
        }
    }
    for (i = 0; i < 12; i++) {
        /* bcast's root */
        r = (i % 3 == 2) ? (i / 3) % g_size : g_size - 1;
        for (k = 0; k < 2; k++) {
            buf[k] = tm_val(g_rank, i, k);
        }
        tm_must(amc_bcast(buf, 2, AMC_INT32, r, comm), "bcast");
        for (k = 0; k < 2; k++) {
            TM_CHECK(buf[k] == tm_val(r, i, k), "bcast root %d, call %d: element %d is %d, "
                     "expected %d", r, i, k, (int)buf[k], (int)tm_val(r, i, k));
        }
    }
}

/* An op that does not apply, after the memo holds the call with SUM. */
static void tm_bad_op(amc_comm_t comm)
{
    double in[2] = { 1.0 + g_rank, 2.0 }, out[2];
    int    i, rc;

    for (i = 0; i < 3; i++) {
        tm_must(amc_allreduce(in, out, 2, AMC_DOUBLE, AMC_SUM, comm), "allreduce of doubles");
    }
    rc = amc_allreduce(in, out, 2, AMC_DOUBLE, AMC_BAND, comm);
    TM_CHECK(rc == AMC_ERR_ARG, "BAND of doubles after the memo: %s, expected AMC_ERR_ARG",
             amc_strerror(rc));
    tm_must(amc_allreduce(in, out, 2, AMC_DOUBLE, AMC_SUM, comm), "allreduce after the error");
    TM_CHECK(out[0] == g_size * (g_size + 1) / 2.0, "after the error: %g, expected %g", out[0],
             g_size * (g_size + 1) / 2.0);
}

/* A freed communicator's handle, its memo used before. */
static void tm_freed(amc_comm_t world)
{
    amc_comm_t dup, stale;
    int32_t    in = g_rank, out = 0;
    int        i, rc;

    tm_must(amc_comm_dup(world, &dup), "amc_comm_dup");
    for (i = 0; i < 4; i++) {
        tm_must(amc_allreduce(&in, &out, 1, AMC_INT32, AMC_SUM, dup), "allreduce on the dup");
    }
    stale = dup;
    tm_must(amc_comm_free(&dup), "amc_comm_free");
    rc = amc_allreduce(&in, &out, 1, AMC_INT32, AMC_SUM, stale);
    TM_CHECK(rc == AMC_ERR_COMM, "the freed communicator's handle: %s, expected AMC_ERR_COMM",
             amc_strerror(rc));
}

int main(int argc, char **argv)
{
    amc_comm_t         world;
    unsigned long long before, grew;
    int32_t            in = 1, out = 0;
    int                coll, bad = 0, rc;

    if ((argc < 2) || (strcmp(argv[1], "memo") != 0)) {
        fprintf(stderr, "usage: %s memo [SHARED_FILE]\n", argv[0]);
        return 2;
    }
    tm_must(amc_init(&argc, &argv), "amc_init");
    world = AMC_COMM_WORLD;
    tm_must(amc_comm_rank(world, &g_rank), "amc_comm_rank");
    tm_must(amc_comm_size(world, &g_size), "amc_comm_size");
    if (g_size > TM_MAXN) {
        fprintf(stderr, "FAIL memo: runs on up to %d ranks, not %d\n", TM_MAXN, g_size);
        return 1;
    }
    for (coll = 0; coll < TM_NCOLLS; coll++) {
        before = tm_memo();
        tm_loop(world, coll);
        grew = tm_memo() - before;
        /* the first call chooses, the second keeps the memo */
        TM_CHECK((g_size != 2) || (grew == TM_ITERS - 2), "%s at N=2: %llu of %d calls ran "
                 "from the memo, expected %d", tm_names[coll], grew, TM_ITERS, TM_ITERS - 2);
        if (g_rank == 0) {
            printf("%s: %llu of %d calls from the memo\n", tm_names[coll], grew, TM_ITERS);
        }
    }
    for (coll = 0; coll < TM_NVCOLLS; coll++) {
        before = tm_memo();
        tm_vloop(world, coll, 0);
        grew = tm_memo() - before;
        TM_CHECK((g_size != 2) || (grew == TM_ITERS - 2), "%s at N=2: %llu of %d calls ran "
                 "from the memo, expected %d", tm_vnames[coll], grew, TM_ITERS, TM_ITERS - 2);
        if (g_rank == 0) {
            printf("%s: %llu of %d calls from the memo\n", tm_vnames[coll], grew, TM_ITERS);
        }
        tm_vloop(world, coll, 1);
    }
    tm_changes(world);
    tm_bad_op(world);
    tm_freed(world);

    tm_must(amc_allreduce(&g_fail, &bad, 1, AMC_INT, AMC_SUM, world), "failure count");
    tm_must(amc_allreduce(&in, &out, 1, AMC_INT32, AMC_SUM, world), "last call");
    tm_must(amc_finalize(), "amc_finalize");
    rc = amc_allreduce(&in, &out, 1, AMC_INT32, AMC_SUM, world);
    TM_CHECK(rc == AMC_ERR_NOT_INITIALIZED, "after amc_finalize: %s, expected "
             "AMC_ERR_NOT_INITIALIZED", amc_strerror(rc));
    if ((g_rank == 0) && (bad == 0) && (g_fail == 0)) {
        printf("ok memo N=%d\n", g_size);
    }
    return (g_fail > 0) ? 1 : 0;
}
