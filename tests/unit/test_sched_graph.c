/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schedule builder's graph and scratch layout: round shorthand edges
 * (a join where many wait for many, locals before the round's messages),
 * explicit edges carried through the per-round sort, and the named scratch
 * buffers laid out apart, aligned, and inside the instance's scratch; and
 * where the algorithms put a receiver's own work against a pull.
 */
#include "tests/unit/harness.h"
#include "am_coll/alg/alg.h"
#include "am_coll/sched/sched.h"

#include <stdint.h>
#include <string.h>

/* 1 if act 'to' is reachable from act 'from' along successor edges. */
static int reaches(const amc_sched_t *s, uint32_t from, uint32_t to)
{
    uint32_t stack[256], n = 0, i, a;
    uint8_t  seen[256];

    memset(seen, 0, sizeof(seen));
    stack[n++] = from;
    while (n > 0) {
        a = stack[--n];
        if (a == to) {
            return 1;
        }
        for (i = 0; i < s->acts[a].nsucc; i++) {
            uint32_t b = s->succ[s->acts[a].succ + i];

            if (!seen[b] && (n < 256)) {
                seen[b]    = 1;
                stack[n++] = b;
            }
        }
    }
    return 0;
}

static int find_act(const amc_sched_t *s, int type, int peer, size_t off)
{
    uint32_t i;

    for (i = 0; i < s->nacts; i++) {
        if ((s->acts[i].type == type) && (s->acts[i].peer == peer) && (s->acts[i].off == off)) {
            return (int)i;
        }
    }
    return -1;
}

static void test_round_edges(void)
{
    amc_sched_builder_t b;
    amc_sched_t        *s = NULL;
    int                 r, sends[4], recvs[4], copy, nops = 0;
    uint32_t            i;

    /* round 0: four receives; round 1: a copy, then four sends */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_round(&b);
    for (r = 0; r < 4; r++) {
        amc_sb_recv(&b, r + 1, AMC_BUF_RECV, (size_t)r * 8, 8);
    }
    amc_sb_round(&b);
    for (r = 0; r < 4; r++) {
        amc_sb_send(&b, r + 1, AMC_BUF_RECV, (size_t)r * 8, 8);
    }
    amc_sb_copy(&b, AMC_BUF_TMP, 0, AMC_BUF_RECV, 0, 32); /* added last, runs first */
    amc_sb_tmp(&b, 32);
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    if (s == NULL) {
        return;
    }
    for (r = 0; r < 4; r++) {
        recvs[r] = find_act(s, AMC_ACT_RECV, r + 1, (size_t)r * 8);
        sends[r] = find_act(s, AMC_ACT_SEND, r + 1, (size_t)r * 8);
        CHECK((recvs[r] >= 0) && (sends[r] >= 0), "acts of peer %d", r + 1);
    }
    copy = find_act(s, AMC_ACT_COPY, 0, 0);
    CHECK(copy >= 0, "the copy");
    CHECK(s->nroots == 4, "the four receives are the roots (%u)", s->nroots);
    for (i = 0; i < s->nacts; i++) {
        nops += (s->acts[i].type == AMC_ACT_NOP);
    }
    CHECK(nops == 0, "4 receives before one copy need no join (%d)", nops);
    for (r = 0; r < 4; r++) {
        CHECK(reaches(s, (uint32_t)recvs[r], (uint32_t)copy), "receive %d before the copy", r);
        CHECK(reaches(s, (uint32_t)copy, (uint32_t)sends[r]), "the copy before send %d", r);
        CHECK(s->acts[sends[r]].ndeps == 1, "send %d waits only for the copy", r);
    }
    CHECK(s->rounds[1].nlocal == 1 && s->acts[s->rounds[1].first].type == AMC_ACT_COPY,
          "locals first in their round");
    amc_sched_free(s);

    /* many wait for many: one join */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_round(&b);
    for (r = 0; r < 4; r++) {
        amc_sb_recv(&b, r + 1, AMC_BUF_RECV, (size_t)r * 8, 8);
    }
    amc_sb_round(&b);
    for (r = 0; r < 4; r++) {
        amc_sb_send(&b, r + 1, AMC_BUF_RECV, (size_t)r * 8, 8);
    }
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    nops = 0;
    for (i = 0; i < s->nacts; i++) {
        if (s->acts[i].type == AMC_ACT_NOP) {
            nops++;
            CHECK(s->acts[i].ndeps == 4 && s->acts[i].nsucc == 4, "the join: 4 in, 4 out");
        }
    }
    CHECK(nops == 1, "one join (%d)", nops);
    amc_sched_free(s);
}

static void test_explicit_edges(void)
{
    amc_sched_builder_t b;
    amc_sched_t        *s = NULL;
    int                 r0, r1, s0, s1;

    /* a stage: receives ready at once, each send after its own receive */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_stage(&b);
    amc_sb_recv(&b, 0, AMC_BUF_RECV, 0, 8);
    r0 = amc_sb_last(&b);
    amc_sb_send(&b, 2, AMC_BUF_RECV, 0, 8);
    amc_sb_requires(&b, amc_sb_last(&b), r0);
    amc_sb_recv(&b, 0, AMC_BUF_RECV, 8, 8);
    r1 = amc_sb_last(&b);
    amc_sb_send(&b, 2, AMC_BUF_RECV, 8, 8);
    amc_sb_requires(&b, amc_sb_last(&b), r1);
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    r0 = find_act(s, AMC_ACT_RECV, 0, 0);
    r1 = find_act(s, AMC_ACT_RECV, 0, 8);
    s0 = find_act(s, AMC_ACT_SEND, 2, 0);
    s1 = find_act(s, AMC_ACT_SEND, 2, 8);
    CHECK(s->nroots == 2, "both receives are roots (%u)", s->nroots);
    CHECK(reaches(s, (uint32_t)r0, (uint32_t)s0) && reaches(s, (uint32_t)r1, (uint32_t)s1),
          "each segment is forwarded after it landed (edges survive the sort)");
    CHECK(!reaches(s, (uint32_t)r1, (uint32_t)s0) && !reaches(s, (uint32_t)s0, (uint32_t)s1),
          "and waits for nothing else");
    CHECK(s->acts[s0].tag == 0 && s->acts[s1].tag == 1, "tags in the order added");
    amc_sched_free(s);

    /* an edge that points forward is a builder bug */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_send(&b, 1, AMC_BUF_SEND, 0, 8);
    amc_sb_recv(&b, 1, AMC_BUF_RECV, 0, 8);
    amc_sb_requires(&b, 0, 1);
    CHECK(amc_sb_finish(&b, &s) == AMC_ERR_ARG, "forward edge rejected");
}

static void test_buffers(void)
{
    amc_sched_builder_t b;
    amc_sched_t        *s = NULL;
    int                 ids[AMC_NBUFS], n = 0, k, j;

    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    amc_sb_tmp(&b, 100);
    ids[n++] = amc_sb_buffer(&b, 10);
    ids[n++] = amc_sb_buffer(&b, 1000);
    amc_sb_recv_reduce(&b, 1, ids[1], 0, 1000, 0); /* pulled data stages too */
    amc_sb_reduce(&b, AMC_BUF_TMP, 0, ids[0], 0, 8, 1);
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    CHECK(ids[0] == AMC_BUF_EXTRA && ids[1] == AMC_BUF_EXTRA + 1, "names %d %d", ids[0], ids[1]);
    CHECK(s->nbufs == AMC_BUF_EXTRA + 2, "nbufs %u", s->nbufs);
    for (k = 0; k < n; k++) {
        size_t off = s->buf_off[ids[k]], end = off + s->buf_bytes[ids[k]];

        CHECK(off % 64 == 0, "buffer %d aligned", ids[k]);
        CHECK(off >= s->tmp_bytes, "buffer %d after the scratch", ids[k]);
        CHECK(end <= s->stage_off, "buffer %d before the staging area", ids[k]);
        for (j = 0; j < k; j++) {
            size_t o2 = s->buf_off[ids[j]], e2 = o2 + s->buf_bytes[ids[j]];

            CHECK((end <= o2) || (e2 <= off), "buffers %d and %d apart", ids[k], ids[j]);
        }
    }
    CHECK(s->stage_bytes == 1000 && s->stage_off + s->stage_bytes <= amc_sched_reduce_off(s),
          "staging before the reduction copy");
    CHECK(amc_sched_scratch_bytes(s) >= amc_sched_reduce_off(s) + 1000, "scratch covers it all");
    CHECK(amc_sched_buf_bytes(s, ids[1]) == 1000 && amc_sched_buf_bytes(s, AMC_BUF_TMP) == 100 &&
          amc_sched_buf_bytes(s, AMC_BUF_RECV) == 0, "sizes by name");
    amc_sched_free(s);

    /* more names than there are */
    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    for (k = AMC_BUF_EXTRA; k < AMC_NBUFS; k++) {
        CHECK(amc_sb_buffer(&b, 8) == k, "buffer %d", k);
    }
    CHECK(amc_sb_buffer(&b, 8) == -1, "no name left");
    CHECK(amc_sb_finish(&b, &s) == AMC_ERR_ARG, "reported by finish");
}

static int count_type(const amc_sched_t *s, int type)
{
    uint32_t i;
    int      n = 0;

    for (i = 0; i < s->nacts; i++) {
        n += (s->acts[i].type == type);
    }
    return n;
}

static amc_sched_t *build(amc_alg_build_fn_t fn, const amc_coll_args_t *a, int rank, int size)
{
    amc_sched_builder_t b;
    amc_sched_t        *s = NULL;

    CHECK(amc_sb_init(&b) == AMC_SUCCESS, "init");
    CHECK(fn(&b, a, rank, size) == AMC_SUCCESS, "build");
    CHECK(amc_sb_finish(&b, &s) == AMC_SUCCESS, "finish");
    return s;
}

/* A gather root copies its own block after the blocks it pulls (each
 * sender waits for its pull), and before those that come eagerly (in the
 * time before they land: its round's local work runs first). */
static void test_own_block_after_pulls(void)
{
    static const size_t counts[4] = { 4, 4, 4, 4 }, displs[4] = { 0, 4, 8, 12 };
    amc_alg_build_fn_t  fns[3] = { amc_alg_gather_linear, amc_alg_gather_binomial,
                                   amc_alg_gatherv_linear };
    amc_coll_args_t     a;
    amc_sched_t        *s;
    int                 f, pulled, copy, r, peers, after, before;
    uint32_t            i;

    for (f = 0; f < 3; f++) {
        for (pulled = 0; pulled <= 1; pulled++) {
            memset(&a, 0, sizeof(a));
            a.coll       = (f == 2) ? AMC_COLL_GATHERV : AMC_COLL_GATHER;
            a.root       = 0;
            a.count      = 4;
            a.dt         = AMC_INT64;
            a.dt_size    = 8;
            a.op         = -1;
            a.scount     = 4;
            a.rcounts    = counts;
            a.rdispls    = displs;
            a.pull_bytes = pulled ? 32 : 1024; /* a block is 32 bytes, a subtree 64 */
            s = build(fns[f], &a, 0, 4);
            if (s == NULL) {
                continue;
            }
            copy = find_act(s, AMC_ACT_COPY, 0, 0);
            CHECK(copy >= 0, "algorithm %d: the root's own block is copied", f);
            for (peers = 0, after = 0, before = 0, i = 0; (copy >= 0) && (i < s->nacts); i++) {
                if (s->acts[i].type != AMC_ACT_RECV) {
                    continue;
                }
                r = (int)i;
                peers++;
                after += reaches(s, (uint32_t)r, (uint32_t)copy);
                before += reaches(s, (uint32_t)copy, (uint32_t)r);
            }
            CHECK(peers > 0, "algorithm %d: receives", f);
            CHECK((after == (pulled ? peers : 0)) && (before == (pulled ? 0 : peers)),
                  "algorithm %d, %s: the copy after %d and before %d of %d receives", f,
                  pulled ? "pulled" : "eager", after, before, peers);
            amc_sched_free(s);
        }
    }
}

/* A commutative reduce's root and a scan's rank pull the first vector
 * straight into the result and reduce their own into it after, with no
 * copy for the pull to wait behind; an order-sensitive op, or a vector
 * that comes eagerly, keeps the copy first. */
static void test_own_vector_after_pull(void)
{
    amc_alg_build_fn_t fns[3] = { amc_alg_reduce_linear, amc_alg_scan_linear,
                                  amc_alg_scan_doubling };
    amc_coll_args_t    a;
    amc_sched_t       *s;
    int                k, f, commute, pulled, fold, recv, red;

    for (k = 0; k < 12; k++) {
        f       = k >> 2;
        commute = (k >> 1) & 1;
        pulled  = k & 1;
        fold    = commute && pulled;
        memset(&a, 0, sizeof(a));
        a.coll        = (f == 0) ? AMC_COLL_REDUCE : AMC_COLL_SCAN;
        a.root        = (f == 0) ? 1 : -1;
        a.count       = 4;
        a.dt          = AMC_INT64;
        a.dt_size     = 8;
        a.op          = AMC_SUM;
        a.commutative = commute;
        a.pull_bytes  = pulled ? 32 : 33; /* a vector is 32 bytes */
        s = build(fns[f], &a, 1, 3);
        if (s == NULL) {
            continue;
        }
        CHECK(count_type(s, AMC_ACT_COPY) == !fold, "algorithm %d, commutative %d, pulled %d: "
              "%d copies", f, commute, pulled, count_type(s, AMC_ACT_COPY));
        if (fold) {
            recv = find_act(s, AMC_ACT_RECV, 0, 0);
            red  = find_act(s, AMC_ACT_REDUCE, 0, 0);
            CHECK((recv >= 0) && (red >= 0) && (s->acts[red].buf2 == AMC_BUF_SEND) &&
                  reaches(s, (uint32_t)recv, (uint32_t)red),
                  "algorithm %d: rank 0's vector lands in place, the own reduced in after", f);
            CHECK((recv >= 0) && (s->acts[recv].ndeps == 0),
                  "algorithm %d: the first receive waits for nothing", f);
        }
        amc_sched_free(s);
    }
}

int main(void)
{
    test_round_edges();
    test_explicit_edges();
    test_own_block_after_pulls();
    test_own_vector_after_pull();
    test_buffers();
    return amc_test_summary("test_sched_graph");
}
