// The context switch (switch_x86_64.S, switch_arm64.S): the layout of a saved context, written
// once per architecture, and the switch's private entry points.
//
// A suspended context is the stack pointer at which the switch saved the callee-saved state
// (COV_FRAME_SIZE bytes, 16-aligned), the return address where it continues last. The
// assembly saves and restores that frame with the macros below (in both switch functions and
// in cov_make_fcontext's initial frame), and the frame walker (frames.c) reads the saved frame
// pointer and return address at the same offsets: a change of the layout is one edit here.
//
// Included by the assembly (`__ASSEMBLER__`: the offsets and the macros) and by C (the offsets
// and the prototypes).

#ifndef COVENANT_SWITCH_H
#define COVENANT_SWITCH_H

// MARK: - The saved frame

#if defined(__x86_64__)
// 0x00 MXCSR (4 bytes), 0x04 x87 control word (2 bytes, 2 unused), r12-r15, rbx, rbp, then the
// return address the call pushed.
#define COV_FRAME_MXCSR 0x00
#define COV_FRAME_X87_CW 0x04
#define COV_FRAME_R12 0x08
#define COV_FRAME_R13 0x10
#define COV_FRAME_R14 0x18
#define COV_FRAME_R15 0x20
#define COV_FRAME_RBX 0x28
#define COV_FRAME_FP 0x30      /* rbp */
#define COV_FRAME_RETURN 0x38  /* where the context continues */
#define COV_FRAME_SIZE 0x40
#elif defined(__aarch64__)
// d8-d15, x19-x28, then x29 (fp) and x30 (lr), in pairs.
#define COV_FRAME_D8 0x00
#define COV_FRAME_D10 0x10
#define COV_FRAME_D12 0x20
#define COV_FRAME_D14 0x30
#define COV_FRAME_X19 0x40
#define COV_FRAME_X21 0x50
#define COV_FRAME_X23 0x60
#define COV_FRAME_X25 0x70
#define COV_FRAME_X27 0x80
#define COV_FRAME_FP 0x90      /* x29 */
#define COV_FRAME_RETURN 0x98  /* x30 (lr): where the context continues */
#define COV_FRAME_SIZE 0xa0
#else
#error "switch.h: unsupported architecture (x86_64 and arm64 only)"
#endif

#if defined(__ASSEMBLER__)

// MARK: - Save and restore (assembly)

#if defined(__x86_64__)

/* Pushes the frame below the return address the call pushed: rsp = the context we leave. */
.macro COV_SAVE_CONTEXT
  leaq    -COV_FRAME_RETURN(%rsp), %rsp
  stmxcsr COV_FRAME_MXCSR(%rsp)
  fnstcw  COV_FRAME_X87_CW(%rsp)
  movq    %r12, COV_FRAME_R12(%rsp)
  movq    %r13, COV_FRAME_R13(%rsp)
  movq    %r14, COV_FRAME_R14(%rsp)
  movq    %r15, COV_FRAME_R15(%rsp)
  movq    %rbx, COV_FRAME_RBX(%rsp)
  movq    %rbp, COV_FRAME_FP(%rsp)
.endm

/* From rsp = a saved context: restores its state, pops the frame, leaves its return address in
   r8 (the caller jumps there). */
.macro COV_RESTORE_CONTEXT
  movq    COV_FRAME_RETURN(%rsp), %r8
  ldmxcsr COV_FRAME_MXCSR(%rsp)
  fldcw   COV_FRAME_X87_CW(%rsp)
  movq    COV_FRAME_R12(%rsp), %r12
  movq    COV_FRAME_R13(%rsp), %r13
  movq    COV_FRAME_R14(%rsp), %r14
  movq    COV_FRAME_R15(%rsp), %r15
  movq    COV_FRAME_RBX(%rsp), %rbx
  movq    COV_FRAME_FP(%rsp), %rbp
  leaq    COV_FRAME_SIZE(%rsp), %rsp
.endm

#elif defined(__aarch64__)

/* Pushes the frame: sp = the context we leave (lr is saved as it is, signed or not). */
.macro COV_SAVE_CONTEXT
  sub     sp, sp, #COV_FRAME_SIZE
  stp     d8,  d9,  [sp, #COV_FRAME_D8]
  stp     d10, d11, [sp, #COV_FRAME_D10]
  stp     d12, d13, [sp, #COV_FRAME_D12]
  stp     d14, d15, [sp, #COV_FRAME_D14]
  stp     x19, x20, [sp, #COV_FRAME_X19]
  stp     x21, x22, [sp, #COV_FRAME_X21]
  stp     x23, x24, [sp, #COV_FRAME_X23]
  stp     x25, x26, [sp, #COV_FRAME_X25]
  stp     x27, x28, [sp, #COV_FRAME_X27]
  stp     x29, x30, [sp, #COV_FRAME_FP]
.endm

/* From sp = a saved context: restores its state (x30 = where it continues) and pops the frame. */
.macro COV_RESTORE_CONTEXT
  ldp     d8,  d9,  [sp, #COV_FRAME_D8]
  ldp     d10, d11, [sp, #COV_FRAME_D10]
  ldp     d12, d13, [sp, #COV_FRAME_D12]
  ldp     d14, d15, [sp, #COV_FRAME_D14]
  ldp     x19, x20, [sp, #COV_FRAME_X19]
  ldp     x21, x22, [sp, #COV_FRAME_X21]
  ldp     x23, x24, [sp, #COV_FRAME_X23]
  ldp     x25, x26, [sp, #COV_FRAME_X25]
  ldp     x27, x28, [sp, #COV_FRAME_X27]
  ldp     x29, x30, [sp, #COV_FRAME_FP]
  add     sp, sp, #COV_FRAME_SIZE
.endm

#endif

#else  // C

// MARK: - Private entry points (C)

#include "CCoroutineContext.h"

// Hidden aliases of the assembly entry points (same code): direct calls, never through a PLT.
cov_transfer_t cov_jump_fcontext_hidden(cov_fcontext_t to, void *data)
    __attribute__((visibility("hidden")));
cov_fcontext_t cov_make_fcontext_hidden(void *stack_top, size_t size,
                                        void (*entry)(cov_transfer_t))
    __attribute__((visibility("hidden")));

// Like cov_jump_fcontext, but also stores the context being left to *save before jumping, and
// returns (in the context that is resumed) the low 32 bits of the `data` it was resumed with:
// the status a fiber reports to its resumer.
int cov_fiber_switch_hidden(cov_fcontext_t *save, cov_fcontext_t to, void *data)
    __attribute__((visibility("hidden")));

#endif

#endif
