/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every public entry point with bad arguments returns the code api.md
 * documents, before amc_init, while initialized (as a job of one: no
 * launcher), and after amc_finalize. Nothing aborts.
 */
#include "tests/unit/harness.h"

#include <stdlib.h>
#include <string.h>

static void before_init(void)
{
    amc_comm_t    comm = AMC_COMM_NULL;
    amc_request_t req  = AMC_REQUEST_NULL;
    int           x, flag, provided;

    CHECK(amc_initialized(&flag) == AMC_SUCCESS && flag == 0, "not initialized yet");
    CHECK(amc_initialized(NULL) == AMC_ERR_ARG, "initialized(NULL)");
    CHECK(amc_comm_world() == AMC_COMM_NULL, "no world before init");
    CHECK(amc_barrier(AMC_COMM_WORLD) == AMC_ERR_NOT_INITIALIZED, "barrier before init");
    CHECK(amc_ibarrier(AMC_COMM_WORLD, &req) == AMC_ERR_NOT_INITIALIZED, "ibarrier before init");
    CHECK(amc_comm_rank(AMC_COMM_WORLD, &x) == AMC_ERR_NOT_INITIALIZED, "rank before init");
    CHECK(amc_comm_size(AMC_COMM_WORLD, &x) == AMC_ERR_NOT_INITIALIZED, "size before init");
    CHECK(amc_comm_dup(AMC_COMM_WORLD, &comm) == AMC_ERR_NOT_INITIALIZED, "dup before init");
    CHECK(amc_finalize() == AMC_ERR_NOT_INITIALIZED, "finalize before init");
    CHECK(amc_init_thread(NULL, NULL, 42, &provided) == AMC_ERR_ARG, "bad thread level");
    CHECK(amc_init_thread(NULL, NULL, AMC_THREAD_SINGLE, NULL) == AMC_ERR_ARG, "NULL provided");
}

static void while_initialized(void)
{
    amc_comm_t    world, dup = AMC_COMM_NULL, stale, null_comm = AMC_COMM_NULL;
    amc_request_t req = AMC_REQUEST_NULL, reqs[2];
    int           rank = -1, size = -1, flag = -1, provided = -1, rc;

    rc = amc_init_thread(NULL, NULL, AMC_THREAD_MULTIPLE, &provided);
    CHECK(rc == AMC_SUCCESS, "init as a singleton: %s", amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        return;
    }
    CHECK(provided == AMC_THREAD_MULTIPLE, "MULTIPLE is granted");
    CHECK(amc_init(NULL, NULL) == AMC_ERR_ARG, "second init");
    CHECK(amc_initialized(&flag) == AMC_SUCCESS && flag == 1, "initialized");

    world = AMC_COMM_WORLD;
    CHECK(world != AMC_COMM_NULL, "world exists");
    CHECK(amc_comm_rank(world, &rank) == AMC_SUCCESS && rank == 0, "rank 0 of a singleton");
    CHECK(amc_comm_size(world, &size) == AMC_SUCCESS && size == 1, "size 1 without launcher");
    CHECK(amc_comm_rank(world, NULL) == AMC_ERR_ARG, "rank(NULL)");
    CHECK(amc_comm_size(world, NULL) == AMC_ERR_ARG, "size(NULL)");
    CHECK(amc_comm_rank(AMC_COMM_NULL, &rank) == AMC_ERR_COMM, "rank of NULL comm");
    CHECK(amc_comm_size(AMC_COMM_NULL, &size) == AMC_ERR_COMM, "size of NULL comm");
    CHECK(amc_comm_dup(AMC_COMM_NULL, &dup) == AMC_ERR_COMM, "dup of NULL comm");
    CHECK(amc_comm_dup(world, NULL) == AMC_ERR_ARG, "dup into NULL");
    CHECK(amc_comm_free(NULL) == AMC_ERR_ARG, "free(NULL)");
    CHECK(amc_comm_free(&null_comm) == AMC_ERR_COMM, "free of NULL comm");
    stale = world;
    CHECK(amc_comm_free(&stale) == AMC_ERR_COMM, "the world cannot be freed");
    CHECK(stale == world, "a refused free leaves the handle");
    CHECK(amc_barrier(AMC_COMM_NULL) == AMC_ERR_COMM, "barrier on NULL comm");
    CHECK(amc_ibarrier(AMC_COMM_NULL, &req) == AMC_ERR_COMM, "ibarrier on NULL comm");
    CHECK(amc_ibarrier(world, NULL) == AMC_ERR_ARG, "ibarrier into NULL");

    CHECK(amc_comm_dup(world, &dup) == AMC_SUCCESS, "dup");
    stale = dup;
    CHECK(amc_comm_free(&dup) == AMC_SUCCESS && dup == AMC_COMM_NULL, "free clears the handle");
    CHECK(amc_barrier(stale) == AMC_ERR_COMM, "barrier on a freed comm");
    CHECK(amc_comm_rank(stale, &rank) == AMC_ERR_COMM, "rank of a freed comm");
    CHECK(amc_comm_free(&stale) == AMC_ERR_COMM, "double free");

    CHECK(amc_test(NULL, &flag) == AMC_ERR_ARG, "test(NULL)");
    CHECK(amc_test(&req, NULL) == AMC_ERR_ARG, "test without flag");
    req = AMC_REQUEST_NULL;
    CHECK(amc_test(&req, &flag) == AMC_SUCCESS && flag == 1, "test of REQUEST_NULL");
    CHECK(amc_wait(&req) == AMC_SUCCESS, "wait on REQUEST_NULL");
    CHECK(amc_wait(NULL) == AMC_ERR_ARG, "wait(NULL)");
    CHECK(amc_waitall(-1, reqs) == AMC_ERR_ARG, "waitall with n < 0");
    CHECK(amc_waitall(2, NULL) == AMC_ERR_ARG, "waitall of NULL array");
    CHECK(amc_testall(2, NULL, &flag) == AMC_ERR_ARG, "testall of NULL array");
    reqs[0] = reqs[1] = AMC_REQUEST_NULL;
    CHECK(amc_testall(2, reqs, NULL) == AMC_ERR_ARG, "testall without flag");
    CHECK(amc_waitall(0, NULL) == AMC_SUCCESS, "waitall of nothing");
    CHECK(amc_testall(2, reqs, &flag) == AMC_SUCCESS && flag == 1, "testall of nulls");

    /* the same handle twice would be released twice: refused, nothing freed */
    CHECK(amc_ibarrier(world, &req) == AMC_SUCCESS, "ibarrier");
    reqs[0] = reqs[1] = req;
    CHECK(amc_waitall(2, reqs) == AMC_ERR_ARG, "waitall with a request twice");
    CHECK(amc_testall(2, reqs, &flag) == AMC_ERR_ARG, "testall with a request twice");
    CHECK(amc_waitany(2, reqs, &rank) == AMC_ERR_ARG, "waitany with a request twice");
    CHECK(reqs[0] == req && reqs[1] == req, "refused calls leave the handles");
    CHECK(amc_wait(&req) == AMC_SUCCESS && req == AMC_REQUEST_NULL, "then it waits once");

    /* and the library still works after all that */
    CHECK(amc_barrier(world) == AMC_SUCCESS, "singleton barrier");
    CHECK(amc_ibarrier(world, &reqs[0]) == AMC_SUCCESS, "ibarrier");
    CHECK(amc_ibarrier(world, &reqs[1]) == AMC_SUCCESS, "ibarrier");
    CHECK(amc_waitall(2, reqs) == AMC_SUCCESS, "waitall");
    CHECK(reqs[0] == AMC_REQUEST_NULL && reqs[1] == AMC_REQUEST_NULL, "waitall clears");
    CHECK(amc_ibarrier(world, &req) == AMC_SUCCESS, "ibarrier");
    CHECK(amc_test(&req, &flag) == AMC_SUCCESS && flag == 1 && req == AMC_REQUEST_NULL,
          "a singleton barrier completes at once");
    CHECK(amc_wtime() > 0.0, "wtime");
    CHECK(amc_finalize() == AMC_SUCCESS, "finalize");
}

static void after_finalize(void)
{
    amc_comm_t    comm;
    amc_request_t req = AMC_REQUEST_NULL;
    int           x, flag, provided;

    CHECK(amc_initialized(&flag) == AMC_SUCCESS && flag == 0, "not initialized after finalize");
    CHECK(amc_comm_world() == AMC_COMM_NULL, "no world after finalize");
    CHECK(amc_init(NULL, NULL) == AMC_ERR_NOT_INITIALIZED, "init after finalize");
    CHECK(amc_init_thread(NULL, NULL, AMC_THREAD_SINGLE, &provided) == AMC_ERR_NOT_INITIALIZED,
          "init_thread after finalize");
    CHECK(amc_finalize() == AMC_ERR_NOT_INITIALIZED, "finalize twice");
    CHECK(amc_barrier(AMC_COMM_WORLD) == AMC_ERR_NOT_INITIALIZED, "barrier after finalize");
    CHECK(amc_ibarrier(AMC_COMM_WORLD, &req) == AMC_ERR_NOT_INITIALIZED, "ibarrier");
    CHECK(amc_comm_rank(AMC_COMM_WORLD, &x) == AMC_ERR_NOT_INITIALIZED, "rank");
    CHECK(amc_comm_size(AMC_COMM_WORLD, &x) == AMC_ERR_NOT_INITIALIZED, "size");
    CHECK(amc_comm_dup(AMC_COMM_WORLD, &comm) == AMC_ERR_NOT_INITIALIZED, "dup");
    CHECK(amc_comm_free(&comm) == AMC_ERR_NOT_INITIALIZED, "free");
    CHECK(amc_comm_free(NULL) == AMC_ERR_NOT_INITIALIZED, "free(NULL)");
    CHECK(amc_test(&req, &flag) == AMC_ERR_NOT_INITIALIZED, "test");
    CHECK(amc_wait(&req) == AMC_ERR_NOT_INITIALIZED, "wait");
    CHECK(amc_waitall(1, &req) == AMC_ERR_NOT_INITIALIZED, "waitall");
    CHECK(amc_testall(1, &req, &flag) == AMC_ERR_NOT_INITIALIZED, "testall");
}

static void strerror_table(void)
{
    int i, j;

    for (i = AMC_SUCCESS; i < AMC_ERR_LAST; i++) {
        CHECK(amc_strerror(i) != NULL && amc_strerror(i)[0] != '\0', "strerror(%d)", i);
        for (j = AMC_SUCCESS; j < i; j++) {
            CHECK(strcmp(amc_strerror(i), amc_strerror(j)) != 0, "codes %d and %d read alike", i, j);
        }
    }
    CHECK(strstr(amc_strerror(9999), "unknown") != NULL, "an unknown code says so");
    CHECK(strstr(amc_strerror(-5), "unknown") != NULL, "a negative code says so");
}

int main(void)
{
    /* the misuse below is logged as errors; keep the test output readable */
    if (getenv("AMC_LOG_LEVEL") == NULL) {
        setenv("AMC_LOG_LEVEL", "error", 1);
    }
    strerror_table();
    before_init();
    while_initialized();
    after_finalize();
    return amc_test_summary("test_api_misuse");
}
