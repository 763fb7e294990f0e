// A dump on a signal: the handler only writes one byte to a pipe (async-signal-safe); a thread
// of this library, started with the handler, reads the pipe and calls the work function (the
// Swift layer's dump: a snapshot written with write(2)). See cov_registry.h.

#include "dump_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int wakeup_pipe[2] = {-1, -1};
static void (*_Atomic signal_work)(void);
static _Atomic(unsigned long) signal_work_done;
static pthread_mutex_t signal_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int signal) {
  (void)signal;
  int saved = errno;
  char byte = 1;
  ssize_t ignored = write(wakeup_pipe[1], &byte, 1);  // async-signal-safe; a full pipe drops it
  (void)ignored;
  errno = saved;
}

static void *signal_thread(void *unused);
static void close_wakeup_pipe(void);

// Opens the pipe and starts the thread that reads it (`signal_lock` held); 0 or an errno value.
static int start_signal_thread(void) {
  if (pipe(wakeup_pipe) != 0) {
    int error = errno;
    wakeup_pipe[0] = wakeup_pipe[1] = -1;
    return error;
  }
  for (int i = 0; i < 2; i++) fcntl(wakeup_pipe[i], F_SETFD, FD_CLOEXEC);
  fcntl(wakeup_pipe[1], F_SETFL, O_NONBLOCK);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  // The signal is handled on whatever thread it hits; this thread only runs `work`.
  pthread_t thread;
  int error = pthread_create(&thread, &attributes, signal_thread, NULL);
  pthread_attr_destroy(&attributes);
  if (error) close_wakeup_pipe();
  return error;
}

// Forgets the pipe, then closes it: in that order, so that a signal coming in between finds
// -1 (its write fails, harmlessly) rather than a descriptor number that `open` may already
// have handed to another file of the process.
static void close_wakeup_pipe(void) {
  int read_end = wakeup_pipe[0], write_end = wakeup_pipe[1];
  wakeup_pipe[0] = wakeup_pipe[1] = -1;
  atomic_signal_fence(memory_order_seq_cst);  // the handler sees -1 before the close
  close(read_end);
  close(write_end);
}

static void *signal_thread(void *unused) {
  (void)unused;
  char bytes[64];
  for (;;) {
    ssize_t count = read(wakeup_pipe[0], bytes, sizeof bytes);  // several signals: one dump
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return NULL;
    void (*work)(void) = atomic_load_explicit(&signal_work, memory_order_acquire);
    if (work) work();
    atomic_fetch_add_explicit(&signal_work_done, 1, memory_order_release);
  }
}

unsigned long cov_signal_work_count(void) {
  return atomic_load_explicit(&signal_work_done, memory_order_acquire);
}

int cov_signal_work_install(int signal, void (*work)(void)) {
  pthread_mutex_lock(&signal_lock);
  // The handler first (an invalid signal fails here, before any thread is started). It writes
  // to whatever pipe is open when the signal comes (none yet: the write fails, harmlessly).
  struct sigaction action, previous;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  int error = sigaction(signal, &action, &previous) != 0 ? errno : 0;
  if (!error && wakeup_pipe[0] < 0) {
    error = start_signal_thread();
    if (error) sigaction(signal, &previous, NULL);
  }
  if (!error) atomic_store_explicit(&signal_work, work, memory_order_release);
  pthread_mutex_unlock(&signal_lock);
  return error;
}

// MARK: - Fork

// A child inherits the handler and the pipe but not the thread reading it: a signal sent to the
// child would wake the parent's thread, and the parent would dump. So the child closes its
// copies of the pipe and starts a thread of its own on a new one (fork.c calls this last in the
// child, once every other lock of the library is usable again).
void cov_dump_signal_fork(cov_fork_phase_t phase) {
  switch (phase) {
  case COV_FORK_PREPARE:
    pthread_mutex_lock(&signal_lock);
    break;
  case COV_FORK_PARENT:
    pthread_mutex_unlock(&signal_lock);
    break;
  case COV_FORK_CHILD:
    pthread_mutex_init(&signal_lock, NULL);
    if (wakeup_pipe[0] >= 0) {
      close_wakeup_pipe();
      start_signal_thread();  // if it fails, signals are dropped (the handler's write fails)
    }
    break;
  }
}
