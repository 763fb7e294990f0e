// CCovenantShims: the C that only Covenant's Swift layer needs, kept out of CCoroutineContext
// (which a C program uses on its own): what Swift cannot express or cannot make as cheap. No C
// file of CCoroutineContext uses anything here (.ci/c-layers.sh checks it: this target sits
// above every layer of CCoroutineContext).
//
//   - atomics on inline storage, and the words behind global atomics (cov_atomics.h);
//   - the thread-local slots' Swift meanings and their accessors (the slots themselves are
//     CCoroutineContext's, whose fiber switch keeps one of them per stack);
//   - annotations of lock hand-overs for ThreadSanitizer;
//   - an identity function the optimizer cannot see through;
//   - libdispatch's entry points that Swift's Dispatch does not offer without a block (direct
//     dispatch): the one part that needs libdispatch.

#ifndef COVENANT_CCOVENANTSHIMS_H
#define COVENANT_CCOVENANTSHIMS_H

#include <stddef.h>
#include <stdint.h>

#include "CCoroutineContext.h"  // cov_tls_slots
#include "cov_atomics.h"
#include "cov_system.h"   // system calls of the system layer (threads, poller, processes)

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Thread-local slots (thread_slots.c)

/// What the Swift layer keeps in CCoroutineContext's thread-local slots, numbered here once;
/// Swift names them in `ThreadSlot`.
enum {
  /// The `CoroutineContext` whose body runs on this thread right now, unretained.
  COV_TLS_SLOT_COROUTINE = 0,
  /// The `SchedulerTurn` of the scheduler task running on this thread, if any.
  COV_TLS_SLOT_TURN = 1,
  /// The `ResolutionDrain` (the promise core's trampoline) running on this stack, if any: the
  /// slot the fiber switch keeps per stack, so a fiber that suspends inside a drain never
  /// leaves that drain installed on the thread it leaves (a fiber resumed inside a drain, on
  /// the other hand, sees it, and queues what it resolves there).
  COV_TLS_SLOT_RESOLUTION = COV_TLS_SLOT_PER_STACK,
};
_Static_assert((int)COV_TLS_SLOT_COROUTINE != (int)COV_TLS_SLOT_PER_STACK &&
                   (int)COV_TLS_SLOT_TURN != (int)COV_TLS_SLOT_PER_STACK &&
                   (int)COV_TLS_SLOT_COROUTINE != (int)COV_TLS_SLOT_TURN,
               "the per-thread slots are not the per-stack one, nor each other");
_Static_assert((int)COV_TLS_SLOT_COROUTINE < (int)COV_TLS_SLOT_COUNT &&
                   (int)COV_TLS_SLOT_TURN < (int)COV_TLS_SLOT_COUNT,
               "the slots exist");

/// Reads / writes a slot, out of line: valid anywhere, in particular after something that may
/// have suspended the current coroutine (cov_fiber_suspend, directly or not) in the same
/// function, when it may run on another thread than before.
void *cov_tls_load(int slot);
void cov_tls_store(int slot, void *value);

/// Reads / writes a slot inline (a load or a store at a fixed offset from the thread pointer,
/// half the instructions of the out-of-line pair). UNSAFE AFTER A SUSPENSION: the optimizer
/// treats a thread-local address as constant within a function, so after anything that may
/// have suspended the current coroutine in the same function, the address computed before may
/// be reused and the slot of the thread it was suspended on read or written. Use only in a
/// function that is never inlined and calls these before anything in it can suspend; the
/// functions allowed to are listed in .ci/c-layers.sh, which fails on any other use.
static inline void *cov_tls_get_unsafe_after_suspension(int slot) { return cov_tls_slots[slot]; }
static inline void cov_tls_set_unsafe_after_suspension(int slot, void *value) {
  cov_tls_slots[slot] = value;
}

// MARK: - Lock annotations for ThreadSanitizer (sanitizer_sync.c)

/// Non-zero only when this target was built with ThreadSanitizer.
extern const int cov_sync_annotations_enabled;
void cov_sync_acquire_slow(const void *address);
void cov_sync_release_slow(const void *address);

/// Tells ThreadSanitizer that the lock identified by `address` was just acquired / is about to
/// be released. Free in ordinary builds (one predictable branch).
static inline void cov_sync_acquire(const void *address) {
  if (__builtin_expect(cov_sync_annotations_enabled, 0)) cov_sync_acquire_slow(address);
}
static inline void cov_sync_release(const void *address) {
  if (__builtin_expect(cov_sync_annotations_enabled, 0)) cov_sync_release_slow(address);
}

// MARK: - Opaque pointers (opaque_pointer.c)

/// Returns `pointer`, out of line: memory reached through the result cannot be reasoned about by
/// the caller's optimizer (no forwarding of what it believes a local variable holds). Used where
/// Swift code moves a value's bytes through a scratch variable with raw-pointer accesses only.
void *cov_opaque_pointer(void *pointer);

// MARK: - Direct dispatch (dispatch_direct.c)

/// `dispatch_async_f(queue, context, work)`: runs `work(context)` on the libdispatch queue
/// `queue` (a `dispatch_queue_t`), with no block and no allocation.
void cov_dispatch_async_f(void *queue, void *context, void (*work)(void *));

/// `dispatch_get_current_queue()`: the `dispatch_queue_t` whose work is running on this thread.
/// Used once per process (Linux), inside a `sync` on a probe queue, to recognise by address
/// the word where a `DispatchQueue` keeps its `dispatch_queue_t`, before any direct dispatch.
void *cov_dispatch_current_queue(void);

/// The usable size of the heap block at `block` (`malloc_usable_size`); 0 where unknown. Lets
/// the probe above check that the word it reads lies inside the object.
size_t cov_heap_block_size(const void *block);

/// The bytes the C heap has handed out and not had back (glibc's `mallinfo2()`: `uordblks`, which
/// counts chunks held in its per-thread caches as in use, plus `hblkhd`, the large blocks mapped
/// on their own); 0 where unknown. For tests that measure what an object holds (heap_usage.c).
size_t cov_heap_in_use(void);

/// Whether the environment variable `COVENANT_DIRECT_DISPATCH` is `0`: every reaction then
/// goes through `DispatchQueue.async` (the fallback path), for testing it.
int cov_direct_dispatch_disabled(void);

#ifdef __cplusplus
}
#endif

#endif
