#include "handlers/wire.h"

#include <string.h>

_Static_assert(AMC_WIRE_X_ALL == (31u << 2), "the extension bits are bits 2-6");

const char *amc_wire_unpack(const void *bytes, size_t len, amc_wire_hdr_t *hdr)
{
    const unsigned char *ext = (const unsigned char *)bytes + AMC_WIRE_CORE_BYTES;
    uint32_t             w[AMC_WIRE_CORE_WORDS], word;
    uint32_t             flags;
    size_t               expect;

    if (len < AMC_WIRE_CORE_BYTES) {
        return "truncated header";
    }
    memcpy(w, bytes, sizeof(w)); /* the transport's header may be unaligned */
    if ((w[0] & 0xffffu) != (AMC_WIRE_MAGIC | (AMC_WIRE_VERSION << 8))) {
        return "bad magic or wire version";
    }
    flags = w[0] >> 24;
    if (flags & ~(AMC_WIRE_X_ALL | AMC_WIRE_FLAG_ABORT | AMC_WIRE_FLAG_LAST)) {
        return "unknown header flags";
    }
    expect = amc_wire_len_of(flags);
    if (len != expect) {
        return (len < expect) ? "truncated header" : "oversized header";
    }
    hdr->magic   = AMC_WIRE_MAGIC;
    hdr->version = AMC_WIRE_VERSION;
    hdr->kind    = (uint8_t)(w[0] >> 16);
    hdr->flags   = (uint8_t)(flags & ~AMC_WIRE_X_ALL);
    hdr->coll    = (uint8_t)w[1];
    hdr->alg     = (uint8_t)(w[1] >> 8);
    hdr->round   = w[1] >> 16;
    hdr->src     = w[2];
    hdr->seq     = w[3];
    hdr->cid     = w[4];
    hdr->root    = -1;
    hdr->status  = 0;
    hdr->credits = 0;
    if (len == AMC_WIRE_CORE_BYTES) {
        return NULL;
    }
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
