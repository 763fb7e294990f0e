/*
 * Covenant context switch for x86_64, System V ABI (Linux ELF and macOS Mach-O).
 *
 * A suspended context is the stack pointer at which the switch saved MXCSR, the x87 control
 * word, r12-r15, rbx, rbp and the return address: the frame whose layout, and the macros that
 * save and restore it, are in switch.h (also read by the frame walker, frames.c).
 *
 * cov_transfer_t cov_jump_fcontext(cov_fcontext_t to, void *data);
 *   in: rdi = to, rsi = data.  out (in the resumed context): rax:rdx = {from, data}; a fresh
 *   context receives the same pair as its first argument in rdi:rsi.
 *
 * cov_fcontext_t cov_make_fcontext(void *stack_top, size_t size, void (*entry)(cov_transfer_t));
 *
 * Control flow and CET: the switch leaves through an indirect `jmp` to the saved return address
 * (the branch predictor handles that much better than a `ret` on a foreign return stack). Return
 * addresses carry no ENDBR64, so under IBT the jump is `notrack` (the same mechanism compilers
 * use for switch tables). The code is NOT shadow-stack aware, so the GNU property note below
 * claims IBT only, never SHSTK: a link including this object correctly loses SHSTK.
 */

#if defined(__x86_64__)

#include "switch.h"

/* Symbol conventions: Mach-O prefixes C names with an underscore and has no .type/.size. Each
   exported function also gets a hidden alias (`..._hidden`) that fiber.c calls, so the hot path
   never goes through a PLT even when this code ends up in a shared library. */
#if defined(__APPLE__)
#define COV_SYM(name) _##name
#define COV_EXIT_CALL call __exit
#else
#define COV_SYM(name) name
#if defined(__PIC__) || defined(__pic__)
#define COV_EXIT_CALL call _exit@PLT
#else
#define COV_EXIT_CALL call _exit
#endif
#endif

#if defined(__CET__) && (__CET__ & 1)
#define COV_ENDBR endbr64
#define COV_NOTRACK notrack
#else
#define COV_ENDBR
#define COV_NOTRACK
#endif

  .text

  .globl COV_SYM(cov_jump_fcontext)
  .globl COV_SYM(cov_jump_fcontext_hidden)
#if defined(__APPLE__)
  .private_extern COV_SYM(cov_jump_fcontext_hidden)
#else
  .hidden cov_jump_fcontext_hidden
  .type cov_jump_fcontext, @function
  .type cov_jump_fcontext_hidden, @function
#endif
  .p2align 4
COV_SYM(cov_jump_fcontext):
COV_SYM(cov_jump_fcontext_hidden):
  COV_ENDBR
  COV_SAVE_CONTEXT               /* below the return address the call pushed */

  movq    %rsp, %rax             /* the context we leave: returned as transfer.from */
  movq    %rdi, %rsp             /* the context we enter */

  COV_RESTORE_CONTEXT            /* r8 = where it continues */

  movq    %rsi, %rdx             /* transfer.data: returned in rax:rdx ... */
  movq    %rax, %rdi             /* ... and passed in rdi:rsi to a fresh context */
  COV_NOTRACK jmp *%r8
#if !defined(__APPLE__)
  .size cov_jump_fcontext, . - cov_jump_fcontext
  .size cov_jump_fcontext_hidden, . - cov_jump_fcontext_hidden
#endif

/* int cov_fiber_switch_hidden(cov_fcontext_t *save, cov_fcontext_t to, void *data)
   (private, for fiber.c): the same switch, but the context we leave is also stored to *save
   before the jump, and the resumed context receives `data` as the function's return value (in
   rax; cov_fiber_resume returns it as its status). A fresh context still receives {from, data}
   in rdi:rsi. Same frame layout, so contexts made or saved by either function can be resumed by
   either. fiber.c tail-calls it, so a fiber's resume/suspend never execute a `ret` whose
   return-stack prediction is wrong after the stack switch. */
  .globl COV_SYM(cov_fiber_switch_hidden)
#if defined(__APPLE__)
  .private_extern COV_SYM(cov_fiber_switch_hidden)
#else
  .hidden cov_fiber_switch_hidden
  .type cov_fiber_switch_hidden, @function
#endif
  .p2align 4
COV_SYM(cov_fiber_switch_hidden):
  COV_ENDBR
  COV_SAVE_CONTEXT

  movq    %rsp, (%rdi)           /* *save = the context we leave */
  movq    %rsp, %rax
  movq    %rsi, %rsp

  COV_RESTORE_CONTEXT            /* r8 = where it continues */

  movq    %rax, %rdi             /* {from, data} in rdi:rsi for a fresh context */
  movq    %rdx, %rsi
  movq    %rdx, %rax             /* data is the return value */
  COV_NOTRACK jmp *%r8
#if !defined(__APPLE__)
  .size cov_fiber_switch_hidden, . - cov_fiber_switch_hidden
#endif

  .globl COV_SYM(cov_make_fcontext)
  .globl COV_SYM(cov_make_fcontext_hidden)
#if defined(__APPLE__)
  .private_extern COV_SYM(cov_make_fcontext_hidden)
#else
  .hidden cov_make_fcontext_hidden
  .type cov_make_fcontext, @function
  .type cov_make_fcontext_hidden, @function
#endif
  .p2align 4
COV_SYM(cov_make_fcontext):
COV_SYM(cov_make_fcontext_hidden):
  COV_ENDBR
  movq    %rdi, %rax
  andq    $-16, %rax             /* 16-aligned top of stack */
  leaq    -COV_FRAME_SIZE(%rax), %rax  /* one saved frame; after the jump rsp == top */
  stmxcsr COV_FRAME_MXCSR(%rax)  /* the new context starts with the creator's FP modes */
  fnstcw  COV_FRAME_X87_CW(%rax)
  movq    %rdx, COV_FRAME_RBX(%rax)   /* rbx = entry */
  movq    $0, COV_FRAME_FP(%rax)      /* rbp = 0: end of the frame-pointer chain */
  leaq    cov_fcontext_trampoline(%rip), %rcx
  movq    %rcx, COV_FRAME_RETURN(%rax)
  ret
#if !defined(__APPLE__)
  .size cov_make_fcontext, . - cov_make_fcontext
  .size cov_make_fcontext_hidden, . - cov_make_fcontext_hidden
#endif

/* First code run on a fresh stack. rsp == 16-aligned top, rdi:rsi = transfer, rbx = entry.
   The CFI marks the return address undefined so unwinders stop here. */
  .p2align 4
#if !defined(__APPLE__)
  .type cov_fcontext_trampoline, @function
#endif
cov_fcontext_trampoline:
  .cfi_startproc
  .cfi_undefined rip
  COV_ENDBR
  xorl    %ebp, %ebp
  call    *%rbx                  /* entry(transfer); must not return */
  xorl    %edi, %edi
  COV_EXIT_CALL                  /* it returned: exit(0) without running atexit handlers */
  hlt
  .cfi_endproc
#if !defined(__APPLE__)
  .size cov_fcontext_trampoline, . - cov_fcontext_trampoline
#endif

#if !defined(__APPLE__)
#if defined(__CET__) && (__CET__ & 1)
  /* NT_GNU_PROPERTY_TYPE_0: GNU_PROPERTY_X86_FEATURE_1_AND = IBT (never SHSTK, see above). */
  .section .note.gnu.property, "a"
  .p2align 3
  .long 4                        /* name size */
  .long 16                       /* descriptor size */
  .long 5                        /* NT_GNU_PROPERTY_TYPE_0 */
  .asciz "GNU"
  .long 0xc0000002               /* GNU_PROPERTY_X86_FEATURE_1_AND */
  .long 4                        /* data size */
  .long 1                        /* GNU_PROPERTY_X86_FEATURE_1_IBT */
  .long 0                        /* padding to 8 bytes */
#endif
#endif

#endif /* __x86_64__ */

/* Non-executable stack, on ELF, for every architecture (an empty object built from this file on
   another architecture still needs the note, or the linker assumes an executable stack). */
#if defined(__ELF__)
  .section .note.GNU-stack, "", %progbits
#endif
