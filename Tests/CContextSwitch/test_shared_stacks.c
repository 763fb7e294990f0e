// Shared stacks (copy-on-suspend): copies out and back at the same addresses, copies only when
// needed, the frames accessor, parking and handing back, threads, scale, vacated frames.

#include "fixtures.h"
#include "switch.h"  // COV_FRAME_FP: where the switch saves the frame pointer

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

// MARK: - Copies

static int copied_out(cov_fiber_t *fiber) {
  cov_fiber_frames_t frames;
  return cov_fiber_frames(fiber, &frames) && frames.copied_out;
}

void test_shared_copy(void) {
  section("shared stacks: two fibers on one stack, copied out and back at the same addresses");
  static int key;
  int eager = lazy_groups(1);
  static const int depths[] = {0, 256, 1024, 4096, 16384};
  for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
    shared_job_t a, b;
    CHECK(make_shared(&key, &a, 1, depths[d], 50) && make_shared(&key, &b, 2, depths[d], 50),
          "create");
    CHECK(cov_fiber_is_shared(a.fiber) && cov_fiber_stack_base(a.fiber) == NULL, "unbound");
    int status_ok = 1, copies_ok = 1;
    for (int round = 0; round <= 50; round++) {
      status_ok &= cov_fiber_resume(a.fiber) == COV_FIBER_RAN;
      status_ok &= cov_fiber_resume(b.fiber) == COV_FIBER_RAN;
      // Both ran on the one stack: a was copied out for b, b is in place.
      if (round < 50) copies_ok &= copied_out(a.fiber) && !copied_out(b.fiber);
    }
    CHECK(status_ok && copies_ok, "depth %d: status %d copies %d", depths[d], status_ok, copies_ok);
    CHECK(cov_fiber_is_finished(a.fiber) && cov_fiber_is_finished(b.fiber), "finished");
    CHECK(a.done == 50 && b.done == 50 && a.corrupted == 0 && b.corrupted == 0,
          "depth %d: done %d/%d corrupted %d/%d", depths[d], a.done, b.done, a.corrupted,
          b.corrupted);
    CHECK(cov_fiber_stack_base(a.fiber) == cov_fiber_stack_base(b.fiber), "one stack");
    cov_fiber_destroy(a.fiber);
    cov_fiber_destroy(b.fiber);
  }
  CHECK(cov_stack_group_stack_count(&key) == 1, "stacks %zu", cov_stack_group_stack_count(&key));
  cov_shared_stacks_set_eager_eviction(eager);
}

void test_shared_lazy(void) {
  section("shared stacks: copy only when needed (two stacks, two fibers: never)");
  static int key;
  int eager = lazy_groups(2);
  shared_job_t a, b;
  make_shared(&key, &a, 3, 512, 100);
  make_shared(&key, &b, 4, 512, 100);
  int never = 1;
  for (int round = 0; round <= 100; round++) {
    cov_fiber_resume(a.fiber);
    cov_fiber_resume(b.fiber);
    if (round < 100) never &= !copied_out(a.fiber) && !copied_out(b.fiber);
  }
  CHECK(never, "a fiber was copied out");
  CHECK(a.corrupted == 0 && b.corrupted == 0 && a.done == 100 && b.done == 100, "frames");
  CHECK(cov_fiber_stack_base(a.fiber) != cov_fiber_stack_base(b.fiber), "two stacks");
  cov_fiber_destroy(a.fiber);
  cov_fiber_destroy(b.fiber);

  // Eager eviction: copied out at every suspension, even with a stack to itself.
  cov_shared_stacks_set_eager_eviction(1);
  make_shared(&key, &a, 5, 512, 20);
  int always = 1;
  for (int round = 0; round <= 20; round++) {
    cov_fiber_resume(a.fiber);
    if (round < 20) always &= copied_out(a.fiber);
  }
  CHECK(always && a.corrupted == 0 && a.done == 20, "eager: always %d corrupted %d", always,
        a.corrupted);
  cov_fiber_destroy(a.fiber);
  cov_shared_stacks_set_eager_eviction(eager);
}

// Walks the frame-pointer chain of a suspended fiber in a copy of its frames.
static int walk_copied_chain(cov_fiber_t *fiber, int *frames_out) {
  static unsigned char copy[64 * 1024];
  cov_fiber_frames_t frames;
  size_t used = cov_fiber_copy_frames(fiber, copy, sizeof copy, &frames);
  if (used == 0 || used > sizeof copy) return 0;
  uintptr_t low = (uintptr_t)frames.sp, high = (uintptr_t)frames.stack_high;
#define AT(address) (*(uintptr_t *)(copy + ((address) - low)))
  uintptr_t fp = AT(low + COV_FRAME_FP);  // the frame pointer the switch saved
  int count = 0;
  while (fp) {
    if (fp < low || fp + 16 > high || count > 1000) return 0;
    count++;
    fp = AT(fp);
  }
#undef AT
  *frames_out = count;
  return 1;
}

void test_shared_frames_accessor(void) {
  section("saved frames accessor: in place and copied out, frame chain walkable in the copy");
  static int key;
  int eager = lazy_groups(1);
  shared_job_t a, b;
  make_shared(&key, &a, 6, 1024, 2);
  make_shared(&key, &b, 7, 0, 2);
  cov_fiber_frames_t frames;
  CHECK(cov_fiber_frames(a.fiber, &frames) == 0, "not started: no frames");
  cov_fiber_resume(a.fiber);
  CHECK(cov_fiber_frames(a.fiber, &frames) == 1 && !frames.copied_out && frames.bytes == frames.sp,
        "in place");
  int chain = 0;
  CHECK(walk_copied_chain(a.fiber, &chain) && chain >= 5, "chain in place: %d frames", chain);
  cov_fiber_resume(b.fiber);  // evicts a
  CHECK(cov_fiber_frames(a.fiber, &frames) == 1 && frames.copied_out && frames.bytes != frames.sp,
        "copied out");
  size_t used = (size_t)((char *)frames.stack_high - (char *)frames.sp);
  CHECK(used >= 1024 && used < 4096, "used %zu", used);
  int chain_copied = 0;
  CHECK(walk_copied_chain(a.fiber, &chain_copied) && chain_copied == chain,
        "chain copied: %d frames (in place %d)", chain_copied, chain);
  while (!cov_fiber_is_finished(a.fiber) || !cov_fiber_is_finished(b.fiber)) {
    if (!cov_fiber_is_finished(a.fiber)) cov_fiber_resume(a.fiber);
    if (!cov_fiber_is_finished(b.fiber)) cov_fiber_resume(b.fiber);
  }
  CHECK(a.corrupted == 0 && b.corrupted == 0, "frames");
  cov_fiber_destroy(a.fiber);
  cov_fiber_destroy(b.fiber);
  cov_shared_stacks_set_eager_eviction(eager);
}

// A fiber that runs until told to suspend, on another thread.
static _Atomic int hold_release, hold_entered;

static void holder_entry(void *argument) {
  (void)argument;
  atomic_store(&hold_entered, 1);
  while (!atomic_load(&hold_release)) sched_yield();
  cov_fiber_suspend();
}

static void *holder_thread(void *argument) {
  cov_fiber_resume(argument);
  return NULL;
}

void test_shared_parking(void) {
  section("shared stacks: a fiber whose stack is running elsewhere is parked, not waited for");
  static int key;
  group_minimum = 1;  // stacks the group of `key` keeps at least
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  atomic_store(&hold_release, 0);
  atomic_store(&hold_entered, 0);
  // The job is bound to the group's one stack first; the holder then takes that stack over (a
  // stack whose occupant is suspended is preferred to a new one) and keeps it running.
  shared_job_t job;
  make_shared(&key, &job, 8, 256, 2);
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_RAN, "job started");
  cov_fiber_t *holder = cov_fiber_create_shared(cov_stack_group(&key), 1, holder_entry, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, holder_thread, holder);
  while (!atomic_load(&hold_entered)) sched_yield();
  CHECK(cov_fiber_stack_base(holder) == cov_fiber_stack_base(job.fiber), "one stack");
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_PARKED, "parked");
  CHECK(atomic_load(&job.parks) == 1 && atomic_load(&job.unparks) == 0, "park hook");
  atomic_store(&hold_release, 1);  // the holder suspends: its thread hands the job back
  pthread_join(thread, NULL);
  CHECK(atomic_load(&job.unparks) == 1, "unparked by the holder's switch-out");
  CHECK(take_ready() == &job, "on the ready list");
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_RAN, "runs once handed back");
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_RAN && cov_fiber_is_finished(job.fiber), "done");
  CHECK(job.done == 2, "rounds %d", job.done);
  CHECK(job.corrupted == 0, "frames");
  cov_fiber_resume(holder);
  CHECK(cov_fiber_is_finished(holder), "holder finished");
  cov_fiber_destroy(holder);
  cov_fiber_destroy(job.fiber);

  // A fiber resuming one bound to its own stack: parked too, handed back at its switch-out.
  static int nested_key;
  group_minimum = 1;  // stacks the group of `nested_key` keeps at least
  make_shared(&nested_key, &nested_job, 9, 0, 1);
  cov_fiber_resume(nested_job.fiber);  // bound to the group's one stack, suspended there
  int status = -1;
  cov_fiber_t *outer =
      cov_fiber_create_shared(cov_stack_group(&nested_key), 1, nesting_entry, &status);
  CHECK(cov_fiber_resume(outer) == COV_FIBER_RAN, "outer ran");
  CHECK(status == COV_FIBER_PARKED && atomic_load(&nested_job.unparks) == 1, "nested park: %d",
        status);
  CHECK(take_ready() == &nested_job, "handed back");
  cov_fiber_resume(nested_job.fiber);
  cov_fiber_resume(outer);
  CHECK(cov_fiber_is_finished(outer) && cov_fiber_is_finished(nested_job.fiber), "finished");
  CHECK(nested_job.corrupted == 0, "frames");
  cov_fiber_destroy(outer);
  cov_fiber_destroy(nested_job.fiber);
}

// Waiters handed back by a hook that resumes them at once (as an immediate scheduler does):
// each one's switch-out hands back the next, which must not nest one level per waiter.
enum { HANDBACK_FIBERS = 2000 };
static shared_job_t handback_jobs[HANDBACK_FIBERS];
static uintptr_t handback_low = UINTPTR_MAX, handback_high;
static int handback_ran;

static void immediate_unpark(void *argument) {
  uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
  if (frame < handback_low) handback_low = frame;
  if (frame > handback_high) handback_high = frame;
  shared_job_t *job = argument;
  if (cov_fiber_resume(job->fiber) == COV_FIBER_RAN) handback_ran++;
}

void test_shared_handback_depth(void) {
  section("shared stacks: 2,000 waiters handed back and resumed at once, without nesting");
  static int key;
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  group_minimum = 1;  // stacks the group of `key` keeps at least
  for (int i = 0; i < HANDBACK_FIBERS; i++) {
    make_shared(&key, &handback_jobs[i], i, 0, 1);
    cov_fiber_resume(handback_jobs[i].fiber);  // bound to the one stack, suspended
  }
  atomic_store(&hold_release, 0);
  atomic_store(&hold_entered, 0);
  cov_fiber_t *holder = cov_fiber_create_shared(cov_stack_group(&key), 1, holder_entry, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, holder_thread, holder);
  while (!atomic_load(&hold_entered)) sched_yield();
  int parked = 0;
  for (int i = 0; i < HANDBACK_FIBERS; i++)
    parked += cov_fiber_resume(handback_jobs[i].fiber) == COV_FIBER_PARKED;
  CHECK(parked == HANDBACK_FIBERS, "parked %d", parked);
  cov_fiber_set_parking_hooks(test_park, immediate_unpark);
  atomic_store(&hold_release, 1);
  pthread_join(thread, NULL);
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  int finished = 0, corrupted = 0;
  for (int i = 0; i < HANDBACK_FIBERS; i++) {
    finished += cov_fiber_is_finished(handback_jobs[i].fiber);
    corrupted += handback_jobs[i].corrupted;
    cov_fiber_destroy(handback_jobs[i].fiber);
  }
  CHECK(handback_ran == HANDBACK_FIBERS && finished == HANDBACK_FIBERS && corrupted == 0,
        "ran %d finished %d corrupted %d", handback_ran, finished, corrupted);
  CHECK(handback_high - handback_low < 4096, "hooks nested %zu bytes deep",
        (size_t)(handback_high - handback_low));
  cov_fiber_resume(holder);
  cov_fiber_destroy(holder);
}

// Threads resume fibers of a two-stack group from a common run queue; parked ones come back
// through the hooks. Every fiber checks its frames after every resume.
enum { STRESS_FIBERS = 64, STRESS_ROUNDS = 200, STRESS_THREADS = 4 };
static shared_job_t stress_jobs[STRESS_FIBERS];
static _Atomic int stress_finished;

static void *shared_stress_thread(void *argument) {
  (void)argument;
  while (atomic_load(&stress_finished) < STRESS_FIBERS) {
    shared_job_t *job = take_ready();
    if (!job) {
      sched_yield();
      continue;
    }
    if (cov_fiber_resume(job->fiber) == COV_FIBER_PARKED) continue;  // comes back via unpark
    if (cov_fiber_is_finished(job->fiber)) atomic_fetch_add(&stress_finished, 1);
    else test_unpark(job);  // suspended: ready again
  }
  return NULL;
}

void test_shared_threads(void) {
  section("shared stacks: 64 fibers, 2 stacks, 4 threads resuming them");
  static int key;
  group_minimum = 2;  // stacks the group of `key` keeps at least
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  atomic_store(&stress_finished, 0);
  for (int i = 0; i < STRESS_FIBERS; i++) {
    make_shared(&key, &stress_jobs[i], 100 + i, (i % 4) * 512, STRESS_ROUNDS);
    stress_jobs[i].work = 2000;
    test_unpark(&stress_jobs[i]);
  }
  pthread_t threads[STRESS_THREADS];
  for (int i = 0; i < STRESS_THREADS; i++) pthread_create(&threads[i], NULL, shared_stress_thread, NULL);
  for (int i = 0; i < STRESS_THREADS; i++) pthread_join(threads[i], NULL);
  int corrupted = 0, done = 0, parks = 0;
  for (int i = 0; i < STRESS_FIBERS; i++) {
    corrupted += stress_jobs[i].corrupted;
    done += stress_jobs[i].done;
    parks += atomic_load(&stress_jobs[i].parks);
    cov_fiber_destroy(stress_jobs[i].fiber);
  }
  CHECK(corrupted == 0 && done == STRESS_FIBERS * STRESS_ROUNDS, "corrupted %d done %d",
        corrupted, done);
  size_t stacks = cov_stack_group_stack_count(&key);
  printf("parks: %d; stacks: %zu (grows past the minimum while all are running)\n", parks, stacks);
  CHECK(stacks >= 2 && stacks <= 64, "stacks %zu", stacks);
}

void test_shared_scale(void) {
  // Under TSan every fiber has a TSan fiber with its own shadow stack mapping: fewer there.
#if defined(TEST_TSAN)
  int count = 5000;
#else
  int count = under_emulation ? 20000 : 100000;
#endif
  printf("-- shared stacks: %d fibers suspended at once, few mappings on any kernel\n", count);
  static int key;
  int eager = lazy_groups(0);  // (0: the default)
  shared_job_t *jobs = calloc((size_t)count, sizeof *jobs);
  int before = count_mappings();
  int failures = 0;
  for (int i = 0; i < count; i++) {
    if (!make_shared(&key, &jobs[i], i, 0, 1)) {
      failures++;
      continue;
    }
    cov_fiber_resume(jobs[i].fiber);
  }
  int during = count_mappings();
  printf("mappings: %d before, %d with %d suspended shared fibers\n", before, during, count);
  CHECK(failures == 0, "%d failed", failures);
#if !defined(TEST_TSAN)  // (TSan maps a shadow stack for every fiber)
  CHECK(during - before < 64, "%d new mappings", during - before);
#endif
  int corrupted = 0, finished = 0;
  for (int i = 0; i < count; i++) {
    if (!jobs[i].fiber) continue;
    cov_fiber_resume(jobs[i].fiber);
    corrupted += jobs[i].corrupted;
    finished += cov_fiber_is_finished(jobs[i].fiber);
    cov_fiber_destroy(jobs[i].fiber);
  }
  CHECK(corrupted == 0 && finished == count, "corrupted %d finished %d", corrupted, finished);
  free(jobs);
  cov_shared_stacks_set_eager_eviction(eager);
}

// A pointer into a suspended fiber's frames, used by someone else while the fiber's bytes are
// copied out: debug builds make it read a fill pattern, ASan builds report it.
static shared_job_t vacated_job;

static __attribute__((unused)) void start_vacated_job(void) {
  static int key;
  cov_shared_stacks_set_eager_eviction(1);
  make_shared(&key, &vacated_job, 0x55, 0, 1);
  cov_fiber_resume(vacated_job.fiber);  // suspended with own_local pointing into its frames
}

#if defined(TEST_ASAN)
static void child_read_vacated(void) {
  start_vacated_job();
  long value = *(volatile long *)vacated_job.own_local;
  fprintf(stderr, "read %ld without a report\n", value);
}
#endif

void test_vacated(void) {
  section("vacated frames: misuse of a pointer into a suspended fiber's frames is caught");
#if defined(TEST_ASAN)
  char output[8192];
  int status = run_child(child_read_vacated, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x", status);
  CHECK(strstr(output, "use-after-poison") != NULL, "ASan output: [%.300s]", output);
#elif defined(DEBUG)
  int eager = cov_shared_stacks_eager_eviction();
  start_vacated_job();
  long value = *(volatile long *)vacated_job.own_local;
  CHECK((unsigned long)value == 0xCDCDCDCDCDCDCDCDUL, "read %#lx", (unsigned long)value);
  cov_fiber_resume(vacated_job.fiber);
  CHECK(cov_fiber_is_finished(vacated_job.fiber) && vacated_job.corrupted == 0, "frames restored");
  cov_fiber_destroy(vacated_job.fiber);
  cov_shared_stacks_set_eager_eviction(eager);
#else
  printf("SKIP: release build without ASan: vacated bytes are neither filled nor poisoned\n");
#endif
}
