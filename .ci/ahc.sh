#!/usr/bin/env bash
# CI step for Integrations/CovenantAsyncHTTPClient (AsyncHTTPClient requests awaited in
# coroutines): one debug build with the tests, warnings in the integration's own code are
# errors, then its tests against a local SwiftNIO server. AHC_RELEASE=1 adds the release build and
# tests, AHC_TSAN=1 the tests under ThreadSanitizer (each another build of AsyncHTTPClient and
# SwiftNIO, minutes on 2 cores). Called by .ci/run; runs from any directory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../Integrations/CovenantAsyncHTTPClient"
section "CovenantAsyncHTTPClient: debug build and tests"

no_warnings() {
  if grep -E "/Integrations/CovenantAsyncHTTPClient/(Sources|Tests)/.*warning:" "$1"; then
    echo "compiler warnings in CovenantAsyncHTTPClient"; exit 1
  fi
}

swift build --build-tests 2>&1 | tee /tmp/covenant-ahc-build.log
no_warnings /tmp/covenant-ahc-build.log
swift test --skip-build

if [ "${AHC_RELEASE:-0}" = 1 ]; then
  section "CovenantAsyncHTTPClient: release build and tests"
  swift build -c release --build-tests 2>&1 | tee /tmp/covenant-ahc-release-build.log
  no_warnings /tmp/covenant-ahc-release-build.log
  swift test -c release --skip-build
fi

if [ "${AHC_TSAN:-0}" = 1 ]; then
  section "CovenantAsyncHTTPClient: ThreadSanitizer tests"
  swift test --sanitize=thread --scratch-path .build-tsan
fi
