#include "am_coll/context/datatype.h"

#include <stdint.h>

/* The switches below have no default so that -Wswitch names the function
 * a new datatype was forgotten in. */

int amc_datatype_size(amc_datatype_t dt, size_t *size)
{
    if (size == NULL) {
        return AMC_ERR_ARG;
    }
    switch (dt) {
    case AMC_BYTE:   *size = 1;                return AMC_SUCCESS;
    case AMC_CHAR:   *size = sizeof(char);     return AMC_SUCCESS;
    case AMC_INT8:   *size = sizeof(int8_t);   return AMC_SUCCESS;
    case AMC_INT16:  *size = sizeof(int16_t);  return AMC_SUCCESS;
    case AMC_INT32:  *size = sizeof(int32_t);  return AMC_SUCCESS;
    case AMC_INT64:  *size = sizeof(int64_t);  return AMC_SUCCESS;
    case AMC_UINT8:  *size = sizeof(uint8_t);  return AMC_SUCCESS;
    case AMC_UINT16: *size = sizeof(uint16_t); return AMC_SUCCESS;
    case AMC_UINT32: *size = sizeof(uint32_t); return AMC_SUCCESS;
    case AMC_UINT64: *size = sizeof(uint64_t); return AMC_SUCCESS;
    case AMC_INT:    *size = sizeof(int);      return AMC_SUCCESS;
    case AMC_LONG:   *size = sizeof(long);     return AMC_SUCCESS;
    case AMC_FLOAT:  *size = sizeof(float);    return AMC_SUCCESS;
    case AMC_DOUBLE: *size = sizeof(double);   return AMC_SUCCESS;
    }
    return AMC_ERR_ARG;
}

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

int amc_count_bytes(size_t count, amc_datatype_t dt, size_t *bytes)
{
    size_t size;
    int    status;

    if (bytes == NULL) {
        return AMC_ERR_ARG;
    }
    status = amc_datatype_size(dt, &size);
    if (status != AMC_SUCCESS) {
        return status;
    }
    /* a wrapped product would size a buffer far smaller than the data */
    if (count > SIZE_MAX / size) {
        return AMC_ERR_ARG;
    }
    *bytes = count * size;
    return AMC_SUCCESS;
}
