/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/datatype.h"

#include <stdint.h>

/* The switch below has no default so that -Wswitch names the function a
 * new datatype was forgotten in. */

const char *amc_datatype_name(amc_datatype_t dt)
{
    switch (dt) {
    case AMC_BYTE:   return "AMC_BYTE";
    case AMC_CHAR:   return "AMC_CHAR";
    case AMC_INT8:   return "AMC_INT8";
    case AMC_INT16:  return "AMC_INT16";
    case AMC_INT32:  return "AMC_INT32";
    case AMC_INT64:  return "AMC_INT64";
    case AMC_UINT8:  return "AMC_UINT8";
    case AMC_UINT16: return "AMC_UINT16";
    case AMC_UINT32: return "AMC_UINT32";
    case AMC_UINT64: return "AMC_UINT64";
    case AMC_INT:    return "AMC_INT";
    case AMC_LONG:   return "AMC_LONG";
    case AMC_FLOAT:  return "AMC_FLOAT";
    case AMC_DOUBLE: return "AMC_DOUBLE";
    }
    return "invalid datatype";
}
