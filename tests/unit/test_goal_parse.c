/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GOAL text language and the static checks (am_coll/goal/goal_text.c,
 * am_coll/goal/goal.c): every construct of LogGOPSim's txt2bin language and of
 * amcoll's extensions parses into the actions and edges it says; every
 * error names its line and column; text -> schedule -> text -> schedule
 * gives the same schedule and the same text; the compile-time checks
 * (unknown label, cycle, unmatched send or receive, size mismatch,
 * rendezvous deadlock) fail with their place, and wildcards are matched as
 * MPI would; every built-in collective exports as GOAL that compiles and
 * round-trips. No transport: parsing and compiling need no peers.
 */
#include "tests/unit/harness.h"
#include "am_coll/goal/goal.h"
#include "am_coll/alg/alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static amc_goal_t parse_ok(const char *text, const char *what)
{
    amc_goal_t g = NULL;
    char       err[512];
    int        status = amc_goal_parse(text, strlen(text), "t.goal", &g, err, sizeof(err));

    CHECK(status == AMC_SUCCESS, "%s: parse failed: %s", what, err);
    return (status == AMC_SUCCESS) ? g : NULL;
}

/* The parse fails with "t.goal:LINE:COL: ..." containing want. */
static void parse_err(const char *text, unsigned line, unsigned col, const char *want)
{
    amc_goal_t g = NULL;
    char       err[512], prefix[64];
    int        status = amc_goal_parse(text, strlen(text), "t.goal", &g, err, sizeof(err));

    snprintf(prefix, sizeof(prefix), "t.goal:%u:%u: ", line, col);
    CHECK(status == AMC_ERR_ARG, "parse of [%s] should fail", text);
    CHECK(g == NULL, "a failed parse gives no schedule");
    CHECK(!strncmp(err, prefix, strlen(prefix)), "error [%s] should start with %s", err, prefix);
    CHECK(strstr(err, want) != NULL, "error [%s] should say %s", err, want);
    if (g != NULL) {
        amc_goal_free(&g);
    }
}

/* Parses, then compile fails at line:col with want in the message. */
static void compile_err(const char *text, unsigned line, unsigned col, const char *want)
{
    amc_goal_t g = parse_ok(text, want);
    char       prefix[64];

    if (g == NULL) {
        return;
    }
    snprintf(prefix, sizeof(prefix), "t.goal:%u:%u: ", line, col);
    CHECK(amc_goal_compile(g) == AMC_ERR_ARG, "compile of [%s] should fail", text);
    CHECK(!strncmp(amc_goal_error(g), prefix, strlen(prefix)), "error [%s] should start with %s",
          amc_goal_error(g), prefix);
    CHECK(strstr(amc_goal_error(g), want) != NULL, "error [%s] should say %s",
          amc_goal_error(g), want);
    amc_goal_free(&g);
}

static char *write_text(amc_goal_t g)
{
    char  *buf = NULL;
    size_t len = 0;
    FILE  *f   = open_memstream(&buf, &len);

    CHECK(f != NULL, "open_memstream");
    if (f == NULL) {
        return NULL;
    }
    CHECK(amc_goal_write(g, f) > 0, "write");
    fclose(f);
    return buf;
}

static void constructs(void)
{
    static const char text[] =
        "// a line comment before anything\n"
        "num_ranks 3\n"
        "/* a block comment\n"
        "   over lines */\n"
        "rank 0 {\n"
        "l1: send 8b to 1 tag 5\n"
        "l2: send 4 b to 2\n"                  /* blanks before b, tag 0 by default */
        "l3: recv 16b from -1 tag -1 cpu 1 nic 2\n"
        "l4: calc 100 cpu 3\n"
        "calc 7\n"                             /* no label */
        "l4 requires l3\n"
        "l1 irequires l4\n"
        "}\n"
        "rank 1 {\n"
        "  x: recv 8b from 0 tag 5 buf recv 8   // data extension\n"
        "  y: send 16b to 0 tag 3 buf send 0\n"
        "  c: copy 8b from recv 8 to tmp1 0\n"
        "  r: reduce 8b sum int32 from tmp1 0 to recv 0 right\n"
        "  c requires x /* comment after */\n"
        "  r requires c\n"
        "  y requires later\n"                 /* a label defined further down */
        "  later: calc 0\n"
        "}\n"
        "rank 2 {\n"
        "z: recv 4b from 0\n"
        "}\n";
    amc_goal_t            g = parse_ok(text, "constructs");
    const amc_goal_act_t *a;
    char                 *out, *out2;
    amc_goal_t            g2;

    if (g == NULL) {
        return;
    }
    CHECK(g->nranks == 3, "num_ranks");
    CHECK(g->ranks[0].nacts == 5 && g->ranks[1].nacts == 5 && g->ranks[2].nacts == 1,
          "acts per rank %u %u %u", g->ranks[0].nacts, g->ranks[1].nacts, g->ranks[2].nacts);
    a = g->ranks[0].acts;
    CHECK(a[0].type == AMC_GOAL_SEND && a[0].peer == 1 && a[0].tag == 5 && a[0].bytes == 8 &&
          a[0].line == 6 && a[0].col == 1 && !strcmp(a[0].label, "l1"), "send");
    CHECK(a[1].type == AMC_GOAL_SEND && a[1].peer == 2 && a[1].tag == 0 && a[1].bytes == 4,
          "send with blanks before b, default tag");
    CHECK(a[2].type == AMC_GOAL_RECV && a[2].peer == AMC_GOAL_ANY && a[2].tag == AMC_GOAL_ANY &&
          a[2].cpu == 1 && a[2].nic == 2 && a[2].bytes == 16, "recv any");
    CHECK(a[3].type == AMC_GOAL_CALC && a[3].bytes == 100 && a[3].cpu == 3, "calc");
    CHECK(a[4].type == AMC_GOAL_CALC && a[4].label == NULL && a[4].bytes == 7, "calc unlabeled");
    CHECK(a[0].buf == AMC_GOAL_BUF_TMP && a[0].off == 0, "default buffer");
    CHECK(g->ranks[0].ndeps == 2 && g->ranks[0].deps[0].act == 3 && g->ranks[0].deps[0].dep == 2 &&
          !g->ranks[0].deps[0].start && g->ranks[0].deps[1].act == 0 &&
          g->ranks[0].deps[1].dep == 3 && g->ranks[0].deps[1].start, "requires, irequires");
    a = g->ranks[1].acts;
    CHECK(a[0].buf == AMC_GOAL_BUF_RECV && a[0].off == 8, "buf extension");
    CHECK(a[2].type == AMC_GOAL_COPY && a[2].buf2 == AMC_GOAL_BUF_RECV && a[2].off2 == 8 &&
          a[2].buf == AMC_GOAL_BUF_TMP + 1 && a[2].off == 0, "copy");
    CHECK(a[3].type == AMC_GOAL_REDUCE && a[3].op == AMC_SUM && a[3].dt == AMC_INT32 &&
          a[3].right && a[3].buf == AMC_GOAL_BUF_RECV, "reduce");
    CHECK(g->ranks[1].ndeps == 3 && g->ranks[1].deps[2].dep == 4, "forward label");
    CHECK(amc_goal_compile(g) == AMC_SUCCESS, "compile: %s", amc_goal_error(g));
    /* the wildcard receive of rank 0 gets rank 1's message, the only one to it */
    CHECK(g->ranks[0].acts[2].mate_rank == 1 && g->ranks[0].acts[2].mate_act == 1,
          "wildcard matched to rank %d act %d", g->ranks[0].acts[2].mate_rank,
          g->ranks[0].acts[2].mate_act);

    /* round trip: text -> schedule -> text -> schedule -> text */
    out = write_text(g);
    g2  = (out != NULL) ? parse_ok(out, "round trip") : NULL;
    out2 = (g2 != NULL) ? write_text(g2) : NULL;
    CHECK((out != NULL) && (out2 != NULL) && !strcmp(out, out2), "round trip text differs:\n%s\n"
          "---\n%s", out ? out : "", out2 ? out2 : "");
    if (g2 != NULL) {
        int      r;
        uint32_t k;

        for (r = 0; r < 3; r++) {
            CHECK(g2->ranks[r].nacts == g->ranks[r].nacts && g2->ranks[r].ndeps ==
                  g->ranks[r].ndeps, "round trip rank %d sizes", r);
            for (k = 0; (k < g->ranks[r].nacts) && (k < g2->ranks[r].nacts); k++) {
                const amc_goal_act_t *x = &g->ranks[r].acts[k], *y = &g2->ranks[r].acts[k];

                CHECK(x->type == y->type && x->peer == y->peer && x->tag == y->tag &&
                      x->bytes == y->bytes && x->buf == y->buf && x->off == y->off &&
                      x->buf2 == y->buf2 && x->off2 == y->off2 && x->cpu == y->cpu &&
                      x->nic == y->nic && x->op == y->op && x->dt == y->dt &&
                      x->right == y->right, "round trip rank %d act %u", r, k);
            }
            for (k = 0; (k < g->ranks[r].ndeps) && (k < g2->ranks[r].ndeps); k++) {
                CHECK(g->ranks[r].deps[k].act == g2->ranks[r].deps[k].act &&
                      g->ranks[r].deps[k].dep == g2->ranks[r].deps[k].dep &&
                      g->ranks[r].deps[k].start == g2->ranks[r].deps[k].start,
                      "round trip rank %d dep %u", r, k);
            }
        }
        amc_goal_free(&g2);
    }
    free(out);
    free(out2);
    amc_goal_free(&g);
}

static void syntax_errors(void)
{
    parse_err("rank 0 {\n}\n", 1, 1, "rank before num_ranks");
    parse_err("num_ranks 2\nnum_ranks 2\n", 2, 1, "num_ranks given twice");
    parse_err("num_ranks 0\n", 1, 1, "at least 1");
    parse_err("num_ranks 2\nrank 2 {\n}\n", 2, 6, "not below num_ranks");
    parse_err("num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n", 4, 1, "two blocks");
    parse_err("num_ranks 2\nrank 0 \n}\n", 2, 8, "expected \"{\"");
    parse_err("num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n", 3, 10, "a size in bytes");
    parse_err("num_ranks 2\nrank 0 {\nl1: send 8b from 1\n}\n", 3, 13, "expected \"to\"");
    parse_err("num_ranks 2\nrank 0 {\nl1: send 8b to -1\n}\n", 3, 16, "expected a rank");
    parse_err("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag -1\n}\n", 3, 18, "cannot be -1");
    parse_err("num_ranks 2\nrank 0 {\nl1: send 8b to 5\n}\n", 3, 16, "not below num_ranks");
    parse_err("num_ranks 2\nrank 0 {\nl1: send 8b to 0\n}\n", 3, 16, "itself");
    parse_err("num_ranks 2\nrank 0 {\nl1: recv 8b from 1 color 3\n}\n", 3, 20,
              "expected \"tag\"");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc x\n}\n", 3, 10, "a number");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc 5 nic 1\n}\n", 3, 12, "\"cpu\" or the end");
    parse_err("num_ranks 2\nrank 0 {\nl1: jump 5\n}\n", 3, 5, "\"send\", \"recv\"");
    parse_err("num_ranks 2\nrank 0 {\nl1 needs l2\n}\n", 3, 4, "\":\", \"requires\"");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires 5\n}\n", 4, 13, "a label");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l9\n}\n", 4, 13,
              "unknown label l9");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n", 4, 1, "defined twice");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l1\n}\n", 4, 13,
              "requires itself");
    parse_err("num_ranks 2\nrank 0 {\nl1: calc 1\n", 4, 1, "\"}\" missing");
    parse_err("num_ranks 2\n/* open\nrank 0 {\n", 2, 1, "never closed");
    parse_err("num_ranks 2\nrank 0 {\nl1: copy 8b from disk 0 to recv 0\n}\n", 3, 18,
              "a buffer");
    parse_err("num_ranks 2\nrank 0 {\nl1: reduce 8b avg int32 from tmp 0 to recv 0\n}\n", 3,
              15, "an op");
    parse_err("num_ranks 2\nrank 0 {\nl1: reduce 8b sum quad from tmp 0 to recv 0\n}\n", 3,
              19, "a datatype");
    parse_err("num_ranks 2\nrank 0 {\nl1: recv 8b from 1 buf recv\n}\n", 3, 28, "an offset");
    parse_err("num_ranks 2\nrank 0 {\n$\n}\n", 3, 1, "an action, a label");
    parse_err("", 1, 1, "no num_ranks");
}

static void compile_errors(void)
{
    compile_err("num_ranks 2\nrank 0 {\na: calc 1\nb: calc 2\na requires b\nb requires a\n}\n"
                "rank 1 {\n}\n", 6, 12, "cycle");
    compile_err("num_ranks 2\nrank 0 {\na: calc 1\nb: calc 2\nc: calc 3\na requires b\n"
                "b irequires c\nc requires a\n}\nrank 1 {\n}\n", 8, 12, "cycle");
    compile_err("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\nrank 1 {\n"
                "l1: recv 8b from 0 tag 4\n}\n", 3, 1, "no matching receive on rank 1");
    compile_err("num_ranks 3\nrank 0 {\n}\nrank 1 {\n}\nrank 2 {\n  q: recv 8b from 0\n}\n",
                7, 3, "has no matching send");
    compile_err("num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\nrank 1 {\n  l1: recv 4b from 0\n}\n",
                6, 3, "size mismatch");
    /* both send first and receive after: fine eager, a hang with rendezvous */
    compile_err("num_ranks 2\nrank 0 {\ns: send 8b to 1\nr: recv 8b from 1\nr requires s\n}\n"
                "rank 1 {\ns: send 8b to 0\nr: recv 8b from 0\nr requires s\n}\n", 3, 1,
                "deadlock when messages go by rendezvous");
    compile_err("num_ranks 2\nrank 0 {\nr1: reduce 8b sum int32 from tmp 0 to recv 0\n"
                "r2: reduce 8b max int32 from tmp 0 to recv 0\n}\nrank 1 {\n}\n", 4, 1,
                "one op and datatype");
    compile_err("num_ranks 2\nrank 0 {\nr1: reduce 6b sum int32 from tmp 0 to recv 0\n}\n"
                "rank 1 {\n}\n", 3, 1, "no whole number");
}

/* Matching as MPI: FIFO per (source, tag); a wildcard takes the first
 * message that fits in the order sends became ready. */
static void matching(void)
{
    static const char text[] =
        "num_ranks 3\n"
        "rank 0 {\n"
        "a: send 1b to 2 tag 1\n"
        "b: send 2b to 2 tag 2\n"
        "c: send 3b to 2 tag 1\n"
        "}\n"
        "rank 1 {\n"
        "d: send 4b to 2 tag 1\n"
        "}\n"
        "rank 2 {\n"
        "w: recv 2b from 0 tag 2\n"     /* b */
        "x: recv 1b from 0 tag 1\n"     /* a: first of tag 1 from 0 */
        "y: recv 3b from -1 tag 1\n"    /* c: posted after x, once x is done */
        "z: recv 4b from -1 tag -1\n"   /* d */
        "y requires x\n"
        "z requires y\n"
        "}\n";
    amc_goal_t g = parse_ok(text, "matching");

    if (g == NULL) {
        return;
    }
    CHECK(amc_goal_compile(g) == AMC_SUCCESS, "compile: %s", amc_goal_error(g));
    CHECK(g->ranks[2].acts[0].mate_rank == 0 && g->ranks[2].acts[0].mate_act == 1, "w gets b");
    CHECK(g->ranks[2].acts[1].mate_rank == 0 && g->ranks[2].acts[1].mate_act == 0, "x gets a");
    CHECK(g->ranks[2].acts[2].mate_rank == 0 && g->ranks[2].acts[2].mate_act == 2,
          "y gets c, not d (rank %d act %d)", g->ranks[2].acts[2].mate_rank,
          g->ranks[2].acts[2].mate_act);
    CHECK(g->ranks[2].acts[3].mate_rank == 1 && g->ranks[2].acts[3].mate_act == 0, "z gets d");
    /* the engine tags: rank 0's three messages to 2 numbered in its order */
    CHECK(g->ranks[0].acts[0].wire_tag == 0 && g->ranks[0].acts[1].wire_tag == 1 &&
          g->ranks[0].acts[2].wire_tag == 2 && g->ranks[2].acts[0].wire_tag == 1 &&
          g->ranks[2].acts[1].wire_tag == 0 && g->ranks[2].acts[2].wire_tag == 2,
          "wire tags");
    amc_goal_free(&g);
}

/* The C interface: the same checks, errors without a file. */
static void c_interface(void)
{
    amc_goal_t g;
    int        a, b, c;
    size_t     bytes;

    CHECK(amc_goal_create(0, &g) == AMC_ERR_ARG, "size 0");
    CHECK(amc_goal_create(2, &g) == AMC_SUCCESS, "create");
    CHECK(amc_goal_send(g, 0, 1, -1, 8, AMC_GOAL_BUF_SEND, 0, &a) == AMC_ERR_ARG, "send tag -1");
    CHECK(amc_goal_send(g, 2, 1, 0, 8, AMC_GOAL_BUF_SEND, 0, &a) == AMC_ERR_ARG, "rank 2 of 2");
    CHECK(amc_goal_send(g, 0, 1, 0, 8, AMC_GOAL_NBUFS, 0, &a) == AMC_ERR_ARG, "bad buffer");
    CHECK(amc_goal_send(g, 0, 1, 0, 8, AMC_GOAL_BUF_SEND, 16, &a) == AMC_SUCCESS && a == 0,
          "send");
    CHECK(amc_goal_recv(g, 1, 0, 0, 8, AMC_GOAL_BUF_RECV, 0, &b) == AMC_SUCCESS && b == 0,
          "recv");
    CHECK(amc_goal_calc(g, 1, 5, &c) == AMC_SUCCESS && c == 1, "calc");
    CHECK(amc_goal_requires(g, 1, c, c) == AMC_ERR_ARG, "self edge");
    CHECK(amc_goal_requires(g, 1, c, 7) == AMC_ERR_ARG, "edge to nothing");
    CHECK(amc_goal_requires(g, 1, c, b) == AMC_SUCCESS, "edge");
    CHECK(amc_goal_buffer_bytes(g, 0, AMC_GOAL_BUF_SEND, &bytes) == AMC_ERR_ARG,
          "sizes only once compiled");
    CHECK(amc_goal_compile(g) == AMC_SUCCESS, "compile: %s", amc_goal_error(g));
    CHECK(amc_goal_buffer_bytes(g, 0, AMC_GOAL_BUF_SEND, &bytes) == AMC_SUCCESS && bytes == 24,
          "send extent %zu", bytes);
    CHECK(amc_goal_buffer_bytes(g, 1, AMC_GOAL_BUF_RECV, &bytes) == AMC_SUCCESS && bytes == 8,
          "recv extent %zu", bytes);
    CHECK(amc_goal_calc(g, 1, 5, &c) == AMC_ERR_ARG, "compiled: read-only");
    CHECK(amc_goal_free(&g) == AMC_SUCCESS && g == NULL, "free");

    CHECK(amc_goal_create(2, &g) == AMC_SUCCESS, "create");
    amc_goal_send(g, 0, 1, 4, 8, AMC_GOAL_BUF_SEND, 0, &a);
    CHECK(amc_goal_compile(g) == AMC_ERR_ARG, "unmatched send");
    CHECK(!strncmp(amc_goal_error(g), "rank 0 act 0: ", 14) &&
          strstr(amc_goal_error(g), "no matching receive") != NULL, "error [%s]",
          amc_goal_error(g));
    amc_goal_free(&g);
}

/* Every built-in algorithm of every collective (the v-forms with equal
 * blocks), every N up to 9, plain and with data: exported as GOAL, it
 * compiles (matched, acyclic, no rendezvous deadlock), and the plain text
 * parses back to the same text. */
static void exports(void)
{
    amc_goal_t g, g2;
    char       err[256], *t1, *t2;
    size_t     i;
    int        n, data, nalgs = 0;

    for (i = 0; i < amc_alg_count(); i++) {
        const amc_alg_t *alg  = amc_alg_at(i);
        const char      *coll = amc_coll_name(alg->coll);

        nalgs++;
        for (n = 1; n <= 9; n++) {
            for (data = 0; data < 2; data++) {
                int status = amc_goal_from_builtin(coll, alg->name, n, 96, n - 1, data, &g,
                                                   err, sizeof(err));

                CHECK(status == AMC_SUCCESS, "export %s/%s N=%d: %s", coll, alg->name, n, err);
                if (status != AMC_SUCCESS) {
                    continue;
                }
                t1 = write_text(g);
                CHECK(amc_goal_compile(g) == AMC_SUCCESS, "export %s/%s N=%d data=%d: %s",
                      coll, alg->name, n, data, amc_goal_error(g));
                g2 = (t1 != NULL) ? parse_ok(t1, coll) : NULL;
                t2 = (g2 != NULL) ? write_text(g2) : NULL;
                CHECK((t2 != NULL) && !strcmp(t1, t2), "export %s/%s N=%d: round trip", coll,
                      alg->name, n);
                CHECK(data || (strstr(t1, " buf ") == NULL && strstr(t1, "copy") == NULL),
                      "export %s/%s N=%d: plain GOAL", coll, alg->name, n);
                free(t1);
                free(t2);
                if (g2 != NULL) {
                    amc_goal_free(&g2);
                }
                amc_goal_free(&g);
            }
        }
    }
    CHECK(nalgs >= 24, "only %d algorithms exported", nalgs);
    CHECK(amc_goal_from_builtin("bcast", "nosuch", 4, 8, 0, 0, &g, err, sizeof(err)) ==
          AMC_ERR_ARG && strstr(err, "no algorithm") != NULL, "unknown algorithm: %s", err);
}

int main(void)
{
    constructs();
    syntax_errors();
    compile_errors();
    matching();
    c_interface();
    exports();
    return amc_test_summary("test_goal_parse");
}
