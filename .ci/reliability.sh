#!/usr/bin/env bash
# Reliability checks (README, "the soak") that are not XCTest tests (those — model programs, stress,
# fault injection, misuse — run with the suite, also under ThreadSanitizer, in .ci/run):
#   1. a short soak: random model programs + stress mix in release mode, memory bound checked;
#   2. a leak check of the example program (README's other command) under LeakSanitizer.
# The long local run is `swift run -c release CovenantSoak --seconds 600` (README).
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/lib.sh

section "soak (short; release)"
swift build -c release --product CovenantSoak
.build/release/CovenantSoak --seconds "${COVENANT_SOAK_SECONDS:-25}"

section "leak check: soak and example under LeakSanitizer"
bash .ci/leak-check.sh
