# Sourced by Tests/CContextSwitch/run.sh and Benchmarks/CSwitch/run.sh, not run: sets
# `library_sources` to the sources of Sources/CCoroutineContext that a standalone C program
# links, which is all of them but dispatch_direct.c (it calls libdispatch, which only the Swift
# layer links). A glob, in one place: a new file of the library reaches both programs at once
# (the benchmark's hand-kept copy of the list once fell behind the test's).
library_sources=()
for file in "$(cd "$(dirname "${BASH_SOURCE[0]}")/../../Sources/CCoroutineContext" && pwd)"/*.{c,S}; do
  [ "$(basename "$file")" = dispatch_direct.c ] || library_sources+=("$file")
done
