// The registry of live coroutines and generators (cov_registry.h).
//
// Slots are handed out from a per-thread cache (no lock, no shared cache line on the common
// path), which is refilled from, and spills into, a global free list in batches under one lock;
// new slots are carved from the end of the table, a chunk of 4,096 entries at a time. Chunks
// are never freed, so an entry's address is stable for the life of the process. Identifiers come
// from one counter (fetch-add), so they follow registration order across threads.

#include "cov_registry.h"
#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Atomic(cov_registry_entry_t *) cov_registry_chunks[COV_REGISTRY_MAX_CHUNKS];

enum {
  CHUNK_ENTRIES = 1u << COV_REGISTRY_CHUNK_SHIFT,
  CACHE_CAPACITY = COV_REGISTRY_CACHE_CAPACITY,
  // A thread that starts coroutines others finish (or the reverse) goes to the global list once
  // per batch: large batches keep that rare.
  BATCH = CACHE_CAPACITY / 2,
};

// Raised while a snapshot visits the chunk.
_Atomic(uint8_t) cov_registry_chunk_scanning[COV_REGISTRY_MAX_CHUNKS];

_Atomic(uint64_t) cov_registry_serial = 1;
static _Atomic(uint64_t) overflow_count;

// The global free list and the end of the carved table, under `table_lock`. `scan_lock` is held
// by a snapshot for each chunk it visits; leavers of that chunk wait on it.
static cov_lock_t table_lock;
static cov_lock_t scan_lock;
static uint32_t *free_slots;
static size_t free_count, free_capacity;
static uint32_t carved;  // slots [0, carved) exist

COV_TLS cov_registry_slot_cache_t cov_registry_slot_cache;
#define slot_cache cov_registry_slot_cache
static pthread_key_t slot_cache_key;
static pthread_once_t slot_cache_once = PTHREAD_ONCE_INIT;

static void lock(cov_lock_t *lock) { cov_lock_lock(lock); }
static void unlock(cov_lock_t *lock) { cov_lock_unlock(lock); }

// Moves up to `count` slots from the global list (carving new ones if it is empty) into the
// calling thread's cache; returns how many it moved.
static uint32_t refill(uint32_t count) {
  uint32_t moved = 0;
  lock(&table_lock);
  while (moved < count && free_count > 0) slot_cache.slots[slot_cache.count + moved++] = free_slots[--free_count];
  while (moved < count) {
    uint32_t slot = carved;
    size_t chunk = slot >> COV_REGISTRY_CHUNK_SHIFT;
    if (chunk >= COV_REGISTRY_MAX_CHUNKS) break;
    if (!atomic_load_explicit(&cov_registry_chunks[chunk], memory_order_relaxed)) {
      cov_registry_entry_t *entries = calloc(CHUNK_ENTRIES, sizeof(cov_registry_entry_t));
      if (!entries) break;
      atomic_store_explicit(&cov_registry_chunks[chunk], entries, memory_order_release);
    }
    carved++;
    slot_cache.slots[slot_cache.count + moved++] = slot;
  }
  unlock(&table_lock);
  slot_cache.count += moved;
  return moved;
}

// Gives `count` slots of the calling thread's cache back to the global list.
static void spill(uint32_t count) {
  lock(&table_lock);
  if (free_count + count > free_capacity) {
    size_t capacity = free_capacity ? free_capacity * 2 : 1024;
    while (capacity < free_count + count) capacity *= 2;
    uint32_t *grown = realloc(free_slots, capacity * sizeof *grown);
    if (!grown) {
      unlock(&table_lock);
      return;  // the slots stay cached: nothing is lost, the cache is only fuller
    }
    free_slots = grown;
    free_capacity = capacity;
  }
  for (uint32_t i = 0; i < count; i++) free_slots[free_count++] = slot_cache.slots[--slot_cache.count];
  unlock(&table_lock);
}

// At thread exit: the cached slots go back to the global list.
static void flush_slot_cache(void *unused) {
  (void)unused;
  if (slot_cache.count) spill(slot_cache.count);
}

// (The two locks need no initialisation: a zeroed cov_lock_t is an unlocked one on every
// platform, as os_unfair_lock's initializer is zero.)
static void make_slot_cache_key(void) {
  pthread_key_create(&slot_cache_key, flush_slot_cache);
}

// The calling thread's cache gets a destructor that gives its slots back at thread exit.
static void register_cache(void) {
  pthread_once(&slot_cache_once, make_slot_cache_key);
  // Any non-NULL value: it only makes the destructor run at thread exit.
  pthread_setspecific(slot_cache_key, &slot_cache);
  slot_cache.registered = 1;
}

uint32_t cov_registry_enter_slow(uintptr_t object, uint64_t *id) {
  if (!slot_cache.registered) register_cache();
  if (refill(BATCH) == 0) {
    atomic_fetch_add_explicit(&overflow_count, 1, memory_order_relaxed);
    *id = 0;
    return COV_REGISTRY_NO_SLOT;
  }
  return cov_registry_enter(object, id);
}

void cov_registry_wait_for_scan(void) {
  lock(&scan_lock);
  unlock(&scan_lock);
}

void cov_registry_leave_slow(uint32_t slot) {
  // A thread that only ever leaves (coroutines started elsewhere finish here) still gives its
  // cache back when it exits.
  if (!slot_cache.registered) register_cache();
  if (slot_cache.count == CACHE_CAPACITY) spill(BATCH);
  slot_cache.slots[slot_cache.count++] = slot;
}

void cov_registry_quiesce(uint32_t slot) {
  if (slot == COV_REGISTRY_NO_SLOT) return;
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&cov_registry_chunk_scanning[slot >> COV_REGISTRY_CHUNK_SHIFT],
                           memory_order_seq_cst))
    cov_registry_wait_for_scan();
}

uint64_t cov_registry_next_id(void) {
  return atomic_load_explicit(&cov_registry_serial, memory_order_relaxed);
}

uint64_t cov_registry_overflow_count(void) {
  return atomic_load_explicit(&overflow_count, memory_order_relaxed);
}

void cov_registry_visit(void (*visit)(void *context, cov_registry_entry_t *entry, uintptr_t object),
                        void *context) {
  pthread_once(&slot_cache_once, make_slot_cache_key);
  lock(&table_lock);
  uint32_t end = carved;
  unlock(&table_lock);
  for (uint32_t first = 0; first < end; first += CHUNK_ENTRIES) {
    size_t chunk = first >> COV_REGISTRY_CHUNK_SHIFT;
    cov_registry_entry_t *entries =
        atomic_load_explicit(&cov_registry_chunks[chunk], memory_order_acquire);
    if (!entries) continue;
    lock(&scan_lock);
    atomic_store_explicit(&cov_registry_chunk_scanning[chunk], 1, memory_order_seq_cst);
    uint32_t count = end - first < CHUNK_ENTRIES ? end - first : CHUNK_ENTRIES;
    for (uint32_t i = 0; i < count; i++) {
      uintptr_t object = atomic_load_explicit(&entries[i].object, memory_order_seq_cst);
      if (object) visit(context, &entries[i], object);
    }
    atomic_store_explicit(&cov_registry_chunk_scanning[chunk], 0, memory_order_release);
    unlock(&scan_lock);
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
