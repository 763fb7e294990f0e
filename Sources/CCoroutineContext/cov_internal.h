// What every source of CCoroutineContext shares (not part of the public headers): the order of
// its layers, the sanitizer switches, and a few inline helpers of no layer of their own.
//
// LAYERS, lowest first. A file uses (calls, or reads data of) only files of lower layers; each
// file's private declarations are in the header of its name (`stack_map.h` for stack_map.c,
// `switch.h` for the two switch_*.S), included only by files of higher layers. `.ci/c-layers.sh`
// reads this list and checks both rules on the object files' symbols and on the includes:
//   diagnostics.c                   -- cov_fatal, cov_warn, the page size
//   thread_exit.c lock.c            -- the one thread-exit hook of the caches; the futex lock
//   switch_x86_64.S switch_arm64.S  -- the context switch (frame layout in switch.h)
//   stack_map.c                     -- stack mappings, guards, the mapping budget
//   stack_pool.c                    -- the pool of released stacks, per-thread caches
//   fiber_record.c                  -- the fiber record, its cache, its frames view
//   overflow.c                      -- the stack-overflow handler (asks fiber.c through a hook)
//   shared_stack.c                  -- a shared stack: its state word, copies, parking
//   stack_group.c                   -- the groups of shared stacks
//   fiber.c                         -- fibers: resume, suspend, the thread-local slots
//   registry.c                      -- the registry of live coroutines (cov_registry.h)
//   frames.c                        -- frames of suspended fibers: copies, walks, stack use
//   symbols.c                       -- symbols and demangling
//   dump_signal.c                   -- the dump thread woken by a signal
//   fork.c                          -- fork(2): every lock, in the lock order
//
// Above all of them: the Swift-only shims (Sources/CCovenantShims), then the Swift layer.

#ifndef COVENANT_COV_INTERNAL_H
#define COVENANT_COV_INTERNAL_H

#include "CCoroutineContext.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

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

#define COV_HIDDEN __attribute__((visibility("hidden")))

// sysconf(name), read once into *cache (`fallback` where it fails).
static inline size_t cov_cached_sysconf(_Atomic size_t *cache, int name, size_t fallback) {
  size_t value = atomic_load_explicit(cache, memory_order_relaxed);
  if (__builtin_expect(value == 0, 0)) {
    long read = sysconf(name);
    value = read > 0 ? (size_t)read : fallback;
    atomic_store_explicit(cache, value, memory_order_relaxed);
  }
  return value;
}

// A spinning thread's hint to the CPU (fewer pipeline flushes, the sibling hyperthread runs).
static inline void cov_cpu_relax(void) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// What fork(2) does to the library's locks: every lock is taken before the fork, in the lock
// order (fork.c), released in the parent after it, and made anew in the child. Each file with
// locks has a hook `cov_<file>_fork(phase)`, declared in its header.
typedef enum { COV_FORK_PREPARE, COV_FORK_PARENT, COV_FORK_CHILD } cov_fork_phase_t;

#endif
