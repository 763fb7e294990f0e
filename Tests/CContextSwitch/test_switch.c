// Standalone C test of CCoroutineContext: the assembly switch, stacks, the overflow handler and
// fibers. Built and run by run.sh (natively, and for arm64 under qemu-user when available).
//
// Prints one line per check and a final "N passed, M failed"; exits non-zero on any failure.

#define _GNU_SOURCE
#include "CCoroutineContext.h"

#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// Internals of the library (hidden symbols, linked into this executable with its sources).
int cov_stack_guard_lookup(uintptr_t address, size_t *stack_size);
unsigned cov_registry_test_growth_failures(int force);

static int passed, failed;

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

static int died_of_fault(int status) {
#if defined(TEST_ASAN)
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) return 1;
#endif
#if defined(TEST_TSAN)
  if (WIFEXITED(status) && WEXITSTATUS(status) == 66) return 1;
#endif
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}
static int under_emulation;  // COV_TEST_EMULATED=1 (set by run.sh for qemu)

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (cond) {                                           \
      passed++;                                           \
    } else {                                              \
      failed++;                                           \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                \
      printf("\n");                                       \
    }                                                     \
  } while (0)

static void counter_entry(void *argument);
static int counter_sum;
static void test_thread_exit_caches(void);

static void section(const char *name) {
  printf("-- %s\n", name);
  fflush(stdout);
}

// MARK: - Raw switch: ping-pong with data

static void pingpong_entry(cov_transfer_t t) {
  for (;;) {
    uintptr_t value = (uintptr_t)t.data;
    t = cov_jump_fcontext(t.from, (void *)(value * 2 + 1));
  }
}

static void test_pingpong(void) {
  section("raw switch: 100,000 round trips passing data");
  cov_stack_t stack;
  CHECK(cov_stack_allocate(0, &stack) == 0, "allocate");
  cov_fcontext_t ctx = cov_make_fcontext((char *)stack.base + stack.size, stack.size,
                                         pingpong_entry);
  int bad = 0;
  for (uintptr_t i = 0; i < 100000; i++) {
    cov_transfer_t t = cov_jump_fcontext(ctx, (void *)i);
    if ((uintptr_t)t.data != i * 2 + 1) bad++;
    ctx = t.from;
  }
  CHECK(bad == 0, "%d wrong values", bad);
  CHECK((uintptr_t)ctx % 16 == 0, "saved context %p not 16-aligned", ctx);
  // The context is abandoned suspended: nothing on that stack needs unwinding.
  cov_stack_release(&stack);
}

// MARK: - Floating-point control state

#if defined(__x86_64__)
static unsigned read_mxcsr(void) {
  unsigned value;
  __asm__ volatile("stmxcsr %0" : "=m"(value));
  return value;
}
static void write_mxcsr(unsigned value) { __asm__ volatile("ldmxcsr %0" : : "m"(value)); }
static unsigned short read_fpucw(void) {
  unsigned short value;
  __asm__ volatile("fnstcw %0" : "=m"(value));
  return value;
}
static void write_fpucw(unsigned short value) { __asm__ volatile("fldcw %0" : : "m"(value)); }

enum { MXCSR_RC_MASK = 0x6000, MXCSR_RC_UP = 0x4000, MXCSR_RC_ZERO = 0x6000, MXCSR_FTZ = 0x8000 };
enum { FPUCW_RC_MASK = 0x0c00, FPUCW_RC_UP = 0x0800, FPUCW_RC_ZERO = 0x0c00 };

static unsigned fp_seen_mxcsr[4];
static unsigned short fp_seen_fpucw[4];

static void fp_entry(cov_transfer_t t) {
  // Started by a creator whose modes were round-to-nearest: that is what we must see.
  fp_seen_mxcsr[0] = read_mxcsr();
  fp_seen_fpucw[0] = read_fpucw();
  write_mxcsr((read_mxcsr() & ~MXCSR_RC_MASK) | MXCSR_RC_ZERO | MXCSR_FTZ);
  write_fpucw((unsigned short)((read_fpucw() & ~FPUCW_RC_MASK) | FPUCW_RC_ZERO));
  t = cov_jump_fcontext(t.from, NULL);
  // Our own modes must have survived the other context changing its own.
  fp_seen_mxcsr[1] = read_mxcsr();
  fp_seen_fpucw[1] = read_fpucw();
  cov_jump_fcontext(t.from, NULL);
  abort();
}

static void test_fp_control(void) {
  section("MXCSR and x87 control word are per context");
  unsigned saved_mxcsr = read_mxcsr();
  unsigned short saved_fpucw = read_fpucw();
  cov_stack_t stack;
  CHECK(cov_stack_allocate(0, &stack) == 0, "allocate");
  cov_fcontext_t ctx = cov_make_fcontext((char *)stack.base + stack.size, stack.size, fp_entry);
  // Change our own modes only after the context was made (it captured round-to-nearest).
  write_mxcsr((saved_mxcsr & ~MXCSR_RC_MASK) | MXCSR_RC_UP);
  write_fpucw((unsigned short)((saved_fpucw & ~FPUCW_RC_MASK) | FPUCW_RC_UP));
  cov_transfer_t t = cov_jump_fcontext(ctx, NULL);
  CHECK((fp_seen_mxcsr[0] & MXCSR_RC_MASK) == 0, "new context MXCSR %#x", fp_seen_mxcsr[0]);
  CHECK((fp_seen_fpucw[0] & FPUCW_RC_MASK) == 0, "new context FPU CW %#x", fp_seen_fpucw[0]);
  CHECK((read_mxcsr() & (MXCSR_RC_MASK | MXCSR_FTZ)) == MXCSR_RC_UP, "our MXCSR %#x",
        read_mxcsr());
  CHECK((read_fpucw() & FPUCW_RC_MASK) == FPUCW_RC_UP, "our FPU CW %#x", read_fpucw());
  // Change ours again while the other is suspended; it must keep its own.
  write_mxcsr((saved_mxcsr & ~MXCSR_RC_MASK) | MXCSR_RC_UP);
  cov_jump_fcontext(t.from, NULL);
  CHECK((fp_seen_mxcsr[1] & (MXCSR_RC_MASK | MXCSR_FTZ)) == (MXCSR_RC_ZERO | MXCSR_FTZ),
        "other context MXCSR %#x", fp_seen_mxcsr[1]);
  CHECK((fp_seen_fpucw[1] & FPUCW_RC_MASK) == FPUCW_RC_ZERO, "other context FPU CW %#x",
        fp_seen_fpucw[1]);
  CHECK((read_mxcsr() & (MXCSR_RC_MASK | MXCSR_FTZ)) == MXCSR_RC_UP, "our MXCSR after %#x",
        read_mxcsr());
  CHECK(fegetround() == FE_UPWARD, "fegetround %d", fegetround());
  write_mxcsr(saved_mxcsr);
  write_fpucw(saved_fpucw);
  cov_stack_release(&stack);
}
#endif

// MARK: - Callee-saved registers (assembly probes)

// check_callee_saved(to, data): loads a pattern into every callee-saved register, jumps to `to`,
// and when resumed returns the number of callee-saved registers that do not hold the pattern.
// The context it jumps back from stores itself in `probe_from`.
// clobber_entry: a fresh context that fills every callee-saved register with garbage and jumps
// back, forever.
int check_callee_saved(cov_fcontext_t to, void *data);
void clobber_entry(cov_transfer_t transfer);
cov_fcontext_t probe_from;

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl check_callee_saved\n"
    ".type check_callee_saved, @function\n"
    "check_callee_saved:\n"
    "  pushq %rbx\n  pushq %rbp\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n"
    "  movabsq $0x1111111111111111, %rbx\n"
    "  movabsq $0x2222222222222222, %rbp\n"
    "  movabsq $0x3333333333333333, %r12\n"
    "  movabsq $0x4444444444444444, %r13\n"
    "  movabsq $0x5555555555555555, %r14\n"
    "  movabsq $0x6666666666666666, %r15\n"
    "  call cov_jump_fcontext\n"
    "  movq %rax, probe_from(%rip)\n"
    "  xorl %eax, %eax\n"
    "  movabsq $0x1111111111111111, %rcx\n  cmpq %rcx, %rbx\n  setne %dl\n  movzbl %dl, %edx\n  addl %edx, %eax\n"
    "  movabsq $0x2222222222222222, %rcx\n  cmpq %rcx, %rbp\n  setne %dl\n  movzbl %dl, %edx\n  addl %edx, %eax\n"
    "  movabsq $0x3333333333333333, %rcx\n  cmpq %rcx, %r12\n  setne %dl\n  movzbl %dl, %edx\n  addl %edx, %eax\n"
    "  movabsq $0x4444444444444444, %rcx\n  cmpq %rcx, %r13\n  setne %dl\n  movzbl %dl, %edx\n  addl %edx, %eax\n"
    "  movabsq $0x5555555555555555, %rcx\n  cmpq %rcx, %r14\n  setne %dl\n  movzbl %dl, %edx\n  addl %edx, %eax\n"
    "  movabsq $0x6666666666666666, %rcx\n  cmpq %rcx, %r15\n  setne %dl\n  movzbl %dl, %edx\n  addl %edx, %eax\n"
    "  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbp\n  popq %rbx\n"
    "  ret\n"
    ".size check_callee_saved, . - check_callee_saved\n"
    ".globl clobber_entry\n"
    ".type clobber_entry, @function\n"
    "clobber_entry:\n"
    "1:\n"
    "  movq $-1, %rbx\n  movq $-2, %rbp\n  movq $-3, %r12\n  movq $-4, %r13\n"
    "  movq $-5, %r14\n  movq $-6, %r15\n"
    "  call cov_jump_fcontext\n"  // rdi = from, rsi = data (as delivered)
    "  movq %rax, %rdi\n"
    "  movq %rdx, %rsi\n"
    "  jmp 1b\n"
    ".size clobber_entry, . - clobber_entry\n");
#elif defined(__aarch64__)
// Also checks d8-d15 (the low 64 bits are callee-saved under AAPCS64).
__asm__(
    ".text\n"
    ".globl check_callee_saved\n"
    ".type check_callee_saved, %function\n"
    "check_callee_saved:\n"
    "  stp x29, x30, [sp, #-176]!\n"
    "  mov x29, sp\n"
    "  stp x19, x20, [sp, #16]\n  stp x21, x22, [sp, #32]\n  stp x23, x24, [sp, #48]\n"
    "  stp x25, x26, [sp, #64]\n  stp x27, x28, [sp, #80]\n"
    "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n"
    "  stp d14, d15, [sp, #144]\n"
    "  mov x19, #19\n  mov x20, #20\n  mov x21, #21\n  mov x22, #22\n  mov x23, #23\n"
    "  mov x24, #24\n  mov x25, #25\n  mov x26, #26\n  mov x27, #27\n  mov x28, #28\n"
    "  mov x9, #108\n  fmov d8, x9\n  mov x9, #109\n  fmov d9, x9\n"
    "  mov x9, #110\n  fmov d10, x9\n  mov x9, #111\n  fmov d11, x9\n"
    "  mov x9, #112\n  fmov d12, x9\n  mov x9, #113\n  fmov d13, x9\n"
    "  mov x9, #114\n  fmov d14, x9\n  mov x9, #115\n  fmov d15, x9\n"
    "  str x29, [sp, #160]\n"
    "  bl cov_jump_fcontext\n"
    "  adrp x9, probe_from\n  str x0, [x9, :lo12:probe_from]\n"
    "  mov x0, #0\n"
    "  cmp x19, #19\n  cinc x0, x0, ne\n  cmp x20, #20\n  cinc x0, x0, ne\n"
    "  cmp x21, #21\n  cinc x0, x0, ne\n  cmp x22, #22\n  cinc x0, x0, ne\n"
    "  cmp x23, #23\n  cinc x0, x0, ne\n  cmp x24, #24\n  cinc x0, x0, ne\n"
    "  cmp x25, #25\n  cinc x0, x0, ne\n  cmp x26, #26\n  cinc x0, x0, ne\n"
    "  cmp x27, #27\n  cinc x0, x0, ne\n  cmp x28, #28\n  cinc x0, x0, ne\n"
    "  ldr x9, [sp, #160]\n  cmp x29, x9\n  cinc x0, x0, ne\n"
    "  fmov x9, d8\n  cmp x9, #108\n  cinc x0, x0, ne\n  fmov x9, d9\n  cmp x9, #109\n  cinc x0, x0, ne\n"
    "  fmov x9, d10\n  cmp x9, #110\n  cinc x0, x0, ne\n  fmov x9, d11\n  cmp x9, #111\n  cinc x0, x0, ne\n"
    "  fmov x9, d12\n  cmp x9, #112\n  cinc x0, x0, ne\n  fmov x9, d13\n  cmp x9, #113\n  cinc x0, x0, ne\n"
    "  fmov x9, d14\n  cmp x9, #114\n  cinc x0, x0, ne\n  fmov x9, d15\n  cmp x9, #115\n  cinc x0, x0, ne\n"
    "  ldp d14, d15, [sp, #144]\n  ldp d12, d13, [sp, #128]\n  ldp d10, d11, [sp, #112]\n"
    "  ldp d8, d9, [sp, #96]\n"
    "  ldp x27, x28, [sp, #80]\n  ldp x25, x26, [sp, #64]\n  ldp x23, x24, [sp, #48]\n"
    "  ldp x21, x22, [sp, #32]\n  ldp x19, x20, [sp, #16]\n"
    "  ldp x29, x30, [sp], #176\n"
    "  ret\n"
    ".size check_callee_saved, . - check_callee_saved\n"
    ".globl clobber_entry\n"
    ".type clobber_entry, %function\n"
    "clobber_entry:\n"
    "1:\n"
    "  mov x19, #-1\n  mov x20, #-1\n  mov x21, #-1\n  mov x22, #-1\n  mov x23, #-1\n"
    "  mov x24, #-1\n  mov x25, #-1\n  mov x26, #-1\n  mov x27, #-1\n  mov x28, #-1\n"
    "  mov x29, #-1\n"
    "  movi d8, #0xffffffffffffffff\n  movi d9, #0xffffffffffffffff\n"
    "  movi d10, #0xffffffffffffffff\n  movi d11, #0xffffffffffffffff\n"
    "  movi d12, #0xffffffffffffffff\n  movi d13, #0xffffffffffffffff\n"
    "  movi d14, #0xffffffffffffffff\n  movi d15, #0xffffffffffffffff\n"
    "  bl cov_jump_fcontext\n"  // x0 = from, x1 = data (as delivered)
    "  b 1b\n"
    ".size clobber_entry, . - clobber_entry\n");
#endif

static void test_callee_saved(void) {
#if defined(__x86_64__)
  section("callee-saved registers (rbx, rbp, r12-r15) survive switches");
#else
  section("callee-saved registers (x19-x29, d8-d15) survive switches");
#endif
  cov_stack_t stack;
  CHECK(cov_stack_allocate(0, &stack) == 0, "allocate");
  cov_fcontext_t ctx = cov_make_fcontext((char *)stack.base + stack.size, stack.size,
                                         clobber_entry);
  int bad = 0;
  for (int i = 0; i < 1000; i++) {
    bad += check_callee_saved(ctx, NULL);
    ctx = probe_from;
  }
  CHECK(bad == 0, "%d registers clobbered", bad);
  cov_stack_release(&stack);
}

// MARK: - Fibers

static int deep_recursion(int depth) {
  volatile char frame[1024];
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)depth;
  if (depth == 0) return frame[0] + frame[sizeof frame - 1];
  return deep_recursion(depth - 1) + (frame[0] == (char)depth) + (frame[1023] == (char)depth);
}

static int recursion_result;

static void recursion_entry(void *argument) {
  (void)argument;
  recursion_result = deep_recursion(150);  // >= 150 KiB of frames on a 256 KiB stack
}

// Present when libswiftCore is linked (run.sh does one such build): the hooks then run for real.
extern void swift_task_enterThreadLocalContext(char *state) __attribute__((weak));

static void test_exclusivity_switch(void) {
  section("exclusivity hooks on and off");
  printf("Swift exclusivity hooks: %s\n",
         swift_task_enterThreadLocalContext ? "live (libswiftCore linked)" : "absent (pure C)");
  cov_fiber_t *on = cov_fiber_create(0, counter_entry, (void *)(intptr_t)100);
  cov_fiber_t *off = cov_fiber_create(0, counter_entry, (void *)(intptr_t)100);
  cov_fiber_set_exclusivity_tracking(off, 0);
  counter_sum = 0;
  while (!cov_fiber_is_finished(on) || !cov_fiber_is_finished(off)) {
    if (!cov_fiber_is_finished(on)) cov_fiber_resume(on);
    if (!cov_fiber_is_finished(off)) cov_fiber_resume(off);
  }
  CHECK(counter_sum == 200, "sum %d", counter_sum);
  cov_fiber_destroy(on);
  cov_fiber_destroy(off);
}

static void test_deep_recursion(void) {
  section("deep recursion (150 KiB of frames) on a fiber stack");
  cov_fiber_t *fiber = cov_fiber_create(0, recursion_entry, NULL);
  CHECK(fiber != NULL, "create");
  cov_fiber_resume(fiber);
  CHECK(cov_fiber_is_finished(fiber), "finished");
  CHECK(recursion_result == 300, "result %d", recursion_result);
  cov_fiber_destroy(fiber);
}

typedef struct {
  cov_fiber_t *self;
  cov_fiber_t *inner;
  char log[64];
  int length;
} nest_state_t;

static nest_state_t nest;

static void inner_entry(void *argument) {
  (void)argument;
  nest.log[nest.length++] = cov_fiber_current() == nest.inner ? 'i' : '?';
  cov_fiber_suspend();
  nest.log[nest.length++] = cov_fiber_current() == nest.inner ? 'j' : '?';
}

static void outer_entry(void *argument) {
  (void)argument;
  nest.log[nest.length++] = cov_fiber_current() == nest.self ? 'o' : '?';
  cov_fiber_resume(nest.inner);  // inner suspends back to us, not to the thread
  nest.log[nest.length++] = cov_fiber_current() == nest.self ? 'p' : '?';
  cov_fiber_suspend();
  nest.log[nest.length++] = cov_fiber_current() == nest.self ? 'q' : '?';
  cov_fiber_resume(nest.inner);
  nest.log[nest.length++] = cov_fiber_is_finished(nest.inner) ? 'r' : '?';
}

static void test_nesting(void) {
  section("nesting: a fiber resumes another fiber");
  memset(&nest, 0, sizeof nest);
  nest.self = cov_fiber_create(0, outer_entry, NULL);
  nest.inner = cov_fiber_create(64 * 1024, inner_entry, NULL);
  CHECK(nest.self && nest.inner, "create");
  CHECK(cov_fiber_current() == NULL, "no fiber on the thread");
  cov_fiber_resume(nest.self);
  nest.log[nest.length++] = cov_fiber_current() == NULL ? 'T' : '?';
  cov_fiber_resume(nest.self);
  nest.log[nest.length++] = cov_fiber_current() == NULL ? 'U' : '?';
  CHECK(strcmp(nest.log, "oipTqjrU") == 0, "log %s", nest.log);
  CHECK(cov_fiber_is_finished(nest.self) && cov_fiber_is_finished(nest.inner), "finished");
  CHECK(cov_fiber_stack_size(nest.inner) == 64 * 1024, "size %zu",
        cov_fiber_stack_size(nest.inner));
  cov_fiber_destroy(nest.inner);
  cov_fiber_destroy(nest.self);
}

static void counter_entry(void *argument) {
  intptr_t n = (intptr_t)argument;
  for (intptr_t i = 0; i < n; i++) {
    counter_sum += 1;
    cov_fiber_suspend();
  }
}

static void test_many_fibers(void) {
  section("1000 fibers created, run to completion, destroyed (pool reuse)");
  void *first_bases[8] = {0};
  int reused = 0;
  counter_sum = 0;
  for (int i = 0; i < 1000; i++) {
    cov_fiber_t *fiber = cov_fiber_create(0, counter_entry, (void *)(intptr_t)3);
    if (!fiber) {
      CHECK(fiber != NULL, "create %d: errno %d", i, errno);
      return;
    }
    if (i < 8) first_bases[i] = cov_fiber_stack_base(fiber);
    else
      for (int k = 0; k < 8; k++) reused += cov_fiber_stack_base(fiber) == first_bases[k];
    while (!cov_fiber_is_finished(fiber)) cov_fiber_resume(fiber);
    cov_fiber_destroy(fiber);
  }
  CHECK(counter_sum == 3000, "sum %d", counter_sum);
  CHECK(reused >= 900, "only %d stacks came from the pool", reused);

  // 200 alive at once (beyond the pool's 64), interleaved.
  cov_fiber_t *fibers[200];
  counter_sum = 0;
  for (int i = 0; i < 200; i++) fibers[i] = cov_fiber_create(0, counter_entry, (void *)(intptr_t)5);
  for (int round = 0; round < 6; round++)
    for (int i = 0; i < 200; i++)
      if (!cov_fiber_is_finished(fibers[i])) cov_fiber_resume(fibers[i]);
  int finished = 0;
  for (int i = 0; i < 200; i++) {
    finished += cov_fiber_is_finished(fibers[i]);
    cov_fiber_destroy(fibers[i]);
  }
  CHECK(finished == 200 && counter_sum == 1000, "finished %d sum %d", finished, counter_sum);
}

// Frame-pointer chain: from inside a fiber it must end cleanly (a zero link) on the fiber stack.
static int chain_frames, chain_ok;

static __attribute__((noinline)) void walk_chain(void) {
  cov_fiber_t *fiber = cov_fiber_current();
  uintptr_t low = (uintptr_t)cov_fiber_stack_base(fiber);
  uintptr_t high = low + cov_fiber_stack_size(fiber);
  void **frame = __builtin_frame_address(0);
  chain_ok = 1;
  chain_frames = 0;
  while (frame) {
    if ((uintptr_t)frame < low || (uintptr_t)frame >= high || chain_frames > 100) {
      chain_ok = 0;
      return;
    }
    chain_frames++;
    frame = (void **)frame[0];
  }
}

static __attribute__((noinline)) void chain_level(int n) {
  if (n == 0) walk_chain();
  else chain_level(n - 1);
  __asm__ volatile("" ::: "memory");
}

static void chain_entry(void *argument) {
  (void)argument;
  chain_level(3);
}

static void test_frame_chain(void) {
  section("frame-pointer chain ends cleanly at the fiber's first frame");
  cov_fiber_t *fiber = cov_fiber_create(0, chain_entry, NULL);
  cov_fiber_resume(fiber);
  CHECK(chain_ok && chain_frames >= 5, "ok %d frames %d", chain_ok, chain_frames);
  cov_fiber_destroy(fiber);
}

// MARK: - Threads

typedef struct {
  cov_fiber_t *fiber;
  cov_fiber_t *seen_current;
} hop_t;

static pthread_t hop_expected;  // the thread resuming the fiber this time
static int hop_thread_ok[3];

static void hop_entry(void *argument) {
  (void)argument;
  for (int i = 0; i < 3; i++) {
    // Which thread are we on? It must be the one that resumed us this time.
    pthread_t self = pthread_self();
    hop_thread_ok[i] = pthread_equal(self, hop_expected) && cov_fiber_current() != NULL;
    cov_tls_store(0, (void *)(intptr_t)(i + 1));
    cov_fiber_suspend();
  }
}

static void *hop_thread(void *argument) {
  hop_t *hop = argument;
  hop_expected = pthread_self();
  cov_fiber_resume(hop->fiber);
  hop->seen_current = cov_fiber_current();
  return cov_tls_load(0);
}

static int stress_errors;

static void *stack_stress(void *argument) {
  (void)argument;
  cov_stack_t stacks[100];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 100; i++) {
      if (cov_stack_allocate(i % 7 == 0 ? 48 * 1024 : 0, &stacks[i]) != 0) {
        __atomic_add_fetch(&stress_errors, 1, __ATOMIC_RELAXED);
        stacks[i].base = NULL;
        continue;
      }
      ((volatile char *)stacks[i].base)[stacks[i].size - 1] = 1;
      ((volatile char *)stacks[i].base)[0] = 1;
    }
    for (int i = 0; i < 100; i++) cov_stack_release(&stacks[i]);
  }
  return NULL;
}

static void test_threads(void) {
  section("a fiber migrates between threads; allocator under two threads");
  hop_t hop = {cov_fiber_create(0, hop_entry, NULL), NULL};
  for (int i = 0; i < 3; i++) {
    void *result = NULL;
    pthread_t thread;
    pthread_create(&thread, NULL, hop_thread, &hop);
    pthread_join(thread, &result);
    CHECK(hop_thread_ok[i], "resume %d ran on the wrong thread", i);
    CHECK(hop.seen_current == NULL, "current not restored on thread %d", i);
    CHECK((intptr_t)result == i + 1, "tls slot %ld", (long)(intptr_t)result);
  }
  cov_fiber_resume(hop.fiber);
  CHECK(cov_fiber_is_finished(hop.fiber), "finished");
  cov_fiber_destroy(hop.fiber);

  pthread_t a, b;
  pthread_create(&a, NULL, stack_stress, NULL);
  pthread_create(&b, NULL, stack_stress, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  CHECK(stress_errors == 0, "%d allocation errors", stress_errors);
}

// MARK: - 100,000 stacks at once

static int count_mappings(void) {
  FILE *file = fopen("/proc/self/maps", "r");
  if (!file) return -1;
  int lines = 0, c;
  while ((c = fgetc(file)) != EOF) lines += c == '\n';
  fclose(file);
  return lines;
}

static void test_hundred_thousand(void) {
  section("100,000 stacks alive at once under vm.max_map_count");
  if (!cov_stack_uses_guard_markers()) {
    printf("SKIP: MADV_GUARD_INSTALL unsupported here (kernel < 6.13 or emulator); stacks use one "
           "mapping + mprotect guard each, so 100,000 would exceed vm.max_map_count\n");
    return;
  }
  enum { N = 100000 };
  cov_stack_t *stacks = calloc(N, sizeof *stacks);
  int before = count_mappings();
  int errors = 0;
  for (int i = 0; i < N; i++) {
    int error = cov_stack_allocate(0, &stacks[i]);
    if (error) {
      if (errors++ == 0) printf("allocation %d failed: %s\n", i, strerror(error));
      stacks[i].base = NULL;
      continue;
    }
    ((volatile char *)stacks[i].base)[stacks[i].size - 1] = (char)i;  // commit the top page
  }
  int during = count_mappings();
  printf("mappings: %d before, %d with 100,000 stacks\n", before, during);
  CHECK(errors == 0, "%d allocations failed", errors);
  CHECK(during - before < 6000, "%d new mappings", during - before);
  int corrupted = 0;
  for (int i = 0; i < N; i++)
    if (stacks[i].base && ((volatile char *)stacks[i].base)[stacks[i].size - 1] != (char)i)
      corrupted++;
  CHECK(corrupted == 0, "%d stacks overlap", corrupted);
  for (int i = 0; i < N; i++) cov_stack_release(&stacks[i]);
  int after = count_mappings();
  printf("mappings after release: %d\n", after);
#if !defined(TEST_TSAN)
  CHECK(after - before < 100, "%d mappings left", after - before);
#endif
  free(stacks);
}

// MARK: - Shared stacks (copy-on-suspend)

// Parking hooks of the tests: a parked fiber's argument is a shared_job_t, handed back on a
// lock-protected ready list.
typedef struct shared_job {
  cov_fiber_t *fiber;
  struct shared_job *next_ready;
  int id;
  int depth;              // bytes of padding between the entry and the suspension
  int rounds;             // suspensions before the entry returns
  int done;               // rounds completed
  int work;               // busy iterations after each resume (to make threads overlap)
  int corrupted;          // frames found changed after a resume
  _Atomic int parks, unparks;
  void *own_local;        // address of a local in its frames (valid for the fiber itself)
} shared_job_t;

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_job_t *ready_head;
static _Atomic int unpark_count;

static void test_park(void *argument) {
  shared_job_t *job = argument;
  atomic_fetch_add(&job->parks, 1);
}

static void test_unpark(void *argument) {
  shared_job_t *job = argument;
  atomic_fetch_add(&job->unparks, 1);
  atomic_fetch_add(&unpark_count, 1);
  pthread_mutex_lock(&ready_lock);
  job->next_ready = ready_head;
  ready_head = job;
  pthread_mutex_unlock(&ready_lock);
}

static shared_job_t *take_ready(void) {
  pthread_mutex_lock(&ready_lock);
  shared_job_t *job = ready_head;
  if (job) ready_head = job->next_ready;
  pthread_mutex_unlock(&ready_lock);
  return job;
}

static __attribute__((noinline)) void remember_local(shared_job_t *job, volatile long *local) {
  job->own_local = (void *)local;
}

// Suspends `rounds` times with `depth` bytes of its own frames below, checking after every
// resume that those frames (and a pointer into them) are what it left.
static __attribute__((noinline)) void shared_rounds(shared_job_t *job, int depth) {
  if (depth > 0) {
    volatile unsigned char pad[256];
    for (int i = 0; i < 256; i++) pad[i] = (unsigned char)(job->id + i + depth);
    shared_rounds(job, depth - 256);
    for (int i = 0; i < 256; i++)
      if (pad[i] != (unsigned char)(job->id + i + depth)) job->corrupted++;
    return;
  }
  volatile long local = 1000L * job->id;
  remember_local(job, &local);  // cleared before the frame ends
  for (int round = 0; round < job->rounds; round++) {
    cov_fiber_suspend();
    if (local != 1000L * job->id + round || job->own_local != (void *)&local ||
        *(volatile long *)job->own_local != local)
      job->corrupted++;
    local += 1;
    job->done++;
    for (int i = 0; i < job->work; i++) __asm__ volatile("" ::: "memory");
  }
  job->own_local = NULL;  // the frame ends here
}

static void shared_entry(void *argument) {
  shared_job_t *job = argument;
  shared_rounds(job, job->depth);
}

// The minimum number of stacks the next make_shared asks of its group (0: the group's own).
static size_t group_minimum;

static cov_fiber_t *make_shared(const void *key, shared_job_t *job, int id, int depth,
                                int rounds) {
  memset(job, 0, sizeof *job);
  job->id = id;
  job->depth = depth;
  job->rounds = rounds;
  job->fiber = cov_fiber_create_shared(cov_stack_group(key), group_minimum, shared_entry, job);
  return job->fiber;
}

// Lazy eviction and groups keeping `minimum` stacks for what follows; returns the eviction
// setting to restore.
static int lazy_groups(size_t minimum) {
  group_minimum = minimum;
  int eager = cov_shared_stacks_eager_eviction();
  cov_shared_stacks_set_eager_eviction(0);
  return eager;
}

static int copied_out(cov_fiber_t *fiber) {
  cov_fiber_frames_t frames;
  return cov_fiber_frames(fiber, &frames) && frames.copied_out;
}

static void test_shared_copy(void) {
  section("shared stacks: two fibers on one stack, copied out and back at the same addresses");
  static int key;
  int eager = lazy_groups(1);
  static const int depths[] = {0, 256, 1024, 4096, 16384};
  for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
    shared_job_t a, b;
    CHECK(make_shared(&key, &a, 1, depths[d], 50) && make_shared(&key, &b, 2, depths[d], 50),
          "create");
    CHECK(cov_fiber_is_shared(a.fiber) && cov_fiber_stack_base(a.fiber) == NULL, "unbound");
    int status_ok = 1, copies_ok = 1;
    for (int round = 0; round <= 50; round++) {
      status_ok &= cov_fiber_resume(a.fiber) == COV_FIBER_RAN;
      status_ok &= cov_fiber_resume(b.fiber) == COV_FIBER_RAN;
      // Both ran on the one stack: a was copied out for b, b is in place.
      if (round < 50) copies_ok &= copied_out(a.fiber) && !copied_out(b.fiber);
    }
    CHECK(status_ok && copies_ok, "depth %d: status %d copies %d", depths[d], status_ok, copies_ok);
    CHECK(cov_fiber_is_finished(a.fiber) && cov_fiber_is_finished(b.fiber), "finished");
    CHECK(a.done == 50 && b.done == 50 && a.corrupted == 0 && b.corrupted == 0,
          "depth %d: done %d/%d corrupted %d/%d", depths[d], a.done, b.done, a.corrupted,
          b.corrupted);
    CHECK(cov_fiber_stack_base(a.fiber) == cov_fiber_stack_base(b.fiber), "one stack");
    cov_fiber_destroy(a.fiber);
    cov_fiber_destroy(b.fiber);
  }
  CHECK(cov_stack_group_stack_count(&key) == 1, "stacks %zu", cov_stack_group_stack_count(&key));
  cov_shared_stacks_set_eager_eviction(eager);
}

static void test_shared_lazy(void) {
  section("shared stacks: copy only when needed (two stacks, two fibers: never)");
  static int key;
  int eager = lazy_groups(2);
  shared_job_t a, b;
  make_shared(&key, &a, 3, 512, 100);
  make_shared(&key, &b, 4, 512, 100);
  int never = 1;
  for (int round = 0; round <= 100; round++) {
    cov_fiber_resume(a.fiber);
    cov_fiber_resume(b.fiber);
    if (round < 100) never &= !copied_out(a.fiber) && !copied_out(b.fiber);
  }
  CHECK(never, "a fiber was copied out");
  CHECK(a.corrupted == 0 && b.corrupted == 0 && a.done == 100 && b.done == 100, "frames");
  CHECK(cov_fiber_stack_base(a.fiber) != cov_fiber_stack_base(b.fiber), "two stacks");
  cov_fiber_destroy(a.fiber);
  cov_fiber_destroy(b.fiber);

  // Eager eviction: copied out at every suspension, even with a stack to itself.
  cov_shared_stacks_set_eager_eviction(1);
  make_shared(&key, &a, 5, 512, 20);
  int always = 1;
  for (int round = 0; round <= 20; round++) {
    cov_fiber_resume(a.fiber);
    if (round < 20) always &= copied_out(a.fiber);
  }
  CHECK(always && a.corrupted == 0 && a.done == 20, "eager: always %d corrupted %d", always,
        a.corrupted);
  cov_fiber_destroy(a.fiber);
  cov_shared_stacks_set_eager_eviction(eager);
}

// Walks the frame-pointer chain of a suspended fiber in a copy of its frames.
static int walk_copied_chain(cov_fiber_t *fiber, int *frames_out) {
  static unsigned char copy[64 * 1024];
  cov_fiber_frames_t frames;
  size_t used = cov_fiber_copy_frames(fiber, copy, sizeof copy, &frames);
  if (used == 0 || used > sizeof copy) return 0;
  uintptr_t low = (uintptr_t)frames.sp, high = (uintptr_t)frames.stack_high;
#define AT(address) (*(uintptr_t *)(copy + ((address) - low)))
#if defined(__x86_64__)
  uintptr_t fp = AT(low + 0x30);  // the saved rbp of the switch frame
#else
  uintptr_t fp = AT(low + 0x90);  // the saved x29
#endif
  int count = 0;
  while (fp) {
    if (fp < low || fp + 16 > high || count > 1000) return 0;
    count++;
    fp = AT(fp);
  }
#undef AT
  *frames_out = count;
  return 1;
}

static void test_shared_frames_accessor(void) {
  section("saved frames accessor: in place and copied out, frame chain walkable in the copy");
  static int key;
  int eager = lazy_groups(1);
  shared_job_t a, b;
  make_shared(&key, &a, 6, 1024, 2);
  make_shared(&key, &b, 7, 0, 2);
  cov_fiber_frames_t frames;
  CHECK(cov_fiber_frames(a.fiber, &frames) == 0, "not started: no frames");
  cov_fiber_resume(a.fiber);
  CHECK(cov_fiber_frames(a.fiber, &frames) == 1 && !frames.copied_out && frames.bytes == frames.sp,
        "in place");
  int chain = 0;
  CHECK(walk_copied_chain(a.fiber, &chain) && chain >= 5, "chain in place: %d frames", chain);
  cov_fiber_resume(b.fiber);  // evicts a
  CHECK(cov_fiber_frames(a.fiber, &frames) == 1 && frames.copied_out && frames.bytes != frames.sp,
        "copied out");
  size_t used = (size_t)((char *)frames.stack_high - (char *)frames.sp);
  CHECK(used >= 1024 && used < 4096, "used %zu", used);
  int chain_copied = 0;
  CHECK(walk_copied_chain(a.fiber, &chain_copied) && chain_copied == chain,
        "chain copied: %d frames (in place %d)", chain_copied, chain);
  while (!cov_fiber_is_finished(a.fiber) || !cov_fiber_is_finished(b.fiber)) {
    if (!cov_fiber_is_finished(a.fiber)) cov_fiber_resume(a.fiber);
    if (!cov_fiber_is_finished(b.fiber)) cov_fiber_resume(b.fiber);
  }
  CHECK(a.corrupted == 0 && b.corrupted == 0, "frames");
  cov_fiber_destroy(a.fiber);
  cov_fiber_destroy(b.fiber);
  cov_shared_stacks_set_eager_eviction(eager);
}

// A fiber that runs until told to suspend, on another thread.
static _Atomic int hold_release, hold_entered;

static void holder_entry(void *argument) {
  (void)argument;
  atomic_store(&hold_entered, 1);
  while (!atomic_load(&hold_release)) sched_yield();
  cov_fiber_suspend();
}

static void *holder_thread(void *argument) {
  cov_fiber_resume(argument);
  return NULL;
}

static shared_job_t nested_job;

static void nesting_entry(void *argument) {
  // Running on the stack that nested_job's fiber is bound to: resuming it must park it.
  int *status = argument;
  *status = cov_fiber_resume(nested_job.fiber);
  cov_fiber_suspend();
}

static void test_shared_parking(void) {
  section("shared stacks: a fiber whose stack is running elsewhere is parked, not waited for");
  static int key;
  group_minimum = 1;  // stacks the group of `key` keeps at least
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  atomic_store(&unpark_count, 0);
  atomic_store(&hold_release, 0);
  atomic_store(&hold_entered, 0);
  // The job is bound to the group's one stack first; the holder then takes that stack over (a
  // stack whose occupant is suspended is preferred to a new one) and keeps it running.
  shared_job_t job;
  make_shared(&key, &job, 8, 256, 2);
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_RAN, "job started");
  cov_fiber_t *holder = cov_fiber_create_shared(cov_stack_group(&key), 1, holder_entry, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, holder_thread, holder);
  while (!atomic_load(&hold_entered)) sched_yield();
  CHECK(cov_fiber_stack_base(holder) == cov_fiber_stack_base(job.fiber), "one stack");
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_PARKED, "parked");
  CHECK(atomic_load(&job.parks) == 1 && atomic_load(&job.unparks) == 0, "park hook");
  atomic_store(&hold_release, 1);  // the holder suspends: its thread hands the job back
  pthread_join(thread, NULL);
  CHECK(atomic_load(&job.unparks) == 1, "unparked by the holder's switch-out");
  CHECK(take_ready() == &job, "on the ready list");
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_RAN, "runs once handed back");
  CHECK(cov_fiber_resume(job.fiber) == COV_FIBER_RAN && cov_fiber_is_finished(job.fiber), "done");
  CHECK(job.done == 2, "rounds %d", job.done);
  CHECK(job.corrupted == 0, "frames");
  cov_fiber_resume(holder);
  CHECK(cov_fiber_is_finished(holder), "holder finished");
  cov_fiber_destroy(holder);
  cov_fiber_destroy(job.fiber);

  // A fiber resuming one bound to its own stack: parked too, handed back at its switch-out.
  static int nested_key;
  group_minimum = 1;  // stacks the group of `nested_key` keeps at least
  make_shared(&nested_key, &nested_job, 9, 0, 1);
  cov_fiber_resume(nested_job.fiber);  // bound to the group's one stack, suspended there
  int status = -1;
  cov_fiber_t *outer =
      cov_fiber_create_shared(cov_stack_group(&nested_key), 1, nesting_entry, &status);
  CHECK(cov_fiber_resume(outer) == COV_FIBER_RAN, "outer ran");
  CHECK(status == COV_FIBER_PARKED && atomic_load(&nested_job.unparks) == 1, "nested park: %d",
        status);
  CHECK(take_ready() == &nested_job, "handed back");
  cov_fiber_resume(nested_job.fiber);
  cov_fiber_resume(outer);
  CHECK(cov_fiber_is_finished(outer) && cov_fiber_is_finished(nested_job.fiber), "finished");
  CHECK(nested_job.corrupted == 0, "frames");
  cov_fiber_destroy(outer);
  cov_fiber_destroy(nested_job.fiber);
}

// Waiters handed back by a hook that resumes them at once (as an immediate scheduler does):
// each one's switch-out hands back the next, which must not nest one level per waiter.
enum { HANDBACK_FIBERS = 2000 };
static shared_job_t handback_jobs[HANDBACK_FIBERS];
static uintptr_t handback_low = UINTPTR_MAX, handback_high;
static int handback_ran;

static void immediate_unpark(void *argument) {
  uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
  if (frame < handback_low) handback_low = frame;
  if (frame > handback_high) handback_high = frame;
  shared_job_t *job = argument;
  if (cov_fiber_resume(job->fiber) == COV_FIBER_RAN) handback_ran++;
}

static void test_shared_handback_depth(void) {
  section("shared stacks: 2,000 waiters handed back and resumed at once, without nesting");
  static int key;
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  group_minimum = 1;  // stacks the group of `key` keeps at least
  for (int i = 0; i < HANDBACK_FIBERS; i++) {
    make_shared(&key, &handback_jobs[i], i, 0, 1);
    cov_fiber_resume(handback_jobs[i].fiber);  // bound to the one stack, suspended
  }
  atomic_store(&hold_release, 0);
  atomic_store(&hold_entered, 0);
  cov_fiber_t *holder = cov_fiber_create_shared(cov_stack_group(&key), 1, holder_entry, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, holder_thread, holder);
  while (!atomic_load(&hold_entered)) sched_yield();
  int parked = 0;
  for (int i = 0; i < HANDBACK_FIBERS; i++)
    parked += cov_fiber_resume(handback_jobs[i].fiber) == COV_FIBER_PARKED;
  CHECK(parked == HANDBACK_FIBERS, "parked %d", parked);
  cov_fiber_set_parking_hooks(test_park, immediate_unpark);
  atomic_store(&hold_release, 1);
  pthread_join(thread, NULL);
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  int finished = 0, corrupted = 0;
  for (int i = 0; i < HANDBACK_FIBERS; i++) {
    finished += cov_fiber_is_finished(handback_jobs[i].fiber);
    corrupted += handback_jobs[i].corrupted;
    cov_fiber_destroy(handback_jobs[i].fiber);
  }
  CHECK(handback_ran == HANDBACK_FIBERS && finished == HANDBACK_FIBERS && corrupted == 0,
        "ran %d finished %d corrupted %d", handback_ran, finished, corrupted);
  CHECK(handback_high - handback_low < 4096, "hooks nested %zu bytes deep",
        (size_t)(handback_high - handback_low));
  cov_fiber_resume(holder);
  cov_fiber_destroy(holder);
}

// Threads resume fibers of a two-stack group from a common run queue; parked ones come back
// through the hooks. Every fiber checks its frames after every resume.
enum { STRESS_FIBERS = 64, STRESS_ROUNDS = 200, STRESS_THREADS = 4 };
static shared_job_t stress_jobs[STRESS_FIBERS];
static _Atomic int stress_finished;

static void *shared_stress_thread(void *argument) {
  (void)argument;
  while (atomic_load(&stress_finished) < STRESS_FIBERS) {
    shared_job_t *job = take_ready();
    if (!job) {
      sched_yield();
      continue;
    }
    if (cov_fiber_resume(job->fiber) == COV_FIBER_PARKED) continue;  // comes back via unpark
    if (cov_fiber_is_finished(job->fiber)) atomic_fetch_add(&stress_finished, 1);
    else test_unpark(job);  // suspended: ready again
  }
  return NULL;
}

static void test_shared_threads(void) {
  section("shared stacks: 64 fibers, 2 stacks, 4 threads resuming them");
  static int key;
  group_minimum = 2;  // stacks the group of `key` keeps at least
  cov_fiber_set_parking_hooks(test_park, test_unpark);
  atomic_store(&stress_finished, 0);
  for (int i = 0; i < STRESS_FIBERS; i++) {
    make_shared(&key, &stress_jobs[i], 100 + i, (i % 4) * 512, STRESS_ROUNDS);
    stress_jobs[i].work = 2000;
    test_unpark(&stress_jobs[i]);
  }
  pthread_t threads[STRESS_THREADS];
  for (int i = 0; i < STRESS_THREADS; i++) pthread_create(&threads[i], NULL, shared_stress_thread, NULL);
  for (int i = 0; i < STRESS_THREADS; i++) pthread_join(threads[i], NULL);
  int corrupted = 0, done = 0, parks = 0;
  for (int i = 0; i < STRESS_FIBERS; i++) {
    corrupted += stress_jobs[i].corrupted;
    done += stress_jobs[i].done;
    parks += atomic_load(&stress_jobs[i].parks);
    cov_fiber_destroy(stress_jobs[i].fiber);
  }
  CHECK(corrupted == 0 && done == STRESS_FIBERS * STRESS_ROUNDS, "corrupted %d done %d",
        corrupted, done);
  size_t stacks = cov_stack_group_stack_count(&key);
  printf("parks: %d; stacks: %zu (grows past the minimum while all are running)\n", parks, stacks);
  CHECK(stacks >= 2 && stacks <= 64, "stacks %zu", stacks);
}

static void test_shared_scale(void) {
  // Under TSan every fiber has a TSan fiber with its own shadow stack mapping: fewer there.
#if defined(TEST_TSAN)
  int count = 5000;
#else
  int count = under_emulation ? 20000 : 100000;
#endif
  printf("-- shared stacks: %d fibers suspended at once, few mappings on any kernel\n", count);
  static int key;
  int eager = lazy_groups(0);  // (0: the default)
  shared_job_t *jobs = calloc((size_t)count, sizeof *jobs);
  int before = count_mappings();
  int failures = 0;
  for (int i = 0; i < count; i++) {
    if (!make_shared(&key, &jobs[i], i, 0, 1)) {
      failures++;
      continue;
    }
    cov_fiber_resume(jobs[i].fiber);
  }
  int during = count_mappings();
  printf("mappings: %d before, %d with %d suspended shared fibers\n", before, during, count);
  CHECK(failures == 0, "%d failed", failures);
#if !defined(TEST_TSAN)  // (TSan maps a shadow stack for every fiber)
  CHECK(during - before < 64, "%d new mappings", during - before);
#endif
  int corrupted = 0, finished = 0;
  for (int i = 0; i < count; i++) {
    if (!jobs[i].fiber) continue;
    cov_fiber_resume(jobs[i].fiber);
    corrupted += jobs[i].corrupted;
    finished += cov_fiber_is_finished(jobs[i].fiber);
    cov_fiber_destroy(jobs[i].fiber);
  }
  CHECK(corrupted == 0 && finished == count, "corrupted %d finished %d", corrupted, finished);
  free(jobs);
  cov_shared_stacks_set_eager_eviction(eager);
}

static int run_child(void (*body)(void), char *output, size_t capacity);

// A pointer into a suspended fiber's frames, used by someone else while the fiber's bytes are
// copied out: debug builds make it read a fill pattern, ASan builds report it.
static shared_job_t vacated_job;

static __attribute__((unused)) void start_vacated_job(void) {
  static int key;
  cov_shared_stacks_set_eager_eviction(1);
  make_shared(&key, &vacated_job, 0x55, 0, 1);
  cov_fiber_resume(vacated_job.fiber);  // suspended with own_local pointing into its frames
}

#if defined(TEST_ASAN)
static void child_read_vacated(void) {
  start_vacated_job();
  long value = *(volatile long *)vacated_job.own_local;
  fprintf(stderr, "read %ld without a report\n", value);
}
#endif

static void test_vacated(void) {
  section("vacated frames: misuse of a pointer into a suspended fiber's frames is caught");
#if defined(TEST_ASAN)
  char output[8192];
  int status = run_child(child_read_vacated, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x", status);
  CHECK(strstr(output, "use-after-poison") != NULL, "ASan output: [%.300s]", output);
#elif defined(DEBUG)
  int eager = cov_shared_stacks_eager_eviction();
  start_vacated_job();
  long value = *(volatile long *)vacated_job.own_local;
  CHECK((unsigned long)value == 0xCDCDCDCDCDCDCDCDUL, "read %#lx", (unsigned long)value);
  cov_fiber_resume(vacated_job.fiber);
  CHECK(cov_fiber_is_finished(vacated_job.fiber) && vacated_job.corrupted == 0, "frames restored");
  cov_fiber_destroy(vacated_job.fiber);
  cov_shared_stacks_set_eager_eviction(eager);
#else
  printf("SKIP: release build without ASan: vacated bytes are neither filled nor poisoned\n");
#endif
}

// MARK: - Mapping budget

static void test_mapping_budget(void) {
  section("mapping budget: dedicated stacks stop short of vm.max_map_count with EAGAIN");
  size_t real = cov_stack_max_map_count();
  printf("vm.max_map_count: %zu; mappings held now: %zu\n", real, cov_stack_mappings_in_use());
  // A limit 200 mappings above the reserve (an eighth of the limit, at least 1,024): room for
  // 100 stacks of a non-default size with mprotect guards, 200 with guard markers.
  size_t in_use = cov_stack_mappings_in_use();
  cov_stack_set_max_map_count(in_use + 200 + 1024);
  enum { MAX = 1000 };
  static cov_stack_t stacks[MAX];
  int made = 0, error = 0;
  while (made < MAX) {
    error = cov_stack_allocate(48 * 1024, &stacks[made]);
    if (error) break;
    made++;
  }
  printf("stacks before the budget ran out: %d (error %s)\n", made, strerror(error));
  CHECK(error == EAGAIN, "error %d", error);
  CHECK(made == (cov_stack_uses_guard_markers() ? 200 : 100), "made %d", made);
  // A shared fiber of a new group needs a stack too: its creation fails cleanly (with a new
  // default size, so that no pooled stack can serve it).
  cov_stack_set_default_size(64 * 1024);
  // (changing the default returned the pooled stacks to the system: use up what that freed)
  while (made < MAX && cov_stack_allocate(0, &stacks[made]) == 0) made++;
  static int key;
  errno = 0;
  cov_fiber_t *shared = cov_fiber_create_shared(cov_stack_group(&key), 0, shared_entry, NULL);
  CHECK(shared == NULL && errno == EAGAIN, "shared create: %p errno %d", (void *)shared, errno);
  cov_fiber_destroy(shared);
  cov_stack_set_default_size(256 * 1024);
  for (int i = 0; i < made; i++) cov_stack_release(&stacks[i]);
  CHECK(cov_stack_mappings_in_use() <= in_use, "in use %zu, was %zu", cov_stack_mappings_in_use(),
        in_use);
  cov_stack_set_max_map_count(0);
  CHECK(cov_stack_max_map_count() == real, "limit restored");
}

// MARK: - Overflow in a forked child

// Runs `body` in a child with stderr captured; returns the wait status, fills `output`.
static int run_child(void (*body)(void), char *output, size_t capacity) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(60);  // a child that neither crashes nor exits must not hang the suite
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(42);
  }
  close(fds[1]);
  size_t length = 0;
  ssize_t got;
  char discard[4096];
  for (;;) {  // drain everything, keep what fits
    if (length + 1 < capacity) got = read(fds[0], output + length, capacity - 1 - length);
    else got = read(fds[0], discard, sizeof discard);
    if (got <= 0) break;
    if (length + 1 < capacity) length += (size_t)got;
  }
  output[length] = 0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

static volatile int recursion_limit = 1 << 30;  // never reached: the guard stops it first

static __attribute__((noinline)) int recurse_forever(int depth) {
  volatile char frame[512];
  if (depth > recursion_limit) return 0;
  frame[0] = (char)depth;
  return recurse_forever(depth + 1) + frame[0];
}

static __attribute__((noinline)) int recurse_big_frames(int depth) {
  volatile char frame[20000];  // bigger than a page: must still land in the 64 KiB guard
  if (depth > recursion_limit) return 0;
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)depth;
  return recurse_big_frames(depth + 1) + frame[0];
}

static void overflow_entry(void *argument) {
  if (argument) recurse_big_frames(0);
  else recurse_forever(0);
}

static void child_overflow_default(void) {
  cov_fiber_t *fiber = cov_fiber_create(0, overflow_entry, NULL);
  cov_fiber_resume(fiber);
}

static void child_overflow_custom(void) {
  cov_fiber_t *fiber = cov_fiber_create(100 * 1024, overflow_entry, (void *)1);
  cov_fiber_resume(fiber);
}

// Recycle stacks through MADV_DONTNEED (beyond the pool) first: the guard must still be there.
static void child_overflow_recycled(void) {
  cov_stack_set_pool_capacity(0);
  cov_fiber_t *fibers[200];
  for (int i = 0; i < 200; i++) {
    fibers[i] = cov_fiber_create(0, recursion_entry, NULL);
    cov_fiber_resume(fibers[i]);
  }
  for (int i = 0; i < 200; i++) cov_fiber_destroy(fibers[i]);
  cov_fiber_t *fiber = cov_fiber_create(0, overflow_entry, NULL);
  cov_fiber_resume(fiber);
}

static void previous_handler(int sig, siginfo_t *info, void *context) {
  (void)info;
  (void)context;
  static const char text[] = "previous handler ran\n";
  ssize_t ignored = write(STDERR_FILENO, text, sizeof text - 1);
  (void)ignored;
  signal(sig, SIG_DFL);
}

// Runs in a fresh process (exec'ed): a SIGSEGV handler installed BEFORE Covenant's.
static void chained_main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = previous_handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, NULL);
  child_overflow_default();
}

static void child_overflow_chained(void) {
  execl("/proc/self/exe", "test_switch", "--chained-child", (char *)NULL);
  _exit(127);
}

static void *thread_overflow(void *argument) {
  (void)argument;
  child_overflow_default();
  return NULL;
}

static void child_overflow_thread(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, thread_overflow, NULL);
  pthread_join(thread, NULL);
}

static void shared_overflow_entry(void *argument) {
  (void)argument;
  recurse_forever(0);
}

static void child_overflow_shared(void) {
  static int key;
  cov_fiber_t *fiber =
      cov_fiber_create_shared(cov_stack_group(&key), 0, shared_overflow_entry, NULL);
  cov_fiber_resume(fiber);
}

// 8 KiB of frames at the suspension, with the copy limit at 4 KiB.
static void child_copy_limit(void) {
  cov_shared_stack_set_copy_limit(4096);
  static int key;
  shared_job_t job;
  make_shared(&key, &job, 1, 8192, 1);
  cov_fiber_resume(job.fiber);
}

static void child_null_dereference(void) {
  cov_overflow_handler_install();
  static int *volatile bad_pointer = (int *)16;
  *bad_pointer = 1;
}

static void child_entry_returns_entry(cov_transfer_t t) { (void)t; }

static void child_atexit(void) {
  static const char text[] = "atexit ran\n";
  ssize_t ignored = write(STDERR_FILENO, text, sizeof text - 1);
  (void)ignored;
}

static void child_entry_returns(void) {
  atexit(child_atexit);
  cov_stack_t stack;
  cov_stack_allocate(0, &stack);
  cov_fcontext_t ctx = cov_make_fcontext((char *)stack.base + stack.size, stack.size,
                                         child_entry_returns_entry);
  cov_jump_fcontext(ctx, NULL);
  _exit(3);
}

static const char expected[] = "Covenant: coroutine stack overflow (stack size ";

static void expect_overflow(const char *name, void (*body)(void), size_t size,
                            const char *also) {
  char output[4096];
  int status = run_child(body, output, sizeof output);
  if (under_emulation && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    printf("SKIP %s: cannot exec a fresh process under emulation\n", name);
    return;
  }
  char needle[96];
  snprintf(needle, sizeof needle, "%s%zu bytes)", expected, size);
  CHECK(died_of_fault(status), "%s: child status %#x", name, status);
  CHECK(strstr(output, needle) != NULL, "%s: stderr was [%s]", name, output);
  if (also) CHECK(strstr(output, also) != NULL, "%s: stderr lacks [%s]: [%s]", name, also, output);
  char *newline = strchr(output, '\n');
  printf("%s: %.*s\n", name, newline ? (int)(newline - output) : (int)strlen(output), output);
}

static void test_overflow(void) {
  section("guard hit in a forked child: diagnostic, then death by SIGSEGV");
  expect_overflow("default size", child_overflow_default, cov_stack_default_size(), NULL);
  expect_overflow("custom size, 20 KB frames", child_overflow_custom, 100 * 1024, NULL);
  expect_overflow("recycled slot", child_overflow_recycled, cov_stack_default_size(), NULL);
  expect_overflow("chained handler", child_overflow_chained, cov_stack_default_size(),
                  "previous handler ran");
  expect_overflow("secondary thread", child_overflow_thread, cov_stack_default_size(), NULL);
  expect_overflow("shared stack", child_overflow_shared, cov_stack_default_size(), NULL);

  char limit_output[4096];
  int limit_status = run_child(child_copy_limit, limit_output, sizeof limit_output);
  CHECK(WIFSIGNALED(limit_status) && WTERMSIG(limit_status) == SIGABRT, "copy limit: status %#x",
        limit_status);
  CHECK(strstr(limit_output, "more than the copy limit (4096 bytes)") != NULL,
        "copy limit: stderr was [%s]", limit_output);

  char output[4096];
  int status = run_child(child_null_dereference, output, sizeof output);
  CHECK(died_of_fault(status), "null deref: status %#x", status);
  CHECK(strstr(output, "Covenant") == NULL, "null deref printed [%s]", output);

  status = run_child(child_entry_returns, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "entry return: status %#x", status);
  CHECK(strstr(output, "atexit") == NULL, "entry return ran atexit handlers");
}

// MARK: - Configuration

static void test_configuration(void) {
  section("configuration: default size and pool capacity");
  CHECK(cov_stack_default_size() == 256 * 1024, "default %zu", cov_stack_default_size());
  CHECK(cov_stack_pool_capacity() == 64, "pool %zu", cov_stack_pool_capacity());
  cov_stack_set_default_size(1000);
  CHECK(cov_stack_default_size() == 16 * 1024, "min %zu", cov_stack_default_size());
  cov_stack_set_default_size(100 * 1000);
  CHECK(cov_stack_default_size() % (size_t)sysconf(_SC_PAGESIZE) == 0 &&
            cov_stack_default_size() >= 100 * 1000,
        "rounded %zu", cov_stack_default_size());
  cov_fiber_t *fiber = cov_fiber_create(0, counter_entry, (void *)(intptr_t)1);
  CHECK(fiber && cov_fiber_stack_size(fiber) == cov_stack_default_size(), "fiber size");
  while (!cov_fiber_is_finished(fiber)) cov_fiber_resume(fiber);
  cov_fiber_destroy(fiber);
  cov_stack_t stack;
  CHECK(cov_stack_allocate(0, &stack) == 0 && stack.size == cov_stack_default_size() &&
            stack.guard_size >= 64 * 1024 &&
            (char *)stack.guard + stack.guard_size == (char *)stack.base,
        "layout");
  cov_stack_release(&stack);
  cov_stack_set_default_size(256 * 1024);
  cov_stack_set_pool_capacity(8);
  CHECK(cov_stack_pool_capacity() == 8, "pool %zu", cov_stack_pool_capacity());
  cov_stack_set_pool_capacity(64);
}

// MARK: - Snapshots: the registry, frames of suspended fibers, symbols

static __attribute__((noinline)) void snapshot_level_two(void) {
  cov_fiber_suspend();
  __asm__ volatile("" ::: "memory");  // no tail call: this frame stays on the stack
}

static __attribute__((noinline)) void snapshot_level_one(void) {
  snapshot_level_two();
  __asm__ volatile("" ::: "memory");
}

static void snapshot_entry(void *argument) {
  (void)argument;
  snapshot_level_one();
}

// Whether the backtrace of a suspended `fiber` names both levels, innermost first.
static int backtrace_names_levels(cov_fiber_t *fiber, size_t *in_use) {
  uintptr_t addresses[64];
  size_t count = cov_fiber_backtrace(fiber, addresses, 64, in_use);
  int two = -1, one = -1;
  for (size_t i = 0; i < count; i++) {
    const char *name, *image;
    uintptr_t offset;
    if (!cov_symbolicate(addresses[i] - 1, &name, &offset, &image) || !name) continue;
    if (two < 0 && strcmp(name, "snapshot_level_two") == 0) two = (int)i;
    if (one < 0 && strcmp(name, "snapshot_level_one") == 0) one = (int)i;
  }
  return count >= 3 && two >= 0 && one > two;
}

static int visited_objects;
static void count_visit(void *context, cov_registry_entry_t *entry, uintptr_t object) {
  (void)entry;
  uintptr_t low = (uintptr_t)context;
  if (object >= low && object < low + 4096 * 8) visited_objects++;
}

static void *enter_and_leave_on_a_thread(void *argument) {
  static uint64_t objects[100];
  uint32_t slots[100];
  for (int i = 0; i < 100; i++) slots[i] = cov_registry_enter((uintptr_t)&objects[i]);
  for (int i = 0; i < 100; i++) cov_registry_leave(slots[i]);
  (void)argument;
  return NULL;
}

static void test_snapshots(void) {
  section("snapshots: backtraces and symbols of suspended fibers, the registry");
  // A dedicated fiber, suspended two calls deep.
  cov_fiber_t *dedicated = cov_fiber_create(0, snapshot_entry, NULL);
  cov_fiber_resume(dedicated);
  size_t in_use = 0;
  CHECK(backtrace_names_levels(dedicated, &in_use), "dedicated: both levels in the backtrace");
  CHECK(in_use > 0 && in_use < 4096, "dedicated: %zu bytes in use", in_use);
  // Two shared fibers on one stack: the first one's frames are copied out by the second.
  static int key;
  int eager = lazy_groups(1);
  cov_stack_group_t *group = cov_stack_group(&key);
  cov_fiber_t *first = cov_fiber_create_shared(group, 1, snapshot_entry, NULL);
  cov_fiber_t *second = cov_fiber_create_shared(group, 1, snapshot_entry, NULL);
  cov_fiber_resume(first);
  CHECK(backtrace_names_levels(first, &in_use), "shared, in place: both levels");
  cov_fiber_resume(second);
  cov_fiber_frames_t frames;
  CHECK(cov_fiber_frames(first, &frames) == 1 && frames.copied_out, "the first fiber copied out");
  CHECK(backtrace_names_levels(first, &in_use), "shared, copied out: both levels");
  CHECK(backtrace_names_levels(second, &in_use), "shared, the occupant: both levels");
  cov_fiber_t *fibers[] = {dedicated, first, second};
  for (int i = 0; i < 3; i++) {
    while (!cov_fiber_is_finished(fibers[i])) cov_fiber_resume(fibers[i]);
    uintptr_t none[4];
    CHECK(cov_fiber_backtrace(fibers[i], none, 4, &in_use) == 0, "finished: no frames");
    cov_fiber_destroy(fibers[i]);
  }
  cov_shared_stacks_set_eager_eviction(eager);
  // A function of this (unstripped) executable, found in its symbol table.
  const char *name, *image;
  uintptr_t offset;
  CHECK(cov_symbolicate((uintptr_t)snapshot_entry + 1, &name, &offset, &image) && name &&
            strcmp(name, "snapshot_entry") == 0 && offset == 1,
        "symbol of a static function: %s", name ? name : "(none)");

  // The registry: enter, visit, leave, reuse.
  static uint64_t objects[4096];
  static uint32_t slots[4096];
  uint64_t first_id = cov_registry_next_id();
  for (int i = 0; i < 4096; i++) slots[i] = cov_registry_enter((uintptr_t)&objects[i]);
  int distinct = 1;
  for (int i = 0; i < 4096 && distinct; i++)
    for (int j = i + 1; j < i + 64 && j < 4096; j++) distinct &= slots[i] != slots[j];
  CHECK(distinct, "slots distinct");
  CHECK(cov_registry_entry_id(cov_registry_entry(slots[10])) == first_id + 10, "ids in order");
  visited_objects = 0;
  cov_registry_visit(count_visit, objects);
  CHECK(visited_objects == 4096, "visit saw %d of 4096", visited_objects);
  for (int i = 0; i < 4096; i++) cov_registry_leave(slots[i]);
  visited_objects = 0;
  cov_registry_visit(count_visit, objects);
  CHECK(visited_objects == 0, "after leaving: %d", visited_objects);
  uint32_t made = cov_registry_slots_made();
  for (int i = 0; i < 4096; i++) slots[i] = cov_registry_enter((uintptr_t)&objects[i]);
  for (int i = 0; i < 4096; i++) cov_registry_leave(slots[i]);
  CHECK(cov_registry_slots_made() == made, "slots reused (%u, then %u)", made,
        cov_registry_slots_made());
  // A thread's slots come back when it exits.
  for (int round = 0; round < 20; round++) {
    pthread_t thread;
    pthread_create(&thread, NULL, enter_and_leave_on_a_thread, NULL);
    pthread_join(thread, NULL);
  }
  CHECK(cov_registry_slots_made() <= made + 2 * COV_REGISTRY_BATCH,
        "threads' slots given back at exit (%u made, %u before)", cov_registry_slots_made(), made);
}

// MARK: - Life cycle: thread exit, fork, unmapping, parking, registry growth

// A key whose destructor runs after the library's thread-exit hook (keys made later are
// destroyed later in each round): it gives back what the thread still holds, as a thread-exit
// destructor that finishes a coroutine would, into caches the hook has already flushed.
static pthread_key_t late_key;
typedef struct {
  uint32_t slot;
  cov_fiber_t *dedicated;
} late_release_t;

static void late_release(void *value) {
  late_release_t *held = value;
  cov_registry_leave(held->slot);
  if (held->dedicated) cov_fiber_destroy(held->dedicated);
  free(held);
}

static void nothing_entry(void *argument) { (void)argument; }

static void *hold_until_exit(void *argument) {
  static uint64_t object;
  late_release_t *held = malloc(sizeof *held);
  held->slot = cov_registry_enter((uintptr_t)&object);
  held->dedicated = NULL;
  if (argument) {
    // Also a dedicated fiber's stack, after one that went into the thread's stack cache (which
    // the hook then flushes, and which must then count as unarmed).
    cov_fiber_t *cached = cov_fiber_create(0, nothing_entry, NULL);
    cov_fiber_resume(cached);
    cov_fiber_destroy(cached);
    held->dedicated = cov_fiber_create(0, nothing_entry, NULL);
    cov_fiber_resume(held->dedicated);
  }
  pthread_setspecific(late_key, held);
  return NULL;
}

static void *enter_and_leave_once(void *argument) {
  static uint64_t object;
  cov_registry_leave(cov_registry_enter((uintptr_t)&object));
  return argument;
}

// Run first, in a fresh process: no free slots or stacks left by other tests can hide the loss.
static void test_thread_exit_caches(void) {
  section("thread exit: what a later destructor gives back is flushed too");
  // A thread that caches a slot makes the library's thread-exit hook: the late key comes after.
  pthread_t first;
  pthread_create(&first, NULL, enter_and_leave_once, NULL);
  pthread_join(first, NULL);
  pthread_key_create(&late_key, late_release);
  enum { THREADS = 300 };
  uint32_t made = cov_registry_slots_made();
  for (int i = 0; i < THREADS; i++) {
    pthread_t thread;
    pthread_create(&thread, NULL, hold_until_exit, NULL);
    pthread_join(thread, NULL);
  }
  CHECK(cov_registry_slots_made() <= made + 2 * COV_REGISTRY_BATCH,
        "registry slots given back in a later destructor are not lost: %u made, %u before",
        cov_registry_slots_made(), made);
  size_t mappings = cov_stack_mappings_in_use();
  for (int i = 0; i < THREADS; i++) {
    pthread_t thread;
    pthread_create(&thread, NULL, hold_until_exit, (void *)1);
    pthread_join(thread, NULL);
  }
  CHECK(cov_stack_mappings_in_use() <= mappings + 2,
        "stacks released in a later destructor go back to the pool: %zu mappings, %zu before",
        cov_stack_mappings_in_use(), mappings);
}

// The dump signal in a forked child: the child's own thread runs the work, not the parent's.
static _Atomic(pid_t) *worked_in;  // shared with the children (MAP_SHARED)

static __attribute__((unused)) void note_work(void) { atomic_store(worked_in, getpid()); }

static __attribute__((unused)) void child_dump_signal(void) {
  atomic_store(worked_in, 0);
  raise(SIGUSR2);
  // The child's dump thread runs the work (a bounded wait: a child whose signal woke the
  // parent's thread instead exits 1).
  for (int i = 0; i < 5000 && atomic_load(worked_in) != getpid(); i++) usleep(1000);
  _exit(atomic_load(worked_in) == getpid() ? 0 : 1);
}

// Another thread keeps taking registry snapshots, entering and leaving, and making and dropping
// fibers while the main thread forks: each child must find every lock of the library usable.
static _Atomic int churn_stop;

static void churn_visit(void *context, cov_registry_entry_t *entry, uintptr_t object) {
  (void)context;
  (void)entry;
  (void)object;
}

static void *churn(void *argument) {
  (void)argument;
  static uint64_t object;
  static int key;
  while (!atomic_load(&churn_stop)) {
    cov_registry_visit(churn_visit, NULL);
    uint32_t slot = cov_registry_enter((uintptr_t)&object);
    cov_registry_leave(slot);
    cov_fiber_t *fiber = cov_fiber_create_shared(cov_stack_group(&key), 1, nothing_entry, NULL);
    cov_fiber_resume(fiber);
    cov_fiber_destroy(fiber);
    cov_stack_t stack;
    if (cov_stack_allocate(64 * 1024, &stack) == 0) cov_stack_release(&stack);
  }
  return NULL;
}

static void child_uses_everything(void) {
  static uint64_t object;
  uint32_t slot = cov_registry_enter((uintptr_t)&object);
  cov_registry_visit(churn_visit, NULL);
  cov_registry_leave(slot);
  cov_fiber_t *fiber = cov_fiber_create(0, nothing_entry, NULL);
  cov_fiber_resume(fiber);
  cov_fiber_destroy(fiber);
  static int key;
  cov_fiber_t *shared = cov_fiber_create_shared(cov_stack_group(&key), 1, nothing_entry, NULL);
  cov_fiber_resume(shared);
  cov_fiber_destroy(shared);
  cov_stack_t stack;
  if (cov_stack_allocate(64 * 1024, &stack) == 0) cov_stack_release(&stack);
  _exit(0);
}

static void test_fork(void) {
  section("fork: the child's dump signal is its own, the library's locks are usable");
  char output[4096];
#if defined(TEST_TSAN)
  // TSan stops a child that starts a thread after a multithreaded fork.
  printf("SKIP: dump signal in a forked child under ThreadSanitizer\n");
#else
  worked_in = mmap(NULL, sizeof *worked_in, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
  CHECK(cov_signal_work_install(SIGUSR2, note_work) == 0, "installed");
  int status = run_child(child_dump_signal, output, sizeof output);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child's signal is handled in the child (status %#x, work ran in %d)", status,
        (int)atomic_load(worked_in));
  // The parent's own dump signal still reaches the parent's thread.
  unsigned long before = cov_signal_work_count();
  raise(SIGUSR2);
  for (int i = 0; i < 5000 && cov_signal_work_count() == before; i++) usleep(1000);
  CHECK(atomic_load(worked_in) == getpid(), "the parent's signal, in the parent");
#endif
  atomic_store(&churn_stop, 0);
  pthread_t thread;
  pthread_create(&thread, NULL, churn, NULL);
  int children_ok = 0;
  enum { CHILDREN = 20 };
  for (int i = 0; i < CHILDREN; i++) {
    int child = run_child(child_uses_everything, output, sizeof output);
    children_ok += WIFEXITED(child) && WEXITSTATUS(child) == 0;
  }
  atomic_store(&churn_stop, 1);
  pthread_join(thread, NULL);
  CHECK(children_ok == CHILDREN, "%d of %d children forked amid the churn used the library",
        children_ok, CHILDREN);
}

// munmap, interposed (the library's sources are linked into this executable): whether a range
// unmapped while the probe is on still lies in a registered guard region. Not under the
// sanitizers, whose own munmap interceptors must see every call.
#if !defined(TEST_ASAN) && !defined(TEST_TSAN)
#define TEST_UNMAP_ORDER 1
static _Atomic int munmap_probe, munmap_of_registered_guard;
int munmap(void *address, size_t length) {
  size_t size;
  if (atomic_load(&munmap_probe) && cov_stack_guard_lookup((uintptr_t)address, &size))
    atomic_store(&munmap_of_registered_guard, 1);
  return (int)syscall(SYS_munmap, address, length);
}
#endif

static void test_unmap_order(void) {
  section("an individual stack leaves the guard registry before it is unmapped");
#if defined(TEST_UNMAP_ORDER)
  cov_stack_t stack;
  CHECK(cov_stack_allocate(100 * 1024, &stack) == 0, "allocated");  // not the default: its own
  size_t size = 0;
  CHECK(cov_stack_guard_lookup((uintptr_t)stack.guard, &size) && size == stack.size,
        "its guard is registered");
  atomic_store(&munmap_probe, 1);
  cov_stack_release(&stack);  // not pooled: unmapped at once
  atomic_store(&munmap_probe, 0);
  CHECK(!atomic_load(&munmap_of_registered_guard), "unmapped while still registered");
#else
  printf("SKIP: munmap is the sanitizer's\n");
#endif
}

// A fiber that must park with no hooks to hand it back stops the process.
static void child_park_without_hooks(void) {
  cov_fiber_set_parking_hooks(NULL, NULL);
  static int key;
  group_minimum = 1;
  make_shared(&key, &nested_job, 9, 0, 1);
  cov_fiber_resume(nested_job.fiber);  // bound to the group's one stack, suspended there
  int status = -1;
  cov_fiber_t *outer = cov_fiber_create_shared(cov_stack_group(&key), 1, nesting_entry, &status);
  cov_fiber_resume(outer);  // resumes nested_job's fiber on its own stack: it must park
}

static void test_park_without_hooks(void) {
  section("parking with no hooks set stops the process");
  char output[4096];
  int status = run_child(child_park_without_hooks, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x", status);
  CHECK(strstr(output, "Covenant: a shared-stack fiber must wait for its stack") &&
            strstr(output, "no parking hooks are set"),
        "stderr was [%s]", output);
}

// A copy limit lowered after a stack was made applies to it: 8 KiB of frames, limit 4 KiB.
static void child_copy_limit_lowered(void) {
  static int key;
  group_minimum = 1;
  shared_job_t first, deep;
  make_shared(&key, &first, 1, 0, 1);
  cov_fiber_resume(first.fiber);  // the group's stack exists, made under the default limit
  make_shared(&key, &deep, 2, 8192, 1);
  cov_shared_stack_set_copy_limit(4096);
  cov_fiber_resume(deep.fiber);
  _exit(0);
}

// The registry cannot grow: registrations fail at once (no system call on every start, after
// the first failure), are counted, and the failure is reported once.
static void child_registry_growth_fails(void) {
  static uint64_t object;
  enum { MOST = 3 * 4096 };
  static uint32_t slots[MOST];
  cov_registry_test_growth_failures(1);
  unsigned before = cov_registry_test_growth_failures(1);
  uint64_t overflow = cov_registry_overflow_count();
  int registered = 0;
  while (registered < MOST && (slots[registered] = cov_registry_enter((uintptr_t)&object)) !=
                                  COV_REGISTRY_NO_SLOT)
    registered++;
  for (int i = 0; i < 1000; i++) cov_registry_enter((uintptr_t)&object);  // all fail
  unsigned failures = cov_registry_test_growth_failures(1) - before;
  uint64_t unlisted = cov_registry_overflow_count() - overflow;
  for (int i = 0; i < registered; i++) cov_registry_leave(slots[i]);
  cov_registry_test_growth_failures(0);
  uint32_t slot = cov_registry_enter((uintptr_t)&object);  // grows again once allowed
  fprintf(stderr, "\nregistered %d, growth failures %u, unlisted %llu, then %s\n", registered,
          failures, (unsigned long long)unlisted, slot != COV_REGISTRY_NO_SLOT ? "grew" : "full");
  _exit(registered < MOST && failures == 1 && unlisted == 1001 && slot != COV_REGISTRY_NO_SLOT
            ? 0 : 1);
}

static void test_lifecycle(void) {
  test_fork();
  test_unmap_order();
  test_park_without_hooks();
  section("copy limit and registry growth failures, in forked children");
  char output[4096];
  int status = run_child(child_copy_limit_lowered, output, sizeof output);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
            strstr(output, "more than the copy limit (4096 bytes)"),
        "a lowered copy limit applies to an existing stack: status %#x, [%s]", status, output);
  status = run_child(child_registry_growth_fails, output, sizeof output);
  static const char warning_text[] = "Covenant: the registry of live coroutines cannot grow";
  const char *warning = strstr(output, warning_text);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && warning &&
            !strstr(warning + sizeof warning_text - 1, warning_text),
        "registry growth failure, reported once: status %#x, [%s]", status, output);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--chained-child") == 0) {
    chained_main();
    return 42;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *emulated = getenv("COV_TEST_EMULATED");
  under_emulation = emulated && *emulated == '1';
  printf("guard markers (MADV_GUARD_INSTALL): %s\n",
         cov_stack_uses_guard_markers() ? "yes" : "no (mprotect guards)");
  const char *forced = getenv("COVENANT_STACK_GUARDS");
  if (forced && strcmp(forced, "mprotect") == 0)
    CHECK(!cov_stack_uses_guard_markers(), "COVENANT_STACK_GUARDS=mprotect ignored");

  test_thread_exit_caches();
  test_configuration();
  test_pingpong();
#if defined(__x86_64__)
  test_fp_control();
#endif
  test_callee_saved();
  test_deep_recursion();
  test_exclusivity_switch();
  test_nesting();
  test_many_fibers();
  test_frame_chain();
  test_threads();
  if (under_emulation && getenv("COV_TEST_SKIP_MAPS"))
    printf("SKIP: 100,000 stacks test under emulation\n");
  else
    test_hundred_thousand();
  test_shared_copy();
  test_shared_lazy();
  test_shared_frames_accessor();
  test_shared_parking();
  test_shared_threads();
  test_shared_handback_depth();
  test_shared_scale();
  test_vacated();
  test_mapping_budget();
  test_snapshots();
  test_lifecycle();
  if (under_emulation && getenv("COV_TEST_SKIP_FORK"))
    printf("SKIP: forked overflow tests under emulation\n");
  else
    test_overflow();

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
