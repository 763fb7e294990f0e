// Groups of shared stacks: the few stacks that the fibers of one key (a scheduler, in the Swift
// layer) share, made lazily and chosen for each new fiber; the table that maps keys to groups.
// The header (section 4) states the contract; Architecture.md ("Stacks") the policy and why.
// What happens on one stack (the state word, copies, parking) is shared_stack.c's.

#include "stack_group.h"

#include "shared_stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
  COV_DEFAULT_MIN_STACKS = 4,
  COV_MAX_GROUP_STACKS = 64,
  GROUP_TABLE_SIZE = 1024,    // power of two
  GROUP_TABLE_LIMIT = 768,    // beyond: idle groups move to new keys
};

// MARK: - Configuration

static _Atomic size_t default_min_stacks = COV_DEFAULT_MIN_STACKS;

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
    cov_shared_stack_t *stack = cov_shared_stack_make(error);
    if (stack) {
      group->stacks[count] = stack;
      atomic_store_explicit(&group->count, count + 1, memory_order_release);
      result = stack;
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

// MARK: - Fork

// Every lock of this file, outermost first: the group table's, then each group's growth lock
// and its stacks' locks (shared_stack.c). Their users never hold one of them while taking
// another, except the table's, and a growth takes the stack pool's (below these in the lock
// order: fork.c).
void cov_stack_group_fork(cov_fork_phase_t phase) {
  if (phase == COV_FORK_PREPARE) pthread_mutex_lock(&table_lock);
  for (size_t i = 0; i <= GROUP_TABLE_SIZE; i++) {
    cov_stack_group_t *group = i < GROUP_TABLE_SIZE ? group_table[i].group : null_key_group;
    if (!group) continue;
    if (phase == COV_FORK_PREPARE) pthread_mutex_lock(&group->grow_lock);
    size_t count = atomic_load_explicit(&group->count, memory_order_acquire);
    for (size_t k = 0; k < count; k++) cov_shared_stack_fork(group->stacks[k], phase);
    if (phase == COV_FORK_PARENT) pthread_mutex_unlock(&group->grow_lock);
    if (phase == COV_FORK_CHILD) pthread_mutex_init(&group->grow_lock, NULL);
  }
  if (phase == COV_FORK_PARENT) pthread_mutex_unlock(&table_lock);
  if (phase == COV_FORK_CHILD) pthread_mutex_init(&table_lock, NULL);
}
