// A malloc counter for CovenantNIO's measurements (measure.sh preloads it): counts every
// allocation of the process (malloc, calloc, realloc of NULL, aligned forms) and exports the
// count as covenant_allocation_count(). Linux and glibc only.
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Atomic int64_t allocations;

static inline void count_one(void) {
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) { count_one(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { count_one(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) {
  if (pointer == NULL) count_one();
  return __libc_realloc(pointer, size);
}
void free(void *pointer) { __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
  count_one();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return 12; /* ENOMEM */
  *result = pointer;
  return 0;
}

int64_t covenant_allocation_count(void) {
  return atomic_load_explicit(&allocations, memory_order_relaxed);
}
