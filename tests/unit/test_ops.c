/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes and reduction ops without amc_init: MPI's table of which op
 * applies to which datatype, every allowed pair against a reference computed
 * here element by element through 64-bit integers or doubles (so it shares no
 * code with the typed loops), unaligned buffers, count 0, and user ops: the
 * order of the operands, create/free errors, handle reuse.
 */
#include "tests/unit/harness.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/op.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const amc_datatype_t all_dts[] = {
    AMC_BYTE, AMC_CHAR, AMC_INT8, AMC_INT16, AMC_INT32, AMC_INT64,
    AMC_UINT8, AMC_UINT16, AMC_UINT32, AMC_UINT64,
    AMC_INT, AMC_LONG, AMC_FLOAT, AMC_DOUBLE
};
#define N_DTS (sizeof(all_dts) / sizeof(all_dts[0]))

static const amc_op_t all_ops[] = {
    AMC_SUM, AMC_PROD, AMC_MIN, AMC_MAX, AMC_LAND, AMC_LOR, AMC_LXOR,
    AMC_BAND, AMC_BOR, AMC_BXOR
};
#define N_OPS (sizeof(all_ops) / sizeof(all_ops[0]))

/* ---------------------------------------------------------------- the rules, restated */

static int dt_is_int(amc_datatype_t dt)
{
    switch (dt) {
    case AMC_INT8: case AMC_INT16: case AMC_INT32: case AMC_INT64:
    case AMC_UINT8: case AMC_UINT16: case AMC_UINT32: case AMC_UINT64:
    case AMC_INT: case AMC_LONG:
        return 1;
    default:
        return 0;
    }
}

static int dt_is_float(amc_datatype_t dt)
{
    return (dt == AMC_FLOAT) || (dt == AMC_DOUBLE);
}

static int op_is_arith(amc_op_t op)
{
    return (op == AMC_SUM) || (op == AMC_PROD) || (op == AMC_MIN) || (op == AMC_MAX);
}

static int rule_allows(amc_op_t op, amc_datatype_t dt)
{
    return dt_is_int(dt) || (dt_is_float(dt) && op_is_arith(op));
}

/* ---------------------------------------------------------------- reference */

static size_t dt_size(amc_datatype_t dt)
{
    size_t size = 0;

    amc_datatype_size(dt, &size);
    return size;
}

static int int_is_signed(amc_datatype_t dt)
{
    return (dt == AMC_INT8) || (dt == AMC_INT16) || (dt == AMC_INT32) || (dt == AMC_INT64) ||
           (dt == AMC_INT) || (dt == AMC_LONG);
}

/* An integer element as a uint64_t: sign-extended for signed types,
 * zero-extended for unsigned ones. */
static uint64_t load_int(amc_datatype_t dt, const unsigned char *p)
{
#define LOAD(_T) do { _T v; memcpy(&v, p, sizeof(v)); return (uint64_t)(int64_t)v; } while (0)
#define ULOAD(_T) do { _T v; memcpy(&v, p, sizeof(v)); return (uint64_t)v; } while (0)
    switch (dt) {
    case AMC_INT8:   LOAD(int8_t);
    case AMC_INT16:  LOAD(int16_t);
    case AMC_INT32:  LOAD(int32_t);
    case AMC_INT64:  LOAD(int64_t);
    case AMC_INT:    LOAD(int);
    case AMC_LONG:   LOAD(long);
    case AMC_UINT8:  ULOAD(uint8_t);
    case AMC_UINT16: ULOAD(uint16_t);
    case AMC_UINT32: ULOAD(uint32_t);
    case AMC_UINT64: ULOAD(uint64_t);
    default:         return 0;
    }
#undef LOAD
#undef ULOAD
}

/* Truncates to the type: modulo 2^bits, as the library's wrapping does. */
static void store_int(amc_datatype_t dt, unsigned char *p, uint64_t value)
{
#define STORE(_T) do { _T v = (_T)value; memcpy(p, &v, sizeof(v)); return; } while (0)
    switch (dt) {
    case AMC_INT8:   STORE(int8_t);
    case AMC_INT16:  STORE(int16_t);
    case AMC_INT32:  STORE(int32_t);
    case AMC_INT64:  STORE(int64_t);
    case AMC_INT:    STORE(int);
    case AMC_LONG:   STORE(long);
    case AMC_UINT8:  STORE(uint8_t);
    case AMC_UINT16: STORE(uint16_t);
    case AMC_UINT32: STORE(uint32_t);
    case AMC_UINT64: STORE(uint64_t);
    default:         return;
    }
#undef STORE
}

static double load_flt(amc_datatype_t dt, const unsigned char *p)
{
    if (dt == AMC_FLOAT) {
        float v;
        memcpy(&v, p, sizeof(v));
        return v;
    } else {
        double v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
}

static void store_flt(amc_datatype_t dt, unsigned char *p, double value)
{
    if (dt == AMC_FLOAT) {
        float v = (float)value;
        memcpy(p, &v, sizeof(v));
    } else {
        memcpy(p, &value, sizeof(value));
    }
}

/* a is in (left), b is inout (right); low bits of a 64-bit sum or product are
 * those of the narrow one, so wrapping falls out of store_int */
static uint64_t ref_int(amc_op_t op, amc_datatype_t dt, uint64_t a, uint64_t b)
{
    int     sgn = int_is_signed(dt);
    int64_t sa  = (int64_t)a, sb = (int64_t)b;

    switch (op) {
    case AMC_SUM:  return a + b;
    case AMC_PROD: return a * b;
    case AMC_MIN:  return sgn ? ((sa < sb) ? a : b) : ((a < b) ? a : b);
    case AMC_MAX:  return sgn ? ((sa > sb) ? a : b) : ((a > b) ? a : b);
    case AMC_LAND: return (a != 0) && (b != 0);
    case AMC_LOR:  return (a != 0) || (b != 0);
    case AMC_LXOR: return (a != 0) != (b != 0);
    case AMC_BAND: return a & b;
    case AMC_BOR:  return a | b;
    case AMC_BXOR: return a ^ b;
    default:       return 0;
    }
}

static double ref_flt(amc_op_t op, double a, double b)
{
    switch (op) {
    case AMC_SUM:  return a + b;
    case AMC_PROD: return a * b;
    case AMC_MIN:  return (a < b) ? a : b;
    case AMC_MAX:  return (a > b) ? a : b;
    default:       return 0;
    }
}

/* Zeros often (the logical ops need both cases), the type's extremes now
 * and then, otherwise any bit pattern, negatives included. Floats are
 * quarters in [-16, 16]: sums and products of two are exact in float. */
static void fill_random(amc_datatype_t dt, unsigned char *p, size_t count, amc_test_rng_t *rng)
{
    size_t   size = dt_size(dt), i;
    unsigned bits = (unsigned)(size * CHAR_BIT);
    uint64_t v;

    for (i = 0; i < count; i++, p += size) {
        if (dt_is_float(dt)) {
            store_flt(dt, p, ((double)amc_test_rng_below(rng, 129) - 64.0) / 4.0);
            continue;
        }
        switch (amc_test_rng_below(rng, 8)) {
        case 0:
        case 1:
            v = 0;
            break;
        case 2: /* signed minimum, or 2^(bits-1) for an unsigned type */
            v = (uint64_t)1 << (bits - 1);
            break;
        case 3: /* all ones: -1, or the unsigned maximum */
            v = UINT64_MAX;
            break;
        case 4: /* signed maximum */
            v = ((uint64_t)1 << (bits - 1)) - 1;
            break;
        case 5: /* small, either sign */
            v = (uint64_t)((int64_t)amc_test_rng_below(rng, 21) - 10);
            break;
        default:
            v = amc_test_rng_next(rng);
            break;
        }
        store_int(dt, p, v);
    }
}

/* ---------------------------------------------------------------- the rules */

static void test_rules(void)
{
    size_t d, o;

    for (d = 0; d < N_DTS; d++) {
        for (o = 0; o < N_OPS; o++) {
            int want = rule_allows(all_ops[o], all_dts[d]) ? AMC_SUCCESS : AMC_ERR_ARG;

            CHECK(amc_op_check(all_ops[o], all_dts[d]) == want, "%s on %s",
                  amc_op_name(all_ops[o]), amc_datatype_name(all_dts[d]));
            CHECK(amc_op_is_commutative(all_ops[o]) == 1, "%s commutes",
                  amc_op_name(all_ops[o]));
        }
    }
    /* the spelled-out cases of api.md */
    CHECK(amc_op_check(AMC_SUM, AMC_BYTE) == AMC_ERR_ARG, "BYTE takes no ops");
    CHECK(amc_op_check(AMC_MAX, AMC_CHAR) == AMC_ERR_ARG, "CHAR takes no ops");
    CHECK(amc_op_check(AMC_BXOR, AMC_DOUBLE) == AMC_ERR_ARG, "no bitwise op on floats");
    CHECK(amc_op_check(AMC_LAND, AMC_FLOAT) == AMC_ERR_ARG, "no logical op on floats");
    CHECK(amc_op_check(AMC_PROD, AMC_FLOAT) == AMC_SUCCESS, "PROD on floats");
    CHECK(amc_op_check(AMC_LXOR, AMC_UINT64) == AMC_SUCCESS, "logical op on integers");

    /* unknown ops and datatypes */
    CHECK(amc_op_check(-1, AMC_INT) == AMC_ERR_ARG, "negative op");
    CHECK(amc_op_check(AMC_BXOR + 1, AMC_INT) == AMC_ERR_ARG, "op past the predefined ones");
    CHECK(amc_op_check(AMC_OP_USER_BASE - 1, AMC_INT) == AMC_ERR_ARG, "op below the user base");
    CHECK(amc_op_check(AMC_OP_USER_BASE + 12345, AMC_INT) == AMC_ERR_ARG, "never created");
    CHECK(amc_op_check(INT_MAX, AMC_INT) == AMC_ERR_ARG, "INT_MAX");
    CHECK(amc_op_check(INT_MIN, AMC_INT) == AMC_ERR_ARG, "INT_MIN");
    CHECK(amc_op_check(AMC_SUM, (amc_datatype_t)(AMC_DOUBLE + 1)) == AMC_ERR_ARG,
          "datatype past the last");
    CHECK(amc_op_check(AMC_SUM, (amc_datatype_t)-1) == AMC_ERR_ARG, "negative datatype");
    CHECK(amc_op_is_commutative(-1) == 0, "unknown op: not commutative");
    CHECK(strcmp(amc_op_name(AMC_SUM), "AMC_SUM") == 0, "name");
    CHECK(strcmp(amc_op_name(AMC_BXOR), "AMC_BXOR") == 0, "name");
    CHECK(strcmp(amc_op_name(-1), "invalid op") == 0, "unknown op name: %s", amc_op_name(-1));
    CHECK(amc_op_name(AMC_BXOR + 1) != NULL, "never NULL");
}

/* ---------------------------------------------------------------- datatypes */

static void test_datatypes(void)
{
    size_t size, bytes, d;

    for (d = 0; d < N_DTS; d++) {
        CHECK(amc_datatype_size(all_dts[d], &size) == AMC_SUCCESS, "%s",
              amc_datatype_name(all_dts[d]));
        CHECK(strncmp(amc_datatype_name(all_dts[d]), "AMC_", 4) == 0, "name of %d",
              (int)all_dts[d]);
    }
    amc_datatype_size(AMC_BYTE, &size);   CHECK(size == 1, "BYTE");
    amc_datatype_size(AMC_CHAR, &size);   CHECK(size == 1, "CHAR");
    amc_datatype_size(AMC_INT8, &size);   CHECK(size == 1, "INT8");
    amc_datatype_size(AMC_UINT16, &size); CHECK(size == 2, "UINT16");
    amc_datatype_size(AMC_INT32, &size);  CHECK(size == 4, "INT32");
    amc_datatype_size(AMC_UINT64, &size); CHECK(size == 8, "UINT64");
    amc_datatype_size(AMC_INT, &size);    CHECK(size == sizeof(int), "INT");
    amc_datatype_size(AMC_LONG, &size);   CHECK(size == sizeof(long), "LONG");
    amc_datatype_size(AMC_FLOAT, &size);  CHECK(size == sizeof(float), "FLOAT");
    amc_datatype_size(AMC_DOUBLE, &size); CHECK(size == sizeof(double), "DOUBLE");
    CHECK(strcmp(amc_datatype_name(AMC_DOUBLE), "AMC_DOUBLE") == 0, "name");

    CHECK(amc_datatype_size((amc_datatype_t)(AMC_DOUBLE + 1), &size) == AMC_ERR_ARG, "unknown");
    CHECK(amc_datatype_size((amc_datatype_t)-1, &size) == AMC_ERR_ARG, "negative");
    CHECK(amc_datatype_size(AMC_INT, NULL) == AMC_ERR_ARG, "NULL size");
    CHECK(strcmp(amc_datatype_name((amc_datatype_t)99), "invalid datatype") == 0, "unknown name");

    CHECK(amc_count_bytes(3, AMC_INT32, &bytes) == AMC_SUCCESS && bytes == 12, "3 INT32");
    CHECK(amc_count_bytes(0, AMC_DOUBLE, &bytes) == AMC_SUCCESS && bytes == 0, "count 0");
    CHECK(amc_count_bytes(SIZE_MAX, AMC_BYTE, &bytes) == AMC_SUCCESS && bytes == SIZE_MAX,
          "SIZE_MAX bytes");
    CHECK(amc_count_bytes(SIZE_MAX / 8, AMC_INT64, &bytes) == AMC_SUCCESS &&
          bytes == SIZE_MAX / 8 * 8, "largest INT64 count");
    CHECK(amc_count_bytes(SIZE_MAX / 8 + 1, AMC_INT64, &bytes) == AMC_ERR_ARG, "overflow");
    CHECK(amc_count_bytes(SIZE_MAX / 2 + 1, AMC_UINT16, &bytes) == AMC_ERR_ARG, "overflow");
    CHECK(amc_count_bytes(SIZE_MAX, AMC_FLOAT, &bytes) == AMC_ERR_ARG, "overflow");
    CHECK(amc_count_bytes(1, (amc_datatype_t)(AMC_DOUBLE + 1), &bytes) == AMC_ERR_ARG,
          "unknown datatype");
    CHECK(amc_count_bytes(1, AMC_INT, NULL) == AMC_ERR_ARG, "NULL bytes");
}

/* ---------------------------------------------------------------- predefined results */

#define GUARD     32
#define MAX_COUNT 300
#define FILL      0xa5

/* One reduction at byte offsets from 16-byte aligned buffers, against the
 * reference; guard bytes on both sides catch a write past either end, and
 * in must come back unchanged. */
static void run_one(amc_op_t op, amc_datatype_t dt, size_t count, size_t in_off, size_t io_off,
                    amc_test_rng_t *rng)
{
    static _Alignas(64) unsigned char in_buf[2 * GUARD + MAX_COUNT * 8 + 16];
    static _Alignas(64) unsigned char io_buf[2 * GUARD + MAX_COUNT * 8 + 16];
    static unsigned char in_copy[MAX_COUNT * 8], io_orig[MAX_COUNT * 8];
    static unsigned char want[MAX_COUNT * 8];
    size_t         size = dt_size(dt), len = count * size, i;
    unsigned char *in = in_buf + GUARD + in_off, *io = io_buf + GUARD + io_off;
    int            bad_at = -1, guards_ok = 1;

    memset(in_buf, FILL, sizeof(in_buf));
    memset(io_buf, FILL, sizeof(io_buf));
    fill_random(dt, in, count, rng);
    fill_random(dt, io, count, rng);
    memcpy(in_copy, in, len);
    memcpy(io_orig, io, len);

    for (i = 0; i < count; i++) {
        if (dt_is_float(dt)) {
            store_flt(dt, want + i * size, ref_flt(op, load_flt(dt, in + i * size),
                                                   load_flt(dt, io + i * size)));
        } else {
            store_int(dt, want + i * size, ref_int(op, dt, load_int(dt, in + i * size),
                                                   load_int(dt, io + i * size)));
        }
    }

    amc_op_reduce(op, dt, in, io, count);

    for (i = 0; (i < count) && (bad_at < 0); i++) {
        if (dt_is_float(dt)) {
            /* by value: the sign of a zero result is no business of the test */
            if (load_flt(dt, io + i * size) != load_flt(dt, want + i * size)) {
                bad_at = (int)i;
            }
        } else if (memcmp(io + i * size, want + i * size, size) != 0) {
            bad_at = (int)i;
        }
    }
    for (i = 0; i < sizeof(io_buf); i++) {
        if (((io_buf + i < io) || (io_buf + i >= io + len)) && (io_buf[i] != FILL)) {
            guards_ok = 0;
        }
    }
    if (bad_at >= 0) {
        size_t k = (size_t)bad_at;

        if (dt_is_float(dt)) {
            CHECK(0, "%s %s count %zu offsets %zu/%zu: [%zu] %g (op) %g = %g, want %g",
                  amc_op_name(op), amc_datatype_name(dt), count, in_off, io_off, k,
                  load_flt(dt, in + k * size), load_flt(dt, io_orig + k * size),
                  load_flt(dt, io + k * size), load_flt(dt, want + k * size));
        } else {
            CHECK(0, "%s %s count %zu offsets %zu/%zu: [%zu] %#llx (op) %#llx = %#llx, want %#llx",
                  amc_op_name(op), amc_datatype_name(dt), count, in_off, io_off, k,
                  (unsigned long long)load_int(dt, in + k * size),
                  (unsigned long long)load_int(dt, io_orig + k * size),
                  (unsigned long long)load_int(dt, io + k * size),
                  (unsigned long long)load_int(dt, want + k * size));
        }
    } else {
        CHECK(1, "results");
    }
    CHECK(guards_ok, "%s %s count %zu offsets %zu/%zu: wrote outside inout", amc_op_name(op),
          amc_datatype_name(dt), count, in_off, io_off);
    CHECK(memcmp(in, in_copy, len) == 0, "%s %s: in changed", amc_op_name(op),
          amc_datatype_name(dt));
    for (i = 0; i < sizeof(in_buf); i++) {
        if (((in_buf + i < in) || (in_buf + i >= in + len)) && (in_buf[i] != FILL)) {
            CHECK(0, "%s %s: wrote around in", amc_op_name(op), amc_datatype_name(dt));
            break;
        }
    }
}

static void test_results(void)
{
    /* counts around the 64-byte blocks of every element size */
    static const size_t counts[] = { 0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                     100, 127, 128, 129, 257, MAX_COUNT };
    /* aligned, and misaligned for every element size, in either or both */
    static const size_t offsets[][2] = { { 0, 0 }, { 8, 8 }, { 1, 0 }, { 0, 3 },
                                         { 5, 1 }, { 2, 2 }, { 4, 4 }, { 4, 0 } };
    amc_test_rng_t rng;
    size_t         d, o, c, f;

    amc_test_rng_seed(&rng, 42);
    for (d = 0; d < N_DTS; d++) {
        for (o = 0; o < N_OPS; o++) {
            if (!rule_allows(all_ops[o], all_dts[d])) {
                continue;
            }
            for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                for (f = 0; f < sizeof(offsets) / sizeof(offsets[0]); f++) {
                    run_one(all_ops[o], all_dts[d], counts[c], offsets[f][0], offsets[f][1],
                            &rng);
                }
            }
        }
    }
}

/* Hand-picked cases, so that a wrong reference cannot hide a wrong result. */
static void test_spot(void)
{
    {
        uint8_t in[2] = { 200, 255 }, io[2] = { 100, 1 };
        amc_op_reduce(AMC_SUM, AMC_UINT8, in, io, 2);
        CHECK(io[0] == 44 && io[1] == 0, "uint8 sum wraps: %u %u", io[0], io[1]);
    }
    {
        uint16_t in[1] = { 65535 }, io[1] = { 65535 };
        amc_op_reduce(AMC_PROD, AMC_UINT16, in, io, 1);
        CHECK(io[0] == 1, "uint16 product wraps: %u", io[0]);
    }
    {
        uint32_t in[2] = { 0x10000, 3 }, io[2] = { 0x10000, 0x80000000u };
        amc_op_reduce(AMC_PROD, AMC_UINT32, in, io, 2);
        CHECK(io[0] == 0 && io[1] == 0x80000000u, "uint32 product wraps: %u %u", io[0], io[1]);
    }
    {
        int in[1] = { INT_MAX }, io[1] = { 1 };
        amc_op_reduce(AMC_SUM, AMC_INT, in, io, 1);
        CHECK(io[0] == INT_MIN, "int sum wraps like two's complement: %d", io[0]);
    }
    {
        int8_t in[3] = { -128, 5, -1 }, io[3] = { 127, -3, -1 };
        int8_t lo[3], hi[3];
        memcpy(lo, io, sizeof(io));
        memcpy(hi, io, sizeof(io));
        amc_op_reduce(AMC_MIN, AMC_INT8, in, lo, 3);
        amc_op_reduce(AMC_MAX, AMC_INT8, in, hi, 3);
        CHECK(lo[0] == -128 && lo[1] == -3 && lo[2] == -1, "int8 min: %d %d %d", lo[0], lo[1],
              lo[2]);
        CHECK(hi[0] == 127 && hi[1] == 5 && hi[2] == -1, "int8 max: %d %d %d", hi[0], hi[1],
              hi[2]);
    }
    {
        int64_t in[2] = { INT64_MIN, -5 }, io[2] = { INT64_MAX, -3 };
        amc_op_reduce(AMC_MIN, AMC_INT64, in, io, 2);
        CHECK(io[0] == INT64_MIN && io[1] == -5, "int64 min");
    }
    {
        uint64_t in[2] = { UINT64_MAX, 0 }, io[2] = { 1, 7 };
        amc_op_reduce(AMC_MAX, AMC_UINT64, in, io, 2);
        CHECK(io[0] == UINT64_MAX && io[1] == 7, "uint64 max compares unsigned");
    }
    {
        long in[2] = { LONG_MIN, 0 }, io[2] = { -1, -1 };
        amc_op_reduce(AMC_MAX, AMC_LONG, in, io, 2);
        CHECK(io[0] == -1 && io[1] == 0, "long max");
    }
    {
        int in[4] = { 2, 0, -7, 0 }, io[4] = { -1, 5, 0, 0 };
        int a[4], o[4], x[4];
        memcpy(a, io, sizeof(io));
        memcpy(o, io, sizeof(io));
        memcpy(x, io, sizeof(io));
        amc_op_reduce(AMC_LAND, AMC_INT, in, a, 4);
        amc_op_reduce(AMC_LOR, AMC_INT, in, o, 4);
        amc_op_reduce(AMC_LXOR, AMC_INT, in, x, 4);
        CHECK(a[0] == 1 && a[1] == 0 && a[2] == 0 && a[3] == 0, "land gives 0/1");
        CHECK(o[0] == 1 && o[1] == 1 && o[2] == 1 && o[3] == 0, "lor gives 0/1");
        CHECK(x[0] == 0 && x[1] == 1 && x[2] == 1 && x[3] == 0, "lxor gives 0/1");
    }
    {
        uint8_t in[1] = { 0x80 }, io[1] = { 0x40 };
        amc_op_reduce(AMC_LAND, AMC_UINT8, in, io, 1);
        CHECK(io[0] == 1, "land of non-zero values with no common bit is 1");
    }
    {
        int16_t in[3] = { -1, 0x0ff0, -32768 }, b[3] = { 0x1234, 0x00ff, 1 };
        int16_t o[3], x[3];
        memcpy(o, b, sizeof(b));
        memcpy(x, b, sizeof(b));
        amc_op_reduce(AMC_BAND, AMC_INT16, in, b, 3);
        amc_op_reduce(AMC_BOR, AMC_INT16, in, o, 3);
        amc_op_reduce(AMC_BXOR, AMC_INT16, in, x, 3);
        CHECK(b[0] == 0x1234 && b[1] == 0x00f0 && b[2] == 0, "int16 band");
        CHECK(o[0] == -1 && o[1] == 0x0fff && o[2] == -32767, "int16 bor");
        CHECK(x[0] == ~0x1234 && x[1] == 0x0f0f && x[2] == -32767, "int16 bxor");
    }
    {
        float  in[3] = { 1.5f, -0.25f, 3.0f }, io[3] = { -2.0f, 0.5f, 3.0f };
        float  mn[3];
        double din[2] = { 0.5, -1e300 }, dio[2] = { 0.25, 1e300 };
        memcpy(mn, io, sizeof(io));
        amc_op_reduce(AMC_PROD, AMC_FLOAT, in, io, 3);
        amc_op_reduce(AMC_MIN, AMC_FLOAT, in, mn, 3);
        amc_op_reduce(AMC_SUM, AMC_DOUBLE, din, dio, 2);
        CHECK(io[0] == -3.0f && io[1] == -0.125f && io[2] == 9.0f, "float prod");
        CHECK(mn[0] == -2.0f && mn[1] == -0.25f && mn[2] == 3.0f, "float min");
        CHECK(dio[0] == 0.75 && dio[1] == 0.0, "double sum");
    }
}

/* A forbidden pair and count 0 leave everything alone. */
static void test_untouched(void)
{
    unsigned char in[64], io[64], ref[64];
    size_t        d, o;

    memset(in, 0x11, sizeof(in));
    memset(io, 0x22, sizeof(io));
    memcpy(ref, io, sizeof(io));
    for (d = 0; d < N_DTS; d++) {
        for (o = 0; o < N_OPS; o++) {
            amc_op_reduce(all_ops[o], all_dts[d], in, io, 0);
            amc_op_reduce(all_ops[o], all_dts[d], NULL, NULL, 0);
            if (!rule_allows(all_ops[o], all_dts[d])) {
                amc_op_reduce(all_ops[o], all_dts[d], in, io, 4);
            }
        }
    }
    amc_op_reduce(-1, AMC_INT, in, io, 4);
    amc_op_reduce(AMC_SUM, (amc_datatype_t)99, in, io, 4);
    CHECK(memcmp(io, ref, sizeof(io)) == 0, "count 0 or a forbidden pair wrote inout");
}

/* ---------------------------------------------------------------- user ops */

static int             user_calls;
static size_t          user_last_count;
static amc_datatype_t  user_last_dt;

/* Not commutative: the left operand is shifted one decimal digit. */
static void digits_fn(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const int *a = in;
    int       *b = inout;
    size_t     i;

    user_calls++;
    user_last_count = count;
    user_last_dt    = dt;
    for (i = 0; i < count; i++) {
        b[i] = a[i] * 10 + b[i];
    }
}

/* 2x2 integer matrices, row-major, 4 AMC_INT each: inout = in x inout.
 * Associative, as MPI wants of a user op, and not commutative. */
static void matmul_fn(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const int *a = in;
    int       *b = inout;
    size_t     m;

    user_calls++;
    user_last_count = count;
    user_last_dt    = dt;
    for (m = 0; m + 4 <= count; m += 4, a += 4, b += 4) {
        int r0 = a[0] * b[0] + a[1] * b[2];
        int r1 = a[0] * b[1] + a[1] * b[3];
        int r2 = a[2] * b[0] + a[3] * b[2];
        int r3 = a[2] * b[1] + a[3] * b[3];

        b[0] = r0;
        b[1] = r1;
        b[2] = r2;
        b[3] = r3;
    }
}

static void noop_fn(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    (void)in;
    (void)inout;
    user_calls++;
    user_last_count = count;
    user_last_dt    = dt;
}

static void test_user_order(void)
{
    amc_op_t op, mm;
    size_t   d;

    CHECK(amc_op_create(digits_fn, 0, &op) == AMC_SUCCESS, "create");
    CHECK(op >= AMC_OP_USER_BASE, "user handle %d clear of the predefined ones", op);
    CHECK(amc_op_is_commutative(op) == 0, "created non-commutative");
    CHECK(strcmp(amc_op_name(op), "user op") == 0, "name %s", amc_op_name(op));
    for (d = 0; d < N_DTS; d++) {
        CHECK(amc_op_check(op, all_dts[d]) == AMC_SUCCESS, "a user op takes %s",
              amc_datatype_name(all_dts[d]));
    }
    CHECK(amc_op_check(op, (amc_datatype_t)(AMC_DOUBLE + 1)) == AMC_ERR_ARG,
          "but not an unknown datatype");
    {
        int in[3] = { 1, 2, 3 }, io[3] = { 4, 5, 6 };

        user_calls = 0;
        amc_op_reduce(op, AMC_INT, in, io, 3);
        CHECK(user_calls == 1 && user_last_count == 3 && user_last_dt == AMC_INT,
              "one call with count and datatype passed through");
        /* 41 52 63 would be inout op in */
        CHECK(io[0] == 14 && io[1] == 25 && io[2] == 36, "in is the left operand: %d %d %d",
              io[0], io[1], io[2]);
    }
    {
        int in[1] = { 1 }, io[1] = { 2 };

        user_calls = 0;
        amc_op_reduce(op, AMC_INT, in, io, 0);
        amc_op_reduce(op, AMC_INT, NULL, NULL, 0);
        CHECK(user_calls == 0 && io[0] == 2, "count 0 does not call the function");
    }
    CHECK(amc_op_free(&op) == AMC_SUCCESS, "free");

    /* the function gets the datatype of the call, whichever it is */
    CHECK(amc_op_create(noop_fn, 1, &op) == AMC_SUCCESS, "create noop");
    for (d = 0; d < N_DTS; d++) {
        double in[4] = { 0 }, io[4] = { 0 };

        user_calls = 0;
        amc_op_reduce(op, all_dts[d], in, io, 1 + d % 4);
        CHECK(user_calls == 1 && user_last_dt == all_dts[d] && user_last_count == 1 + d % 4,
              "%s and count %zu passed through", amc_datatype_name(all_dts[d]), 1 + d % 4);
    }
    CHECK(amc_op_free(&op) == AMC_SUCCESS, "free noop");

    /* a chain as a non-commutative reduction over 4 ranks: r0 x r1 x r2 x r3,
     * folded from the right with inout = in x inout */
    CHECK(amc_op_create(matmul_fn, 0, &mm) == AMC_SUCCESS, "create matmul");
    {
        int r[4][4] = { { 1, 2, 3, 4 }, { 0, 1, 1, 0 }, { 2, 0, 0, 1 }, { 1, 1, 0, 1 } };
        int acc[4], want[4];
        int k;

        /* want = r0 x r1 x r2 x r3 by hand:
         * r0 x r1 = [2 1; 4 3]; x r2 = [4 1; 8 3]; x r3 = [4 5; 8 11] */
        want[0] = 4; want[1] = 5; want[2] = 8; want[3] = 11;
        memcpy(acc, r[3], sizeof(acc));
        for (k = 2; k >= 0; k--) {
            amc_op_reduce(mm, AMC_INT, r[k], acc, 4);
        }
        CHECK(memcmp(acc, want, sizeof(acc)) == 0, "matrix chain: [%d %d; %d %d]", acc[0],
              acc[1], acc[2], acc[3]);
    }
    {
        /* three matrices in one call: A x B per group, never B x A */
        int in[12] = { 1, 2, 3, 4, 1, 2, 3, 4, 0, 1, 1, 0 };
        int io[12] = { 0, 1, 1, 0, 1, 0, 0, 1, 1, 2, 3, 4 };
        int want[12] = { 2, 1, 4, 3, 1, 2, 3, 4, 3, 4, 1, 2 };

        user_calls = 0;
        amc_op_reduce(mm, AMC_INT, in, io, 12);
        CHECK(user_calls == 1 && user_last_count == 12, "one call for 12 elements");
        CHECK(memcmp(io, want, sizeof(io)) == 0, "A x B in each group of 4");
    }
    CHECK(amc_op_free(&mm) == AMC_SUCCESS, "free matmul");
}

static void test_user_handles(void)
{
    amc_op_t a, b, c, d, saved, sum = AMC_SUM, bogus;
    amc_op_t many[100];
    int      i, j, distinct = 1, valid = 1;

    /* argument errors */
    CHECK(amc_op_create(NULL, 1, &a) == AMC_ERR_ARG, "NULL fn");
    CHECK(amc_op_create(noop_fn, 1, NULL) == AMC_ERR_ARG, "NULL op");
    CHECK(amc_op_free(NULL) == AMC_ERR_ARG, "free NULL");
    CHECK(amc_op_free(&sum) == AMC_ERR_ARG && sum == AMC_SUM, "free a predefined op");
    bogus = AMC_OP_USER_BASE + 4321;
    CHECK(amc_op_free(&bogus) == AMC_ERR_ARG && bogus == AMC_OP_USER_BASE + 4321,
          "free a never created handle");
    bogus = -1;
    CHECK(amc_op_free(&bogus) == AMC_ERR_ARG, "free -1");
    bogus = INT_MIN;
    CHECK(amc_op_free(&bogus) == AMC_ERR_ARG, "free INT_MIN");
    bogus = 500;
    CHECK(amc_op_free(&bogus) == AMC_ERR_ARG, "free between predefined and user ops");

    CHECK(amc_op_create(noop_fn, 1, &a) == AMC_SUCCESS, "create a");
    CHECK(amc_op_create(noop_fn, 7, &b) == AMC_SUCCESS, "create b");
    CHECK(amc_op_create(noop_fn, 0, &c) == AMC_SUCCESS, "create c");
    CHECK(a >= AMC_OP_USER_BASE && b >= AMC_OP_USER_BASE && c >= AMC_OP_USER_BASE &&
          a != b && b != c && a != c, "distinct user handles %d %d %d", a, b, c);
    CHECK(amc_op_is_commutative(a) == 1 && amc_op_is_commutative(b) == 1 &&
          amc_op_is_commutative(c) == 0, "commute flag kept, any non-zero is true");

    /* free: the handle is invalidated, the op is gone, a second free fails */
    saved = b;
    CHECK(amc_op_free(&b) == AMC_SUCCESS, "free b");
    CHECK(b == AMC_OP_INVALID && b < 0, "free set the handle to %d", b);
    CHECK(amc_op_check(b, AMC_INT) == AMC_ERR_ARG, "the invalidated handle is no op");
    CHECK(amc_op_check(saved, AMC_INT) == AMC_ERR_ARG, "a freed handle is rejected");
    CHECK(amc_op_is_commutative(saved) == 0, "a freed handle does not commute");
    CHECK(strcmp(amc_op_name(saved), "invalid op") == 0, "freed name %s", amc_op_name(saved));
    CHECK(amc_op_free(&saved) == AMC_ERR_ARG && saved != AMC_OP_INVALID, "double free");
    CHECK(amc_op_free(&b) == AMC_ERR_ARG, "free of the invalidated handle");
    {
        int in[2] = { 1, 2 }, io[2] = { 3, 4 };

        user_calls = 0;
        amc_op_reduce(saved, AMC_INT, in, io, 2);
        CHECK(user_calls == 0 && io[0] == 3 && io[1] == 4, "a freed op does not run");
    }
    CHECK(amc_op_check(a, AMC_INT) == AMC_SUCCESS && amc_op_check(c, AMC_INT) == AMC_SUCCESS,
          "the others live on");

    /* the freed slot is reused, and only the freed one */
    CHECK(amc_op_create(noop_fn, 1, &d) == AMC_SUCCESS, "create d");
    CHECK(d == saved, "d reuses the freed handle %d (got %d)", saved, d);
    CHECK(amc_op_check(d, AMC_INT) == AMC_SUCCESS, "the reused handle is live");

    /* growth past the first table, all distinct from each other and the live ones */
    for (i = 0; i < 100; i++) {
        if (amc_op_create(noop_fn, i & 1, &many[i]) != AMC_SUCCESS) {
            valid = 0;
            many[i] = AMC_OP_INVALID;
        }
    }
    for (i = 0; i < 100; i++) {
        if ((many[i] == a) || (many[i] == c) || (many[i] == d)) {
            distinct = 0;
        }
        for (j = 0; j < i; j++) {
            distinct &= (many[i] != many[j]);
        }
        valid &= (amc_op_check(many[i], AMC_DOUBLE) == AMC_SUCCESS);
        valid &= (amc_op_is_commutative(many[i]) == (i & 1));
    }
    CHECK(valid, "100 more ops created and usable");
    CHECK(distinct, "100 more ops distinct");
    for (i = 0; i < 100; i++) {
        CHECK(amc_op_free(&many[i]) == AMC_SUCCESS, "free many[%d]", i);
    }

    /* create/free cycles do not grow the handle space */
    {
        amc_op_t first, h;
        int      same = 1;

        CHECK(amc_op_create(noop_fn, 1, &first) == AMC_SUCCESS, "create");
        saved = first;
        CHECK(amc_op_free(&first) == AMC_SUCCESS, "free");
        for (i = 0; i < 1000; i++) {
            if ((amc_op_create(noop_fn, 1, &h) != AMC_SUCCESS) || (h != saved) ||
                (amc_op_free(&h) != AMC_SUCCESS)) {
                same = 0;
            }
        }
        CHECK(same, "1000 create/free cycles reuse handle %d", saved);
    }

    CHECK(amc_op_free(&a) == AMC_SUCCESS, "free a");
    CHECK(amc_op_free(&c) == AMC_SUCCESS, "free c");
    CHECK(amc_op_free(&d) == AMC_SUCCESS, "free d");
}

/* A bound op keeps its function: MPI lets an op be freed while a collective
 * that uses it is still running. */
static void test_bound(void)
{
    amc_op_bound_t bound;
    amc_op_t       op;
    int            in[2] = { 1, 2 }, io[2] = { 3, 4 };

    CHECK(amc_op_bind(AMC_LAND, AMC_DOUBLE, &bound) == AMC_ERR_ARG, "bind a forbidden pair");
    CHECK(amc_op_bind(AMC_SUM, AMC_INT, NULL) == AMC_ERR_ARG, "bind to NULL");
    CHECK(amc_op_bind(AMC_SUM, AMC_INT, &bound) == AMC_SUCCESS && bound.commute == 1,
          "bind SUM");
    amc_op_bound_reduce(&bound, in, io, 2);
    CHECK(io[0] == 4 && io[1] == 6, "bound SUM");

    CHECK(amc_op_create(digits_fn, 0, &op) == AMC_SUCCESS, "create");
    CHECK(amc_op_bind(op, AMC_INT, &bound) == AMC_SUCCESS && bound.commute == 0, "bind user op");
    CHECK(amc_op_free(&op) == AMC_SUCCESS, "free while bound");
    amc_op_bound_reduce(&bound, in, io, 2);
    CHECK(io[0] == 14 && io[1] == 26, "the bound op still runs: %d %d", io[0], io[1]);
}

/* A user op with data: the function gets the data of its op, one function
 * serves ops that differ only in their data (as libamcoll_mpi's bindings
 * do), and a bound op keeps its data after the free. */
typedef struct {
    int scale;
    int calls;
} data_op_t;

static void scaled_sum_fn(const void *in, void *inout, size_t count, amc_datatype_t dt,
                          void *data)
{
    data_op_t *d = data;
    const int *a = in;
    int       *b = inout;
    size_t     i;

    (void)dt;
    d->calls++;
    for (i = 0; i < count; i++) {
        b[i] = d->scale * a[i] + b[i];
    }
}

static void test_user_data(void)
{
    data_op_t      two = {2, 0}, ten = {10, 0};
    amc_op_t       a, b;
    amc_op_bound_t bound;
    int            in[2] = {1, 2}, io[2] = {3, 4};

    CHECK(amc_op_create_data(NULL, &two, 1, &a) == AMC_ERR_ARG, "NULL fn");
    CHECK(amc_op_create_data(scaled_sum_fn, &two, 1, NULL) == AMC_ERR_ARG, "NULL op");
    CHECK(amc_op_create_data(scaled_sum_fn, &two, 0, &a) == AMC_SUCCESS, "create two");
    CHECK(amc_op_create_data(scaled_sum_fn, &ten, 1, &b) == AMC_SUCCESS, "create ten");
    CHECK((a != b) && (amc_op_is_commutative(a) == 0) && (amc_op_is_commutative(b) == 1),
          "two handles, commute flags kept");
    CHECK(strcmp(amc_op_name(a), "user op") == 0, "name %s", amc_op_name(a));
    amc_op_reduce(a, AMC_INT, in, io, 2);
    CHECK((io[0] == 5) && (io[1] == 8) && (two.calls == 1) && (ten.calls == 0),
          "op two: %d %d, calls %d %d", io[0], io[1], two.calls, ten.calls);
    amc_op_reduce(b, AMC_INT, in, io, 2);
    CHECK((io[0] == 15) && (io[1] == 28) && (ten.calls == 1), "op ten: %d %d", io[0], io[1]);
    amc_op_reduce(b, AMC_INT, in, io, 0);
    CHECK(ten.calls == 1, "count 0 does not call the function");

    CHECK(amc_op_bind(a, AMC_INT, &bound) == AMC_SUCCESS && (bound.commute == 0),
          "bind op two");
    CHECK(amc_op_free(&a) == AMC_SUCCESS, "free while bound");
    CHECK(amc_op_check(b, AMC_INT) == AMC_SUCCESS, "the other stays");
    amc_op_bound_reduce(&bound, in, io, 2);
    CHECK((io[0] == 17) && (io[1] == 32) && (two.calls == 2),
          "the bound op runs with its data after the free: %d %d", io[0], io[1]);
    CHECK(amc_op_free(&b) == AMC_SUCCESS, "free ten");
    CHECK(amc_op_check(b, AMC_INT) == AMC_ERR_ARG, "gone");
}

/* Threads creating and freeing at once get distinct handles. */
#define THREADS     4
#define PER_THREAD  200

static amc_op_t thread_ops[THREADS][PER_THREAD];

static void *thread_create(void *arg)
{
    amc_op_t *ops = arg;
    int       i;

    for (i = 0; i < PER_THREAD; i++) {
        if (amc_op_create(noop_fn, 1, &ops[i]) != AMC_SUCCESS) {
            ops[i] = AMC_OP_INVALID;
        }
        /* churn: free and recreate every other one */
        if ((i & 1) && (amc_op_free(&ops[i]) == AMC_SUCCESS) &&
            (amc_op_create(noop_fn, 0, &ops[i]) != AMC_SUCCESS)) {
            ops[i] = AMC_OP_INVALID;
        }
    }
    return NULL;
}

static int cmp_op(const void *a, const void *b)
{
    amc_op_t x = *(const amc_op_t *)a, y = *(const amc_op_t *)b;

    return (x > y) - (x < y);
}

static void test_threads(void)
{
    pthread_t t[THREADS];
    amc_op_t  sorted[THREADS * PER_THREAD];
    int       i, ok = 1;

    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&t[i], NULL, thread_create, thread_ops[i]) == 0, "thread");
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    memcpy(sorted, thread_ops, sizeof(sorted));
    qsort(sorted, THREADS * PER_THREAD, sizeof(sorted[0]), cmp_op);
    for (i = 0; i < THREADS * PER_THREAD; i++) {
        ok &= (sorted[i] >= AMC_OP_USER_BASE) && ((i == 0) || (sorted[i] != sorted[i - 1]));
    }
    CHECK(ok, "concurrent creates: all handles valid and distinct");
    for (i = 0; i < THREADS * PER_THREAD; i++) {
        CHECK(amc_op_free(&thread_ops[i / PER_THREAD][i % PER_THREAD]) == AMC_SUCCESS,
              "free %d", i);
    }
}

int main(void)
{
    test_datatypes();
    test_rules();
    test_results();
    test_spot();
    test_untouched();
    test_user_order();
    test_user_handles();
    test_bound();
    test_user_data();
    test_threads();
    return amc_test_summary("test_ops");
}
