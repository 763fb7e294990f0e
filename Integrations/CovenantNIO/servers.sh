#!/usr/bin/env bash
# What load.sh, footprint.sh and redis.sh share: sourced by them, not run on its own.
#   - a scratch folder ($WORK) and the servers they start ($PIDS), removed and killed on exit;
#   - install_tools TOOL...: installs missing commands (.ci/lib.sh's need_tool, apt-get);
#   - build_servers: builds both servers in release mode (unless LOAD_NO_BUILD=1);
#   - start_server NAME BINARY LOOPS: starts one on 127.0.0.1, on a port the system picks (port
#     0; the server prints its address), waits until it answers /hello, sets SERVER_PID and
#     SERVER_PORT; exits the script if it dies or does not start;
#   - status_kib PID KEY: a figure of /proc/PID/status in KiB (VmRSS, VmSize), or "?".
SCRIPT=$(basename "$0")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../.ci/lib.sh"
BIN="$HERE/.build/release"
WORK=$(mktemp -d)
PIDS=()

cleanup() {
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

install_tools() {
  local tool
  for tool in "$@"; do
    need_tool "$tool" || { echo "$SCRIPT: $tool is needed" >&2; exit 1; }
  done
}

build_servers() {
  [ "${LOAD_NO_BUILD:-0}" = 1 ] && return
  echo "$SCRIPT: building the servers (release)" >&2
  swift build -c release --package-path "$HERE" --product CovenantHTTPExample >&2
  swift build -c release --package-path "$HERE" --product CovenantHTTPAsyncBaseline >&2
}

start_server() {
  local name=$1 binary=$2 loops=$3
  "$BIN/$binary" 0 "$loops" >"$WORK/$name.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  for _ in $(seq 1 100); do
    grep -q "listening" "$WORK/$name.log" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null ||
      { cat "$WORK/$name.log" >&2; echo "$SCRIPT: $name died" >&2; exit 1; }
    sleep 0.1
  done
  grep -q "listening" "$WORK/$name.log" || { echo "$SCRIPT: $name did not start" >&2; exit 1; }
  # "… listening on [IPv4]127.0.0.1/127.0.0.1:40123 with 2 event loop threads"
  SERVER_PORT=$(sed -nE 's/.*listening on .*:([0-9]+) with .*/\1/p' "$WORK/$name.log" | head -1)
  [ -n "$SERVER_PORT" ] ||
    { cat "$WORK/$name.log" >&2; echo "$SCRIPT: no port in $name's output" >&2; exit 1; }
  curl -sf "http://127.0.0.1:$SERVER_PORT/hello" >/dev/null ||
    { echo "$SCRIPT: $name does not answer" >&2; exit 1; }
}

status_kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status" 2>/dev/null || echo "?"; }
