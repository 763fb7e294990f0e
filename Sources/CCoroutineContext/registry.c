// The registry of live coroutines and generators (cov_registry.h).
//
// Free slots are lists linked through their entries, in magazines (cov_registry.h): a thread
// pops and pushes slots on its own magazines with no lock and no shared cache line, and trades
// whole magazines with a global store under one lock; new slots are carved from the end of the
// table, a chunk of 4,096 entries at a time. Chunks are never freed, so an entry's address is
// stable for the life of the process. Serial numbers come from one counter (fetch-add), so they
// follow registration order across threads.

#include "cov_registry.h"
#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <errno.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Atomic(cov_registry_entry_t *) cov_registry_chunks[COV_REGISTRY_MAX_CHUNKS];

enum { CHUNK_ENTRIES = 1u << COV_REGISTRY_CHUNK_SHIFT, BATCH = COV_REGISTRY_BATCH };

// Raised while a snapshot visits the chunk.
_Atomic(uint8_t) cov_registry_chunk_scanning[COV_REGISTRY_MAX_CHUNKS];

_Atomic(uint64_t) cov_registry_serial = 1;
static _Atomic(uint64_t) overflow_count;

// The global store of magazines and the end of the carved table, under `table_lock`.
// `scan_lock` is held by a snapshot for each chunk it visits; leavers of that chunk wait on it.
// (Neither lock needs initialisation: a zeroed cov_lock_t is an unlocked one on every
// platform, os_unfair_lock's initializer being zero.)
static cov_lock_t table_lock;
static cov_lock_t scan_lock;
static cov_registry_slot_list_t *magazines;
static size_t magazine_count, magazine_capacity;
static uint32_t carved;  // slots [0, carved) exist

COV_TLS cov_registry_slot_cache_t cov_registry_slot_cache = {
    {COV_REGISTRY_NO_SLOT, 0}, {COV_REGISTRY_NO_SLOT, 0}, 0};
#define slot_cache cov_registry_slot_cache
static pthread_key_t slot_cache_key;
static pthread_once_t slot_cache_once = PTHREAD_ONCE_INIT;

static const cov_registry_slot_list_t empty_list = {COV_REGISTRY_NO_SLOT, 0};

static void lock(cov_lock_t *lock) { cov_lock_lock(lock); }
static void unlock(cov_lock_t *lock) { cov_lock_unlock(lock); }

// Puts a (non-empty) magazine in the global store; false if the store cannot grow (the caller
// keeps it).
static bool store_magazine(cov_registry_slot_list_t list) {
  lock(&table_lock);
  if (magazine_count == magazine_capacity) {
    size_t capacity = magazine_capacity ? magazine_capacity * 2 : 64;
    cov_registry_slot_list_t *grown = realloc(magazines, capacity * sizeof *grown);
    if (!grown) {
      unlock(&table_lock);
      return false;
    }
    magazines = grown;
    magazine_capacity = capacity;
  }
  magazines[magazine_count++] = list;
  unlock(&table_lock);
  return true;
}

// A magazine from the global store, or BATCH new slots carved from the end of the table (linked
// in order); an empty list if the table is full.
static cov_registry_slot_list_t take_magazine(void) {
  lock(&table_lock);
  cov_registry_slot_list_t list = empty_list;
  if (magazine_count > 0) {
    list = magazines[--magazine_count];
  } else {
    size_t chunk = carved >> COV_REGISTRY_CHUNK_SHIFT;
    cov_registry_entry_t *entries =
        chunk < COV_REGISTRY_MAX_CHUNKS
            ? atomic_load_explicit(&cov_registry_chunks[chunk], memory_order_relaxed) : NULL;
    if (chunk < COV_REGISTRY_MAX_CHUNKS && !entries) {
      // Zeroed pages from the kernel, touched only as slots are used (calloc would clear a block
      // reused from the heap: 96 KiB of stores up front).
      void *mapped = mmap(NULL, CHUNK_ENTRIES * sizeof(cov_registry_entry_t), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      entries = mapped == MAP_FAILED ? NULL : mapped;
      if (entries) atomic_store_explicit(&cov_registry_chunks[chunk], entries, memory_order_release);
    }
    if (entries) {
      // BATCH divides CHUNK_ENTRIES: a magazine never straddles two chunks.
      uint32_t first = carved;
      for (uint32_t i = 0; i < BATCH; i++) {
        uint32_t next = i + 1 < BATCH ? first + i + 1 : COV_REGISTRY_NO_SLOT;
        atomic_store_explicit(&entries[(first + i) & (CHUNK_ENTRIES - 1)].id, next,
                              memory_order_relaxed);
      }
      carved += BATCH;
      list = (cov_registry_slot_list_t){first, BATCH};
    }
  }
  unlock(&table_lock);
  return list;
}
_Static_assert(CHUNK_ENTRIES % BATCH == 0, "magazines must not straddle chunks");

// At thread exit: the thread's magazines go back to the global store.
static void flush_slot_cache(void *unused) {
  (void)unused;
  if (slot_cache.current.count && store_magazine(slot_cache.current)) slot_cache.current = empty_list;
  if (slot_cache.spare.count && store_magazine(slot_cache.spare)) slot_cache.spare = empty_list;
}

static void make_slot_cache_key(void) { pthread_key_create(&slot_cache_key, flush_slot_cache); }

// The calling thread's cache gets a destructor that gives its slots back at thread exit.
static void register_cache(void) {
  pthread_once(&slot_cache_once, make_slot_cache_key);
  // Any non-NULL value: it only makes the destructor run at thread exit.
  pthread_setspecific(slot_cache_key, &slot_cache);
  slot_cache.registered = 1;
}

uint32_t cov_registry_enter_slow(uintptr_t object) {
  if (!slot_cache.registered) register_cache();
  if (slot_cache.spare.count > 0) {
    slot_cache.current = slot_cache.spare;
    slot_cache.spare = empty_list;
  } else {
    slot_cache.current = take_magazine();
  }
  if (slot_cache.current.count == 0) {
    atomic_fetch_add_explicit(&overflow_count, 1, memory_order_relaxed);
    return COV_REGISTRY_NO_SLOT;
  }
  return cov_registry_enter(object);
}

void cov_registry_wait_for_scan(void) {
  lock(&scan_lock);
  unlock(&scan_lock);
}

void cov_registry_leave_slow(uint32_t slot) {
  // A thread that only ever leaves (coroutines started elsewhere finish here) still gives its
  // slots back when it exits.
  if (!slot_cache.registered) register_cache();
  if (slot_cache.current.count == BATCH) {
    if (slot_cache.spare.count == 0) {
      slot_cache.spare = slot_cache.current;
      slot_cache.current = empty_list;
    } else if (store_magazine(slot_cache.spare)) {
      slot_cache.spare = slot_cache.current;
      slot_cache.current = empty_list;
    }
    // (If the store could not grow, the current magazine simply grows past BATCH.)
  }
  atomic_store_explicit(&cov_registry_entry(slot)->id, slot_cache.current.head,
                        memory_order_relaxed);
  slot_cache.current.head = slot;
  slot_cache.current.count++;
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

uint32_t cov_registry_slots_made(void) {
  lock(&table_lock);
  uint32_t made = carved;
  unlock(&table_lock);
  return made;
}
