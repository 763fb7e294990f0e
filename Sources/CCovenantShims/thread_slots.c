// The out-of-line accessors of the thread-local slots (CCovenantShims.h): a call the optimizer
// cannot see through, so the slot's address is computed afresh on the thread that runs now.
#include "CCovenantShims.h"

void *cov_tls_load(int slot) { return cov_tls_slots[slot]; }

void cov_tls_store(int slot, void *value) { cov_tls_slots[slot] = value; }
