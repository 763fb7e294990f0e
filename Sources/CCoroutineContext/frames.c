// Frames of suspended fibers, for debuggers and snapshots (cov_registry.h): consistent copies,
// frame-pointer walks, and how much of a fiber's stack is in use.
//
// A switched-out fiber's saved context is the stack pointer at which the switch saved its
// registers (switch.h), among them the frame pointer and the return address: from there the
// frame-pointer chain leads through the fiber's frames to its first one, whose saved frame
// pointer is 0. The walk reads only inside [sp, top) of the fiber's stack (or the copy of those
// bytes a shared fiber was evicted to), so a stale or torn chain ends the walk early instead of
// leaving the stack. A shared fiber's frames are read under its stack's lock (shared_stack.c);
// a dedicated fiber's in place, by functions the sanitizers do not check.

#include "cov_internal.h"
#include "diagnostics.h"
#include "fiber_record.h"
#include "shared_stack.h"
#include "switch.h"

#include <string.h>
#include <sys/mman.h>

// MARK: - Walking the frame-pointer chain

// A return address as a plain code address: arm64 may sign return addresses (pointer
// authentication); `xpaclri` (a hint, a no-op without the feature) strips the signature.
static uintptr_t strip_code_address(uintptr_t address) {
#if defined(__aarch64__)
  register uintptr_t lr __asm__("x30") = address;
  __asm__("hint #7" : "+r"(lr));  // xpaclri
  return lr;
#else
  return address;
#endif
}

// Reads the word at `address` of a stack whose bytes [sp, high) are at `bytes` (the stack itself,
// or a copy of it). Not checked by the sanitizers: a snapshot reads frames that are not its own,
// in place for a dedicated fiber (the owner's activity tells whether they changed meanwhile).
__attribute__((no_sanitize("address", "thread"))) static uintptr_t read_word(
    const char *bytes, uintptr_t sp, uintptr_t address) {
  return *(const volatile uintptr_t *)(const void *)(bytes + (address - sp));
}

// Walks the frame-pointer chain of the frames [sp, high) held at `bytes`.
static size_t walk(const char *bytes, uintptr_t sp, uintptr_t high, uintptr_t *addresses,
                   size_t capacity) {
  size_t count = 0;
  if (sp + COV_FRAME_RETURN + sizeof(uintptr_t) > high || capacity == 0) return 0;
  addresses[count++] = strip_code_address(read_word(bytes, sp, sp + COV_FRAME_RETURN));
  uintptr_t frame = read_word(bytes, sp, sp + COV_FRAME_FP);
  uintptr_t lowest = sp + COV_FRAME_RETURN + sizeof(uintptr_t);
  while (count < capacity && frame >= lowest && frame + 2 * sizeof(uintptr_t) <= high &&
         frame % sizeof(uintptr_t) == 0) {
    uintptr_t return_address = read_word(bytes, sp, frame + sizeof(uintptr_t));
    if (return_address == 0) break;
    addresses[count++] = strip_code_address(return_address);
    uintptr_t next = read_word(bytes, sp, frame);
    if (next <= frame) break;  // frames grow towards `high`; anything else ends the chain
    lowest = frame + 2 * sizeof(uintptr_t);
    frame = next;
  }
  return count;
}

// Whether a dedicated fiber has started and is neither running nor finished; read without
// synchronisation, like its frames (see cov_fiber_backtrace).
__attribute__((no_sanitize("address", "thread"))) static int dedicated_fiber_is_switched_out(
    const cov_fiber_t *fiber) {
  const volatile cov_fiber_t *record = fiber;
  return record->started && !record->running && !record->finished;
}

static size_t used_bytes(const cov_fiber_frames_t *frames) {
  return (size_t)((const char *)frames->stack_high - (const char *)frames->sp);
}

typedef struct {
  uintptr_t *addresses;
  size_t capacity;
  size_t *in_use;
} walk_request_t;

// A shared fiber's frames, under its stack's lock.
static size_t walk_locked(cov_fiber_frames_t *frames, void *context) {
  walk_request_t *request = context;
  *request->in_use = used_bytes(frames);
  return walk(frames->bytes, (uintptr_t)frames->sp, (uintptr_t)frames->stack_high,
              request->addresses, request->capacity);
}

size_t cov_fiber_backtrace(const cov_fiber_t *fiber, uintptr_t *addresses, size_t capacity,
                           size_t *in_use) {
  *in_use = 0;
  if (fiber->is_shared) {
    cov_fiber_frames_t frames;
    walk_request_t request = {addresses, capacity, in_use};
    return cov_shared_with_locked_frames(fiber, &frames, walk_locked, &request);
  }
  // A dedicated fiber: its record's context and its stack are read in place. The caller only
  // asks for a fiber whose owner it saw switched out, and discards the result if the owner's
  // activity changed by the time the walk is over.
  if (!dedicated_fiber_is_switched_out(fiber)) return 0;
  const cov_stack_t *stack = cov_own_stack(fiber);
  uintptr_t sp = read_word((const char *)&fiber->context, (uintptr_t)&fiber->context,
                           (uintptr_t)&fiber->context);
  uintptr_t high = (uintptr_t)fiber;  // the record sits at the top of the stack
  if (sp < (uintptr_t)stack->base || sp >= high) return 0;
  *in_use = (size_t)((uintptr_t)stack->base + stack->size - sp);
  return walk((const char *)sp, sp, high, addresses, capacity);
}

// MARK: - Copies

// Copies `size` bytes of a stack whose AddressSanitizer shadow may mark parts of it (the
// redzones of live frames) as poisoned, without checking them: for snapshots of frames.
__attribute__((no_sanitize("address"))) static void copy_stack_bytes(void *destination,
                                                                    const void *source,
                                                                    size_t size) {
  // Byte by byte through volatile: a memcpy call would be checked by ASan's interceptor.
  volatile char *to = destination;
  const volatile char *from = source;
  for (size_t i = 0; i < size; i++) to[i] = from[i];
}

typedef struct {
  void *buffer;
  size_t capacity;
} copy_request_t;

static size_t copy_into(cov_fiber_frames_t *frames, void *context) {
  copy_request_t *request = context;
  size_t used = used_bytes(frames);
  copy_stack_bytes(request->buffer, frames->bytes,
                   used < request->capacity ? used : request->capacity);
  frames->bytes = request->buffer;
  return used;
}

size_t cov_fiber_copy_frames(const cov_fiber_t *fiber, void *buffer, size_t capacity,
                             cov_fiber_frames_t *out) {
  copy_request_t request = {buffer, capacity};
  if (fiber->is_shared) return cov_shared_with_locked_frames(fiber, out, copy_into, &request);
  if (!cov_fiber_frames(fiber, out)) return 0;
  return copy_into(out, &request);
}

// MARK: - Stacks

void cov_fiber_stack_info(const cov_fiber_t *fiber, cov_fiber_stack_info_t *info,
                          int measure_high_water) {
  memset(info, 0, sizeof *info);
  info->shared = fiber->is_shared;
  const cov_stack_t *stack;
  if (fiber->is_shared) {
    if (!__atomic_load_n(&fiber->bound, __ATOMIC_ACQUIRE)) return;
    stack = &fiber->shared.stack->stack;
  } else {
    stack = cov_own_stack(fiber);
  }
  info->size = stack->size;
  info->low = (uintptr_t)stack->base;
  info->high = (uintptr_t)stack->base + stack->size;
  if (!measure_high_water) return;
  // The lowest page of the stack that is resident: stacks are committed lazily, page by page
  // from the top, so it marks the deepest the stack has been used since it was mapped.
  size_t page = cov_page_size();
  uintptr_t first = (info->low + page - 1) & ~(uintptr_t)(page - 1);
  enum { PAGES_PER_CALL = 256 };
#if defined(__APPLE__)
  char resident[PAGES_PER_CALL];
#else
  unsigned char resident[PAGES_PER_CALL];
#endif
  for (uintptr_t at = first; at < info->high; at += (uintptr_t)PAGES_PER_CALL * page) {
    size_t length = info->high - at;
    if (length > (size_t)PAGES_PER_CALL * page) length = (size_t)PAGES_PER_CALL * page;
    if (mincore((void *)at, length, resident) != 0) return;
    size_t pages = (length + page - 1) / page;
    for (size_t i = 0; i < pages; i++) {
      if (resident[i] & 1) {
        info->high_water = info->high - (at + i * page);
        return;
      }
    }
  }
}
