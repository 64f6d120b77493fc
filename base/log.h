/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leveled logging to stderr. A log object carries the level and the rank so
 * that many contexts in one process (unit tests) log independently.
 */
#ifndef AMC_LOG_H
#define AMC_LOG_H

enum {
    AMC_LOG_ERROR,
    AMC_LOG_WARN,
    AMC_LOG_INFO,
    AMC_LOG_DEBUG,
    AMC_LOG_TRACE
};

typedef struct amc_log {
    int level;
    int rank;   /* -1 until known */
} amc_log_t;

/* Level names as AMC_LOG_LEVEL accepts them; returns -1 for an unknown name. */
int         amc_log_level_parse(const char *name);
const char *amc_log_level_name(int level);

/* For code that runs before a context exists: level from AMC_LOG_LEVEL. */
amc_log_t   amc_log_from_env(void);

void amc_log_write(const amc_log_t *log, int level, const char *file, int line,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define amc_log(_log, _level, ...) \
    do { \
        if ((_level) <= (_log)->level) { \
            amc_log_write((_log), (_level), __FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)

#define amc_error(_log, ...) amc_log(_log, AMC_LOG_ERROR, __VA_ARGS__)
#define amc_warn(_log, ...)  amc_log(_log, AMC_LOG_WARN, __VA_ARGS__)
#define amc_info(_log, ...)  amc_log(_log, AMC_LOG_INFO, __VA_ARGS__)
#define amc_debug(_log, ...) amc_log(_log, AMC_LOG_DEBUG, __VA_ARGS__)
#define amc_trace(_log, ...) amc_log(_log, AMC_LOG_TRACE, __VA_ARGS__)

#endif
