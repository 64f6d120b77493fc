/* SPDX-License-Identifier: BSD-3-Clause */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *amc_log_names[] = { "error", "warn", "info", "debug", "trace" };

int amc_log_level_parse(const char *name)
{
    int i;

    for (i = 0; i < (int)(sizeof(amc_log_names) / sizeof(amc_log_names[0])); i++) {
        if (strcasecmp(name, amc_log_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

const char *amc_log_level_name(int level)
{
    if ((level < 0) || (level > AMC_LOG_TRACE)) {
        return "?";
    }
    return amc_log_names[level];
}

amc_log_t amc_log_from_env(void)
{
    amc_log_t   log = { AMC_LOG_WARN, -1 };
    const char *env = getenv("AMC_LOG_LEVEL");
    int         level;

    if (env != NULL) {
        level = amc_log_level_parse(env);
        if (level >= 0) {
            log.level = level;
        }
    }
    return log;
}

void amc_log_write(const amc_log_t *log, int level, const char *file, int line,
                   const char *fmt, ...)
{
    char    msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    /* one fprintf per line so that lines of many ranks do not interleave */
    if (log->rank >= 0) {
        fprintf(stderr, "[amcoll %d:%d] %s %s:%d %s\n", (int)getpid(), log->rank,
                amc_log_level_name(level), file, line, msg);
    } else {
        fprintf(stderr, "[amcoll %d] %s %s:%d %s\n", (int)getpid(),
                amc_log_level_name(level), file, line, msg);
    }
}
