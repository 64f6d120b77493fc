/* SPDX-License-Identifier: BSD-3-Clause */
#include "amcoll.h"
#include "am_coll/api/config_read.h"
#include "am_coll/alg/alg.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

struct amc_config_entry;

typedef int  (*amc_config_parse_fn_t)(const struct amc_config_entry *entry, const char *text,
                                      void *field);
typedef void (*amc_config_format_fn_t)(const void *field, char *buf, size_t len);

typedef struct amc_config_entry {
    const char            *name;
    const char            *default_value;
    const char            *doc;
    size_t                 offset;
    amc_config_parse_fn_t  parse;
    amc_config_format_fn_t format;
    int                    coll;     /* AMC_<COLL>_ALG entries: the collective */
} amc_config_entry_t;

static int amc_config_parse_level(const amc_config_entry_t *entry, const char *text, void *field)
{
    (void)entry;
    int level = amc_log_level_parse(text);

    if (level < 0) {
        return AMC_ERR_ARG;
    }
    *(int *)field = level;
    return AMC_SUCCESS;
}

static void amc_config_format_level(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%s", amc_log_level_name(*(const int *)field));
}

/* strto*'s result is the whole text and in range. */
static int amc_config_number_ok(const char *text, const char *end)
{
    return (errno == 0) && (end != text) && (*end == '\0');
}

static int amc_config_parse_seconds(const amc_config_entry_t *entry, const char *text, void *field)
{
    (void)entry;
    char  *end;
    double value;

    errno = 0;
    value = strtod(text, &end);
    if (!amc_config_number_ok(text, end) || !(value >= 0.0) || (value > 1e9)) {
        return AMC_ERR_ARG;
    }
    *(double *)field = value;
    return AMC_SUCCESS;
}

static void amc_config_format_seconds(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%g", *(const double *)field);
}

static int amc_config_parse_unsigned(const amc_config_entry_t *entry, const char *text, void *field)
{
    (void)entry;
    char              *end;
    unsigned long long value;

    if (text[0] == '-') {
        return AMC_ERR_ARG;
    }
    errno = 0;
    value = strtoull(text, &end, 10);
    if (!amc_config_number_ok(text, end) || (value > UINT_MAX / 2)) {
        return AMC_ERR_ARG;
    }
    *(unsigned *)field = (unsigned)value;
    return AMC_SUCCESS;
}

static void amc_config_format_unsigned(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%u", *(const unsigned *)field);
}

static int amc_config_parse_spin(const amc_config_entry_t *entry, const char *text, void *field)
{
    (void)entry;
    if (strcmp(text, "auto") == 0) {
        *(unsigned *)field = AMC_SPIN_AUTO;
        return AMC_SUCCESS;
    }
    return amc_config_parse_unsigned(entry, text, field);
}

static void amc_config_format_spin(const void *field, char *buf, size_t len)
{
    if (*(const unsigned *)field == AMC_SPIN_AUTO) {
        snprintf(buf, len, "auto");
    } else {
        amc_config_format_unsigned(field, buf, len);
    }
}

static int amc_config_parse_alg(const amc_config_entry_t *entry, const char *text, void *field)
{
    if ((strlen(text) >= AMC_ALG_NAME_MAX) ||
        ((strcmp(text, "auto") != 0) && (amc_alg_find(entry->coll, text) == NULL))) {
        return AMC_ERR_ARG;
    }
    strcpy(field, text);
    return AMC_SUCCESS;
}

static void amc_config_format_string(const void *field, char *buf, size_t len)
{
    snprintf(buf, len, "%s", (const char *)field);
}

/* Every path field is as large as timeline (_Static_assert below). */
static int amc_config_parse_path(const amc_config_entry_t *entry, const char *text, void *field)
{
    (void)entry;
    if (strlen(text) >= sizeof(((amc_config_t *)0)->timeline) - 16) {
        return AMC_ERR_ARG; /* room for ".RANK.tl" */
    }
    strcpy(field, text);
    return AMC_SUCCESS;
}

_Static_assert(sizeof(((amc_config_t *)0)->tuning_file) == sizeof(((amc_config_t *)0)->timeline),
               "amc_config_parse_path bounds every path by timeline's size");

/* The prefix of the benchmarks' own variables (not the library's, not warned about). */
#define AMC_CONFIG_BENCH_PREFIX "AMC_BENCH_"

/* A row's last four members: where its value goes and how it is read and
 * printed (the kind), one macro a kind, so a row names its field once. */
#define AMC_CONFIG_KIND(_field, _parse, _format) \
    offsetof(amc_config_t, _field), amc_config_parse_##_parse, amc_config_format_##_format, \
        AMC_COLL_NONE
#define AMC_CONFIG_PATH(_field)     AMC_CONFIG_KIND(_field, path, string)
#define AMC_CONFIG_LEVEL(_field)    AMC_CONFIG_KIND(_field, level, level)
#define AMC_CONFIG_SECONDS(_field)  AMC_CONFIG_KIND(_field, seconds, seconds)
#define AMC_CONFIG_UNSIGNED(_field) AMC_CONFIG_KIND(_field, unsigned, unsigned)
#define AMC_CONFIG_SPIN(_field)     AMC_CONFIG_KIND(_field, spin, spin)
#define AMC_CONFIG_ALG(_coll) \
    offsetof(amc_config_t, alg[_coll]), amc_config_parse_alg, amc_config_format_string, (_coll)

/* Defaults of the wait policy come from measurements on a 2-core machine with
 * up to 32 ranks (doc/design.md, "Waiting"). */
static const amc_config_entry_t amc_config_table[] = {
    { "AMC_LOG_LEVEL", "warn",
      "Log level: error, warn, info, debug or trace.",
      AMC_CONFIG_LEVEL(log_level) },
    { "AMC_TIMEOUT", "0",
      "Seconds after which a wait that cannot complete returns AMC_ERR_TIMEOUT "
      "and logs what it waits for (fractions allowed); 0 waits forever.",
      AMC_CONFIG_SECONDS(timeout_sec) },
    { "AMC_SPIN_COUNT", "auto",
      "Empty progress passes a wait spins before it starts to yield the core; "
      "auto: 0 when the node runs more ranks than it has cores, else 1000.",
      AMC_CONFIG_SPIN(wait.spin_count) },
    { "AMC_YIELD_USEC", "2000",
      "Microseconds a wait keeps yielding (sched_yield) before it arms the UCX "
      "worker and sleeps on its event fd.",
      AMC_CONFIG_UNSIGNED(wait.yield_usec) },
    { "AMC_SLEEP_MSEC", "100",
      "Longest single sleep of an idle wait in milliseconds; bounds how late "
      "a timeout is noticed.",
      AMC_CONFIG_UNSIGNED(wait.sleep_msec) },
    { "AMC_EARLY_MAX", "4096",
      "Collectives a rank may have started on one communicator beyond its control "
      "window of 8, counted from the oldest one not finished on this rank: a start "
      "beyond returns AMC_ERR_NO_MEMORY and starts nothing (complete requests and "
      "make the call again). Peers' messages that run ahead are held up to "
      "2 x (8 + AMC_EARLY_MAX) + (N - 1) x AMC_EAGER_TOKENS instances ahead, as far "
      "as a peer can get; further is a protocol error.",
      AMC_CONFIG_UNSIGNED(early_max) },
    { "AMC_ORPHAN_MAX", "4096",
      "Messages held for communicators this rank has not created yet; more is "
      "a protocol error.",
      AMC_CONFIG_UNSIGNED(orphan_max) },
    { "AMC_BCAST_PIPELINE_MIN", "65536",
      "Bytes from which bcast sends segments down the binomial tree, so that "
      "inner ranks forward one segment while the next arrives.",
      AMC_CONFIG_UNSIGNED(bcast_pipeline_min) },
    { "AMC_BCAST_SEGMENT", "32768",
      "Segment size of the pipelined bcast in bytes.",
      AMC_CONFIG_UNSIGNED(bcast_segment) },
    { "AMC_ALLREDUCE_RING_MIN", "65536",
      "Bytes from which allreduce with a commutative op runs reduce-scatter + "
      "allgather on a ring (each rank moves 2(N-1)/N of the data instead of log2 N "
      "times all of it).",
      AMC_CONFIG_UNSIGNED(allreduce_ring_min) },
    { "AMC_FAST_MAX", "1024",
      "Bytes per message up to which allreduce, allgather, alltoall and "
      "reduce_scatter_block (predefined ops), where recursive doubling or halving "
      "(or Bruck; at N=2 the defaults) is chosen, run on the barrier's control "
      "structure: each round's message carries the partial result or blocks (N/2 "
      "at most; off a power of two allreduce, allgather, alltoall and "
      "reduce_scatter_block go Bruck's way, their N blocks in twice this), no "
      "schedule is built or walked; the "
      "rooted ones and the scans too (on 2 ranks any call, past that blocking "
      "calls as trees: binomial bcast, reduce, gather, scatter, Hillis-Steele "
      "scans; a gather's, reduce's or scatter's N blocks in twice this), and on 2 "
      "ranks the v-forms. At most 1024 at every N (larger values act as that); 0 "
      "turns it off. Every rank must use the same.",
      AMC_CONFIG_UNSIGNED(fast_max) },
    { "AMC_ALLGATHER_BRUCK_MAX", "32768",
      "Total bytes (all ranks' blocks) up to which allgather uses Bruck's "
      "log2 N steps instead of the N-1 steps of the ring.",
      AMC_CONFIG_UNSIGNED(allgather_bruck_max) },
    { "AMC_ALLTOALLV_BRUCK_BLOCK", "256",
      "alltoallv bruck: blocks of up to this many bytes take Bruck's log2 N "
      "steps, each in a slot of this size (shorter blocks are padded), larger "
      "ones go straight to their destination. At most 65536 (larger values act "
      "as 65536). Every rank must use the same.",
      AMC_CONFIG_UNSIGNED(alltoallv_bruck_block) },
    { "AMC_ALLTOALL_LINEAR_MAX", "1048576",
      "Bytes per block up to which alltoall sends every block at once (one "
      "scheduling step per rank) instead of in N-1 pairwise steps, which bound "
      "the traffic in flight.",
      AMC_CONFIG_UNSIGNED(alltoall_linear_max) },
    { "AMC_LANES_BARRIER", "1",
      "1: across nodes, the barrier runs multi_lane (every member of a node sends "
      "across to its share of the other nodes, in one step, or in rounds when the "
      "share is over 8) where a cost estimate fitted to the scale simulator "
      "predicts it faster than the flat fast path; 0: never "
      "(doc/design.md, \"Node-aware collectives\").",
      AMC_CONFIG_UNSIGNED(lanes_barrier) },
    { "AMC_LANES_ALLREDUCE", "1",
      "1: across nodes, allreduce with a commutative op (below "
      "AMC_ALLREDUCE_RING_MIN) runs multi_lane where the same estimate predicts "
      "it faster than recursive doubling; 0: never.",
      AMC_CONFIG_UNSIGNED(lanes_allreduce) },
    { "AMC_LANES_ALLREDUCE_BYTES", "16384",
      "The most bytes of nodes x message for the multi_lane allreduce (every "
      "member gathers one result per node).",
      AMC_CONFIG_UNSIGNED(lanes_allreduce_bytes) },
    { "AMC_LINEAR_MAX_RANKS", "0",
      "Communicators of at most this many ranks use the linear algorithms of bcast, "
      "reduce, allreduce and allgather (up to AMC_LINEAR_MAX_BYTES): every rank talks "
      "to the root, or to every rank, in one step, so each rank is scheduled once "
      "instead of once per tree level; 0 turns it off.",
      AMC_CONFIG_UNSIGNED(linear_max_ranks) },
    { "AMC_OVERSUB_LINEAR_MAX_RANKS", "32",
      "The same, for communicators whose ranks all run on one node that has more "
      "ranks than cores (where waiting for a tree's inner ranks to be scheduled "
      "dominates); 0 turns it off.",
      AMC_CONFIG_UNSIGNED(oversub_linear_max_ranks) },
    { "AMC_LINEAR_MAX_BYTES", "65536",
      "Bytes per rank up to which the two variables above choose linear algorithms.",
      AMC_CONFIG_UNSIGNED(linear_max_bytes) },
    { "AMC_NODE_SIZE", "0",
      "Which ranks share a node, for the node-aware (hierarchical) algorithms: 0 "
      "asks the launcher (PMIx node ids); k > 0 makes every k consecutive world ranks "
      "a node (the last one may be short), so that one machine can run them as if "
      "on several. A k of at least the job size makes one node, which turns them "
      "off. Every rank must use the same.",
      AMC_CONFIG_UNSIGNED(node_size) },
    { "AMC_RNDV_THRESH", "16384",
      "Bytes from which a collective's message stays at the sender until the "
      "receiver's schedule reaches it and pulls it straight into place (UCX AM "
      "rendezvous); smaller ones travel eagerly and wait in early-arrival "
      "buffers if they come early. An eager message takes a token (AMC_EAGER_TOKENS) "
      "per AMC_RNDV_THRESH bytes begun, so every rank should use the same (ranks "
      "that disagree drift to rendezvous or past the bound, never to a wrong answer).",
      AMC_CONFIG_UNSIGNED(rndv_thresh) },
    { "AMC_RNDV_THRESH_NODE", "0",
      "AMC_RNDV_THRESH for a message to a rank of this rank's node (AMC_NODE_SIZE's "
      "or the launcher's); 0: AMC_RNDV_THRESH. Higher lets UCX's shared-memory eager "
      "copies carry more: at 16 and 32 KiB they beat its rendezvous in most runs "
      "here and lose 2-3x in the others (doc/performance.md).",
      AMC_CONFIG_UNSIGNED(rndv_thresh_node) },
    { "AMC_DEFER_BYTES", "4096",
      "Bytes from which a copy or reduction runs outside the communicator's "
      "control lock, after the sends that became ready with it are posted, so "
      "that the transfer overlaps it (an allgather's own block, a scan's own "
      "vector) and arrivals are not held up behind it; also the reduction of "
      "a received message that was pulled, or that found its receive ready.",
      AMC_CONFIG_UNSIGNED(defer_bytes) },
    { "AMC_EAGER_TOKENS", "64",
      "Eager data messages a rank may have outstanding to one peer before the peer "
      "gives their memory back; without a token data goes by rendezvous, so a late "
      "rank holds at most this many times AMC_RNDV_THRESH bytes of early messages "
      "from each peer. 0: every data message by rendezvous.",
      AMC_CONFIG_UNSIGNED(eager_tokens) },
    { "AMC_PROGRESS_THREAD", "0",
      "1: one thread per process sleeps on the UCX wakeup fd and runs the handlers "
      "while non-blocking collectives are outstanding and no application thread is "
      "waiting, so they complete during computation without test calls. It parks "
      "otherwise: blocking collectives run as without it.",
      AMC_CONFIG_UNSIGNED(progress_thread) },
    { "AMC_PROGRESS_THREAD_YIELD_USEC", "0",
      "Microseconds the progress thread keeps yielding, after a pass that found "
      "nothing, before it sleeps on the UCX wakeup fd. It never spins: whatever "
      "core it holds while idle is taken from the computation it is there to "
      "overlap, or from a peer rank sharing the core.",
      AMC_CONFIG_UNSIGNED(progress_yield_usec) },
    { "AMC_FINALIZE_TIMEOUT", "5",
      "Seconds amc_finalize may wait for the other ranks (the flush of what this "
      "rank sent and the two PMIx fences of the teardown), so that it returns "
      "whatever happened to them; a rank known dead is not waited for at all. "
      "0: no bound.",
      AMC_CONFIG_SECONDS(finalize_timeout) },
    { "AMC_SHM", "1",
      "1: messages to ranks on this node of up to about 2 KiB go through single-writer "
      "shared-memory mailboxes (a ring per pair of ranks, made on first contact; "
      "doc/design.md, Mailboxes), everything else through UCX. 0: everything through UCX.",
      AMC_CONFIG_UNSIGNED(shm) },
    { "AMC_SHM_PULL", "1",
      "With AMC_SHM=1, 1: rendezvous data (AMC_RNDV_THRESH, AMC_RNDV_THRESH_NODE) to a rank "
      "on this node is pulled by it straight into place with cross-memory attach "
      "(process_vm_readv), the sender writing part of it meanwhile if it is in progress, "
      "so that two cores copy (doc/design.md, Rendezvous data on the node). 0: by UCX's "
      "rendezvous. Off where the kernel lets no process read a sibling's memory (Yama "
      "ptrace_scope above 0) or has no pidfd_open, and from the first refusal at run time "
      "(seccomp, an LSM: said once; that transfer is resent through the mailbox).",
      AMC_CONFIG_UNSIGNED(shm_pull) },
    { "AMC_UCX_ERR_MODE_PEER", "2",
      "Which UCX endpoints use UCP_ERR_HANDLING_MODE_PEER, so that UCX reports the "
      "peers it loses (a closed connection; keepalive: UCX_KEEPALIVE_INTERVAL) as dead: "
      "2 those to other nodes (PMIX_LOCAL_PEERS says which), 1 every one, 0 none. On "
      "this node it is costly (shared-memory transports lack it, and traffic moves to "
      "TCP unless UCX_MM_ERROR_HANDLING=y), and peers there are watched by process id.",
      AMC_CONFIG_UNSIGNED(ucx_err_mode_peer) },
    { "AMC_TIMELINE", "",
      "Record a timeline of every scheduled collective's acts (start, end, peer, bytes, "
      "the act that released it) and write it to PREFIX.RANK.tl at amc_finalize; "
      "amc_goal timeline OUT PREFIX.*.tl draws OUT.json (Perfetto) and OUT.png. Empty: "
      "off (the engine then pays one branch per act). The fast-path barrier and the small "
      "collectives on its rounds (AMC_FAST_MAX) are no schedule and are not recorded.",
      AMC_CONFIG_PATH(timeline) },
    { "AMC_TUNING_FILE", "",
      "A rules file read when the library starts: one rule a line, 'COLL MIN_RANKS "
      "MAX_RANKS MIN_BYTES MAX_BYTES ALGORITHM' (bounds inclusive, bytes per rank as "
      "the selection counts them, '#' comments), e.g. 'allreduce 2 8 0 4096 linear'; the "
      "first rule that holds a call's communicator size and bytes chooses its algorithm, "
      "unless AMC_<COLL>_ALG forces one or the op excludes it; no match: the built-in "
      "rules (AMC_TUNING_BUILTIN), then the automatic choice. bench/amc_tune.sh writes "
      "one from measurements. An unreadable file or a "
      "bad line fails amc_init (AMC_ERR_ARG, naming file:line). Every rank must read the "
      "same rules. Empty: none.",
      AMC_CONFIG_PATH(tuning_file) },
    { "AMC_TUNING_BUILTIN", "1",
      "1: after AMC_TUNING_FILE's rules, the library's built-in rules choose where they "
      "hold: the defaults measured with bench/amc_tune.sh (OSU's method) where ranks do "
      "not share cores, installed as share/amcoll/tuning_builtin.rules and listed by "
      "amc_info. 0: only the file's rules, then the automatic choice. Every rank must use "
      "the same.",
      AMC_CONFIG_UNSIGNED(tuning_builtin) },
    { "AMC_STATS", "0",
      "1: amc_finalize prints one line per rank on stderr with the library's "
      "counters (amc_stat_get): the endpoints this rank created (one per peer it "
      "sent to, on the first message: not one per rank of the job) and the peers "
      "it keeps flow-control state for.",
      AMC_CONFIG_UNSIGNED(stats) },
    { "AMC_BARRIER_ALG", "auto",
      "barrier: auto runs the dedicated fast path (am_coll/barrier/barrier.c), or on a "
      "communicator that spans nodes the hierarchical one on the engine; "
      "dissemination runs the fast path's algorithm as a schedule on the engine, "
      "hierarchical the node-aware one (AMC_NODE_SIZE), multi_lane, knomial (radix 4 "
      "tree to rank 0 and back) and linear (through rank 0) the others on the engine. "
      "Every rank must use the same.",
      AMC_CONFIG_ALG(AMC_COLL_BARRIER) },
    { "AMC_BCAST_ALG", "auto", "bcast algorithm (auto: by size, node-aware across nodes).",
      AMC_CONFIG_ALG(AMC_COLL_BCAST) },
    { "AMC_REDUCE_ALG", "auto",
      "reduce algorithm (auto: node-aware across nodes for commutative ops).",
      AMC_CONFIG_ALG(AMC_COLL_REDUCE) },
    { "AMC_ALLREDUCE_ALG", "auto",
      "allreduce algorithm (auto: by size, node-aware across nodes; ring and "
      "hierarchical only for commutative ops).",
      AMC_CONFIG_ALG(AMC_COLL_ALLREDUCE) },
    { "AMC_GATHER_ALG", "auto", "gather algorithm.",
      AMC_CONFIG_ALG(AMC_COLL_GATHER) },
    { "AMC_SCATTER_ALG", "auto", "scatter algorithm.",
      AMC_CONFIG_ALG(AMC_COLL_SCATTER) },
    { "AMC_ALLGATHER_ALG", "auto", "allgather algorithm (auto: by total size).",
      AMC_CONFIG_ALG(AMC_COLL_ALLGATHER) },
    { "AMC_ALLTOALL_ALG", "auto",
      "alltoall algorithm (auto: linear up to AMC_ALLTOALL_LINEAR_MAX, pairwise above).",
      AMC_CONFIG_ALG(AMC_COLL_ALLTOALL) },
    { "AMC_ALLTOALLV_ALG", "auto", "alltoallv algorithm (auto: linear).",
      AMC_CONFIG_ALG(AMC_COLL_ALLTOALLV) },
    { "AMC_ALLGATHERV_ALG", "auto", "allgatherv algorithm (auto: ring).",
      AMC_CONFIG_ALG(AMC_COLL_ALLGATHERV) },
    { "AMC_REDUCE_SCATTER_BLOCK_ALG", "auto",
      "reduce_scatter_block algorithm (auto: direct up to 8 ranks, else by block size).",
      AMC_CONFIG_ALG(AMC_COLL_REDUCE_SCATTER_BLOCK) },
    { "AMC_REDUCE_SCATTER_ALG", "auto", "reduce_scatter algorithm (auto: direct up to 8 ranks, else by block size).",
      AMC_CONFIG_ALG(AMC_COLL_REDUCE_SCATTER) },
    { "AMC_SCAN_ALG", "auto", "scan algorithm (auto: hillis_steele).",
      AMC_CONFIG_ALG(AMC_COLL_SCAN) },
    { "AMC_EXSCAN_ALG", "auto", "exscan algorithm (auto: hillis_steele).",
      AMC_CONFIG_ALG(AMC_COLL_EXSCAN) },
};

#define AMC_CONFIG_COUNT (sizeof(amc_config_table) / sizeof(amc_config_table[0]))

static const amc_config_entry_t *amc_config_find(const char *name, size_t name_len)
{
    size_t i;

    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        if ((strlen(amc_config_table[i].name) == name_len) &&
            (strncmp(amc_config_table[i].name, name, name_len) == 0)) {
            return &amc_config_table[i];
        }
    }
    return NULL;
}

void amc_config_defaults(amc_config_t *cfg)
{
    size_t i;
    int    status;

    memset(cfg, 0, sizeof(*cfg));
    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        status = amc_config_table[i].parse(&amc_config_table[i],
                                           amc_config_table[i].default_value,
                                           (char *)cfg + amc_config_table[i].offset);
        (void)status; /* the defaults are literals checked by test_config */
    }
}

/* Unsigned variables that are a choice among 0 .. max, checked after reading
 * (the parser bounds only the number); in the order of their messages. */
typedef struct amc_config_choice {
    const char *name;
    size_t      offset;
    unsigned    max;
    const char *choices;
} amc_config_choice_t;

static const amc_config_choice_t amc_config_choices[] = {
    { "AMC_UCX_ERR_MODE_PEER", offsetof(amc_config_t, ucx_err_mode_peer), 2, "0, 1 or 2" },
    { "AMC_TUNING_BUILTIN", offsetof(amc_config_t, tuning_builtin), 1, "0 or 1" },
    { "AMC_PROGRESS_THREAD", offsetof(amc_config_t, progress_thread), 1, "0 or 1" },
};

int amc_config_read(amc_config_t *cfg, const amc_log_t *log)
{
    const amc_config_entry_t *entry;
    const char               *value;
    char                    **env;
    size_t                    i;
    int                       status = AMC_SUCCESS;

    amc_config_defaults(cfg);

    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        entry = &amc_config_table[i];
        value = getenv(entry->name);
        if (value == NULL) {
            continue;
        }
        if (entry->parse(entry, value, (char *)cfg + entry->offset) != AMC_SUCCESS) {
            amc_error(log, "invalid value '%s' for %s: %s", value, entry->name, entry->doc);
            status = AMC_ERR_ARG;
        }
    }

    for (env = environ; (env != NULL) && (*env != NULL); env++) {
        const char *eq = strchr(*env, '=');

        /* AMC_BENCH_* belong to the programs of bench/, which run amcoll
         * and read their own settings from the same environment */
        if ((strncmp(*env, "AMC_", 4) != 0) || (eq == NULL) ||
            (strncmp(*env, AMC_CONFIG_BENCH_PREFIX, sizeof(AMC_CONFIG_BENCH_PREFIX) - 1) == 0)) {
            continue;
        }
        if (amc_config_find(*env, (size_t)(eq - *env)) == NULL) {
            amc_warn(log, "unused environment variable %.*s (see amc_info for the list)",
                     (int)(eq - *env), *env);
        }
    }
    if ((cfg->shm > 1) || (cfg->shm_pull > 1)) {
        amc_error(log, "AMC_SHM=%u, AMC_SHM_PULL=%u: each must be 0 or 1", cfg->shm,
                  cfg->shm_pull);
        return AMC_ERR_ARG;
    }
    for (i = 0; i < sizeof(amc_config_choices) / sizeof(amc_config_choices[0]); i++) {
        const amc_config_choice_t *c     = &amc_config_choices[i];
        unsigned                   value = *(const unsigned *)((const char *)cfg + c->offset);

        if (value > c->max) {
            amc_error(log, "invalid value %u for %s: %s", value, c->name, c->choices);
            status = AMC_ERR_ARG;
        }
    }
    return status;
}

void amc_config_print(FILE *stream, const amc_config_t *cfg)
{
    const amc_config_entry_t *entry;
    char                      value[64];
    size_t                    i;

    for (i = 0; i < AMC_CONFIG_COUNT; i++) {
        entry = &amc_config_table[i];
        entry->format((const char *)cfg + entry->offset, value, sizeof(value));
        fprintf(stream, "#\n# %s\n", entry->doc);
        if (entry->coll != AMC_COLL_NONE) {
            fprintf(stream, "# choices: auto");
            amc_alg_print_names(stream, entry->coll);
            fprintf(stream, "\n");
        }
        fprintf(stream, "#\n# default: %s\n%s=%s\n", entry->default_value, entry->name, value);
    }
}
