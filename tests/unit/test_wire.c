/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packed wire header (handlers/wire.h): every field survives a pack and
 * an unpack, a message is as long as its flags say (20 bytes for a barrier
 * or an unrooted collective, one word more per field it needs), any other
 * length or a foreign first word is refused, and collectives keep working
 * when the sequence number needs its high half (past 2^32 instances on one
 * communicator). A round's header (am_coll/barrier/round_hdr.h), whose usual
 * one is written without amc_wire_pack, is the same bytes as amc_wire_pack
 * makes of its fields, in every case.
 */
#include "tests/unit/harness.h"
#include "am_coll/barrier/round_hdr.h"
#include "handlers/wire.h"

#include <stdlib.h>
#include <string.h>

static amc_wire_hdr_t hdr_of(uint8_t kind, uint64_t cid, uint64_t seq, uint32_t round,
                             int32_t root, uint8_t flags, uint8_t status)
{
    amc_wire_hdr_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    hdr.kind   = kind;
    hdr.coll   = 7;
    hdr.alg    = 3;
    hdr.src    = 0xfedcba98u;
    hdr.cid    = cid;
    hdr.seq    = seq;
    hdr.round  = round;
    hdr.root   = root;
    hdr.flags  = flags;
    hdr.status = status;
    return hdr;
}

static void check_round_trip(const amc_wire_hdr_t *in, uint32_t credits, size_t want_len)
{
    amc_wire_packed_t p;
    amc_wire_hdr_t    out;
    unsigned char     bytes[AMC_WIRE_MAX_BYTES + 8];
    size_t            len, cut;
    const char       *why;

    len = amc_wire_add_credits(&p, amc_wire_pack(in, &p), credits);
    CHECK(len == want_len, "cid %llx seq %llx round %x root %d: %zu bytes, expected %zu",
          (unsigned long long)in->cid, (unsigned long long)in->seq, (unsigned)in->round,
          (int)in->root, len, want_len);
    /* from an odd address: the transport's header may be unaligned */
    memcpy(bytes + 1, &p, len);
    why = amc_wire_unpack(bytes + 1, len, &out);
    CHECK(why == NULL, "unpack: %s", why ? why : "");
    if (why != NULL) {
        return;
    }
    CHECK((out.magic == AMC_WIRE_MAGIC) && (out.version == AMC_WIRE_VERSION), "magic");
    CHECK(out.kind == in->kind, "kind %u", out.kind);
    CHECK(out.coll == in->coll, "coll %u", out.coll);
    CHECK(out.alg == in->alg, "alg %u", out.alg);
    CHECK(out.src == in->src, "src %x", out.src);
    CHECK(out.cid == in->cid, "cid %llx", (unsigned long long)out.cid);
    CHECK(out.seq == in->seq, "seq %llx", (unsigned long long)out.seq);
    CHECK(out.round == in->round, "round %x", out.round);
    CHECK(out.root == in->root, "root %d", (int)out.root);
    CHECK(out.flags == in->flags, "flags %x", out.flags);
    CHECK(out.status == ((in->flags & AMC_WIRE_FLAG_ABORT) ? in->status : 0), "status %u",
          out.status);
    CHECK(out.credits == credits, "credits %u", out.credits);

    /* every other length is refused */
    for (cut = 0; cut <= AMC_WIRE_MAX_BYTES + 4; cut++) {
        if (cut != len) {
            CHECK(amc_wire_unpack(bytes + 1, cut, &out) != NULL, "%zu of %zu bytes accepted",
                  cut, len);
        }
    }
    /* credits added again replace the old ones, none removes them */
    CHECK(amc_wire_add_credits(&p, len - 4 * (credits != 0), 0) == len - 4 * (credits != 0),
          "credits removed");
    CHECK(amc_wire_unpack(&p, len - 4 * (credits != 0), &out) == NULL, "without credits");
    CHECK(out.credits == 0, "credits left: %u", out.credits);
}

static void test_round_trips(void)
{
    const uint64_t big = 0x123456789abcull;
    amc_wire_hdr_t h;

    h = hdr_of(AMC_WIRE_BARRIER, 1, 5, 3, -1, 0, 0);
    check_round_trip(&h, 0, 20);
    h = hdr_of(AMC_WIRE_COLL, 1, 5, 0xffff, -1, AMC_WIRE_FLAG_LAST, 0);
    check_round_trip(&h, 0, 20);
    check_round_trip(&h, 9, 24);
    h = hdr_of(AMC_WIRE_COLL, 1, 5, 2, 0, 0, 0);
    check_round_trip(&h, 0, 24);
    h = hdr_of(AMC_WIRE_COLL, 1, 5, 2, 0x7fffffff, 0, 0);
    check_round_trip(&h, 0xffffffffu, 28);
    h = hdr_of(AMC_WIRE_COLL, big, 5, 2, -1, 0, 0);
    check_round_trip(&h, 0, 24);
    h = hdr_of(AMC_WIRE_COLL, 1, big, 2, -1, 0, 0);
    check_round_trip(&h, 0, 24);
    h = hdr_of(AMC_WIRE_COLL, 1, 5, 0x10000, -1, 0, 0);
    check_round_trip(&h, 0, 24);
    h = hdr_of(AMC_WIRE_COLL, 1, 5, 2, -1, AMC_WIRE_FLAG_ABORT, 6);
    check_round_trip(&h, 0, 24);
    /* everything at once: the longest header */
    h = hdr_of(AMC_WIRE_COLL, big, big, 0xffffffffu, 12, AMC_WIRE_FLAG_ABORT | AMC_WIRE_FLAG_LAST,
               255);
    check_round_trip(&h, 3, AMC_WIRE_MAX_BYTES);
}

static void test_refused(void)
{
    amc_wire_packed_t p;
    amc_wire_hdr_t    h = hdr_of(AMC_WIRE_COLL, 1, 5, 2, -1, AMC_WIRE_FLAG_ABORT, 6), out;
    size_t            len = amc_wire_pack(&h, &p);
    uint32_t          w0 = p.w[0];

    p.w[0] = (w0 & ~0xffu) | 0x11u;
    CHECK(amc_wire_unpack(&p, len, &out) != NULL, "bad magic accepted");
    p.w[0] = (w0 & ~0xff00u) | ((AMC_WIRE_VERSION - 1u) << 8);
    CHECK(amc_wire_unpack(&p, len, &out) != NULL, "an older version accepted");
    p.w[0] = w0 | (0x80u << 24);
    CHECK(amc_wire_unpack(&p, len, &out) != NULL, "an unknown flag accepted");
    p.w[0]    = w0;
    p.w[5]    = 0x100; /* a status no byte holds */
    CHECK(amc_wire_unpack(&p, len, &out) != NULL, "status 0x100 accepted");
    p.w[5] = 6;
    CHECK(amc_wire_unpack(&p, len, &out) == NULL, "the header itself");
}

/* Sequence numbers past 2^32: the header grows by a word and every rank
 * still finds the instance (the messages cross from below to above). */
static void test_seq_high_half(void)
{
    enum { N = 3, CALLS = 6 };
    amc_test_world_t w;
    amc_request_t    reqs[N];
    amc_comm_t       comm;
    int64_t          in[N], out[N];
    int              status[N], rank, call, rc;

    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_LATER, NULL) == AMC_SUCCESS, "world");
    for (rank = 0; rank < N; rank++) {
        comm                = amc_test_world_comm(&w, rank);
        comm->ctrl.seq_next = (1ull << 32) - 4;
        comm->ctrl.seq_base = comm->ctrl.seq_next;
    }
    for (call = 0; call < CALLS; call++) {
        /* the ranks start in a different order each call, so that some
         * messages come before their receiver's call */
        for (rank = 0; rank < N; rank++) {
            int r = (rank + call) % N;

            comm     = amc_test_world_comm(&w, r);
            in[r]    = (int64_t)(r + 1) << 33;
            out[r]   = -1;
            if (call % 3 == 0) {
                rc = amc_ibarrier(comm, &reqs[r]);
            } else if (call % 3 == 1) {
                rc = amc_iallreduce(&in[r], &out[r], 1, AMC_INT64, AMC_SUM, comm, &reqs[r]);
            } else {
                out[r] = (r == 2) ? 77 : 0;
                rc     = amc_ibcast(&out[r], 1, AMC_INT64, 2, comm, &reqs[r]);
            }
            CHECK(rc == AMC_SUCCESS, "call %d rank %d: %s", call, r, amc_strerror(rc));
            (void)amc_fake_deliver(w.fabric, 0);
        }
        CHECK(amc_test_world_drive(&w, reqs, status), "call %d did not finish", call);
        for (rank = 0; rank < N; rank++) {
            CHECK(status[rank] == AMC_SUCCESS, "call %d rank %d: %s", call, rank,
                  amc_strerror(status[rank]));
        }
        for (rank = 0; rank < N; rank++) {
            if (call % 3 == 1) {
                CHECK(out[rank] == (int64_t)6 << 33, "allreduce %d rank %d: %lld", call, rank,
                      (long long)out[rank]);
            } else if (call % 3 == 2) {
                CHECK(out[rank] == 77, "bcast %d rank %d: %lld", call, rank,
                      (long long)out[rank]);
            }
        }
    }
    for (rank = 0; rank < N; rank++) {
        comm = amc_test_world_comm(&w, rank);
        CHECK(comm->ctrl.seq_next == (1ull << 32) - 4 + CALLS, "rank %d at seq %llx", rank,
              (unsigned long long)comm->ctrl.seq_next);
    }
    /* credit messages may follow the last call (AMC_EAGER_TOKENS=1 in the
     * environment: every released message owes one) */
    amc_test_world_settle(&w, "after the calls");
    amc_test_world_destroy(&w);
}

/* amc_round_hdr_pack against amc_wire_pack of the fields it stands for:
 * the usual round 0 (its own path), rooted or not, and every case beside
 * it. */
static void check_round_hdr(struct amc_comm *comm, uint8_t coll, uint8_t oneway, int root,
                            uint64_t seq, int status, int round)
{
    amc_wire_packed_t got, want;
    amc_wire_hdr_t    h;
    size_t            got_len, want_len;

    memset(&got, 0xee, sizeof(got));
    memset(&want, 0xee, sizeof(want));
    memset(&h, 0, sizeof(h));
    h.kind  = AMC_WIRE_BARRIER;
    h.coll  = coll;
    h.src   = (uint32_t)comm->rank;
    h.cid   = comm->cid;
    h.seq   = seq;
    h.round = (uint32_t)round;
    h.root  = root; /* -1: none; a tree's past N=2 names it with oneway BOTH */
    if (oneway != AMC_CTRL_BOTH) {
        h.alg  = (oneway == AMC_CTRL_SENDS) ? AMC_CTRL_MSG_EAGER
                 : (oneway == AMC_CTRL_ASKS) ? AMC_CTRL_MSG_ASK : AMC_CTRL_MSG_ANSWER;
    }
    if ((status != AMC_SUCCESS) && (coll != 0)) {
        h.flags  = AMC_WIRE_FLAG_ABORT;
        h.status = (uint8_t)status;
    }
    want_len = amc_wire_pack(&h, &want);
    got_len  = amc_round_hdr_pack(comm, coll, oneway, root, seq, status, round, &got);
    CHECK((got_len == want_len) && (memcmp(&got, &want, want_len) == 0),
          "round header coll %u oneway %u root %d seq %llx cid %llx status %d round %d: "
          "%zu bytes, amc_wire_pack %zu, or other bytes", coll, oneway, root,
          (unsigned long long)seq, (unsigned long long)comm->cid, status, round, got_len,
          want_len);
}

static void test_round_hdr(void)
{
    struct amc_comm *comm = calloc(1, sizeof(*comm));
    const uint64_t   big  = 0x123456789abcull;
    static const uint8_t onew[] = { AMC_CTRL_BOTH, AMC_CTRL_SENDS, AMC_CTRL_ASKS,
                                    AMC_CTRL_HEARS };
    unsigned         i;

    CHECK(comm != NULL, "calloc");
    if (comm == NULL) {
        return;
    }
    comm->rank = 1;
    comm->cid  = 0x42;
    for (i = 0; i < sizeof(onew); i++) {
        check_round_hdr(comm, 0, onew[i], 0, 5, AMC_SUCCESS, 0);       /* the barrier */
        check_round_hdr(comm, AMC_COLL_ALLREDUCE, onew[i], 1, 0xffffffffull, AMC_SUCCESS, 0);
        check_round_hdr(comm, AMC_COLL_ALLREDUCE, onew[i], 1, big, AMC_SUCCESS, 0);
        check_round_hdr(comm, AMC_COLL_BCAST, onew[i], 0, 7, AMC_ERR_ARG, 0);
        check_round_hdr(comm, 0, onew[i], 0, 7, AMC_ERR_ARG, 0);        /* no status on a barrier */
        check_round_hdr(comm, AMC_COLL_ALLREDUCE, onew[i], 0, 7, AMC_SUCCESS, 3);
        check_round_hdr(comm, AMC_COLL_ALLREDUCE, onew[i], 0, 7, AMC_SUCCESS, 0x10000);
        check_round_hdr(comm, AMC_COLL_GATHERV, onew[i], -1, 9, AMC_SUCCESS, 0); /* no root */
        check_round_hdr(comm, AMC_COLL_SCATTERV, onew[i], 0x7fffffff, 9, AMC_SUCCESS, 0);
    }
    comm->cid = big; /* a cid with a high half: the long form */
    check_round_hdr(comm, AMC_COLL_ALLREDUCE, AMC_CTRL_BOTH, -1, 5, AMC_SUCCESS, 0);
    comm->cid  = 0xffffffffull;
    comm->rank = 0;
    check_round_hdr(comm, AMC_COLL_ALLGATHER, AMC_CTRL_BOTH, -1, 0, AMC_SUCCESS, 0);
    free(comm);
}

int main(void)
{
    test_round_hdr();
    test_round_trips();
    test_refused();
    test_seq_high_half();
    return amc_test_summary("test_wire");
}
