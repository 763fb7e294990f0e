#include "AllocationCounter.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Atomic int64_t allocations;
static _Atomic int64_t callocs;
/* Off by default: a timed benchmark must not pay a shared atomic add per allocation. */
static _Atomic int counting;

static inline void count_one(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
  count_one();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  count_one();
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&callocs, 1, memory_order_relaxed);
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  if (pointer == NULL) count_one();
  return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
  count_one();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count_one();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  count_one();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return 12; /* ENOMEM */
  *result = pointer;
  return 0;
}

int64_t cov_allocation_count(void) {
  return atomic_load_explicit(&allocations, memory_order_relaxed);
}

int64_t cov_calloc_count(void) { return atomic_load_explicit(&callocs, memory_order_relaxed); }

int cov_allocation_counter_active(void) { return 1; }

int64_t cov_heap_bytes_in_use(void) {
  struct mallinfo2 info = mallinfo2();
  return (int64_t)(info.uordblks + info.hblkhd);
}

void cov_allocation_counting(int enabled) {
  atomic_store_explicit(&counting, enabled, memory_order_seq_cst);
}

#else

int64_t cov_allocation_count(void) { return 0; }
int64_t cov_calloc_count(void) { return 0; }
int cov_allocation_counter_active(void) { return 0; }
int64_t cov_heap_bytes_in_use(void) { return 0; }
void cov_allocation_counting(int enabled) { (void)enabled; }

#endif
