// Static storage of the Swift layer's global atomics (cov_atomics.h, "Words of static storage"):
// zero before the program starts, read and written only through the atomics of cov_atomics.h.
#include "cov_atomics.h"

uint64_t cov_global_atomics[COV_GLOBAL_ATOMIC_COUNT];
