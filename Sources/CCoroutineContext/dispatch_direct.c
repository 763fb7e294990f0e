// Direct libdispatch entry points for Covenant's hot paths.
//
// Swift's `DispatchQueue.async` turns each Swift closure into a heap block (`Block_copy`) on
// top of the closure's own context: two allocations per dispatched item. A promise reaction or
// a coroutine is already a heap object, so Covenant hands libdispatch that object and a plain C
// function instead (`dispatch_async_f`): no allocation at all.
#include "CCoroutineContext.h"

extern void dispatch_async_f(void *queue, void *context, void (*work)(void *));
extern const char *dispatch_queue_get_label(void *queue);

void cov_dispatch_async_f(void *queue, void *context, void (*work)(void *)) {
  dispatch_async_f(queue, context, work);
}

const char *cov_dispatch_queue_label(void *queue) { return dispatch_queue_get_label(queue); }
