// The library across fork(2) and thread exit: one set of fork handlers for all its locks, and
// one thread-exit hook for all its per-thread caches (cov_internal.h).
//
// What a forked child may do. A child of a multithreaded process has one thread, the one that
// called fork; whatever the other threads were running is gone (their coroutines and fibers
// simply never run again: their frames stay in memory, their registry entries stay listed). The
// library's own state is consistent in the child, as every lock of it is held across the fork:
// the child may create, run and destroy fibers on dedicated stacks, allocate stacks, take
// registry snapshots, and its dump signal (cov_signal_work_install) is handled by a thread of
// its own, started again in the child. Shared stacks work too, except those whose occupant was
// running on another thread at the fork: fibers bound to one of those park for ever. Anything
// else (Dispatch queues, the Swift runtime's own locks, malloc arenas of other libraries) is as
// fork-safe as it is; the safe course, as POSIX says, is to call only async-signal-safe
// functions until exec.

#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <pthread.h>
#include <stdbool.h>

// MARK: - Fork

// The order in which the locks are taken, outermost first (a lock that is held while another is
// taken comes before it): a registry visit holds its chunk's lock while it reads stacks' frames
// (under their locks), a growing group holds its growth lock while it allocates a stack.
static void before_fork(void) {
  cov_registry_fork(COV_FORK_PREPARE);
  cov_backtrace_fork(COV_FORK_PREPARE);
  cov_shared_fork(COV_FORK_PREPARE);
  cov_stack_fork(COV_FORK_PREPARE);
}

static void after_fork_in_parent(void) {
  cov_stack_fork(COV_FORK_PARENT);
  cov_shared_fork(COV_FORK_PARENT);
  cov_backtrace_fork(COV_FORK_PARENT);
  cov_registry_fork(COV_FORK_PARENT);
}

// The dump thread is started again last, once every lock is usable.
static void after_fork_in_child(void) {
  cov_stack_fork(COV_FORK_CHILD);
  cov_shared_fork(COV_FORK_CHILD);
  cov_registry_fork(COV_FORK_CHILD);
  cov_backtrace_fork(COV_FORK_CHILD);
}

__attribute__((constructor)) static void register_fork_handlers(void) {
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

// MARK: - Thread exit

static COV_TLS bool exit_hook_armed;
static pthread_key_t exit_hook_key;
static bool exit_hook_key_made;
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;

// The hook. POSIX has cleared the key's value before calling it: the flushes disarm the caches,
// and a cache refilled afterwards arms the hook again (a value set again), which makes the next
// round of destructors call it again.
static void on_thread_exit(void *unused) {
  (void)unused;
  exit_hook_armed = false;
  cov_fiber_record_cache_flush();
  cov_stack_cache_flush();
  cov_registry_cache_flush();
}

static void make_exit_hook_key(void) {
  exit_hook_key_made = pthread_key_create(&exit_hook_key, on_thread_exit) == 0;
}

bool cov_thread_exit_arm(void) {
  if (exit_hook_armed) return true;
  pthread_once(&exit_hook_once, make_exit_hook_key);
  // Any non-NULL value: it only makes the hook run at thread exit.
  if (!exit_hook_key_made || pthread_setspecific(exit_hook_key, &exit_hook_armed) != 0)
    return false;
  exit_hook_armed = true;
  return true;
}
