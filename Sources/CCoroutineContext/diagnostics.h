// Diagnostics (diagnostics.c): messages on stderr with write(2) only, and the page size.

#ifndef COVENANT_DIAGNOSTICS_H
#define COVENANT_DIAGNOSTICS_H

#include "cov_internal.h"

// Prints "Covenant: <message>" and aborts (write(2) only).
__attribute__((noreturn, cold)) COV_HIDDEN void cov_fatal(const char *message);
// Prints "Covenant: <message>" and goes on (write(2) only).
__attribute__((cold)) COV_HIDDEN void cov_warn(const char *message);

// The page size (sysconf, read once). Inline: stack sizes are rounded to it on every allocation
// of a given size.
extern _Atomic size_t cov_page_size_cached COV_HIDDEN;
static inline size_t cov_page_size(void) {
  return cov_cached_sysconf(&cov_page_size_cached, _SC_PAGESIZE, 4096);
}

#endif
