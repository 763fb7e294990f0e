// Symbols (symbols.c): its fork hook. The entry points are public (cov_registry.h, "Symbols").

#ifndef COVENANT_SYMBOLS_H
#define COVENANT_SYMBOLS_H

#include "cov_internal.h"
#include "cov_registry.h"

COV_HIDDEN void cov_symbols_fork(cov_fork_phase_t phase);

#endif
