/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL as text: the language LogGOPSim's txt2bin reads, and amcoll's
 * extensions for real data.
 *
 *   num_ranks N
 *   rank R {
 *     l1: send 8b to 1 tag 0 cpu 0 nic 0      // tag, cpu, nic optional
 *     l2: recv 8b from -1 tag -1              (-1: any source, any tag)
 *     l3: calc 100 cpu 0
 *     l3 requires l2
 *     l1 irequires l2
 *   }
 *
 * Extensions (amcoll only): "buf NAME OFF" after a send or receive says
 * where its data is (default: the scratch buffer tmp at 0); "copy Nb from
 * NAME OFF to NAME OFF"; "reduce Nb OP TYPE from NAME OFF to NAME OFF
 * [right]" (to = from (op) to; right: to = to (op) from). Buffers: send and
 * recv (the caller's), tmp, tmp1 .. tmp5 (scratch).
 *
 * Beyond what txt2bin takes, the parser also takes labels used before they
 * are defined, options in any order, comments after a statement, and ranks
 * in any order. Errors give file, line and column.
 */
#include "am_coll/goal/goal.h"
#include "am_coll/goal/goal_names.h"
#include "am_coll/context/datatype.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- scanner */

typedef enum {
    AMC_TOK_EOF,
    AMC_TOK_NL,
    AMC_TOK_WORD,   /* [a-zA-Z][a-zA-Z0-9_]* */
    AMC_TOK_INT,    /* [0-9]+, or -1 */
    AMC_TOK_SIZE,   /* [0-9]+ followed by b: 8b */
    AMC_TOK_COLON,
    AMC_TOK_OPEN,
    AMC_TOK_CLOSE,
    AMC_TOK_BAD
} amc_tok_kind_t;

typedef struct {
    int                 kind;
    const char         *s;
    size_t              len;
    unsigned long long  num;
    int                 neg;  /* -1 */
    uint32_t            line;
    uint32_t            col;
} amc_tok_t;

typedef struct {
    const char *p;
    const char *end;
    uint32_t    line;
    const char *line_start;
    amc_tok_t   tok;      /* the current token */
    amc_goal_t  g;
    char       *err;
    size_t      errlen;
    const char *name;
    int         failed;
} amc_parser_t;

static int amc_parse_error(amc_parser_t *ps, uint32_t line, uint32_t col, const char *fmt, ...)
{
    va_list ap;
    size_t  n;

    if (ps->failed) {
        return AMC_ERR_ARG;
    }
    ps->failed = 1;
    if ((ps->err == NULL) || (ps->errlen == 0)) {
        return AMC_ERR_ARG;
    }
    n = (size_t)snprintf(ps->err, ps->errlen, "%s:%u:%u: ", ps->name, line, col);
    if (n < ps->errlen) {
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - n, fmt, ap);
        va_end(ap);
    }
    return AMC_ERR_ARG;
}

/* Skips blanks and comments (a block comment may span lines: its newlines
 * count, but are no statement ends), then reads one token. */
static int amc_next(amc_parser_t *ps)
{
    amc_tok_t *t = &ps->tok;

    for (;;) {
        while ((ps->p < ps->end) && ((*ps->p == ' ') || (*ps->p == '\t') || (*ps->p == '\r'))) {
            ps->p++;
        }
        if ((ps->p + 1 < ps->end) && (ps->p[0] == '/') && (ps->p[1] == '/')) {
            while ((ps->p < ps->end) && (*ps->p != '\n')) {
                ps->p++;
            }
            continue;
        }
        if ((ps->p + 1 < ps->end) && (ps->p[0] == '/') && (ps->p[1] == '*')) {
            uint32_t line = ps->line, col = (uint32_t)(ps->p - ps->line_start) + 1;

            ps->p += 2;
            while ((ps->p + 1 < ps->end) && !((ps->p[0] == '*') && (ps->p[1] == '/'))) {
                if (*ps->p == '\n') {
                    ps->line++;
                    ps->line_start = ps->p + 1;
                }
                ps->p++;
            }
            if (ps->p + 1 >= ps->end) {
                return amc_parse_error(ps, line, col, "comment \"/*\" is never closed");
            }
            ps->p += 2;
            continue;
        }
        break;
    }
    memset(t, 0, sizeof(*t));
    t->line = ps->line;
    t->col  = (uint32_t)(ps->p - ps->line_start) + 1;
    t->s    = ps->p;
    if (ps->p >= ps->end) {
        t->kind = AMC_TOK_EOF;
        return AMC_SUCCESS;
    }
    if (*ps->p == '\n') {
        t->kind = AMC_TOK_NL;
        t->len  = 1;
        ps->p++;
        ps->line++;
        ps->line_start = ps->p;
        return AMC_SUCCESS;
    }
    if (isalpha((unsigned char)*ps->p)) {
        while ((ps->p < ps->end) && (isalnum((unsigned char)*ps->p) || (*ps->p == '_'))) {
            ps->p++;
        }
        t->kind = AMC_TOK_WORD;
        t->len  = (size_t)(ps->p - t->s);
        return AMC_SUCCESS;
    }
    if ((*ps->p == '-') && (ps->p + 1 < ps->end) && (ps->p[1] == '1') &&
        !((ps->p + 2 < ps->end) && isalnum((unsigned char)ps->p[2]))) {
        ps->p  += 2;
        t->kind = AMC_TOK_INT;
        t->neg  = 1;
        t->len  = 2;
        return AMC_SUCCESS;
    }
    if (isdigit((unsigned char)*ps->p)) {
        while ((ps->p < ps->end) && isdigit((unsigned char)*ps->p)) {
            if (t->num > (~0ULL - 9) / 10) {
                return amc_parse_error(ps, t->line, t->col, "number too large");
            }
            t->num = t->num * 10 + (unsigned)(*ps->p - '0');
            ps->p++;
        }
        t->kind = AMC_TOK_INT;
        /* txt2bin's sizes: digits, blanks allowed, then b */
        {
            const char *q = ps->p;

            while ((q < ps->end) && ((*q == ' ') || (*q == '\t'))) {
                q++;
            }
            if ((q < ps->end) && (*q == 'b') &&
                !((q + 1 < ps->end) && (isalnum((unsigned char)q[1]) || (q[1] == '_')))) {
                ps->p   = q + 1;
                t->kind = AMC_TOK_SIZE;
            }
        }
        t->len = (size_t)(ps->p - t->s);
        return AMC_SUCCESS;
    }
    t->len = 1;
    switch (*ps->p++) {
    case ':': t->kind = AMC_TOK_COLON; break;
    case '{': t->kind = AMC_TOK_OPEN; break;
    case '}': t->kind = AMC_TOK_CLOSE; break;
    default:  t->kind = AMC_TOK_BAD; break;
    }
    return AMC_SUCCESS;
}

static int amc_is_word(const amc_tok_t *t, const char *w)
{
    return (t->kind == AMC_TOK_WORD) && (t->len == strlen(w)) && !memcmp(t->s, w, t->len);
}

/* The current token, quoted, for messages. */
static const char *amc_tok_text(const amc_tok_t *t, char *buf, size_t len)
{
    switch (t->kind) {
    case AMC_TOK_EOF: return "the end of the file";
    case AMC_TOK_NL:  return "the end of the line";
    default:
        snprintf(buf, len, "\"%.*s\"", (int)((t->len < 32) ? t->len : 32), t->s);
        return buf;
    }
}

static int amc_expected(amc_parser_t *ps, const char *what)
{
    char buf[48];

    return amc_parse_error(ps, ps->tok.line, ps->tok.col, "expected %s, found %s", what,
                           amc_tok_text(&ps->tok, buf, sizeof(buf)));
}

/* ---------------------------------------------------------------- parser */

typedef struct {
    char    *a;
    char    *b;
    int      start;
    uint32_t line;
    uint32_t col;
} amc_pending_dep_t;

typedef struct {
    int                rank;
    amc_pending_dep_t *deps;
    uint32_t           ndeps;
    uint32_t           cap;
} amc_block_t;

static int amc_expect_int(amc_parser_t *ps, int allow_any, const char *what, long long *v)
{
    int status = amc_next(ps);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((ps->tok.kind != AMC_TOK_INT) || (ps->tok.neg && (allow_any <= 0))) {
        return amc_expected(ps, what);
    }
    if (!ps->tok.neg && (ps->tok.num > (unsigned long long)INT32_MAX) && (allow_any >= 0)) {
        return amc_parse_error(ps, ps->tok.line, ps->tok.col, "%s too large", what);
    }
    *v = ps->tok.neg ? -1 : (long long)ps->tok.num;
    return AMC_SUCCESS;
}

static int amc_expect_size(amc_parser_t *ps, const char *what, size_t *v)
{
    int status = amc_next(ps);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (ps->tok.kind != AMC_TOK_SIZE) {
        return amc_expected(ps, what);
    }
    *v = (size_t)ps->tok.num;
    return AMC_SUCCESS;
}

static int amc_expect_offset(amc_parser_t *ps, size_t *v)
{
    int status = amc_next(ps);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((ps->tok.kind != AMC_TOK_INT) || ps->tok.neg) {
        return amc_expected(ps, "an offset in bytes");
    }
    *v = (size_t)ps->tok.num;
    return AMC_SUCCESS;
}

static int amc_expect_word(amc_parser_t *ps, const char *w)
{
    char what[32];
    int  status = amc_next(ps);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (!amc_is_word(&ps->tok, w)) {
        snprintf(what, sizeof(what), "\"%s\"", w);
        return amc_expected(ps, what);
    }
    return AMC_SUCCESS;
}

static int amc_expect_buf(amc_parser_t *ps, uint8_t *buf, size_t *off)
{
    int status = amc_next(ps), b;

    if (status != AMC_SUCCESS) {
        return status;
    }
    b = (ps->tok.kind == AMC_TOK_WORD)
            ? amc_goal_buf_parse(ps->tok.s, ps->tok.len) : -1;
    if (b < 0) {
        return amc_expected(ps, "a buffer (send, recv, tmp, tmp1 .. tmp5)");
    }
    *buf = (uint8_t)b;
    return amc_expect_offset(ps, off);
}

/* After a send's or receive's peer: tag, cpu, nic, buf, to the line's end. */
static int amc_parse_msg_options(amc_parser_t *ps, amc_goal_act_t *act)
{
    long long v;
    int       status;

    for (;;) {
        status = amc_next(ps);
        if (status != AMC_SUCCESS) {
            return status;
        }
        if ((ps->tok.kind == AMC_TOK_NL) || (ps->tok.kind == AMC_TOK_EOF)) {
            return AMC_SUCCESS;
        }
        if (amc_is_word(&ps->tok, "tag")) {
            uint32_t line = ps->tok.line, col = ps->tok.col;

            status = amc_expect_int(ps, 1, "a tag (or -1)", &v);
            if ((status == AMC_SUCCESS) && (v < 0) && (act->type == AMC_GOAL_SEND)) {
                return amc_parse_error(ps, line, col, "a send's tag cannot be -1 (any)");
            }
            act->tag = (int)v;
        } else if (amc_is_word(&ps->tok, "cpu")) {
            status   = amc_expect_int(ps, 0, "a cpu number", &v);
            act->cpu = (int)v;
        } else if (amc_is_word(&ps->tok, "nic")) {
            status   = amc_expect_int(ps, 0, "a nic number", &v);
            act->nic = (int)v;
        } else if (amc_is_word(&ps->tok, "buf")) {
            status            = amc_expect_buf(ps, &act->buf, &act->off);
            act->explicit_buf = 1;
        } else {
            return amc_expected(ps, "\"tag\", \"cpu\", \"nic\", \"buf\" or the end of the line");
        }
        if (status != AMC_SUCCESS) {
            return status;
        }
    }
}

static int amc_expect_eol(amc_parser_t *ps, const char *what)
{
    int status = amc_next(ps);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((ps->tok.kind != AMC_TOK_NL) && (ps->tok.kind != AMC_TOK_EOF)) {
        return amc_expected(ps, what);
    }
    return AMC_SUCCESS;
}

/* One action, its keyword the current token. */
static int amc_parse_action(amc_parser_t *ps, int rank, const amc_tok_t *label)
{
    amc_goal_t      g    = ps->g;
    uint32_t        line = label ? label->line : ps->tok.line;
    uint32_t        col  = label ? label->col : ps->tok.col;
    amc_goal_act_t *act;
    long long       v;
    size_t          bytes = 0;
    int             status, type, x;

    if (amc_is_word(&ps->tok, "send")) {
        type = AMC_GOAL_SEND;
    } else if (amc_is_word(&ps->tok, "recv")) {
        type = AMC_GOAL_RECV;
    } else if (amc_is_word(&ps->tok, "calc")) {
        type = AMC_GOAL_CALC;
    } else if (amc_is_word(&ps->tok, "copy")) {
        type = AMC_GOAL_COPY;
    } else if (amc_is_word(&ps->tok, "reduce")) {
        type = AMC_GOAL_REDUCE;
    } else {
        return amc_expected(ps, "\"send\", \"recv\", \"calc\", \"copy\" or \"reduce\"");
    }
    if (type == AMC_GOAL_CALC) {
        status = amc_expect_int(ps, -1, "a number (the calc's cost)", &v);
        if (status != AMC_SUCCESS) {
            return status;
        }
        bytes = (size_t)ps->tok.num;
    } else {
        status = amc_expect_size(ps, "a size in bytes (like 8b)", &bytes);
        if (status != AMC_SUCCESS) {
            return status;
        }
    }
    /* the act is added now: its fields are filled as they are read */
    status = amc_goal_add_act(g, rank, type, &act);
    if (status != AMC_SUCCESS) {
        return amc_parse_error(ps, line, col, "out of memory");
    }
    act->bytes = bytes;
    act->line  = line;
    act->col   = col;
    act->buf   = AMC_GOAL_BUF_TMP;
    if (label != NULL) {
        act->label = strndup(label->s, label->len);
        if (act->label == NULL) {
            return amc_parse_error(ps, line, col, "out of memory");
        }
    }
    switch (type) {
    case AMC_GOAL_SEND:
    case AMC_GOAL_RECV:
        status = amc_expect_word(ps, (type == AMC_GOAL_SEND) ? "to" : "from");
        if (status == AMC_SUCCESS) {
            uint32_t pl, pc;

            status = amc_expect_int(ps, type == AMC_GOAL_RECV, "a rank", &v);
            pl     = ps->tok.line;
            pc     = ps->tok.col;
            if ((status == AMC_SUCCESS) && (v >= g->nranks)) {
                return amc_parse_error(ps, pl, pc, "rank %lld is not below num_ranks %d", v,
                                       g->nranks);
            }
            if ((status == AMC_SUCCESS) && (v == rank)) {
                return amc_parse_error(ps, pl, pc, "a message to rank %d itself", rank);
            }
            act->peer = (int)v;
        }
        if (status == AMC_SUCCESS) {
            status = amc_parse_msg_options(ps, act);
        }
        return status;
    case AMC_GOAL_CALC:
        status = amc_next(ps);
        if ((status == AMC_SUCCESS) && amc_is_word(&ps->tok, "cpu")) {
            status = amc_expect_int(ps, 0, "a cpu number", &v);
            act->cpu = (int)v;
            if (status == AMC_SUCCESS) {
                status = amc_next(ps);
            }
        }
        if ((status == AMC_SUCCESS) && (ps->tok.kind != AMC_TOK_NL) &&
            (ps->tok.kind != AMC_TOK_EOF)) {
            return amc_expected(ps, "\"cpu\" or the end of the line");
        }
        return status;
    case AMC_GOAL_REDUCE:
        status = amc_next(ps);
        if (status != AMC_SUCCESS) {
            return status;
        }
        x = (ps->tok.kind == AMC_TOK_WORD) ? amc_goal_op_parse(ps->tok.s, ps->tok.len) : -1;
        if (x < 0) {
            return amc_expected(ps, "an op (sum, prod, min, max, land, lor, lxor, band, bor, "
                                "bxor)");
        }
        act->op = x;
        status  = amc_next(ps);
        if (status != AMC_SUCCESS) {
            return status;
        }
        x = (ps->tok.kind == AMC_TOK_WORD) ? amc_goal_dt_parse(ps->tok.s, ps->tok.len) : -1;
        if (x < 0) {
            return amc_expected(ps, "a datatype (int32, double, ...)");
        }
        act->dt = (amc_datatype_t)x;
        __attribute__((fallthrough)); /* from ... to ... */
    default:
        status = amc_expect_word(ps, "from");
        if (status == AMC_SUCCESS) {
            status = amc_expect_buf(ps, &act->buf2, &act->off2);
        }
        if (status == AMC_SUCCESS) {
            status = amc_expect_word(ps, "to");
        }
        if (status == AMC_SUCCESS) {
            status = amc_expect_buf(ps, &act->buf, &act->off);
        }
        if (status != AMC_SUCCESS) {
            return status;
        }
        status = amc_next(ps);
        if ((status == AMC_SUCCESS) && (type == AMC_GOAL_REDUCE) &&
            amc_is_word(&ps->tok, "right")) {
            act->right = 1;
            status     = amc_next(ps);
        }
        if ((status == AMC_SUCCESS) && (ps->tok.kind != AMC_TOK_NL) &&
            (ps->tok.kind != AMC_TOK_EOF)) {
            return amc_expected(ps, (type == AMC_GOAL_REDUCE) ? "\"right\" or the end of the "
                                "line" : "the end of the line");
        }
        return status;
    }
}

static int amc_block_dep(amc_parser_t *ps, amc_block_t *blk, const amc_tok_t *a, int start)
{
    amc_pending_dep_t *d;
    int                status;

    status = amc_next(ps);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if (ps->tok.kind != AMC_TOK_WORD) {
        return amc_expected(ps, "a label");
    }
    if (blk->ndeps == blk->cap) {
        blk->cap = blk->cap ? 2 * blk->cap : 32;
        d        = realloc(blk->deps, blk->cap * sizeof(*d));
        if (d == NULL) {
            return amc_parse_error(ps, a->line, a->col, "out of memory");
        }
        blk->deps = d;
    }
    d        = &blk->deps[blk->ndeps++];
    d->a     = strndup(a->s, a->len);
    d->b     = strndup(ps->tok.s, ps->tok.len);
    d->start = start;
    d->line  = ps->tok.line; /* reported at the label that may be unknown */
    d->col   = ps->tok.col;
    if ((d->a == NULL) || (d->b == NULL)) {
        return amc_parse_error(ps, a->line, a->col, "out of memory");
    }
    return amc_expect_eol(ps, "the end of the line");
}

static int amc_label_find(const amc_goal_rank_t *r, const char *label)
{
    uint32_t a;

    for (a = 0; a < r->nacts; a++) {
        if ((r->acts[a].label != NULL) && !strcmp(r->acts[a].label, label)) {
            return (int)a;
        }
    }
    return -1;
}

/* At the block's end: labels unique, and the dependencies resolved. */
static int amc_block_finish(amc_parser_t *ps, amc_block_t *blk)
{
    amc_goal_rank_t *r = &ps->g->ranks[blk->rank];
    uint32_t         i, j;
    int              a, b, status = AMC_SUCCESS;

    for (i = 0; (i < r->nacts) && (status == AMC_SUCCESS); i++) {
        for (j = 0; (j < i) && (r->acts[i].label != NULL); j++) {
            if ((r->acts[j].label != NULL) && !strcmp(r->acts[i].label, r->acts[j].label)) {
                status = amc_parse_error(ps, r->acts[i].line, r->acts[i].col,
                                         "label %s defined twice in rank %d (first at line %u)",
                                         r->acts[i].label, blk->rank, r->acts[j].line);
                break;
            }
        }
    }
    for (i = 0; (i < blk->ndeps) && (status == AMC_SUCCESS); i++) {
        amc_pending_dep_t *d = &blk->deps[i];

        a = amc_label_find(r, d->a);
        b = amc_label_find(r, d->b);
        if ((a < 0) || (b < 0)) {
            status = amc_parse_error(ps, d->line, d->col, "unknown label %s in rank %d",
                                     (a < 0) ? d->a : d->b, blk->rank);
        } else if (a == b) {
            status = amc_parse_error(ps, d->line, d->col, "cycle: %s requires itself", d->a);
        } else {
            status = d->start ? amc_goal_irequires(ps->g, blk->rank, a, b)
                              : amc_goal_requires(ps->g, blk->rank, a, b);
            if (status == AMC_SUCCESS) {
                amc_goal_dep_t *gd = &r->deps[r->ndeps - 1];

                gd->line = d->line;
                gd->col  = d->col;
            } else {
                status = amc_parse_error(ps, d->line, d->col, "out of memory");
            }
        }
    }
    for (i = 0; i < blk->ndeps; i++) {
        free(blk->deps[i].a);
        free(blk->deps[i].b);
    }
    blk->ndeps = 0;
    return status;
}

static int amc_parse_block(amc_parser_t *ps, int rank)
{
    amc_block_t blk = { rank, NULL, 0, 0 };
    amc_tok_t   first;
    int         status;

    for (;;) {
        status = amc_next(ps);
        if (status != AMC_SUCCESS) {
            break;
        }
        if (ps->tok.kind == AMC_TOK_NL) {
            continue;
        }
        if (ps->tok.kind == AMC_TOK_CLOSE) {
            status = amc_block_finish(ps, &blk);
            break;
        }
        if (ps->tok.kind == AMC_TOK_EOF) {
            status = amc_parse_error(ps, ps->tok.line, ps->tok.col,
                                     "the file ends inside rank %d's block: \"}\" missing",
                                     rank);
            break;
        }
        if (ps->tok.kind != AMC_TOK_WORD) {
            status = amc_expected(ps, "an action, a label or \"}\"");
            break;
        }
        if (amc_is_word(&ps->tok, "send") || amc_is_word(&ps->tok, "recv") ||
            amc_is_word(&ps->tok, "calc") || amc_is_word(&ps->tok, "copy") ||
            amc_is_word(&ps->tok, "reduce")) {
            status = amc_parse_action(ps, rank, NULL);
            if (status != AMC_SUCCESS) {
                break;
            }
            continue;
        }
        first  = ps->tok;
        status = amc_next(ps);
        if (status != AMC_SUCCESS) {
            break;
        }
        if (ps->tok.kind == AMC_TOK_COLON) {
            status = amc_next(ps);
            if (status == AMC_SUCCESS) {
                status = amc_parse_action(ps, rank, &first);
            }
        } else if (amc_is_word(&ps->tok, "requires")) {
            status = amc_block_dep(ps, &blk, &first, 0);
        } else if (amc_is_word(&ps->tok, "irequires")) {
            status = amc_block_dep(ps, &blk, &first, 1);
        } else {
            status = amc_expected(ps, "\":\", \"requires\" or \"irequires\"");
        }
        if (status != AMC_SUCCESS) {
            break;
        }
    }
    for (uint32_t i = 0; i < blk.ndeps; i++) {
        free(blk.deps[i].a);
        free(blk.deps[i].b);
    }
    free(blk.deps);
    return status;
}

int amc_goal_parse(const char *text, size_t len, const char *name, amc_goal_t *goal, char *err,
                   size_t errlen)
{
    amc_parser_t ps;
    long long    v;
    uint8_t     *seen = NULL;
    int          status = AMC_SUCCESS;

    if ((goal == NULL) || ((text == NULL) && (len > 0))) {
        return AMC_ERR_ARG;
    }
    *goal = NULL;
    memset(&ps, 0, sizeof(ps));
    ps.p          = text;
    ps.end        = text + len;
    ps.line       = 1;
    ps.line_start = text;
    ps.err        = err;
    ps.errlen     = errlen;
    ps.name       = (name != NULL) ? name : "<goal>";
    if ((err != NULL) && (errlen > 0)) {
        err[0] = '\0';
    }
    for (;;) {
        status = amc_next(&ps);
        if ((status != AMC_SUCCESS) || (ps.tok.kind == AMC_TOK_EOF)) {
            break;
        }
        if (ps.tok.kind == AMC_TOK_NL) {
            continue;
        }
        if (amc_is_word(&ps.tok, "num_ranks")) {
            uint32_t line = ps.tok.line, col = ps.tok.col;

            if (ps.g != NULL) {
                status = amc_parse_error(&ps, line, col, "num_ranks given twice");
                break;
            }
            status = amc_expect_int(&ps, 0, "the number of ranks", &v);
            if (status != AMC_SUCCESS) {
                break;
            }
            if ((v < 1) || (amc_goal_create((int)v, &ps.g) != AMC_SUCCESS) ||
                ((seen = calloc((size_t)v, 1)) == NULL)) {
                status = amc_parse_error(&ps, line, col, (v < 1) ? "num_ranks must be at "
                                         "least 1" : "out of memory");
                break;
            }
            snprintf(ps.g->name, sizeof(ps.g->name), "%s", ps.name);
            continue;
        }
        if (amc_is_word(&ps.tok, "rank")) {
            uint32_t line = ps.tok.line, col = ps.tok.col;

            if (ps.g == NULL) {
                status = amc_parse_error(&ps, line, col, "rank before num_ranks");
                break;
            }
            status = amc_expect_int(&ps, 0, "a rank number", &v);
            if (status != AMC_SUCCESS) {
                break;
            }
            if (v >= ps.g->nranks) {
                status = amc_parse_error(&ps, ps.tok.line, ps.tok.col, "rank %lld is not below "
                                         "num_ranks %d", v, ps.g->nranks);
                break;
            }
            if (seen[v]) {
                status = amc_parse_error(&ps, line, col, "rank %lld has two blocks", v);
                break;
            }
            seen[v] = 1;
            status  = amc_next(&ps);
            if ((status == AMC_SUCCESS) && (ps.tok.kind != AMC_TOK_OPEN)) {
                status = amc_expected(&ps, "\"{\"");
            }
            if (status == AMC_SUCCESS) {
                status = amc_parse_block(&ps, (int)v);
            }
            if (status != AMC_SUCCESS) {
                break;
            }
            continue;
        }
        status = amc_expected(&ps, (ps.g == NULL) ? "\"num_ranks\"" : "\"rank\"");
        break;
    }
    if ((status == AMC_SUCCESS) && (ps.g == NULL)) {
        status = amc_parse_error(&ps, ps.tok.line, ps.tok.col, "no num_ranks in the file");
    }
    free(seen);
    if (status != AMC_SUCCESS) {
        if (ps.g != NULL) {
            amc_goal_free(&ps.g);
        }
        return status;
    }
    *goal = ps.g;
    return AMC_SUCCESS;
}

/* ---------------------------------------------------------------- writer */

static const char *amc_goal_label(const amc_goal_act_t *act, uint32_t a, char *buf, size_t len)
{
    if (act->label != NULL) {
        return act->label;
    }
    snprintf(buf, len, "a%u", a);
    return buf;
}

int amc_goal_write(amc_goal_t g, FILE *f)
{
    char     la[32], lb[32];
    uint32_t a, d;
    int      r, n = 0;

    if ((g == NULL) || (f == NULL)) {
        return -1;
    }
    n += fprintf(f, "num_ranks %d\n", g->nranks);
    for (r = 0; r < g->nranks; r++) {
        const amc_goal_rank_t *rk = &g->ranks[r];

        n += fprintf(f, "\nrank %d {\n", r);
        for (a = 0; a < rk->nacts; a++) {
            const amc_goal_act_t *act = &rk->acts[a];

            n += fprintf(f, "%s: ", amc_goal_label(act, a, la, sizeof(la)));
            switch (act->type) {
            case AMC_GOAL_SEND:
            case AMC_GOAL_RECV:
                n += fprintf(f, "%s %zub %s %d tag %d", (act->type == AMC_GOAL_SEND) ? "send"
                             : "recv", act->bytes, (act->type == AMC_GOAL_SEND) ? "to" : "from",
                             act->peer, act->tag);
                if ((act->cpu != 0) || (act->nic != 0)) {
                    n += fprintf(f, " cpu %d", act->cpu);
                }
                if (act->nic != 0) {
                    n += fprintf(f, " nic %d", act->nic);
                }
                if ((act->buf != AMC_GOAL_BUF_TMP) || (act->off != 0)) {
                    n += fprintf(f, " buf %s %zu", amc_goal_buf_name(act->buf), act->off);
                }
                break;
            case AMC_GOAL_CALC:
                n += fprintf(f, "calc %zu", act->bytes);
                if (act->cpu != 0) {
                    n += fprintf(f, " cpu %d", act->cpu);
                }
                break;
            case AMC_GOAL_COPY:
                n += fprintf(f, "copy %zub from %s %zu to %s %zu", act->bytes,
                             amc_goal_buf_name(act->buf2), act->off2,
                             amc_goal_buf_name(act->buf), act->off);
                break;
            default:
                n += fprintf(f, "reduce %zub %s %s from %s %zu to %s %zu%s", act->bytes,
                             amc_goal_op_name(act->op) ? amc_goal_op_name(act->op) : "sum",
                             amc_goal_dt_name(act->dt), amc_goal_buf_name(act->buf2),
                             act->off2, amc_goal_buf_name(act->buf), act->off,
                             act->right ? " right" : "");
                break;
            }
            n += fprintf(f, "\n");
        }
        for (d = 0; d < rk->ndeps; d++) {
            const amc_goal_dep_t *dep = &rk->deps[d];

            n += fprintf(f, "%s %s %s\n",
                         amc_goal_label(&rk->acts[dep->act], dep->act, la, sizeof(la)),
                         dep->start ? "irequires" : "requires",
                         amc_goal_label(&rk->acts[dep->dep], dep->dep, lb, sizeof(lb)));
        }
        n += fprintf(f, "}\n");
    }
    return ferror(f) ? -1 : n;
}
