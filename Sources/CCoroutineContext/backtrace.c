// Frames, stacks and symbols of registered fibers, for snapshots (cov_registry.h).
//
// A switched-out fiber's saved context is the stack pointer at which the switch saved its
// registers (switch_x86_64.S / switch_arm64.S), among them the frame pointer and the return
// address: from there the frame-pointer chain leads through the fiber's frames to its first
// one, whose saved frame pointer is 0. The walk reads only inside [sp, top) of the fiber's stack
// (or the copy of those bytes a shared fiber was evicted to), so a stale or torn chain ends the
// walk early instead of leaving the stack.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // dladdr, dl_iterate_phdr
#endif

#include "cov_registry.h"
#include "CCoroutineContext.h"
#include "cov_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <elf.h>
#include <link.h>
#endif

// Where the switch keeps the frame pointer and the return address in a saved context.
#if defined(__x86_64__)
enum { SAVED_FRAME_POINTER = 0x30, SAVED_RETURN_ADDRESS = 0x38 };
#elif defined(__aarch64__)
enum { SAVED_FRAME_POINTER = 0x90, SAVED_RETURN_ADDRESS = 0x98 };
#else
#error "backtrace.c: unsupported architecture"
#endif

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
  if (sp + SAVED_RETURN_ADDRESS + sizeof(uintptr_t) > high || capacity == 0) return 0;
  addresses[count++] = strip_code_address(read_word(bytes, sp, sp + SAVED_RETURN_ADDRESS));
  uintptr_t frame = read_word(bytes, sp, sp + SAVED_FRAME_POINTER);
  uintptr_t lowest = sp + SAVED_RETURN_ADDRESS + sizeof(uintptr_t);
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

size_t cov_shared_backtrace(const cov_fiber_t *fiber, uintptr_t *addresses, size_t capacity,
                            size_t *in_use) __attribute__((visibility("hidden")));

size_t cov_fiber_backtrace(const cov_fiber_t *fiber, uintptr_t *addresses, size_t capacity,
                           size_t *in_use) {
  *in_use = 0;
  if (fiber->is_shared) return cov_shared_backtrace(fiber, addresses, capacity, in_use);
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

// Called by shared_stack.c under the stack's lock, with the frames of a switched-out fiber.
size_t cov_walk_saved_frames(const cov_fiber_frames_t *frames, uintptr_t *addresses,
                             size_t capacity) __attribute__((visibility("hidden")));
size_t cov_walk_saved_frames(const cov_fiber_frames_t *frames, uintptr_t *addresses,
                             size_t capacity) {
  return walk(frames->bytes, (uintptr_t)frames->sp, (uintptr_t)frames->stack_high, addresses,
              capacity);
}

uintptr_t cov_fiber_wait_detail(const cov_fiber_t *fiber) {
  return atomic_load_explicit(&((cov_fiber_t *)fiber)->wait_detail, memory_order_relaxed);
}

// A shared fiber's record is a heap block of its own: with the wait's detail it must stay in the
// same glibc chunk (112 bytes: 104 usable) as without it, or every suspended coroutine pays
// 16 bytes more. (Sanitizer builds add fields of their own.)
#if !defined(COV_ASAN) && !defined(COV_TSAN) && defined(__LP64__)
_Static_assert(sizeof(cov_fiber_t) <= 104, "a shared fiber's record outgrew its 112-byte heap chunk");
#endif
// cov_fiber_note_wait_detail and cov_registry_note_resuming (inline in the header) read and
// write the record at these offsets.
_Static_assert(offsetof(cov_fiber_t, wait_detail) == COV_FIBER_WAIT_DETAIL_OFFSET,
               "the wait's detail moved in the fiber record");
_Static_assert(offsetof(cov_fiber_t, is_shared) == COV_FIBER_IS_SHARED_OFFSET,
               "the shared flag moved in the fiber record");

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

// MARK: - Symbols

#if defined(__linux__)

typedef struct {
  uintptr_t value;
  uintptr_t size;
  uint32_t name;
} symbol_t;

// One loaded image's function symbols, sorted by address (relative to its load bias).
typedef struct image {
  struct image *next;
  uintptr_t bias;
  uintptr_t low, high;  // its mapped range
  char *path;
  symbol_t *symbols;
  size_t count;
  const char *strings;
} image_t;

static pthread_mutex_t images_lock = PTHREAD_MUTEX_INITIALIZER;
static image_t *images;

typedef struct {
  uintptr_t address;
  uintptr_t bias, low, high;
  char path[4096];
  int found;
} image_query_t;

static int find_image(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  image_query_t *query = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *header = &info->dlpi_phdr[i];
    if (header->p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + header->p_vaddr;
    if (query->address < start || query->address >= start + header->p_memsz) continue;
    query->bias = info->dlpi_addr;
    query->found = 1;
    // Its whole mapped range, for the cache.
    query->low = UINTPTR_MAX;
    query->high = 0;
    for (int j = 0; j < info->dlpi_phnum; j++) {
      const ElfW(Phdr) *load = &info->dlpi_phdr[j];
      if (load->p_type != PT_LOAD) continue;
      uintptr_t low = info->dlpi_addr + load->p_vaddr, high = low + load->p_memsz;
      if (low < query->low) query->low = low;
      if (high > query->high) query->high = high;
    }
    const char *name = info->dlpi_name;
    if (name && name[0]) {
      strncpy(query->path, name, sizeof query->path - 1);
    } else {
      ssize_t length = readlink("/proc/self/exe", query->path, sizeof query->path - 1);
      query->path[length > 0 ? length : 0] = 0;
    }
    return 1;
  }
  return 0;
}

static int by_value(const void *a, const void *b) {
  uintptr_t x = ((const symbol_t *)a)->value, y = ((const symbol_t *)b)->value;
  return x < y ? -1 : x > y;
}

// Reads the function symbols of the ELF file at `path` (its .symtab, else its .dynsym). The
// file stays mapped: the names point into it.
static void load_symbols(image_t *image) {
  int descriptor = open(image->path, O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return;
  struct stat status;
  if (fstat(descriptor, &status) != 0 || (size_t)status.st_size < sizeof(ElfW(Ehdr))) {
    close(descriptor);
    return;
  }
  size_t length = (size_t)status.st_size;
  const char *file = mmap(NULL, length, PROT_READ, MAP_PRIVATE, descriptor, 0);
  close(descriptor);
  if (file == MAP_FAILED) return;
  const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)(const void *)file;
  if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_shoff == 0 ||
      header->e_shoff + (size_t)header->e_shnum * sizeof(ElfW(Shdr)) > length) {
    munmap((void *)file, length);
    return;
  }
  const ElfW(Shdr) *sections = (const ElfW(Shdr) *)(const void *)(file + header->e_shoff);
  const ElfW(Shdr) *table = NULL;
  for (int pass = 0; pass < 2 && !table; pass++) {
    for (int i = 0; i < header->e_shnum; i++) {
      if (sections[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) {
        table = &sections[i];
        break;
      }
    }
  }
  if (!table || table->sh_link >= header->e_shnum || table->sh_entsize != sizeof(ElfW(Sym)) ||
      table->sh_offset + table->sh_size > length) {
    munmap((void *)file, length);
    return;
  }
  const ElfW(Shdr) *strings = &sections[table->sh_link];
  if (strings->sh_offset + strings->sh_size > length) {
    munmap((void *)file, length);
    return;
  }
  const ElfW(Sym) *symbols = (const ElfW(Sym) *)(const void *)(file + table->sh_offset);
  size_t total = table->sh_size / sizeof(ElfW(Sym));
  symbol_t *kept = malloc((total ? total : 1) * sizeof *kept);
  if (!kept) {
    munmap((void *)file, length);
    return;
  }
  size_t count = 0;
  for (size_t i = 0; i < total; i++) {
    if (ELF64_ST_TYPE(symbols[i].st_info) != STT_FUNC || symbols[i].st_value == 0) continue;
    if (symbols[i].st_name >= strings->sh_size) continue;
    kept[count++] = (symbol_t){symbols[i].st_value, symbols[i].st_size, symbols[i].st_name};
  }
  qsort(kept, count, sizeof *kept, by_value);
  image->symbols = kept;
  image->count = count;
  image->strings = file + strings->sh_offset;
}

static image_t *image_for(uintptr_t address) {
  for (image_t *image = images; image; image = image->next)
    if (address >= image->low && address < image->high) return image;
  image_query_t query = {.address = address};
  if (!dl_iterate_phdr(find_image, &query) || !query.found) return NULL;
  image_t *image = calloc(1, sizeof *image);
  if (!image) return NULL;
  image->bias = query.bias;
  image->low = query.low;
  image->high = query.high;
  image->path = strdup(query.path);
  if (image->path) load_symbols(image);
  image->next = images;
  images = image;
  return image;
}

int cov_symbolicate(uintptr_t address, const char **name, uintptr_t *offset, const char **path) {
  *name = NULL;
  *offset = 0;
  *path = NULL;
  pthread_mutex_lock(&images_lock);
  image_t *image = image_for(address);
  if (image) {
    *path = image->path;
    uintptr_t relative = address - image->bias;
    size_t low = 0, high = image->count;
    while (low < high) {  // the last symbol at or below `relative`
      size_t middle = (low + high) / 2;
      if (image->symbols[middle].value <= relative) low = middle + 1;
      else high = middle;
    }
    if (low > 0) {
      const symbol_t *symbol = &image->symbols[low - 1];
      if (symbol->size == 0 || relative < symbol->value + symbol->size) {
        *name = image->strings + symbol->name;
        *offset = relative - symbol->value;
      }
    }
  }
  pthread_mutex_unlock(&images_lock);
  if (*name) return 1;
  Dl_info info;
  if (dladdr((void *)address, &info) && info.dli_sname) {
    *name = info.dli_sname;
    *offset = address - (uintptr_t)info.dli_saddr;
    if (!*path) *path = info.dli_fname;
    return 1;
  }
  return *path != NULL;
}

#else

int cov_symbolicate(uintptr_t address, const char **name, uintptr_t *offset, const char **path) {
  Dl_info info;
  *name = NULL;
  *offset = 0;
  *path = NULL;
  if (!dladdr((void *)address, &info)) return 0;
  *path = info.dli_fname;
  if (info.dli_sname) {
    *name = info.dli_sname;
    *offset = address - (uintptr_t)info.dli_saddr;
  }
  return 1;
}

#endif

// libswiftCore's demangler; absent (NULL) in pure C programs.
extern char *swift_demangle(const char *mangled_name, size_t mangled_name_length,
                            char *output_buffer, size_t *output_buffer_size, uint32_t flags)
    __attribute__((weak));

int cov_demangle(const char *name, char *buffer, size_t capacity) {
  if (!swift_demangle || !name || capacity == 0) return 0;
  size_t size = capacity;
  char *result = swift_demangle(name, strlen(name), buffer, &size, 0);
  return result != NULL;
}

// MARK: - A dump on a signal

static int wakeup_pipe[2] = {-1, -1};
static void (*_Atomic signal_work)(void);
static _Atomic(unsigned long) signal_work_done;
static pthread_mutex_t signal_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int signal) {
  (void)signal;
  int saved = errno;
  char byte = 1;
  ssize_t ignored = write(wakeup_pipe[1], &byte, 1);  // async-signal-safe; a full pipe drops it
  (void)ignored;
  errno = saved;
}

static void *signal_thread(void *unused);
static void close_wakeup_pipe(void);

// Opens the pipe and starts the thread that reads it (`signal_lock` held); 0 or an errno value.
static int start_signal_thread(void) {
  if (pipe(wakeup_pipe) != 0) {
    int error = errno;
    wakeup_pipe[0] = wakeup_pipe[1] = -1;
    return error;
  }
  for (int i = 0; i < 2; i++) fcntl(wakeup_pipe[i], F_SETFD, FD_CLOEXEC);
  fcntl(wakeup_pipe[1], F_SETFL, O_NONBLOCK);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  // The signal is handled on whatever thread it hits; this thread only runs `work`.
  pthread_t thread;
  int error = pthread_create(&thread, &attributes, signal_thread, NULL);
  pthread_attr_destroy(&attributes);
  if (error) close_wakeup_pipe();
  return error;
}

// Forgets the pipe, then closes it: in that order, so that a signal coming in between finds
// -1 (its write fails, harmlessly) rather than a descriptor number that `open` may already
// have handed to another file of the process.
static void close_wakeup_pipe(void) {
  int read_end = wakeup_pipe[0], write_end = wakeup_pipe[1];
  wakeup_pipe[0] = wakeup_pipe[1] = -1;
  atomic_signal_fence(memory_order_seq_cst);  // the handler sees -1 before the close
  close(read_end);
  close(write_end);
}

static void *signal_thread(void *unused) {
  (void)unused;
  char bytes[64];
  for (;;) {
    ssize_t count = read(wakeup_pipe[0], bytes, sizeof bytes);  // several signals: one dump
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return NULL;
    void (*work)(void) = atomic_load_explicit(&signal_work, memory_order_acquire);
    if (work) work();
    atomic_fetch_add_explicit(&signal_work_done, 1, memory_order_release);
  }
}

unsigned long cov_signal_work_count(void) {
  return atomic_load_explicit(&signal_work_done, memory_order_acquire);
}

int cov_signal_work_install(int signal, void (*work)(void)) {
  pthread_mutex_lock(&signal_lock);
  // The handler first (an invalid signal fails here, before any thread is started). It writes
  // to whatever pipe is open when the signal comes (none yet: the write fails, harmlessly).
  struct sigaction action, previous;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  int error = sigaction(signal, &action, &previous) != 0 ? errno : 0;
  if (!error && wakeup_pipe[0] < 0) {
    error = start_signal_thread();
    if (error) sigaction(signal, &previous, NULL);
  }
  if (!error) atomic_store_explicit(&signal_work, work, memory_order_release);
  pthread_mutex_unlock(&signal_lock);
  return error;
}

// MARK: - Fork

// A child inherits the handler and the pipe but not the thread reading it: a signal sent to the
// child would wake the parent's thread, and the parent would dump. So the child closes its
// copies of the pipe and starts a thread of its own on a new one (lifecycle.c calls this last in
// the child, once every lock of the library is usable again).
void cov_backtrace_fork(cov_fork_phase_t phase) {
  switch (phase) {
  case COV_FORK_PREPARE:
#if defined(__linux__)
    pthread_mutex_lock(&images_lock);
#endif
    pthread_mutex_lock(&signal_lock);
    break;
  case COV_FORK_PARENT:
    pthread_mutex_unlock(&signal_lock);
#if defined(__linux__)
    pthread_mutex_unlock(&images_lock);
#endif
    break;
  case COV_FORK_CHILD:
#if defined(__linux__)
    pthread_mutex_init(&images_lock, NULL);
#endif
    pthread_mutex_init(&signal_lock, NULL);
    if (wakeup_pipe[0] >= 0) {
      close_wakeup_pipe();
      start_signal_thread();  // if it fails, signals are dropped (the handler's write fails)
    }
    break;
  }
}
