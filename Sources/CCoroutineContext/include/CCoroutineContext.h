// CCoroutineContext: the machine-level half of Covenant's coroutines, in C and assembly. It
// needs libc only (with its threads and its dynamic loader's dladdr/dl_iterate_phdr), and,
// weakly, the Swift runtime's exclusivity hooks and demangler, which a pure C program does not
// link (then they are not called).
//
// Its interface, in this header and the two it includes:
//   1. a raw context switch in hand-written assembly (Boost.Context's fcontext shape):
//      cov_make_fcontext / cov_jump_fcontext;
//   2. stacks: mmap'ed, lazily committed, guarded below, pooled; a SIGSEGV/SIGBUS handler on an
//      alternate signal stack that reports a coroutine stack overflow before the normal crash;
//   3. fibers: a stack + a saved context + sanitizer and Swift-exclusivity bookkeeping, with an
//      asymmetric resume/suspend API;
//   4. shared stacks: fibers that run on one of a few stacks shared by a group, their used bytes
//      copied out only when another fiber needs the stack (copy-on-suspend);
//   5. thread-local slots, one of which the fiber switch keeps per stack;
//   6. snapshots (cov_registry.h): the registry of live coroutines, the frames of suspended
//      fibers, symbols, a dump on a signal;
//   7. a lock (cov_lock.h): a futex word on Linux, os_unfair_lock on Apple platforms.
// 1 alone is a complete context switch and 2 alone a stack allocator. Covenant's Swift layer
// (CovenantCore) uses every part, with the shims only Swift needs in a target of their own
// (CCovenantShims: atomics, the slots' accessors, direct dispatch, ThreadSanitizer annotations);
// the C test (Tests/CContextSwitch) and the C benchmark (Benchmarks/CSwitch) use it from C. How
// the implementation is layered, one file per layer, is in cov_internal.h.
//
// Nothing here uses setjmp/longjmp or ucontext.

#ifndef COVENANT_CCOROUTINECONTEXT_H
#define COVENANT_CCOROUTINECONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "cov_lock.h"      // 7. a lock
#include "cov_registry.h"  // 6. the registry of live coroutines, for snapshots

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

/// What cov_fiber_resume did.
enum {
  /// The fiber ran: it has suspended again or finished.
  COV_FIBER_RAN = 0,
  /// The fiber did not run: it is a shared-stack fiber whose stack is in use by a fiber running
  /// on another thread (or by the caller itself). It waits on that stack, and is handed back
  /// through the unpark hook (cov_fiber_set_parking_hooks) when the stack's occupant switches
  /// out; then resume it again. Never returned for fibers with their own stack.
  COV_FIBER_PARKED = 1,
};

/// Switches from the current context (a thread or another fiber) into `fiber` and returns when
/// the fiber suspends or its entry function returns (COV_FIBER_RAN), or at once when it has to
/// wait for its shared stack (COV_FIBER_PARKED). The fiber must not be running and must not
/// be finished. Resumes nest: a fiber may resume another fiber.
int cov_fiber_resume(cov_fiber_t *fiber);

/// From inside a fiber: switches back to the context that resumed it. Returns when the fiber is
/// resumed again (possibly on another thread).
void cov_fiber_suspend(void);

/// Whether the fiber's entry function has returned.
int cov_fiber_is_finished(const cov_fiber_t *fiber);

/// Frees the fiber and returns its stack to the pool (a shared-stack fiber: its record and copy
/// buffer). The fiber must be finished or never resumed; a suspended or parked fiber cannot be
/// destroyed (its frames would be skipped).
void cov_fiber_destroy(cov_fiber_t *fiber);

/// The fiber running on this thread, or NULL when on a thread's own stack.
cov_fiber_t *cov_fiber_current(void);

/// The usable stack size of the fiber in bytes (a shared-stack fiber: of its shared stack; 0
/// before it first ran).
size_t cov_fiber_stack_size(const cov_fiber_t *fiber);

/// The lowest usable stack address of the fiber (for tests and diagnostics; NULL for a
/// shared-stack fiber that has not run yet).
void *cov_fiber_stack_base(const cov_fiber_t *fiber);

// MARK: - 4. Shared stacks (copy-on-suspend)
//
// A shared-stack fiber has no stack of its own: when it first runs it is bound, for life, to one
// of the few stacks of its *group* (Covenant's Swift layer makes one group per scheduler). Its
// frames stay where they are while it is suspended; only when another fiber of the same stack
// must run are they copied out (the used bytes [sp, top) only, into a heap buffer sized to fit,
// reused from one eviction to the next), and they are copied back to the same addresses before
// it runs again, so pointers into its own frames stay valid *for it*. A fiber resumed before
// anyone needed its stack pays nothing. Architecture.md ("Stacks") describes the policy.
//
// A group starts with no stack and adds one whenever a fiber starts and every stack holds a
// suspended fiber, up to its minimum (default cov_shared_stacks_default_min()); beyond it, only
// while every stack is *running* (observed parallelism), up to twice the processor count (at
// most 64). A new fiber is bound to an empty stack if there is one, else to one whose occupant
// is suspended (round robin), else to any. At most 768 keys have a group of their own at a time:
// beyond that an idle group moves to the new key (the key it served gets one again when it
// needs it), or the new key shares a group.
//
// A fiber whose stack is running another fiber (on another thread, or the caller's own stack)
// is not run and not waited for: cov_fiber_resume returns COV_FIBER_PARKED, the fiber waits in
// the stack's FIFO list, and when the occupant switches out, that thread hands the first waiter
// back through the unpark hook. No thread ever blocks on a stack.

typedef struct cov_stack_group cov_stack_group_t;

/// The group of shared stacks of `group_key` (any pointer-sized identity; NULL is a group of
/// its own), created on first use; NULL only when out of memory. Use the handle at once: a group
/// that falls idle may later move to another key. Cheap when the calling thread looked up the
/// same key last.
cov_stack_group_t *cov_stack_group(const void *group_key);

/// Creates a fiber that runs `entry(argument)` on a shared stack of `group`, setting the group's
/// minimum number of stacks to `min_stacks` unless it is 0 (1 to 64; the minimum of a new group
/// is cov_shared_stacks_default_min()). The fiber record (at most 104 bytes on 64-bit targets:
/// fiber_record.h checks it) comes from a per-thread cache. Returns NULL (errno set) if the
/// group has no stack and none can be allocated.
cov_fiber_t *cov_fiber_create_shared(cov_stack_group_t *group, size_t min_stacks,
                                     cov_fiber_entry_t entry, void *argument);

/// Whether the fiber runs on a shared stack.
int cov_fiber_is_shared(const cov_fiber_t *fiber);

/// Sets the functions that hand a parked fiber to its owner: `park(argument)` when
/// cov_fiber_resume parks it (called with the stack's lock held: keep it to a retain), and
/// `unpark(argument)` once the stack's occupant has switched out, on that thread, outside the
/// lock (the owner then resumes the fiber again). `argument` is the fiber's entry argument.
/// Set them once, before any shared fiber runs.
void cov_fiber_set_parking_hooks(void (*park)(void *argument), void (*unpark)(void *argument));

/// Marks (or unmarks) a group as one whose owner keeps settings of its own (the Swift layer: a
/// scheduler's stack mode or stack count), and tells whether it is: a cheap filter before
/// looking those settings up. A group that moves to another key is unmarked.
void cov_stack_group_set_configured(cov_stack_group_t *group, int configured);
int cov_stack_group_is_configured(const cov_stack_group_t *group);

/// How many shared stacks the group of `group_key` has made so far (0 if it has none).
size_t cov_stack_group_stack_count(const void *group_key);

/// The minimum of groups created from now on (initially 4; 1 to 64).
size_t cov_shared_stacks_default_min(void);
void cov_shared_stacks_set_default_min(size_t count);

/// The most bytes of stack a shared-stack fiber may have in use when it suspends (initially
/// 65,536; at least 4,096): what its copy buffer may need. A fiber suspending deeper stops the
/// process with "Covenant: a coroutine suspended with N bytes of shared stack in use, more than
/// the copy limit (M bytes) ...", at the suspension (not only when a copy happens), so the limit
/// is met deterministically; give such coroutines a stack of their own.
size_t cov_shared_stack_copy_limit(void);
void cov_shared_stack_set_copy_limit(size_t bytes);

/// Eager eviction: copy a shared-stack fiber out at every suspension and fill (debug builds) or
/// poison (AddressSanitizer) what it vacated, so that a pointer into a suspended fiber's frames
/// reads garbage, or is reported by ASan, at once instead of only when the stack happens to be
/// reused. On by default in debug builds of this library (DEBUG defined), off otherwise; the
/// environment variable COVENANT_STACK_EVICTION=eager|lazy overrides the default.
int cov_shared_stacks_eager_eviction(void);
void cov_shared_stacks_set_eager_eviction(int enabled);

/// Where a fiber's frames are, for debuggers, snapshots and tests.
typedef struct cov_fiber_frames {
  /// Usable range of the fiber's stack (its shared stack's, for a shared fiber): [low, high).
  const void *stack_low;
  const void *stack_high;
  /// The saved context (stack pointer) of a suspended fiber: its frames occupy
  /// [sp, stack_high) at these addresses whether or not they are in place. NULL if the fiber is
  /// running, finished or has not started.
  const void *sp;
  /// Where the bytes of [sp, stack_high) are right now: `sp` itself when they are in place, else
  /// the start of the copy buffer (byte i of the buffer belongs at address sp + i).
  const void *bytes;
  /// 1 if the frames are copied out (then `bytes` is the buffer), 0 if in place.
  int copied_out;
  /// 1 for a shared-stack fiber.
  int shared;
} cov_fiber_frames_t;

/// Fills `out` for `fiber`, without any lock: for a shared fiber that may be evicted or resumed
/// concurrently, the answer can be stale at once; use cov_fiber_copy_frames for a consistent
/// copy. Returns 1 if the fiber is suspended (sp and bytes set), 0 otherwise.
int cov_fiber_frames(const cov_fiber_t *fiber, cov_fiber_frames_t *out);

/// Copies the used stack bytes [sp, stack_high) of a suspended fiber into `buffer` (up to
/// `capacity` bytes; the ones nearest `sp`, which hold the innermost frames, first) and fills
/// `out` (its `bytes` then points into `buffer`). For a shared fiber the copy is taken under its
/// stack's lock, so it is consistent even while other threads resume fibers of that stack; a
/// dedicated fiber must not be resumed meanwhile (the caller knows it is suspended). Returns
/// the number of bytes in use (which may exceed `capacity`), or 0 if the fiber is not suspended.
size_t cov_fiber_copy_frames(const cov_fiber_t *fiber, void *buffer, size_t capacity,
                             cov_fiber_frames_t *out);

// MARK: - 5. Thread-local slots

/// Pointer-sized thread-local slots for the layer above (Covenant's Swift layer, which has no
/// thread-local storage of its own: CCovenantShims names the slots and gives their accessors).
/// Each is a plain per-thread word, except COV_TLS_SLOT_PER_STACK, which belongs to the stack
/// that runs: cov_fiber_resume remembers the resumer's value (the fiber starts with that value,
/// it is not cleared), and the fiber's suspension or exit gives it back, so a value a fiber
/// leaves in the slot when it switches out never stays on the thread it leaves.
enum {
  COV_TLS_SLOT_PER_STACK = 2,
  COV_TLS_SLOT_COUNT = 4
};
/// Thread-local storage of this library uses the initial-exec model: a fixed offset from the
/// thread pointer, instead of a `__tls_get_addr` call per access (the default for position-
/// independent code), which would be paid on every promise block and coroutine switch (the
/// cost is in the Performance article). The library is linked into executables or loaded at
/// start-up, where this model is valid.
#define COV_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/// The slots (fiber.c). Code that reads or writes one after something that may suspend the
/// current fiber (cov_fiber_suspend, directly or not) in the same function must not reuse the
/// slot's address computed before: the optimizer treats a thread-local address as constant
/// within a function, and after the suspension the fiber may run on another thread.
extern COV_TLS void *cov_tls_slots[COV_TLS_SLOT_COUNT];

// MARK: - Additions (not in the original interface)

// Notes on the fiber API (behaviour of the implementation, no change to the declarations above):
// - Hand-off rule: a suspended fiber may be resumed on any thread, but only after the
//   cov_fiber_resume that ran it has returned: that return (on the resumer's side) is the point
//   where the suspension is complete. Publishing "resume me" from inside the fiber before
//   cov_fiber_suspend lets another thread resume a fiber that is still running: decide in the
//   resumer after cov_fiber_resume returns (or with a state machine that accounts for it).
// - A dedicated fiber's record lives at the top of its own stack (no malloc);
//   cov_fiber_stack_size is the size of the whole stack, of which up to 256 bytes hold the
//   record. A shared-stack fiber's record is a small heap block (cached per thread).
// - Misuse (resuming a running or finished fiber, destroying a suspended one, suspending outside
//   a fiber) prints "Covenant: fiber misuse: ..." and aborts.
// - Fresh stacks cost a page fault (the first page) and pooled ones do not: create fibers when
//   they first run rather than long before, and destroy them as soon as they finish.

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
/// mapping with an mprotect'ed guard (older kernels, macOS, or the environment variable
/// COVENANT_STACK_GUARDS=mprotect, which forces that path: it behaves as a kernel older than
/// 6.13 does). For tests and diagnostics.
int cov_stack_uses_guard_markers(void);

/// Mapping budget. Linux stops a process at vm.max_map_count mappings, and once stacks have
/// used them all, malloc cannot grow either. Stacks therefore stop short of it: allocation
/// fails with EAGAIN once the mappings this allocator has made would exceed
/// `max_map_count - reserve`, where the reserve is an eighth of the limit (at least 1,024) and
/// is left to the rest of the process. `max_map_count` is read from /proc/sys/vm/max_map_count
/// (no limit where that file does not exist).
/// Sets the limit used instead (0: read it from /proc again). For tests of the exhaustion path.
void cov_stack_set_max_map_count(size_t count);
/// The limit in use (SIZE_MAX: none) and the mappings this allocator holds now.
size_t cov_stack_max_map_count(void);
size_t cov_stack_mappings_in_use(void);

#ifdef __cplusplus
}
#endif

#endif
