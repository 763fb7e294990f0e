#!/usr/bin/env bash
# Load test: CovenantHTTPExample (coroutine per request) vs CovenantHTTPAsyncBaseline (the same
# handler with async/await on NIOAsyncChannel), one after the other, with wrk on loopback.
#
#   bash Integrations/CovenantNIO/load.sh [seconds=10] [connections=64] [wrk threads=1]
#   COVENANT_LOOPS=4 ASYNC_LOOPS=2 ...   event loop threads of each server (default: cores)
#   ROUNDS=3 bash Integrations/CovenantNIO/load.sh 20   # alternate the servers 3 times, medians
#
# Builds both servers in release mode (unless LOAD_NO_BUILD=1), installs wrk with apt-get if it
# is missing, starts each server on 127.0.0.1, runs wrk for the given time, and prints
# requests/s, latency percentiles, errors and the server's RSS (from /proc/PID/status) before,
# during (every 5 s) and after the run. Loopback only; bounded; the servers are killed on exit.
set -euo pipefail

SECONDS_PER_RUN=${1:-10}
CONNECTIONS=${2:-64}
WRK_THREADS=${3:-1}
ROUNDS=${ROUNDS:-1}
COVENANT_LOOPS=${COVENANT_LOOPS:-$(nproc)}
ASYNC_LOOPS=${ASYNC_LOOPS:-$(nproc)}
source "$(dirname "$0")/servers.sh"
install_tools wrk curl
build_servers

# wrk prints latencies as 850.00us, 1.23ms or 1.02s; in milliseconds:
to_ms() { echo "$1" | awk '/us$/ { printf "%.3f", $0 / 1000; next } /ms$/ { printf "%.3f", $0 + 0; next }
  /s$/ { printf "%.3f", $0 * 1000; next } { print "?" }'; }

# CPU time (user + system) the process has used, in milliseconds.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($14 + $15) * 1000 / hz }' "/proc/$1/stat" 2>/dev/null || echo 0; }


# run NAME BINARY LOOPS: starts the server, loads it, prints one result line to $WORK/results.
run() {
  local name=$1 binary=$2 loops=$3
  start_server "$name" "$binary" "$loops"
  local pid=$SERVER_PID
  local url="http://127.0.0.1:$SERVER_PORT/hello"
  local rss_start
  rss_start=$(status_kib "$pid" VmRSS)

  # RSS every 5 s while wrk runs.
  (
    while sleep 5; do echo "$(status_kib "$pid" VmRSS)"; done
  ) >"$WORK/$name.rss" &
  local sampler=$!
  local cpu_start
  cpu_start=$(cpu_ms "$pid")
  wrk -t "$WRK_THREADS" -c "$CONNECTIONS" -d "${SECONDS_PER_RUN}s" --latency "$url" >"$WORK/$name.wrk" 2>&1
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  local rss_end cpu_used
  rss_end=$(status_kib "$pid" VmRSS)
  cpu_used=$(( $(cpu_ms "$pid") - cpu_start ))
  # Still serving after the run (no wedged loop).
  local after="ok"
  curl -sf --max-time 5 "$url" >/dev/null || after="NO ANSWER"

  local w="$WORK/$name.wrk"
  local rps p50 p99 requests errors non2xx samples cpu_per_request
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$w")
  p50=$(awk '$1 == "50%" { print $2 }' "$w")
  p99=$(awk '$1 == "99%" { print $2 }' "$w")
  requests=$(awk '/requests in/ { print $1 }' "$w")
  errors=$(awk '/Socket errors:/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$w")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $5 }' "$w")
  samples=$(paste -sd' ' "$WORK/$name.rss")
  cpu_per_request=$(awk -v c="$cpu_used" -v r="$requests" 'BEGIN { printf "%.1f", (r > 0 ? c * 1000 / r : 0) }')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$name" "$rps" "$p50" "$p99" "$requests" "${errors:-0}" "${non2xx:-0}" "$cpu_per_request" \
    "$rss_start" "$rss_end" "$after" >>"$WORK/results"
  printf '%s %s %s %s %s\n' "$name" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")" "$cpu_per_request" >>"$WORK/numbers"
  echo "rss samples (KiB, every 5 s) $name: $samples" >>"$WORK/rss-series"
  echo "---- wrk output, $name ----" >&2
  cat "$w" >&2

  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# Alternate the two servers so that a change in the machine's load hits both alike.
for round in $(seq 1 "$ROUNDS"); do
  echo "load.sh: round $round of $ROUNDS" >&2
  run "covenant-coroutines" CovenantHTTPExample "$COVENANT_LOOPS"
  run "async-await-baseline" CovenantHTTPAsyncBaseline "$ASYNC_LOOPS"
done

echo
echo "wrk -t$WRK_THREADS -c$CONNECTIONS -d${SECONDS_PER_RUN}s on 127.0.0.1, $(nproc) cores, event loop threads: covenant $COVENANT_LOOPS, async $ASYNC_LOOPS (+ Swift's cooperative pool, $(nproc) threads), load average before: $LOAD_BEFORE"
echo
echo "| server | requests/s | p50 | p99 | requests | socket errors | non-2xx | server CPU µs/request | RSS start KiB | RSS end KiB | answers after |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
cat "$WORK/results"
echo
cat "$WORK/rss-series" 2>/dev/null || true
if [ "$ROUNDS" -gt 1 ]; then
  echo
  echo "medians over $ROUNDS rounds:"
  for name in covenant-coroutines async-await-baseline; do
    median() { grep "^$name " "$WORK/numbers" | awk -v c="$1" '{ print $c }' | sort -g \
      | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    echo "  $name: $(median 2) requests/s, p50 $(median 3) ms, p99 $(median 4) ms, $(median 5) µs CPU/request"
  done
fi
