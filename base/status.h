/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal status values beside the public codes of amcoll.h. */
#ifndef AMC_STATUS_H
#define AMC_STATUS_H

#include "amcoll.h"

/* An operation was handed over and completes later (through a callback). */
#define AMC_INPROGRESS (-1)

#endif
