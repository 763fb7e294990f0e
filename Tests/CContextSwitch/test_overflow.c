// Stack overflow, in forked children: the handler's diagnostic before death by SIGSEGV, on
// dedicated and shared stacks, recycled stacks, secondary threads, behind an earlier handler;
// faults elsewhere pass untouched; the copy limit; an entry function that returns.

#include "fixtures.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int recursion_limit = 1 << 30;  // never reached: the guard stops it first

static __attribute__((noinline)) int recurse_forever(int depth) {
  volatile char frame[512];
  if (depth > recursion_limit) return 0;
  frame[0] = (char)depth;
  return recurse_forever(depth + 1) + frame[0];
}

static __attribute__((noinline)) int recurse_big_frames(int depth) {
  volatile char frame[20000];  // bigger than a page: must still land in the 64 KiB guard
  if (depth > recursion_limit) return 0;
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)depth;
  return recurse_big_frames(depth + 1) + frame[0];
}

static void overflow_entry(void *argument) {
  if (argument) recurse_big_frames(0);
  else recurse_forever(0);
}

static void child_overflow_default(void) {
  cov_fiber_t *fiber = cov_fiber_create(0, overflow_entry, NULL);
  cov_fiber_resume(fiber);
}

static void child_overflow_custom(void) {
  cov_fiber_t *fiber = cov_fiber_create(100 * 1024, overflow_entry, (void *)1);
  cov_fiber_resume(fiber);
}

// Recycle stacks through MADV_DONTNEED (beyond the pool) first: the guard must still be there.
static void child_overflow_recycled(void) {
  cov_stack_set_pool_capacity(0);
  cov_fiber_t *fibers[200];
  for (int i = 0; i < 200; i++) {
    fibers[i] = cov_fiber_create(0, recursion_entry, NULL);
    cov_fiber_resume(fibers[i]);
  }
  for (int i = 0; i < 200; i++) cov_fiber_destroy(fibers[i]);
  cov_fiber_t *fiber = cov_fiber_create(0, overflow_entry, NULL);
  cov_fiber_resume(fiber);
}

static void previous_handler(int sig, siginfo_t *info, void *context) {
  (void)info;
  (void)context;
  static const char text[] = "previous handler ran\n";
  ssize_t ignored = write(STDERR_FILENO, text, sizeof text - 1);
  (void)ignored;
  signal(sig, SIG_DFL);
}

// Runs in a fresh process (exec'ed): a SIGSEGV handler installed BEFORE Covenant's.
void chained_main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = previous_handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, NULL);
  child_overflow_default();
}

static void child_overflow_chained(void) {
  execl("/proc/self/exe", "test_switch", "--chained-child", (char *)NULL);
  _exit(127);
}

static void *thread_overflow(void *argument) {
  (void)argument;
  child_overflow_default();
  return NULL;
}

static void child_overflow_thread(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, thread_overflow, NULL);
  pthread_join(thread, NULL);
}

static void shared_overflow_entry(void *argument) {
  (void)argument;
  recurse_forever(0);
}

static void child_overflow_shared(void) {
  static int key;
  cov_fiber_t *fiber =
      cov_fiber_create_shared(cov_stack_group(&key), 0, shared_overflow_entry, NULL);
  cov_fiber_resume(fiber);
}

// 8 KiB of frames at the suspension, with the copy limit at 4 KiB.
static void child_copy_limit(void) {
  cov_shared_stack_set_copy_limit(4096);
  static int key;
  shared_job_t job;
  make_shared(&key, &job, 1, 8192, 1);
  cov_fiber_resume(job.fiber);
}

static void child_null_dereference(void) {
  cov_overflow_handler_install();
  static int *volatile bad_pointer = (int *)16;
  *bad_pointer = 1;
}

static void child_entry_returns_entry(cov_transfer_t t) { (void)t; }

static void child_atexit(void) {
  static const char text[] = "atexit ran\n";
  ssize_t ignored = write(STDERR_FILENO, text, sizeof text - 1);
  (void)ignored;
}

static void child_entry_returns(void) {
  atexit(child_atexit);
  cov_stack_t stack;
  cov_stack_allocate(0, &stack);
  cov_fcontext_t ctx = cov_make_fcontext((char *)stack.base + stack.size, stack.size,
                                         child_entry_returns_entry);
  cov_jump_fcontext(ctx, NULL);
  _exit(3);
}

static const char expected[] = "Covenant: coroutine stack overflow (stack size ";

static void expect_overflow(const char *name, void (*body)(void), size_t size,
                            const char *also) {
  char output[4096];
  int status = run_child(body, output, sizeof output);
  if (under_emulation && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    printf("SKIP %s: cannot exec a fresh process under emulation\n", name);
    return;
  }
  char needle[96];
  snprintf(needle, sizeof needle, "%s%zu bytes)", expected, size);
  CHECK(died_of_fault(status), "%s: child status %#x", name, status);
  CHECK(strstr(output, needle) != NULL, "%s: stderr was [%s]", name, output);
  if (also) CHECK(strstr(output, also) != NULL, "%s: stderr lacks [%s]: [%s]", name, also, output);
  char *newline = strchr(output, '\n');
  printf("%s: %.*s\n", name, newline ? (int)(newline - output) : (int)strlen(output), output);
}

void test_overflow(void) {
  section("guard hit in a forked child: diagnostic, then death by SIGSEGV");
  expect_overflow("default size", child_overflow_default, cov_stack_default_size(), NULL);
  expect_overflow("custom size, 20 KB frames", child_overflow_custom, 100 * 1024, NULL);
  expect_overflow("recycled slot", child_overflow_recycled, cov_stack_default_size(), NULL);
  expect_overflow("chained handler", child_overflow_chained, cov_stack_default_size(),
                  "previous handler ran");
  expect_overflow("secondary thread", child_overflow_thread, cov_stack_default_size(), NULL);
  expect_overflow("shared stack", child_overflow_shared, cov_stack_default_size(), NULL);

  char limit_output[4096];
  int limit_status = run_child(child_copy_limit, limit_output, sizeof limit_output);
  CHECK(WIFSIGNALED(limit_status) && WTERMSIG(limit_status) == SIGABRT, "copy limit: status %#x",
        limit_status);
  CHECK(strstr(limit_output, "more than the copy limit (4096 bytes)") != NULL,
        "copy limit: stderr was [%s]", limit_output);

  char output[4096];
  int status = run_child(child_null_dereference, output, sizeof output);
  CHECK(died_of_fault(status), "null deref: status %#x", status);
  CHECK(strstr(output, "Covenant") == NULL, "null deref printed [%s]", output);

  status = run_child(child_entry_returns, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "entry return: status %#x", status);
  CHECK(strstr(output, "atexit") == NULL, "entry return ran atexit handlers");
}
