// Stack mappings: mmap'ed stacks (lazily committed) with a 64 KiB guard region below each, the
// guard regions the overflow handler looks faults up in, and the mapping budget. What a stack
// becomes once released (the pool, per-thread caches) is stack_pool.c's; a stack that leaves
// the pool comes back here (cov_stack_unmap).
//
// Mapping budget. Linux allows vm.max_map_count (65,530 by default) mappings per process, and a
// stack with an mprotect'ed guard costs two, so that classic layout cannot keep 100,000 stacks
// alive. Where the kernel supports MADV_GUARD_INSTALL (Linux >= 6.13) the guard is a page-table
// marker that does not split the mapping, so default-size stacks are carved out of slabs: one
// mapping of SLAB_SLOTS [guard | stack] slots (and adjacent slabs usually merge into one VMA).
// Elsewhere (older kernels, macOS) every stack is its own mapping with a PROT_NONE guard.
// COVENANT_STACK_GUARDS=mprotect in the environment forces that layout on any kernel (to test
// what older kernels do). Either way the allocator counts the mappings it holds and refuses
// (EAGAIN, a CoroutineStartError in Swift) to go beyond vm.max_map_count less a reserve for the
// rest of the process, rather than let malloc fail later (Architecture.md, "Stacks").
//
// Slab stacks returned to the system are batched (RELEASE_BATCH at a time): their pages are
// dropped with MADV_DONTNEED, adjacent slots in one call (guard markers survive it), and the
// slots go back on their slabs' free lists. A few empty slabs are kept mapped (no pages, just
// address space); beyond that they are unmapped.
//
// Thread safety: every entry point may be called from any thread; one mutex guards the slabs,
// the registry of guard regions and the budget, and system calls that can be done outside it
// are.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "stack_map.h"

#include "diagnostics.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__linux__) && !defined(MADV_GUARD_INSTALL)
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

// Dropping the pages of a stack returned to the system. macOS only reclaims with MADV_FREE.
#if defined(__APPLE__) && defined(MADV_FREE)
#define COV_MADV_DROP MADV_FREE
#else
#define COV_MADV_DROP MADV_DONTNEED
#endif

enum {
  COV_GUARD_SIZE = 64 * 1024,
  SLAB_SLOTS = 64,
  REGISTRY_CAPACITY = 16384,
  RELEASE_BATCH = 64,
  KEEP_EMPTY_SLABS = 8,
  MAPPING_RESERVE_MIN = 1024,
};

static size_t round_up(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

static size_t guard_size(void) {
  size_t page = cov_page_size();
  return page > COV_GUARD_SIZE ? page : round_up(COV_GUARD_SIZE, page);
}

// MARK: - Guard markers

// -1: not probed yet; 1: MADV_GUARD_INSTALL works; 0: it does not (use mprotect guards).
static _Atomic int guard_markers = -1;

// Installs a guard over [address, address + length) inside a mapping. Returns 0, EINVAL when
// guard markers are unsupported, or another errno.
static int install_guard_marker(void *address, size_t length) {
#if defined(__linux__)
  if (madvise(address, length, MADV_GUARD_INSTALL) == 0) return 0;
  return errno;
#else
  (void)address;
  (void)length;
  return EINVAL;
#endif
}

// Emulators (qemu-user) accept unknown madvise advice and do nothing, so check that the marker
// really refuses access: the kernel reading from a guarded page for write(2) must fail with EFAULT.
static int verify_guard(void *guarded) {
#if defined(__linux__)
  int fds[2];
  if (pipe(fds) != 0) return errno;
  ssize_t written = write(fds[1], guarded, 1);
  int result = written < 0 && errno == EFAULT ? 0 : EINVAL;
  close(fds[0]);
  close(fds[1]);
  return result;
#else
  (void)guarded;
  return EINVAL;
#endif
}

static bool guard_markers_supported(void) {
  int state = atomic_load_explicit(&guard_markers, memory_order_acquire);
  if (state >= 0) return state == 1;
  // COVENANT_STACK_GUARDS=mprotect: behave as on a kernel without MADV_GUARD_INSTALL.
  const char *forced = getenv("COVENANT_STACK_GUARDS");
  if (forced && strcmp(forced, "mprotect") == 0) {
    atomic_store_explicit(&guard_markers, 0, memory_order_release);
    return false;
  }
  // Probe on a throwaway two-page mapping.
  size_t page = cov_page_size();
  void *probe = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe == MAP_FAILED) return false;  // undecided; try again next time
  int result = install_guard_marker(probe, page);
  if (result == 0) result = verify_guard(probe);
  munmap(probe, 2 * page);
  state = result == 0 ? 1 : 0;
  atomic_store_explicit(&guard_markers, state, memory_order_release);
  return state == 1;
}

int cov_stack_uses_guard_markers(void) { return guard_markers_supported() ? 1 : 0; }

// MARK: - Registry of guard regions (read by the signal handler)

// Each live slab or individual stack occupies one entry: [start, end) is split into slots of
// `slot` bytes whose first `guard_size()` bytes are guard. Writers hold the lock; the signal
// handler reads without it (start is published last with release order, cleared first).
typedef struct {
  _Atomic uintptr_t start;
  _Atomic uintptr_t end;
  _Atomic size_t slot;
  _Atomic size_t stack_size;
} registry_entry_t;

static registry_entry_t registry[REGISTRY_CAPACITY];
static _Atomic unsigned registry_high;  // entries [0, high) have been used at least once
static unsigned registry_free[REGISTRY_CAPACITY];
static unsigned registry_free_count;

static int registry_add(uintptr_t start, uintptr_t end, size_t slot, size_t stack_size) {
  unsigned index;
  if (registry_free_count > 0) {
    index = registry_free[--registry_free_count];
  } else {
    index = atomic_load_explicit(&registry_high, memory_order_relaxed);
    if (index >= REGISTRY_CAPACITY) return -1;  // full: the current-fiber check still works
  }
  registry_entry_t *entry = &registry[index];
  atomic_store_explicit(&entry->end, end, memory_order_relaxed);
  atomic_store_explicit(&entry->slot, slot, memory_order_relaxed);
  atomic_store_explicit(&entry->stack_size, stack_size, memory_order_relaxed);
  atomic_store_explicit(&entry->start, start, memory_order_release);
  if (index == atomic_load_explicit(&registry_high, memory_order_relaxed))
    atomic_store_explicit(&registry_high, index + 1, memory_order_release);
  return (int)index;
}

static void registry_remove(int index) {
  if (index < 0) return;
  atomic_store_explicit(&registry[index].start, 0, memory_order_release);
  registry_free[registry_free_count++] = (unsigned)index;
}

int cov_stack_guard_lookup(uintptr_t address, size_t *stack_size) {
  size_t guard = guard_size();
  unsigned high = atomic_load_explicit(&registry_high, memory_order_acquire);
  for (unsigned i = 0; i < high; i++) {
    registry_entry_t *entry = &registry[i];
    uintptr_t start = atomic_load_explicit(&entry->start, memory_order_acquire);
    if (start == 0 || address < start) continue;
    uintptr_t end = atomic_load_explicit(&entry->end, memory_order_relaxed);
    size_t slot = atomic_load_explicit(&entry->slot, memory_order_relaxed);
    if (address >= end || slot == 0) continue;
    if ((address - start) % slot < guard) {
      *stack_size = atomic_load_explicit(&entry->stack_size, memory_order_relaxed);
      return 1;
    }
  }
  return 0;
}

// MARK: - State under the lock

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

// MARK: - Mapping budget

// The mappings this allocator holds (an upper bound: adjacent ones may merge), under the lock.
static size_t mappings_in_use;
// vm.max_map_count as configured (0: read it from /proc on first use; SIZE_MAX: no limit).
static _Atomic size_t max_map_count;

static size_t read_max_map_count(void) {
  int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SIZE_MAX;
  char text[32];
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return SIZE_MAX;
  text[length] = 0;
  char *end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  return end != text && value > 0 ? (size_t)value : SIZE_MAX;
}

size_t cov_stack_max_map_count(void) {
  size_t limit = atomic_load_explicit(&max_map_count, memory_order_relaxed);
  if (limit == 0) {
    limit = read_max_map_count();
    atomic_store_explicit(&max_map_count, limit, memory_order_relaxed);
  }
  return limit;
}

void cov_stack_set_max_map_count(size_t count) {
  atomic_store_explicit(&max_map_count, count, memory_order_relaxed);
}

size_t cov_stack_mappings_in_use(void) {
  pthread_mutex_lock(&lock);
  size_t count = mappings_in_use;
  pthread_mutex_unlock(&lock);
  return count;
}

// Claims `count` mappings of the budget (lock held): false when that would leave less than the
// reserve for the rest of the process (whose malloc needs mappings too).
static bool claim_mappings(size_t count) {
  size_t limit = cov_stack_max_map_count();
  if (limit != SIZE_MAX) {
    size_t reserve = limit / 8 > MAPPING_RESERVE_MIN ? limit / 8 : MAPPING_RESERVE_MIN;
    size_t budget = limit > reserve ? limit - reserve : 0;
    if (mappings_in_use + count > budget) return false;
  }
  mappings_in_use += count;
  return true;
}

static void unclaim_mappings(size_t count) { mappings_in_use -= count; }

typedef struct cov_slab cov_slab_t;

// The slabs of one stack size. The list holds the slabs that have a free slot.
typedef struct slab_class {
  struct slab_class *next;
  size_t stack_size;
  cov_slab_t *partial;
} slab_class_t;

struct cov_slab {
  cov_slab_t *next, *prev;  // in class->partial while it has a free slot
  slab_class_t *owner;
  char *memory;
  size_t slot_size;
  size_t memory_size;
  int registry_index;
  unsigned free_count;
  unsigned free_slots[SLAB_SLOTS];
};

// A child forked while another thread held the lock would deadlock on its first mapping (fork.c
// calls this around every fork).
void cov_stack_map_fork(cov_fork_phase_t phase) {
  if (phase == COV_FORK_PREPARE) pthread_mutex_lock(&lock);
  else if (phase == COV_FORK_PARENT) pthread_mutex_unlock(&lock);
  else pthread_mutex_init(&lock, NULL);
}

static slab_class_t *classes;
static size_t empty_slabs;                 // slabs with every slot free, kept mapped
static cov_stack_t released[RELEASE_BATCH];  // slab stacks waiting for MADV_DONTNEED
static size_t released_count;

// MARK: - Individual mappings

// A stack with an mprotect'ed guard is two mappings (the guard splits it); with a marker, one.
static size_t individual_mappings(void) { return guard_markers_supported() ? 1 : 2; }

static int individual_allocate(size_t size, cov_stack_t *out) {
  size_t guard = guard_size();
  size_t total = guard + size;
  size_t mappings = individual_mappings();
  pthread_mutex_lock(&lock);
  bool claimed = claim_mappings(mappings);
  pthread_mutex_unlock(&lock);
  if (!claimed) return EAGAIN;
  char *memory = mmap(NULL, total, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  int error = memory == MAP_FAILED ? (errno ? errno : ENOMEM) : 0;
  if (!error) {
    error = guard_markers_supported() ? install_guard_marker(memory, guard) : EINVAL;
    if (error == EINVAL) error = mprotect(memory, guard, PROT_NONE) == 0 ? 0 : errno;
    if (error) munmap(memory, total);
  }
  if (error) {
    pthread_mutex_lock(&lock);
    unclaim_mappings(mappings);
    pthread_mutex_unlock(&lock);
    return error;
  }
  pthread_mutex_lock(&lock);
  int index = registry_add((uintptr_t)memory, (uintptr_t)(memory + total), total, size);
  pthread_mutex_unlock(&lock);
  out->base = memory + guard;
  out->size = size;
  out->guard = memory;
  out->guard_size = guard;
  // Individual stacks carry their registry index and mapping count (tagged) instead of a slab
  // pointer: bit 0 set, bit 1 for two mappings.
  out->allocation = (void *)(((uintptr_t)(index + 1) << 2) | (mappings == 2 ? 2 : 0) | 1);
  return 0;
}

static bool is_individual(const cov_stack_t *stack) {
  return ((uintptr_t)stack->allocation & 1) != 0;
}

static void individual_free(cov_stack_t *stack) {
  int index = (int)((uintptr_t)stack->allocation >> 2) - 1;
  size_t mappings = ((uintptr_t)stack->allocation & 2) ? 2 : 1;
  // Out of the guard registry before the range is unmapped: once it is, another mapping may
  // take its place, whose faults the signal handler must not take for this stack's guard.
  pthread_mutex_lock(&lock);
  registry_remove(index);
  pthread_mutex_unlock(&lock);
  munmap(stack->guard, stack->guard_size + stack->size);
  pthread_mutex_lock(&lock);
  unclaim_mappings(mappings);
  pthread_mutex_unlock(&lock);
}

// MARK: - Slabs (lock held unless noted)

static slab_class_t *class_for(size_t size) {
  for (slab_class_t *c = classes; c; c = c->next)
    if (c->stack_size == size) return c;
  slab_class_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->stack_size = size;
  c->next = classes;
  classes = c;
  return c;
}

static void partial_link(slab_class_t *c, cov_slab_t *s) {
  s->prev = NULL;
  s->next = c->partial;
  if (c->partial) c->partial->prev = s;
  c->partial = s;
}

static void partial_unlink(slab_class_t *c, cov_slab_t *s) {
  if (s->prev) s->prev->next = s->next;
  else c->partial = s->next;
  if (s->next) s->next->prev = s->prev;
  s->next = s->prev = NULL;
}

// Maps a new slab and installs its guards. Called WITHOUT the lock. Returns NULL with *error set;
// *error == EINVAL means guard markers do not work here.
static cov_slab_t *slab_create(size_t size, int *error) {
  size_t guard = guard_size();
  size_t slot = guard + size;
  if (slot > SIZE_MAX / SLAB_SLOTS) {
    *error = ENOMEM;
    return NULL;
  }
  cov_slab_t *slab = calloc(1, sizeof *slab);
  if (!slab) {
    *error = ENOMEM;
    return NULL;
  }
  pthread_mutex_lock(&lock);
  bool claimed = claim_mappings(1);
  pthread_mutex_unlock(&lock);
  if (!claimed) {
    free(slab);
    *error = EAGAIN;
    return NULL;
  }
  slab->slot_size = slot;
  slab->memory_size = slot * SLAB_SLOTS;
  slab->memory = mmap(NULL, slab->memory_size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  *error = slab->memory == MAP_FAILED ? (errno ? errno : ENOMEM) : 0;
  for (unsigned i = 0; *error == 0 && i < SLAB_SLOTS; i++) {
    *error = install_guard_marker(slab->memory + (size_t)i * slot, guard);
    if (*error) munmap(slab->memory, slab->memory_size);
  }
  if (*error) {
    free(slab);
    pthread_mutex_lock(&lock);
    unclaim_mappings(1);
    pthread_mutex_unlock(&lock);
    return NULL;
  }
  // Hand out the lowest slots first.
  for (unsigned i = 0; i < SLAB_SLOTS; i++) slab->free_slots[i] = SLAB_SLOTS - 1 - i;
  slab->free_count = SLAB_SLOTS;
  return slab;
}

static void slab_take_slot(cov_slab_t *slab, cov_stack_t *out) {
  if (slab->free_count == SLAB_SLOTS) empty_slabs--;
  unsigned index = slab->free_slots[--slab->free_count];
  if (slab->free_count == 0) partial_unlink(slab->owner, slab);
  char *slot = slab->memory + (size_t)index * slab->slot_size;
  size_t guard = guard_size();
  out->guard = slot;
  out->guard_size = guard;
  out->base = slot + guard;
  out->size = slab->owner->stack_size;
  out->allocation = slab;
}

// Returns 0, EINVAL if guard markers are unusable (caller falls back), or another errno.
static int slab_allocate(size_t size, cov_stack_t *out) {
  pthread_mutex_lock(&lock);
  slab_class_t *c = class_for(size);
  if (!c) {
    pthread_mutex_unlock(&lock);
    return ENOMEM;
  }
  if (c->partial) {
    slab_take_slot(c->partial, out);
    pthread_mutex_unlock(&lock);
    return 0;
  }
  pthread_mutex_unlock(&lock);

  int error = 0;
  cov_slab_t *slab = slab_create(size, &error);
  if (!slab) return error;

  pthread_mutex_lock(&lock);
  slab->owner = c;
  slab->registry_index = registry_add((uintptr_t)slab->memory,
                                      (uintptr_t)(slab->memory + slab->memory_size),
                                      slab->slot_size, size);
  partial_link(c, slab);
  empty_slabs++;  // it is, until slab_take_slot
  slab_take_slot(slab, out);
  pthread_mutex_unlock(&lock);
  return 0;
}

// Puts a slot back on its slab's free list (lock held). Returns the slab if it must now be
// unmapped (it is empty and enough empty slabs are kept already), else NULL.
static cov_slab_t *slab_push_slot(cov_stack_t *stack) {
  cov_slab_t *slab = stack->allocation;
  slab_class_t *c = slab->owner;
  unsigned index = (unsigned)(((char *)stack->guard - slab->memory) / slab->slot_size);
  if (slab->free_count == 0) partial_link(c, slab);
  slab->free_slots[slab->free_count++] = index;
  if (slab->free_count < SLAB_SLOTS) return NULL;
  // Empty. Keep a few (address space and page tables only: their pages are dropped) so that a
  // workload hovering around a slab boundary does not map, guard and unmap repeatedly.
  if (empty_slabs < KEEP_EMPTY_SLABS) {
    empty_slabs++;
    return NULL;
  }
  partial_unlink(c, slab);
  registry_remove(slab->registry_index);
  return slab;
}

// Drops the pages of released slab stacks and puts their slots back (called without the lock).
// Sorted by address, runs of adjacent slots of one slab take one MADV_DONTNEED, which spans the
// guards in between: guard markers survive MADV_DONTNEED.
static void flush_released(cov_stack_t *batch, size_t count) {
  for (size_t i = 1; i < count; i++) {  // insertion sort by address
    cov_stack_t item = batch[i];
    size_t j = i;
    for (; j > 0 && (uintptr_t)batch[j - 1].base > (uintptr_t)item.base; j--) batch[j] = batch[j - 1];
    batch[j] = item;
  }
  for (size_t i = 0; i < count;) {
    char *start = batch[i].base;
    char *end = start + batch[i].size;
    size_t j = i + 1;
    while (j < count && batch[j].allocation == batch[i].allocation && batch[j].guard == end) {
      end = (char *)batch[j].base + batch[j].size;
      j++;
    }
    madvise(start, (size_t)(end - start), COV_MADV_DROP);
    i = j;
  }
  cov_slab_t *doomed[RELEASE_BATCH];
  size_t doomed_count = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < count; i++) {
    cov_slab_t *slab = slab_push_slot(&batch[i]);
    if (slab) doomed[doomed_count++] = slab;
  }
  pthread_mutex_unlock(&lock);
  for (size_t i = 0; i < doomed_count; i++) {
    munmap(doomed[i]->memory, doomed[i]->memory_size);
    free(doomed[i]);
  }
  if (doomed_count > 0) {
    pthread_mutex_lock(&lock);
    unclaim_mappings(doomed_count);
    pthread_mutex_unlock(&lock);
  }
}

// Slab stacks beyond the pool are returned in batches of RELEASE_BATCH.
static void slab_free_slot(cov_stack_t *stack) {
  cov_stack_t batch[RELEASE_BATCH];
  pthread_mutex_lock(&lock);
  released[released_count++] = *stack;
  if (released_count < RELEASE_BATCH) {
    pthread_mutex_unlock(&lock);
    return;
  }
  memcpy(batch, released, sizeof batch);
  released_count = 0;
  pthread_mutex_unlock(&lock);
  flush_released(batch, RELEASE_BATCH);
}

// MARK: - New stacks and unmapping

#if defined(COV_ASAN)
// LeakSanitizer scans threads' stacks, the heap and the data segments, not mmap'ed memory: what
// only a suspended coroutine's stack refers to would be reported as leaked at exit. So while a
// stack is mapped for a fiber, its usable part is one of LeakSanitizer's root regions.
void __lsan_register_root_region(const void *p, size_t size);
void __lsan_unregister_root_region(const void *p, size_t size);
#endif

static int map_stack(size_t size, bool from_slab, cov_stack_t *out) {
  if (from_slab && guard_markers_supported()) {
    int error = slab_allocate(size, out);
    if (error != EINVAL) return error;
    atomic_store_explicit(&guard_markers, 0, memory_order_release);
  }
  return individual_allocate(size, out);
}

int cov_stack_map(size_t size, bool from_slab, cov_stack_t *out) {
  int error = map_stack(size, from_slab, out);
#if defined(COV_ASAN)
  if (error == 0) __lsan_register_root_region(out->base, out->size);
#endif
  return error;
}

void cov_stack_unmap(cov_stack_t *stack) {
#if defined(COV_ASAN)
  __lsan_unregister_root_region(stack->base, stack->size);
#endif
  if (is_individual(stack)) individual_free(stack);
  else slab_free_slot(stack);
}
