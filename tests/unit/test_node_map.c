/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which node each rank is on, from what a launcher gives (transport/node_map.c;
 * transport/pmix_boot.c only reads PMIx into these functions):
 *  - per-rank node ids (PMIX_NODEID) in block, cyclic, one-node and uneven
 *    placements: every rank's node and the number of nodes, and a bad id
 *    leaves the map empty;
 *  - PMIx_Resolve_nodes' comma-separated list: empty entries, blanks and a
 *    trailing comma dropped;
 *  - PMIx_Resolve_peers' ranks per host: a host's place in the list is its
 *    node, and a rank out of range, listed twice or on no host is refused,
 *    naming it;
 *  - PMIX_HOSTNAME per rank: nodes numbered by first appearance.
 */
#include "tests/unit/harness.h"
#include "transport/node_map.h"

#include <stdio.h>
#include <string.h>

/* map from ids, then every rank's node and the count against the expected */
static void check_ids(const char *what, const int *ids, int n, int want_nodes, int want_runs)
{
    amc_node_map_t map;
    int            r, nnodes = -1;

    memset(&map, 0, sizeof(map));
    CHECK(amc_node_map_from_ids(&map, ids, n, &nnodes) == AMC_SUCCESS, "%s: built", what);
    CHECK(nnodes == want_nodes, "%s: %d nodes, expected %d", what, nnodes, want_nodes);
    CHECK(map.nruns == want_runs, "%s: %d runs, expected %d", what, map.nruns, want_runs);
    for (r = 0; r < n; r++) {
        CHECK(amc_node_map_node(&map, r) == ids[r], "%s: rank %d on node %d, expected %d", what,
              r, amc_node_map_node(&map, r), ids[r]);
    }
    amc_node_map_free(&map);
}

static void test_from_ids(void)
{
    static const int block[8]  = { 0, 0, 0, 0, 1, 1, 1, 1 };
    static const int cyclic[8] = { 0, 1, 0, 1, 0, 1, 0, 1 };
    static const int one[5]    = { 3, 3, 3, 3, 3 };
    static const int uneven[3] = { 0, 0, 1 };
    static const int sparse[6] = { 7, 40, 7, 40, 1000, 7 };  /* ids need not be dense */
    static const int bad[3]    = { 0, -1, 0 };
    amc_node_map_t   map;
    int              nnodes = -1;

    check_ids("block", block, 8, 2, 2);
    check_ids("cyclic", cyclic, 8, 2, 8);
    check_ids("one node", one, 5, 1, 1);
    check_ids("uneven 2+1", uneven, 3, 2, 2);
    check_ids("sparse ids", sparse, 6, 3, 6);

    memset(&map, 0, sizeof(map));
    CHECK(amc_node_map_from_ids(&map, bad, 3, &nnodes) == AMC_ERR_ARG, "a negative id refused");
    CHECK((map.nruns == 0) && (map.runs == NULL), "a refused map is left empty: %d runs",
          map.nruns);
    CHECK(nnodes == -1, "a refused map counts no nodes: %d", nnodes);
    CHECK(amc_node_map_from_ids(&map, block, 0, &nnodes) == AMC_ERR_ARG, "no ranks refused");
    amc_node_map_free(&map);
}

/* text parsed into exactly the names of want (n of them) */
static void check_list(const char *text, const char *const *want, int n)
{
    amc_node_list_t list;
    int             i;

    CHECK(amc_node_list_parse(&list, text) == AMC_SUCCESS, "\"%s\" parsed", text);
    CHECK(list.n == n, "\"%s\": %d names, expected %d", text, list.n, n);
    for (i = 0; (i < n) && (i < list.n); i++) {
        CHECK(strcmp(list.names[i], want[i]) == 0, "\"%s\": name %d is \"%s\", expected \"%s\"",
              text, i, list.names[i], want[i]);
    }
    amc_node_list_free(&list);
    CHECK((list.n == 0) && (list.names == NULL) && (list.buf == NULL), "\"%s\": freed", text);
}

static void test_list_parse(void)
{
    static const char *const two[2] = { "n1", "n2" };
    static const char *const n1[1]  = { "n1" };
    static const char *const fqdn[3] = { "a.b.c", "node-7", "x y" };

    check_list("n1,n2", two, 2);
    check_list("n1", n1, 1);
    check_list("n1,,n2", two, 2);
    check_list(" n1 , n2 ", two, 2);
    check_list("n1,n2,", two, 2);
    check_list("\tn1,\n,n2 ,  ,", two, 2);
    check_list("a.b.c,node-7, x y ", fqdn, 3);  /* only the ends are trimmed */
    check_list("", NULL, 0);
    check_list(" , ,", NULL, 0);
}

/* 5 ranks on nhosts hosts refused for want_why, naming want_rank */
static void check_refused(const char *what, const int *const *hosts, const int *nranks,
                          int nhosts, const char *want_why, int want_rank)
{
    const char *why;
    int         node_of[5], bad = -7;

    why = amc_node_ids_from_hosts(node_of, 5, hosts, nranks, nhosts, &bad);
    CHECK((why != NULL) && (strcmp(why, want_why) == 0) && (bad == want_rank),
          "%s: rank %d %s, expected rank %d %s", what, bad, (why != NULL) ? why : "accepted",
          want_rank, want_why);
}

static void test_from_hosts(void)
{
    /* two hosts, cyclic placement of 5 ranks: host 0 has 0 2 4, host 1 has 1 3 */
    static const int h0[3] = { 4, 0, 2 }, h1[2] = { 3, 1 };
    static const int want[5] = { 0, 1, 0, 1, 0 };
    static const int missing1[1] = { 3 };           /* rank 1 nowhere */
    static const int twice1[3] = { 3, 1, 1 };       /* rank 1 twice on one host */
    static const int range1[3] = { 3, 1, 5 };       /* rank 5 of 5 */
    static const int neg1[3] = { 3, 1, -1 };
    static const int again0[3] = { 1, 3, 2 };       /* rank 2 also on host 0 */
    const int *const good[2] = { h0, h1 };
    const int        good_n[2] = { 3, 2 };
    const int *const hosts_missing[2] = { h0, missing1 };
    const int        n_missing[2] = { 3, 1 };
    const int *const hosts_twice[2] = { h0, twice1 };
    const int *const hosts_range[2] = { h0, range1 };
    const int *const hosts_neg[2] = { h0, neg1 };
    const int *const hosts_again[2] = { h0, again0 };
    const int        n_three[2] = { 3, 3 };
    const char      *why;
    int              node_of[5], r, bad;

    why = amc_node_ids_from_hosts(node_of, 5, good, good_n, 2, &bad);
    CHECK(why == NULL, "every rank on exactly one host, yet rank %d %s", bad,
          (why != NULL) ? why : "");
    for (r = 0; r < 5; r++) {
        CHECK(node_of[r] == want[r], "rank %d on host %d, expected %d", r, node_of[r], want[r]);
    }
    check_ids("from hosts", node_of, 5, 2, 5);

    check_refused("a missing rank", hosts_missing, n_missing, 2, "is on no host", 1);
    check_refused("a rank twice on a host", hosts_twice, n_three, 2, "is listed twice", 1);
    check_refused("a rank on two hosts", hosts_again, n_three, 2, "is listed twice", 2);
    check_refused("a rank past the job", hosts_range, n_three, 2, "is out of range", 5);
    check_refused("a negative rank", hosts_neg, n_three, 2, "is out of range", -1);
    check_refused("no hosts", good, good_n, 0, "is on no host", 0);
}

static void check_names(const char *what, const char *const *names, const int *want, int n,
                        int want_nodes, int want_runs)
{
    int node_of[16], r;

    memset(node_of, 0xff, sizeof(node_of));
    CHECK(amc_node_ids_from_names(node_of, names, n) == AMC_SUCCESS, "%s: numbered", what);
    for (r = 0; r < n; r++) {
        CHECK(node_of[r] == want[r], "%s: rank %d on node %d, expected %d", what, r, node_of[r],
              want[r]);
    }
    check_ids(what, node_of, n, want_nodes, want_runs);
}

static void test_from_names(void)
{
    /* "zeta" sorts last but appears first: node 0 */
    static const char *const mixed[7] = { "zeta", "alpha", "zeta", "mid", "alpha", "mid", "zeta" };
    static const int         mixed_want[7] = { 0, 1, 0, 2, 1, 2, 0 };
    static const char *const block[4] = { "n2", "n2", "n1", "n1" };
    static const int         block_want[4] = { 0, 0, 1, 1 };
    static const char *const one[3] = { "n1", "n1", "n1" };
    static const int         one_want[3] = { 0, 0, 0 };
    static const char *const prefix[3] = { "n1", "n10", "n1" };  /* not the same host */
    static const int         prefix_want[3] = { 0, 1, 0 };

    check_names("names cyclic", mixed, mixed_want, 7, 3, 7);
    check_names("names block", block, block_want, 4, 2, 2);
    check_names("names one node", one, one_want, 3, 1, 1);
    check_names("names prefix", prefix, prefix_want, 3, 2, 3);
}

int main(void)
{
    test_from_ids();
    test_list_parse();
    test_from_hosts();
    test_from_names();
    return amc_test_summary("test_node_map");
}
