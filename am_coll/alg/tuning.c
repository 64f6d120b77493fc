/* SPDX-License-Identifier: BSD-3-Clause */
/* The rules of AMC_TUNING_FILE and the built-in ones (am_coll/alg/tuning.h):
 * parsed and resolved to algorithm table entries once, so that a call only
 * compares numbers. */
#include "am_coll/alg/tuning.h"

#include "am_coll/alg/alg.h"
#include "am_coll/sched/sched.h"
#include "base/status.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define AMC_TUNING_FIELDS 6

static int amc_tuning_coll_find(const char *name)
{
    int coll;

    /* a GOAL schedule is the user's own: nothing to choose */
    for (coll = AMC_COLL_NONE + 1; coll < AMC_COLL_LAST; coll++) {
        if ((coll != AMC_COLL_GOAL) && (strcmp(amc_coll_name(coll), name) == 0)) {
            return coll;
        }
    }
    return -1;
}

static int amc_tuning_number(const char *text, unsigned long long max, unsigned long long *value)
{
    char *end;

    if ((text[0] < '0') || (text[0] > '9')) {
        return AMC_ERR_ARG; /* strtoull would take a sign or blanks */
    }
    errno  = 0;
    *value = strtoull(text, &end, 10);
    return ((errno != 0) || (*end != '\0') || (*value > max)) ? AMC_ERR_ARG : AMC_SUCCESS;
}

/* One line without its comment: 0 fields (blank), or a rule into *rule. */
static int amc_tuning_parse_line(char *text, const char *path, unsigned line,
                                 const amc_log_t *log, amc_tuning_rule_t *rule, int *empty)
{
    static const char *what[4] = { "MIN_RANKS", "MAX_RANKS", "MIN_BYTES", "MAX_BYTES" };
    char              *field[AMC_TUNING_FIELDS + 1], *save = NULL, *tok;
    unsigned long long num[4];
    int                nfields = 0, coll, i;

    for (tok = strtok_r(text, " \t\r\n", &save); (tok != NULL) && (nfields <= AMC_TUNING_FIELDS);
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        field[nfields++] = tok;
    }
    *empty = (nfields == 0);
    if (*empty) {
        return AMC_SUCCESS;
    }
    if (nfields != AMC_TUNING_FIELDS) {
        amc_error(log, "AMC_TUNING_FILE %s:%u: %s fields, expected 6: COLL MIN_RANKS MAX_RANKS "
                  "MIN_BYTES MAX_BYTES ALGORITHM", path, line,
                  (nfields > AMC_TUNING_FIELDS) ? "more than 6" : "fewer than 6");
        return AMC_ERR_ARG;
    }
    coll = amc_tuning_coll_find(field[0]);
    if (coll < 0) {
        amc_error(log, "AMC_TUNING_FILE %s:%u: unknown collective '%s'", path, line, field[0]);
        return AMC_ERR_ARG;
    }
    for (i = 0; i < 4; i++) {
        if (amc_tuning_number(field[1 + i], (i < 2) ? INT_MAX : SIZE_MAX, &num[i]) !=
            AMC_SUCCESS) {
            amc_error(log, "AMC_TUNING_FILE %s:%u: %s '%s' is not a number from 0 to %llu",
                      path, line, what[i], field[1 + i],
                      (i < 2) ? (unsigned long long)INT_MAX : (unsigned long long)SIZE_MAX);
            return AMC_ERR_ARG;
        }
    }
    if ((num[0] > num[1]) || (num[2] > num[3])) {
        amc_error(log, "AMC_TUNING_FILE %s:%u: %s above %s", path, line,
                  (num[0] > num[1]) ? "MIN_RANKS" : "MIN_BYTES",
                  (num[0] > num[1]) ? "MAX_RANKS" : "MAX_BYTES");
        return AMC_ERR_ARG;
    }
    /* every barrier algorithm of the table runs on the engine: the fast
     * path has no name, so no rule can ask for it (no match keeps it) */
    rule->alg = amc_alg_find(coll, field[5]);
    if (rule->alg == NULL) {
        amc_error(log, "AMC_TUNING_FILE %s:%u: %s has no algorithm '%s' (amc_info lists "
                  "each collective's)", path, line, field[0], field[5]);
        return AMC_ERR_ARG;
    }
    rule->min_ranks = (int)num[0];
    rule->max_ranks = (int)num[1];
    rule->min_bytes = (size_t)num[2];
    rule->max_bytes = (size_t)num[3];
    rule->line      = line;
    return AMC_SUCCESS;
}

/* The rules of each collective together, in file order, as the call path
 * scans them. */
static int amc_tuning_group(amc_tuning_t *t, const amc_tuning_rule_t *parsed, unsigned count)
{
    unsigned fill[AMC_COLL_LAST], i, c, next = 0;

    t->rules = malloc((count > 0 ? count : 1) * sizeof(*t->rules));
    if (t->rules == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    for (i = 0; i < count; i++) {
        t->n[parsed[i].alg->coll]++;
    }
    for (c = 0; c < AMC_COLL_LAST; c++) {
        t->first[c] = next;
        fill[c]     = next;
        next       += t->n[c];
    }
    for (i = 0; i < count; i++) {
        t->rules[fill[parsed[i].alg->coll]++] = parsed[i];
    }
    t->count = count;
    return AMC_SUCCESS;
}

/* The rules of one source appended to parsed[0 .. *count); file is closed. */
static int amc_tuning_read(FILE *file, const char *path, int builtin, const amc_log_t *log,
                           amc_tuning_rule_t **parsed, unsigned *count, unsigned *cap)
{
    amc_tuning_rule_t *grown, rule;
    unsigned           line = 0;
    char              *text = NULL, *hash;
    size_t             text_cap = 0;
    int                status = AMC_SUCCESS, empty;

    while (getline(&text, &text_cap, file) >= 0) {
        line++;
        hash = strchr(text, '#');
        if (hash != NULL) {
            *hash = '\0';
        }
        status = amc_tuning_parse_line(text, path, line, log, &rule, &empty);
        if (status != AMC_SUCCESS) {
            goto out;
        }
        if (empty) {
            continue;
        }
        if (*count == *cap) {
            *cap  = (*cap == 0) ? 16 : 2 * *cap;
            grown = realloc(*parsed, *cap * sizeof(**parsed));
            if (grown == NULL) {
                amc_error(log, "AMC_TUNING_FILE %s:%u: out of memory", path, line);
                status = AMC_ERR_NO_MEMORY;
                goto out;
            }
            *parsed = grown;
        }
        rule.builtin          = builtin;
        (*parsed)[(*count)++] = rule;
    }
    if (ferror(file)) {
        amc_error(log, "AMC_TUNING_FILE %s:%u: read error", path, line + 1);
        status = AMC_ERR_ARG;
    }
out:
    free(text);
    fclose(file);
    return status;
}

int amc_tuning_load(amc_tuning_t *t, const char *path, int builtin, const amc_log_t *log)
{
    static const char  builtin_name[] = "(built-in) tuning_builtin.rules";
    amc_tuning_rule_t *parsed = NULL;
    unsigned           count = 0, cap = 0;
    FILE              *file;
    int                status = AMC_SUCCESS;

    memset(t, 0, sizeof(*t));
    if (path[0] != '\0') {
        file = fopen(path, "r");
        if (file == NULL) {
            amc_error(log, "AMC_TUNING_FILE %s: cannot read it: %s", path, strerror(errno));
            return AMC_ERR_ARG;
        }
        status = amc_tuning_read(file, path, 0, log, &parsed, &count, &cap);
        if (status != AMC_SUCCESS) {
            goto out;
        }
    }
    if (builtin) {
        /* read as a file is, so that the installed copy and these rules
         * cannot mean different things */
        file = fmemopen((void *)amc_tuning_builtin_text, strlen(amc_tuning_builtin_text), "r");
        if (file == NULL) {
            amc_error(log, "%s: cannot open it: %s", builtin_name, strerror(errno));
            status = AMC_ERR_NO_MEMORY;
            goto out;
        }
        status = amc_tuning_read(file, builtin_name, 1, log, &parsed, &count, &cap);
        if (status != AMC_SUCCESS) {
            goto out;
        }
    }
    status = amc_tuning_group(t, parsed, count);
    if (status != AMC_SUCCESS) {
        amc_error(log, "AMC_TUNING_FILE %s: out of memory", path);
    }
out:
    if (status != AMC_SUCCESS) {
        amc_tuning_free(t);
    }
    free(parsed);
    return status;
}

void amc_tuning_free(amc_tuning_t *t)
{
    free(t->rules);
    memset(t, 0, sizeof(*t));
}

void amc_tuning_print(FILE *stream, const amc_tuning_t *t, const char *path)
{
    const amc_tuning_rule_t *r;
    unsigned                 i;

    if (t->count == 0) {
        fprintf(stream, "#\n# rules in effect: none (%s%s, AMC_TUNING_BUILTIN=0 or no built-in "
                "rules)\n", (path[0] == '\0') ? "AMC_TUNING_FILE is empty" : path,
                (path[0] == '\0') ? "" : " has no rules");
        return;
    }
    fprintf(stream, "#\n# rules in effect (AMC_TUNING_FILE %s, then the built-in ones; first "
            "match wins, forced AMC_<COLL>_ALG first):\n#   COLL MIN_RANKS MAX_RANKS MIN_BYTES "
            "MAX_BYTES ALGORITHM\n", (path[0] == '\0') ? "empty" : path);
    for (i = 0; i < t->count; i++) {
        r = &t->rules[i];
        /* commented like the rest, so that the output stays a valid env file */
        fprintf(stream, "#   %s %d %d %zu %zu %s  (%sline %u)\n", amc_coll_name(r->alg->coll),
                r->min_ranks, r->max_ranks, r->min_bytes, r->max_bytes, r->alg->name,
                r->builtin ? "built-in, " : "", r->line);
    }
}
