// Atomics for the Swift layer (`InlineAtomic`, `GlobalAtomic`), the same code on every platform.
//
// The Swift side keeps the storage inline in its objects and hands its address to these
// functions. They are `static inline`, so they are compiled into the calling Swift code and,
// with the memory order a constant there, reduce to single instructions. Memory orders are
// C11's (`memory_order_relaxed` ... `memory_order_seq_cst`, 0 ... 5).

#ifndef COVENANT_COV_ATOMICS_H
#define COVENANT_COV_ATOMICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

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

extern uint64_t cov_global_atomics[COV_GLOBAL_ATOMIC_COUNT];  // global_atomics.c

/// The address of global atomic `index` (a `COV_GLOBAL_ATOMIC_...`): 8 bytes, 8-aligned.
static inline void *cov_global_atomic(int index) { return &cov_global_atomics[index]; }

#endif  // COVENANT_COV_ATOMICS_H
