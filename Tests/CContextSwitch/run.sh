#!/usr/bin/env bash
# Builds and runs the C test of CCoroutineContext natively, then (when the cross tools exist)
# for arm64 under qemu-user. Usage: bash Tests/CContextSwitch/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$root/Sources/CCoroutineContext"
out="$here/out"
mkdir -p "$out"

source "$here/sources.sh"  # library_sources, shared with Benchmarks/CSwitch/run.sh
# The test's files (main.c, the harness, one file per concern) and the library's. The test may
# include the library's private headers (hidden functions, the switch's frame layout).
sources=("$here"/*.c "${library_sources[@]}")
flags=(-O2 -g -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer -I "$src/include" -I "$src"
       -pthread)
libs=(-lm)

status=0

# Never let a hung test hang CI: each run gets 10 minutes.
bounded() { if command -v timeout >/dev/null 2>&1; then timeout 600 "$@"; else "$@"; fi; }

echo "== native ($(uname -m)): cc ${flags[*]}"
cc "${flags[@]}" "${sources[@]}" "${libs[@]}" -o "$out/test_switch"
bounded "$out/test_switch" || status=1
echo "== native, COVENANT_STACK_GUARDS=mprotect (the path of kernels without MADV_GUARD_INSTALL)"
COVENANT_STACK_GUARDS=mprotect bounded "$out/test_switch" >"$out/run_mprotect.log" 2>&1 || status=1
grep -E '^(FAIL|SKIP)|passed, .* failed|guard markers' "$out/run_mprotect.log" || true

if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-aarch64-static >/dev/null 2>&1; then
  echo "== arm64 under qemu-user: aarch64-linux-gnu-gcc -static ${flags[*]}"
  aarch64-linux-gnu-gcc -static "${flags[@]}" "${sources[@]}" "${libs[@]}" -o "$out/test_switch_arm64"
  # Under qemu-user, MADV_GUARD_INSTALL is accepted but not emulated: the library detects that
  # and uses mprotect guards, so the 100,000-stack test reports a skip.
  # The "qemu: uncaught target signal 11" lines come from the children that overflow on purpose.
  COV_TEST_EMULATED=1 bounded qemu-aarch64-static "$out/test_switch_arm64" || status=1
else
  echo "== arm64: SKIPPED (aarch64-linux-gnu-gcc or qemu-aarch64-static not installed)"
fi

# The sanitizer paths of fiber.c (ASan fiber switching, TSan fibers), with clang when present.
# COV_SKIP_SANITIZERS=1 skips them.
clang_bin=""
if [ -x /opt/swift/usr/bin/clang ]; then clang_bin=/opt/swift/usr/bin/clang
elif command -v clang >/dev/null 2>&1; then clang_bin="$(command -v clang)"; fi
if [ -n "$clang_bin" ] && [ "${COV_SKIP_SANITIZERS:-0}" != 1 ]; then
  # -DDEBUG=1 as SwiftPM's debug builds: eager eviction of shared stacks, vacated bytes marked.
  san_flags=(-O1 -g -DDEBUG=1 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer
             -I "$src/include" -I "$src" -pthread)
  # The Swift toolchain's TSan runtime carries libdispatch interceptors that need libdispatch.
  swift_lib="$(dirname "$clang_bin")/../lib/swift/linux"
  tsan_libs=()
  if [ -e "$swift_lib/libdispatch.so" ]; then
    tsan_libs=(-L "$swift_lib" -ldispatch -lBlocksRuntime "-Wl,-rpath,$swift_lib")
  fi
  if [ -e "$swift_lib/libswiftCore.so" ]; then
    echo "== $(uname -m) linked with libswiftCore (Swift exclusivity hooks live): $clang_bin"
    "$clang_bin" -O2 -g -DDEBUG=1 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer \
      -I "$src/include" -I "$src" -pthread "${sources[@]}" "${libs[@]}" -L "$swift_lib" -Wl,--no-as-needed -lswiftCore \
      "-Wl,-rpath,$swift_lib" -o "$out/test_switch_swiftcore"
    # No Swift backtracer: it would inherit the captured stderr of the crashing test children.
    SWIFT_BACKTRACE=enable=no bounded "$out/test_switch_swiftcore" >"$out/run_swiftcore.log" 2>&1 || status=1
    grep -E '^(FAIL|SKIP)|passed, .* failed|exclusivity hooks:' "$out/run_swiftcore.log" || true
  fi
  for san in address thread; do
    extra=()
    [ "$san" = thread ] && extra=("${tsan_libs[@]}")
    echo "== $(uname -m) with -fsanitize=$san: $clang_bin"
    if "$clang_bin" "${san_flags[@]}" -fsanitize=$san "${sources[@]}" "${libs[@]}" "${extra[@]}" \
        -o "$out/test_switch_$san" 2>"$out/build_$san.log"; then
      ASAN_OPTIONS=detect_leaks=0 bounded "$out/test_switch_$san" >"$out/run_$san.log" 2>&1 || status=1
      grep -E '^(FAIL|SKIP)|passed, .* failed|WARNING: ThreadSanitizer|ERROR: AddressSanitizer' \
        "$out/run_$san.log" | grep -v 'stack-overflow' || true
      if grep -q 'WARNING: ThreadSanitizer' "$out/run_$san.log"; then status=1; fi
    else
      echo "SKIP: could not build with -fsanitize=$san (see $out/build_$san.log)"
    fi
  done
else
  echo "== sanitizers: SKIPPED (no clang, or COV_SKIP_SANITIZERS=1)"
fi

exit $status
