// The registry of live coroutines and generators, for snapshots (Covenant's `CoroutineSnapshot`).
//
// Every coroutine (from its start until it finishes) and every running or suspended generator
// holds one *entry*: 24 bytes in a table of chunks that only grows, so an entry's address never
// changes and a snapshot can read it while the program runs. The owner keeps its slot (a 32-bit
// handle of the entry) and writes its activity there (what it does, what it waits for, since
// when) with plain relaxed stores; a snapshot visits the table chunk by chunk. Nothing here
// allocates per coroutine: slots come from per-thread caches, refilled in batches under one
// lock. Serial numbers come from one atomic counter (a fetch-add per registration), so that
// they follow start order across threads, as `CoroutineSnapshot.nextID` promises (a checkpoint:
// every coroutine started after it has an id at least as large); ranges handed out per thread
// would not, and would cost more instructions than the one fetch-add.
//
// Lifetime rule: an owner leaves (cov_registry_leave) before the memory a snapshot may read
// through the entry (the owner object, its fiber, its scheduler) goes away. A snapshot visits a
// chunk with that chunk's *scanning* flag raised, and a leave that sees the flag waits until
// the visit of the chunk is over, so everything reachable from a visited entry stays valid for
// the visit.

#ifndef COVENANT_COV_REGISTRY_H
#define COVENANT_COV_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cov_fiber cov_fiber_t;

/// One registered coroutine or generator. Written by its owner; read by snapshots.
typedef struct cov_registry_entry {
  /// The registered object (unretained), with `COV_REGISTRY_*` tags in its low bits; 0 when the
  /// entry is free. Published with a releasing store after `id`.
  _Atomic(uintptr_t) object;
  /// A process-wide serial number, in registration order (never reused).
  _Atomic(uint64_t) id;
  /// `state | kind << 2 | stamp << 8` (see below): written only by whoever runs or resumes the
  /// owner at the time, in sequence. The stamp is a time (cov_registry_ticks) for coroutines, a
  /// count of switch-outs for generators. (What the wait is on — its *detail* — is kept in the
  /// owner's fiber record, which has room for it: see cov_fiber_note_wait_detail.)
  _Atomic(uint64_t) activity;
} cov_registry_entry_t;

/// Tags in the low bits of `object` (objects are at least 8-aligned).
enum {
  /// The object is a Swift `CoroutineContext`; otherwise a generator's control block.
  COV_REGISTRY_GENERATOR = 1,
  /// The owner has a name in the Swift layer's name table (see cov_registry_set_name_forgetter).
  COV_REGISTRY_NAMED = 2,
  COV_REGISTRY_TAGS = 7,
};

/// `activity` states (bits 0-1).
enum {
  /// Registered, and not switched out yet: not started, or running its first slice (the
  /// owner's fiber tells which).
  COV_ACTIVITY_CREATED = 0,
  /// Running again after a switch-out (or being switched in).
  COV_ACTIVITY_RUNNING = 1,
  /// Switched out while waiting for something (`kind`); frames stable until resumed.
  COV_ACTIVITY_SUSPENDED = 2,
  /// Switched out and handed back to its scheduler (a yield, a hop, a shared stack that was
  /// busy); frames stable until resumed.
  COV_ACTIVITY_READY = 3,
};

/// Slot value of an owner that is not registered (the table was full, or it has left).
#define COV_REGISTRY_NO_SLOT 0u

/// Entries per chunk (4,096 entries of 24 bytes: 96 KiB) and the most chunks (67,108,864
/// entries).
enum { COV_REGISTRY_CHUNK_SHIFT = 12, COV_REGISTRY_MAX_CHUNKS = 16384 };

/// A slot is `chunk << COV_REGISTRY_SLOT_CHUNK_SHIFT | (byte offset of the entry in its chunk +
/// COV_REGISTRY_SLOT_BIAS)`: finding the entry is a shift, a load and a mask (no multiply), and
/// the bias, which folds into the field offsets of the accesses, keeps 0 free for "no slot"
/// (the test for it is one instruction).
enum { COV_REGISTRY_SLOT_CHUNK_SHIFT = 17, COV_REGISTRY_SLOT_BIAS = 8 };
_Static_assert((sizeof(cov_registry_entry_t) << COV_REGISTRY_CHUNK_SHIFT) + COV_REGISTRY_SLOT_BIAS
                   <= (1u << COV_REGISTRY_SLOT_CHUNK_SHIFT),
               "a chunk's byte offsets fit below the chunk number");
_Static_assert(((uint64_t)COV_REGISTRY_MAX_CHUNKS << COV_REGISTRY_SLOT_CHUNK_SHIFT) <= UINT32_MAX,
               "slots are 32 bits");

extern _Atomic(cov_registry_entry_t *) cov_registry_chunks[COV_REGISTRY_MAX_CHUNKS];

/// The entry of `slot` (a slot the caller holds).
static inline cov_registry_entry_t *cov_registry_entry(uint32_t slot) {
  char *chunk = (char *)atomic_load_explicit(
      &cov_registry_chunks[slot >> COV_REGISTRY_SLOT_CHUNK_SHIFT], memory_order_relaxed);
  return (cov_registry_entry_t *)(void *)(chunk +
                                          (slot & ((1u << COV_REGISTRY_SLOT_CHUNK_SHIFT) - 1)) -
                                          COV_REGISTRY_SLOT_BIAS);
}

// Free slots are kept in lists linked through their entries' `id` words (a free entry has no
// id), in *magazines* of up to COV_REGISTRY_BATCH slots: each thread takes slots from one
// magazine and gives slots back to another (so taking needs no count: the list's end is its
// end), keeps a full spare, and trades whole magazines with a global store under a lock, one
// list head each way (Bonwick's magazines: no per-slot copying, however the threads that start
// coroutines and those that finish them are paired).
enum { COV_REGISTRY_BATCH = 64 };
typedef struct cov_registry_slot_list {
  uint32_t head;   // COV_REGISTRY_NO_SLOT when empty
  uint32_t count;
} cov_registry_slot_list_t;
typedef struct cov_registry_slot_cache {
  /// The magazine slots are taken from (COV_REGISTRY_NO_SLOT: empty).
  uint32_t take;
  /// COV_REGISTRY_BATCH once the thread-exit hook will give the cache back, 0 before (and after
  /// the hook ran): a leave gives to `give` while its count is below it, so one comparison
  /// covers both "full" and "not armed".
  uint32_t limit;
  /// The magazine slots are given back to.
  cov_registry_slot_list_t give;
  /// A full magazine, or an empty one.
  cov_registry_slot_list_t spare;
} cov_registry_slot_cache_t;
extern _Thread_local __attribute__((tls_model("initial-exec")))
cov_registry_slot_cache_t cov_registry_slot_cache;
// Hidden (Swift code that inlines the functions below is linked into the same image): read and
// written directly, not through the global offset table.
extern _Atomic(uint64_t) cov_registry_serial __attribute__((visibility("hidden")));
/// How many snapshots are visiting the table now: while none does (nearly always), a leave
/// needs no look at its chunk's scanning flag.
extern _Atomic(uint32_t) cov_registry_visits __attribute__((visibility("hidden")));
extern _Atomic(uint8_t) cov_registry_chunk_scanning[COV_REGISTRY_MAX_CHUNKS];

/// The out-of-line path of cov_registry_enter (a magazine for the thread's cache).
uint32_t cov_registry_enter_slow(uintptr_t object);
/// The out-of-line path of cov_registry_leave (a snapshot visiting, a named owner, a full or
/// unarmed cache). `object` is what the entry held.
void cov_registry_leave_slow(uint32_t slot, uintptr_t object);

/// Registers `object` (tags included) and returns its slot, or COV_REGISTRY_NO_SLOT if the table
/// is full (its serial number: cov_registry_entry_id). Inline and lock-free on the common path:
/// a slot from the thread's cache, a serial number, three stores.
static inline uint32_t cov_registry_enter(uintptr_t object) {
  cov_registry_slot_cache_t *cache = &cov_registry_slot_cache;
  uint32_t slot = cache->take;
  if (__builtin_expect(slot == COV_REGISTRY_NO_SLOT, 0)) return cov_registry_enter_slow(object);
  cov_registry_entry_t *entry = cov_registry_entry(slot);
  cache->take = (uint32_t)atomic_load_explicit(&entry->id, memory_order_relaxed);
  uint64_t serial = atomic_fetch_add_explicit(&cov_registry_serial, 1, memory_order_relaxed);
  atomic_store_explicit(&entry->id, serial, memory_order_relaxed);
  atomic_store_explicit(&entry->activity, 0, memory_order_relaxed);
  atomic_store_explicit(&entry->object, object, memory_order_release);
  return slot;
}

/// Unregisters the holder of `slot` (no-op for COV_REGISTRY_NO_SLOT), waiting while a snapshot
/// visits the slot's chunk; a named holder's name is forgotten (cov_registry_set_name_forgetter).
static inline void cov_registry_leave(uint32_t slot) {
  if (slot == COV_REGISTRY_NO_SLOT) return;
  cov_registry_entry_t *entry = cov_registry_entry(slot);
  // Sequentially consistent, as the snapshot's raising of `cov_registry_visits` and of the
  // chunk's flag: either the load below sees the visit (and the slow path waits for the chunk),
  // or the visit does not see the object.
  uintptr_t object = atomic_exchange_explicit(&entry->object, 0, memory_order_seq_cst);
  cov_registry_slot_cache_t *cache = &cov_registry_slot_cache;
  if (__builtin_expect((object & COV_REGISTRY_NAMED) != 0, 0) ||
      __builtin_expect(atomic_load_explicit(&cov_registry_visits, memory_order_seq_cst) != 0, 0) ||
      __builtin_expect(cache->give.count >= cache->limit, 0)) {
    cov_registry_leave_slow(slot, object);
    return;
  }
  // The entry is free and no snapshot visits it: its id word links the free list.
  atomic_store_explicit(&entry->id, cache->give.head, memory_order_relaxed);
  cache->give.head = slot;
  cache->give.count++;
}

/// Tells the registry how to forget the name of a named owner (COV_REGISTRY_NAMED) that leaves:
/// `forget(id)` is called with its serial number. Set once, before the first named registration.
void cov_registry_set_name_forgetter(void (*forget)(uint64_t id));

/// A cheap monotonic time stamp (the CPU's time-stamp or virtual counter; nanoseconds where
/// there is none), 56 bits of which are kept in a coroutine's `activity`.
/// cov_registry_ticks_per_second converts.
static inline uint64_t cov_registry_ticks(void) {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
  uint64_t ticks;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(ticks));
  return ticks;
#else
  extern uint64_t cov_registry_ticks_fallback(void);
  return cov_registry_ticks_fallback();
#endif
}

/// Ticks per second, measured against the monotonic clock (first call may take about 20 ms).
double cov_registry_ticks_per_second(void);


/// Waits while a snapshot visits the chunk of `slot`: call it before releasing something a
/// snapshot may reach through the entry (a coroutine's previous scheduler, after a hop), having
/// first stored the replacement where the snapshot reads it (a releasing store is enough: this
/// begins with a sequentially consistent fence, which pairs with the snapshot's raising of the
/// chunk's flag before it reads anything through the entry).
void cov_registry_quiesce(uint32_t slot);

/// The serial number the next registration will get (registrations before it have smaller ones).
uint64_t cov_registry_next_id(void);

/// How many slots the table has made so far (the most coroutines and generators that were
/// registered at once, plus the slots in threads' caches).
uint32_t cov_registry_slots_made(void);

/// How many registrations failed because the table was full.
uint64_t cov_registry_overflow_count(void);

/// How many entries are registered now, counted by reading every entry the table has made (no
/// lock held while reading, nothing written: the registration paths are untouched). Holders that
/// stay registered for the whole count are counted once each; those that enter or leave meanwhile
/// may or may not be.
uint64_t cov_registry_live_count(void);

/// Calls `visit(context, entry, object)` for every registered entry, chunk by chunk; while a
/// chunk is visited, its holders cannot leave (and so their objects stay valid). One snapshot
/// at a time. `visit` must not start, finish or resume coroutines.
void cov_registry_visit(void (*visit)(void *context, cov_registry_entry_t *entry, uintptr_t object),
                        void *context);

/// Reads of an entry's fields (Swift does not see C11 atomics).
static inline uint64_t cov_registry_entry_id(const cov_registry_entry_t *entry) {
  return atomic_load_explicit(&((cov_registry_entry_t *)entry)->id, memory_order_relaxed);
}
static inline uint64_t cov_registry_entry_activity(const cov_registry_entry_t *entry) {
  return atomic_load_explicit(&((cov_registry_entry_t *)entry)->activity, memory_order_acquire);
}
/// A snapshot's check that the owner was not resumed while its frames were read: the activity
/// word again, after everything read before it.
static inline uint64_t cov_registry_entry_activity_again(const cov_registry_entry_t *entry) {
  atomic_thread_fence(memory_order_acquire);
  return atomic_load_explicit(&((cov_registry_entry_t *)entry)->activity, memory_order_relaxed);
}

// MARK: - Activity updates (inline: they are on every suspension and resume)

static inline uint64_t cov_activity_word(uint64_t state, uint64_t kind, uint64_t stamp) {
  return state | (kind << 2) | (stamp << 8);
}

/// The owner of `entry` starts running (before its stack is switched in).
static inline void cov_registry_entry_note_running(cov_registry_entry_t *entry) {
  atomic_store_explicit(&entry->activity, COV_ACTIVITY_RUNNING, memory_order_relaxed);
  // Everything the resumed owner writes to its stack is ordered after the store, so a snapshot
  // that read its stack in place and then still sees the old activity read a stable stack (a
  // shared stack's frames are read under the stack's lock instead, but this store does not
  // know the owner's stack: the fence is a `dmb ish` on arm64, nothing on x86_64).
  atomic_thread_fence(memory_order_release);
}

/// The owner of `entry` has switched out (`state`: SUSPENDED or READY) waiting for `kind`;
/// `stamp`: since when (cov_registry_ticks) for a coroutine, its count of switch-outs for a
/// generator. Each switch-out must store a word different from the one before it, so that a
/// snapshot that reads the word before and after reading the frames sees a resume in between.
static inline void cov_registry_entry_note_switched_out(cov_registry_entry_t *entry,
                                                        uint64_t state, uint64_t kind,
                                                        uint64_t stamp) {
  atomic_store_explicit(&entry->activity, cov_activity_word(state, kind, stamp),
                        memory_order_release);
}

/// The switch-out of an owner that keeps its next activity word whole (a generator: see
/// cov_registry_entry_note_switched_out).
static inline void cov_registry_entry_note_activity(cov_registry_entry_t *entry, uint64_t word) {
  atomic_store_explicit(&entry->activity, word, memory_order_release);
}

/// Where the (private) fiber record keeps its `is_shared` byte, for the inline function below.
/// The record is defined in the library's fiber_record.h, which checks this offset against it
/// (`offsetof`); written from the sizes of the fields before it, so that it holds where pointers
/// are 4 bytes (arm64_32) as well as 8.
#define COV_FIBER_IS_SHARED_OFFSET (11 * sizeof(void *) + 2 * sizeof(uint32_t) + 3)

/// The same by slot, for owners that keep their slot (COV_REGISTRY_NO_SLOT: nothing to note),
/// about to resume `fiber`. A snapshot reads a shared-stack fiber's frames under its stack's
/// lock, which the resume must take first: the fence is only for a fiber with a stack of its
/// own, read in place (on arm64, where it is an instruction, a `dmb ish`).
static inline void cov_registry_note_resuming(uint32_t slot, const cov_fiber_t *fiber) {
  if (slot == COV_REGISTRY_NO_SLOT) return;
  cov_registry_entry_t *entry = cov_registry_entry(slot);
#if defined(__aarch64__)
  if (*((const char *)fiber + COV_FIBER_IS_SHARED_OFFSET)) {
    atomic_store_explicit(&entry->activity, COV_ACTIVITY_RUNNING, memory_order_relaxed);
    return;
  }
#else
  (void)fiber;
#endif
  cov_registry_entry_note_running(entry);
}
/// The switch-out of a coroutine, time-stamped now.
static inline void cov_registry_note_switched_out(uint32_t slot, uint64_t state, uint64_t kind) {
  if (slot != COV_REGISTRY_NO_SLOT)
    cov_registry_entry_note_switched_out(cov_registry_entry(slot), state, kind,
                                         cov_registry_ticks());
}

// MARK: - Frames and stacks of a registered fiber, for snapshots

/// Where the (private) fiber record keeps the wait's detail, for the inline function below;
/// checked against the record where it is defined (fiber_record.h, `offsetof`).
#define COV_FIBER_WAIT_DETAIL_OFFSET (8 * sizeof(void *))

/// What the fiber's owner waits on now, for snapshots: a type's metadata (Promise<T>, a channel,
/// a callback's value) or, for a delay, its deadline in uptime nanoseconds; 0 if nothing. Kept in
/// the fiber record (in the padding of its heap block), written by the owner before it switches
/// out (inline: one store on every await), read by snapshots.
static inline void cov_fiber_note_wait_detail(cov_fiber_t *fiber, uintptr_t detail) {
  atomic_store_explicit(
      (_Atomic(uintptr_t) *)(void *)((char *)fiber + COV_FIBER_WAIT_DETAIL_OFFSET), detail,
      memory_order_relaxed);
}
uintptr_t cov_fiber_wait_detail(const cov_fiber_t *fiber);

/// What a snapshot reports of a fiber's stack.
typedef struct cov_fiber_stack_info {
  /// 1 for a shared stack, 0 for a dedicated one.
  int shared;
  /// Usable bytes of the stack (the shared stack's, for a shared fiber); 0 if none yet.
  size_t size;
  /// Bytes from the top of the stack down to the lowest page ever touched (resident now):
  /// the stack's high-water mark, at page granularity; 0 if unknown.
  size_t high_water;
  /// Lowest usable address and top of the stack (for caching per stack).
  uintptr_t low, high;
} cov_fiber_stack_info_t;

/// Fills `info` for a fiber whose owner is registered and has run (so its stack is bound); the
/// high-water mark (a `mincore` call) only if `measure_high_water`.
void cov_fiber_stack_info(const cov_fiber_t *fiber, cov_fiber_stack_info_t *info,
                          int measure_high_water);

/// The return addresses of a switched-out fiber's frames, innermost first (the switch's own
/// return address first), walked through the frame-pointer chain of a copy of its used stack
/// (taken under the stack's lock for a shared fiber, in place for a dedicated one: the caller
/// then checks that the owner was not resumed meanwhile). Returns how many were stored (at most
/// `capacity`); `*in_use` receives the bytes of stack in use. 0 if the fiber is running or has
/// no frames.
size_t cov_fiber_backtrace(const cov_fiber_t *fiber, uintptr_t *addresses, size_t capacity,
                           size_t *in_use);

// MARK: - Symbols

/// Symbolicates `address`: the name of the function containing it (mangled as in the binary;
/// `*name` NULL if unknown), the offset into it, and the path of the image. Reads the images'
/// ELF symbol tables (functions of an executable are rarely in its dynamic symbols) or asks
/// `dladdr`. Thread-safe; tables are cached for the life of the process.
int cov_symbolicate(uintptr_t address, const char **name, uintptr_t *offset, const char **image);

/// Demangles a Swift symbol into `buffer` (NUL-terminated); returns 0 if `name` is not a Swift
/// symbol or the runtime's demangler is not linked.
int cov_demangle(const char *name, char *buffer, size_t capacity);

// MARK: - A dump on a signal

/// Installs a handler for `signal` that wakes a thread of this library (started now), which
/// calls `work()`: the handler itself only writes one byte to a pipe. Returns 0 or an errno value.
/// Calling it again replaces `work` and adds `signal`.
int cov_signal_work_install(int signal, void (*work)(void));

/// How many times that thread has finished `work` (for tests).
unsigned long cov_signal_work_count(void);

#ifdef __cplusplus
}
#endif

#endif
