// A shared stack (copy-on-suspend): one of the few stacks of a group (stack_group.c) that many
// fibers run on, each fiber bound to one of them for life. The header (section 4) states the
// contract; Architecture.md ("Stacks") the policy and why.
//
// Every stack has one atomic state word: the occupant (the fiber whose frames are in place, or
// 0) and three flags. The common transitions are one compare-and-swap each and take no lock:
//   resume, frames in place:   F          -> F|RUNNING
//   switch-out, nobody waits:  F|RUNNING  -> F          (or 0 when F finished)
// Everything else takes the stack's lock (the LOCKED bit): evicting the occupant (copying its
// used bytes out) and restoring the fiber that is to run, parking a fiber whose stack is
// running, and the switch-out that finds waiters and hands the first one back. While LOCKED is
// set neither fast path can succeed, so the lock holder owns the word and the stack's bytes.
//
// Memory ordering: a fiber's frames are written by the thread it ran on; after it switched out,
// that thread releases the stack (a release store or CAS), and whoever copies the frames or
// runs on the stack next acquires it first. ThreadSanitizer sees exactly these atomics.

#include "shared_stack.h"

#include "diagnostics.h"
#include "fiber_record.h"
#include "switch.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(COV_ASAN)
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
// LeakSanitizer does not scan a copy buffer as a stack: mark it so that it does (an ignored
// block is a root), as the frames it holds keep the suspended coroutine's objects alive.
void __lsan_ignore_object(const void *p);
#endif
#if defined(COV_TSAN)
void __tsan_release(void *address);
#endif

enum {
  COV_DEFAULT_COPY_LIMIT = 64 * 1024,
  COV_MIN_COPY_LIMIT = 4096,
  VACATED_PATTERN = 0xCD,     // debug builds: what vacated stack bytes read as
};

// MARK: - Configuration

_Atomic size_t cov_shared_copy_limit_bytes = COV_DEFAULT_COPY_LIMIT;
static void (*park_hook)(void *);
static void (*unpark_hook)(void *);

// -1: not decided yet (build default, then COVENANT_STACK_EVICTION).
_Atomic int cov_shared_eager_value = -1;

int cov_shared_eager_slow(void) {
#if defined(DEBUG)
  int value = 1;
#else
  int value = 0;
#endif
  const char *setting = getenv("COVENANT_STACK_EVICTION");
  if (setting && strcmp(setting, "eager") == 0) value = 1;
  if (setting && strcmp(setting, "lazy") == 0) value = 0;
  int expected = -1;
  atomic_compare_exchange_strong(&cov_shared_eager_value, &expected, value);
  return atomic_load_explicit(&cov_shared_eager_value, memory_order_relaxed);
}

int cov_shared_stacks_eager_eviction(void) { return cov_shared_eager(); }

void cov_shared_stacks_set_eager_eviction(int enabled) {
  atomic_store_explicit(&cov_shared_eager_value, enabled ? 1 : 0, memory_order_relaxed);
}

size_t cov_shared_stack_copy_limit(void) {
  return atomic_load_explicit(&cov_shared_copy_limit_bytes, memory_order_relaxed);
}

void cov_shared_stack_set_copy_limit(size_t bytes) {
  if (bytes < COV_MIN_COPY_LIMIT) bytes = COV_MIN_COPY_LIMIT;
  atomic_store_explicit(&cov_shared_copy_limit_bytes, bytes, memory_order_relaxed);
}

void cov_fiber_set_parking_hooks(void (*park)(void *), void (*unpark)(void *)) {
  park_hook = park;
  unpark_hook = unpark;
}

void cov_shared_too_deep(size_t used) {
  char text[320];
  snprintf(text, sizeof text,
           "a coroutine suspended with %zu bytes of shared stack in use, more than the copy "
           "limit (%zu bytes); start it with a dedicated stack (`stackMode: .dedicated`) or "
           "raise `Coroutine.sharedStackCopyLimit`",
           used, cov_shared_stack_copy_limit());
  cov_fatal(text);
}

// MARK: - A new stack

cov_shared_stack_t *cov_shared_stack_make(int *error) {
  cov_shared_stack_t *stack = calloc(1, sizeof *stack);
  *error = stack ? cov_stack_allocate(0, &stack->stack) : ENOMEM;
  if (*error) {
    free(stack);
    return NULL;
  }
  stack->top = (char *)(((uintptr_t)stack->stack.base + stack->stack.size) & ~(uintptr_t)15);
  return stack;
}

// MARK: - The stack's lock

static uintptr_t lock_stack(cov_shared_stack_t *stack) {
  unsigned spins = 0;
  uintptr_t state = atomic_load_explicit(&stack->state, memory_order_relaxed);
  for (;;) {
    if (!(state & COV_STACK_LOCKED)) {
      if (atomic_compare_exchange_weak_explicit(&stack->state, &state, state | COV_STACK_LOCKED,
                                                memory_order_acquire, memory_order_relaxed))
        return state;
      continue;
    }
    // Held for a copy of at most the copy limit, or a list operation.
    if (++spins > 100) sched_yield();
    else cov_cpu_relax();
    state = atomic_load_explicit(&stack->state, memory_order_relaxed);
  }
}

static void unlock_stack(cov_shared_stack_t *stack, uintptr_t state) {
  atomic_store_explicit(&stack->state, state & ~(uintptr_t)COV_STACK_LOCKED, memory_order_release);
}

// Every lock of a shared stack is taken before a fork (no copy, eviction or wait-list change is
// then half done in the child's copy). In the child, a stack whose occupant was running on
// another thread stays running: fibers bound to it park for ever.
void cov_shared_stack_fork(cov_shared_stack_t *stack, cov_fork_phase_t phase) {
  if (phase == COV_FORK_PREPARE) lock_stack(stack);
  else unlock_stack(stack, atomic_load_explicit(&stack->state, memory_order_relaxed));
}

// MARK: - Copies (lock held)

static void unpoison(const void *address, size_t size) {
#if defined(COV_ASAN)
  __asan_unpoison_memory_region(address, size);
#else
  (void)address;
  (void)size;
#endif
}

// Stops the process: no memory for the copy of a suspended fiber's frames. (It cannot go on: the
// stack is needed by the fiber being switched in, and the occupant's frames have nowhere to go.)
static __attribute__((noreturn, cold)) void out_of_memory_for_copy(size_t bytes) {
  char text[200];
  snprintf(text, sizeof text,
           "out of memory: malloc(%zu) failed for the copy of a suspended coroutine's frames "
           "off its shared stack",
           bytes);
  cov_fatal(text);
}

// Copies the occupant's used bytes [sp, top) to its buffer (grown, or shrunk when far too big).
static void evict(cov_shared_stack_t *stack, cov_fiber_t *occupant) {
  char *sp = occupant->context;
  size_t used = (size_t)(stack->top - sp);
  size_t capacity = occupant->shared.saved_capacity;
  if (used > capacity || (capacity > 4096 && capacity / 4 > used)) {
    free(occupant->shared.saved);
    // Exactly what is used (a multiple of 8: stack pointers are 8-aligned at a switch): malloc
    // adds an 8-byte header and rounds its chunks to 16, so 16k + 8 bytes fill one exactly.
    capacity = (used + 7) & ~(size_t)7;
    occupant->shared.saved = malloc(capacity);
    if (!occupant->shared.saved) out_of_memory_for_copy(capacity);
#if defined(COV_ASAN)
    __lsan_ignore_object(occupant->shared.saved);
#endif
    occupant->shared.saved_capacity = (uint32_t)capacity;
  }
  // The frames' redzones are dropped from ASan's shadow (the bytes are what matter, and the
  // next fiber on these addresses must not trip over them); they come back clean.
  unpoison(sp, used);
  memcpy(occupant->shared.saved, sp, used);
  occupant->shared.saved_size = (uint32_t)used;
#if defined(DEBUG)
  memset(sp, VACATED_PATTERN, used);
#endif
}

static void restore(cov_fiber_t *fiber) {
  size_t size = fiber->shared.saved_size;
  unpoison(fiber->context, size);
  memcpy(fiber->context, fiber->shared.saved, size);
  fiber->shared.saved_size = 0;
}

// Eager eviction left [poisoned_low, top) poisoned while nobody used it: the next occupant does.
void cov_shared_clear_poison(cov_shared_stack_t *stack) {
#if defined(COV_ASAN)
  if (stack->poisoned_low) {
    __asan_unpoison_memory_region((void *)stack->poisoned_low,
                                  (size_t)((uintptr_t)stack->top - stack->poisoned_low));
    stack->poisoned_low = 0;
  }
#else
  (void)stack;
#endif
}

// MARK: - Acquire and release

// Waiters being handed back on this thread. An unpark hook may resume the waiter at once (an
// immediate scheduler does), whose switch-out may hand back another waiter, and so on: those
// are queued here and handed back by the outermost call, so the nesting stays one level deep
// however many coroutines wait on a stack.
static COV_TLS struct {
  cov_fiber_t *head, *tail;  // linked through next_waiter (free once off a wait list)
  bool draining;
} handing_back;

static void hand_back(cov_fiber_t *waiter) {
  waiter->next_waiter = NULL;
  if (handing_back.tail) handing_back.tail->next_waiter = waiter;
  else handing_back.head = waiter;
  handing_back.tail = waiter;
  if (handing_back.draining) return;
  handing_back.draining = true;
  while (handing_back.head) {
    cov_fiber_t *next = handing_back.head;
    handing_back.head = next->next_waiter;
    if (!handing_back.head) handing_back.tail = NULL;
#if defined(COV_TSAN)
    __tsan_release(next);  // its next resume acquires it (fiber.c): the unpark is that edge
#endif
    unpark_hook(next->argument);  // set: the waiter was parked (cov_shared_acquire_slow)
  }
  handing_back.draining = false;
}

int cov_shared_acquire_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber,
                            void (*entry)(cov_transfer_t)) {
  if (!fiber->started && cov_shared_take_empty(stack, fiber, entry)) return 1;

  uintptr_t state = lock_stack(stack);
  if (state & COV_STACK_RUNNING) {
    // Its occupant runs, here or on another thread: wait in line, without blocking anyone. Only
    // the hooks can tell the fiber's owner that it is parked, and hand it back later: without
    // them it would be lost, never to run again.
    if (!park_hook || !unpark_hook)
      cov_fatal("a shared-stack fiber must wait for its stack, which another fiber is running, "
                "but no parking hooks are set (cov_fiber_set_parking_hooks): it would never "
                "run again");
    fiber->parked = true;
    fiber->next_waiter = NULL;
    if (stack->waiters_tail) stack->waiters_tail->next_waiter = fiber;
    else stack->waiters_head = fiber;
    stack->waiters_tail = fiber;
    park_hook(fiber->argument);
    unlock_stack(stack, state | COV_STACK_WAITERS);
    return 0;
  }
  cov_fiber_t *occupant = (cov_fiber_t *)(state & ~(uintptr_t)COV_STACK_FLAGS);
  if (occupant != fiber) {
    if (occupant) evict(stack, occupant);
    cov_shared_clear_poison(stack);
    if (fiber->shared.saved_size > 0) {
      restore(fiber);
    } else {
      if (fiber->started) cov_fatal("a shared-stack fiber lost its frames");
      fiber->context = cov_make_fcontext_hidden(stack->top, stack->stack.size, entry);
    }
  }
  unlock_stack(stack, (uintptr_t)fiber | COV_STACK_RUNNING | (state & COV_STACK_WAITERS));
  return 1;
}

void cov_shared_release_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber) {
  bool finished = fiber->finished;
  bool copy_out = !finished && cov_shared_eager();
  lock_stack(stack);
  uintptr_t next = finished ? 0 : (uintptr_t)fiber;
  if (copy_out) {
    evict(stack, fiber);
#if defined(COV_ASAN)
    // Nobody's frames are there now: any access through a pointer into them is a bug.
    __asan_poison_memory_region(fiber->context, fiber->shared.saved_size);
    stack->poisoned_low = (uintptr_t)fiber->context;
#endif
    next = 0;
  }
  cov_fiber_t *waiter = stack->waiters_head;
  if (waiter) {
    stack->waiters_head = waiter->next_waiter;
    if (!stack->waiters_head) stack->waiters_tail = NULL;
    waiter->next_waiter = NULL;
    waiter->parked = false;
  }
  unlock_stack(stack, next | (stack->waiters_head ? COV_STACK_WAITERS : 0));
  if (waiter) hand_back(waiter);
}

// MARK: - Frames under the lock

size_t cov_shared_with_locked_frames(const cov_fiber_t *fiber, cov_fiber_frames_t *frames,
                                     size_t (*use)(cov_fiber_frames_t *frames, void *context),
                                     void *context) {
  // Acquiring, as fiber.c publishes it (releasing) after `shared.stack`: this may run on a
  // snapshot's thread while the fiber first runs on another.
  if (!__atomic_load_n(&fiber->bound, __ATOMIC_ACQUIRE)) {
    cov_fiber_frames(fiber, frames);
    return 0;
  }
  cov_shared_stack_t *stack = fiber->shared.stack;
  uintptr_t state = lock_stack(stack);
  size_t result = 0;
  bool running_here = (state & ~(uintptr_t)COV_STACK_FLAGS) == (uintptr_t)fiber &&
                      (state & COV_STACK_RUNNING);
  if (running_here) memset(frames, 0, sizeof *frames);
  else if (cov_fiber_frames(fiber, frames)) result = use(frames, context);
  unlock_stack(stack, state);
  return result;
}
