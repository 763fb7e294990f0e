// Fibers: a stack, a saved context and the bookkeeping that sanitizers and Swift's exclusivity
// checking need, behind an asymmetric resume/suspend API.
//
// A dedicated fiber's record lives at the top of its own stack (no separate allocation); a
// shared-stack fiber's record is a small heap block (fiber_record.c) and its stack is one of its
// group's (stack_group.c, shared_stack.c). Resume and suspend of a dedicated fiber take no
// locks, make no system calls and allocate nothing; a shared fiber adds one compare-and-swap on
// each side of the switch while its frames stay in place.
//
// The thread-local slots (CCoroutineContext.h) are defined here: the switch keeps
// COV_TLS_SLOT_PER_STACK with the stack that runs (saved on resume, given back on suspension
// and exit).
//
// Threads: a fiber runs on the thread that resumes it. A suspended fiber may be resumed on any
// thread, but by one resumer at a time, and only after the cov_fiber_resume that ran it before
// has returned (that return is what proves the suspension is complete).

#include "cov_internal.h"
#include "diagnostics.h"
#include "fiber_record.h"
#include "overflow.h"
#include "shared_stack.h"
#include "stack_group.h"
#include "switch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// MARK: - Swift exclusivity hooks (libswiftCore; absent in pure C programs)

#if defined(__has_attribute)
#if __has_attribute(swiftcall)
#define COV_SWIFT_EXCLUSIVITY 1
#endif
#endif

#if defined(COV_SWIFT_EXCLUSIVITY)
extern void swift_task_enterThreadLocalContext(char *state) __attribute__((swiftcall, weak));
extern void swift_task_exitThreadLocalContext(char *state) __attribute__((swiftcall, weak));
#define COV_EXCLUSIVITY_ENTER(fiber)                                                    \
  do {                                                                                  \
    if ((fiber)->track_exclusivity && swift_task_enterThreadLocalContext)               \
      swift_task_enterThreadLocalContext((char *)(fiber)->exclusivity);                 \
  } while (0)
#define COV_EXCLUSIVITY_EXIT(fiber)                                                     \
  do {                                                                                  \
    if ((fiber)->track_exclusivity && swift_task_exitThreadLocalContext)                \
      swift_task_exitThreadLocalContext((char *)(fiber)->exclusivity);                  \
  } while (0)
#else
#define COV_EXCLUSIVITY_ENTER(fiber) ((void)0)
#define COV_EXCLUSIVITY_EXIT(fiber) ((void)0)
#endif

// MARK: - Sanitizer interfaces

#if defined(COV_ASAN)
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif
#if defined(COV_TSAN)
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_acquire(void *address);
void __tsan_release(void *address);
#endif

// A fiber record changes hands between threads through synchronisation TSan cannot see: the
// Swift layer's reference counts (the last release, which destroys a finished fiber, may run
// on any thread). Every switch out of a fiber releases the record and every resume or destroy
// acquires it, which states that real happens-before edge to TSan.
#if defined(COV_TSAN)
#define COV_TSAN_HANDOVER_OUT(fiber) __tsan_release(fiber)
#define COV_TSAN_HANDOVER_IN(fiber) __tsan_acquire(fiber)
#else
#define COV_TSAN_HANDOVER_OUT(fiber) ((void)0)
#define COV_TSAN_HANDOVER_IN(fiber) ((void)0)
#endif

// MARK: - State

COV_TLS void *cov_tls_slots[COV_TLS_SLOT_COUNT];

typedef struct {
  cov_fiber_t *current;
  // Where a finished fiber's last switch saves the context it leaves (never resumed). Not a
  // local: under AddressSanitizer an address-taken local may live on the fiber's fake stack,
  // which __sanitizer_start_switch_fiber(NULL, ...) destroys just before that switch.
  cov_fcontext_t abandoned_context;
  bool overflow_ready;
} thread_state_t;

static COV_TLS thread_state_t thread_state;

static __attribute__((noreturn, cold)) void misuse(const char *message) {
  char text[160] = "fiber misuse: ";
  strncat(text, message, sizeof text - strlen(text) - 1);
  cov_fatal(text);
}

// The thread state as seen from code that may run on another thread than earlier in the same
// function (after a switch). The empty asm keeps the compiler from treating the call as pure and
// reusing an earlier thread's address.
static __attribute__((noinline)) thread_state_t *fresh_thread_state(void) {
  __asm__ volatile("" ::: "memory");
  return &thread_state;
}

// The thread-local slots as seen from code that may run on another thread than earlier in the
// same function (see fresh_thread_state).
static __attribute__((noinline)) void **fresh_tls_slots(void) {
  __asm__ volatile("" ::: "memory");
  return cov_tls_slots;
}

// MARK: - For the overflow handler

// Async-signal-safe: whether `address` lies in the guard region of the fiber running on the
// calling thread; sets *stack_size if so (overflow.c asks it through its hook).
static int in_current_guard(uintptr_t address, size_t *stack_size) {
  cov_fiber_t *fiber = thread_state.current;
  if (!fiber) return 0;
  const cov_stack_t *stack = cov_fiber_stack(fiber);
  uintptr_t low = (uintptr_t)stack->guard;
  uintptr_t high = (uintptr_t)stack->base;
  if (address < low || address >= high) return 0;
  *stack_size = stack->size;
  return 1;
}

// MARK: - Entry

static __attribute__((noinline, noreturn)) void leave_finished_fiber(cov_fiber_t *fiber);

static void fiber_main(cov_transfer_t transfer) {
  cov_fiber_t *fiber = transfer.data;  // fiber->resumer was stored by the switch
#if defined(COV_ASAN)
  __sanitizer_finish_switch_fiber(NULL, &fiber->resumer_bottom, &fiber->resumer_size);
#endif
  fiber->entry(fiber->argument);
  // The entry returned (possibly on another thread than the one we started on). A function of
  // its own: this frame, below every frame of the fiber, then holds only `fiber` (a suspended
  // shared-stack fiber's copy includes it).
  leave_finished_fiber(fiber);
}

// Leaves a fiber whose entry returned, for good.
static void leave_finished_fiber(cov_fiber_t *fiber) {
  thread_state_t *state = fresh_thread_state();
  state->current = fiber->previous;
  fresh_tls_slots()[COV_TLS_SLOT_PER_STACK] = fiber->resumer_stack_local;
  fiber->running = false;
  fiber->finished = true;
  COV_EXCLUSIVITY_EXIT(fiber);
  // Nothing of the record is touched after the hand-over: once the resumer runs again it may
  // destroy the fiber and another thread reuse the record.
  cov_fcontext_t resumer = fiber->resumer;
#if defined(COV_TSAN)
  void *tsan_resumer = fiber->tsan_resumer;
#endif
#if defined(COV_ASAN)
  const void *resumer_bottom = fiber->resumer_bottom;
  size_t resumer_size = fiber->resumer_size;
#endif
  COV_TSAN_HANDOVER_OUT(fiber);
#if defined(COV_ASAN)
  __sanitizer_start_switch_fiber(NULL, resumer_bottom, resumer_size);
#endif
#if defined(COV_TSAN)
  __tsan_switch_to_fiber(tsan_resumer, 0);
#endif
  cov_fiber_switch_hidden(&state->abandoned_context, resumer, (void *)(intptr_t)COV_FIBER_RAN);
  __builtin_trap();
}

// MARK: - API

cov_fiber_t *cov_fiber_create(size_t stack_size, cov_fiber_entry_t entry, void *argument) {
  cov_stack_t stack;
  int error = cov_stack_allocate(stack_size, &stack);
  if (error) {
    errno = error;
    return NULL;
  }
  uintptr_t top = (uintptr_t)stack.base + stack.size;
  size_t record = sizeof(cov_fiber_t) + sizeof(cov_stack_t);
  cov_fiber_t *fiber = (cov_fiber_t *)((top - record) & ~(uintptr_t)63);
  memset(fiber, 0, record);
  fiber->entry = entry;
  fiber->argument = argument;
  *cov_own_stack(fiber) = stack;
  fiber->track_exclusivity = true;
  fiber->context = cov_make_fcontext_hidden(fiber, (size_t)((char *)fiber - (char *)stack.base),
                                            fiber_main);
#if defined(COV_TSAN)
  fiber->tsan_fiber = __tsan_create_fiber(0);
#endif
  return fiber;
}

cov_fiber_t *cov_fiber_create_shared(cov_stack_group_t *group, size_t min_stacks,
                                     cov_fiber_entry_t entry, void *argument) {
  if (!group) {
    errno = ENOMEM;
    return NULL;
  }
  cov_group_set_min(group, min_stacks);
  int error = cov_group_ensure_stack(group);
  if (error) {
    errno = error;
    return NULL;
  }
  cov_fiber_t *fiber = cov_fiber_record_allocate();
  if (!fiber) {
    errno = ENOMEM;
    return NULL;
  }
  fiber->entry = entry;
  fiber->argument = argument;
  fiber->track_exclusivity = true;
  fiber->is_shared = true;
  fiber->shared.group = group;
#if defined(COV_TSAN)
  fiber->tsan_fiber = __tsan_create_fiber(0);
#endif
  return fiber;
}

// The bookkeeping of switching into `fiber` on this thread. A macro, not a function: the
// ThreadSanitizer fiber switch must be made in the function that then switches stacks, with no
// instrumented return in between (an unoptimized helper's exit would pop the other fiber's
// shadow call stack).
#if defined(COV_TSAN)
#define COV_TSAN_SWITCH_IN(fiber)                            \
  do {                                                       \
    (fiber)->tsan_resumer = __tsan_get_current_fiber();      \
    __tsan_switch_to_fiber((fiber)->tsan_fiber, 0);          \
  } while (0)
#else
#define COV_TSAN_SWITCH_IN(fiber) ((void)0)
#endif
#define ENTER(fiber, state)                                                      \
  do {                                                                           \
    (fiber)->previous = (state)->current;                                        \
    (state)->current = (fiber);                                                  \
    (fiber)->resumer_stack_local = cov_tls_slots[COV_TLS_SLOT_PER_STACK];        \
    (fiber)->started = true;                                                     \
    (fiber)->running = true;                                                     \
    COV_EXCLUSIVITY_ENTER(fiber);                                                \
    COV_TSAN_SWITCH_IN(fiber);                                                   \
  } while (0)

// A shared fiber: its frames are put in place first (or it is parked), and after it switched
// back the stack is released, which may hand a waiting fiber to its owner. So, unlike a
// dedicated fiber's, this resume is an ordinary call that returns.
static __attribute__((noinline)) int resume_shared(cov_fiber_t *fiber) {
  thread_state_t *state = &thread_state;
  cov_shared_stack_t *stack;
  if (fiber->bound) {
    stack = fiber->shared.stack;
    if (!cov_shared_acquire(stack, fiber, fiber_main)) return COV_FIBER_PARKED;
  } else {
    // The first run: bound to a stack of its group, taken at once if it is empty.
    fiber->shared.stack = stack = cov_group_bind(fiber->shared.group);
    // Atomic (releasing): a snapshot reads `bound` from another thread, then `shared.stack`.
    __atomic_store_n(&fiber->bound, true, __ATOMIC_RELEASE);
    if (!cov_shared_take_empty(stack, fiber, fiber_main) &&
        !cov_shared_acquire_slow(stack, fiber, fiber_main))
      return COV_FIBER_PARKED;
  }
  ENTER(fiber, state);
#if defined(COV_ASAN)
  void *fake_stack = NULL;
  __sanitizer_start_switch_fiber(&fake_stack, stack->stack.base, stack->stack.size);
  int status = cov_fiber_switch_hidden(&fiber->resumer, fiber->context, fiber);
  __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
#else
  int status = cov_fiber_switch_hidden(&fiber->resumer, fiber->context, fiber);
#endif
  // Back on this thread, the fiber switched out: only now may its frames be copied.
  cov_shared_release(stack, fiber);
  return status;
}

// Fast path: all bookkeeping happens before the switch, and the switch is the function's tail
// call. The resumer's saved context is then its caller's (its return address is the caller's),
// so when the fiber switches back, execution continues directly in the caller, as if
// cov_fiber_resume had returned, without a mispredicted `ret`. Likewise for suspend. Only
// ASan needs work after a switch; without optimization (no tail call) the same code is
// simply an ordinary call that returns.

int cov_fiber_resume(cov_fiber_t *fiber) {
  thread_state_t *state = &thread_state;
  if (__builtin_expect(!state->overflow_ready, 0)) {
    cov_overflow_set_current_guard_lookup(in_current_guard);
    cov_overflow_handler_install();
    state->overflow_ready = true;
  }
  COV_TSAN_HANDOVER_IN(fiber);
  if (__builtin_expect(fiber->not_plain != 0, 0)) {
    if (fiber->running | fiber->finished | fiber->parked)
      misuse(fiber->running  ? "cov_fiber_resume of a running fiber"
             : fiber->parked ? "cov_fiber_resume of a parked fiber (wait for its unpark hook)"
                             : "cov_fiber_resume of a finished fiber");
    return resume_shared(fiber);
  }

  ENTER(fiber, state);
#if defined(COV_ASAN)
  void *fake_stack = NULL;
  __sanitizer_start_switch_fiber(&fake_stack, cov_own_stack(fiber)->base,
                                 cov_own_stack(fiber)->size);
  int status = cov_fiber_switch_hidden(&fiber->resumer, fiber->context, fiber);
  __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
  return status;
#else
  return cov_fiber_switch_hidden(&fiber->resumer, fiber->context, fiber);
#endif
}

void cov_fiber_suspend(void) {
  thread_state_t *state = &thread_state;
  cov_fiber_t *fiber = state->current;
  if (__builtin_expect(fiber == NULL, 0)) misuse("cov_fiber_suspend outside a fiber");
  if (fiber->is_shared) cov_shared_check_depth(fiber, (uintptr_t)__builtin_frame_address(0));

  state->current = fiber->previous;
  cov_tls_slots[COV_TLS_SLOT_PER_STACK] = fiber->resumer_stack_local;
  fiber->running = false;
  COV_EXCLUSIVITY_EXIT(fiber);
  cov_fcontext_t resumer = fiber->resumer;  // read before the hand-over, as the rest
#if defined(COV_TSAN)
  void *tsan_resumer = fiber->tsan_resumer;
#endif
  COV_TSAN_HANDOVER_OUT(fiber);
#if defined(COV_TSAN)
  __tsan_switch_to_fiber(tsan_resumer, 0);
#endif
#if defined(COV_ASAN)
  __sanitizer_start_switch_fiber(&fiber->fake_stack, fiber->resumer_bottom, fiber->resumer_size);
  cov_fiber_switch_hidden(&fiber->context, resumer, (void *)(intptr_t)COV_FIBER_RAN);
  // Resumed, maybe on another thread: no thread-local state is reused from above.
  __sanitizer_finish_switch_fiber(fiber->fake_stack, &fiber->resumer_bottom,
                                  &fiber->resumer_size);
#else
  cov_fiber_switch_hidden(&fiber->context, resumer, (void *)(intptr_t)COV_FIBER_RAN);
#endif
}

void cov_fiber_destroy(cov_fiber_t *fiber) {
  if (!fiber) return;
  COV_TSAN_HANDOVER_IN(fiber);
  if (fiber->running || fiber->parked || (fiber->started && !fiber->finished))
    misuse("cov_fiber_destroy of a suspended, parked or running fiber");
#if defined(COV_TSAN)
  __tsan_destroy_fiber(fiber->tsan_fiber);
#endif
  if (fiber->is_shared) {
    cov_shared_forget(fiber);
    cov_fiber_record_free(fiber);
    return;
  }
  cov_stack_t stack = *cov_own_stack(fiber);  // the record lives on the stack being released
  cov_stack_release(&stack);
}

cov_fiber_t *cov_fiber_current(void) { return thread_state.current; }

void cov_fiber_set_exclusivity_tracking(cov_fiber_t *fiber, int enabled) {
  if (fiber->started && !fiber->finished) misuse("exclusivity tracking changed on a started fiber");
  fiber->track_exclusivity = enabled != 0;
}
