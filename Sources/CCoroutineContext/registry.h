// The registry of live coroutines (registry.c): what other files need beyond its public header
// (include/cov_registry.h).

#ifndef COVENANT_REGISTRY_H
#define COVENANT_REGISTRY_H

#include "cov_internal.h"
#include "cov_registry.h"

COV_HIDDEN void cov_registry_fork(cov_fork_phase_t phase);

// For the C test: makes every growth of the table fail (`force` 1) or not (0), and returns how
// many growths have failed so far.
COV_HIDDEN unsigned cov_registry_test_growth_failures(int force);

#endif
