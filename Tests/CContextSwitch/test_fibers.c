// Fibers with their own stacks: deep frames, nesting, many at once, the frame-pointer chain,
// migration between threads, the Swift exclusivity hooks, the thread-local slots.

#include "fixtures.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

// Present when libswiftCore is linked (run.sh does one such build): the hooks then run for real.
extern void swift_task_enterThreadLocalContext(char *state) __attribute__((weak));

void test_exclusivity_switch(void) {
  section("exclusivity hooks on and off");
  printf("Swift exclusivity hooks: %s\n",
         swift_task_enterThreadLocalContext ? "live (libswiftCore linked)" : "absent (pure C)");
  cov_fiber_t *on = cov_fiber_create(0, counter_entry, (void *)(intptr_t)100);
  cov_fiber_t *off = cov_fiber_create(0, counter_entry, (void *)(intptr_t)100);
  cov_fiber_set_exclusivity_tracking(off, 0);
  counter_sum = 0;
  while (!cov_fiber_is_finished(on) || !cov_fiber_is_finished(off)) {
    if (!cov_fiber_is_finished(on)) cov_fiber_resume(on);
    if (!cov_fiber_is_finished(off)) cov_fiber_resume(off);
  }
  CHECK(counter_sum == 200, "sum %d", counter_sum);
  cov_fiber_destroy(on);
  cov_fiber_destroy(off);
}

void test_deep_recursion(void) {
  section("deep recursion (150 KiB of frames) on a fiber stack");
  cov_fiber_t *fiber = cov_fiber_create(0, recursion_entry, NULL);
  CHECK(fiber != NULL, "create");
  cov_fiber_resume(fiber);
  CHECK(cov_fiber_is_finished(fiber), "finished");
  CHECK(recursion_result == 300, "result %d", recursion_result);
  cov_fiber_destroy(fiber);
}

typedef struct {
  cov_fiber_t *self;
  cov_fiber_t *inner;
  char log[64];
  int length;
} nest_state_t;

static nest_state_t nest;

static void inner_entry(void *argument) {
  (void)argument;
  nest.log[nest.length++] = cov_fiber_current() == nest.inner ? 'i' : '?';
  cov_fiber_suspend();
  nest.log[nest.length++] = cov_fiber_current() == nest.inner ? 'j' : '?';
}

static void outer_entry(void *argument) {
  (void)argument;
  nest.log[nest.length++] = cov_fiber_current() == nest.self ? 'o' : '?';
  cov_fiber_resume(nest.inner);  // inner suspends back to us, not to the thread
  nest.log[nest.length++] = cov_fiber_current() == nest.self ? 'p' : '?';
  cov_fiber_suspend();
  nest.log[nest.length++] = cov_fiber_current() == nest.self ? 'q' : '?';
  cov_fiber_resume(nest.inner);
  nest.log[nest.length++] = cov_fiber_is_finished(nest.inner) ? 'r' : '?';
}

void test_nesting(void) {
  section("nesting: a fiber resumes another fiber");
  memset(&nest, 0, sizeof nest);
  nest.self = cov_fiber_create(0, outer_entry, NULL);
  nest.inner = cov_fiber_create(64 * 1024, inner_entry, NULL);
  CHECK(nest.self && nest.inner, "create");
  CHECK(cov_fiber_current() == NULL, "no fiber on the thread");
  cov_fiber_resume(nest.self);
  nest.log[nest.length++] = cov_fiber_current() == NULL ? 'T' : '?';
  cov_fiber_resume(nest.self);
  nest.log[nest.length++] = cov_fiber_current() == NULL ? 'U' : '?';
  CHECK(strcmp(nest.log, "oipTqjrU") == 0, "log %s", nest.log);
  CHECK(cov_fiber_is_finished(nest.self) && cov_fiber_is_finished(nest.inner), "finished");
  CHECK(cov_fiber_stack_size(nest.inner) == 64 * 1024, "size %zu",
        cov_fiber_stack_size(nest.inner));
  cov_fiber_destroy(nest.inner);
  cov_fiber_destroy(nest.self);
}

void test_many_fibers(void) {
  section("1000 fibers created, run to completion, destroyed (pool reuse)");
  void *first_bases[8] = {0};
  int reused = 0;
  counter_sum = 0;
  for (int i = 0; i < 1000; i++) {
    cov_fiber_t *fiber = cov_fiber_create(0, counter_entry, (void *)(intptr_t)3);
    if (!fiber) {
      CHECK(fiber != NULL, "create %d: errno %d", i, errno);
      return;
    }
    if (i < 8) first_bases[i] = cov_fiber_stack_base(fiber);
    else
      for (int k = 0; k < 8; k++) reused += cov_fiber_stack_base(fiber) == first_bases[k];
    while (!cov_fiber_is_finished(fiber)) cov_fiber_resume(fiber);
    cov_fiber_destroy(fiber);
  }
  CHECK(counter_sum == 3000, "sum %d", counter_sum);
  CHECK(reused >= 900, "only %d stacks came from the pool", reused);

  // 200 alive at once (beyond the pool's 64), interleaved.
  cov_fiber_t *fibers[200];
  counter_sum = 0;
  for (int i = 0; i < 200; i++) fibers[i] = cov_fiber_create(0, counter_entry, (void *)(intptr_t)5);
  for (int round = 0; round < 6; round++)
    for (int i = 0; i < 200; i++)
      if (!cov_fiber_is_finished(fibers[i])) cov_fiber_resume(fibers[i]);
  int finished = 0;
  for (int i = 0; i < 200; i++) {
    finished += cov_fiber_is_finished(fibers[i]);
    cov_fiber_destroy(fibers[i]);
  }
  CHECK(finished == 200 && counter_sum == 1000, "finished %d sum %d", finished, counter_sum);
}

// Frame-pointer chain: from inside a fiber it must end cleanly (a zero link) on the fiber stack.
static int chain_frames, chain_ok;

static __attribute__((noinline)) void walk_chain(void) {
  cov_fiber_t *fiber = cov_fiber_current();
  uintptr_t low = (uintptr_t)cov_fiber_stack_base(fiber);
  uintptr_t high = low + cov_fiber_stack_size(fiber);
  void **frame = __builtin_frame_address(0);
  chain_ok = 1;
  chain_frames = 0;
  while (frame) {
    if ((uintptr_t)frame < low || (uintptr_t)frame >= high || chain_frames > 100) {
      chain_ok = 0;
      return;
    }
    chain_frames++;
    frame = (void **)frame[0];
  }
}

static __attribute__((noinline)) void chain_level(int n) {
  if (n == 0) walk_chain();
  else chain_level(n - 1);
  __asm__ volatile("" ::: "memory");
}

static void chain_entry(void *argument) {
  (void)argument;
  chain_level(3);
}

void test_frame_chain(void) {
  section("frame-pointer chain ends cleanly at the fiber's first frame");
  cov_fiber_t *fiber = cov_fiber_create(0, chain_entry, NULL);
  cov_fiber_resume(fiber);
  CHECK(chain_ok && chain_frames >= 5, "ok %d frames %d", chain_ok, chain_frames);
  cov_fiber_destroy(fiber);
}

// MARK: - Thread-local slots

// The slots as seen from code that may run on another thread than earlier in the same function
// (after a suspension): out of line, so the slots' thread-local address is computed afresh.
static __attribute__((noinline)) void **fresh_slots(void) {
  __asm__ volatile("" ::: "memory");
  return cov_tls_slots;
}

// MARK: - Threads

typedef struct {
  cov_fiber_t *fiber;
  cov_fiber_t *seen_current;
} hop_t;

static pthread_t hop_expected;  // the thread resuming the fiber this time
static int hop_thread_ok[3];

static void hop_entry(void *argument) {
  (void)argument;
  for (int i = 0; i < 3; i++) {
    // Which thread are we on? It must be the one that resumed us this time.
    pthread_t self = pthread_self();
    hop_thread_ok[i] = pthread_equal(self, hop_expected) && cov_fiber_current() != NULL;
    fresh_slots()[0] = (void *)(intptr_t)(i + 1);
    cov_fiber_suspend();
  }
}

static void *hop_thread(void *argument) {
  hop_t *hop = argument;
  hop_expected = pthread_self();
  cov_fiber_resume(hop->fiber);
  hop->seen_current = cov_fiber_current();
  return fresh_slots()[0];
}

static int stress_errors;

static void *stack_stress(void *argument) {
  (void)argument;
  cov_stack_t stacks[100];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 100; i++) {
      if (cov_stack_allocate(i % 7 == 0 ? 48 * 1024 : 0, &stacks[i]) != 0) {
        __atomic_add_fetch(&stress_errors, 1, __ATOMIC_RELAXED);
        stacks[i].base = NULL;
        continue;
      }
      ((volatile char *)stacks[i].base)[stacks[i].size - 1] = 1;
      ((volatile char *)stacks[i].base)[0] = 1;
    }
    for (int i = 0; i < 100; i++) cov_stack_release(&stacks[i]);
  }
  return NULL;
}

void test_threads(void) {
  section("a fiber migrates between threads; allocator under two threads");
  hop_t hop = {cov_fiber_create(0, hop_entry, NULL), NULL};
  for (int i = 0; i < 3; i++) {
    void *result = NULL;
    pthread_t thread;
    pthread_create(&thread, NULL, hop_thread, &hop);
    pthread_join(thread, &result);
    CHECK(hop_thread_ok[i], "resume %d ran on the wrong thread", i);
    CHECK(hop.seen_current == NULL, "current not restored on thread %d", i);
    CHECK((intptr_t)result == i + 1, "tls slot %ld", (long)(intptr_t)result);
  }
  cov_fiber_resume(hop.fiber);
  CHECK(cov_fiber_is_finished(hop.fiber), "finished");
  cov_fiber_destroy(hop.fiber);

  pthread_t a, b;
  pthread_create(&a, NULL, stack_stress, NULL);
  pthread_create(&b, NULL, stack_stress, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  CHECK(stress_errors == 0, "%d allocation errors", stress_errors);
}

// The per-stack slot: a fiber starts with its resumer's value; what it leaves there when it
// suspends or finishes goes with it, and the resumer gets its own value back; the other slots
// are plain per-thread words.
static void *per_stack_seen[3];

static void per_stack_entry(void *argument) {
  (void)argument;
  per_stack_seen[0] = fresh_slots()[COV_TLS_SLOT_PER_STACK];
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = (void *)0xF1;
  fresh_slots()[0] = (void *)0xF0;
  cov_fiber_suspend();
  per_stack_seen[1] = fresh_slots()[COV_TLS_SLOT_PER_STACK];
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = (void *)0xF2;
  cov_fiber_suspend();
  per_stack_seen[2] = fresh_slots()[COV_TLS_SLOT_PER_STACK];
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = (void *)0xF3;
}

void test_per_stack_slot(void) {
  section("thread-local slots: one is kept per stack across resume, suspension and exit");
  void *saved = fresh_slots()[COV_TLS_SLOT_PER_STACK];
  cov_fiber_t *fiber = cov_fiber_create(0, per_stack_entry, NULL);
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = (void *)0xA1;
  cov_fiber_resume(fiber);
  CHECK(per_stack_seen[0] == (void *)0xA1, "the fiber starts with its resumer's value: %p",
        per_stack_seen[0]);
  CHECK(fresh_slots()[COV_TLS_SLOT_PER_STACK] == (void *)0xA1,
        "suspended: the resumer has its own value back, not the fiber's: %p",
        fresh_slots()[COV_TLS_SLOT_PER_STACK]);
  CHECK(fresh_slots()[0] == (void *)0xF0, "a plain slot is the thread's: %p", fresh_slots()[0]);
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = (void *)0xA2;
  cov_fiber_resume(fiber);
  CHECK(per_stack_seen[1] == (void *)0xA2, "resumed: the resumer's value again: %p",
        per_stack_seen[1]);
  CHECK(fresh_slots()[COV_TLS_SLOT_PER_STACK] == (void *)0xA2, "given back: %p",
        fresh_slots()[COV_TLS_SLOT_PER_STACK]);
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = (void *)0xA3;
  cov_fiber_resume(fiber);
  CHECK(cov_fiber_is_finished(fiber) && per_stack_seen[2] == (void *)0xA3 &&
            fresh_slots()[COV_TLS_SLOT_PER_STACK] == (void *)0xA3,
        "finished: given back at the exit too: %p", fresh_slots()[COV_TLS_SLOT_PER_STACK]);
  cov_fiber_destroy(fiber);
  fresh_slots()[COV_TLS_SLOT_PER_STACK] = saved;
  fresh_slots()[0] = NULL;
}
