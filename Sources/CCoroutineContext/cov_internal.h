// Private declarations shared by the CCoroutineContext sources (not part of the public header).

#ifndef COVENANT_COV_INTERNAL_H
#define COVENANT_COV_INTERNAL_H

#include "CCoroutineContext.h"
#include <stddef.h>
#include <stdint.h>

// Hidden aliases of the assembly entry points (same code): direct calls, never through a PLT.
cov_transfer_t cov_jump_fcontext_hidden(cov_fcontext_t to, void *data)
    __attribute__((visibility("hidden")));
cov_fcontext_t cov_make_fcontext_hidden(void *stack_top, size_t size,
                                        void (*entry)(cov_transfer_t))
    __attribute__((visibility("hidden")));

// Like cov_jump_fcontext, but also stores the context being left to *save before jumping.
cov_transfer_t cov_fiber_switch_hidden(cov_fcontext_t *save, cov_fcontext_t to, void *data)
    __attribute__((visibility("hidden")));

// Async-signal-safe: whether `address` lies in the guard region of a stack this allocator has
// handed out (best effort: slabs and registered individual stacks); sets *stack_size if so.
int cov_stack_guard_lookup(uintptr_t address, size_t *stack_size)
    __attribute__((visibility("hidden")));

// Async-signal-safe: whether `address` lies in the guard region of the fiber running on the
// calling thread; sets *stack_size if so.
int cov_fiber_guard_hit(uintptr_t address, size_t *stack_size)
    __attribute__((visibility("hidden")));

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COV_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define COV_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(COV_ASAN)
#define COV_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(COV_TSAN)
#define COV_TSAN 1
#endif

#endif
