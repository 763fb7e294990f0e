// Lock hand-overs ThreadSanitizer cannot see by itself.
//
// Swift's Synchronization.Mutex takes a contended lock on Linux with a priority-inheritance
// futex inside the (uninstrumented) runtime: the kernel hands the lock over, so TSan never sees
// the acquire/release and reports every access the mutex protects as a race. The Swift layer
// brackets each critical section with cov_sync_acquire/cov_sync_release (CCovenantShims.h); here
// they become TSan annotations, and in ordinary builds the inline flag check skips them.
#include "CCovenantShims.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COV_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(COV_TSAN)
#define COV_TSAN 1
#endif

#if defined(COV_TSAN)
void __tsan_acquire(void *address);
void __tsan_release(void *address);
const int cov_sync_annotations_enabled = 1;
void cov_sync_acquire_slow(const void *address) { __tsan_acquire((void *)address); }
void cov_sync_release_slow(const void *address) { __tsan_release((void *)address); }
#else
const int cov_sync_annotations_enabled = 0;
void cov_sync_acquire_slow(const void *address) { (void)address; }
void cov_sync_release_slow(const void *address) { (void)address; }
#endif
