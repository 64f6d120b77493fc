/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes: sizes and names of the predefined amc_datatype_t values. There
 * are no derived datatypes, so a datatype is its element size.
 */
#ifndef AMC_DATATYPE_H
#define AMC_DATATYPE_H

#include "amcoll.h"
#include "base/status.h"

#include <stddef.h>
#include <stdint.h>

/* AMC_DOUBLE is the last value of amc_datatype_t; a new datatype must move
 * this bound (datatype.c's switches warn where a case is missing). */
#define AMC_DATATYPE_COUNT (AMC_DOUBLE + 1)

/* The cast makes a negative value out of range too, whatever integer type
 * the compiler picked for the enum. */
static inline int amc_datatype_is_valid(amc_datatype_t dt)
{
    return (unsigned)dt < (unsigned)AMC_DATATYPE_COUNT;
}

/* n bytes in elements of size bytes: a shift where size is a power of two
 * (every datatype of ours), since a 64-bit division stalls tens of cycles
 * on the hot path of every reduction. */
static inline size_t amc_datatype_elems(size_t n, size_t size)
{
    return ((size & (size - 1)) == 0) ? n >> __builtin_ctzll(size) : n / size;
}

/* AMC_ERR_ARG for an unknown datatype or a NULL size. Inline: every call's
 * checks look it up (the switch becomes a table). The switches have no
 * default so that -Wswitch names the function a new datatype was forgotten
 * in. */
static inline int amc_datatype_size(amc_datatype_t dt, size_t *size)
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
    *size = 0; /* written on every path: callers inline it and read it */
    return AMC_ERR_ARG;
}

/* "AMC_INT" etc. for log messages; never NULL, also for an unknown value. */
const char *amc_datatype_name(amc_datatype_t dt);

/* count elements in bytes; AMC_ERR_ARG for an unknown datatype, a NULL
 * bytes, or a product that does not fit size_t. */
static inline int amc_count_bytes(size_t count, amc_datatype_t dt, size_t *bytes)
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
    if (count > amc_datatype_elems(SIZE_MAX, size)) {
        return AMC_ERR_ARG;
    }
    *bytes = count * size;
    return AMC_SUCCESS;
}

#endif
