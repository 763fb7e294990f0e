// The library across fork(2): one set of fork handlers for every lock of the library, taken in
// the lock order written below, once.
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

#include "cov_internal.h"
#include "dump_signal.h"
#include "registry.h"
#include "stack_group.h"
#include "stack_map.h"
#include "stack_pool.h"
#include "symbols.h"

#include <pthread.h>

// THE LOCK ORDER of the library, outermost first: a lock that may be held while another is
// taken comes before it. Before a fork every hook takes its locks in this order; after it, the
// parent releases them and the child makes them anew in the reverse order (so the dump thread,
// whose hook is first, is started again in the child last, once every other lock is usable).
static void (*const lock_order[])(cov_fork_phase_t) = {
    // The dump signal's lock: held only while a handler is installed, which takes no other.
    cov_dump_signal_fork,
    // The registry's scan and table locks: a snapshot's visit holds the scan lock while it reads
    // frames under shared stacks' locks and looks symbols up.
    cov_registry_fork,
    // The symbol cache's lock: held while an image's tables are read, which takes no other.
    cov_symbols_fork,
    // The group table's lock, each group's growth lock, then every shared stack's lock: a
    // growth holds its group's lock while it takes a stack from the pool.
    cov_stack_group_fork,
    // The stack pool's lock, then the mappings' (never held together: the pool calls the
    // mappings outside its lock).
    cov_stack_pool_fork,
    cov_stack_map_fork,
};
enum { LOCK_HOOKS = sizeof lock_order / sizeof lock_order[0] };

static void before_fork(void) {
  for (size_t i = 0; i < LOCK_HOOKS; i++) lock_order[i](COV_FORK_PREPARE);
}

static void after_fork_in_parent(void) {
  for (size_t i = LOCK_HOOKS; i-- > 0;) lock_order[i](COV_FORK_PARENT);
}

static void after_fork_in_child(void) {
  for (size_t i = LOCK_HOOKS; i-- > 0;) lock_order[i](COV_FORK_CHILD);
}

__attribute__((constructor)) static void register_fork_handlers(void) {
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
