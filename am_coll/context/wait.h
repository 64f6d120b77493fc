/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting on a request (am_coll/context/wait.c): a collective's request as
 * its caller sees it until it completes.
 */
#ifndef AMC_WAIT_H
#define AMC_WAIT_H

#include "am_coll/context/request.h"

/* Ends a non-blocking start with its status (amc_request_begin_nb, request.h):
 * a few progress passes here, then the progress thread, if there is one. */
void amc_request_end_start(struct amc_request *req, int start_status);

/* Checks a request once (no progress): its final status once complete,
 * AMC_INPROGRESS while running. A handler error left on its communicator or
 * the passing of AMC_TIMEOUT completes it with that error, and so does the
 * death of a member of its communicator (AMC_ERR_PEER, am_coll/context/peer_watch.h;
 * the transport is asked to look for dead peers now and then). */
int  amc_request_poll(struct amc_request *req);

/* Waits for one request without releasing it; the error of a failed wait
 * detaches the request from its instance, which runs on to keep in step. */
int  amc_request_wait_one(struct amc_request *req);

#endif
