// A lock for the C layer (registry.c) and the Swift layer (`InlineMutex`), the same code on
// every platform.
//
// The lock is `os_unfair_lock` on Apple platforms and, on Linux, a 32-bit futex word (the classic
// three-state futex mutex; `pthread_mutex_t` costs 40 bytes and about 50 more instructions per
// lock round trip, out of line in glibc). Both are 4 bytes that hold no pointer to themselves
// while unlocked, so an unlocked lock may be moved bitwise (as Swift moves a value into its
// object after initializing it). The functions are `static inline`, compiled into their callers;
// the futex lock's slow paths are in lock.c. ThreadSanitizer sees `os_unfair_lock` through its
// interceptors and the futex word's acquiring and releasing atomics; the Swift side adds its own
// annotations (CCovenantShims, cov_sync_annotations.h).

#ifndef COVENANT_COV_LOCK_H
#define COVENANT_COV_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__APPLE__)
#include <os/lock.h>
typedef os_unfair_lock cov_lock_t;
#elif defined(__linux__)
/// 0: unlocked; 1: locked; 2: locked, and a thread may be waiting in the kernel (futex).
typedef uint32_t cov_lock_t;
#else
#error "cov_lock.h: no lock for this platform (Covenant supports Linux and Apple platforms)"
#endif

#if defined(__APPLE__)

/// Puts an unlocked lock at `lock`, which points to a `cov_lock_t`.
static inline void cov_lock_init(void *lock) { *(cov_lock_t *)lock = OS_UNFAIR_LOCK_INIT; }
static inline void cov_lock_lock(void *lock) { os_unfair_lock_lock((cov_lock_t *)lock); }
static inline void cov_lock_unlock(void *lock) { os_unfair_lock_unlock((cov_lock_t *)lock); }

#else

// The futex lock's slow paths (lock.c): waiting in the kernel, waking a waiter.
void cov_lock_wait(void *lock);
void cov_lock_wake(void *lock);

/// Puts an unlocked lock at `lock`, which points to a `cov_lock_t`.
static inline void cov_lock_init(void *lock) {
  atomic_store_explicit((_Atomic(uint32_t) *)lock, 0, memory_order_relaxed);
}

/// Takes the lock: one compare-exchange when it is free, else `cov_lock_wait`.
static inline void cov_lock_lock(void *lock) {
  uint32_t unlocked = 0;
  if (__builtin_expect(atomic_compare_exchange_strong_explicit(
                           (_Atomic(uint32_t) *)lock, &unlocked, 1, memory_order_acquire,
                           memory_order_relaxed),
                       1))
    return;
  cov_lock_wait(lock);
}

/// Releases the lock: one exchange, and a wake-up only if a thread sleeps on it.
static inline void cov_lock_unlock(void *lock) {
  if (__builtin_expect(
          atomic_exchange_explicit((_Atomic(uint32_t) *)lock, 0, memory_order_release) != 1, 0))
    cov_lock_wake(lock);
}

#endif

#endif  // COVENANT_COV_LOCK_H
