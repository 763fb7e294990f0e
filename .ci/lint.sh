#!/usr/bin/env bash
# Source rules that neither the compiler nor a test can check, read off the Swift sources of
# CovenantCore (called by .ci/run; prints what it checks, exits 1 on the first broken rule).
# Each rule names where it is written down.
#
#   1. Thread-local slots (Scheduling/ThreadSlot.swift): no Swift file but ThreadSlot.swift calls
#      a `cov_tls_*` function; a function that uses the inlined access
#      (`ThreadSlot.loadBeforeAnySuspension` / `storeBeforeAnySuspension`) is `@inline(never)`,
#      so that the optimizer cannot merge it into a caller that suspended before.
#   2. Frames published in the resolution slot (Core/ResolutionDrain.swift): a function that
#      stores a pointer to a drain in `ThreadSlot.resolution` is `@inline(never)`.
#   3. Retained references kept as bits (Atomics/UnsafeRetainedBits.swift): no file but
#      UnsafeRetainedBits.swift makes a retain that `Unmanaged` keeps (`passRetained`,
#      `Unmanaged`'s `retain()`), so every such reference is typed and its release named.
#   4. Critical sections (Architecture.md, "TSan and Covenant's lock"): no file but
#      InlineMutex.swift calls `withLock`; every section goes through `withCriticalSection`.
#   5. Layers (Architecture.md, "Layers"): bash .ci/layers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/lib.sh

core=Sources/CovenantCore
failed=0
fail() { echo "lint: $*" >&2; failed=1; }

# Prints `file:line:attributes-of-the-enclosing-func` for every line of the Swift files under
# $core that matches the extended regular expression $1: the attributes are those written on
# the lines right above the last `func` declaration before the match, and on its own line.
with_enclosing_function() {
  local pattern=$1
  find "$core" -name '*.swift' -print0 | xargs -0 awk -v pattern="$pattern" '
    FNR == 1 { attrs = ""; function_attrs = "" }
    {
      line = $0
      sub(/^[ \t]+/, "", line)
      if (line ~ /^@/) { attrs = attrs " " line }
      else if (line ~ /(^|[ \t])func[ \t]/) { function_attrs = attrs " " line; attrs = "" }
      else if (line !~ /^\/\//) { attrs = "" }
      if ($0 ~ pattern && line !~ /^\/\//) { print FILENAME ":" FNR ":" function_attrs }
    }'
}

section "lint (.ci/lint.sh)"

# 1. Thread-local slots.
if grep -rn --include='*.swift' 'cov_tls_[a-z_]*(' "$core" | grep -v "^$core/Scheduling/ThreadSlot.swift:"; then
  fail "a cov_tls_* call outside Scheduling/ThreadSlot.swift (use ThreadSlot.load/store)"
fi
while IFS= read -r hit; do
  case "$hit" in
  "$core/Scheduling/ThreadSlot.swift:"*) ;;
  *"@inline(never)"*) ;;
  *) fail "inlined thread-slot access in a function that is not @inline(never): ${hit%%: *}" ;;
  esac
done < <(with_enclosing_function 'ThreadSlot\.(load|store)BeforeAnySuspension\(')
echo "ok    thread-local slots: only through ThreadSlot; inlined access only in @inline(never) functions"

# 2. Frames published in the resolution slot.
while IFS= read -r hit; do
  case "$hit" in
  *"@inline(never)"*) ;;
  *) fail "a drain published from a function that is not @inline(never): ${hit%%: *}" ;;
  esac
done < <(with_enclosing_function 'ThreadSlot\.store[A-Za-z]*\(ThreadSlot\.resolution, [^n]')
echo "ok    every function that publishes a drain in ThreadSlot.resolution is @inline(never)"

# 3. Retained references kept as bits.
if grep -rnE --include='*.swift' 'passRetained|\.retain\(\)' "$core" |
  grep -v "^$core/Atomics/UnsafeRetainedBits.swift:" | grep -vE '^[^:]+:[0-9]+:\s*///'; then
  fail "a retain kept by Unmanaged outside UnsafeRetainedBits.swift (use UnsafeRetainedBits)"
fi
echo "ok    retains kept as bits: only through UnsafeRetainedBits"

# 4. Critical sections.
if grep -rn --include='*.swift' '\.withLock[ ({]' "$core" | grep -v "^$core/Atomics/InlineMutex.swift:" |
  grep -vE '^[^:]+:[0-9]+:\s*///'; then
  fail "withLock outside InlineMutex.swift (critical sections use withCriticalSection)"
fi
echo "ok    every critical section goes through withCriticalSection"

# 5. Layers.
bash .ci/layers.sh || failed=1

exit $failed
