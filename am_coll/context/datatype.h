/*
 * Datatypes: sizes and names of the predefined amc_datatype_t values. There
 * are no derived datatypes, so a datatype is its element size.
 */
#ifndef AMC_DATATYPE_H
#define AMC_DATATYPE_H

#include "amcoll.h"

#include <stddef.h>

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

/* AMC_ERR_ARG for an unknown datatype or a NULL size. */
int amc_datatype_size(amc_datatype_t dt, size_t *size);

/* "AMC_INT" etc. for log messages; never NULL, also for an unknown value. */
const char *amc_datatype_name(amc_datatype_t dt);

/* count elements in bytes; AMC_ERR_ARG for an unknown datatype, a NULL
 * bytes, or a product that does not fit size_t. */
int amc_count_bytes(size_t count, amc_datatype_t dt, size_t *bytes);

#endif
