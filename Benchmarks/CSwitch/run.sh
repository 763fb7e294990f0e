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
source "$root/Tests/CContextSwitch/sources.sh"  # library_sources, shared with the C test
cc -O2 -std=gnu11 -Wall -Wextra -Werror -I "$src/include" -pthread \
  "$here/bench_switch.c" "${library_sources[@]}" -o "$out/bench_switch"
"$out/bench_switch" "$@"
