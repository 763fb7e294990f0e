// The pool of released stacks: a bounded shared pool of default-size stacks, with a small
// per-thread cache in front of it; what neither keeps goes back to stack_map.c. Pooled stacks
// keep their pages (a warm reuse): page faults dominate the cost of fresh stacks (one for the
// page the fiber record and first frames live on), so reuse through the pool is what makes
// fibers cheap.
//
// Life cycle of a default-size stack: mapped -> (pool <-> in use)* -> unmapped.
//
// Thread safety: every entry point may be called from any thread; one mutex guards the pool
// (never held while calling stack_map.c).

#include "stack_pool.h"

#include "diagnostics.h"
#include "stack_map.h"
#include "thread_exit.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(COV_ASAN)
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
// LeakSanitizer scans thread stacks, not the stacks of suspended fibers: an object referenced
// only from a suspended coroutine's or generator's frames would be reported as leaked. A stack
// in use is therefore registered as a root region (its usable part: the guard must not be read).
void __lsan_register_root_region(const void *p, size_t size);
void __lsan_unregister_root_region(const void *p, size_t size);
#endif

enum {
  COV_DEFAULT_STACK_SIZE = 256 * 1024,
  COV_MIN_STACK_SIZE = 16 * 1024,
  COV_DEFAULT_POOL_CAPACITY = 64,
};

// MARK: - Configuration

static _Atomic size_t default_size = COV_DEFAULT_STACK_SIZE;
static _Atomic size_t pool_capacity = COV_DEFAULT_POOL_CAPACITY;

static size_t round_up(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

static size_t normalized_size(size_t size) {
  if (size < COV_MIN_STACK_SIZE) size = COV_MIN_STACK_SIZE;
  if (size > SIZE_MAX / 2) return 0;
  return round_up(size, cov_page_size());
}

size_t cov_stack_default_size(void) {
  return atomic_load_explicit(&default_size, memory_order_relaxed);
}

size_t cov_stack_pool_capacity(void) {
  return atomic_load_explicit(&pool_capacity, memory_order_relaxed);
}

// MARK: - The pool (under the lock)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cov_stack_t *pool;
static size_t pool_count;
static size_t pool_allocated;

// A child forked while another thread held the lock would deadlock on its first allocation
// (fork.c calls this around every fork).
void cov_stack_pool_fork(cov_fork_phase_t phase) {
  if (phase == COV_FORK_PREPARE) pthread_mutex_lock(&lock);
  else if (phase == COV_FORK_PARENT) pthread_mutex_unlock(&lock);
  else pthread_mutex_init(&lock, NULL);
}

// MARK: - Per-thread cache

// A thread that runs coroutine after coroutine takes and returns default-size stacks in pairs:
// a couple kept per thread spare the shared pool's mutex on that path. Entries of a size that
// is no longer the default are returned to the system when met; a thread's entries go back to
// the shared pool when it exits (thread_exit.c).
enum { COV_THREAD_CACHE_CAPACITY = 2 };

typedef struct {
  cov_stack_t stacks[COV_THREAD_CACHE_CAPACITY];
  int count;
  bool armed;  // the thread-exit hook will flush it
} thread_cache_t;

static COV_TLS thread_cache_t thread_cache;

static void release_to_pool(cov_stack_t *stack);

static void flush_thread_cache(void) {
  thread_cache.armed = false;
  while (thread_cache.count > 0) {
    cov_stack_t stack = thread_cache.stacks[--thread_cache.count];
    release_to_pool(&stack);
  }
}

static bool thread_cache_take(size_t requested, cov_stack_t *out) {
  while (thread_cache.count > 0) {
    cov_stack_t stack = thread_cache.stacks[--thread_cache.count];
    if (stack.size == requested) {
      *out = stack;
      return true;
    }
    cov_stack_unmap(&stack);  // left over from an earlier default size
  }
  return false;
}

// Once per thread (and again after a flush): out of line, so that the common path of a release
// is not shaped around the call.
static __attribute__((noinline, cold)) bool arm_thread_cache(void) {
  thread_cache.armed = cov_thread_exit_arm(flush_thread_cache);
  return thread_cache.armed;
}

static bool thread_cache_give(cov_stack_t *stack) {
  if (thread_cache.count == COV_THREAD_CACHE_CAPACITY) return false;
  if (!thread_cache.armed && !arm_thread_cache()) return false;
  thread_cache.stacks[thread_cache.count++] = *stack;
  memset(stack, 0, sizeof *stack);
  return true;
}

static int allocate_stack(size_t size, cov_stack_t *out);

int cov_stack_allocate(size_t size, cov_stack_t *out) {
  int error = allocate_stack(size, out);
#if defined(COV_ASAN)
  if (error == 0) __lsan_register_root_region(out->base, out->size);
#endif
  return error;
}

static int allocate_stack(size_t size, cov_stack_t *out) {
  if (!out) return EINVAL;
  size_t requested = size == 0 ? cov_stack_default_size() : normalized_size(size);
  if (requested == 0) return ENOMEM;

  if (requested == cov_stack_default_size()) {
    if (thread_cache_take(requested, out)) return 0;
    pthread_mutex_lock(&lock);
    // Pool entries always have the current default size (set_default_size flushes the pool).
    if (pool_count > 0 && pool[pool_count - 1].size == requested) {
      *out = pool[--pool_count];
      pthread_mutex_unlock(&lock);
      return 0;
    }
    pthread_mutex_unlock(&lock);
    return cov_stack_map(requested, true, out);
  }
  return cov_stack_map(requested, false, out);
}

void cov_stack_release(cov_stack_t *stack) {
  if (!stack || !stack->base) return;
#if defined(COV_ASAN)
  // Frames that lived here may have left poisoned redzones behind.
  __asan_unpoison_memory_region(stack->base, stack->size);
  __lsan_unregister_root_region(stack->base, stack->size);
#endif
  if (stack->size == cov_stack_default_size() && thread_cache_give(stack)) return;
  release_to_pool(stack);
}

// Returns a stack to the shared pool, or to the system when the pool is full.
static void release_to_pool(cov_stack_t *stack) {
  if (stack->size == cov_stack_default_size()) {
    pthread_mutex_lock(&lock);
    size_t capacity = cov_stack_pool_capacity();
    if (pool_count < capacity && stack->size == cov_stack_default_size()) {
      if (pool_count == pool_allocated) {
        size_t grown = pool_allocated ? pool_allocated * 2 : COV_DEFAULT_POOL_CAPACITY;
        if (grown > capacity) grown = capacity;
        cov_stack_t *bigger = realloc(pool, grown * sizeof *pool);
        if (bigger) {
          pool = bigger;
          pool_allocated = grown;
        }
      }
      if (pool_count < pool_allocated) {
        pool[pool_count++] = *stack;
        pthread_mutex_unlock(&lock);
        memset(stack, 0, sizeof *stack);
        return;
      }
    }
    pthread_mutex_unlock(&lock);
  }
  cov_stack_unmap(stack);
  memset(stack, 0, sizeof *stack);
}

// Removes pool entries beyond `keep` (all of them if their size is stale) and frees them.
static void trim_pool(size_t keep) {
  for (;;) {
    cov_stack_t stack;
    pthread_mutex_lock(&lock);
    bool stale = pool_count > 0 && pool[pool_count - 1].size != cov_stack_default_size();
    if (pool_count == 0 || (pool_count <= keep && !stale)) {
      pthread_mutex_unlock(&lock);
      return;
    }
    stack = pool[--pool_count];
    pthread_mutex_unlock(&lock);
    cov_stack_unmap(&stack);
  }
}

void cov_stack_set_default_size(size_t size) {
  size_t normalized = normalized_size(size);
  if (normalized == 0) return;
  pthread_mutex_lock(&lock);
  size_t old = atomic_exchange_explicit(&default_size, normalized, memory_order_relaxed);
  pthread_mutex_unlock(&lock);
  if (old != normalized) trim_pool(0);
}

void cov_stack_set_pool_capacity(size_t capacity) {
  atomic_store_explicit(&pool_capacity, capacity, memory_order_relaxed);
  trim_pool(capacity);
}
