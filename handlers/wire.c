/* SPDX-License-Identifier: BSD-3-Clause */
#include "handlers/wire.h"

#include <string.h>

_Static_assert(AMC_WIRE_X_ALL == (31u << 2), "the extension bits are bits 2-6");

const char *amc_wire_unpack(const void *bytes, size_t len, amc_wire_hdr_t *hdr)
{
    return amc_wire_unpack_inline(bytes, len, hdr);
}

const char *amc_wire_unpack_ext(const unsigned char *ext, uint32_t flags, amc_wire_hdr_t *hdr)
{
    uint32_t word;

#define AMC_WIRE_NEXT() (memcpy(&word, ext, 4), ext += 4, word)
    if (flags & AMC_WIRE_X_CID64) {
        hdr->cid |= (uint64_t)AMC_WIRE_NEXT() << 32;
    }
    if (flags & AMC_WIRE_X_SEQ64) {
        hdr->seq |= (uint64_t)AMC_WIRE_NEXT() << 32;
    }
    if (flags & AMC_WIRE_X_ROUND32) {
        hdr->round |= AMC_WIRE_NEXT() << 16;
    }
    if (flags & AMC_WIRE_X_ROOT) {
        hdr->root = (int32_t)AMC_WIRE_NEXT();
    }
    if (flags & AMC_WIRE_FLAG_ABORT) {
        if (AMC_WIRE_NEXT() > 0xffu) {
            return "malformed status";
        }
        hdr->status = (uint8_t)word;
    }
    if (flags & AMC_WIRE_X_CREDITS) {
        hdr->credits = AMC_WIRE_NEXT();
    }
#undef AMC_WIRE_NEXT
    return NULL;
}
