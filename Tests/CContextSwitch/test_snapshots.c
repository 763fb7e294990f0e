// Snapshots: backtraces and symbols of suspended fibers (dedicated, shared in place and copied
// out), and the registry of live coroutines (enter, visit, leave, reuse, threads' slots).

#include "fixtures.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static __attribute__((noinline)) void snapshot_level_two(void) {
  cov_fiber_suspend();
  __asm__ volatile("" ::: "memory");  // no tail call: this frame stays on the stack
}

static __attribute__((noinline)) void snapshot_level_one(void) {
  snapshot_level_two();
  __asm__ volatile("" ::: "memory");
}

static void snapshot_entry(void *argument) {
  (void)argument;
  snapshot_level_one();
}

// Whether the backtrace of a suspended `fiber` names both levels, innermost first.
static int backtrace_names_levels(cov_fiber_t *fiber, size_t *in_use) {
  uintptr_t addresses[64];
  size_t count = cov_fiber_backtrace(fiber, addresses, 64, in_use);
  int two = -1, one = -1;
  for (size_t i = 0; i < count; i++) {
    const char *name, *image;
    uintptr_t offset;
    if (!cov_symbolicate(addresses[i] - 1, &name, &offset, &image) || !name) continue;
    if (two < 0 && strcmp(name, "snapshot_level_two") == 0) two = (int)i;
    if (one < 0 && strcmp(name, "snapshot_level_one") == 0) one = (int)i;
  }
  return count >= 3 && two >= 0 && one > two;
}

static int visited_objects;
static void count_visit(void *context, cov_registry_entry_t *entry, uintptr_t object) {
  (void)entry;
  uintptr_t low = (uintptr_t)context;
  if (object >= low && object < low + 4096 * 8) visited_objects++;
}

static void *enter_and_leave_on_a_thread(void *argument) {
  static uint64_t objects[100];
  uint32_t slots[100];
  for (int i = 0; i < 100; i++) slots[i] = cov_registry_enter((uintptr_t)&objects[i]);
  for (int i = 0; i < 100; i++) cov_registry_leave(slots[i]);
  (void)argument;
  return NULL;
}

void test_snapshots(void) {
  section("snapshots: backtraces and symbols of suspended fibers, the registry");
  // A dedicated fiber, suspended two calls deep.
  cov_fiber_t *dedicated = cov_fiber_create(0, snapshot_entry, NULL);
  cov_fiber_resume(dedicated);
  size_t in_use = 0;
  CHECK(backtrace_names_levels(dedicated, &in_use), "dedicated: both levels in the backtrace");
  CHECK(in_use > 0 && in_use < 4096, "dedicated: %zu bytes in use", in_use);
  // Two shared fibers on one stack: the first one's frames are copied out by the second.
  static int key;
  int eager = lazy_groups(1);
  cov_stack_group_t *group = cov_stack_group(&key);
  cov_fiber_t *first = cov_fiber_create_shared(group, 1, snapshot_entry, NULL);
  cov_fiber_t *second = cov_fiber_create_shared(group, 1, snapshot_entry, NULL);
  cov_fiber_resume(first);
  CHECK(backtrace_names_levels(first, &in_use), "shared, in place: both levels");
  cov_fiber_resume(second);
  cov_fiber_frames_t frames;
  CHECK(cov_fiber_frames(first, &frames) == 1 && frames.copied_out, "the first fiber copied out");
  CHECK(backtrace_names_levels(first, &in_use), "shared, copied out: both levels");
  CHECK(backtrace_names_levels(second, &in_use), "shared, the occupant: both levels");
  cov_fiber_t *fibers[] = {dedicated, first, second};
  for (int i = 0; i < 3; i++) {
    while (!cov_fiber_is_finished(fibers[i])) cov_fiber_resume(fibers[i]);
    uintptr_t none[4];
    CHECK(cov_fiber_backtrace(fibers[i], none, 4, &in_use) == 0, "finished: no frames");
    cov_fiber_destroy(fibers[i]);
  }
  cov_shared_stacks_set_eager_eviction(eager);
  // A function of this (unstripped) executable, found in its symbol table.
  const char *name, *image;
  uintptr_t offset;
  CHECK(cov_symbolicate((uintptr_t)snapshot_entry + 1, &name, &offset, &image) && name &&
            strcmp(name, "snapshot_entry") == 0 && offset == 1,
        "symbol of a static function: %s", name ? name : "(none)");

  // The registry: enter, visit, leave, reuse.
  static uint64_t objects[4096];
  static uint32_t slots[4096];
  uint64_t first_id = cov_registry_next_id();
  for (int i = 0; i < 4096; i++) slots[i] = cov_registry_enter((uintptr_t)&objects[i]);
  int distinct = 1;
  for (int i = 0; i < 4096 && distinct; i++)
    for (int j = i + 1; j < i + 64 && j < 4096; j++) distinct &= slots[i] != slots[j];
  CHECK(distinct, "slots distinct");
  CHECK(cov_registry_entry_id(cov_registry_entry(slots[10])) == first_id + 10, "ids in order");
  visited_objects = 0;
  cov_registry_visit(count_visit, objects);
  CHECK(visited_objects == 4096, "visit saw %d of 4096", visited_objects);
  for (int i = 0; i < 4096; i++) cov_registry_leave(slots[i]);
  visited_objects = 0;
  cov_registry_visit(count_visit, objects);
  CHECK(visited_objects == 0, "after leaving: %d", visited_objects);
  uint32_t made = cov_registry_slots_made();
  for (int i = 0; i < 4096; i++) slots[i] = cov_registry_enter((uintptr_t)&objects[i]);
  for (int i = 0; i < 4096; i++) cov_registry_leave(slots[i]);
  CHECK(cov_registry_slots_made() == made, "slots reused (%u, then %u)", made,
        cov_registry_slots_made());
  // A thread's slots come back when it exits.
  for (int round = 0; round < 20; round++) {
    pthread_t thread;
    pthread_create(&thread, NULL, enter_and_leave_on_a_thread, NULL);
    pthread_join(thread, NULL);
  }
  CHECK(cov_registry_slots_made() <= made + 2 * COV_REGISTRY_BATCH,
        "threads' slots given back at exit (%u made, %u before)", cov_registry_slots_made(), made);
}
