// The system calls of Covenant's system layer that Swift cannot make itself (cov_system.h):
// threads with a name and a signal mask, errno names, close-on-exec pipes, a one-shot
// readiness poller (epoll / kqueue), pidfds, posix_spawn with descriptor and signal hygiene,
// and reaping with the wait-status macros.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // pipe2, strerror_r's GNU form, posix_spawn's *_np actions
#endif

#include "cov_system.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <TargetConditionals.h>
#include <crt_externs.h>  // _NSGetEnviron: `environ` is not visible to a shared library there
#include <sys/event.h>
#include <sys/time.h>
#endif

#if !defined(__APPLE__)
extern char **environ;
#endif

// MARK: - Threads

struct thread_start {
  void (*body)(void *);
  void *context;
  char name[16];
  int block_sigpipe;
};

static _Thread_local uintptr_t thread_tag;

uintptr_t cov_thread_tag(void) { return thread_tag; }
void cov_thread_set_tag(uintptr_t tag) { thread_tag = tag; }

static void *thread_main(void *argument) {
  struct thread_start start = *(struct thread_start *)argument;
  free(argument);
#if defined(__APPLE__)
  pthread_setname_np(start.name);
#else
  pthread_setname_np(pthread_self(), start.name);
#endif
  if (start.block_sigpipe) {
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, NULL);
  }
  start.body(start.context);
  return NULL;
}

int cov_thread_start(void (*body)(void *), void *context, const char *name, int block_sigpipe) {
  struct thread_start *start = malloc(sizeof *start);
  if (start == NULL) return ENOMEM;
  start->body = body;
  start->context = context;
  start->block_sigpipe = block_sigpipe;
  strncpy(start->name, name, sizeof start->name - 1);
  start->name[sizeof start->name - 1] = 0;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int error = pthread_create(&thread, &attributes, thread_main, start);
  pthread_attr_destroy(&attributes);
  if (error) free(start);
  return error;
}

int cov_processor_count(void) {
  long count = sysconf(_SC_NPROCESSORS_ONLN);
  return count < 1 ? 1 : (int)count;
}

// MARK: - Errors

#define NAME(code) {code, #code}
static const struct {
  int code;
  const char *name;
} errno_names[] = {
    NAME(EPERM),     NAME(ENOENT),       NAME(ESRCH),       NAME(EINTR),        NAME(EIO),
    NAME(ENXIO),     NAME(E2BIG),        NAME(ENOEXEC),     NAME(EBADF),        NAME(ECHILD),
    NAME(EAGAIN),    NAME(ENOMEM),       NAME(EACCES),      NAME(EFAULT),       NAME(EBUSY),
    NAME(EEXIST),    NAME(EXDEV),        NAME(ENODEV),      NAME(ENOTDIR),      NAME(EISDIR),
    NAME(EINVAL),    NAME(ENFILE),       NAME(EMFILE),      NAME(ENOTTY),       NAME(ETXTBSY),
    NAME(EFBIG),     NAME(ENOSPC),       NAME(ESPIPE),      NAME(EROFS),        NAME(EMLINK),
    NAME(EPIPE),     NAME(EDOM),         NAME(ERANGE),      NAME(EDEADLK),      NAME(ENAMETOOLONG),
    NAME(ENOLCK),    NAME(ENOSYS),       NAME(ENOTEMPTY),   NAME(ELOOP),        NAME(EMSGSIZE),
    NAME(ENOTSUP),   NAME(EOVERFLOW),    NAME(EILSEQ),      NAME(ECANCELED),    NAME(ETIMEDOUT),
    NAME(ECONNREFUSED), NAME(ECONNRESET), NAME(ENOTCONN),   NAME(EADDRINUSE),   NAME(ENOBUFS),
    NAME(EDQUOT),    NAME(ESTALE),       NAME(ENOTSOCK),    NAME(EOPNOTSUPP),   NAME(EWOULDBLOCK),
#ifdef ENOTBLK
    NAME(ENOTBLK),
#endif
#ifdef ENODATA
    NAME(ENODATA),
#endif
#ifdef ENOMEDIUM
    NAME(ENOMEDIUM),
#endif
#ifdef EREMOTEIO
    NAME(EREMOTEIO),
#endif
#ifdef EAUTH
    NAME(EAUTH),
#endif
};
#undef NAME

const char *cov_errno_name(int code) {
  for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++) {
    if (errno_names[i].code == code) return errno_names[i].name;
  }
  return NULL;
}

void cov_errno_describe(int code, char *buffer, size_t size) {
  if (size == 0) return;
  buffer[0] = 0;
#if defined(__linux__) && defined(__GLIBC__)
  // The GNU form: returns the text, which may or may not be in `buffer`.
  const char *text = strerror_r(code, buffer, size);
  if (text != buffer) {
    strncpy(buffer, text, size - 1);
    buffer[size - 1] = 0;
  }
#else
  if (strerror_r(code, buffer, size) != 0) buffer[0] = 0;
#endif
}

// MARK: - Descriptors

// Moves `*fd` to a number of 3 or above (close-on-exec), closing the original.
static int raise_above_standard(int *fd) {
  if (*fd > 2) return 0;
  int moved = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return errno;
  close(*fd);
  *fd = moved;
  return 0;
}

int cov_pipe(int fds[2], int nonblocking_read, int nonblocking_write) {
#if defined(__linux__)
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
#else
  if (pipe(fds) != 0) return errno;
  for (int i = 0; i < 2; i++) fcntl(fds[i], F_SETFD, FD_CLOEXEC);
#endif
  int error = 0;
  for (int i = 0; i < 2 && error == 0; i++) error = raise_above_standard(&fds[i]);
  if (error == 0 && nonblocking_read) {
    if (fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) != 0) error = errno;
  }
  if (error == 0 && nonblocking_write) {
    if (fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK) != 0) error = errno;
#if defined(__APPLE__) && defined(F_SETNOSIGPIPE)
    fcntl(fds[1], F_SETNOSIGPIPE, 1);
#endif
  }
  if (error) {
    close(fds[0]);
    close(fds[1]);
    fds[0] = fds[1] = -1;
  }
  return error;
}

// MARK: - Poller

#if defined(__linux__)

int cov_poller_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cov_poller_arm(int poller, int fd, int for_writing, uint64_t token) {
  struct epoll_event event = {0};
  event.events = (for_writing ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT;
  event.data.u64 = token;
  if (epoll_ctl(poller, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
  if (errno != ENOENT) return errno;
  return epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event) == 0 ? 0 : errno;
}

int cov_poller_forget(int poller, int fd) {
  struct epoll_event unused = {0};  // kernels before 2.6.9 wanted one
  return epoll_ctl(poller, EPOLL_CTL_DEL, fd, &unused) == 0 ? 0 : errno;
}

int cov_poller_arm_exit(int poller, pid_t pid, int pidfd, uint64_t token) {
  (void)pid;
  return cov_poller_arm(poller, pidfd, 0, token);
}

void cov_poller_forget_exit(int poller, pid_t pid, int pidfd) {
  (void)pid;
  cov_poller_forget(poller, pidfd);
}

int cov_poller_wait(int poller, cov_poll_event_t *events, int capacity, int timeout_ms) {
  struct epoll_event raw[64];
  if (capacity > 64) capacity = 64;
  int count = epoll_wait(poller, raw, capacity, timeout_ms);
  if (count < 0) return errno == EINTR ? 0 : -1;
  for (int i = 0; i < count; i++) {
    uint32_t flags = 0;
    if (raw[i].events & EPOLLIN) flags |= COV_POLL_READABLE;
    if (raw[i].events & EPOLLOUT) flags |= COV_POLL_WRITABLE;
    if (raw[i].events & (EPOLLHUP | EPOLLERR)) flags |= COV_POLL_HANGUP;
    events[i].token = raw[i].data.u64;
    events[i].flags = flags;
  }
  return count;
}

int cov_pidfd_open(pid_t pid) {
#if defined(SYS_pidfd_open)
  return (int)syscall(SYS_pidfd_open, pid, 0);
#elif defined(__x86_64__) || defined(__aarch64__)
  return (int)syscall(434, pid, 0);  // the same number on every architecture since 5.3
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

#elif defined(__APPLE__)

int cov_poller_create(void) {
  int poller = kqueue();
  if (poller >= 0) fcntl(poller, F_SETFD, FD_CLOEXEC);
  return poller;
}

int cov_poller_arm(int poller, int fd, int for_writing, uint64_t token) {
  struct kevent change;
  EV_SET(&change, fd, for_writing ? EVFILT_WRITE : EVFILT_READ, EV_ADD | EV_ONESHOT, 0, 0,
         (void *)(uintptr_t)token);
  return kevent(poller, &change, 1, NULL, 0, NULL) == 0 ? 0 : errno;
}

int cov_poller_forget(int poller, int fd) {
  struct kevent changes[2];
  EV_SET(&changes[0], fd, EVFILT_READ, EV_DELETE, 0, 0, NULL);
  EV_SET(&changes[1], fd, EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
  // One of the two (or both: a one-shot that fired) is not registered: ENOENT, harmless.
  kevent(poller, &changes[0], 1, NULL, 0, NULL);
  kevent(poller, &changes[1], 1, NULL, 0, NULL);
  return 0;
}

int cov_poller_arm_exit(int poller, pid_t pid, int pidfd, uint64_t token) {
  (void)pidfd;
  struct kevent change;
  EV_SET(&change, pid, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, (void *)(uintptr_t)token);
  return kevent(poller, &change, 1, NULL, 0, NULL) == 0 ? 0 : errno;
}

void cov_poller_forget_exit(int poller, pid_t pid, int pidfd) {
  (void)pidfd;
  struct kevent change;
  EV_SET(&change, pid, EVFILT_PROC, EV_DELETE, NOTE_EXIT, 0, NULL);
  kevent(poller, &change, 1, NULL, 0, NULL);
}

int cov_poller_wait(int poller, cov_poll_event_t *events, int capacity, int timeout_ms) {
  struct kevent raw[64];
  if (capacity > 64) capacity = 64;
  struct timespec timeout = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
  int count = kevent(poller, NULL, 0, raw, capacity, timeout_ms < 0 ? NULL : &timeout);
  if (count < 0) return errno == EINTR ? 0 : -1;
  for (int i = 0; i < count; i++) {
    uint32_t flags = 0;
    if (raw[i].filter == EVFILT_READ) flags |= COV_POLL_READABLE;
    if (raw[i].filter == EVFILT_WRITE) flags |= COV_POLL_WRITABLE;
    if (raw[i].filter == EVFILT_PROC) flags |= COV_POLL_EXITED;
    if (raw[i].flags & (EV_EOF | EV_ERROR)) flags |= COV_POLL_HANGUP;
    events[i].token = (uint64_t)(uintptr_t)raw[i].udata;
    events[i].flags = flags;
  }
  return count;
}

int cov_pidfd_open(pid_t pid) {
  (void)pid;
  errno = ENOSYS;
  return -1;
}

#else
#error "system.c: no readiness poller for this platform"
#endif

// MARK: - Child processes

#if defined(__linux__)
// Actions that need glibc 2.29 (chdir) and 2.34 (closefrom): looked up when first needed, so
// that a binary built against a newer glibc still starts on an older one.
typedef int (*addchdir_function)(posix_spawn_file_actions_t *, const char *);
typedef int (*addclosefrom_function)(posix_spawn_file_actions_t *, int);

static addchdir_function spawn_addchdir(void) {
  static _Atomic(addchdir_function) found;
  static _Atomic int looked;
  if (!atomic_load(&looked)) {
    atomic_store(&found, (addchdir_function)dlsym(RTLD_DEFAULT,
                                                  "posix_spawn_file_actions_addchdir_np"));
    atomic_store(&looked, 1);
  }
  return atomic_load(&found);
}

static addclosefrom_function spawn_addclosefrom(void) {
  static _Atomic(addclosefrom_function) found;
  static _Atomic int looked;
  if (!atomic_load(&looked)) {
    atomic_store(&found, (addclosefrom_function)dlsym(RTLD_DEFAULT,
                                                      "posix_spawn_file_actions_addclosefrom_np"));
    atomic_store(&looked, 1);
  }
  return atomic_load(&found);
}
#endif

#if defined(__APPLE__) && !TARGET_OS_OSX
// iOS, tvOS, watchOS and visionOS let no application start a process.
int cov_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
              const char *directory, int stdin_fd, int stdout_fd, int stderr_fd) {
  (void)pid, (void)path, (void)argv, (void)envp, (void)directory;
  (void)stdin_fd, (void)stdout_fd, (void)stderr_fd;
  return ENOSYS;
}
#else
int cov_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
              const char *directory, int stdin_fd, int stdout_fd, int stderr_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int error = posix_spawn_file_actions_init(&actions);
  if (error) return error;
  error = posix_spawnattr_init(&attributes);
  if (error) {
    posix_spawn_file_actions_destroy(&actions);
    return error;
  }
  sigset_t all, none;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  sigemptyset(&none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
#if defined(__APPLE__)
  flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
  if (!error) error = posix_spawnattr_setflags(&attributes, flags);
  if (!error) error = posix_spawnattr_setsigdefault(&attributes, &all);
  if (!error) error = posix_spawnattr_setsigmask(&attributes, &none);
  if (!error) {
    error = stdin_fd < 0
                ? posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                : posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  }
  if (!error) error = posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  if (!error) error = posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
#if defined(__linux__)
  if (!error) {
    addclosefrom_function addclosefrom = spawn_addclosefrom();
    if (addclosefrom) error = addclosefrom(&actions, 3);
  }
  if (!error && directory) {
    addchdir_function addchdir = spawn_addchdir();
    error = addchdir ? addchdir(&actions, directory) : ENOSYS;
  }
#elif defined(__APPLE__)
  if (!error && directory) error = posix_spawn_file_actions_addchdir_np(&actions, directory);
#endif
  if (!error) error = posix_spawn(pid, path, &actions, &attributes, argv, envp);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return error;
}
#endif

int cov_reap(pid_t pid, int *exit_code, int *signal_number) {
  int status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(pid, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped < 0) return -1;
  if (reaped == 0) return 0;
  if (WIFEXITED(status)) {
    *exit_code = WEXITSTATUS(status);
    *signal_number = 0;
  } else {
    *exit_code = -1;
    *signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return 1;
}

char *const *cov_environment(void) {
#if defined(__APPLE__)
  return *_NSGetEnviron();
#else
  return environ;
#endif
}
