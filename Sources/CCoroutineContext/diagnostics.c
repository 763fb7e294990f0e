// Diagnostics: the library's messages on stderr, and the page size. The lowest layer: every
// other file may report through it, and it calls nothing of the library.

#include "diagnostics.h"

#include <string.h>
#include <unistd.h>

void cov_warn(const char *message) {
  static const char prefix[] = "Covenant: ";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = write(STDERR_FILENO, message, strlen(message));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
}

void cov_fatal(const char *message) {
  cov_warn(message);
  abort();
}

_Atomic size_t cov_page_size_cached;  // 0 until read
