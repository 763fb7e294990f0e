/*
 * Covenant context switch for arm64, AAPCS64 (Linux ELF and Apple Mach-O).
 *
 * A suspended context is the stack pointer at which the switch saved d8-d15, x19-x28, x29 (fp)
 * and x30 (lr: where the context continues): the frame whose layout, and the macros that save
 * and restore it, are in switch.h (also read by the frame walker, frames.c).
 *
 * cov_transfer_t cov_jump_fcontext(cov_fcontext_t to, void *data);
 *   in: x0 = to, x1 = data.  out (in the resumed context): x0:x1 = {from, data}; a fresh context
 *   receives the same pair as its first argument in x0:x1.
 *
 * cov_fcontext_t cov_make_fcontext(void *stack_top, size_t size, void (*entry)(cov_transfer_t));
 *
 * The switch leaves with `ret`, which needs no BTI landing pad; the exported entry points start
 * with `bti c` when BTI is enabled. Return addresses are saved as they are (signed or not), so
 * pac-ret code on either side is unaffected. x18 (the platform register) is never touched.
 */

#if defined(__aarch64__)

#include "switch.h"

#if defined(__APPLE__)
#define COV_SYM(name) _##name
#define COV_EXIT_SYM __exit
#else
#define COV_SYM(name) name
#define COV_EXIT_SYM _exit
#endif

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define COV_BTI_C hint #34 /* bti c */
#else
#define COV_BTI_C
#endif

  .text

  .globl COV_SYM(cov_jump_fcontext)
  .globl COV_SYM(cov_jump_fcontext_hidden)
#if defined(__APPLE__)
  .private_extern COV_SYM(cov_jump_fcontext_hidden)
#else
  .hidden cov_jump_fcontext_hidden
  .type cov_jump_fcontext, %function
  .type cov_jump_fcontext_hidden, %function
#endif
  .p2align 4
COV_SYM(cov_jump_fcontext):
COV_SYM(cov_jump_fcontext_hidden):
  COV_BTI_C
  COV_SAVE_CONTEXT

  mov     x2, sp                 // the context we leave: delivered as transfer.from
  mov     sp, x0                 // the context we enter

  COV_RESTORE_CONTEXT

  mov     x0, x2                 // x0:x1 = {from, data}: return value and first argument
  ret
#if !defined(__APPLE__)
  .size cov_jump_fcontext, . - cov_jump_fcontext
  .size cov_jump_fcontext_hidden, . - cov_jump_fcontext_hidden
#endif

// int cov_fiber_switch_hidden(cov_fcontext_t *save, cov_fcontext_t to, void *data)
// (private, for fiber.c): the same switch, but the context we leave is also stored to *save
// before the jump, and the resumed context receives `data` as the return value (x0). A fresh
// context receives {data, data} in x0:x1 (fiber.c reads only the second). Same frame layout, so
// contexts made or saved by either function can be resumed by either. fiber.c tail-calls it
// (see switch_x86_64.S).
  .globl COV_SYM(cov_fiber_switch_hidden)
#if defined(__APPLE__)
  .private_extern COV_SYM(cov_fiber_switch_hidden)
#else
  .hidden cov_fiber_switch_hidden
  .type cov_fiber_switch_hidden, %function
#endif
  .p2align 4
COV_SYM(cov_fiber_switch_hidden):
  COV_BTI_C
  COV_SAVE_CONTEXT

  mov     x3, sp
  str     x3, [x0]               // *save = the context we leave
  mov     sp, x1

  COV_RESTORE_CONTEXT

  mov     x0, x2                 // data: the return value, and x0:x1 of a fresh context
  mov     x1, x2
  ret
#if !defined(__APPLE__)
  .size cov_fiber_switch_hidden, . - cov_fiber_switch_hidden
#endif

  .globl COV_SYM(cov_make_fcontext)
  .globl COV_SYM(cov_make_fcontext_hidden)
#if defined(__APPLE__)
  .private_extern COV_SYM(cov_make_fcontext_hidden)
#else
  .hidden cov_make_fcontext_hidden
  .type cov_make_fcontext, %function
  .type cov_make_fcontext_hidden, %function
#endif
  .p2align 4
COV_SYM(cov_make_fcontext):
COV_SYM(cov_make_fcontext_hidden):
  COV_BTI_C
  and     x0, x0, #~0xf          // 16-aligned top of stack
  sub     x0, x0, #COV_FRAME_SIZE       // one saved frame; after the jump sp == top
  str     x2, [x0, #COV_FRAME_X19]      // x19 = entry
  adr     x3, cov_fcontext_trampoline
  stp     xzr, x3, [x0, #COV_FRAME_FP]  // fp = 0 (end of the frame chain), lr = trampoline
  ret
#if !defined(__APPLE__)
  .size cov_make_fcontext, . - cov_make_fcontext
  .size cov_make_fcontext_hidden, . - cov_make_fcontext_hidden
#endif

// First code run on a fresh stack: sp == 16-aligned top, x0:x1 = transfer, x19 = entry. Reached
// by `ret`, so no landing pad is needed. The CFI marks the return address undefined so unwinders
// stop here.
  .p2align 4
#if !defined(__APPLE__)
  .type cov_fcontext_trampoline, %function
#endif
cov_fcontext_trampoline:
  .cfi_startproc
  .cfi_undefined x30
  mov     x29, #0
  mov     x30, #0
  blr     x19                    // entry(transfer); must not return
  mov     x0, #0
  bl      COV_EXIT_SYM           // it returned: exit(0) without running atexit handlers
  brk     #0x1
  .cfi_endproc
#if !defined(__APPLE__)
  .size cov_fcontext_trampoline, . - cov_fcontext_trampoline
#endif

#if !defined(__APPLE__)
#if (defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT) || \
    (defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT)
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define COV_PROP_BTI 1
#else
#define COV_PROP_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT
#define COV_PROP_PAC 2
#else
#define COV_PROP_PAC 0
#endif
  // NT_GNU_PROPERTY_TYPE_0: GNU_PROPERTY_AARCH64_FEATURE_1_AND = BTI and/or PAC.
  .section .note.gnu.property, "a"
  .p2align 3
  .long 4                        // name size
  .long 16                       // descriptor size
  .long 5                        // NT_GNU_PROPERTY_TYPE_0
  .asciz "GNU"
  .long 0xc0000000               // GNU_PROPERTY_AARCH64_FEATURE_1_AND
  .long 4                        // data size
  .long (COV_PROP_BTI | COV_PROP_PAC)
  .long 0                        // padding to 8 bytes
#endif
#endif

#endif /* __aarch64__ */

/* Non-executable stack, on ELF, for every architecture (an empty object built from this file on
   another architecture still needs the note, or the linker assumes an executable stack). */
#if defined(__ELF__)
  .section .note.GNU-stack, "", %progbits
#endif
