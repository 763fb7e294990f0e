// Stacks: configuration, 100,000 at once, the mapping budget, the guard registry when a stack
// is unmapped.

#include "fixtures.h"
#include "stack_map.h"  // cov_stack_guard_lookup

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// MARK: - Configuration

void test_configuration(void) {
  section("configuration: default size and pool capacity");
  CHECK(cov_stack_default_size() == 256 * 1024, "default %zu", cov_stack_default_size());
  CHECK(cov_stack_pool_capacity() == 64, "pool %zu", cov_stack_pool_capacity());
  cov_stack_set_default_size(1000);
  CHECK(cov_stack_default_size() == 16 * 1024, "min %zu", cov_stack_default_size());
  cov_stack_set_default_size(100 * 1000);
  CHECK(cov_stack_default_size() % (size_t)sysconf(_SC_PAGESIZE) == 0 &&
            cov_stack_default_size() >= 100 * 1000,
        "rounded %zu", cov_stack_default_size());
  cov_fiber_t *fiber = cov_fiber_create(0, counter_entry, (void *)(intptr_t)1);
  CHECK(fiber && cov_fiber_stack_size(fiber) == cov_stack_default_size(), "fiber size");
  while (!cov_fiber_is_finished(fiber)) cov_fiber_resume(fiber);
  cov_fiber_destroy(fiber);
  cov_stack_t stack;
  CHECK(cov_stack_allocate(0, &stack) == 0 && stack.size == cov_stack_default_size() &&
            stack.guard_size >= 64 * 1024 &&
            (char *)stack.guard + stack.guard_size == (char *)stack.base,
        "layout");
  cov_stack_release(&stack);
  cov_stack_set_default_size(256 * 1024);
  cov_stack_set_pool_capacity(8);
  CHECK(cov_stack_pool_capacity() == 8, "pool %zu", cov_stack_pool_capacity());
  cov_stack_set_pool_capacity(64);
}

// MARK: - 100,000 stacks at once

void test_hundred_thousand(void) {
  section("100,000 stacks alive at once under vm.max_map_count");
  if (!cov_stack_uses_guard_markers()) {
    printf("SKIP: MADV_GUARD_INSTALL unsupported here (kernel < 6.13 or emulator); stacks use one "
           "mapping + mprotect guard each, so 100,000 would exceed vm.max_map_count\n");
    return;
  }
  enum { N = 100000 };
  cov_stack_t *stacks = calloc(N, sizeof *stacks);
  int before = count_mappings();
  int errors = 0;
  for (int i = 0; i < N; i++) {
    int error = cov_stack_allocate(0, &stacks[i]);
    if (error) {
      if (errors++ == 0) printf("allocation %d failed: %s\n", i, strerror(error));
      stacks[i].base = NULL;
      continue;
    }
    ((volatile char *)stacks[i].base)[stacks[i].size - 1] = (char)i;  // commit the top page
  }
  int during = count_mappings();
  printf("mappings: %d before, %d with 100,000 stacks\n", before, during);
  CHECK(errors == 0, "%d allocations failed", errors);
  CHECK(during - before < 6000, "%d new mappings", during - before);
  int corrupted = 0;
  for (int i = 0; i < N; i++)
    if (stacks[i].base && ((volatile char *)stacks[i].base)[stacks[i].size - 1] != (char)i)
      corrupted++;
  CHECK(corrupted == 0, "%d stacks overlap", corrupted);
  for (int i = 0; i < N; i++) cov_stack_release(&stacks[i]);
  int after = count_mappings();
  printf("mappings after release: %d\n", after);
#if !defined(TEST_TSAN)
  CHECK(after - before < 100, "%d mappings left", after - before);
#endif
  free(stacks);
}

// MARK: - Mapping budget

void test_mapping_budget(void) {
  section("mapping budget: dedicated stacks stop short of vm.max_map_count with EAGAIN");
  size_t real = cov_stack_max_map_count();
  printf("vm.max_map_count: %zu; mappings held now: %zu\n", real, cov_stack_mappings_in_use());
  // A limit 200 mappings above the reserve (an eighth of the limit, at least 1,024): room for
  // 100 stacks of a non-default size with mprotect guards, 200 with guard markers.
  size_t in_use = cov_stack_mappings_in_use();
  cov_stack_set_max_map_count(in_use + 200 + 1024);
  enum { MAX = 1000 };
  static cov_stack_t stacks[MAX];
  int made = 0, error = 0;
  while (made < MAX) {
    error = cov_stack_allocate(48 * 1024, &stacks[made]);
    if (error) break;
    made++;
  }
  printf("stacks before the budget ran out: %d (error %s)\n", made, strerror(error));
  CHECK(error == EAGAIN, "error %d", error);
  CHECK(made == (cov_stack_uses_guard_markers() ? 200 : 100), "made %d", made);
  // A shared fiber of a new group needs a stack too: its creation fails cleanly (with a new
  // default size, so that no pooled stack can serve it).
  cov_stack_set_default_size(64 * 1024);
  // (changing the default returned the pooled stacks to the system: use up what that freed)
  while (made < MAX && cov_stack_allocate(0, &stacks[made]) == 0) made++;
  static int key;
  errno = 0;
  cov_fiber_t *shared = cov_fiber_create_shared(cov_stack_group(&key), 0, shared_entry, NULL);
  CHECK(shared == NULL && errno == EAGAIN, "shared create: %p errno %d", (void *)shared, errno);
  cov_fiber_destroy(shared);
  cov_stack_set_default_size(256 * 1024);
  for (int i = 0; i < made; i++) cov_stack_release(&stacks[i]);
  CHECK(cov_stack_mappings_in_use() <= in_use, "in use %zu, was %zu", cov_stack_mappings_in_use(),
        in_use);
  cov_stack_set_max_map_count(0);
  CHECK(cov_stack_max_map_count() == real, "limit restored");
}

// MARK: - Unmapping

// munmap, interposed (the library's sources are linked into this executable): whether a range
// unmapped while the probe is on still lies in a registered guard region. Not under the
// sanitizers, whose own munmap interceptors must see every call.
#if !defined(TEST_ASAN) && !defined(TEST_TSAN)
#define TEST_UNMAP_ORDER 1
static _Atomic int munmap_probe, munmap_of_registered_guard;
int munmap(void *address, size_t length) {
  size_t size;
  if (atomic_load(&munmap_probe) && cov_stack_guard_lookup((uintptr_t)address, &size))
    atomic_store(&munmap_of_registered_guard, 1);
  return (int)syscall(SYS_munmap, address, length);
}
#endif

void test_unmap_order(void) {
  section("an individual stack leaves the guard registry before it is unmapped");
#if defined(TEST_UNMAP_ORDER)
  cov_stack_t stack;
  CHECK(cov_stack_allocate(100 * 1024, &stack) == 0, "allocated");  // not the default: its own
  size_t size = 0;
  CHECK(cov_stack_guard_lookup((uintptr_t)stack.guard, &size) && size == stack.size,
        "its guard is registered");
  atomic_store(&munmap_probe, 1);
  cov_stack_release(&stack);  // not pooled: unmapped at once
  atomic_store(&munmap_probe, 0);
  CHECK(!atomic_load(&munmap_of_registered_guard), "unmapped while still registered");
#else
  printf("SKIP: munmap is the sanitizer's\n");
#endif
}
