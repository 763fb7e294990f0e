// Atomics and a lock for the Swift layer, the same code on every platform.
//
// The Swift side (`InlineAtomic`, `InlineMutex`) keeps the storage inline in its objects and
// hands its address to these functions. They are `static inline`, so they are compiled into the
// calling Swift code and, with the memory order a constant there, reduce to single instructions.
// Memory orders are C11's (`memory_order_relaxed` ... `memory_order_seq_cst`, 0 ... 5).
//
// The lock is `os_unfair_lock` on Apple platforms and, on Linux, a 32-bit futex word (the classic
// three-state futex mutex; `pthread_mutex_t` costs 40 bytes and about 50 more instructions per
// lock round trip, out of line in glibc). Both are 4 bytes that hold no pointer to themselves
// while unlocked, so an unlocked lock may be moved bitwise (as Swift moves a value into its
// object after initializing it). ThreadSanitizer sees `os_unfair_lock` through its interceptors
// and the futex word's acquiring and releasing atomics; the Swift side adds its own annotations.

#ifndef COVENANT_COV_ATOMICS_H
#define COVENANT_COV_ATOMICS_H

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
#error "cov_atomics.h: no lock for this platform (Covenant supports Linux and Apple platforms)"
#endif

// MARK: - Atomics on 1, 4 and 8 bytes

#define COV_ATOMIC_OPS(bits, type)                                                                \
  static inline type cov_atomic_load_##bits(const void *address, int order) {                     \
    return atomic_load_explicit((_Atomic(type) *)address, (memory_order)order);                   \
  }                                                                                               \
  static inline void cov_atomic_store_##bits(void *address, type value, int order) {              \
    atomic_store_explicit((_Atomic(type) *)address, value, (memory_order)order);                  \
  }                                                                                               \
  static inline type cov_atomic_exchange_##bits(void *address, type value, int order) {           \
    return atomic_exchange_explicit((_Atomic(type) *)address, value, (memory_order)order);        \
  }                                                                                               \
  /* Returns the value found; it equals `expected` exactly when the exchange happened. */         \
  static inline type cov_atomic_compare_exchange_##bits(void *address, type expected,             \
                                                        type desired, int success, int failure) { \
    atomic_compare_exchange_strong_explicit((_Atomic(type) *)address, &expected, desired,         \
                                            (memory_order)success, (memory_order)failure);        \
    return expected;                                                                              \
  }                                                                                               \
  static inline type cov_atomic_fetch_add_##bits(void *address, type operand, int order) {        \
    return atomic_fetch_add_explicit((_Atomic(type) *)address, operand, (memory_order)order);     \
  }                                                                                               \
  static inline type cov_atomic_fetch_or_##bits(void *address, type operand, int order) {         \
    return atomic_fetch_or_explicit((_Atomic(type) *)address, operand, (memory_order)order);      \
  }                                                                                               \
  static inline type cov_atomic_fetch_and_##bits(void *address, type operand, int order) {        \
    return atomic_fetch_and_explicit((_Atomic(type) *)address, operand, (memory_order)order);     \
  }

COV_ATOMIC_OPS(8, uint8_t)
COV_ATOMIC_OPS(32, uint32_t)
COV_ATOMIC_OPS(64, uint64_t)

#undef COV_ATOMIC_OPS

/// 1 when every width above is lock-free on this target (checked once by the Swift tests: a
/// lock-based fallback would put a hidden lock behind each "atomic").
static inline int cov_atomics_are_lock_free(void) {
  return ATOMIC_CHAR_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2 &&
         sizeof(unsigned int) == 4 && sizeof(unsigned long long) == 8;
}

// MARK: - Words of static storage for global atomics

/// The words behind the Swift layer's global atomics (`GlobalAtomic`), numbered here once.
/// Static storage is zero before the program starts, so nothing initialises them. A Swift global
/// holding an `InlineAtomic` would be initialised lazily, with a `swift_once` call (about ten
/// instructions on Linux) on every read; a plain Swift global read through a pointer is an
/// `inout` access, which ThreadSanitizer reports as a race between threads.
enum {
  COV_GLOBAL_ATOMIC_RETURNED_ERROR_TABLE = 0,  // ReturnedErrorDecisions: the table's address
  COV_GLOBAL_ATOMIC_DEFAULT_STACK_MODE = 1,    // Coroutine.defaultStackMode: 1 when dedicated
  COV_GLOBAL_ATOMIC_COUNT = 2
};

extern uint64_t cov_global_atomics[COV_GLOBAL_ATOMIC_COUNT];  // atomics.c

/// The address of global atomic `index` (a `COV_GLOBAL_ATOMIC_...`): 8 bytes, 8-aligned.
static inline void *cov_global_atomic(int index) { return &cov_global_atomics[index]; }

// MARK: - Lock

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

#endif  // COVENANT_COV_ATOMICS_H
