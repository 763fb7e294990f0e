#!/usr/bin/env bash
# Footprint check of CI (called by .ci/run): the Foundation-free core stays Foundation-free.
# Builds .ci/footprint's two release programs — the same work through CovenantCore and through
# Dispatch alone — and fails if the CovenantCore one links Foundation (libFoundation*,
# FoundationEssentials, ICU) or if its peak RSS is more than 1 MiB above the Dispatch one's.
set -euo pipefail
cd "$(dirname "$0")/footprint"
printf '\n==== footprint: CovenantCore without Foundation (%s) ====\n' "$(date -u +%H:%M:%S)"

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

# Each program prints "<peak RSS KiB> <private anonymous RSS KiB>". The smallest of eleven runs
# of each: which shared-library pages the kernel maps around a fault varies per run (by about
# ±100 KiB, only ever upwards of what the program needs), so the minimum is the steady figure;
# five runs left the difference moving between 800 and 1,050 KiB.
smallest() {
  local best="" line
  for _ in 1 2 3 4 5 6 7 8 9 10 11; do
    line=$("$1" | tail -1)
    if [ -z "$best" ] || [ "${line% *}" -lt "${best% *}" ]; then best=$line; fi
  done
  echo "$best"
}
core=$(smallest "$bin/FootprintCore")
dispatch=$(smallest "$bin/FootprintDispatch")
difference=$(( ${core% *} - ${dispatch% *} ))
echo "footprint: peak RSS: CovenantCore ${core% *} KiB, Dispatch only ${dispatch% *} KiB," \
  "difference $difference KiB (limit 1024)"
echo "footprint: private anonymous RSS: CovenantCore ${core#* } KiB," \
  "Dispatch only ${dispatch#* } KiB"
if [ "$difference" -gt 1024 ]; then
  echo "footprint: CovenantCore costs more than 1 MiB of peak RSS over Dispatch alone"
  status=1
fi
exit $status
