// Private declarations shared by the CCoroutineContext sources (not part of the public header).

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

// Hidden aliases of the assembly entry points (same code): direct calls, never through a PLT.
cov_transfer_t cov_jump_fcontext_hidden(cov_fcontext_t to, void *data)
    __attribute__((visibility("hidden")));
cov_fcontext_t cov_make_fcontext_hidden(void *stack_top, size_t size,
                                        void (*entry)(cov_transfer_t))
    __attribute__((visibility("hidden")));

// Like cov_jump_fcontext, but also stores the context being left to *save before jumping, and
// returns (in the context that is resumed) the low 32 bits of the `data` it was resumed with:
// the status a fiber reports to its resumer.
int cov_fiber_switch_hidden(cov_fcontext_t *save, cov_fcontext_t to, void *data)
    __attribute__((visibility("hidden")));

// Async-signal-safe: whether `address` lies in the guard region of a stack this allocator has
// handed out (best effort: slabs and registered individual stacks); sets *stack_size if so.
int cov_stack_guard_lookup(uintptr_t address, size_t *stack_size)
    __attribute__((visibility("hidden")));

// Async-signal-safe: whether `address` lies in the guard region of the fiber running on the
// calling thread; sets *stack_size if so.
int cov_fiber_guard_hit(uintptr_t address, size_t *stack_size)
    __attribute__((visibility("hidden")));

// Copies `size` bytes of a stack whose AddressSanitizer shadow may mark parts of it (the
// redzones of live frames) as poisoned, without checking them: for snapshots of frames.
void cov_copy_stack_bytes(void *destination, const void *source, size_t size)
    __attribute__((visibility("hidden")));

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

// The page size (sysconf, read once).
size_t cov_page_size(void) __attribute__((visibility("hidden")));

// Prints "Covenant: <message>" and aborts (write(2) only).
__attribute__((noreturn, cold, visibility("hidden"))) void cov_fatal(const char *message);
// Prints "Covenant: <message>" and goes on (write(2) only).
__attribute__((cold, visibility("hidden"))) void cov_warn(const char *message);

// A spinning thread's hint to the CPU (fewer pipeline flushes, the sibling hyperthread runs).
static inline void cov_cpu_relax(void) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// MARK: - Process and thread life cycle (lifecycle.c)

// What fork(2) does to the library's locks: every lock is taken before the fork (in one order,
// outermost first, so that the copy the child gets is consistent), released in the parent after
// it, and made anew in the child. Each module implements its part.
typedef enum { COV_FORK_PREPARE, COV_FORK_PARENT, COV_FORK_CHILD } cov_fork_phase_t;
void cov_registry_fork(cov_fork_phase_t phase) __attribute__((visibility("hidden")));
void cov_backtrace_fork(cov_fork_phase_t phase) __attribute__((visibility("hidden")));
void cov_shared_fork(cov_fork_phase_t phase) __attribute__((visibility("hidden")));
void cov_stack_fork(cov_fork_phase_t phase) __attribute__((visibility("hidden")));

// Per-thread caches (stacks, fiber records, registry slots) give back what they hold when their
// thread exits, through one thread-exit hook: a cache arms it (cov_thread_exit_arm, false if it
// cannot be armed: then keep nothing) when it first keeps something, and the hook flushes every
// cache, each of which then counts as unarmed again. So a cache refilled after the flush, by
// another thread-exit destructor that runs later (one that finishes a coroutine, say), arms the
// hook again and is flushed in the next round of destructors (POSIX runs them again while
// values are set, PTHREAD_DESTRUCTOR_ITERATIONS rounds in all).
bool cov_thread_exit_arm(void) __attribute__((visibility("hidden")));
// The caches' flushes, called by the hook.
void cov_fiber_record_cache_flush(void) __attribute__((visibility("hidden")));
void cov_stack_cache_flush(void) __attribute__((visibility("hidden")));
void cov_registry_cache_flush(void) __attribute__((visibility("hidden")));

// MARK: - Records

typedef struct cov_shared_stack cov_shared_stack_t;

// A fiber. Dedicated fibers keep it at the top of their own stack, followed there by their
// cov_stack_t (own_stack); shared-stack fibers in a heap block (fiber_record.c), kept small:
// with the copy of its frames it is what a suspended coroutine costs. Fields are touched by one
// thread at a time: the one running or resuming the fiber, or, for a shared fiber's copy-out
// state and wait-list link, the one holding its stack's lock.
struct cov_fiber {
  cov_fcontext_t context;   // the fiber's own context (saved stack pointer) while not running
  union {
    cov_fcontext_t resumer;   // the context that resumed it, while it is running
    cov_fiber_t *next_waiter; // shared: the next fiber in its stack's wait list, while parked
  };
  cov_fiber_t *previous;    // the fiber that was current on the resuming thread
  cov_fiber_entry_t entry;
  void *argument;
  void *exclusivity[2];     // Swift's per-task exclusivity access set, moved on every switch
  void *resumer_resolution; // the resumer's COV_TLS_SLOT_RESOLUTION, given back when switching to it
  _Atomic(uintptr_t) wait_detail;  // what the owner waits on, for snapshots (cov_registry.h)
  struct {                  // shared-stack fibers only
    union {
      cov_stack_group_t *group;   // until it first runs
      cov_shared_stack_t *stack;  // from then on (bound == true), for life
    };
    char *saved;                  // copy buffer (kept for reuse), or NULL
    uint32_t saved_size;          // bytes of [context, top) held in `saved`; 0: in place
    uint32_t saved_capacity;
  } shared;
  // Anything but a plain resume of a dedicated fiber: one 32-bit test on the fast path.
  union {
    struct {
      bool running;
      bool finished;
      bool parked;          // in a shared stack's wait list
      bool is_shared;
    };
    uint32_t not_plain;
  };
  bool started;
  bool track_exclusivity;   // call the Swift exclusivity hooks (default; see the header)
  bool bound;               // shared: `shared.stack` is set
#if defined(COV_ASAN)
  void *fake_stack;                // the fiber's ASan fake stack while it is switched out
  const void *resumer_bottom;      // the resumer's stack, for switching back to it
  size_t resumer_size;
#endif
#if defined(COV_TSAN)
  void *tsan_fiber;
  void *tsan_resumer;
#endif
};

// A dedicated fiber's own stack, stored right after its record.
static inline cov_stack_t *cov_own_stack(const cov_fiber_t *fiber) {
  return (cov_stack_t *)(void *)((char *)(uintptr_t)fiber + sizeof(cov_fiber_t));
}

// The usable range of the stack a fiber runs on ([base, base + size)); base NULL if none yet.
const cov_stack_t *cov_fiber_stack(const cov_fiber_t *fiber) __attribute__((visibility("hidden")));

// MARK: - Shared stacks (shared_stack.c)

// The state word of a shared stack: the occupant (the fiber whose frames are in place, or 0)
// with these flags in its low bits (records are 16-aligned).
enum {
  COV_STACK_RUNNING = 1,  // the occupant is running (or being switched in or out)
  COV_STACK_LOCKED = 2,   // someone holds the stack's lock (wait list, copies)
  COV_STACK_WAITERS = 4,  // the wait list is not empty
  COV_STACK_FLAGS = 7,
};

struct cov_shared_stack {
  _Atomic uintptr_t state;
  cov_fiber_t *waiters_head, *waiters_tail;  // under the lock
  uintptr_t poisoned_low;   // eager eviction: [poisoned_low, top) is ASan-poisoned (0: none)
  cov_stack_t stack;
  char *top;                // stack.base + stack.size, 16-aligned
};

// Sets the group's minimum number of stacks (0: leave it).
void cov_group_set_min(cov_stack_group_t *group, size_t min_stacks)
    __attribute__((visibility("hidden")));
// Makes sure the group has a stack; 0 or an errno value.
int cov_group_ensure_stack(cov_stack_group_t *group) __attribute__((visibility("hidden")));
// Chooses the stack a new fiber of the group is bound to (never NULL once ensure_stack passed).
cov_shared_stack_t *cov_group_bind(cov_stack_group_t *group) __attribute__((visibility("hidden")));

// Eager eviction (cov_shared_stacks_eager_eviction): -1 until decided.
extern _Atomic int cov_shared_eager_value __attribute__((visibility("hidden")));
int cov_shared_eager_slow(void) __attribute__((visibility("hidden")));
static inline int cov_shared_eager(void) {
  int value = atomic_load_explicit(&cov_shared_eager_value, memory_order_relaxed);
  return __builtin_expect(value >= 0, 1) ? value : cov_shared_eager_slow();
}

// Makes `fiber`'s frames the ones in place on its stack and marks the stack running: 1. Or
// parks the fiber on the stack's wait list when its occupant is running: 0. A fiber that has
// not started gets its initial context made at the top of the stack. The common case, the
// fiber's frames already in place and nobody waiting, is one compare-and-swap, inline.
int cov_shared_acquire_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber,
                            void (*entry)(cov_transfer_t)) __attribute__((visibility("hidden")));
static inline int cov_shared_acquire(cov_shared_stack_t *stack, cov_fiber_t *fiber,
                                     void (*entry)(cov_transfer_t)) {
  uintptr_t in_place = (uintptr_t)fiber;
  if (__builtin_expect(atomic_compare_exchange_strong_explicit(
                           &stack->state, &in_place, in_place | COV_STACK_RUNNING,
                           memory_order_acquire, memory_order_relaxed),
                       1))
    return 1;
  return cov_shared_acquire_slow(stack, fiber, entry);
}

// Eager eviction's poison on a vacated stack, cleared by the next occupant (ASan builds).
void cov_shared_clear_poison(cov_shared_stack_t *stack) __attribute__((visibility("hidden")));

// A fiber's first run on an empty stack: it takes the stack as running (so nobody else touches
// it) and makes its first frame at the top, without the lock. 0 if the stack is not empty.
static inline int cov_shared_take_empty(cov_shared_stack_t *stack, cov_fiber_t *fiber,
                                        void (*entry)(cov_transfer_t)) {
  uintptr_t empty = 0;
  if (!atomic_compare_exchange_strong_explicit(&stack->state, &empty,
                                               (uintptr_t)fiber | COV_STACK_RUNNING,
                                               memory_order_acquire, memory_order_relaxed))
    return 0;
#if defined(COV_ASAN)
  cov_shared_clear_poison(stack);
#endif
  fiber->context = cov_make_fcontext_hidden(stack->top, stack->stack.size, entry);
  return 1;
}

// After `fiber` switched out (suspended or finished): marks the stack idle (empty if finished,
// or with eager eviction), and hands one waiter, if any, to the unpark hook. The common case,
// nobody waiting and no eager eviction, is one compare-and-swap, inline.
void cov_shared_release_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber)
    __attribute__((visibility("hidden")));
static inline void cov_shared_release(cov_shared_stack_t *stack, cov_fiber_t *fiber) {
  bool finished = fiber->finished;
  if (finished || !cov_shared_eager()) {
    uintptr_t running = (uintptr_t)fiber | COV_STACK_RUNNING;
    if (__builtin_expect(atomic_compare_exchange_strong_explicit(
                             &stack->state, &running, finished ? 0 : (uintptr_t)fiber,
                             memory_order_release, memory_order_relaxed),
                         1))
      return;
  }
  cov_shared_release_slow(stack, fiber);
}

// Frees a finished (or never started) shared fiber's copy buffer.
static inline void cov_shared_forget(cov_fiber_t *fiber) {
  if (fiber->shared.saved) {
    free(fiber->shared.saved);
    fiber->shared.saved = NULL;
  }
}
// Stops the process: `fiber` suspends with more than the copy limit in use.
__attribute__((noreturn, cold, visibility("hidden"))) void cov_shared_too_deep(size_t used);

// The copy limit (cov_shared_stack_copy_limit).
extern _Atomic size_t cov_shared_copy_limit_bytes __attribute__((visibility("hidden")));

// The copy-limit check at a suspension of a shared fiber (`sp`: about its stack pointer). The
// limit is read here, at every suspension, rather than kept per stack: a change of it then
// reaches every stack at once, with nothing to update.
static inline void cov_shared_check_depth(const cov_fiber_t *fiber, uintptr_t sp) {
  const cov_shared_stack_t *stack = fiber->shared.stack;  // bound: it runs
  size_t used = (size_t)((uintptr_t)stack->top - sp);
  if (__builtin_expect(
          used > atomic_load_explicit(&cov_shared_copy_limit_bytes, memory_order_relaxed), 0))
    cov_shared_too_deep(used);
}

// cov_fiber_copy_frames for a shared fiber.
size_t cov_shared_copy_frames(const cov_fiber_t *fiber, void *buffer, size_t capacity,
                              cov_fiber_frames_t *out) __attribute__((visibility("hidden")));

// MARK: - Fiber records of shared fibers (fiber_record.c)

cov_fiber_t *cov_fiber_record_allocate(void) __attribute__((visibility("hidden")));
void cov_fiber_record_free(cov_fiber_t *fiber) __attribute__((visibility("hidden")));

#endif
