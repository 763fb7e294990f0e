#include "CCoroutineContext.h"
_Thread_local void *cov_tls_slots[COV_TLS_SLOT_COUNT];
