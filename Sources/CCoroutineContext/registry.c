// The registry of live coroutines and generators (cov_registry.h).
//
// Free slots are lists linked through their entries, in magazines (cov_registry.h): a thread
// pops and pushes slots on its own magazines with no lock and no shared cache line, and trades
// whole magazines with a global store under one lock; new slots are carved from the end of the
// table, a chunk of 4,096 entries at a time. Chunks are never freed, so an entry's address is
// stable for the life of the process. Serial numbers come from one counter (fetch-add), so they
// follow registration order across threads.

#include "registry.h"

#include "diagnostics.h"
#include "thread_exit.h"

#include <errno.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Atomic(cov_registry_entry_t *) cov_registry_chunks[COV_REGISTRY_MAX_CHUNKS];

enum {
  CHUNK_ENTRIES = 1u << COV_REGISTRY_CHUNK_SHIFT,
  BATCH = COV_REGISTRY_BATCH,
  // After the table failed to grow: no new attempt (a system call under the table's lock, on
  // every start) for this long.
  GROWTH_RETRY_NANOSECONDS = 1000 * 1000 * 1000,
};

// Raised while a snapshot visits the chunk.
_Atomic(uint8_t) cov_registry_chunk_scanning[COV_REGISTRY_MAX_CHUNKS];

// Each on a cache line of its own: the serial number is written by every registration, the
// count of visits read by every leave.
_Alignas(64) _Atomic(uint64_t) cov_registry_serial __attribute__((visibility("hidden"))) = 1;
_Alignas(64) _Atomic(uint32_t) cov_registry_visits __attribute__((visibility("hidden")));
_Alignas(64) static _Atomic(uint64_t) overflow_count;

// The global store of magazines and the end of the carved table, under `table_lock`.
// `scan_lock` is held by a snapshot for each chunk it visits; leavers of that chunk wait on it.
// (Neither lock needs initialisation: a zeroed cov_lock_t is an unlocked one on every
// platform, os_unfair_lock's initializer being zero.)
static cov_lock_t table_lock;
static cov_lock_t scan_lock;
static cov_registry_slot_list_t *magazines;
static size_t magazine_count, magazine_capacity;
static uint32_t carved;  // entries [0, carved) of the table exist
// When the table last failed to grow (monotonic nanoseconds; 0: it has not, or grew since).
static uint64_t growth_failed_at;
static _Atomic int growth_failure_forced;  // tests (cov_registry_test_growth_failures)
static unsigned growth_failures;

COV_TLS cov_registry_slot_cache_t cov_registry_slot_cache = {
    COV_REGISTRY_NO_SLOT, 0, {COV_REGISTRY_NO_SLOT, 0}, {COV_REGISTRY_NO_SLOT, 0}};
#define slot_cache cov_registry_slot_cache

static const cov_registry_slot_list_t empty_list = {COV_REGISTRY_NO_SLOT, 0};

static void (*_Atomic forget_name)(uint64_t id);

void cov_registry_set_name_forgetter(void (*forget)(uint64_t id)) {
  atomic_store_explicit(&forget_name, forget, memory_order_release);
}

// The slot of entry `index` of the table.
static uint32_t slot_of(uint32_t index) {
  return (index >> COV_REGISTRY_CHUNK_SHIFT) << COV_REGISTRY_SLOT_CHUNK_SHIFT |
         (uint32_t)((index & (CHUNK_ENTRIES - 1)) * sizeof(cov_registry_entry_t) +
                    COV_REGISTRY_SLOT_BIAS);
}

static size_t chunk_of(uint32_t slot) { return slot >> COV_REGISTRY_SLOT_CHUNK_SHIFT; }

static uint64_t monotonic_nanoseconds(void);

// Puts a (non-empty) magazine in the global store; false if the store cannot grow (the caller
// keeps it).
static bool store_magazine(cov_registry_slot_list_t list) {
  cov_lock_lock(&table_lock);
  if (magazine_count == magazine_capacity) {
    size_t capacity = magazine_capacity ? magazine_capacity * 2 : 64;
    cov_registry_slot_list_t *grown = realloc(magazines, capacity * sizeof *grown);
    if (!grown) {
      cov_lock_unlock(&table_lock);
      return false;
    }
    magazines = grown;
    magazine_capacity = capacity;
  }
  magazines[magazine_count++] = list;
  cov_lock_unlock(&table_lock);
  return true;
}

// A new chunk for entries [carved, carved + CHUNK_ENTRIES) (lock held), or NULL: the table is at
// its largest, or the memory cannot be had (then no new attempt is made for a while, and the
// failure is reported once, on stderr).
static cov_registry_entry_t *grow_locked(size_t chunk) {
  if (chunk >= COV_REGISTRY_MAX_CHUNKS) return NULL;
  uint64_t now = 0;
  if (growth_failed_at) {
    now = monotonic_nanoseconds();
    if (now - growth_failed_at < GROWTH_RETRY_NANOSECONDS) return NULL;
  }
  // Zeroed pages from the kernel, touched only as slots are used (calloc would clear a block
  // reused from the heap: 96 KiB of stores up front).
  void *mapped = atomic_load_explicit(&growth_failure_forced, memory_order_relaxed)
                     ? MAP_FAILED
                     : mmap(NULL, CHUNK_ENTRIES * sizeof(cov_registry_entry_t),
                            PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    growth_failures++;
    if (!growth_failed_at)
      cov_warn("the registry of live coroutines cannot grow (no memory for another 4,096 "
               "entries): coroutines and generators started now run unlisted (a snapshot's "
               "`unlisted` counts them)");
    growth_failed_at = now ? now : monotonic_nanoseconds();
    if (!growth_failed_at) growth_failed_at = 1;
    return NULL;
  }
  growth_failed_at = 0;
  cov_registry_entry_t *entries = mapped;
  atomic_store_explicit(&cov_registry_chunks[chunk], entries, memory_order_release);
  return entries;
}

// A magazine from the global store, or BATCH new slots carved from the end of the table (linked
// in order); an empty list if the table cannot grow.
static cov_registry_slot_list_t take_magazine(void) {
  cov_lock_lock(&table_lock);
  cov_registry_slot_list_t list = empty_list;
  if (magazine_count > 0) {
    list = magazines[--magazine_count];
  } else {
    size_t chunk = carved >> COV_REGISTRY_CHUNK_SHIFT;
    cov_registry_entry_t *entries =
        chunk < COV_REGISTRY_MAX_CHUNKS
            ? atomic_load_explicit(&cov_registry_chunks[chunk], memory_order_relaxed) : NULL;
    if (!entries) entries = grow_locked(chunk);
    if (entries) {
      // BATCH divides CHUNK_ENTRIES: a magazine never straddles two chunks, and the slots of
      // its consecutive entries are one entry's size apart.
      uint32_t first = slot_of(carved);
      cov_registry_entry_t *entry = &entries[carved & (CHUNK_ENTRIES - 1)];
      for (uint32_t i = 0; i + 1 < BATCH; i++)
        atomic_store_explicit(&entry[i].id, first + (i + 1) * (uint32_t)sizeof *entry,
                              memory_order_relaxed);
      atomic_store_explicit(&entry[BATCH - 1].id, COV_REGISTRY_NO_SLOT, memory_order_relaxed);
      carved += BATCH;
      list = (cov_registry_slot_list_t){first, BATCH};
    }
  }
  cov_lock_unlock(&table_lock);
  return list;
}
_Static_assert(CHUNK_ENTRIES % BATCH == 0, "magazines must not straddle chunks");

// At thread exit (thread_exit.c): the thread's magazines go back to the global store (if it
// cannot take them, they stay here, lost with the thread), and the cache counts as unarmed, so
// that a slot given back later in the thread's exit arms the hook again.
static void flush_slot_cache(void) {
  slot_cache.limit = 0;
  if (slot_cache.take != COV_REGISTRY_NO_SLOT) {
    cov_registry_slot_list_t take = {slot_cache.take, 0};
    for (uint32_t slot = take.head; slot != COV_REGISTRY_NO_SLOT; take.count++)
      slot = (uint32_t)atomic_load_explicit(&cov_registry_entry(slot)->id, memory_order_relaxed);
    if (store_magazine(take)) slot_cache.take = COV_REGISTRY_NO_SLOT;
  }
  if (slot_cache.give.count && store_magazine(slot_cache.give)) slot_cache.give = empty_list;
  if (slot_cache.spare.count && store_magazine(slot_cache.spare)) slot_cache.spare = empty_list;
}

// The thread-exit hook will give the cache back.
static void arm_cache(void) {
  // (If the hook cannot be armed, slots are still cached: lost when the thread exits.)
  cov_thread_exit_arm(flush_slot_cache);
  slot_cache.limit = BATCH;
}

// The take magazine is empty: the slots given back here first, else the spare, else a magazine
// from the global store.
uint32_t cov_registry_enter_slow(uintptr_t object) {
  if (slot_cache.limit == 0) arm_cache();
  cov_registry_slot_list_t *local =
      slot_cache.give.count > 0 ? &slot_cache.give : &slot_cache.spare;
  if (local->count > 0) {
    slot_cache.take = local->head;
    *local = empty_list;
  } else {
    slot_cache.take = take_magazine().head;
  }
  if (slot_cache.take == COV_REGISTRY_NO_SLOT) {
    atomic_fetch_add_explicit(&overflow_count, 1, memory_order_relaxed);
    return COV_REGISTRY_NO_SLOT;
  }
  return cov_registry_enter(object);
}

// Waits while a snapshot visits the chunk of `slot` (sequentially consistent loads, after the
// caller's own sequentially consistent store or fence: see cov_registry_leave).
static void wait_for_scan(uint32_t slot) {
  if (atomic_load_explicit(&cov_registry_visits, memory_order_seq_cst) != 0 &&
      atomic_load_explicit(&cov_registry_chunk_scanning[chunk_of(slot)], memory_order_seq_cst)) {
    cov_lock_lock(&scan_lock);
    cov_lock_unlock(&scan_lock);
  }
}

void cov_registry_leave_slow(uint32_t slot, uintptr_t object) {
  cov_registry_entry_t *entry = cov_registry_entry(slot);
  // First the visit of the chunk, which may be reading the owner's name.
  wait_for_scan(slot);
  if (object & COV_REGISTRY_NAMED) {
    // The id word is still the serial number: the entry is not on a free list yet.
    void (*forget)(uint64_t) = atomic_load_explicit(&forget_name, memory_order_acquire);
    if (forget) forget(atomic_load_explicit(&entry->id, memory_order_relaxed));
  }
  // A thread that only ever leaves (coroutines started elsewhere finish here) still gives its
  // slots back when it exits.
  if (slot_cache.limit == 0) arm_cache();
  if (slot_cache.give.count >= BATCH) {
    if (slot_cache.spare.count == 0) {
      slot_cache.spare = slot_cache.give;
      slot_cache.give = empty_list;
    } else if (store_magazine(slot_cache.spare)) {
      slot_cache.spare = slot_cache.give;
      slot_cache.give = empty_list;
    }
    // (If the store could not grow, the give magazine simply grows past BATCH.)
  }
  atomic_store_explicit(&entry->id, slot_cache.give.head, memory_order_relaxed);
  slot_cache.give.head = slot;
  slot_cache.give.count++;
}

void cov_registry_quiesce(uint32_t slot) {
  if (slot == COV_REGISTRY_NO_SLOT) return;
  atomic_thread_fence(memory_order_seq_cst);
  wait_for_scan(slot);
}

uint64_t cov_registry_next_id(void) {
  return atomic_load_explicit(&cov_registry_serial, memory_order_relaxed);
}

uint64_t cov_registry_overflow_count(void) {
  return atomic_load_explicit(&overflow_count, memory_order_relaxed);
}

uint64_t cov_registry_live_count(void) {
  cov_lock_lock(&table_lock);
  uint32_t end = carved;
  cov_lock_unlock(&table_lock);
  uint64_t live = 0;
  for (uint32_t first = 0; first < end; first += CHUNK_ENTRIES) {
    cov_registry_entry_t *entries = atomic_load_explicit(
        &cov_registry_chunks[first >> COV_REGISTRY_CHUNK_SHIFT], memory_order_acquire);
    if (!entries) continue;
    uint32_t count = end - first < CHUNK_ENTRIES ? end - first : CHUNK_ENTRIES;
    for (uint32_t i = 0; i < count; i++)
      live += atomic_load_explicit(&entries[i].object, memory_order_relaxed) != 0;
  }
  return live;
}

unsigned cov_registry_test_growth_failures(int force) {
  atomic_store_explicit(&growth_failure_forced, force, memory_order_relaxed);
  cov_lock_lock(&table_lock);
  unsigned failures = growth_failures;
  if (!force) growth_failed_at = 0;  // the next need tries again at once
  cov_lock_unlock(&table_lock);
  return failures;
}

void cov_registry_visit(void (*visit)(void *context, cov_registry_entry_t *entry, uintptr_t object),
                        void *context) {
  cov_lock_lock(&table_lock);
  uint32_t end = carved;
  cov_lock_unlock(&table_lock);
  // Before any chunk's flag (sequentially consistent, as the leaves' checks): a leave that does
  // not see the count did its exchange before the visit could read its entry.
  atomic_fetch_add_explicit(&cov_registry_visits, 1, memory_order_seq_cst);
  for (uint32_t first = 0; first < end; first += CHUNK_ENTRIES) {
    size_t chunk = first >> COV_REGISTRY_CHUNK_SHIFT;
    cov_registry_entry_t *entries =
        atomic_load_explicit(&cov_registry_chunks[chunk], memory_order_acquire);
    if (!entries) continue;
    cov_lock_lock(&scan_lock);
    atomic_store_explicit(&cov_registry_chunk_scanning[chunk], 1, memory_order_seq_cst);
    uint32_t count = end - first < CHUNK_ENTRIES ? end - first : CHUNK_ENTRIES;
    for (uint32_t i = 0; i < count; i++) {
      uintptr_t object = atomic_load_explicit(&entries[i].object, memory_order_seq_cst);
      if (object) visit(context, &entries[i], object);
    }
    atomic_store_explicit(&cov_registry_chunk_scanning[chunk], 0, memory_order_release);
    cov_lock_unlock(&scan_lock);
  }
  atomic_fetch_sub_explicit(&cov_registry_visits, 1, memory_order_release);
}

// MARK: - Fork

// The scan lock is outermost: a visit holds it while it reads frames under shared stacks'
// locks. In the child, no visit is under way (its thread is gone, and none was inside a chunk).
void cov_registry_fork(cov_fork_phase_t phase) {
  switch (phase) {
  case COV_FORK_PREPARE:
    cov_lock_lock(&scan_lock);
    cov_lock_lock(&table_lock);
    break;
  case COV_FORK_PARENT:
    cov_lock_unlock(&table_lock);
    cov_lock_unlock(&scan_lock);
    break;
  case COV_FORK_CHILD:
    cov_lock_init(&table_lock);
    cov_lock_init(&scan_lock);
    atomic_store_explicit(&cov_registry_visits, 0, memory_order_relaxed);
    break;
  }
}

// MARK: - Time

uint64_t cov_registry_ticks_fallback(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static uint64_t monotonic_nanoseconds(void) { return cov_registry_ticks_fallback(); }

double cov_registry_ticks_per_second(void) {
#if defined(__aarch64__)
  uint64_t frequency;
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frequency));
  if (frequency) return (double)frequency;
#elif !defined(__x86_64__)
  return 1e9;
#endif
  // Measured once against the monotonic clock over about 20 ms (the time-stamp counter of
  // current x86_64 processors runs at a constant rate).
  static _Atomic(double) measured;
  double rate = atomic_load_explicit(&measured, memory_order_relaxed);
  if (rate > 0) return rate;
  uint64_t ticks0 = cov_registry_ticks(), nanos0 = monotonic_nanoseconds();
  struct timespec pause = {0, 20 * 1000 * 1000};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
  uint64_t ticks1 = cov_registry_ticks(), nanos1 = monotonic_nanoseconds();
  rate = nanos1 > nanos0 ? (double)(ticks1 - ticks0) * 1e9 / (double)(nanos1 - nanos0) : 1e9;
  atomic_store_explicit(&measured, rate, memory_order_relaxed);
  return rate;
}

uint32_t cov_registry_slots_made(void) {
  cov_lock_lock(&table_lock);
  uint32_t made = carved;
  cov_lock_unlock(&table_lock);
  return made;
}
