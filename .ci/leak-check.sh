#!/usr/bin/env bash
# Leak check (CONTRIBUTING.md, "Sanitizer runs are clean") with LeakSanitizer (swift's -sanitize=address, detect_leaks=1):
#   1. the soak, briefly: every coroutine, promise and channel it made has finished when it
#      exits, so ANY leak with a Covenant frame fails the check;
#   2. the example program (README's): it returns from main while its actor coroutine may still
#      be finishing on another thread, so two kinds of report are objects still alive at exit,
#      shown but not counted: a Swift weak-reference side table (the object's header stores its
#      pointer encoded, which LeakSanitizer cannot follow) and a coroutine's wake-up block in
#      flight (`_Block_copy` under `scheduleTask`). Any other leak with a Covenant frame fails.
# Coroutine stacks are registered with LeakSanitizer as root regions in ASan builds (stack_pool.c),
# so objects held by suspended coroutines and generators are not reported.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${COVENANT_ASAN_SCRATCH:-.build-asan}"
swift build --sanitize=address --scratch-path "$scratch" --product CovenantSoak
swift build --sanitize=address --scratch-path "$scratch" --product CovenantExample
bin="$scratch/debug"

# Prints the leak reports that count: those with a frame in a Covenant module or in
# the C modules, minus (with --allow-at-exit) the two alive-at-exit kinds described above.
# Swift frames are symbolized mangled: `$s` + the module name's length + the name, so
# `\$s[0-9]+Covenant` matches every module of the package (CovenantCore, CovenantFoundation,
# Covenant, CovenantTesting, CovenantModel, CovenantSoak, CovenantExample), however the package
# splits them, where `$s8Covenant` matched only the umbrella module; a frame's source path
# (`Sources/Covenant…/`) counts too, in case a symbolizer demangles.
covenant_leaks() {
  awk -v allow="$1" '
    /^(Direct|Indirect) leak/ { block = $0 "\n"; inside = 1; next }
    inside && /^$/ { inside = 0; check(); next }
    inside { block = block $0 "\n" }
    END { if (inside) check() }
    function check() {
      if (block !~ /\$s[0-9]+Covenant|Sources\/(Covenant[A-Za-z]*|CCoroutineContext|CCovenantShims)\//) return
      if (allow == "yes" && block ~ /formWeakReference/) return
      if (allow == "yes" && block ~ /_Block_copy[^\n]*\n[^\n]*CoroutineContextC12scheduleTask/) return
      printf "%s\n", block
    }'
}

status=0
echo "-- soak under LeakSanitizer --"
ASAN_OPTIONS=detect_leaks=1 "$bin/CovenantSoak" --seconds 15 --max-rss-growth-mib 1000000 \
  > /tmp/covenant-soak-lsan.log 2>&1 || true
grep -E "^(done|start|OK|FAILED)|SUMMARY" /tmp/covenant-soak-lsan.log || true
grep -q "^OK" /tmp/covenant-soak-lsan.log || { echo "soak under ASan did not finish OK"; status=1; }
leaks=$(covenant_leaks no < /tmp/covenant-soak-lsan.log)
if [ -n "$leaks" ]; then echo "Covenant leaks in the soak:"; echo "$leaks"; status=1; fi

echo "-- example under LeakSanitizer --"
ASAN_OPTIONS=detect_leaks=1 timeout 300 "$bin/CovenantExample" > /tmp/covenant-example-lsan.log 2>&1 || true
grep -E "SUMMARY" /tmp/covenant-example-lsan.log || echo "no leak reported"
leaks=$(covenant_leaks yes < /tmp/covenant-example-lsan.log)
if [ -n "$leaks" ]; then echo "Covenant leaks in the example:"; echo "$leaks"; status=1; fi

[ "$status" = 0 ] && echo "leak check: no Covenant leak"
exit "$status"
