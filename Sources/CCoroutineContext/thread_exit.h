// The one thread-exit hook of the library's per-thread caches (thread_exit.c).

#ifndef COVENANT_THREAD_EXIT_H
#define COVENANT_THREAD_EXIT_H

#include "cov_internal.h"

// Per-thread caches (stacks, fiber records, registry slots) give back what they hold when their
// thread exits, through one thread-exit hook: a cache arms it with its flush function
// (cov_thread_exit_arm, false if it cannot be armed: then keep nothing) when it first keeps
// something, and at thread exit the hook calls every armed flush once, after which each cache
// counts as unarmed again. So a cache refilled after its flush, by another thread-exit
// destructor that runs later (one that finishes a coroutine, say), arms the hook again and is
// flushed in the next round of destructors (POSIX runs them again while values are set,
// PTHREAD_DESTRUCTOR_ITERATIONS rounds in all).
COV_HIDDEN bool cov_thread_exit_arm(void (*flush)(void));

#endif
