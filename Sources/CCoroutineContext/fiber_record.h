// Records (fiber_record.c): a fiber's, and the shared stack's a fiber may be bound to; where a
// fiber's frames are. The layouts are defined here only, and every assumption other code makes
// about them is checked here, next to them (the offsets cov_registry.h's inline functions use,
// the sizes the stack top and the heap chunk leave).

#ifndef COVENANT_FIBER_RECORD_H
#define COVENANT_FIBER_RECORD_H

#include "cov_internal.h"

typedef struct cov_shared_stack cov_shared_stack_t;

// MARK: - The fiber record

// A fiber. Dedicated fibers keep it at the top of their own stack, followed there by their
// cov_stack_t (cov_own_stack); shared-stack fibers in a heap block (fiber_record.c), kept
// small: with the copy of its frames it is what a suspended coroutine costs. Fields are touched
// by one thread at a time: the one running or resuming the fiber, or, for a shared fiber's
// copy-out state and wait-list link, the one holding its stack's lock.
struct cov_fiber {
  cov_fcontext_t context;   // the fiber's own context (saved stack pointer) while not running
  union {
    cov_fcontext_t resumer;   // the context that resumed it, while it is running
    cov_fiber_t *next_waiter; // shared: the next fiber in its stack's wait list, while parked
  };
  cov_fiber_t *previous;    // the fiber that was current on the resuming thread
  cov_fiber_entry_t entry;
  void *argument;
  void *exclusivity[2];     // Swift's per-task exclusivity access set, moved on every switch
  void *resumer_stack_local; // the resumer's COV_TLS_SLOT_PER_STACK, given back when switching to it
  _Atomic(uintptr_t) wait_detail;  // what the owner waits on, for snapshots (cov_registry.h)
  struct {                  // shared-stack fibers only
    union {
      cov_stack_group_t *group;   // until it first runs
      cov_shared_stack_t *stack;  // from then on (bound == true), for life
    };
    char *saved;                  // copy buffer (kept for reuse), or NULL
    uint32_t saved_size;          // bytes of [context, top) held in `saved`; 0: in place
    uint32_t saved_capacity;
  } shared;
  // Anything but a plain resume of a dedicated fiber: one 32-bit test on the fast path.
  union {
    struct {
      bool running;
      bool finished;
      bool parked;          // in a shared stack's wait list
      bool is_shared;
    };
    uint32_t not_plain;
  };
  bool started;
  bool track_exclusivity;   // call the Swift exclusivity hooks (default; see the header)
  bool bound;               // shared: `shared.stack` is set
#if defined(COV_ASAN)
  void *fake_stack;                // the fiber's ASan fake stack while it is switched out
  const void *resumer_bottom;      // the resumer's stack, for switching back to it
  size_t resumer_size;
#endif
#if defined(COV_TSAN)
  void *tsan_fiber;
  void *tsan_resumer;
#endif
};

// The flags of a fiber are tested as one 32-bit word (`not_plain`).
_Static_assert(sizeof(bool) == 1, "the flags of a fiber are tested as one 32-bit word");
_Static_assert(offsetof(cov_fiber_t, is_shared) == offsetof(cov_fiber_t, not_plain) + 3,
               "the four flags fill the 32-bit word");
// A dedicated fiber's record and stack descriptor sit below the top of its stack, 64-aligned:
// within the 256 bytes CCoroutineContext.h documents.
_Static_assert(sizeof(cov_fiber_t) + sizeof(cov_stack_t) + 63 <= 256, "fiber record too large");
_Static_assert(sizeof(cov_fiber_t) % _Alignof(cov_stack_t) == 0, "stack descriptor misaligned");
// A shared fiber's record is a heap block of its own: with the wait's detail it must stay in the
// same glibc chunk (112 bytes: 104 usable) as without it, or every suspended coroutine pays
// 16 bytes more. (Sanitizer builds add fields of their own.)
#if !defined(COV_ASAN) && !defined(COV_TSAN) && defined(__LP64__)
_Static_assert(sizeof(cov_fiber_t) <= 104, "a shared fiber's record outgrew its 112-byte heap chunk");
#endif
// cov_fiber_note_wait_detail and cov_registry_note_resuming (inline in cov_registry.h, compiled
// into the Swift layer) write and read the record at these offsets.
_Static_assert(offsetof(cov_fiber_t, wait_detail) == COV_FIBER_WAIT_DETAIL_OFFSET,
               "the wait's detail moved in the fiber record: update cov_registry.h");
_Static_assert(offsetof(cov_fiber_t, is_shared) == COV_FIBER_IS_SHARED_OFFSET,
               "the shared flag moved in the fiber record: update cov_registry.h");

// A dedicated fiber's own stack, stored right after its record.
static inline cov_stack_t *cov_own_stack(const cov_fiber_t *fiber) {
  return (cov_stack_t *)(void *)((char *)(uintptr_t)fiber + sizeof(cov_fiber_t));
}

// MARK: - The shared stack record

// The state word of a shared stack: the occupant (the fiber whose frames are in place, or 0)
// with these flags in its low bits (records are at least 8-aligned: fiber_record.c checks).
enum {
  COV_STACK_RUNNING = 1,  // the occupant is running (or being switched in or out)
  COV_STACK_LOCKED = 2,   // someone holds the stack's lock (wait list, copies)
  COV_STACK_WAITERS = 4,  // the wait list is not empty
  COV_STACK_FLAGS = 7,
};

// A shared stack (shared_stack.c says what its fields do).
struct cov_shared_stack {
  _Atomic uintptr_t state;
  cov_fiber_t *waiters_head, *waiters_tail;  // under the lock
  uintptr_t poisoned_low;   // eager eviction: [poisoned_low, top) is ASan-poisoned (0: none)
  cov_stack_t stack;
  char *top;                // stack.base + stack.size, 16-aligned
};

// MARK: - Records and frames

// A zeroed record for a shared-stack fiber (from this thread's cache, else malloc), or NULL.
COV_HIDDEN cov_fiber_t *cov_fiber_record_allocate(void);
// Gives a shared fiber's record back to this thread's cache (or to malloc).
COV_HIDDEN void cov_fiber_record_free(cov_fiber_t *fiber);

// The usable range of the stack a fiber runs on ([base, base + size)); base NULL if none yet.
COV_HIDDEN const cov_stack_t *cov_fiber_stack(const cov_fiber_t *fiber);

#endif
