// Slow paths of the Linux lock of cov_atomics.h: a 32-bit word, 0 unlocked, 1 locked, 2 locked
// with possible waiters. The fast paths (one compare-exchange to lock, one exchange to unlock)
// are inline in the header; these run only under contention.
#include "cov_internal.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void cov_lock_wait(void *lock) {
  _Atomic(uint32_t) *word = (_Atomic(uint32_t) *)lock;
  // A critical section is a few dozen instructions: spin briefly before sleeping, reading only
  // (no cache-line ping-pong), as adaptive mutexes do.
  for (int spin = 0; spin < 100; spin++) {
    if (atomic_load_explicit(word, memory_order_relaxed) == 0) {
      uint32_t unlocked = 0;
      if (atomic_compare_exchange_weak_explicit(word, &unlocked, 1, memory_order_acquire,
                                                memory_order_relaxed))
        return;
    }
    cov_cpu_relax();
  }
  // Mark the lock contended (2) so the holder's unlock wakes a sleeper; whoever gets it from 0
  // owns it, still marked 2, since other threads may be asleep.
  while (atomic_exchange_explicit(word, 2, memory_order_acquire) != 0) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
  }
}

void cov_lock_wake(void *lock) {
  syscall(SYS_futex, (uint32_t *)lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif
