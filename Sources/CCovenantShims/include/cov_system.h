// The operating-system calls of the system layer (Sources/CovenantCore/System/) that Swift
// cannot make itself: `epoll` and `pidfd_open` are not in Swift's Glibc module, `syscall` and
// `fcntl` are variadic, and the wait-status macros are macros. Each function keeps to plain C
// types and returns 0 or an errno value (or -1 with `errno` set, where it says so).

#ifndef COVENANT_COV_SYSTEM_H
#define COVENANT_COV_SYSTEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Threads

/// Starts a detached thread named `name` (at most 15 bytes are kept) that runs `body(context)`.
/// With `block_sigpipe`, the thread blocks SIGPIPE for its whole life: a write to a pipe whose
/// reader has gone then fails with EPIPE instead of stopping the process (the signal stays
/// pending on that thread, harmlessly). Returns 0 or an errno value (`pthread_create`'s).
int cov_thread_start(void (*body)(void *context), void *context, const char *name,
                     int block_sigpipe);

/// A word of the calling thread's own (0 until set): the blocking pool marks its threads with it.
uintptr_t cov_thread_tag(void);
void cov_thread_set_tag(uintptr_t tag);

/// The number of processors online (at least 1).
int cov_processor_count(void);

// MARK: - Errors

/// The symbolic name of an errno value ("ENOENT"), or NULL if it has none here.
const char *cov_errno_name(int code);

/// Writes the system's description of an errno value ("No such file or directory") into
/// `buffer` (thread-safe, unlike `strerror`).
void cov_errno_describe(int code, char *buffer, size_t size);

// MARK: - Descriptors

/// A pipe whose two ends are close-on-exec (atomically where the system can: `pipe2`) and
/// numbered 3 or above (so that a child's standard descriptors can never be one of them);
/// `nonblocking_read` / `nonblocking_write` make that end non-blocking. On Apple platforms the
/// write end also gets F_SETNOSIGPIPE when `nonblocking_write` is set. Returns 0 or an errno.
int cov_pipe(int fds[2], int nonblocking_read, int nonblocking_write);

// MARK: - Readiness poller (epoll on Linux, kqueue on Apple platforms)

/// What a poller event reports.
enum {
  COV_POLL_READABLE = 1,
  COV_POLL_WRITABLE = 2,
  /// The peer closed (a pipe's other end) or the descriptor failed: a read or write now returns
  /// at once (end of file, or the error).
  COV_POLL_HANGUP = 4,
  /// A child process's exit (`cov_poller_arm_exit`).
  COV_POLL_EXITED = 8,
};

/// One readiness event: the token given when the descriptor was armed, and what happened.
typedef struct cov_poll_event {
  uint64_t token;
  uint32_t flags;
} cov_poll_event_t;

/// A new poller (close-on-exec); -1 with errno set on failure.
int cov_poller_create(void);

/// Arms `fd` for one event (one-shot): readable, or writable with `for_writing`. Re-arming a
/// descriptor armed before replaces its interest. Returns 0 or an errno value.
int cov_poller_arm(int poller, int fd, int for_writing, uint64_t token);

/// Stops watching `fd` (before it is closed). Returns 0 or an errno value (ENOENT if it was
/// not watched).
int cov_poller_forget(int poller, int fd);

/// Arms one event for the exit of child `pid`: through `pidfd` (readable at the exit) on Linux,
/// `EVFILT_PROC`/`NOTE_EXIT` on Apple platforms. Returns 0, ESRCH if the child has already
/// exited (Apple platforms: reap it now), or another errno value.
int cov_poller_arm_exit(int poller, pid_t pid, int pidfd, uint64_t token);

/// Stops watching the exit of `pid` / `pidfd`.
void cov_poller_forget_exit(int poller, pid_t pid, int pidfd);

/// Waits up to `timeout_ms` milliseconds (-1: no limit) for events; returns how many were
/// stored in `events` (0 on a timeout or an interruption), or -1 with errno set.
int cov_poller_wait(int poller, cov_poll_event_t *events, int capacity, int timeout_ms);

// MARK: - Child processes

/// A descriptor that becomes readable when child `pid` exits (Linux `pidfd_open`, kernel 5.3
/// and later); -1 with errno set where there is none (ENOSYS: an older kernel, a seccomp filter,
/// or not Linux).
int cov_pidfd_open(pid_t pid);

/// Starts `path` (a path, not searched in PATH) with `argv` and `envp` (NULL-terminated) through
/// `posix_spawn`: standard input from `stdin_fd` (or /dev/null when it is -1), standard output
/// and error to `stdout_fd` and `stderr_fd` (all numbered 3 or above); every signal at its
/// default disposition and none blocked (an ignored SIGPIPE or a blocked SIGTERM of this process
/// is not inherited); in `directory` if not NULL. Every other descriptor of this process that
/// is close-on-exec stays out of the child; on Apple platforms
/// (POSIX_SPAWN_CLOEXEC_DEFAULT) and glibc 2.34 and later (`addclosefrom_np`) all others do too.
/// Returns 0 with `*pid` set, or an errno value (ENOENT, EACCES, ENOEXEC for the executable or
/// the directory; ENOSYS if a directory is asked for and this C library cannot change one, and
/// always on iOS, tvOS, watchOS and visionOS, where applications cannot start processes).
int cov_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
              const char *directory, int stdin_fd, int stdout_fd, int stderr_fd);

/// Reaps child `pid` if it has exited (`waitpid` with WNOHANG): returns 1 with `*exit_code`
/// (when it exited: 0–255, and `*signal` 0) or `*signal` (when a signal ended it, and
/// `*exit_code` -1) set, 0 if it is still running, or -1 with errno set (ECHILD: not a child
/// of this process, or reaped by someone else).
int cov_reap(pid_t pid, int *exit_code, int *signal);

/// The environment of this process (`environ`), NULL-terminated.
char *const *cov_environment(void);

#ifdef __cplusplus
}
#endif

#endif
