# Instruction counting under `valgrind --tool=callgrind`, shared by Benchmarks/instructions.sh and
# Benchmarks/AtomicsMicro/run.sh; sourced, not run.
#   callgrind_available: installs valgrind if missing (.ci/lib.sh's need_tool); false without it.
#   callgrind_binary SOURCE COPY: COPY is SOURCE without its DWARF, which makes valgrind give up
#     on Swift binaries.
#   callgrind_per_op WORK N COMMAND...: instructions per operation of `COMMAND... N`, from one
#     run with N operations and one with 2N: (I(2N) − I(N)) ÷ N, so process start-up and set-up
#     cancel out. WORK is a scratch folder for callgrind's output files.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.ci/lib.sh"

callgrind_available() { need_tool valgrind; }

callgrind_binary() { cp "$1" "$2" && strip -g "$2"; }

callgrind_per_op() {
  local work=$1 n=$2
  shift 2
  local once twice
  once=$(callgrind_total "$work/callgrind-1.out" "$@" "$n")
  twice=$(callgrind_total "$work/callgrind-2.out" "$@" $((2 * n)))
  awk -v a="$once" -v b="$twice" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }'
}

# callgrind_total OUT COMMAND...: total instructions of one run.
callgrind_total() {
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
}
