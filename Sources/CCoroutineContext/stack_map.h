// Stack mappings (stack_map.c): new stacks with their guard regions, and their unmapping.

#ifndef COVENANT_STACK_MAP_H
#define COVENANT_STACK_MAP_H

#include "cov_internal.h"

// Maps a stack of `size` usable bytes (whole pages) with its guard region below: carved from a
// slab of same-size stacks if `from_slab` and the kernel has guard markers, else a mapping of
// its own. 0, or an errno value (EAGAIN: the mapping budget is spent).
COV_HIDDEN int cov_stack_map(size_t size, bool from_slab, cov_stack_t *out);

// Gives a stack back to the system (its slot back to its slab, or its mapping unmapped).
COV_HIDDEN void cov_stack_unmap(cov_stack_t *stack);

// Async-signal-safe: whether `address` lies in the guard region of a stack this allocator has
// handed out (best effort: slabs and registered individual stacks); sets *stack_size if so.
COV_HIDDEN int cov_stack_guard_lookup(uintptr_t address, size_t *stack_size);

COV_HIDDEN void cov_stack_map_fork(cov_fork_phase_t phase);

#endif
