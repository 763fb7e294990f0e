// The dump signal (dump_signal.c): its fork hook. The entry points are public (cov_registry.h,
// "A dump on a signal").

#ifndef COVENANT_DUMP_SIGNAL_H
#define COVENANT_DUMP_SIGNAL_H

#include "cov_internal.h"
#include "cov_registry.h"

COV_HIDDEN void cov_dump_signal_fork(cov_fork_phase_t phase);

#endif
