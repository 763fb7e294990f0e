// Diagnostics (diagnostics.c): messages on stderr with write(2) only, and the page size.

#ifndef COVENANT_DIAGNOSTICS_H
#define COVENANT_DIAGNOSTICS_H

#include "cov_internal.h"

// Prints "Covenant: <message>" and aborts (write(2) only).
__attribute__((noreturn, cold)) COV_HIDDEN void cov_fatal(const char *message);
// Prints "Covenant: <message>" and goes on (write(2) only).
__attribute__((cold)) COV_HIDDEN void cov_warn(const char *message);

// The page size (sysconf, read once).
COV_HIDDEN size_t cov_page_size(void);

#endif
