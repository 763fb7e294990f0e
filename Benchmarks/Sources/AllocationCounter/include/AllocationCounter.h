// Counts heap allocations of the whole process by interposing malloc and friends.
//
// The definitions in AllocationCounter.c are linked into the executable, so the dynamic linker
// binds every library's malloc (libswiftCore's, libdispatch's, Foundation's) to them; they count
// and forward to glibc's __libc_* entry points. Counting costs one relaxed
// atomic add per allocation while counting is on (cov_allocation_counting).
#ifndef COVENANT_ALLOCATION_COUNTER_H
#define COVENANT_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Turns counting on or off (off at start).
void cov_allocation_counting(int enabled);

/// Allocations (malloc, calloc, realloc of NULL, posix_memalign, aligned_alloc, memalign) made
/// by any thread since the process started.
int64_t cov_allocation_count(void);

/// The `calloc` calls among them. libdispatch refills its per-thread continuation caches with
/// `calloc`, at a rate that depends on thread timing; Swift objects, closure contexts and blocks
/// come from `malloc`.
int64_t cov_calloc_count(void);

/// Whether this process's allocations go through the counter (false on platforms where the
/// interposition is not built, e.g. macOS).
int cov_allocation_counter_active(void);

/// Bytes of the malloc heap in use by the program (glibc's mallinfo2: small blocks plus
/// mmap'ed ones; 0 where unavailable), for the memory benchmarks' breakdown.
int64_t cov_heap_bytes_in_use(void);

#endif
