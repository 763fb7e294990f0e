// What the C heap holds, for tests that measure the memory of an object (cov_heap_in_use).

#include "CCovenantShims.h"

#include <stdlib.h>  // defines __GLIBC__ with glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

size_t cov_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // blocks from the arenas, and those mapped on their own
#else
  return 0;
#endif
}
