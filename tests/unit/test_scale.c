/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-rank cost that follows the peers a rank talks to, not the job (issue
 * 18; doc/design.md, "Scale"), over the fake transport, which counts an
 * endpoint at a rank's first send to a peer as the UCX transport creates one:
 * - a barrier at N creates exactly ceil(log2 N) endpoints per rank, and
 *   flow-control state for no peer (it carries no data); a second barrier
 *   and a barrier on a dup create none;
 * - a bcast keeps flow-control records only for the tree neighbours;
 * - world and its dups hold no member array; a split holds one that its
 *   dups share (reference counted), freed with the last of them, with the
 *   right members, and collectives on all of them give the right values;
 * - the sparse table: slots in distant chunks, chunks allocated only where
 *   a slot was set, the first insert wins.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "am_coll/context/stats.h"
#include "base/sparse.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_N 16

static void deliver_all(amc_test_world_t *w)
{
    while (amc_fake_deliverable(w->fabric) > 0) {
        amc_fake_deliver(w->fabric, 0);
    }
}

static int test_done(amc_request_t *req)
{
    int flag = 0, rc = amc_test(req, &flag);

    return flag ? rc : AMC_INPROGRESS;
}

static unsigned long long stat_of(amc_test_world_t *w, int r, const char *name)
{
    unsigned long long v = ~0ull;

    CHECK(amc_context_stat(w->ctx[r], name, &v) == AMC_SUCCESS, "stat %s", name);
    return v;
}

static int ceil_log2(int n)
{
    int k = 0;

    while ((1 << k) < n) {
        k++;
    }
    return k;
}

static void barrier_all(amc_test_world_t *w, amc_comm_t *comms, int lo, int hi, const char *what)
{
    amc_request_t req[MAX_N];
    int           r, rc;

    for (r = lo; r < hi; r++) {
        rc = amc_ibarrier(comms[r], &req[r]);
        CHECK(rc == AMC_SUCCESS, "%s: ibarrier on %d: %s", what, r, amc_strerror(rc));
    }
    deliver_all(w);
    for (r = lo; r < hi; r++) {
        rc = test_done(&req[r]);
        CHECK(rc == AMC_SUCCESS, "%s: ibarrier on %d: %s", what, r, amc_strerror(rc));
    }
}

/* What a rank keeps is checked for the library's defaults (the fast-path
 * barrier, eager small data, one node): AMC_* in the environment would
 * change the algorithms, not the property. */
static void config_defaults_quiet(amc_config_t *cfg)
{
    amc_config_defaults(cfg);
    cfg->log_level = -1;
}

static void test_barrier_endpoints(int n)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_comm_t       world[MAX_N], dup[MAX_N];
    int              r;

    config_defaults_quiet(&cfg);
    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return;
    }
    for (r = 0; r < n; r++) {
        world[r] = amc_test_world_comm(&w, r);
        CHECK(stat_of(&w, r, "endpoints") == 0, "N=%d rank %d: endpoints before any call", n, r);
    }
    barrier_all(&w, world, 0, n, "world");
    for (r = 0; r < n; r++) {
        CHECK(stat_of(&w, r, "endpoints") == (unsigned long long)ceil_log2(n),
              "N=%d rank %d: %llu endpoints after a barrier, want %d", n, r,
              stat_of(&w, r, "endpoints"), ceil_log2(n));
        CHECK(stat_of(&w, r, "flow_peers") == 0, "N=%d rank %d: flow records %llu after a "
              "barrier", n, r, stat_of(&w, r, "flow_peers"));
    }
    barrier_all(&w, world, 0, n, "world again");
    for (r = 0; r < n; r++) {
        CHECK(stat_of(&w, r, "endpoints") == (unsigned long long)ceil_log2(n),
              "N=%d rank %d: a second barrier connected more", n, r);
    }
    /* the dup's agreement is an allreduce (recursive doubling: the same
     * distances as the barrier, or at most one more peer per round) */
    CHECK(amc_test_world_create_comms(&w, NULL, 0, NULL, NULL, dup) == AMC_SUCCESS, "dup");
    for (r = 0; r < n; r++) {
        CHECK(dup[r]->group == NULL, "N=%d rank %d: a dup of world holds a member array", n, r);
    }
    barrier_all(&w, dup, 0, n, "dup");
    for (r = 0; r < n; r++) {
        CHECK(stat_of(&w, r, "endpoints") <= 2ull * (unsigned long long)ceil_log2(n) + 1,
              "N=%d rank %d: %llu endpoints after dup + barrier", n, r,
              stat_of(&w, r, "endpoints"));
        CHECK(amc_comm_free(&dup[r]) == AMC_SUCCESS, "free dup");
    }
    amc_test_world_destroy(&w);
}

/* A bcast from 0 of eager data: records only for the peers data went to or
 * came from (binomial tree: the children and the parent). */
static void test_bcast_flow(int n)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    req[MAX_N];
    int32_t          buf[MAX_N][4];
    int              r, i, rc;

    config_defaults_quiet(&cfg);
    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return;
    }
    for (r = 0; r < n; r++) {
        for (i = 0; i < 4; i++) {
            buf[r][i] = (r == 0) ? 100 + i : -1;
        }
        rc = amc_ibcast(buf[r], 4, AMC_INT32, 0, amc_test_world_comm(&w, r), &req[r]);
        CHECK(rc == AMC_SUCCESS, "ibcast start on %d", r);
    }
    deliver_all(&w);
    for (r = 0; r < n; r++) {
        CHECK(test_done(&req[r]) == AMC_SUCCESS, "N=%d ibcast on %d", n, r);
        CHECK((buf[r][0] == 100) && (buf[r][3] == 103), "N=%d rank %d: bcast value", n, r);
        CHECK(stat_of(&w, r, "flow_peers") <= (unsigned long long)ceil_log2(n) + 1,
              "N=%d rank %d: %llu flow records after a bcast", n, r,
              stat_of(&w, r, "flow_peers"));
        CHECK(stat_of(&w, r, "endpoints") <= (unsigned long long)ceil_log2(n),
              "N=%d rank %d: %llu endpoints after a bcast", n, r, stat_of(&w, r, "endpoints"));
    }
    CHECK(stat_of(&w, 0, "flow_peers") == (unsigned long long)ceil_log2(n),
          "N=%d: the root keeps records for its %d children, has %llu", n, ceil_log2(n),
          stat_of(&w, 0, "flow_peers"));
    CHECK(stat_of(&w, 0, "flow_bytes") < 4096, "N=%d: the root's flow state is %llu bytes", n,
          stat_of(&w, 0, "flow_bytes"));
    amc_test_world_destroy(&w);
}

static void check_sum(amc_test_world_t *w, amc_comm_t *comms, const int *members, int m,
                      const char *what)
{
    amc_request_t req[MAX_N];
    int32_t       in[MAX_N], out[MAX_N], want = 0;
    int           i, r;

    for (i = 0; i < m; i++) {
        r       = members[i];
        in[r]   = r + 1;
        out[r]  = -1;
        want   += r + 1;
        CHECK(amc_iallreduce(&in[r], &out[r], 1, AMC_INT32, AMC_SUM, comms[r], &req[r]) ==
              AMC_SUCCESS, "%s: iallreduce start on %d", what, r);
    }
    deliver_all(w);
    for (i = 0; i < m; i++) {
        r = members[i];
        CHECK(test_done(&req[r]) == AMC_SUCCESS, "%s: iallreduce on %d", what, r);
        CHECK(out[r] == want, "%s: rank %d got %d, want %d", what, r, (int)out[r], (int)want);
    }
}

static void test_shared_membership(void)
{
    enum { N = 12 };
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_comm_t       world[N], split[N], dup[N], dup2[N];
    int              color[N], key[N], members[2][N], nm[2] = { 0, 0 }, r, i;

    config_defaults_quiet(&cfg);
    if (amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) != AMC_SUCCESS) {
        CHECK(0, "world of %d", N);
        return;
    }
    for (r = 0; r < N; r++) {
        world[r] = amc_test_world_comm(&w, r);
        CHECK(world[r]->group == NULL, "rank %d: world holds a member array", r);
        color[r] = r % 3 == 0;        /* 0,3,6,9 and the rest */
        key[r]   = N - r;             /* reversed order inside each color */
        members[color[r]][nm[color[r]]++] = r;
    }
    CHECK(amc_test_world_create_comms(&w, NULL, 1, color, key, split) == AMC_SUCCESS, "split");
    for (r = 0; r < N; r++) {
        amc_comm_group_t *g = split[r]->group;
        int               c = color[r], m = nm[c];

        CHECK(g != NULL, "rank %d: a split without a member array", r);
        if (g == NULL) {
            continue;
        }
        CHECK(g->refs == 1, "rank %d: split group refs %u", r, g->refs);
        CHECK((g->size == m) && (split[r]->size == m), "rank %d: split of %d, want %d", r,
              g->size, m);
        for (i = 0; i < m; i++) {
            /* keys reversed: the member of highest world rank comes first */
            CHECK(g->ranks[i] == members[c][m - 1 - i], "rank %d: member %d is %d, want %d", r,
                  i, g->ranks[i], members[c][m - 1 - i]);
        }
    }
    CHECK(amc_test_world_create_comms(&w, split, 0, NULL, NULL, dup) == AMC_SUCCESS, "dup");
    CHECK(amc_test_world_create_comms(&w, dup, 0, NULL, NULL, dup2) == AMC_SUCCESS, "dup2");
    for (r = 0; r < N; r++) {
        CHECK((dup[r]->group == split[r]->group) && (dup2[r]->group == split[r]->group),
              "rank %d: the dups do not share the split's members", r);
        CHECK(split[r]->group->refs == 3, "rank %d: refs %u with two dups", r,
              split[r]->group->refs);
    }
    for (i = 0; i < 2; i++) {
        check_sum(&w, split, members[i], nm[i], "split");
        check_sum(&w, dup2, members[i], nm[i], "dup of dup of split");
    }
    for (r = 0; r < N; r++) {
        CHECK(amc_comm_free(&split[r]) == AMC_SUCCESS, "free split");
        CHECK(dup[r]->group->refs == 2, "rank %d: refs %u after freeing the split", r,
              dup[r]->group->refs);
    }
    for (i = 0; i < 2; i++) {
        check_sum(&w, dup, members[i], nm[i], "dup after its parent was freed");
    }
    for (r = 0; r < N; r++) {
        CHECK(amc_comm_free(&dup[r]) == AMC_SUCCESS, "free dup");
        CHECK(dup2[r]->group->refs == 1, "rank %d: refs %u", r, dup2[r]->group->refs);
        CHECK(amc_comm_free(&dup2[r]) == AMC_SUCCESS, "free dup2");
    }
    amc_test_world_destroy(&w);
}

static void test_sparse(void)
{
    amc_sparse_t sp;
    int          a, b, c;

    CHECK(amc_sparse_init(&sp, 70000) == AMC_SUCCESS, "sparse init");
    CHECK(amc_sparse_get(&sp, 0) == NULL && amc_sparse_get(&sp, 69999) == NULL, "empty");
    CHECK(amc_sparse_insert(&sp, 69999, &a) == &a, "insert last");
    CHECK(amc_sparse_insert(&sp, 256, &b) == &b, "insert 256");
    CHECK(amc_sparse_insert(&sp, 257, &c) == &c, "insert 257");
    CHECK(amc_sparse_insert(&sp, 256, &c) == &b, "a second insert loses to the first");
    CHECK(amc_sparse_get(&sp, 256) == &b && amc_sparse_get(&sp, 257) == &c &&
          amc_sparse_get(&sp, 69999) == &a, "lookups");
    CHECK(amc_sparse_get(&sp, 255) == NULL && amc_sparse_get(&sp, 69998) == NULL &&
          amc_sparse_get(&sp, 70000) == NULL && amc_sparse_get(&sp, -1) == NULL,
          "unset and out of range");
    CHECK(amc_sparse_insert(&sp, 70000, &a) == NULL, "insert out of range");
    CHECK(sp.nalloc == 2, "%u chunks allocated for slots in 2", sp.nalloc);
    CHECK(amc_sparse_bytes(&sp) == 274 * sizeof(void **) + 2 * AMC_SPARSE_CHUNK * sizeof(void *),
          "bytes %zu", amc_sparse_bytes(&sp));
    amc_sparse_cleanup(&sp);
}

int main(void)
{
    static const int sizes[] = { 2, 3, 5, 8, 13, 16 };
    size_t           i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        test_barrier_endpoints(sizes[i]);
        test_bcast_flow(sizes[i]);
    }
    test_shared_membership();
    test_sparse();
    return amc_test_summary("test_scale");
}
