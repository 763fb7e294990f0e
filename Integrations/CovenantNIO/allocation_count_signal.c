/* For redis.sh: linked with the benchmarks' malloc counter
 * (Benchmarks/Sources/AllocationCounter/AllocationCounter.c, the one measure.sh preloads) into
 * one LD_PRELOAD library, so that a script can read the count of a running server from
 * outside: counting is switched on at load, and on SIGUSR2 the count so far is written to the
 * file named by MALLOC_COUNT_FILE. The script reads it before and after a load and divides by
 * the requests.
 *   gcc -O2 -shared -fPIC -I $B/include -o count.so $B/AllocationCounter.c allocation_count_signal.c
 *   (B=../../Benchmarks/Sources/AllocationCounter)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t cov_allocation_count(void);
void cov_allocation_counting(int enabled);

static const char *count_file;

/* Async-signal-safe: open, write, close, and the digits by hand. */
static void write_count(int signal_number) {
  (void)signal_number;
  if (count_file == NULL) return;
  char reversed[24], digits[24];
  int count = 0, length = 0;
  uint64_t value = (uint64_t)cov_allocation_count();
  do {
    reversed[count++] = (char)('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (count > 0) digits[length++] = reversed[--count];
  digits[length++] = '\n';
  int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ssize_t written = write(fd, digits, (size_t)length);
  (void)written;
  close(fd);
}

__attribute__((constructor)) static void install(void) {
  count_file = getenv("MALLOC_COUNT_FILE");
  cov_allocation_counting(1);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = write_count;
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR2, &action, NULL);
}
