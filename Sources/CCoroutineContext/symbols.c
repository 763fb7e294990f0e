// Symbols of return addresses, for snapshots (cov_registry.h): the images' ELF symbol tables
// (functions of an executable are rarely in its dynamic symbols), read once per image and
// cached for the life of the process, with dladdr as the fallback (and on Apple platforms);
// Swift names demangled by the runtime's demangler when it is linked.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // dladdr, dl_iterate_phdr
#endif

#include "symbols.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <elf.h>
#include <link.h>
#endif

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

// MARK: - Fork

// The image cache's lock, taken before a fork (fork.c) so that the child's cache is whole.
void cov_symbols_fork(cov_fork_phase_t phase) {
#if defined(__linux__)
  switch (phase) {
  case COV_FORK_PREPARE:
    pthread_mutex_lock(&images_lock);
    break;
  case COV_FORK_PARENT:
    pthread_mutex_unlock(&images_lock);
    break;
  case COV_FORK_CHILD:
    pthread_mutex_init(&images_lock, NULL);
    break;
  }
#else
  (void)phase;
#endif
}
