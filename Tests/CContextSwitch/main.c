// The C test of CCoroutineContext: the assembly switch, stacks, the overflow handler, fibers,
// shared stacks, snapshots and the life cycle, one file per concern (harness.h lists them), run
// in this order. Built and run by run.sh (natively, with mprotect guards, under the sanitizers,
// and for arm64 under qemu-user when available).
//
// Prints a line per failed check and a final "N passed, M failed"; exits non-zero on any failure.

#include "harness.h"

#include <stdlib.h>
#include <string.h>

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
  test_per_stack_slot();
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
  test_unmap_order();
  test_snapshots();
  test_lifecycle();
  if (under_emulation && getenv("COV_TEST_SKIP_FORK"))
    printf("SKIP: forked overflow tests under emulation\n");
  else
    test_overflow();

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
