#!/usr/bin/env bash
# Server footprint: CovenantHTTPExample (coroutine per request) against CovenantHTTPAsyncBaseline
# (async/await), one after the other, on loopback:
#   1. idle: RSS and virtual size after start and one request;
#   2. long-poll: N requests (`/poll`) suspended at once (longpoll_client.py), then released:
#      bytes per suspended request ((RSS with them − idle RSS) ÷ N) and the virtual size;
#   3. `/slow` (a back-end call awaited with a 30 s timeout) under wrk for SECONDS: RSS every
#      5 s, which stays flat when timed waits let go of what they hold when they end.
#
#   bash Integrations/CovenantNIO/footprint.sh [seconds=20] [long-poll requests=10000]
#
# Builds both servers in release mode (unless LOAD_NO_BUILD=1), installs wrk and python3 with
# apt-get if missing, raises the open-file limit for N connections on each side.
set -euo pipefail

SECONDS_PER_RUN=${1:-20}
REQUESTS=${2:-10000}
source "$(dirname "$0")/servers.sh"
install_tools wrk python3 curl
# Each side holds REQUESTS sockets (plus a few): as many files as the hard limit allows.
ulimit -n $((REQUESTS + 4096)) 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
build_servers

measure() {
  local name=$1 binary=$2
  start_server "$name" "$binary" "$(nproc)"
  local pid=$SERVER_PID port=$SERVER_PORT
  local base="http://127.0.0.1:$port"
  sleep 1
  local idle_rss idle_vm
  idle_rss=$(status_kib "$pid" VmRSS)
  idle_vm=$(status_kib "$pid" VmSize)

  # 2. REQUESTS long-poll requests suspended at once.
  python3 "$HERE/longpoll_client.py" "$port" "$REQUESTS" 300 >"$WORK/$name.poll" 2>&1 &
  local client=$!
  local pending=0
  for _ in $(seq 1 600); do
    # A poll that fails (the server busy accepting thousands of connections) is retried.
    pending=$(curl -sf --max-time 5 "$base/pending" | awk '{ print $2 }') || pending=0
    [ "${pending:-0}" -ge "$REQUESTS" ] && break
    sleep 0.2
  done
  sleep 1
  local poll_rss poll_vm
  poll_rss=$(status_kib "$pid" VmRSS)
  poll_vm=$(status_kib "$pid" VmSize)
  curl -sf "$base/release" >/dev/null
  wait "$client" || true
  local answered
  answered=$(cat "$WORK/$name.poll")
  sleep 1
  # 3. /slow under load, RSS sampled every 5 s.
  local samples=()
  ( while sleep 5; do status_kib "$pid" VmRSS; done ) >"$WORK/$name.rss" &
  local sampler=$!
  wrk -t 1 -c 64 -d "${SECONDS_PER_RUN}s" "$base/slow" >"$WORK/$name.wrk" 2>&1
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  mapfile -t samples <"$WORK/$name.rss"
  local slow_rate
  slow_rate=$(awk '/Requests\/sec/ { print $2 }' "$WORK/$name.wrk")
  sleep 1
  local after_slow
  after_slow=$(status_kib "$pid" VmRSS)

  printf '%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$name" "$idle_rss" "$idle_vm" "$slow_rate" \
    "${samples[*]}" "$after_slow" "$pending" "$poll_rss" "$poll_vm" \
    "$(( (poll_rss - idle_rss) * 1024 / REQUESTS ))" "$answered" >>"$WORK/results"
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
}

measure covenant CovenantHTTPExample
measure async CovenantHTTPAsyncBaseline

echo "server | idle RSS KiB | idle virtual KiB | /slow req/s | RSS during /slow (every 5 s) KiB | RSS after /slow | long-polls pending | RSS with them KiB | virtual with them KiB | bytes per suspended request | long-poll answers"
cat "$WORK/results"
