#!/usr/bin/env bash
# Builds and runs the C test of CCoroutineContext natively, then (when the cross tools exist)
# for arm64 under qemu-user. Usage: bash Tests/CContextSwitch/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$root/Sources/CCoroutineContext"
out="$here/out"
mkdir -p "$out"

sources=("$here/test_switch.c" "$src/fiber.c" "$src/stack.c" "$src/overflow.c"
         "$src/switch_x86_64.S" "$src/switch_arm64.S")
flags=(-O2 -g -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer -I "$src/include" -pthread)
libs=(-lm)

status=0

echo "== native ($(uname -m)): cc ${flags[*]}"
cc "${flags[@]}" "${sources[@]}" "${libs[@]}" -o "$out/test_switch"
"$out/test_switch" || status=1

if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-aarch64-static >/dev/null 2>&1; then
  echo "== arm64 under qemu-user: aarch64-linux-gnu-gcc -static ${flags[*]}"
  aarch64-linux-gnu-gcc -static "${flags[@]}" "${sources[@]}" "${libs[@]}" -o "$out/test_switch_arm64"
  # Under qemu-user, MADV_GUARD_INSTALL is accepted but not emulated: the library detects that
  # and uses mprotect guards, so the 100,000-stack test reports a skip.
  COV_TEST_EMULATED=1 qemu-aarch64-static "$out/test_switch_arm64" || status=1
else
  echo "== arm64: SKIPPED (aarch64-linux-gnu-gcc or qemu-aarch64-static not installed)"
fi

exit $status
