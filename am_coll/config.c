#include "am_coll/config.h"
#include "amcoll.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

typedef int  (*amc_config_parse_fn_t)(const char *text, void *field);
typedef void (*amc_config_format_fn_t)(const void *field, char *buf, size_t len);

typedef struct amc_config_entry {
    const char            *name;
    const char            *default_value;
    const char            *doc;
    size_t                 offset;
    amc_config_parse_fn_t  parse;
    amc_config_format_fn_t format;
} amc_config_entry_t;

static int amc_config_parse_level(const char *text, void *field)
{
    int level = amc_log_level_parse(text);

    if (level < 0) {
        return AMC_ERR_ARG;
    }
    *(int *)field = level;
    return AMC_SUCCESS;
}

static void amc_config_format_level(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%s", amc_log_level_name(*(const int *)field));
}

static int amc_config_parse_seconds(const char *text, void *field)
{
    char  *end;
    double value;

    errno = 0;
    value = strtod(text, &end);
    if ((errno != 0) || (end == text) || (*end != '\0') || !(value >= 0.0) ||
        (value > 1e9)) {
        return AMC_ERR_ARG;
    }
    *(double *)field = value;
    return AMC_SUCCESS;
}

static void amc_config_format_seconds(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%g", *(const double *)field);
}

static int amc_config_parse_unsigned(const char *text, void *field)
{
    char              *end;
    unsigned long long value;

    if (text[0] == '-') {
        return AMC_ERR_ARG;
    }
    errno = 0;
    value = strtoull(text, &end, 10);
    if ((errno != 0) || (end == text) || (*end != '\0') || (value > UINT_MAX / 2)) {
        return AMC_ERR_ARG;
    }
    *(unsigned *)field = (unsigned)value;
    return AMC_SUCCESS;
}

static void amc_config_format_unsigned(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%u", *(const unsigned *)field);
}

static int amc_config_parse_spin(const char *text, void *field)
{
    if (strcmp(text, "auto") == 0) {
        *(unsigned *)field = AMC_SPIN_AUTO;
        return AMC_SUCCESS;
    }
    return amc_config_parse_unsigned(text, field);
}

static void amc_config_format_spin(const void *field, char *buf, size_t len)
{
    if (*(const unsigned *)field == AMC_SPIN_AUTO) {
        snprintf(buf, len, "auto");
    } else {
        amc_config_format_unsigned(field, buf, len);
    }
}

#define AMC_CONFIG_LEVEL    amc_config_parse_level, amc_config_format_level
#define AMC_CONFIG_SECONDS  amc_config_parse_seconds, amc_config_format_seconds
#define AMC_CONFIG_UNSIGNED amc_config_parse_unsigned, amc_config_format_unsigned
#define AMC_CONFIG_SPIN     amc_config_parse_spin, amc_config_format_spin

/* Defaults of the wait policy come from measurements on a 2-core machine with
 * up to 32 ranks (doc/design.md, "Waiting"). */
static const amc_config_entry_t amc_config_table[] = {
    { "AMC_LOG_LEVEL", "warn",
      "Log level: error, warn, info, debug or trace.",
      offsetof(amc_config_t, log_level), AMC_CONFIG_LEVEL },
    { "AMC_TIMEOUT", "0",
      "Seconds after which a wait that cannot complete returns AMC_ERR_TIMEOUT "
      "and logs what it waits for (fractions allowed); 0 waits forever.",
      offsetof(amc_config_t, timeout_sec), AMC_CONFIG_SECONDS },
    { "AMC_SPIN_COUNT", "auto",
      "Empty progress passes a wait spins before it starts to yield the core; "
      "auto: 0 when the node runs more ranks than it has cores, else 1000.",
      offsetof(amc_config_t, wait.spin_count), AMC_CONFIG_SPIN },
    { "AMC_YIELD_USEC", "2000",
      "Microseconds a wait keeps yielding (sched_yield) before it arms the UCX "
      "worker and sleeps on its event fd.",
      offsetof(amc_config_t, wait.yield_usec), AMC_CONFIG_UNSIGNED },
    { "AMC_SLEEP_MSEC", "100",
      "Longest single sleep of an idle wait in milliseconds; bounds how late "
      "a timeout is noticed.",
      offsetof(amc_config_t, wait.sleep_msec), AMC_CONFIG_UNSIGNED },
    { "AMC_EARLY_MAX", "4096",
      "Collective instances a communicator holds beyond its control window "
      "(early arrivals and far-ahead non-blocking calls); more is a protocol error.",
      offsetof(amc_config_t, early_max), AMC_CONFIG_UNSIGNED },
    { "AMC_ORPHAN_MAX", "4096",
      "Messages held for communicators this rank has not created yet; more is "
      "a protocol error.",
      offsetof(amc_config_t, orphan_max), AMC_CONFIG_UNSIGNED },
};

#define AMC_CONFIG_COUNT (sizeof(amc_config_table) / sizeof(amc_config_table[0]))

static const amc_config_entry_t *amc_config_find(const char *name, size_t name_len)
{
    size_t i;

    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        if ((strlen(amc_config_table[i].name) == name_len) &&
            (strncmp(amc_config_table[i].name, name, name_len) == 0)) {
            return &amc_config_table[i];
        }
    }
    return NULL;
}

void amc_config_defaults(amc_config_t *cfg)
{
    size_t i;
    int    status;

    memset(cfg, 0, sizeof(*cfg));
    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        status = amc_config_table[i].parse(amc_config_table[i].default_value,
                                           (char *)cfg + amc_config_table[i].offset);
        (void)status; /* the defaults are literals checked by test_config */
    }
}

int amc_config_read(amc_config_t *cfg, const amc_log_t *log)
{
    const amc_config_entry_t *entry;
    const char               *value;
    char                    **env;
    size_t                    i;
    int                       status = AMC_SUCCESS;

    amc_config_defaults(cfg);

    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        entry = &amc_config_table[i];
        value = getenv(entry->name);
        if (value == NULL) {
            continue;
        }
        if (entry->parse(value, (char *)cfg + entry->offset) != AMC_SUCCESS) {
            amc_error(log, "invalid value '%s' for %s: %s", value, entry->name, entry->doc);
            status = AMC_ERR_ARG;
        }
    }

    for (env = environ; (env != NULL) && (*env != NULL); env++) {
        const char *eq = strchr(*env, '=');

        if ((strncmp(*env, "AMC_", 4) != 0) || (eq == NULL)) {
            continue;
        }
        if (amc_config_find(*env, (size_t)(eq - *env)) == NULL) {
            amc_warn(log, "unused environment variable %.*s (see amc_info for the list)",
                     (int)(eq - *env), *env);
        }
    }
    return status;
}

void amc_config_print(FILE *stream, const amc_config_t *cfg)
{
    const amc_config_entry_t *entry;
    char                      value[64];
    size_t                    i;

    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        entry = &amc_config_table[i];
        entry->format((const char *)cfg + entry->offset, value, sizeof(value));
        fprintf(stream, "#\n# %s\n#\n# default: %s\n%s=%s\n", entry->doc,
                entry->default_value, entry->name, value);
    }
}
