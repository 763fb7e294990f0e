#!/usr/bin/env bash
# Measures NIOCoroutineChannel (figures for the README; informational, never a gate):
# memory per idle connection, heap allocations per request, readLine throughput from memory.
#   bash measure.sh                # release build of the tests, then the three measurements
#   COVENANT_NIO_CONNECTIONS=5000 bash measure.sh
# Linux only (glibc: the allocation counter is preloaded with LD_PRELOAD).
set -euo pipefail
cd "$(dirname "$0")"
# The benchmarks' malloc counter (Benchmarks/Sources/AllocationCounter), as a preloaded library.
counter=$(mktemp -d)/allocation_counter.so
gcc -shared -fPIC -O2 -I ../../Benchmarks/Sources/AllocationCounter/include -o "$counter" \
  ../../Benchmarks/Sources/AllocationCounter/AllocationCounter.c
swift build -c release --build-tests
COVENANT_NIO_MEASURE=1 LD_PRELOAD="$counter" \
  swift test -c release --skip-build --filter ConnectionMeasurements 2>&1 |
  grep -E "idle connections|allocations per request|readLine from memory|error|failed" || true
