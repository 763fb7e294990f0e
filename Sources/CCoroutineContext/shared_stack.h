// A shared stack (shared_stack.c): its state word, the copies in and out, parking. The common
// transitions are inline here, as they are on every resume and suspension of a shared fiber.

#ifndef COVENANT_SHARED_STACK_H
#define COVENANT_SHARED_STACK_H

#include "cov_internal.h"
#include "fiber_record.h"
#include "switch.h"

// A new shared stack: a default-size stack from the pool, empty; NULL with *error set (an errno
// value) if none could be had.
COV_HIDDEN cov_shared_stack_t *cov_shared_stack_make(int *error);

// Eager eviction (cov_shared_stacks_eager_eviction): -1 until decided.
extern _Atomic int cov_shared_eager_value COV_HIDDEN;
COV_HIDDEN int cov_shared_eager_slow(void);
static inline int cov_shared_eager(void) {
  int value = atomic_load_explicit(&cov_shared_eager_value, memory_order_relaxed);
  return __builtin_expect(value >= 0, 1) ? value : cov_shared_eager_slow();
}

// Makes `fiber`'s frames the ones in place on its stack and marks the stack running: 1. Or
// parks the fiber on the stack's wait list when its occupant is running: 0. A fiber that has
// not started gets its initial context made at the top of the stack. The common case, the
// fiber's frames already in place and nobody waiting, is one compare-and-swap, inline.
COV_HIDDEN int cov_shared_acquire_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber,
                                       void (*entry)(cov_transfer_t));
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
COV_HIDDEN void cov_shared_clear_poison(cov_shared_stack_t *stack);

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
COV_HIDDEN void cov_shared_release_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber);
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
__attribute__((noreturn, cold)) COV_HIDDEN void cov_shared_too_deep(size_t used);

// The copy limit (cov_shared_stack_copy_limit).
extern _Atomic size_t cov_shared_copy_limit_bytes COV_HIDDEN;

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

// Calls `use(frames, context)` with the frames of a switched-out shared fiber, under its stack's
// lock, so that neither an eviction nor a resume moves them meanwhile, and returns what it
// returns. 0 if the fiber is running or has no frames (`frames` then filled as cov_fiber_frames
// does; all zero if its stack is running it).
COV_HIDDEN size_t cov_shared_with_locked_frames(const cov_fiber_t *fiber,
                                                cov_fiber_frames_t *frames,
                                                size_t (*use)(cov_fiber_frames_t *frames,
                                                              void *context),
                                                void *context);

// Takes (COV_FORK_PREPARE) or releases (after the fork) the stack's lock, for the groups' fork
// hook (stack_group.c), which knows every stack.
COV_HIDDEN void cov_shared_stack_fork(cov_shared_stack_t *stack, cov_fork_phase_t phase);

#endif
