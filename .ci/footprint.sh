#!/usr/bin/env bash
# Footprint check of CI (called by .ci/run): the Foundation-free core stays Foundation-free.
#
# The requirement (Architecture.md, "Why a Foundation-free core"): the code a server links —
# CovenantCore — does not load Foundation. .ci/footprint holds two release programs doing the
# same small piece of work, through CovenantCore and through Dispatch alone. The gates:
#   1. `ldd FootprintCore` names no Foundation or ICU library (`otool -L` on macOS);
#   2. FootprintCore, running, has no Foundation or ICU library mapped (/proc/self/maps: this
#      also catches a `dlopen`, which `ldd` cannot see);
#   3. its peak private anonymous memory (RssAnon, read inside the work, while the coroutine and
#      its stack are alive, and at the end) is at most ANON_BUDGET_KIB above the Dispatch
#      program's: what loading Foundation (or a new start-up cost of the core) would add.
#      Measured on the 2-core CI machine, load average 5, 20 paired runs: CovenantCore
#      836–848 KiB, Dispatch only 720–744 KiB, difference 96–120 KiB (steady within ±12 KiB).
#      The Dispatch program importing Foundation and calling `Date()` has 1,456–1,460 KiB:
#      Foundation adds about 730 KiB of its own. The budget, 256 KiB, is twice the measured
#      difference and a third of what Foundation adds.
# Peak RSS (VmHWM) is printed for information, not gated: it also counts the pages of code and
# shared libraries, and which of those the kernel faults in around an access varies from run to
# run (and with the page cache other processes churn). The gate it replaces, "VmHWM within 1 MiB
# of the Dispatch program's", failed with nothing changed: paired differences of 672–1,100 KiB
# over the same 20 runs, against a steady RssAnon difference. (Foundation would add 7.8 MiB.)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/footprint"
section "footprint: CovenantCore without Foundation"

ANON_BUDGET_KIB=256
RUNS=11

swift build -c release >/dev/null
bin=$(swift build -c release --show-bin-path)

status=0
if [ "$(uname)" = Linux ]; then
  if ldd "$bin/FootprintCore" | grep -Ei 'foundation|icu'; then
    echo "footprint: FootprintCore (CovenantCore) links Foundation or ICU"
    status=1
  else
    echo "footprint: ldd FootprintCore: no Foundation, no ICU"
  fi
else
  if otool -L "$bin/FootprintCore" | grep -E 'Foundation'; then
    echo "footprint: FootprintCore (CovenantCore) links Foundation"
    status=1
  fi
fi

# Each program prints "<peak RSS KiB> <peak RssAnon KiB> <Foundation/ICU mappings>" last. The
# two alternate, RUNS times each; the smallest figure of each program is compared (a run can
# only add pages to what the program needs, never remove any).
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for _ in $(seq 1 "$RUNS"); do
  echo "core $("$bin/FootprintCore" | tail -1)" >>"$runs"
  echo "dispatch $("$bin/FootprintDispatch" | tail -1)" >>"$runs"
done
smallest() { awk -v who="$1" -v field="$2" '$1 == who && (m == "" || $field < m) { m = $field } END { print m }' "$runs"; }
core_peak=$(smallest core 2) dispatch_peak=$(smallest dispatch 2)
core_anon=$(smallest core 3) dispatch_anon=$(smallest dispatch 3)
mapped=$(awk '$1 == "core" && $4 != 0 { n++ } END { print n + 0 }' "$runs")
anon_difference=$((core_anon - dispatch_anon))

if [ "$(uname)" = Linux ]; then
  if [ "$mapped" -ne 0 ]; then
    echo "footprint: FootprintCore had Foundation or ICU libraries mapped in $mapped of $RUNS runs"
    status=1
  else
    echo "footprint: FootprintCore at run time: no Foundation or ICU library mapped"
  fi
fi
echo "footprint: peak private anonymous RSS: CovenantCore $core_anon KiB, Dispatch only" \
  "$dispatch_anon KiB, difference $anon_difference KiB (budget $ANON_BUDGET_KIB)"
# Informational: the smallest peak RSS of each, and the spread of the paired differences.
echo "footprint: peak RSS (VmHWM, not gated): CovenantCore $core_peak KiB, Dispatch only" \
  "$dispatch_peak KiB, difference $((core_peak - dispatch_peak)) KiB;" \
  "paired differences $(paste -d' ' <(awk '$1 == "core" { print $2 }' "$runs") \
    <(awk '$1 == "dispatch" { print $2 }' "$runs") |
    awk '{ d = $1 - $2; if (NR == 1 || d < lo) lo = d; if (NR == 1 || d > hi) hi = d }
      END { printf "%d to %d KiB", lo, hi }')"
if [ "$anon_difference" -gt "$ANON_BUDGET_KIB" ]; then
  echo "footprint: CovenantCore costs more than $ANON_BUDGET_KIB KiB of private memory over" \
    "Dispatch alone (Foundation loaded, or a new start-up cost?)"
  status=1
fi
exit $status
