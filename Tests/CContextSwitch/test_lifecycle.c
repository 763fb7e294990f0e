// The library's life cycle: caches given back at thread exit (also by later destructors),
// fork (the child's dump signal, every lock usable amid churn), parking without hooks, a copy
// limit lowered under an existing stack, a registry that cannot grow.

#include "fixtures.h"
#include "registry.h"  // cov_registry_test_growth_failures

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

// MARK: - Thread exit

// A key whose destructor runs after the library's thread-exit hook (keys made later are
// destroyed later in each round): it gives back what the thread still holds, as a thread-exit
// destructor that finishes a coroutine would, into caches the hook has already flushed.
static pthread_key_t late_key;
typedef struct {
  uint32_t slot;
  cov_fiber_t *dedicated;
} late_release_t;

static void late_release(void *value) {
  late_release_t *held = value;
  cov_registry_leave(held->slot);
  if (held->dedicated) cov_fiber_destroy(held->dedicated);
  free(held);
}

static void *hold_until_exit(void *argument) {
  static uint64_t object;
  late_release_t *held = malloc(sizeof *held);
  held->slot = cov_registry_enter((uintptr_t)&object);
  held->dedicated = NULL;
  if (argument) {
    // Also a dedicated fiber's stack, after one that went into the thread's stack cache (which
    // the hook then flushes, and which must then count as unarmed).
    cov_fiber_t *cached = cov_fiber_create(0, nothing_entry, NULL);
    cov_fiber_resume(cached);
    cov_fiber_destroy(cached);
    held->dedicated = cov_fiber_create(0, nothing_entry, NULL);
    cov_fiber_resume(held->dedicated);
  }
  pthread_setspecific(late_key, held);
  return NULL;
}

static void *enter_and_leave_once(void *argument) {
  static uint64_t object;
  cov_registry_leave(cov_registry_enter((uintptr_t)&object));
  return argument;
}

// Run first, in a fresh process: no free slots or stacks left by other tests can hide the loss.
void test_thread_exit_caches(void) {
  section("thread exit: what a later destructor gives back is flushed too");
  // A thread that caches a slot makes the library's thread-exit hook: the late key comes after.
  pthread_t first;
  pthread_create(&first, NULL, enter_and_leave_once, NULL);
  pthread_join(first, NULL);
  pthread_key_create(&late_key, late_release);
  enum { THREADS = 300 };
  uint32_t made = cov_registry_slots_made();
  for (int i = 0; i < THREADS; i++) {
    pthread_t thread;
    pthread_create(&thread, NULL, hold_until_exit, NULL);
    pthread_join(thread, NULL);
  }
  CHECK(cov_registry_slots_made() <= made + 2 * COV_REGISTRY_BATCH,
        "registry slots given back in a later destructor are not lost: %u made, %u before",
        cov_registry_slots_made(), made);
  size_t mappings = cov_stack_mappings_in_use();
  for (int i = 0; i < THREADS; i++) {
    pthread_t thread;
    pthread_create(&thread, NULL, hold_until_exit, (void *)1);
    pthread_join(thread, NULL);
  }
  CHECK(cov_stack_mappings_in_use() <= mappings + 2,
        "stacks released in a later destructor go back to the pool: %zu mappings, %zu before",
        cov_stack_mappings_in_use(), mappings);
}

// The dump signal in a forked child: the child's own thread runs the work, not the parent's.
static _Atomic(pid_t) *worked_in;  // shared with the children (MAP_SHARED)

static __attribute__((unused)) void note_work(void) { atomic_store(worked_in, getpid()); }

static __attribute__((unused)) void child_dump_signal(void) {
  atomic_store(worked_in, 0);
  raise(SIGUSR2);
  // The child's dump thread runs the work (a bounded wait: a child whose signal woke the
  // parent's thread instead exits 1).
  for (int i = 0; i < 5000 && atomic_load(worked_in) != getpid(); i++) usleep(1000);
  _exit(atomic_load(worked_in) == getpid() ? 0 : 1);
}

// Another thread keeps taking registry snapshots, entering and leaving, and making and dropping
// fibers while the main thread forks: each child must find every lock of the library usable.
static _Atomic int churn_stop;

static void churn_visit(void *context, cov_registry_entry_t *entry, uintptr_t object) {
  (void)context;
  (void)entry;
  (void)object;
}

static void *churn(void *argument) {
  (void)argument;
  static uint64_t object;
  static int key;
  while (!atomic_load(&churn_stop)) {
    cov_registry_visit(churn_visit, NULL);
    uint32_t slot = cov_registry_enter((uintptr_t)&object);
    cov_registry_leave(slot);
    cov_fiber_t *fiber = cov_fiber_create_shared(cov_stack_group(&key), 1, nothing_entry, NULL);
    cov_fiber_resume(fiber);
    cov_fiber_destroy(fiber);
    cov_stack_t stack;
    if (cov_stack_allocate(64 * 1024, &stack) == 0) cov_stack_release(&stack);
  }
  return NULL;
}

static void child_uses_everything(void) {
  static uint64_t object;
  uint32_t slot = cov_registry_enter((uintptr_t)&object);
  cov_registry_visit(churn_visit, NULL);
  cov_registry_leave(slot);
  cov_fiber_t *fiber = cov_fiber_create(0, nothing_entry, NULL);
  cov_fiber_resume(fiber);
  cov_fiber_destroy(fiber);
  static int key;
  cov_fiber_t *shared = cov_fiber_create_shared(cov_stack_group(&key), 1, nothing_entry, NULL);
  cov_fiber_resume(shared);
  cov_fiber_destroy(shared);
  cov_stack_t stack;
  if (cov_stack_allocate(64 * 1024, &stack) == 0) cov_stack_release(&stack);
  _exit(0);
}

static void test_fork(void) {
  section("fork: the child's dump signal is its own, the library's locks are usable");
  char output[4096];
#if defined(TEST_TSAN)
  // TSan stops a child that starts a thread after a multithreaded fork.
  printf("SKIP: dump signal in a forked child under ThreadSanitizer\n");
#else
  worked_in = mmap(NULL, sizeof *worked_in, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
  CHECK(cov_signal_work_install(SIGUSR2, note_work) == 0, "installed");
  int status = run_child(child_dump_signal, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child's signal is handled in the child (status %#x, work ran in %d)", status,
        (int)atomic_load(worked_in));
  // The parent's own dump signal still reaches the parent's thread.
  unsigned long before = cov_signal_work_count();
  raise(SIGUSR2);
  for (int i = 0; i < 5000 && cov_signal_work_count() == before; i++) usleep(1000);
  CHECK(atomic_load(worked_in) == getpid(), "the parent's signal, in the parent");
#endif
  atomic_store(&churn_stop, 0);
  pthread_t thread;
  pthread_create(&thread, NULL, churn, NULL);
  int children_ok = 0;
  enum { CHILDREN = 20 };
  for (int i = 0; i < CHILDREN; i++) {
    int child = run_child(child_uses_everything, output, sizeof output);
    children_ok += WIFEXITED(child) && WEXITSTATUS(child) == 0;
  }
  atomic_store(&churn_stop, 1);
  pthread_join(thread, NULL);
  CHECK(children_ok == CHILDREN, "%d of %d children forked amid the churn used the library",
        children_ok, CHILDREN);
}

// A fiber that must park with no hooks to hand it back stops the process.
static void child_park_without_hooks(void) {
  cov_fiber_set_parking_hooks(NULL, NULL);
  static int key;
  group_minimum = 1;
  make_shared(&key, &nested_job, 9, 0, 1);
  cov_fiber_resume(nested_job.fiber);  // bound to the group's one stack, suspended there
  int status = -1;
  cov_fiber_t *outer = cov_fiber_create_shared(cov_stack_group(&key), 1, nesting_entry, &status);
  cov_fiber_resume(outer);  // resumes nested_job's fiber on its own stack: it must park
}

static void test_park_without_hooks(void) {
  section("parking with no hooks set stops the process");
  char output[4096];
  int status = run_child(child_park_without_hooks, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x", status);
  CHECK(strstr(output, "Covenant: a shared-stack fiber must wait for its stack") &&
            strstr(output, "no parking hooks are set"),
        "stderr was [%s]", output);
}

// A copy limit lowered after a stack was made applies to it: 8 KiB of frames, limit 4 KiB.
static void child_copy_limit_lowered(void) {
  static int key;
  group_minimum = 1;
  shared_job_t first, deep;
  make_shared(&key, &first, 1, 0, 1);
  cov_fiber_resume(first.fiber);  // the group's stack exists, made under the default limit
  make_shared(&key, &deep, 2, 8192, 1);
  cov_shared_stack_set_copy_limit(4096);
  cov_fiber_resume(deep.fiber);
  _exit(0);
}

// The registry cannot grow: registrations fail at once (no system call on every start, after
// the first failure), are counted, and the failure is reported once.
static void child_registry_growth_fails(void) {
  static uint64_t object;
  enum { MOST = 3 * 4096 };
  static uint32_t slots[MOST];
  cov_registry_test_growth_failures(1);
  unsigned before = cov_registry_test_growth_failures(1);
  uint64_t overflow = cov_registry_overflow_count();
  int registered = 0;
  while (registered < MOST && (slots[registered] = cov_registry_enter((uintptr_t)&object)) !=
                                  COV_REGISTRY_NO_SLOT)
    registered++;
  for (int i = 0; i < 1000; i++) cov_registry_enter((uintptr_t)&object);  // all fail
  unsigned failures = cov_registry_test_growth_failures(1) - before;
  uint64_t unlisted = cov_registry_overflow_count() - overflow;
  for (int i = 0; i < registered; i++) cov_registry_leave(slots[i]);
  cov_registry_test_growth_failures(0);
  uint32_t slot = cov_registry_enter((uintptr_t)&object);  // grows again once allowed
  fprintf(stderr, "\nregistered %d, growth failures %u, unlisted %llu, then %s\n", registered,
          failures, (unsigned long long)unlisted, slot != COV_REGISTRY_NO_SLOT ? "grew" : "full");
  _exit(registered < MOST && failures == 1 && unlisted == 1001 && slot != COV_REGISTRY_NO_SLOT
            ? 0 : 1);
}

void test_lifecycle(void) {
  test_fork();
  test_park_without_hooks();
  section("copy limit and registry growth failures, in forked children");
  char output[4096];
  int status = run_child(child_copy_limit_lowered, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
            strstr(output, "more than the copy limit (4096 bytes)"),
        "a lowered copy limit applies to an existing stack: status %#x, [%s]", status, output);
  status = run_child(child_registry_growth_fails, output, sizeof output);
  static const char warning_text[] = "Covenant: the registry of live coroutines cannot grow";
  const char *warning = strstr(output, warning_text);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && warning &&
            !strstr(warning + sizeof warning_text - 1, warning_text),
        "registry growth failure, reported once: status %#x, [%s]", status, output);
}
