// The C test's harness, shared by its files (one per concern, run in order by main.c): checks
// that count and report, sections, and children that are expected to crash.
//
// Each check prints a line only when it fails; main prints "N passed, M failed" last and exits
// non-zero on any failure.

#ifndef COVENANT_TEST_HARNESS_H
#define COVENANT_TEST_HARNESS_H

#define _GNU_SOURCE
#include "CCoroutineContext.h"

#include <stddef.h>
#include <stdio.h>

extern int passed, failed;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (cond) {                                              \
      passed++;                                              \
    } else {                                                 \
      failed++;                                              \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

// Prints "-- name" (and flushes, so that a crash shows where it happened).
void section(const char *name);

// Under AddressSanitizer a fault ends in ASan's report and exit(1) instead of death by SIGSEGV
// (our handler still prints first, then chains to ASan's).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_ASAN)
#define TEST_ASAN 1
#endif

// Under ThreadSanitizer, the same with exit(66); TSan also maps shadow memory for our slabs.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(TEST_TSAN)
#define TEST_TSAN 1
#endif

// Whether a child's wait status is death by a fault (or the sanitizer's exit in its place).
int died_of_fault(int status);

// COV_TEST_EMULATED=1 (set by run.sh for qemu).
extern int under_emulation;

// Runs `body` in a forked child with stderr captured; returns the wait status, fills `output`.
int run_child(void (*body)(void), char *output, size_t capacity);

// Lines of /proc/self/maps: the mappings of the process.
int count_mappings(void);

// MARK: - The tests, by file

void test_pingpong(void);            // test_switch.c
void test_fp_control(void);          // (x86_64)
void test_callee_saved(void);
void test_deep_recursion(void);      // test_fibers.c
void test_exclusivity_switch(void);
void test_nesting(void);
void test_many_fibers(void);
void test_frame_chain(void);
void test_threads(void);
void test_per_stack_slot(void);
void test_configuration(void);       // test_stacks.c
void test_hundred_thousand(void);
void test_mapping_budget(void);
void test_unmap_order(void);
void test_shared_copy(void);         // test_shared_stacks.c
void test_shared_lazy(void);
void test_shared_frames_accessor(void);
void test_shared_parking(void);
void test_shared_threads(void);
void test_shared_handback_depth(void);
void test_shared_scale(void);
void test_vacated(void);
void test_overflow(void);            // test_overflow.c
void chained_main(void);             // (the --chained-child process)
void test_snapshots(void);           // test_snapshots.c
void test_thread_exit_caches(void);  // test_lifecycle.c
void test_lifecycle(void);

#endif
