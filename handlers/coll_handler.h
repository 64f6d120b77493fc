/* Handlers of scheduled collectives: declared in am_coll/coll.h. */
#ifndef AMC_COLL_HANDLER_H
#define AMC_COLL_HANDLER_H

#include "am_coll/coll.h"

#endif
