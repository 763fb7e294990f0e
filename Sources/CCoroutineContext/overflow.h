// The stack-overflow handler (overflow.c). Its installation is public (CCoroutineContext.h,
// cov_overflow_handler_install).

#ifndef COVENANT_OVERFLOW_H
#define COVENANT_OVERFLOW_H

#include "cov_internal.h"

// Sets the async-signal-safe function the handler asks first whether a fault address lies in the
// guard region of the stack running on the faulting thread (setting *stack_size if so): the
// fiber layer's, which knows the current fiber (the registry of guard regions is only best
// effort). Set it before installing the handler; setting the same function again is harmless.
COV_HIDDEN void cov_overflow_set_current_guard_lookup(int (*lookup)(uintptr_t address,
                                                                    size_t *stack_size));

#endif
