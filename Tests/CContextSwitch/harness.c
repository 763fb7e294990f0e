// The harness (harness.h): counts, sections, children.

#include "harness.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int passed, failed;
int under_emulation;

void section(const char *name) {
  printf("-- %s\n", name);
  fflush(stdout);
}

int died_of_fault(int status) {
#if defined(TEST_ASAN)
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) return 1;
#endif
#if defined(TEST_TSAN)
  if (WIFEXITED(status) && WEXITSTATUS(status) == 66) return 1;
#endif
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

int run_child(void (*body)(void), char *output, size_t capacity) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(60);  // a child that neither crashes nor exits must not hang the suite
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(42);
  }
  close(fds[1]);
  size_t length = 0;
  ssize_t got;
  char discard[4096];
  for (;;) {  // drain everything, keep what fits
    if (length + 1 < capacity) got = read(fds[0], output + length, capacity - 1 - length);
    else got = read(fds[0], discard, sizeof discard);
    if (got <= 0) break;
    if (length + 1 < capacity) length += (size_t)got;
  }
  output[length] = 0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

int count_mappings(void) {
  FILE *file = fopen("/proc/self/maps", "r");
  if (!file) return -1;
  int lines = 0, c;
  while ((c = fgetc(file)) != EOF) lines += c == '\n';
  fclose(file);
  return lines;
}
