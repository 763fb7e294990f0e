// Direct libdispatch entry points for Covenant's hot paths.
//
// Swift's `DispatchQueue.async` turns each Swift closure into a heap block (`Block_copy`) on
// top of the closure's own context: two allocations per dispatched item. A promise reaction or
// a coroutine is already a heap object, so Covenant hands libdispatch that object and a plain C
// function instead (`dispatch_async_f`): no allocation at all.
#include "CCovenantShims.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <malloc.h>
#endif

extern void dispatch_async_f(void *queue, void *context, void (*work)(void *));
// Deprecated in Apple's headers (a queue is not an identity to rely on in general), still
// exported by every libdispatch; used only on Linux, once, to recognise a queue by address.
extern void *dispatch_get_current_queue(void);

void cov_dispatch_async_f(void *queue, void *context, void (*work)(void *)) {
  dispatch_async_f(queue, context, work);
}

void *cov_dispatch_current_queue(void) { return dispatch_get_current_queue(); }

size_t cov_heap_block_size(const void *block) {
#if defined(__linux__)
  return malloc_usable_size((void *)block);
#else
  (void)block;
  return 0;
#endif
}

int cov_direct_dispatch_disabled(void) {
  const char *setting = getenv("COVENANT_DIRECT_DISPATCH");
  return setting != NULL && strcmp(setting, "0") == 0;
}
