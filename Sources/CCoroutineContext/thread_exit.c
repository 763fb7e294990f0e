// The library across thread exit: one thread-exit hook (a pthread key's destructor) for all
// its per-thread caches, each of which arms it with its own flush function (thread_exit.h).
// The caches' files call down into this one; it calls them back only through the functions
// they armed it with.

#include "thread_exit.h"

#include "diagnostics.h"

#include <pthread.h>

// The caches of the library: fiber records, stacks, registry slots (one more for room).
enum { MAX_FLUSHES = 4 };

typedef struct {
  void (*flush[MAX_FLUSHES])(void);
  unsigned count;  // 0: the hook is not armed on this thread
} armed_t;

static COV_TLS armed_t armed;
static pthread_key_t exit_hook_key;
static bool exit_hook_key_made;
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;

// The hook. POSIX has cleared the key's value before calling it: the flushes disarm their
// caches, and a cache refilled afterwards arms the hook again (a value set again), which makes
// the next round of destructors call it again.
static void on_thread_exit(void *unused) {
  (void)unused;
  armed_t flushes = armed;
  armed.count = 0;
  for (unsigned i = 0; i < flushes.count; i++) flushes.flush[i]();
}

static void make_exit_hook_key(void) {
  exit_hook_key_made = pthread_key_create(&exit_hook_key, on_thread_exit) == 0;
}

bool cov_thread_exit_arm(void (*flush)(void)) {
  for (unsigned i = 0; i < armed.count; i++)
    if (armed.flush[i] == flush) return true;
  if (armed.count == 0) {
    pthread_once(&exit_hook_once, make_exit_hook_key);
    // Any non-NULL value: it only makes the hook run at thread exit.
    if (!exit_hook_key_made || pthread_setspecific(exit_hook_key, &armed) != 0) return false;
  }
  if (armed.count == MAX_FLUSHES) cov_fatal("thread_exit.c: more caches than MAX_FLUSHES");
  armed.flush[armed.count++] = flush;
  return true;
}
