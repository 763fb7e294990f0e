#!/usr/bin/env bash
# Instructions per operation of every counted id (Benchmarks/README.md), both sides,
# under `valgrind --tool=callgrind`. Instruction counts do not depend on the machine's load.
#
#   bash Benchmarks/instructions.sh [ID ...]        (default: every counted id)
#
# Per-operation figure = (instructions of a 2N-operation run − those of an N-operation run) ÷ N,
# both after the same warm-up, so process start-up and set-up cancel out. Prints a table with
# the budgets of Benchmarks/README.md (informational: instruction budgets are reported, not gated).
set -euo pipefail
cd "$(dirname "$0")"

source callgrind.sh
callgrind_available || { echo "valgrind unavailable: no instruction counts"; exit 0; }

swift build -c release >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
callgrind_binary .build/release/CovenantBenchmarks "$work/cb"

ids=("$@")
[ ${#ids[@]} -eq 0 ] && ids=(P1 P2 P3 C1 C2 C3 C4 C7 C7P A1 T1 S1 S1A S2 C6 B1 B2 F1 F2 F3)

declare -A ops=([P1]=2000 [P2]=10000 [P3]=20000 [C1]=10000 [C2]=20000 [C3]=20000 [C4]=50000 [C7]=20000 [C7P]=20000 [A1]=50000 [T1]=20000 [S1]=100000 [S1A]=20000 [S2]=20000
                [C6]=20000 [B1]=20000 [B2]=10000 [F1]=50000 [F2]=20000 [F3]=200000)
declare -A budget=([P2]="≤ 2900" [P3]="≤ 2600" [C1]="≤ 2200" [C2]="≤ 1000")

printf '%-4s  %14s  %14s  %8s  %s\n' id covenant baseline ratio "budget (covenant)"
for id in "${ids[@]}"; do
  n=${ops[$id]}
  c=$(callgrind_per_op "$work" "$n" "$work/cb" --run "$id" --side covenant --ops)
  b=$(callgrind_per_op "$work" "$n" "$work/cb" --run "$id" --side baseline --ops)
  awk -v id="$id" -v c="$c" -v b="$b" -v budget="${budget[$id]:-—}" '
    BEGIN {
      verdict = ""
      if (budget != "—") { split(budget, parts, " "); verdict = (c <= parts[2]) ? "PASS" : "MISS" }
      printf "%-4s  %14.0f  %14.0f  %8.2f  %s %s\n", id, c, b, (b > 0 ? c / b : 0), budget, verdict
    }'
done
