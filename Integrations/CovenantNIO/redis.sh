#!/usr/bin/env bash
# The RESP servers against the real Redis tools, on loopback only: CovenantRESPExample (one
# coroutine per connection), its NIOAsyncChannel twin CovenantRESPAsyncBaseline, and
# redis-server (the reference, started here on a free port without persistence).
#
#   bash redis.sh check             # redis-cli checks of every command, pub/sub included, on
#                                   # all three servers (a gate: exits 1 on a failed check)
#   bash redis.sh bench [N1] [N16]  # redis-benchmark -t set,get,incr -c 50, -P 1 (N1 requests
#                                   # per test, default 100,000) and -P 16 (N16, 500,000):
#                                   # req/s and server CPU per request (/proc/PID/stat)
#   bash redis.sh idle [N]          # N idle connections (19,000): server RSS per connection,
#                                   # then every connection woken with a PING, all answered
#   bash redis.sh allocs            # heap allocations per GET, steady state (LD_PRELOAD counter)
#   bash redis.sh readline          # N5: readLine from memory, 80-byte lines
#   bash redis.sh instructions [N]  # callgrind instructions per GET (N GETs, default 10,000),
#                                   # the example (one event loop) and redis-server, and where
#                                   # the example's go (needs valgrind; not part of `all`)
#   bash redis.sh all [N1] [N16] [N]  # all of it, one code state, one run: the READMEs' figures
#
#   ROUNDS=3     bench: run the servers in turn ROUNDS times, report medians (default 1)
#   THREADS=2    event loops of the two Swift servers (default: cores); redis-server: 1 thread
#   REDIS_NO_BUILD=1  use the release binaries already built
#
# Installs redis-tools and redis-server with apt-get when missing. The servers are killed on
# exit; every load is bounded in requests and time.
set -euo pipefail

MODE=${1:-all}
# servers.sh (shared with load.sh and footprint.sh): $HERE, $BIN, the scratch folder $WORK and
# the list $PIDS of what to kill on exit, status_kib; and .ci/lib.sh's need_tool.
source "$(dirname "$0")/servers.sh"
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-1}
SERVERS=(covenant twin redis)
FAILED=0

need_tool redis-cli redis-tools && need_tool redis-benchmark redis-tools &&
  need_tool redis-server redis-server && need_tool python3 ||
  { echo "redis.sh: redis-tools, redis-server and python3 are needed" >&2; exit 1; }

build() {
  [ "${REDIS_NO_BUILD:-0}" = 1 ] && return
  echo "redis.sh: building the servers (release)" >&2
  local product
  for product in CovenantRESPExample CovenantRESPAsyncBaseline CovenantNIOReadLineBenchmark; do
    swift build -c release --package-path "$HERE" --product "$product" >&2
  done
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start NAME [PRELOAD]: starts a server, waits until it answers PING; sets PID and PORT.
start() {
  local name=$1 preload=${2:-}
  local environment=()
  [ -n "$preload" ] && environment=(LD_PRELOAD="$preload" MALLOC_COUNT_FILE="$WORK/$name.count")
  case $name in
    covenant | twin)
      local binary=CovenantRESPExample
      [ "$name" = twin ] && binary=CovenantRESPAsyncBaseline
      # A restart must not read the last start's port: the redirection below truncates the
      # file in the child, which the wait loop can outrun.
      rm -f "$WORK/$name.out" "$WORK/$name.err"
      env "${environment[@]}" "$BIN/$binary" --port 0 --threads "$THREADS" \
        >"$WORK/$name.out" 2>"$WORK/$name.err" &
      PID=$!
      for _ in $(seq 1 100); do
        [ -s "$WORK/$name.out" ] && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
      done
      # Its first line of output: "listening on PORT".
      PORT=$(head -1 "$WORK/$name.out" | sed -nE 's/^listening on ([0-9]+)$/\1/p')
      ;;
    redis)
      PORT=$(free_port)
      # The descriptor limit is 20,000: room for 19,500 clients. Protected mode off: it refuses
      # every client not from 127.0.0.1 exactly, and the idle clients come from 127.0.0.2…
      # (it listens on 127.0.0.1 only all the same).
      redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --protected-mode no --maxclients 19500 --dir "$WORK" --logfile "$WORK/redis.log" &
      PID=$!
      ;;
  esac
  PIDS+=("$PID")
  for _ in $(seq 1 100); do
    [ -n "$PORT" ] && [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$WORK/$name.out" "$WORK/$name.err" "$WORK/redis.log" 2>/dev/null >&2 || true
  echo "redis.sh: $name did not start" >&2
  exit 1
}

stop() { kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true; }

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- checks: every command with redis-cli, the same expectations for all three servers ----

expect() {  # expect SERVER-NAME EXPECTED COMMAND...: runs redis-cli COMMAND, compares its output
  local name=$1 expected=$2
  shift 2
  local got
  got=$(timeout 10 redis-cli -p "$PORT" "$@" 2>&1) || true
  if [ "$got" != "$expected" ]; then
    echo "FAIL [$name] redis-cli $*: expected $(printf %q "$expected"), got $(printf %q "$got")"
    FAILED=$((FAILED + 1))
  else
    CHECKS=$((CHECKS + 1))
  fi
}

transcript() {  # transcript NAME EXPECTED REQUEST: raw bytes over /dev/tcp, reply until close
  local name=$1 expected=$2 request=$3 got
  got=$(timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0; printf "%b" "$1" >&3; cat <&3' \
    "$PORT" "$request" | tr -d '\r') || true
  if [ "$got" != "$(printf '%b' "$expected")" ]; then
    echo "FAIL [$name] transcript $(printf %q "$request"): got $(printf %q "$got")"
    FAILED=$((FAILED + 1))
  else
    CHECKS=$((CHECKS + 1))
  fi
}

checks() {
  local name=$1
  CHECKS=0
  expect "$name" PONG ping
  expect "$name" hello ping hello
  expect "$name" "hello world" echo "hello world"
  expect "$name" OK set greeting hi
  expect "$name" hi get greeting
  expect "$name" "" get missing
  expect "$name" OK set later v ex 100
  expect "$name" v get later
  expect "$name" OK set brief v px 150
  expect "$name" 1 exists brief
  sleep 0.4
  expect "$name" "" get brief
  expect "$name" 0 exists brief
  expect "$name" "ERR invalid expire time in 'set' command" set greeting v ex 0
  expect "$name" "ERR syntax error" set greeting v bogus
  expect "$name" 2 exists greeting later missing
  expect "$name" 2 del greeting later missing
  expect "$name" 0 exists greeting
  expect "$name" 1 incr counter
  expect "$name" 2 incr counter
  expect "$name" OK set word abc
  expect "$name" "ERR value is not an integer or out of range" incr word
  expect "$name" OK set big 9223372036854775807
  expect "$name" "ERR increment or decrement would overflow" incr big
  expect "$name" "$(printf 'abc\n\n2')" mget word missing counter
  expect "$name" 0 publish nobody hello
  expect "$name" "ERR wrong number of arguments for 'get' command" get
  expect "$name" "ERR unknown command 'nosuch', with args beginning with: 'x' " nosuch x
  expect "$name" OK quit
  expect "$name" "$(printf 'unsubscribe\n\n0')" unsubscribe

  # Pub/sub: a subscriber in the background; PUBLISH until it counts one receiver, then a
  # message it must print.
  timeout 20 redis-cli -p "$PORT" subscribe news >"$WORK/$name.subscriber" 2>&1 &
  local subscriber=$! receivers=0
  for _ in $(seq 1 100); do
    receivers=$(redis-cli -p "$PORT" publish news warming-up)
    [ "$receivers" = 1 ] && break
    sleep 0.1
  done
  expect "$name" 1 publish news "hello subscriber"
  for _ in $(seq 1 50); do
    grep -q "hello subscriber" "$WORK/$name.subscriber" && break
    sleep 0.1
  done
  kill "$subscriber" 2>/dev/null; wait "$subscriber" 2>/dev/null || true
  if grep -qz $'subscribe\nnews\n1\n.*message\nnews\nhello subscriber' "$WORK/$name.subscriber"; then
    CHECKS=$((CHECKS + 1))
  else
    echo "FAIL [$name] the subscriber did not get the message: $(cat "$WORK/$name.subscriber")"
    FAILED=$((FAILED + 1))
  fi
  expect "$name" 0 publish news "after the subscriber left"

  # Subscribed mode in one connection: confirmations, PING's array, UNSUBSCRIBE of one and of
  # all, a plain command once out of it, QUIT closing the connection.
  transcript "$name" \
    '*3\n$9\nsubscribe\n$1\na\n:1\n*3\n$9\nsubscribe\n$1\nb\n:2\n*3\n$11\nunsubscribe\n$1\na\n:1\n*2\n$4\npong\n$0\n\n*3\n$11\nunsubscribe\n$1\nb\n:0\n+PONG\n+OK' \
    'SUBSCRIBE a b\r\nUNSUBSCRIBE a\r\nPING\r\nUNSUBSCRIBE\r\nPING\r\nQUIT\r\n'
  # Pipelined commands in one write, inline and RESP; then a protocol error closes.
  transcript "$name" '+OK\n$2\nv1\n:1\n-ERR Protocol error: invalid bulk length' \
    'SET pipelined v1\r\n*2\r\n$3\r\nGET\r\n$9\r\npipelined\r\n*2\r\n$4\r\nINCR\r\n$2\r\nn1\r\n*1\r\n$x\r\n'
  echo "$name: $CHECKS checks passed"
}

run_checks() {
  local name
  for name in redis covenant twin; do  # redis-server first: it proves the expectations
    start "$name"
    checks "$name"
    # A short pipelined load, then the server must still answer.
    redis-benchmark -p "$PORT" -t set,get,incr -c 8 -n 2000 -P 4 -q >/dev/null 2>&1 || true
    expect "$name" PONG ping
    stop
  done
  if [ "$FAILED" -gt 0 ]; then echo "redis.sh check: $FAILED failed"; exit 1; fi
  echo "redis.sh check: all passed"
}

# ---- bench: req/s and server CPU per request ----

bench_server() {  # bench_server NAME PIPELINE REQUESTS: appends "name P test rps µs" lines
  local name=$1 pipeline=$2 requests=$3 test
  start "$name"
  for test in set get incr; do
    local before after rps
    before=$(cpu_ticks "$PID")
    rps=$(redis-benchmark -p "$PORT" -t "$test" -c 50 -n "$requests" -P "$pipeline" --csv 2>/dev/null |
      awk -F'"' 'NR == 2 { print $4 }')
    after=$(cpu_ticks "$PID")
    echo "$name $pipeline $test ${rps:-0} $(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
      -v n="$requests" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')" >>"$WORK/bench"
  done
  stop
}

run_bench() {
  local n1=${1:-100000} n16=${2:-500000} round name pipeline test
  : >"$WORK/bench"
  for round in $(seq 1 "$ROUNDS"); do
    for pipeline in 1 16; do
      local requests=$n1
      [ "$pipeline" = 16 ] && requests=$n16
      for name in "${SERVERS[@]}"; do bench_server "$name" "$pipeline" "$requests"; done
    done
  done
  echo
  echo "redis-benchmark -c 50 on 127.0.0.1, requests per test: $n1 (-P 1), $n16 (-P 16);" \
    "$(nproc) cores; event loops: $THREADS (redis-server: 1 thread); rounds: $ROUNDS (medians)"
  echo
  echo "| server | -P | test | requests/s | server CPU µs/request |"
  echo "|---|---|---|---|---|"
  for pipeline in 1 16; do
    for name in "${SERVERS[@]}"; do
      for test in set get incr all; do
        local lines
        if [ "$test" = all ]; then
          lines=$(awk -v s="$name" -v p="$pipeline" '$1 == s && $2 == p' "$WORK/bench")
        else
          lines=$(awk -v s="$name" -v p="$pipeline" -v t="$test" '$1 == s && $2 == p && $3 == t' "$WORK/bench")
        fi
        local rps cpu
        rps=$(echo "$lines" | awk '{ print $4 }' | median)
        cpu=$(echo "$lines" | awk '{ print $5 }' | median)
        printf '| %s | %s | %s | %.0f | %.2f |\n' "$name" "$pipeline" "$test" "$rps" "$cpu"
        echo "$name $pipeline $test $rps $cpu" >>"$WORK/bench-medians"
      done
    done
  done
  figure() { awk -v s="$1" -v p="$2" -v c="$3" '$1 == s && $2 == p && $3 == "all" { print $c }' "$WORK/bench-medians"; }
  echo
  echo "N1 CPU/request at -P 1 (median over set, get, incr): covenant $(figure covenant 1 5) µs," \
    "twin $(figure twin 1 5) µs, redis-server $(figure redis 1 5) µs:" \
    "$(awk -v a="$(figure covenant 1 5)" -v b="$(figure twin 1 5)" -v c="$(figure redis 1 5)" \
      'BEGIN { printf "%.2fx the twin (target <= 0.75), %.2fx redis-server (target <= 1.2)", a / b, a / c }')"
  echo "N2 req/s at -P 16 (median over set, get, incr): covenant $(figure covenant 16 4)," \
    "twin $(figure twin 16 4), redis-server $(figure redis 16 4):" \
    "$(awk -v a="$(figure covenant 16 4)" -v b="$(figure twin 16 4)" -v c="$(figure redis 16 4)" \
      'BEGIN { printf "%.2fx the twin (target >= 1.25), %.2fx redis-server", a / b, a / c }')"
}

# ---- idle: RSS per idle connection, all answered when woken ----

run_idle() {
  local connections=${1:-19000} name
  echo
  echo "| server | idle connections | RSS before KiB | RSS with them KiB | bytes per connection | a million would take | answered when woken |"
  echo "|---|---|---|---|---|---|---|"
  for name in "${SERVERS[@]}"; do
    start "$name"
    sleep 1
    local before with fds
    before=$(status_kib "$PID" VmRSS)
    rm -f "$WORK/wake" && mkfifo "$WORK/wake"
    exec 7<>"$WORK/wake"
    python3 "$HERE/idle_clients.py" "$PORT" "$connections" 120 <"$WORK/wake" >"$WORK/idle.out" 2>&1 &
    local client=$!
    PIDS+=("$client")
    # Until the client is connected and the server holds every connection (its descriptors).
    for _ in $(seq 1 1200); do
      fds=$(ls "/proc/$PID/fd" | wc -l)
      grep -q connected "$WORK/idle.out" && [ "$fds" -ge "$connections" ] && break
      kill -0 "$client" 2>/dev/null || break
      sleep 0.25
    done
    sleep 3  # settled: every connection parked in its read
    with=$(status_kib "$PID" VmRSS)
    echo wake >&7
    wait "$client" || true
    exec 7>&-
    local answered per
    answered=$(grep -o 'answered.*' "$WORK/idle.out" || cat "$WORK/idle.out")
    per=$(( (with - before) * 1024 / connections ))
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$connections" "$before" "$with" \
      "$per" "$(awk -v b="$per" 'BEGIN { printf "%.2f GiB", b * 1e6 / 2^30 }')" "$answered"
    stop
  done
}

# ---- allocs: heap allocations per GET, by difference of two runs (connection set-up cancels) ----

count_now() {  # count_now NAME: the server's allocations so far
  rm -f "$WORK/$1.count"
  kill -USR2 "$PID"
  for _ in $(seq 1 50); do [ -s "$WORK/$1.count" ] && break; sleep 0.05; done
  cat "$WORK/$1.count"
}

run_allocs() {
  local short=20000 long=120000 name pipeline
  local counter="$HERE/../../Benchmarks/Sources/AllocationCounter"
  gcc -O2 -shared -fPIC -I "$counter/include" -o "$WORK/malloc_count.so" \
    "$counter/AllocationCounter.c" "$HERE/allocation_count_signal.c"
  echo
  echo "| server | -P | allocations per GET (steady state) |"
  echo "|---|---|---|"
  for name in covenant twin; do
    start "$name" "$WORK/malloc_count.so"
    redis-benchmark -p "$PORT" -t set,get -c 50 -n 20000 -q >/dev/null 2>&1  # warm up
    for pipeline in 1 16; do
      local a b c d
      a=$(count_now "$name")
      redis-benchmark -p "$PORT" -t get -c 50 -n "$short" -P "$pipeline" -q >/dev/null 2>&1
      b=$(count_now "$name")
      redis-benchmark -p "$PORT" -t get -c 50 -n "$long" -P "$pipeline" -q >/dev/null 2>&1
      c=$(count_now "$name")
      d=$(awk -v a="$a" -v b="$b" -v c="$c" -v s="$short" -v l="$long" \
        'BEGIN { printf "%.2f", ((c - b) - (b - a)) / (l - s) }')
      printf '| %s | %s | %s |\n' "$name" "$pipeline" "$d"
    done
    stop
  done
}

# ---- instructions: callgrind instructions per GET, one event loop, by source of the code ----

# cg_server NAME GETS COMMAND...: starts COMMAND under callgrind with instrumentation off, warms
# it up with 5,000 GETs, counts GETS GETs at -P 1 (50 connections) with it on, stops the server
# and leaves the profile in $WORK/NAME.cg; prints the instructions counted.
cg_server() {
  local name=$1 gets=$2
  shift 2
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/$name.cg" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PID=$!
  PIDS+=("$PID")
  PORT=$CG_PORT
  for _ in $(seq 1 600); do
    [ -z "$CG_PORT" ] && PORT=$(head -1 "$WORK/$name.out" | sed -nE 's/^listening on ([0-9]+)$/\1/p')
    [ -n "$PORT" ] && [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] && break
    sleep 0.2
  done
  redis-benchmark -p "$PORT" -t get -c 50 -n 5000 -q >/dev/null 2>&1
  callgrind_control -i on "$PID" >/dev/null
  redis-benchmark -p "$PORT" -t get -c 50 -n "$gets" -q >/dev/null 2>&1
  callgrind_control -i off "$PID" >/dev/null
  kill -TERM "$PID" 2>/dev/null
  wait "$PID" 2>/dev/null || true
  [ -z "${CG_KEEP:-}" ] || cp "$WORK/$name.cg" "$CG_KEEP/$name.cg"
  awk '/^totals:/ { print $2; exit }' "$WORK/$name.cg"
}

run_instructions() {
  local gets=${1:-10000} total
  need_tool valgrind || { echo "redis.sh: valgrind is needed" >&2; exit 1; }
  # valgrind gives up on the DWARF of Swift binaries: a stripped copy.
  cp "$BIN/CovenantRESPExample" "$WORK/covenant-server" && strip -g "$WORK/covenant-server"
  CG_PORT=
  total=$(cg_server covenant "$gets" "$WORK/covenant-server" --port 0 --threads 1)
  python3 "$HERE/callgrind_groups.py" "$WORK/covenant.cg" "$gets" 30 >"$WORK/groups"
  CG_PORT=$(free_port)
  local redis
  redis=$(cg_server redis "$gets" redis-server --port "$CG_PORT" --bind 127.0.0.1 --save '' \
    --appendonly no --dir "$WORK")
  echo
  echo "callgrind instructions per GET: redis-benchmark -t get -P 1 -c 50, $gets GETs after" \
    "5,000; one event loop; whole process (the runtime's work charged to its callers)"
  echo
  echo "| server | per GET | swift-nio | CovenantNIO | CovenantCore | RESP code | unattributed |"
  echo "|---|---|---|---|---|---|---|"
  awk -F'\t' -v t="$total" -v n="$gets" '/^--/ { exit } { v[$1] = $2 }
    END { printf "| CovenantRESPExample | %.0f | %s | %s | %s | %s | %s |\n", t / n,
      v["swift-nio"], v["CovenantNIO"], v["CovenantCore"], v["RESP code"], v["unattributed"] }' \
    "$WORK/groups"
  awk -v t="$redis" -v n="$gets" 'BEGIN { printf "| redis-server | %.0f | | | | | |\n", t / n }'
  echo
  echo "The costliest functions of the example (instructions per GET, with the runtime work they cause):"
  sed '1,/^--/d' "$WORK/groups" | swift demangle --simplified |
    awk -F'\t' '{ printf "  %6s  %-12s %s\n", $1, $2, substr($3, 1, 110) }'
}

run_readline() {
  echo
  "$BIN/CovenantNIOReadLineBenchmark"
}

machine() {
  echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))," \
    "kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$(redis-server --version | cut -d' ' -f1-3)"
}

case $MODE in
  check) build; run_checks ;;
  bench) build; machine; run_bench "${2:-}" "${3:-}" ;;
  idle) build; machine; run_idle "${2:-}" ;;
  allocs) build; run_allocs ;;
  readline) build; run_readline ;;
  instructions) build; run_instructions "${2:-}" ;;
  all)
    build
    machine
    run_checks
    run_bench "${2:-}" "${3:-}"
    run_idle "${4:-}"
    run_allocs
    run_readline
    machine
    ;;
  *) echo "usage: bash redis.sh check|bench|idle|allocs|readline|all" >&2; exit 2 ;;
esac
