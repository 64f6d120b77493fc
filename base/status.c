/* SPDX-License-Identifier: BSD-3-Clause */
#include "amcoll.h"

const char *amc_strerror(int code)
{
    switch (code) {
    case AMC_SUCCESS:             return "success";
    case AMC_ERR_ARG:             return "invalid argument";
    case AMC_ERR_COMM:            return "invalid communicator";
    case AMC_ERR_NO_MEMORY:       return "out of memory";
    case AMC_ERR_TRUNCATE:        return "message truncated: more data arrived than the buffer holds";
    case AMC_ERR_PROTOCOL:        return "protocol error: malformed, out-of-sequence or mismatched message";
    case AMC_ERR_PEER:            return "a peer process failed or became unreachable";
    case AMC_ERR_TIMEOUT:         return "operation timed out (AMC_TIMEOUT)";
    case AMC_ERR_TRANSPORT:       return "transport (UCX) error";
    case AMC_ERR_NOT_INITIALIZED: return "amcoll is not initialized (or already finalized)";
    case AMC_ERR_UNSUPPORTED:     return "operation not supported by this build";
    case AMC_ERR_REVOKED:         return "the communicator was revoked (amc_comm_revoke)";
    default:                      return "unknown amcoll status code";
    }
}
