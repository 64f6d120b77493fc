/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/amcoll: an ordinary MPI program for what the component
 * must get right beyond the collectives' results that test_mpi_shim
 * compares: communicator lifecycle (10,000 dup/free, split, create,
 * create_group, split_type, idup; an intercommunicator left to Open MPI),
 * Open MPI's own datatypes in the local group's collectives (an
 * intercommunicator's allgatherv, MPI_Intercomm_merge), MPI_IN_PLACE,
 * calls the previous module must take
 * (MINLOC, MAXLOC, long double) beside what it takes (a user's op, a
 * mixed struct, a non-contiguous vector), and
 * MPI_THREAD_MULTIPLE. Each sub-test checks its own results and prints
 * "ok SUB N=n" on rank 0; any wrong value aborts with a message.
 * Usage: test_component dupfree|inplace|fallback|comms|threads|internal [iterations]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void die(const char *what, long got, long want)
{
    fprintf(stderr, "FAIL rank %d: %s: got %ld, want %ld\n", rank, what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHK(call)                                                                              \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != MPI_SUCCESS) {                                                              \
            die(#call, rc_, MPI_SUCCESS);                                                      \
        }                                                                                      \
    } while (0)

static long rss_kb(void)
{
    char  line[256];
    long  kb = -1;
    FILE *f  = fopen("/proc/self/status", "r");

    while ((f != NULL) && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = atol(line + 6);
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kb;
}

/* sum of 0..n-1 */
static int tri(int n)
{
    return n * (n - 1) / 2;
}

/* One allreduce on comm, checked: every sub-test's communicators are used. */
static void check_comm(MPI_Comm comm, const char *what)
{
    int r, s, x, y = -1;

    CHK(MPI_Comm_rank(comm, &r));
    CHK(MPI_Comm_size(comm, &s));
    x = r + 1;
    CHK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    if (y != s * (s + 1) / 2) {
        die(what, y, s * (s + 1) / 2);
    }
}

static void sub_dupfree(int iters)
{
    long before = 0, after;
    int  i;

    for (i = 0; i < iters; i++) {
        MPI_Comm c;
        if (i == iters / 10) {
            before = rss_kb(); /* after the pools and tables have grown */
        }
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if ((i % 16) == 0) {
            check_comm(c, "allreduce on a dup");
        }
        CHK(MPI_Comm_free(&c));
    }
    after = rss_kb();
    /* a leak of even 256 bytes per communicator is 2 MB over 9,000 */
    if ((before > 0) && (after - before > 2048)) {
        die("RSS growth over the dup/free loop (KiB)", after - before, 2048);
    }
    check_comm(MPI_COMM_WORLD, "allreduce on the world after the loop");
}

static void sub_inplace(void)
{
    int  n = 5, i, j;
    int *v = malloc(sizeof(int) * (size_t)n * (size_t)size);

    /* allreduce */
    for (i = 0; i < n; i++) {
        v[i] = rank + i;
    }
    CHK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (i = 0; i < n; i++) {
        if (v[i] != tri(size) + i * size) {
            die("in-place allreduce", v[i], tri(size) + i * size);
        }
    }
    /* reduce at the last rank */
    for (i = 0; i < n; i++) {
        v[i] = rank * i;
    }
    if (rank == size - 1) {
        CHK(MPI_Reduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD));
        for (i = 0; i < n; i++) {
            if (v[i] != (size - 1) * i) {
                die("in-place reduce", v[i], (size - 1) * i);
            }
        }
    } else {
        CHK(MPI_Reduce(v, NULL, n, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD));
    }
    /* allgather: each rank's block already in place */
    for (i = 0; i < size; i++) {
        for (j = 0; j < n; j++) {
            v[i * n + j] = (i == rank) ? 100 * rank + j : -1;
        }
    }
    CHK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, n, MPI_INT, MPI_COMM_WORLD));
    for (i = 0; i < size * n; i++) {
        if (v[i] != 100 * (i / n) + i % n) {
            die("in-place allgather", v[i], 100 * (i / n) + i % n);
        }
    }
    /* gather at 0 */
    for (i = 0; i < size * n; i++) {
        v[i] = (rank == 0 && i >= n) ? -1 : 7 * rank + i % n;
    }
    if (rank == 0) {
        CHK(MPI_Gather(MPI_IN_PLACE, n, MPI_INT, v, n, MPI_INT, 0, MPI_COMM_WORLD));
        for (i = 0; i < size * n; i++) {
            if (v[i] != 7 * (i / n) + i % n) {
                die("in-place gather", v[i], 7 * (i / n) + i % n);
            }
        }
    } else {
        CHK(MPI_Gather(v, n, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    }
    /* non-blocking allreduce in place */
    {
        MPI_Request q;
        for (i = 0; i < n; i++) {
            v[i] = 1;
        }
        CHK(MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
        CHK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (i = 0; i < n; i++) {
            if (v[i] != size) {
                die("in-place iallreduce", v[i], size);
            }
        }
    }
    /* scan */
    v[0] = rank + 1;
    CHK(MPI_Scan(MPI_IN_PLACE, v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (v[0] != (rank + 1) * (rank + 2) / 2) {
        die("in-place scan", v[0], (rank + 1) * (rank + 2) / 2);
    }
    free(v);
}

static void prod_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int i;

    (void)dt;
    for (i = 0; i < *len; i++) {
        ((int *)inout)[i] *= ((int *)in)[i];
    }
}

static void sub_fallback(void)
{
    struct { int v, r; } in, out;
    struct { int i; double d; } s[2];
    MPI_Datatype st, vec;
    int          bl[2] = {1, 1}, i;
    MPI_Aint     dp[2] = {offsetof(__typeof__(s[0]), i), offsetof(__typeof__(s[0]), d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    int          a[8], b[8];
    MPI_Request  q;
    MPI_Op       uop;

    /* MINLOC: no such op in amcoll; the smallest value is at the last rank */
    in.v = 100 - rank;
    in.r = rank;
    CHK(MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    if ((out.v != 100 - (size - 1)) || (out.r != size - 1)) {
        die("MINLOC allreduce (location)", out.r, size - 1);
    }
    CHK(MPI_Iallreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD, &q));
    CHK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    if ((out.v != 100) || (out.r != 0)) {
        die("MAXLOC iallreduce (location)", out.r, 0);
    }
    /* a struct of int and double: no single basic type, the previous
     * module's bcast still moves it (bytes) and its reduce is MPI's */
    CHK(MPI_Type_create_struct(2, bl, dp, ty, &st));
    CHK(MPI_Type_commit(&st));
    for (i = 0; i < 2; i++) {
        s[i].i = (rank == 1 % size) ? 40 + i : 0;
        s[i].d = (rank == 1 % size) ? 0.5 * i : 0.0;
    }
    CHK(MPI_Bcast(s, 2, st, 1 % size, MPI_COMM_WORLD));
    for (i = 0; i < 2; i++) {
        if ((s[i].i != 40 + i) || (s[i].d != 0.5 * i)) {
            die("struct bcast", s[i].i, 40 + i);
        }
    }
    CHK(MPI_Type_free(&st));
    /* every other int of 8: a non-contiguous vector, broadcast (routed:
     * the root packs, the others unpack; the gaps stay untouched) */
    CHK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    CHK(MPI_Type_commit(&vec));
    for (i = 0; i < 8; i++) {
        a[i] = (rank == 0) ? 10 + i : -7;
    }
    CHK(MPI_Bcast(a, 1, vec, 0, MPI_COMM_WORLD));
    for (i = 0; i < 8; i++) {
        int want = (i % 2) ? ((rank == 0) ? 10 + i : -7) : 10 + i;
        if (a[i] != want) {
            die("vector bcast (gaps untouched)", a[i], want);
        }
    }
    CHK(MPI_Type_free(&vec));
    /* a user's C op, a product: taken (the component reads the op) */
    CHK(MPI_Op_create(prod_fn, 1, &uop));
    for (i = 0; i < 4; i++) {
        a[i] = (i == rank % 4) ? 2 : 1;
    }
    CHK(MPI_Allreduce(a, b, 4, MPI_INT, uop, MPI_COMM_WORLD));
    for (i = 0; i < 4; i++) {
        int want = 1 << ((size - 1 - i) / 4 + 1);
        if (i >= size) {
            want = 1;
        }
        if (b[i] != want) {
            die("user op allreduce", b[i], want);
        }
    }
    CHK(MPI_Op_free(&uop));
    /* long double: no such type in amcoll */
    {
        long double x = rank + 0.5L, y = 0;
        CHK(MPI_Allreduce(&x, &y, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        if (y != tri(size) + 0.5L * size) {
            die("long double allreduce (x2)", (long)(2 * y), (long)(2 * (tri(size) + 0.5L * size)));
        }
    }
}

static void sub_comms(void)
{
    MPI_Comm  half, shm, sub, dup;
    MPI_Group wg, g;
    MPI_Request q;
    int       first[1] = {0}, range[1][3] = {{0, 0, 2}};

    CHK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    check_comm(half, "allreduce on a split (reversed keys)");
    CHK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
    check_comm(shm, "allreduce on split_type SHARED");
    /* the even ranks */
    range[0][1] = size - 1;
    CHK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHK(MPI_Group_range_incl(wg, 1, range, &g));
    CHK(MPI_Comm_create(MPI_COMM_WORLD, g, &sub));
    if ((rank % 2) == 0) {
        check_comm(sub, "allreduce on MPI_Comm_create of the even ranks");
        CHK(MPI_Comm_free(&sub));
    } else if (sub != MPI_COMM_NULL) {
        die("odd rank in the even ranks' communicator", 1, 0);
    }
    (void)first;
    /* the even ranks again, made by them alone (the odd ones never call) */
    if ((rank % 2) == 0) {
        CHK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &sub));
        check_comm(sub, "allreduce on MPI_Comm_create_group of the even ranks");
        CHK(MPI_Comm_free(&sub));
    }
    /* an intercommunicator between the halves: not taken, its
     * collectives are Open MPI's (the remote group's sum) */
    if (size >= 2) {
        MPI_Comm inter;
        int      x = rank + 1, y = -1, want = 0, r;
        /* each half's rank 0 is its highest world rank (keys reversed) */
        int top_even = ((size - 1) % 2 == 0) ? size - 1 : size - 2;
        int top_odd  = ((size - 1) % 2 == 1) ? size - 1 : size - 2;
        CHK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, (rank % 2) ? top_even : top_odd, 9,
                                 &inter));
        CHK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter));
        for (r = 0; r < size; r++) {
            want += ((r % 2) != (rank % 2)) ? r + 1 : 0;
        }
        if (y != want) {
            die("allreduce on an intercommunicator (the remote group's sum)", y, want);
        }
        CHK(MPI_Comm_free(&inter));
    }
    CHK(MPI_Group_free(&g));
    CHK(MPI_Group_free(&wg));
    CHK(MPI_Comm_idup(half, &dup, &q));
    CHK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_comm(dup, "allreduce on an idup of a split");
    CHK(MPI_Comm_free(&dup));
    CHK(MPI_Comm_free(&shm));
    CHK(MPI_Comm_free(&half));
}

/* Datatypes Open MPI makes inside itself (ompi_datatype_create_* without
 * the arguments MPI_Type_get_envelope reads) reach the component when
 * Open MPI's own code calls the local communicator's collectives: an
 * intercommunicator's allgatherv (coll/inter: an indexed type, bcast on
 * the local group), and MPI_Intercomm_merge, which runs one. */
static void sub_internal(void)
{
    MPI_Comm half, inter, merged;
    int      hr, rs, i, mr, ms, x, mine[64];
    int     *counts, *displs, *got;
    long     want;

    CHK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    CHK(MPI_Comm_rank(half, &hr));
    /* the other half's leader: world rank 1 for the evens, 0 for the odds */
    CHK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, (rank % 2) ? 0 : 1, 11, &inter));
    CHK(MPI_Comm_remote_size(inter, &rs));
    /* each rank of the remote group sends world rank + 1, i + 1 times */
    counts = malloc(sizeof(int) * (size_t)rs);
    displs = malloc(sizeof(int) * (size_t)rs);
    got    = malloc(sizeof(int) * (size_t)(rs * (rs + 1) / 2 + 1));
    if (!counts || !displs || !got) {
        die("malloc", 0, 1);
    }
    for (i = 0; i < rs; i++) {
        counts[i] = i + 1;
        displs[i] = i * (i + 1) / 2;
    }
    for (i = 0; (i <= hr) && (i < 64); i++) {
        mine[i] = rank + 1;
    }
    CHK(MPI_Allgatherv(mine, hr + 1, MPI_INT, got, counts, displs, MPI_INT, inter));
    for (i = 0; i < rs; i++) {
        /* the remote group's rank i is world rank 2 i + (other parity) */
        int w = 2 * i + ((rank % 2) ? 0 : 1), k;
        for (k = 0; k < counts[i]; k++) {
            if (got[displs[i] + k] != w + 1) {
                die("allgatherv on an intercommunicator", got[displs[i] + k], w + 1);
            }
        }
    }
    /* the odd half high: the evens first, then the odds, each by world rank */
    CHK(MPI_Intercomm_merge(inter, rank % 2, &merged));
    CHK(MPI_Comm_rank(merged, &mr));
    CHK(MPI_Comm_size(merged, &ms));
    if (ms != size) {
        die("size of the merged communicator", ms, size);
    }
    want = (rank % 2) ? (size + 1) / 2 + hr : hr;
    if (mr != want) {
        die("rank in the merged communicator", mr, want);
    }
    check_comm(merged, "allreduce on an MPI_Intercomm_merge");
    x = (mr == 0) ? 42 : -1;
    CHK(MPI_Bcast(&x, 1, MPI_INT, 0, merged));
    if (x != 42) {
        die("bcast on an MPI_Intercomm_merge", x, 42);
    }
    free(counts);
    free(displs);
    free(got);
    CHK(MPI_Comm_free(&merged));
    CHK(MPI_Comm_free(&inter));
    CHK(MPI_Comm_free(&half));
}

#define NTHREADS 2
static MPI_Comm tcomm[NTHREADS];

static void *thread_main(void *arg)
{
    int         t = (int)(long)arg, i, x, y;
    MPI_Request q;

    for (i = 0; i < 200; i++) {
        x = rank + t + i;
        if (i % 2) {
            CHK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, tcomm[t]));
        } else {
            CHK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, tcomm[t], &q));
            CHK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        if (y != tri(size) + size * (t + i)) {
            die("allreduce from a thread", y, tri(size) + size * (t + i));
        }
    }
    return NULL;
}

static void sub_threads(void)
{
    pthread_t th[NTHREADS];
    long      t;

    for (t = 0; t < NTHREADS; t++) {
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    }
    for (t = 0; t < NTHREADS; t++) {
        pthread_create(&th[t], NULL, thread_main, (void *)t);
    }
    for (t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
    }
    for (t = 0; t < NTHREADS; t++) {
        CHK(MPI_Comm_free(&tcomm[t]));
    }
}

int main(int argc, char **argv)
{
    const char *sub = (argc > 1) ? argv[1] : "inplace";
    int         provided = 0;

    if (strcmp(sub, "threads") == 0) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(sub, "dupfree") == 0) {
        sub_dupfree((argc > 2) ? atoi(argv[2]) : 10000);
    } else if (strcmp(sub, "inplace") == 0) {
        sub_inplace();
    } else if (strcmp(sub, "fallback") == 0) {
        sub_fallback();
    } else if (strcmp(sub, "comms") == 0) {
        sub_comms();
    } else if (strcmp(sub, "threads") == 0) {
        sub_threads();
    } else if (strcmp(sub, "internal") == 0) {
        sub_internal();
    } else {
        die("unknown sub-test", 0, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ok %s N=%d\n", sub, size);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
