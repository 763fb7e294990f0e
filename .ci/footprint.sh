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

# Each program prints "<peak RSS KiB> <private anonymous RSS KiB>". The smallest of fifteen runs
# of each, the two programs alternating: which shared-library pages the kernel maps around a
# fault varies per run (by about ±100 KiB, only ever upwards of what the program needs, and more
# while other processes churn the page cache), so the minimum is the steady figure.
smaller() { if [ -z "$1" ] || [ "${2% *}" -lt "${1% *}" ]; then echo "$2"; else echo "$1"; fi; }
core="" dispatch=""
for _ in $(seq 1 15); do
  core=$(smaller "$core" "$("$bin/FootprintCore" | tail -1)")
  dispatch=$(smaller "$dispatch" "$("$bin/FootprintDispatch" | tail -1)")
done
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
