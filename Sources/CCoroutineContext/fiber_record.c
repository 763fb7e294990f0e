// Records of shared-stack fibers: heap blocks, kept in a small per-thread cache so that a thread
// starting coroutine after coroutine reuses them without malloc (as it reuses dedicated stacks
// through the stack pool's per-thread cache).

#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { RECORD_CACHE_CAPACITY = 16 };

typedef struct {
  cov_fiber_t *head;  // linked through `previous`
  unsigned count;
  bool registered;
} record_cache_t;

static COV_TLS record_cache_t record_cache;
static pthread_key_t record_cache_key;
static pthread_once_t record_cache_once = PTHREAD_ONCE_INIT;

// At thread exit: the cached records go back to malloc.
static void flush_record_cache(void *unused) {
  (void)unused;
  while (record_cache.head) {
    cov_fiber_t *record = record_cache.head;
    record_cache.head = record->previous;
    free(record);
  }
  record_cache.count = 0;
}

static void make_record_cache_key(void) {
  pthread_key_create(&record_cache_key, flush_record_cache);
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
  if (!record_cache.registered) {
    pthread_once(&record_cache_once, make_record_cache_key);
    // Any non-NULL value: it only makes the destructor run at thread exit.
    if (pthread_setspecific(record_cache_key, &record_cache) != 0) {
      free(record);
      return;
    }
    record_cache.registered = true;
  }
  record->previous = record_cache.head;
  record_cache.head = record;
  record_cache.count++;
}
