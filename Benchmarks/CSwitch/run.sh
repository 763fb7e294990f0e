#!/usr/bin/env bash
# C5 (Benchmarks/README.md): raw context-switch round trip vs a reference fcontext-style
# switch, same run.
# Usage: bash Benchmarks/CSwitch/run.sh [iterations [runs]]   (defaults: 10,000,000 x 7)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$root/Sources/CCoroutineContext"
out="$here/out"
mkdir -p "$out"
cc -O2 -std=gnu11 -Wall -Wextra -Werror -I "$src/include" -pthread \
  "$here/bench_switch.c" "$src/fiber.c" "$src/fiber_record.c" "$src/shared_stack.c" \
  "$src/stack.c" "$src/overflow.c" "$src/registry.c" "$src/backtrace.c" "$src/lock.c" "$src/lifecycle.c" \
  "$src/switch_x86_64.S" "$src/switch_arm64.S" -o "$out/bench_switch"
"$out/bench_switch" "$@"
