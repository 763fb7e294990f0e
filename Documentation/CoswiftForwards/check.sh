#!/usr/bin/env bash
# Runs coswift's own specs (coobjc's Examples/coSwiftDemo/coSwiftDemoTests: the Promise,
# Channel and Sequence specs, 23 examples) against Covenant, through the module of forwards
# beside this script (Sources/coswift/Forwards.swift: coswift's names, each forwarded to the
# construct MigratingFromCoobjc.md maps it to).
#
#   bash Documentation/CoswiftForwards/check.sh PATH_TO_COOBJC_CLONE [WORK_DIR]
#
# The specs are copied from the coobjc clone, not kept here. Their only edits are those forced
# by today's toolchain and test libraries (Quick 7.6.2, Nimble 13.8.0):
#   - `override func spec()` -> `override class func spec()` (Quick 7 made `spec` a class method);
#   - `try await { … }` -> ``try `await` { … }`` (`await` is a keyword since Swift 5.5).
# What Linux lacks (`CACurrentMediaTime`) and the seconds of Nimble 7's `waitUntil(timeout:)`
# are shims in a file of their own (Sources/coSwiftDemoTests/Shims.swift). Quick cannot be
# discovered by swift-corelibs-xctest, so the specs run in an executable that calls `QCKMain`
# (Quick's documented way on Linux).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
coobjc=${1:?usage: check.sh PATH_TO_COOBJC_CLONE [WORK_DIR]}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
cp -R "$here/Sources" "$work/"
identity=$(basename "$repo" | tr "[:upper:]" "[:lower:]")
sed -e "s|@COVENANT@|$repo|" -e "s|@IDENTITY@|$identity|" "$here/Package.swift.in" > "$work/Package.swift"
specs=Examples/coSwiftDemo/coSwiftDemoTests
for spec in coSwiftPromiseTests coSwiftChannelTests coSwiftSequenceTests; do
  git -C "$coobjc" show "HEAD:$specs/$spec.swift" |
    sed -e 's/override func spec()/override class func spec()/' \
        -e 's/try await *{/try `await` {/' > "$work/Sources/coSwiftDemoTests/$spec.swift"
done
cd "$work"
swift build
.build/debug/coSwiftDemoTests
