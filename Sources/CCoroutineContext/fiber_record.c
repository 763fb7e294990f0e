// Fiber records: the heap blocks of shared-stack fibers, kept in a small per-thread cache so that
// a thread starting coroutine after coroutine reuses them without malloc (as it reuses dedicated
// stacks through the stack pool's per-thread cache; the cache goes back to malloc when its
// thread exits), and what a record tells of its fiber's stack and frames without any lock.
// (A dedicated fiber's record lives at the top of its own stack: fiber.c.)

#include "fiber_record.h"

#include "diagnostics.h"
#include "thread_exit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Records of shared fibers

enum { RECORD_CACHE_CAPACITY = 16 };

typedef struct {
  cov_fiber_t *head;  // linked through `previous`
  unsigned count;
  bool armed;  // the thread-exit hook will flush it
} record_cache_t;

static COV_TLS record_cache_t record_cache;

// At thread exit: the cached records go back to malloc.
static void flush_record_cache(void) {
  record_cache.armed = false;
  while (record_cache.head) {
    cov_fiber_t *record = record_cache.head;
    record_cache.head = record->previous;
    free(record);
  }
  record_cache.count = 0;
}

cov_fiber_t *cov_fiber_record_allocate(void) {
  cov_fiber_t *record = record_cache.head;
  if (record) {
    record_cache.head = record->previous;
    record_cache.count--;
  } else {
    // malloc's alignment (16 with glibc, at least 8 everywhere) leaves the low bits of the
    // address free for a shared stack's state word.
    record = malloc(sizeof(cov_fiber_t));
    if (!record) return NULL;
    if ((uintptr_t)record & COV_STACK_FLAGS) cov_fatal("malloc returned a block aligned below 8");
  }
  *record = (cov_fiber_t){0};  // inline stores (a memset call of this size costs more)
  return record;
}

// Once per thread (and again after a flush): out of line, as in stack_pool.c.
static __attribute__((noinline, cold)) bool arm_record_cache(void) {
  record_cache.armed = cov_thread_exit_arm(flush_record_cache);
  return record_cache.armed;
}

void cov_fiber_record_free(cov_fiber_t *record) {
  if (record_cache.count >= RECORD_CACHE_CAPACITY ||
      (!record_cache.armed && !arm_record_cache())) {
    free(record);
    return;
  }
  record->previous = record_cache.head;
  record_cache.head = record;
  record_cache.count++;
}

// MARK: - What a record tells

const cov_stack_t *cov_fiber_stack(const cov_fiber_t *fiber) {
  static const cov_stack_t none;
  if (!fiber->is_shared) return cov_own_stack(fiber);
  return fiber->bound ? &fiber->shared.stack->stack : &none;
}

int cov_fiber_frames(const cov_fiber_t *fiber, cov_fiber_frames_t *out) {
  const cov_stack_t *stack = cov_fiber_stack(fiber);
  memset(out, 0, sizeof *out);
  out->stack_low = stack->base;
  out->stack_high = stack->base ? (char *)stack->base + stack->size : NULL;
  out->shared = fiber->is_shared;
  if (!fiber->started || fiber->running || fiber->finished) return 0;
  out->sp = fiber->context;
  if (fiber->is_shared && fiber->shared.saved_size > 0) {
    out->bytes = fiber->shared.saved;
    out->copied_out = 1;
  } else {
    out->bytes = fiber->context;
  }
  return 1;
}

uintptr_t cov_fiber_wait_detail(const cov_fiber_t *fiber) {
  return atomic_load_explicit(&((cov_fiber_t *)fiber)->wait_detail, memory_order_relaxed);
}

int cov_fiber_is_finished(const cov_fiber_t *fiber) { return fiber->finished; }

int cov_fiber_is_shared(const cov_fiber_t *fiber) { return fiber->is_shared; }

size_t cov_fiber_stack_size(const cov_fiber_t *fiber) { return cov_fiber_stack(fiber)->size; }

void *cov_fiber_stack_base(const cov_fiber_t *fiber) { return cov_fiber_stack(fiber)->base; }
