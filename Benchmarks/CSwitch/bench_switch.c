// C5: raw context-switch round trip of cov_jump_fcontext against a reference fcontext-style
// switch written here (same registers saved, push/pop style, as Boost.Context's fcontext does),
// measured in the same run; plus the cov_fiber resume+suspend round trip (info).
// C6: evict + restore of a shared-stack fiber's frames (copy-on-suspend) with 256 B, 1 KiB and
// 4 KiB of stack in use: two fibers alternating on one shared stack (each resume copies the
// other out and itself back in) against the same two on two stacks (no copy), same run; the
// difference is the cost of one evict + restore. Allocations counted by interposing malloc.
//
// Output: one "C5 ..." line with the ratio and the target, "info ..." lines, and one "C6 ..."
// line per size.

#define _GNU_SOURCE
#include "CCoroutineContext.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// MARK: - Reference switch

// ref_jump(to, data) -> {from, data}; ref_make(top, size, entry) -> context.
cov_transfer_t ref_jump(cov_fcontext_t to, void *data);
cov_fcontext_t ref_make(void *top, size_t size, void (*entry)(cov_transfer_t));

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl ref_jump\n"
    ".type ref_jump, @function\n"
    ".p2align 4\n"
    "ref_jump:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r15\n  pushq %r14\n  pushq %r13\n  pushq %r12\n"
    "  subq $8, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, %rax\n"
    "  movq %rdi, %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $8, %rsp\n"
    "  popq %r12\n  popq %r13\n  popq %r14\n  popq %r15\n  popq %rbx\n  popq %rbp\n"
    "  popq %r8\n"
    "  movq %rsi, %rdx\n"
    "  movq %rax, %rdi\n"
    "  jmp *%r8\n"
    ".size ref_jump, . - ref_jump\n"
    ".globl ref_make\n"
    ".type ref_make, @function\n"
    ".p2align 4\n"
    "ref_make:\n"
    "  movq %rdi, %rax\n"
    "  andq $-16, %rax\n"
    "  subq $64, %rax\n"
    "  stmxcsr (%rax)\n"
    "  fnstcw 4(%rax)\n"
    "  movq %rdx, 40(%rax)\n"  // rbx slot = entry
    "  movq $0, 48(%rax)\n"    // rbp slot
    "  leaq ref_trampoline(%rip), %rcx\n"
    "  movq %rcx, 56(%rax)\n"
    "  ret\n"
    ".size ref_make, . - ref_make\n"
    "ref_trampoline:\n"
    "  call *%rbx\n"
    "  hlt\n"
    ".section .note.GNU-stack, \"\", @progbits\n"
    ".text\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl ref_jump\n"
    ".type ref_jump, %function\n"
    ".p2align 4\n"
    "ref_jump:\n"
    "  stp x29, x30, [sp, #-16]!\n"
    "  stp x27, x28, [sp, #-16]!\n"
    "  stp x25, x26, [sp, #-16]!\n"
    "  stp x23, x24, [sp, #-16]!\n"
    "  stp x21, x22, [sp, #-16]!\n"
    "  stp x19, x20, [sp, #-16]!\n"
    "  stp d14, d15, [sp, #-16]!\n"
    "  stp d12, d13, [sp, #-16]!\n"
    "  stp d10, d11, [sp, #-16]!\n"
    "  stp d8, d9, [sp, #-16]!\n"
    "  mov x2, sp\n"
    "  mov sp, x0\n"
    "  ldp d8, d9, [sp], #16\n"
    "  ldp d10, d11, [sp], #16\n"
    "  ldp d12, d13, [sp], #16\n"
    "  ldp d14, d15, [sp], #16\n"
    "  ldp x19, x20, [sp], #16\n"
    "  ldp x21, x22, [sp], #16\n"
    "  ldp x23, x24, [sp], #16\n"
    "  ldp x25, x26, [sp], #16\n"
    "  ldp x27, x28, [sp], #16\n"
    "  ldp x29, x30, [sp], #16\n"
    "  mov x0, x2\n"
    "  ret\n"
    ".size ref_jump, . - ref_jump\n"
    ".globl ref_make\n"
    ".type ref_make, %function\n"
    ".p2align 4\n"
    "ref_make:\n"
    "  and x0, x0, #~0xf\n"
    "  sub x0, x0, #160\n"
    "  str x2, [x0, #64]\n"  // x19 = entry
    "  adr x3, ref_trampoline\n"
    "  stp xzr, x3, [x0, #144]\n"
    "  ret\n"
    ".size ref_make, . - ref_make\n"
    "ref_trampoline:\n"
    "  blr x19\n"
    "  brk #1\n"
    ".section .note.GNU-stack, \"\", %progbits\n"
    ".text\n");
#else
#error "unsupported architecture"
#endif

// MARK: - Allocation counting (C6)

#if defined(__GLIBC__)
extern void *__libc_malloc(size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
static long allocations;
void *malloc(size_t size) {
  allocations++;
  return __libc_malloc(size);
}
void *aligned_alloc(size_t alignment, size_t size) {
  allocations++;
  return __libc_memalign(alignment, size);
}
#define ALLOCATIONS_COUNTED 1
#else
static long allocations;
#define ALLOCATIONS_COUNTED 0
#endif

// MARK: - Workloads

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void cov_echo(cov_transfer_t t) {
  for (;;) t = cov_jump_fcontext(t.from, t.data);
}

static void ref_echo(cov_transfer_t t) {
  for (;;) t = ref_jump(t.from, t.data);
}

static void fiber_echo(void *argument) {
  (void)argument;
  for (;;) cov_fiber_suspend();
}

static long iterations = 10 * 1000 * 1000;

static double run_cov(void *top, size_t size) {
  cov_fcontext_t ctx = cov_make_fcontext(top, size, cov_echo);
  uintptr_t check = 0;
  double start = now_ns();
  for (long i = 0; i < iterations; i++) {
    cov_transfer_t t = cov_jump_fcontext(ctx, (void *)(uintptr_t)i);
    ctx = t.from;
    check += (uintptr_t)t.data;
  }
  double elapsed = now_ns() - start;
  if (check != (uintptr_t)(iterations * (iterations - 1) / 2)) abort();
  return elapsed / (double)iterations;
}

static double run_ref(void *top, size_t size) {
  cov_fcontext_t ctx = ref_make(top, size, ref_echo);
  uintptr_t check = 0;
  double start = now_ns();
  for (long i = 0; i < iterations; i++) {
    cov_transfer_t t = ref_jump(ctx, (void *)(uintptr_t)i);
    ctx = t.from;
    check += (uintptr_t)t.data;
  }
  double elapsed = now_ns() - start;
  if (check != (uintptr_t)(iterations * (iterations - 1) / 2)) abort();
  return elapsed / (double)iterations;
}

static double run_fiber(cov_fiber_t *fiber) {
  double start = now_ns();
  for (long i = 0; i < iterations; i++) cov_fiber_resume(fiber);
  return (now_ns() - start) / (double)iterations;
}

static void empty_entry(void *argument) { (void)argument; }

// Create, run to completion and destroy one fiber at a time: stacks come from the pool.
static double run_lifecycle(long count) {
  double start = now_ns();
  for (long i = 0; i < count; i++) {
    cov_fiber_t *fiber = cov_fiber_create(0, empty_entry, NULL);
    cov_fiber_resume(fiber);
    cov_fiber_destroy(fiber);
  }
  return (now_ns() - start) / (double)count;
}

// 100,000 fibers alive at once (beyond the pool: fresh slab slots), then all finished.
static void run_many(double *create_ns, double *finish_ns) {
  enum { N = 100000 };
  cov_fiber_t **fibers = malloc(N * sizeof *fibers);
  double start = now_ns();
  long n = 0;
  for (; n < N; n++) {
    fibers[n] = cov_fiber_create(0, empty_entry, NULL);
    if (!fibers[n]) break;  // out of mappings (no guard markers: two mappings per stack)
  }
  double middle = now_ns();
  for (long i = 0; i < n; i++) {
    cov_fiber_resume(fibers[i]);
    cov_fiber_destroy(fibers[i]);
  }
  *create_ns = n ? (middle - start) / (double)n : 0;
  *finish_ns = n ? (now_ns() - middle) / (double)n : 0;
  if (n < N) printf("info  only %ld fibers could be created at once\n", n);
  free(fibers);
}

static double median(double *values, int count);

// C6: a fiber that keeps `pad` bytes of frames below its entry and suspends forever.
typedef struct {
  size_t pad;
} c6_job_t;

static __attribute__((noinline)) void c6_loop(void) {
  for (;;) cov_fiber_suspend();
}

static void c6_entry(void *argument) {
  c6_job_t *job = argument;
  volatile char *pad = __builtin_alloca(job->pad);
  if (job->pad) pad[0] = pad[job->pad - 1] = 1;
  c6_loop();
}

static size_t c6_used(cov_fiber_t *fiber) {
  cov_fiber_frames_t frames;
  if (!cov_fiber_frames(fiber, &frames)) return 0;
  return (size_t)((const char *)frames.stack_high - (const char *)frames.sp);
}

// Two fibers of group `key` alternately resumed `iterations` times each; ns per resume.
static double c6_alternate(cov_fiber_t *a, cov_fiber_t *b, long count) {
  double start = now_ns();
  for (long i = 0; i < count; i++) {
    cov_fiber_resume(a);
    cov_fiber_resume(b);
  }
  return (now_ns() - start) / (double)(2 * count);
}

// Pads two fibers so that each has `target` bytes in use when suspended (calibrated with an
// unpadded fiber of a group of its own, which is left suspended: these fibers never end).
static void c6_make(const void *key, size_t stacks, size_t target, c6_job_t *jobs,
                    cov_fiber_t **fibers) {
  static int calibration_key;
  static c6_job_t bare_job;
  static size_t bare;
  if (bare == 0) {
    cov_fiber_t *probe =
        cov_fiber_create_shared(cov_stack_group(&calibration_key), 0, c6_entry, &bare_job);
    cov_fiber_resume(probe);
    bare = c6_used(probe);
  }
  for (int i = 0; i < 2; i++) {
    jobs[i].pad = target > bare ? (target - bare + 15) & ~(size_t)15 : 0;
    fibers[i] = cov_fiber_create_shared(cov_stack_group(key), stacks, c6_entry, &jobs[i]);
    cov_fiber_resume(fibers[i]);
  }
}

static void run_c6(double raw_round_trip, int runs) {
  static const size_t sizes[] = {256, 1024, 4096};
  static const char *const budgets[] = {"<= 60ns", "<= 150ns", "reported"};
  static const double limits[] = {60, 150, 0};
  int eager = cov_shared_stacks_eager_eviction();
  cov_shared_stacks_set_eager_eviction(0);
  for (int s = 0; s < 3; s++) {
    static int keys[3][2];
    c6_job_t copy_jobs[2], plain_jobs[2];
    cov_fiber_t *copy[2], *plain[2];
    c6_make(&keys[s][0], 1, sizes[s], copy_jobs, copy);    // both on one stack: copies
    c6_make(&keys[s][1], 2, sizes[s], plain_jobs, plain);  // one stack each: none
    long count = iterations / 10;
    c6_alternate(copy[0], copy[1], count / 10 + 1);  // warm up (buffers allocated here)
    c6_alternate(plain[0], plain[1], count / 10 + 1);
    long before = allocations;
    c6_alternate(copy[0], copy[1], 1000);
    long steady = allocations - before;
    double with_copy[99], without[99], differences[99];
    for (int r = 0; r < runs; r++) {
      with_copy[r] = c6_alternate(copy[0], copy[1], count);
      without[r] = c6_alternate(plain[0], plain[1], count);
      differences[r] = with_copy[r] - without[r];
    }
    double cost = median(differences, runs);
    size_t used = c6_used(copy[0]);
    char verdict[16] = "";
    if (limits[s] > 0) snprintf(verdict, sizeof verdict, "%s", cost <= limits[s] ? "PASS" : "MISS");
    printf("C6  %zuB  covenant=%.1fns  baseline(no copy: resume+suspend on its own stack)=%.1fns  "
           "evict+restore=%.1fns  used=%zuB  ratio-to-C5=%.2f  allocations/op=%s  target=%s  %s\n",
           sizes[s], median(with_copy, runs), median(without, runs), cost, used,
           cost / raw_round_trip,
           ALLOCATIONS_COUNTED ? (steady == 0 ? "0 (buffer reused)" : "over 0") : "not counted",
           budgets[s], verdict);
  }
  cov_shared_stacks_set_eager_eviction(eager);
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *values, int count) {
  qsort(values, (size_t)count, sizeof *values, compare);
  return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

int main(int argc, char **argv) {
  int runs = 7;
  if (argc > 1) iterations = atol(argv[1]);
  if (argc > 2) runs = atoi(argv[2]);
  if (runs < 1 || runs > 99 || iterations < 1) return 2;

  cov_stack_t a, b;
  if (cov_stack_allocate(0, &a) || cov_stack_allocate(0, &b)) return 1;
  cov_fiber_t *fiber = cov_fiber_create(0, fiber_echo, NULL);
  if (!fiber) return 1;

  double cov[99], ref[99], fib[99];
  run_cov((char *)a.base + a.size, a.size);  // warm up
  run_ref((char *)b.base + b.size, b.size);
  run_fiber(fiber);
  for (int r = 0; r < runs; r++) {  // interleaved, so drift hits both alike
    cov[r] = run_cov((char *)a.base + a.size, a.size);
    ref[r] = run_ref((char *)b.base + b.size, b.size);
    fib[r] = run_fiber(fiber);
  }
  // The ratio is the median of per-run ratios: each pair ran back to back, so load from other
  // processes on the machine affects both sides of a pair alike.
  double ratios[99];
  for (int r = 0; r < runs; r++) ratios[r] = cov[r] / ref[r];
  double ratio = median(ratios, runs);
  double c = median(cov, runs), f = median(ref, runs), g = median(fib, runs);
  printf("C5  covenant=%.1fns  baseline(fcontext-reference)=%.1fns  ratio=%.2f  target=<= 1.05  %s\n",
         c, f, ratio, ratio <= 1.05 ? "PASS" : "MISS");
  printf("info  fiber resume+suspend round trip=%.1fns  raw switch round trip=%.1fns  "
         "overhead=%.1fns  (median of %d x %ld)\n",
         g, c, g - c, runs, iterations);
  run_lifecycle(1000);
  double lifecycle = run_lifecycle(1000000);
  double create_ns = 0, finish_ns = 0;
  run_many(&create_ns, &finish_ns);
  printf("info  fiber create+run+destroy (pooled stack)=%.1fns  100,000 alive at once: "
         "create=%.0fns finish+destroy=%.0fns per fiber (guard markers: %s)\n",
         lifecycle, create_ns, finish_ns, cov_stack_uses_guard_markers() ? "yes" : "no");
  run_c6(c, runs);
  // The echo fiber is left suspended inside its loop: the process ends here.
  return 0;
}
