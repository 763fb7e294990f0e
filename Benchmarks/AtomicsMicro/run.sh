#!/usr/bin/env bash
# The lock-and-atomics layer (InlineAtomic, InlineMutex) against Synchronization's Atomic and
# Mutex: callgrind instructions per operation of each, in one release build, and the time of a
# contended lock (4 threads, alternating, median of 7).
#
#   bash Benchmarks/AtomicsMicro/run.sh
#
# The layer is `package`-level, so it cannot be imported from the Benchmarks package: this
# script builds a throwaway package in .build-atomics-micro/ whose targets link the library's
# own source folders (the C module and the layer's Swift files), next to main.swift here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
layer=$(ls -d "$root"/Sources/*/Atomics | head -1)
work="$root/.build-atomics-micro"
mkdir -p "$work/Sources/Micro"
ln -sfn "$root/Sources/CCoroutineContext" "$work/Sources/CCoroutineContext"
ln -sfn "$root/Sources/CCovenantShims" "$work/Sources/CCovenantShims"
ln -sfn "$layer" "$work/Sources/Atomics"
cp "$here/main.swift" "$work/Sources/Micro/main.swift"
cat >"$work/Package.swift" <<'MANIFEST'
// swift-tools-version:6.0
import PackageDescription
let package = Package(
  name: "AtomicsMicro",
  platforms: [.macOS(.v15)],
  targets: [
    .target(name: "CCoroutineContext"),
    .target(name: "CCovenantShims", dependencies: ["CCoroutineContext"]),
    .target(
      name: "Atomics", dependencies: ["CCoroutineContext", "CCovenantShims"],
      swiftSettings: [.swiftLanguageMode(.v6), .enableExperimentalFeature("RawLayout")]),
    .executableTarget(
      name: "Micro", dependencies: ["Atomics", "CCovenantShims"],
      swiftSettings: [.swiftLanguageMode(.v6)]),
  ]
)
MANIFEST
swift build -c release --quiet --package-path "$work"
binary="$work/.build/release/Micro"
"$binary" contended 200000

source "$here/../callgrind.sh"
callgrind_available || { echo "valgrind unavailable: no instruction counts"; exit 0; }
stripped="$work/micro-stripped"
callgrind_binary "$binary" "$stripped"
# Instructions per operation of one workload, the empty step included.
per_op() { callgrind_per_op "$work" 200000 "$stripped" "$1"; }
empty=$(per_op empty)
printf '%-20s %16s %16s   (%s for the call and loop around each op, subtracted)\n' \
  "instructions per op" "Inline*" "Synchronization" "$empty"
for workload in load-store compare-exchange bitwise-or exchange-bool lock lock-out-of-line; do
  awk -v w="$workload" -v i="$(per_op "inline-$workload")" -v s="$(per_op "stdlib-$workload")" \
    -v e="$empty" 'BEGIN { printf "%-20s %16.1f %16.1f\n", w, i - e, s - e }'
done
