#!/usr/bin/env bash
# Concurrency checking of client code (called by .ci/run):
#   - every file in .ci/concurrency/swift6-must-fail/ is a Swift 6 client with one racy capture
#     form (a block that mutates a captured local, a non-Sendable closure value); the compiler
#     must REJECT each one with a concurrency error, as it does for DispatchQueue.async;
#   - .ci/concurrency/swift6-must-build.swift (Sendable captures) must typecheck in Swift 6 mode
#     without a warning;
#   - .ci/concurrency/swift5-must-build.swift (the classic style of google/promises and
#     SwiftCoroutine code) must typecheck in Swift 5 mode (warnings allowed).
# Typechecks against the modules of the debug build. .ci/run has just built it; the build here
# (a no-op then, about a second) is for running this script on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/lib.sh
section "concurrency checking of client code"

swift build >/dev/null
bin=$(swift build --show-bin-path)
# CovenantCore imports the two C modules: the client's typecheck must find them too.
flags=(-typecheck -I "$bin/Modules" -I Sources/CCoroutineContext/include
  -I Sources/CCovenantShims/include
  -Xcc "-fmodule-map-file=$bin/CCoroutineContext.build/module.modulemap"
  -Xcc "-fmodule-map-file=$bin/CCovenantShims.build/module.modulemap")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

for client in .ci/concurrency/swift6-must-fail/*.swift; do
  if swiftc -swift-version 6 "${flags[@]}" "$client" >"$log" 2>&1; then
    echo "FAIL  $client compiled in Swift 6 mode: the race is not diagnosed"
    status=1
  elif grep -qE "error: .*(captured var|non-Sendable|Sendable)" "$log"; then
    echo "ok    $client rejected: $(grep -m1 -oE "error: .*" "$log" | cut -c1-100)"
  else
    echo "FAIL  $client failed for another reason:"
    cat "$log"
    status=1
  fi
done

if swiftc -swift-version 6 "${flags[@]}" .ci/concurrency/swift6-must-build.swift >"$log" 2>&1 \
  && ! grep -q "warning:" "$log"; then
  echo "ok    Sendable captures compile in Swift 6 mode without a warning"
else
  echo "FAIL  .ci/concurrency/swift6-must-build.swift:"
  cat "$log"
  status=1
fi

if swiftc -swift-version 5 "${flags[@]}" .ci/concurrency/swift5-must-build.swift >"$log" 2>&1; then
  echo "ok    the classic style compiles in Swift 5 mode ($(grep -c "warning:" "$log" || true) warnings)"
else
  echo "FAIL  .ci/concurrency/swift5-must-build.swift:"
  cat "$log"
  status=1
fi
exit $status
