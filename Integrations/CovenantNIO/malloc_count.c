/* An LD_PRELOAD library for redis.sh: counts the heap allocations of a whole process (every
 * thread), the way Benchmarks/Sources/AllocationCounter counts the benchmarks' own (glibc's
 * __libc_* entry points under malloc's names). On SIGUSR2 it writes the count so far to the
 * file named by MALLOC_COUNT_FILE, so a script can read it before and after a load and divide
 * by the requests. Built by redis.sh: gcc -O2 -shared -fPIC -o malloc_count.so malloc_count.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Atomic uint64_t allocations;
static const char *count_file;

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

/* Async-signal-safe: open, write, close and digits by hand. */
static void write_count(int signal_number) {
  (void)signal_number;
  if (count_file == NULL) return;
  char digits[32];
  int length = 0;
  uint64_t value = atomic_load_explicit(&allocations, memory_order_relaxed);
  char reversed[32];
  int count = 0;
  do { reversed[count++] = (char)('0' + value % 10); value /= 10; } while (value > 0);
  while (count > 0) digits[length++] = reversed[--count];
  digits[length++] = '\n';
  int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ssize_t written = write(fd, digits, (size_t)length);
  (void)written;
  close(fd);
}

__attribute__((constructor)) static void install(void) {
  count_file = getenv("MALLOC_COUNT_FILE");
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = write_count;
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR2, &action, NULL);
}
