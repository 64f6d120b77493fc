/*
 * The schedule builder's graph and scratch layout: round shorthand edges
 * (a join where many wait for many, locals before the round's messages),
 * explicit edges carried through the per-round sort, and the named scratch
 * buffers laid out apart, aligned, and inside the instance's scratch.
 */
#include "tests/unit/harness.h"
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

int main(void)
{
    test_round_edges();
    test_explicit_edges();
    test_buffers();
    return amc_test_summary("test_sched_graph");
}
