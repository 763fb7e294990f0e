// Shared stacks (copy-on-suspend): groups of a few stacks that many fibers run on, each fiber
// bound to one of them for life. The header (section 4) states the contract; Architecture.md
// ("Stacks") the policy and why.
//
// Every stack has one atomic state word: the occupant (the fiber whose frames are in place, or
// 0) and three flags. The common transitions are one compare-and-swap each and take no lock:
//   resume, frames in place:   F          -> F|RUNNING
//   switch-out, nobody waits:  F|RUNNING  -> F          (or 0 when F finished)
// Everything else takes the stack's lock (the LOCKED bit): evicting the occupant (copying its
// used bytes out) and restoring the fiber that is to run, parking a fiber whose stack is
// running, and the switch-out that finds waiters and hands the first one back. While LOCKED is
// set neither fast path can succeed, so the lock holder owns the word and the stack's bytes.
//
// Memory ordering: a fiber's frames are written by the thread it ran on; after it switched out,
// that thread releases the stack (a release store or CAS), and whoever copies the frames or
// runs on the stack next acquires it first. ThreadSanitizer sees exactly these atomics.

#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(COV_ASAN)
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
// LeakSanitizer does not scan a copy buffer as a stack: mark it so that it does (an ignored
// block is a root), as the frames it holds keep the suspended coroutine's objects alive.
void __lsan_ignore_object(const void *p);
#endif
#if defined(COV_TSAN)
void __tsan_release(void *address);
#endif

enum {
  COV_DEFAULT_MIN_STACKS = 4,
  COV_MAX_GROUP_STACKS = 64,
  COV_DEFAULT_COPY_LIMIT = 64 * 1024,
  COV_MIN_COPY_LIMIT = 4096,
  GROUP_TABLE_SIZE = 1024,    // power of two
  GROUP_TABLE_LIMIT = 768,    // beyond: idle groups move to new keys
  VACATED_PATTERN = 0xCD,     // debug builds: what vacated stack bytes read as
};

// MARK: - Configuration

_Atomic size_t cov_shared_copy_limit_bytes = COV_DEFAULT_COPY_LIMIT;
static _Atomic size_t default_min_stacks = COV_DEFAULT_MIN_STACKS;
static void (*park_hook)(void *);
static void (*unpark_hook)(void *);

// -1: not decided yet (build default, then COVENANT_STACK_EVICTION).
_Atomic int cov_shared_eager_value = -1;

int cov_shared_eager_slow(void) {
#if defined(DEBUG)
  int value = 1;
#else
  int value = 0;
#endif
  const char *setting = getenv("COVENANT_STACK_EVICTION");
  if (setting && strcmp(setting, "eager") == 0) value = 1;
  if (setting && strcmp(setting, "lazy") == 0) value = 0;
  int expected = -1;
  atomic_compare_exchange_strong(&cov_shared_eager_value, &expected, value);
  return atomic_load_explicit(&cov_shared_eager_value, memory_order_relaxed);
}

int cov_shared_stacks_eager_eviction(void) { return cov_shared_eager(); }

void cov_shared_stacks_set_eager_eviction(int enabled) {
  atomic_store_explicit(&cov_shared_eager_value, enabled ? 1 : 0, memory_order_relaxed);
}

size_t cov_shared_stack_copy_limit(void) {
  return atomic_load_explicit(&cov_shared_copy_limit_bytes, memory_order_relaxed);
}

void cov_shared_stack_set_copy_limit(size_t bytes) {
  if (bytes < COV_MIN_COPY_LIMIT) bytes = COV_MIN_COPY_LIMIT;
  atomic_store_explicit(&cov_shared_copy_limit_bytes, bytes, memory_order_relaxed);
}

size_t cov_shared_stacks_default_min(void) {
  return atomic_load_explicit(&default_min_stacks, memory_order_relaxed);
}

static size_t clamp_stack_count(size_t count) {
  if (count < 1) return 1;
  return count > COV_MAX_GROUP_STACKS ? COV_MAX_GROUP_STACKS : count;
}

void cov_shared_stacks_set_default_min(size_t count) {
  atomic_store_explicit(&default_min_stacks, clamp_stack_count(count), memory_order_relaxed);
}

void cov_fiber_set_parking_hooks(void (*park)(void *), void (*unpark)(void *)) {
  park_hook = park;
  unpark_hook = unpark;
}

void cov_shared_too_deep(size_t used) {
  char text[320];
  snprintf(text, sizeof text,
           "a coroutine suspended with %zu bytes of shared stack in use, more than the copy "
           "limit (%zu bytes); start it with a dedicated stack (`stackMode: .dedicated`) or "
           "raise `Coroutine.sharedStackCopyLimit`",
           used, cov_shared_stack_copy_limit());
  cov_fatal(text);
}

// MARK: - Groups

struct cov_stack_group {
  pthread_mutex_t grow_lock;
  _Atomic size_t min_stacks;
  _Atomic bool configured;  // cov_stack_group_set_configured: the owner keeps settings
  _Atomic size_t count;     // stacks[0, count) are published (release) and never removed
  _Atomic size_t cursor;    // round robin among stacks whose occupant is suspended
  cov_shared_stack_t *stacks[COV_MAX_GROUP_STACKS];
};

typedef struct {
  const void *key;  // NULL: never used; TOMBSTONE: its group moved to another key
  cov_stack_group_t *group;
} group_slot_t;

#define TOMBSTONE ((const void *)~(uintptr_t)0)

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static group_slot_t group_table[GROUP_TABLE_SIZE];  // under table_lock
static size_t group_count;                          // live keys
static size_t tombstones;
static cov_stack_group_t *null_key_group;           // the group of key NULL

// The last group this thread looked up: coroutines mostly start on the scheduler that ran the
// previous one. (A stale entry, after the group moved to another key, only shares stacks.)
static COV_TLS struct {
  const void *key;
  cov_stack_group_t *group;
} last_group;

static size_t processor_count(void) {
  static _Atomic size_t cached;
  return cov_cached_sysconf(&cached, _SC_NPROCESSORS_ONLN, 1);
}

static size_t max_stacks(const cov_stack_group_t *group) {
  size_t minimum = atomic_load_explicit(&group->min_stacks, memory_order_relaxed);
  size_t parallel = 2 * processor_count();
  return clamp_stack_count(parallel > minimum ? parallel : minimum);
}

static size_t hash_key(const void *key) {
  uint64_t value = (uint64_t)(uintptr_t)key;
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdULL;
  value ^= value >> 33;
  return (size_t)value & (GROUP_TABLE_SIZE - 1);
}

static cov_stack_group_t *make_group(void) {
  cov_stack_group_t *group = calloc(1, sizeof *group);
  if (!group) return NULL;
  pthread_mutex_init(&group->grow_lock, NULL);
  atomic_store_explicit(&group->min_stacks, cov_shared_stacks_default_min(), memory_order_relaxed);
  return group;
}

// Whether no stack of the group holds frames or waiters right now (a snapshot: it is only a
// preference for reassigning groups, never a condition for correctness).
static bool group_is_idle(cov_stack_group_t *group) {
  size_t count = atomic_load_explicit(&group->count, memory_order_acquire);
  for (size_t i = 0; i < count; i++)
    if (atomic_load_explicit(&group->stacks[i]->state, memory_order_relaxed) != 0) return false;
  return true;
}

// Puts `key` in the table (lock held; the key is not there). Reuses the first tombstone of its
// probe sequence.
static void insert_locked(const void *key, cov_stack_group_t *group) {
  size_t index = hash_key(key);
  for (size_t probe = 0; probe < GROUP_TABLE_SIZE; probe++) {
    group_slot_t *slot = &group_table[(index + probe) & (GROUP_TABLE_SIZE - 1)];
    if (slot->key == NULL || slot->key == TOMBSTONE) {
      if (slot->key == TOMBSTONE) tombstones--;
      slot->key = key;
      slot->group = group;
      group_count++;
      return;
    }
  }
}

// Rebuilds the table without tombstones (lock held).
static void rehash_locked(void) {
  static group_slot_t live[GROUP_TABLE_SIZE];
  size_t count = 0;
  for (size_t i = 0; i < GROUP_TABLE_SIZE; i++)
    if (group_table[i].key && group_table[i].key != TOMBSTONE) live[count++] = group_table[i];
  memset(group_table, 0, sizeof group_table);
  group_count = 0;
  tombstones = 0;
  for (size_t i = 0; i < count; i++) insert_locked(live[i].key, live[i].group);
}

// A group for a new key once the table holds GROUP_TABLE_LIMIT keys: an idle group moves to it
// (the key it served, whose scheduler may well be gone, gets a group again when it needs one),
// with the default minimum; failing that, the key shares a group without an entry of its own.
// Groups are only stacks: sharing costs some copying, never correctness.
static cov_stack_group_t *reassign_locked(const void *key) {
  size_t start = hash_key(key);
  for (size_t probe = 0; probe < GROUP_TABLE_SIZE; probe++) {
    group_slot_t *slot = &group_table[(start + probe) & (GROUP_TABLE_SIZE - 1)];
    if (!slot->key || slot->key == TOMBSTONE || !group_is_idle(slot->group)) continue;
    cov_stack_group_t *group = slot->group;
    slot->key = TOMBSTONE;
    slot->group = NULL;
    group_count--;
    tombstones++;
    if (tombstones > GROUP_TABLE_SIZE / 8) rehash_locked();
    atomic_store_explicit(&group->min_stacks, cov_shared_stacks_default_min(), memory_order_relaxed);
    atomic_store_explicit(&group->configured, false, memory_order_relaxed);
    insert_locked(key, group);
    return group;
  }
  for (size_t probe = 0; probe < GROUP_TABLE_SIZE; probe++) {
    group_slot_t *slot = &group_table[(start + probe) & (GROUP_TABLE_SIZE - 1)];
    if (slot->group) return slot->group;
  }
  return NULL;
}

// Looks `key` up under the table lock, creating (or reassigning) its group if `create`.
static cov_stack_group_t *lookup_locked(const void *key, bool create) {
  if (!key) {
    if (!null_key_group && create) null_key_group = make_group();
    return null_key_group;
  }
  size_t index = hash_key(key);
  for (size_t probe = 0; probe < GROUP_TABLE_SIZE; probe++) {
    group_slot_t *slot = &group_table[(index + probe) & (GROUP_TABLE_SIZE - 1)];
    if (slot->key == key) return slot->group;
    if (slot->key == NULL) break;
  }
  if (!create) return NULL;
  if (group_count >= GROUP_TABLE_LIMIT) return reassign_locked(key);
  cov_stack_group_t *group = make_group();
  if (group) insert_locked(key, group);
  return group;
}

cov_stack_group_t *cov_stack_group(const void *key) {
  cov_stack_group_t *group = last_group.group;
  if (__builtin_expect(group && last_group.key == key, 1)) return group;
  pthread_mutex_lock(&table_lock);
  group = lookup_locked(key, true);
  pthread_mutex_unlock(&table_lock);
  if (group) {
    last_group.key = key;
    last_group.group = group;
  }
  return group;
}

void cov_group_set_min(cov_stack_group_t *group, size_t min_stacks) {
  if (min_stacks &&
      atomic_load_explicit(&group->min_stacks, memory_order_relaxed) != min_stacks)
    atomic_store_explicit(&group->min_stacks, clamp_stack_count(min_stacks), memory_order_relaxed);
}

void cov_stack_group_set_configured(cov_stack_group_t *group, int configured) {
  atomic_store_explicit(&group->configured, configured != 0, memory_order_release);
}

int cov_stack_group_is_configured(const cov_stack_group_t *group) {
  return atomic_load_explicit(&group->configured, memory_order_acquire);
}

size_t cov_stack_group_stack_count(const void *key) {
  pthread_mutex_lock(&table_lock);
  cov_stack_group_t *group = lookup_locked(key, false);
  pthread_mutex_unlock(&table_lock);
  return group ? atomic_load_explicit(&group->count, memory_order_acquire) : 0;
}

// Adds a stack to the group if it still has fewer than `below` (another thread may have added
// one meanwhile: then that one is returned). NULL if none could be allocated (*error set).
static cov_shared_stack_t *grow(cov_stack_group_t *group, size_t below, int *error) {
  pthread_mutex_lock(&group->grow_lock);
  size_t count = atomic_load_explicit(&group->count, memory_order_relaxed);
  cov_shared_stack_t *result = NULL;
  if (count >= below) {
    result = count > 0 ? group->stacks[count - 1] : NULL;
  } else {
    cov_shared_stack_t *stack = calloc(1, sizeof *stack);
    *error = stack ? cov_stack_allocate(0, &stack->stack) : ENOMEM;
    if (*error == 0) {
      stack->top = (char *)(((uintptr_t)stack->stack.base + stack->stack.size) & ~(uintptr_t)15);
      group->stacks[count] = stack;
      atomic_store_explicit(&group->count, count + 1, memory_order_release);
      result = stack;
    } else {
      free(stack);
    }
  }
  pthread_mutex_unlock(&group->grow_lock);
  return result;
}

int cov_group_ensure_stack(cov_stack_group_t *group) {
  if (atomic_load_explicit(&group->count, memory_order_acquire) > 0) return 0;
  int error = ENOMEM;
  return grow(group, 1, &error) ? 0 : error;
}

// The first stack of stacks[from, to) that is empty (`empty`) or whose occupant is not running,
// starting at `from + start % (to - from)`; NULL if none.
static cov_shared_stack_t *find_stack(cov_stack_group_t *group, size_t from, size_t to,
                                      size_t start, bool empty) {
  for (size_t i = 0; from < to && i < to - from; i++) {
    cov_shared_stack_t *stack = group->stacks[from + (start + i) % (to - from)];
    uintptr_t state = atomic_load_explicit(&stack->state, memory_order_relaxed);
    if (empty ? (state & ~(uintptr_t)COV_STACK_FLAGS) == 0 : !(state & COV_STACK_RUNNING))
      return stack;
  }
  return NULL;
}

cov_shared_stack_t *cov_group_bind(cov_stack_group_t *group) {
  size_t count = atomic_load_explicit(&group->count, memory_order_acquire);
  size_t minimum = atomic_load_explicit(&group->min_stacks, memory_order_relaxed);
  // The group's first `minimum` stacks serve it normally; the ones beyond (made while all were
  // running, or left by a larger minimum) only while those are all running.
  size_t usual = count < minimum ? count : minimum;
  int error;
  // An empty stack: nothing to copy, ever, for as long as the new fiber keeps to itself.
  cov_shared_stack_t *stack = find_stack(group, 0, usual, 0, true);
  if (stack) return stack;
  if (count < minimum) stack = grow(group, minimum, &error);
  // One whose occupant is suspended (round robin): copied out when the new fiber first runs.
  size_t start = atomic_fetch_add_explicit(&group->cursor, 1, memory_order_relaxed);
  if (!stack) stack = find_stack(group, 0, usual, start, false);
  // All are running: the scheduler runs that many fibers at once; use or add another.
  if (!stack) stack = find_stack(group, usual, count, 0, true);
  if (!stack) stack = find_stack(group, usual, count, start, false);
  if (!stack && count < max_stacks(group)) stack = grow(group, count + 1, &error);
  return stack ? stack : group->stacks[start % count];
}

// MARK: - The stack's lock

static uintptr_t lock_stack(cov_shared_stack_t *stack) {
  unsigned spins = 0;
  uintptr_t state = atomic_load_explicit(&stack->state, memory_order_relaxed);
  for (;;) {
    if (!(state & COV_STACK_LOCKED)) {
      if (atomic_compare_exchange_weak_explicit(&stack->state, &state, state | COV_STACK_LOCKED,
                                                memory_order_acquire, memory_order_relaxed))
        return state;
      continue;
    }
    // Held for a copy of at most the copy limit, or a list operation.
    if (++spins > 100) sched_yield();
    else cov_cpu_relax();
    state = atomic_load_explicit(&stack->state, memory_order_relaxed);
  }
}

static void unlock_stack(cov_shared_stack_t *stack, uintptr_t state) {
  atomic_store_explicit(&stack->state, state & ~(uintptr_t)COV_STACK_LOCKED, memory_order_release);
}

// MARK: - Fork

// Every lock of this file, outermost first: the group table's, then each group's growth lock
// and its stacks' locks (no copy, eviction or wait-list change is then half done in the
// child's copy). Their users never hold one of them while taking another, except the table's,
// and a growth calls stack.c (whose lock comes after these). In the child, a stack whose
// occupant was running on another thread stays running: fibers bound to it park for ever.
void cov_shared_fork(cov_fork_phase_t phase) {
  if (phase == COV_FORK_PREPARE) pthread_mutex_lock(&table_lock);
  for (size_t i = 0; i <= GROUP_TABLE_SIZE; i++) {
    cov_stack_group_t *group = i < GROUP_TABLE_SIZE ? group_table[i].group : null_key_group;
    if (!group) continue;
    if (phase == COV_FORK_PREPARE) pthread_mutex_lock(&group->grow_lock);
    size_t count = atomic_load_explicit(&group->count, memory_order_acquire);
    for (size_t k = 0; k < count; k++) {
      cov_shared_stack_t *stack = group->stacks[k];
      if (phase == COV_FORK_PREPARE) lock_stack(stack);
      else unlock_stack(stack, atomic_load_explicit(&stack->state, memory_order_relaxed));
    }
    if (phase == COV_FORK_PARENT) pthread_mutex_unlock(&group->grow_lock);
    if (phase == COV_FORK_CHILD) pthread_mutex_init(&group->grow_lock, NULL);
  }
  if (phase == COV_FORK_PARENT) pthread_mutex_unlock(&table_lock);
  if (phase == COV_FORK_CHILD) pthread_mutex_init(&table_lock, NULL);
}

// MARK: - Copies (lock held)

void cov_copy_stack_bytes(void *destination, const void *source, size_t size)
    __attribute__((no_sanitize("address")));
void cov_copy_stack_bytes(void *destination, const void *source, size_t size) {
  // Byte by byte through volatile: a memcpy call would be checked by ASan's interceptor.
  volatile char *to = destination;
  const volatile char *from = source;
  for (size_t i = 0; i < size; i++) to[i] = from[i];
}

static void unpoison(const void *address, size_t size) {
#if defined(COV_ASAN)
  __asan_unpoison_memory_region(address, size);
#else
  (void)address;
  (void)size;
#endif
}

// Stops the process: no memory for the copy of a suspended fiber's frames. (It cannot go on: the
// stack is needed by the fiber being switched in, and the occupant's frames have nowhere to go.)
static __attribute__((noreturn, cold)) void out_of_memory_for_copy(size_t bytes) {
  char text[200];
  snprintf(text, sizeof text,
           "out of memory: malloc(%zu) failed for the copy of a suspended coroutine's frames "
           "off its shared stack",
           bytes);
  cov_fatal(text);
}

// Copies the occupant's used bytes [sp, top) to its buffer (grown, or shrunk when far too big).
static void evict(cov_shared_stack_t *stack, cov_fiber_t *occupant) {
  char *sp = occupant->context;
  size_t used = (size_t)(stack->top - sp);
  size_t capacity = occupant->shared.saved_capacity;
  if (used > capacity || (capacity > 4096 && capacity / 4 > used)) {
    free(occupant->shared.saved);
    // Exactly what is used (a multiple of 8: stack pointers are 8-aligned at a switch): malloc
    // adds an 8-byte header and rounds its chunks to 16, so 16k + 8 bytes fill one exactly.
    capacity = (used + 7) & ~(size_t)7;
    occupant->shared.saved = malloc(capacity);
    if (!occupant->shared.saved) out_of_memory_for_copy(capacity);
#if defined(COV_ASAN)
    __lsan_ignore_object(occupant->shared.saved);
#endif
    occupant->shared.saved_capacity = (uint32_t)capacity;
  }
  // The frames' redzones are dropped from ASan's shadow (the bytes are what matter, and the
  // next fiber on these addresses must not trip over them); they come back clean.
  unpoison(sp, used);
  memcpy(occupant->shared.saved, sp, used);
  occupant->shared.saved_size = (uint32_t)used;
#if defined(DEBUG)
  memset(sp, VACATED_PATTERN, used);
#endif
}

static void restore(cov_fiber_t *fiber) {
  size_t size = fiber->shared.saved_size;
  unpoison(fiber->context, size);
  memcpy(fiber->context, fiber->shared.saved, size);
  fiber->shared.saved_size = 0;
}

// Eager eviction left [poisoned_low, top) poisoned while nobody used it: the next occupant does.
void cov_shared_clear_poison(cov_shared_stack_t *stack) {
#if defined(COV_ASAN)
  if (stack->poisoned_low) {
    __asan_unpoison_memory_region((void *)stack->poisoned_low,
                                  (size_t)((uintptr_t)stack->top - stack->poisoned_low));
    stack->poisoned_low = 0;
  }
#else
  (void)stack;
#endif
}

// MARK: - Acquire and release

// Waiters being handed back on this thread. An unpark hook may resume the waiter at once (an
// immediate scheduler does), whose switch-out may hand back another waiter, and so on: those
// are queued here and handed back by the outermost call, so the nesting stays one level deep
// however many coroutines wait on a stack.
static COV_TLS struct {
  cov_fiber_t *head, *tail;  // linked through next_waiter (free once off a wait list)
  bool draining;
} handing_back;

static void hand_back(cov_fiber_t *waiter) {
  waiter->next_waiter = NULL;
  if (handing_back.tail) handing_back.tail->next_waiter = waiter;
  else handing_back.head = waiter;
  handing_back.tail = waiter;
  if (handing_back.draining) return;
  handing_back.draining = true;
  while (handing_back.head) {
    cov_fiber_t *next = handing_back.head;
    handing_back.head = next->next_waiter;
    if (!handing_back.head) handing_back.tail = NULL;
#if defined(COV_TSAN)
    __tsan_release(next);  // its next resume acquires it (fiber.c): the unpark is that edge
#endif
    unpark_hook(next->argument);  // set: the waiter was parked (cov_shared_acquire_slow)
  }
  handing_back.draining = false;
}

int cov_shared_acquire_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber,
                            void (*entry)(cov_transfer_t)) {
  if (!fiber->started && cov_shared_take_empty(stack, fiber, entry)) return 1;

  uintptr_t state = lock_stack(stack);
  if (state & COV_STACK_RUNNING) {
    // Its occupant runs, here or on another thread: wait in line, without blocking anyone. Only
    // the hooks can tell the fiber's owner that it is parked, and hand it back later: without
    // them it would be lost, never to run again.
    if (!park_hook || !unpark_hook)
      cov_fatal("a shared-stack fiber must wait for its stack, which another fiber is running, "
                "but no parking hooks are set (cov_fiber_set_parking_hooks): it would never "
                "run again");
    fiber->parked = true;
    fiber->next_waiter = NULL;
    if (stack->waiters_tail) stack->waiters_tail->next_waiter = fiber;
    else stack->waiters_head = fiber;
    stack->waiters_tail = fiber;
    park_hook(fiber->argument);
    unlock_stack(stack, state | COV_STACK_WAITERS);
    return 0;
  }
  cov_fiber_t *occupant = (cov_fiber_t *)(state & ~(uintptr_t)COV_STACK_FLAGS);
  if (occupant != fiber) {
    if (occupant) evict(stack, occupant);
    cov_shared_clear_poison(stack);
    if (fiber->shared.saved_size > 0) {
      restore(fiber);
    } else {
      if (fiber->started) cov_fatal("a shared-stack fiber lost its frames");
      fiber->context = cov_make_fcontext_hidden(stack->top, stack->stack.size, entry);
    }
  }
  unlock_stack(stack, (uintptr_t)fiber | COV_STACK_RUNNING | (state & COV_STACK_WAITERS));
  return 1;
}

void cov_shared_release_slow(cov_shared_stack_t *stack, cov_fiber_t *fiber) {
  bool finished = fiber->finished;
  bool copy_out = !finished && cov_shared_eager();
  lock_stack(stack);
  uintptr_t next = finished ? 0 : (uintptr_t)fiber;
  if (copy_out) {
    evict(stack, fiber);
#if defined(COV_ASAN)
    // Nobody's frames are there now: any access through a pointer into them is a bug.
    __asan_poison_memory_region(fiber->context, fiber->shared.saved_size);
    stack->poisoned_low = (uintptr_t)fiber->context;
#endif
    next = 0;
  }
  cov_fiber_t *waiter = stack->waiters_head;
  if (waiter) {
    stack->waiters_head = waiter->next_waiter;
    if (!stack->waiters_head) stack->waiters_tail = NULL;
    waiter->next_waiter = NULL;
    waiter->parked = false;
  }
  unlock_stack(stack, next | (stack->waiters_head ? COV_STACK_WAITERS : 0));
  if (waiter) hand_back(waiter);
}

// Calls `use(frames, context)` with the frames of a switched-out shared fiber, under its stack's
// lock, so that neither an eviction nor a resume moves them meanwhile, and returns what it
// returns. 0 if the fiber is running or has no frames (`frames` then filled as cov_fiber_frames
// does; all zero if its stack is running it).
static size_t with_locked_frames(const cov_fiber_t *fiber, cov_fiber_frames_t *frames,
                                 size_t (*use)(cov_fiber_frames_t *frames, void *context),
                                 void *context) {
  // Acquiring, as fiber.c publishes it (releasing) after `shared.stack`: this may run on a
  // snapshot's thread while the fiber first runs on another.
  if (!__atomic_load_n(&fiber->bound, __ATOMIC_ACQUIRE)) {
    cov_fiber_frames(fiber, frames);
    return 0;
  }
  cov_shared_stack_t *stack = fiber->shared.stack;
  uintptr_t state = lock_stack(stack);
  size_t result = 0;
  bool running_here = (state & ~(uintptr_t)COV_STACK_FLAGS) == (uintptr_t)fiber &&
                      (state & COV_STACK_RUNNING);
  if (running_here) memset(frames, 0, sizeof *frames);
  else if (cov_fiber_frames(fiber, frames)) result = use(frames, context);
  unlock_stack(stack, state);
  return result;
}

static size_t used_bytes(const cov_fiber_frames_t *frames) {
  return (size_t)((const char *)frames->stack_high - (const char *)frames->sp);
}

typedef struct {
  void *buffer;
  size_t capacity;
} copy_request_t;

static size_t copy_locked(cov_fiber_frames_t *frames, void *context) {
  copy_request_t *request = context;
  size_t used = used_bytes(frames);
  cov_copy_stack_bytes(request->buffer, frames->bytes,
                       used < request->capacity ? used : request->capacity);
  frames->bytes = request->buffer;
  return used;
}

size_t cov_shared_copy_frames(const cov_fiber_t *fiber, void *buffer, size_t capacity,
                              cov_fiber_frames_t *out) {
  copy_request_t request = {buffer, capacity};
  return with_locked_frames(fiber, out, copy_locked, &request);
}

size_t cov_walk_saved_frames(const cov_fiber_frames_t *frames, uintptr_t *addresses,
                             size_t capacity) __attribute__((visibility("hidden")));

typedef struct {
  uintptr_t *addresses;
  size_t capacity;
  size_t *in_use;
} walk_request_t;

static size_t walk_locked(cov_fiber_frames_t *frames, void *context) {
  walk_request_t *request = context;
  *request->in_use = used_bytes(frames);
  return cov_walk_saved_frames(frames, request->addresses, request->capacity);
}

// cov_fiber_backtrace for a shared fiber.
size_t cov_shared_backtrace(const cov_fiber_t *fiber, uintptr_t *addresses, size_t capacity,
                            size_t *in_use) __attribute__((visibility("hidden")));
size_t cov_shared_backtrace(const cov_fiber_t *fiber, uintptr_t *addresses, size_t capacity,
                            size_t *in_use) {
  *in_use = 0;
  cov_fiber_frames_t frames;
  walk_request_t request = {addresses, capacity, in_use};
  return with_locked_frames(fiber, &frames, walk_locked, &request);
}
