// Records of shared-stack fibers: heap blocks, kept in a small per-thread cache so that a thread
// starting coroutine after coroutine reuses them without malloc (as it reuses dedicated stacks
// through the stack pool's per-thread cache). The cache goes back to malloc when its thread
// exits (cov_thread_exit_arm).

#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { RECORD_CACHE_CAPACITY = 16 };

typedef struct {
  cov_fiber_t *head;  // linked through `previous`
  unsigned count;
  bool armed;  // the thread-exit hook will flush it
} record_cache_t;

static COV_TLS record_cache_t record_cache;

// At thread exit: the cached records go back to malloc.
void cov_fiber_record_cache_flush(void) {
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

void cov_fiber_record_free(cov_fiber_t *record) {
  if (record_cache.count >= RECORD_CACHE_CAPACITY) {
    free(record);
    return;
  }
  if (!record_cache.armed) {
    if (!cov_thread_exit_arm()) {
      free(record);
      return;
    }
    record_cache.armed = true;
  }
  record->previous = record_cache.head;
  record_cache.head = record;
  record_cache.count++;
}
