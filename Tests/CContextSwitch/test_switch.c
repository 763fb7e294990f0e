// The raw context switch (cov_make_fcontext / cov_jump_fcontext): data passed both ways, the
// floating-point control state and every callee-saved register kept per context.

#include "harness.h"

#include <fenv.h>
#include <stdint.h>
#include <stdlib.h>

// MARK: - Raw switch: ping-pong with data

static void pingpong_entry(cov_transfer_t t) {
  for (;;) {
    uintptr_t value = (uintptr_t)t.data;
    t = cov_jump_fcontext(t.from, (void *)(value * 2 + 1));
  }
}

void test_pingpong(void) {
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

void test_fp_control(void) {
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

void test_callee_saved(void) {
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
