// An identity function the Swift optimizer cannot see through (see ResolutionCell's payload).
#include "CCovenantShims.h"

void *cov_opaque_pointer(void *pointer) { return pointer; }
