// The pool of released stacks (stack_pool.c). Its entry points are public (CCoroutineContext.h,
// "Stacks"); what other files need beyond them is its fork hook.

#ifndef COVENANT_STACK_POOL_H
#define COVENANT_STACK_POOL_H

#include "cov_internal.h"

COV_HIDDEN void cov_stack_pool_fork(cov_fork_phase_t phase);

#endif
