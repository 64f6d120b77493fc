/* amc_info: prints the AMC_* configuration table (defaults, current values,
 * documentation) and the build's version. No launcher or peers needed. */
#include "am_coll/config.h"
#include "amcoll.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    amc_log_t    log = amc_log_from_env();
    amc_config_t cfg;
    int          status;

    if ((argc > 1) && ((strcmp(argv[1], "-h") == 0) || (strcmp(argv[1], "--help") == 0))) {
        printf("usage: %s\n  prints every AMC_* variable with its default, its value in this "
               "environment and what it does\n", argv[0]);
        return 0;
    }
    status = amc_config_read(&cfg, &log);
    printf("# amcoll %d.%d configuration (AMC_* environment variables)\n",
           AMC_VERSION_MAJOR, AMC_VERSION_MINOR);
    amc_config_print(stdout, &cfg);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_info: %s\n", amc_strerror(status));
        return 1;
    }
    return 0;
}
