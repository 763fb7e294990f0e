// Stack-overflow diagnostics: a SIGSEGV/SIGBUS handler, running on a per-thread alternate signal
// stack, that recognises faults in a coroutine stack's guard region, prints one line to stderr
// and then lets the fault take its usual course (chaining any handler installed before ours).
//
// A fault is looked up first in the guard of the stack running on the faulting thread, through
// the hook the fiber layer sets (cov_overflow_set_current_guard_lookup: this file is below it
// and does not call it by name), then among every guard region the stack mappings know of.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "overflow.h"

#include "diagnostics.h"
#include "stack_map.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

enum { ALT_STACK_SIZE = 64 * 1024 };

static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static struct sigaction previous_segv;
static struct sigaction previous_bus;
static pthread_key_t alt_stack_key;
static bool alt_stack_key_ok;
static COV_TLS bool thread_ready;
static int (*_Atomic current_guard_lookup)(uintptr_t address, size_t *stack_size);

void cov_overflow_set_current_guard_lookup(int (*lookup)(uintptr_t address, size_t *stack_size)) {
  atomic_store_explicit(&current_guard_lookup, lookup, memory_order_release);
}

// MARK: - Reporting (async-signal-safe)

static void write_all(const char *text, size_t length) {
  while (length > 0) {
    ssize_t written = write(STDERR_FILENO, text, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;
    }
    text += written;
    length -= (size_t)written;
  }
}

static void report_overflow(size_t stack_size) {
  char buffer[256];
  size_t length = 0;
  static const char head[] = "Covenant: coroutine stack overflow (stack size ";
  static const char tail[] =
      " bytes); raise it with `Coroutine.defaultStackSize = ...` or "
      "`startCoroutine(stackSize: ...)`\n";
  memcpy(buffer, head, sizeof head - 1);
  length += sizeof head - 1;
  char digits[24];
  size_t count = 0;
  do {
    digits[count++] = (char)('0' + stack_size % 10);
    stack_size /= 10;
  } while (stack_size > 0);
  while (count > 0) buffer[length++] = digits[--count];
  memcpy(buffer + length, tail, sizeof tail - 1);
  length += sizeof tail - 1;
  write_all(buffer, length);
}

static void restore_default(int signal_number) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, NULL);
}

static void handle_fault(int signal_number, siginfo_t *info, void *context) {
  int saved_errno = errno;
  // si_code <= 0 means the signal was sent (kill, raise, sigqueue): no fault address.
  if (info && info->si_code > 0) {
    uintptr_t address = (uintptr_t)info->si_addr;
    size_t stack_size = 0;
    int (*in_current_guard)(uintptr_t, size_t *) =
        atomic_load_explicit(&current_guard_lookup, memory_order_acquire);
    if ((in_current_guard && in_current_guard(address, &stack_size)) ||
        cov_stack_guard_lookup(address, &stack_size))
      report_overflow(stack_size);
  }
  const struct sigaction *previous = signal_number == SIGBUS ? &previous_bus : &previous_segv;
  errno = saved_errno;
  if (previous->sa_flags & SA_SIGINFO) {
    if (previous->sa_sigaction) {
      previous->sa_sigaction(signal_number, info, context);
      return;
    }
  } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
    previous->sa_handler(signal_number);
    return;
  }
  // Default (or ignored, which for a fault means the same): returning re-executes the faulting
  // instruction, which now kills the process with the signal as usual.
  restore_default(signal_number);
}

// MARK: - Installation

static void free_alt_stack(void *memory) {
  size_t page = cov_page_size();
  stack_t current;
  if (sigaltstack(NULL, &current) == 0 && current.ss_sp == (char *)memory + page) {
    stack_t disable;
    memset(&disable, 0, sizeof disable);
    disable.ss_flags = SS_DISABLE;
    sigaltstack(&disable, NULL);
  }
  munmap(memory, page + ALT_STACK_SIZE);
}

static void install_process(void) {
  alt_stack_key_ok = pthread_key_create(&alt_stack_key, free_alt_stack) == 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = handle_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  // Read the previous actions first so the handler never sees them half-initialised.
  sigaction(SIGSEGV, NULL, &previous_segv);
  sigaction(SIGBUS, NULL, &previous_bus);
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
}

static void install_thread(void) {
  stack_t current;
  if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
  // 64 KiB of alternate stack over one inaccessible page.
  size_t page = cov_page_size();
  char *memory = mmap(NULL, page + ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;
  mprotect(memory, page, PROT_NONE);
  stack_t alt;
  memset(&alt, 0, sizeof alt);
  alt.ss_sp = memory + page;
  alt.ss_size = ALT_STACK_SIZE;
  if (sigaltstack(&alt, NULL) != 0) {
    munmap(memory, page + ALT_STACK_SIZE);
    return;
  }
  if (alt_stack_key_ok) pthread_setspecific(alt_stack_key, memory);
}

void cov_overflow_handler_install(void) {
  if (thread_ready) return;
  pthread_once(&process_once, install_process);
  install_thread();
  thread_ready = true;
}
