// An identity function the Swift optimizer cannot see through (see ResolutionCell's payload).
#include "CCoroutineContext.h"

void *cov_opaque_pointer(void *pointer) { return pointer; }
