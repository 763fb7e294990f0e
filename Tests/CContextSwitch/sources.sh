# Sourced by Tests/CContextSwitch/run.sh and Benchmarks/CSwitch/run.sh, not run: sets
# `library_sources` to the sources of Sources/CCoroutineContext, which a standalone C program
# links whole (the Swift-only shims are a target of their own, Sources/CCovenantShims). A glob,
# in one place: a new file of the library reaches both programs at once (the benchmark's
# hand-kept copy of the list once fell behind the test's).
library_sources=()
for file in "$(cd "$(dirname "${BASH_SOURCE[0]}")/../../Sources/CCoroutineContext" && pwd)"/*.{c,S}; do
  library_sources+=("$file")
done
