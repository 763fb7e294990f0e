#!/usr/bin/env bash
# CI step for Integrations/CovenantNIO (SwiftNIO integration): builds it and runs its tests in
# debug and release, then runs the wrk load comparison briefly (informational, never fails CI),
# the RESP example's redis-cli checks (a gate) and a short redis-benchmark (informational).
# Set NIO_TSAN=1 to also run the tests under ThreadSanitizer (a long build of swift-nio), and
# NIO_RELEASE=0 to skip the release build, release tests and load run (about 60% of the time),
# NIO_DEBUG=0 to skip the debug build and tests (.ci/run does: release tests and the load run
# need the release build anyway, and one build of swift-nio keeps CI quick).
# Cold, on the shared 2-core machine (load average 12-14): 9.6 min wall, 6.4 min user CPU.
# As .ci/run calls it (NIO_DEBUG=0) with swift-nio and BoringSSL already built and Covenant and
# CovenantNIO rebuilt: 199 s wall (173 s of it the build and tests), load average 6; 46 s with
# nothing to rebuild (the checks 6 s, the redis-benchmark 11 s, the load comparison 11 s).
# Called by .ci/run; runs from any directory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../Integrations/CovenantNIO"
start=$(date +%s)
step() { section "CovenantNIO: $* (+$(( $(date +%s) - start ))s)"; }

no_warnings() {
  if grep -E "/Integrations/CovenantNIO/(Sources|Tests)/.*warning:" "$1"; then
    echo "compiler warnings in CovenantNIO"; exit 1
  fi
}

# The TLS test makes its certificate with the openssl command-line tool.
need_tool openssl || echo "openssl missing: the TLS test will be skipped"

if [ "${NIO_DEBUG:-1}" = 1 ]; then
  step "debug build (warnings in CovenantNIO are errors)"
  swift build --build-tests 2>&1 | tee /tmp/covenant-nio-build.log
  no_warnings /tmp/covenant-nio-build.log
  step "debug tests"
  swift test --skip-build
fi

if [ "${NIO_RELEASE:-1}" = 1 ]; then
  step "release build and tests (warnings in CovenantNIO are errors)"
  swift build -c release --build-tests 2>&1 | tee /tmp/covenant-nio-release-build.log
  no_warnings /tmp/covenant-nio-release-build.log
  swift test -c release --skip-build
fi

if [ "${NIO_RELEASE:-1}" = 1 ]; then
  # The RESP example and its twin (built above) against redis-cli, with redis-server as the
  # reference for the expectations: every command, pub/sub included (about 30 s).
  step "RESP servers: redis-cli checks of every command (a gate)"
  REDIS_NO_BUILD=1 bash redis.sh check
  step "RESP servers: a short redis-benchmark, -P 1 and -P 16 (informational)"
  REDIS_NO_BUILD=1 timeout 240 bash redis.sh bench 10000 50000 ||
    echo "redis-benchmark run failed (informational, not a gate)"
fi

if [ "${NIO_TSAN:-0}" = 1 ]; then
  step "ThreadSanitizer tests"
  swift test --sanitize=thread --scratch-path .build-tsan
fi

if [ "${NIO_RELEASE:-1}" = 1 ]; then
  step "load comparison, 5 s each (informational)"
  LOAD_NO_BUILD=1 timeout 120 bash load.sh 5 64 || echo "load script failed (informational, not a gate)"
fi

step "done"
