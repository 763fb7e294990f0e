// CCoroutineContext: the machine-level half of Covenant's coroutines.
//
// Three layers, each usable on its own:
//   1. a raw context switch in hand-written assembly (Boost.Context's fcontext shape):
//      cov_make_fcontext / cov_jump_fcontext;
//   2. stacks: mmap'ed, lazily committed, guarded below, pooled; a SIGSEGV/SIGBUS handler on an
//      alternate signal stack that reports a coroutine stack overflow before the normal crash;
//   3. fibers: a stack + a saved context + sanitizer and Swift-exclusivity bookkeeping, with an
//      asymmetric resume/suspend API. The Swift layer only uses this one.
//
// Nothing here uses setjmp/longjmp or ucontext.

#ifndef COVENANT_CCOROUTINECONTEXT_H
#define COVENANT_CCOROUTINECONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "cov_atomics.h"  // atomics and a lock for the Swift layer

#ifdef __cplusplus
extern "C" {
#endif

#if __has_attribute(swift_name)
#define COV_SWIFT_NAME(x) __attribute__((swift_name(#x)))
#else
#define COV_SWIFT_NAME(x)
#endif

// MARK: - 1. Raw context switch

/// A suspended execution context: the stack pointer at which its registers were saved.
typedef void *cov_fcontext_t;

/// What a jump delivers to the context that is resumed: the context that jumped (so it can be
/// resumed later) and the pointer passed to the jump.
typedef struct cov_transfer {
  cov_fcontext_t from;
  void *data;
} cov_transfer_t;

/// Saves the callee-saved state of the current context on its stack, switches to `to`, and
/// delivers `{current context, data}` there. Returns when some context jumps back to this one.
///
/// x86_64 saves rbx, rbp, r12-r15, the return address, MXCSR and the x87 control word;
/// arm64 saves x19-x30 (fp, lr), d8-d15. Implemented in switch_x86_64.S / switch_arm64.S.
cov_transfer_t cov_jump_fcontext(cov_fcontext_t to, void *data);

/// Prepares a context on the stack whose highest address is `stack_top` (`size` bytes below it
/// are usable). The first jump to it calls `entry(transfer)` on that stack. `entry` must never
/// return; if it does, the process exits with status 0 (as Boost.Context does).
cov_fcontext_t cov_make_fcontext(void *stack_top, size_t size, void (*entry)(cov_transfer_t));

// MARK: - 2. Stacks

/// A coroutine stack. `[base, base + size)` is usable (stacks grow down from `base + size`);
/// `[guard, base)` is the guard region that faults on access.
typedef struct cov_stack {
  void *base;
  size_t size;
  void *guard;
  size_t guard_size;
  void *allocation; /* private: the allocator's bookkeeping */
} cov_stack_t;

/// Default usable size of a new stack in bytes (initially 256 KiB).
size_t cov_stack_default_size(void);
/// Sets the default stack size (rounded up to whole pages, at least 16 KiB).
void cov_stack_set_default_size(size_t size);
/// How many released stacks of the default size are kept for reuse (initially 64).
size_t cov_stack_pool_capacity(void);
void cov_stack_set_pool_capacity(size_t capacity);

/// Allocates a stack of at least `size` usable bytes (0 means the default size). Returns 0 on
/// success or an errno value. Stacks are committed lazily: untouched pages cost no memory.
int cov_stack_allocate(size_t size, cov_stack_t *out);
/// Returns a stack to the pool (or to the system when the pool is full).
void cov_stack_release(cov_stack_t *stack);

/// Installs the stack-overflow handler once per process (chaining any earlier SIGSEGV/SIGBUS
/// handler) and an alternate signal stack on the calling thread once per thread. Cheap to call
/// repeatedly; fibers call it on every thread they run on.
void cov_overflow_handler_install(void);

// MARK: - 3. Fibers

typedef struct cov_fiber cov_fiber_t;
typedef void (*cov_fiber_entry_t)(void *argument);

/// Creates a fiber with its own stack (`stack_size` 0 = default) that runs `entry(argument)` when
/// first resumed. Returns NULL (errno set) if no stack could be allocated.
cov_fiber_t *cov_fiber_create(size_t stack_size, cov_fiber_entry_t entry, void *argument);

/// Switches from the current context (a thread or another fiber) into `fiber` and returns when
/// the fiber suspends or its entry function returns. The fiber must not be running and must not
/// be finished. Resumes nest: a fiber may resume another fiber.
void cov_fiber_resume(cov_fiber_t *fiber);

/// From inside a fiber: switches back to the context that resumed it. Returns when the fiber is
/// resumed again (possibly on another thread).
void cov_fiber_suspend(void);

/// Whether the fiber's entry function has returned.
int cov_fiber_is_finished(const cov_fiber_t *fiber);

/// Frees the fiber and returns its stack to the pool. The fiber must be finished or never
/// resumed; a suspended fiber cannot be destroyed (its frames would be skipped).
void cov_fiber_destroy(cov_fiber_t *fiber);

/// The fiber running on this thread, or NULL when on a thread's own stack.
cov_fiber_t *cov_fiber_current(void);

/// The usable stack size of the fiber in bytes.
size_t cov_fiber_stack_size(const cov_fiber_t *fiber);

/// The lowest usable stack address of the fiber (for tests and diagnostics).
void *cov_fiber_stack_base(const cov_fiber_t *fiber);

// MARK: - Thread-local slots for the Swift layer

/// Slots of per-thread state for Covenant's Swift code, which has no thread-local storage of
/// its own. The slot numbers are defined here, once; Swift reads them through `ThreadSlot`.
enum {
  /// The `CoroutineContext` whose body runs on this thread right now, unretained.
  COV_TLS_SLOT_COROUTINE = 0,
  /// The `SchedulerTurn` of the scheduler task running on this thread, if any.
  COV_TLS_SLOT_TURN = 1,
  /// The `ResolutionDrain` (the promise core's trampoline) running on this stack, if any. It
  /// belongs to a stack, not to a thread: cov_fiber_resume remembers the resumer's value, and
  /// the fiber's suspension or exit gives it back, so a fiber that suspends inside a drain
  /// never leaves that drain installed on the thread it leaves (a fiber resumed inside a drain,
  /// on the other hand, sees it, and queues what it resolves there).
  COV_TLS_SLOT_RESOLUTION = 2,
  COV_TLS_SLOT_COUNT = 4
};
/// Thread-local storage of this library uses the initial-exec model: a fixed offset from the
/// thread pointer, instead of a `__tls_get_addr` call per access (the default for position-
/// independent code), which would be paid on every promise block and coroutine switch (the
/// cost is in the Performance article). The library is linked into executables or loaded at
/// start-up, where this model is valid.
#define COV_TLS _Thread_local __attribute__((tls_model("initial-exec")))

extern COV_TLS void *cov_tls_slots[COV_TLS_SLOT_COUNT];

static inline void *cov_tls_get(int slot) { return cov_tls_slots[slot]; }
static inline void cov_tls_set(int slot, void *value) { cov_tls_slots[slot] = value; }

// MARK: - Additions (not in the original interface)

// Notes on the fiber API (behaviour of the implementation, no change to the declarations above):
// - Hand-off rule: a suspended fiber may be resumed on any thread, but only after the
//   cov_fiber_resume that ran it has returned: that return (on the resumer's side) is the point
//   where the suspension is complete. Publishing "resume me" from inside the fiber before
//   cov_fiber_suspend lets another thread resume a fiber that is still running: decide in the
//   resumer after cov_fiber_resume returns (or with a state machine that accounts for it).
// - The fiber record lives at the top of its own stack (no malloc); cov_fiber_stack_size is the
//   size of the whole stack, of which up to 256 bytes hold the record.
// - Misuse (resuming a running or finished fiber, destroying a suspended one, suspending outside
//   a fiber) prints "Covenant: fiber misuse: ..." and aborts.
// - Fresh stacks cost a page fault (the first page) and pooled ones do not: create fibers when
//   they first run rather than long before, and destroy them as soon as they finish.

/// Out-of-line versions of cov_tls_get / cov_tls_set. Use these for any slot read or written
/// after something that may suspend (cov_fiber_suspend, directly or not) in the same function:
/// the optimizer treats a thread-local address as constant within a function, so an inlined
/// cov_tls_get after a suspension can read the slot of the thread the fiber was suspended on.
void *cov_tls_load(int slot);
void cov_tls_store(int slot, void *value);

/// Whether the fiber moves its Swift exclusivity access set on every switch (default: yes; set it
/// before the first resume). The hooks (libswiftCore's swift_task_enter/exitThreadLocalContext;
/// their cost per resume+suspend is in the Performance article) are what allow a fiber suspended inside a dynamic exclusive
/// access (`object.property += f()` where f suspends) to resume on ANOTHER thread, and they hide a
/// suspended fiber's accesses from the code that runs meanwhile. A fiber that is always resumed
/// on the thread it suspended on (e.g. a generator driven synchronously) may turn them off: its
/// open accesses then stay visible to that thread while it is suspended, as in ordinary nested
/// code, and resuming it on another thread with an access open is a fatal runtime error.
void cov_fiber_set_exclusivity_tracking(cov_fiber_t *fiber, int enabled);

/// 1 if stacks get their guards as page-table markers (Linux MADV_GUARD_INSTALL, no extra
/// mapping per stack, default-size stacks carved from shared slabs), 0 if every stack is its own
/// mapping with an mprotect'ed guard (older kernels, macOS). For tests and diagnostics.
int cov_stack_uses_guard_markers(void);

// MARK: - Lock annotations for ThreadSanitizer

/// Non-zero only when this library was built with ThreadSanitizer.
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

/// Whether the environment variable `COVENANT_DIRECT_DISPATCH` is `0`: every reaction then
/// goes through `DispatchQueue.async` (the fallback path), for testing it.
int cov_direct_dispatch_disabled(void);

#ifdef __cplusplus
}
#endif

#endif
