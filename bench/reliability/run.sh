#!/usr/bin/env bash
# Load and fault scenarios for coinfer-serve (docs/RELIABILITY.md, "Load and faults").
#
#   bench/reliability/run.sh [--quick] [scenario...]
#
# Scenarios (default: all, in this order):
#   overload     capacity (closed loop), then 2x capacity open loop: goodput, 503 + Retry-After
#                and how fast it comes, p99 of admitted requests vs the queue deadline, recovery
#   soak         70% of capacity for 10 min: server RSS and open fds flat, no error
#   connections  10k idle keep-alive connections held while normal load is served
#   slowloris    1,000 clients sending a header byte a second beside normal load
#   drain        SIGTERM under load, over HTTP and over WebSocket: nothing in flight lost
#   kill         kill -9 under load and restart on the same port: errors only around the kill
#
# The model is minilm (all-MiniLM-L6-v2, INT8) through POST /v1/embeddings with one short
# sentence (5-12 words) per request, or the same texts over OIP on ws://.../v2/ws.
# stdout: one JSON line per measurement; stderr: progress and a summary table.
# Exit status: 1 when a check fails (a lost request, a crash, a server that does not exit, ...);
# throughput and latency ratios are only reported ("gate":"report"), never fail the run.
#
# --quick: soak 20 s, overload 10 s, 2k idle connections, 200 slowloris clients (< 90 s in all).
# Environment:
#   COINFER_BUILD_DIR   where coinfer-serve and coinfer-loadgen are (default: build/)
#   RELIABILITY_SOAK_S  soak length in seconds (default 600, quick 20)
#   RELIABILITY_KEEP    a folder to copy the raw outputs (loadgen JSON, samples, logs) into
#   RELIABILITY_QUIET   a pgrep -f pattern: before each measurement wait until nothing matches
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

quick=0
scenarios=()
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    overload|soak|connections|slowloris|drain|kill) scenarios+=("$arg") ;;
    -h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
((${#scenarios[@]})) || scenarios=(overload soak connections slowloris drain kill)

BUILD=${COINFER_BUILD_DIR:-$root/build}
SERVE=$BUILD/coinfer-serve
LOADGEN=$BUILD/coinfer-loadgen
REL="python3 $here/rel.py"
REPORT="python3 $here/report.py"

if ((quick)); then
  CAP_S=3; OVERLOAD_S=10; RECOVERY_S=2; SOAK_S=${RELIABILITY_SOAK_S:-20}
  WARM_S=0.5; IDLE_N=2000; CONN_LOAD_S=3; SLOW_N=200; SLOW_LOAD_S=4; DRAIN_BEFORE_S=1; KILL_S=8; KILL_AT=1
else
  CAP_S=10; OVERLOAD_S=60; RECOVERY_S=10; SOAK_S=${RELIABILITY_SOAK_S:-600}
  WARM_S=1; IDLE_N=10000; CONN_LOAD_S=20; SLOW_N=1000; SLOW_LOAD_S=30; DRAIN_BEFORE_S=3; KILL_S=10; KILL_AT=3
fi
QUEUE_SIZE=64           # minilm max_queue_size in the overload config
DEADLINE_US=500000      # minilm default_timeout_us in the overload config (time in the queue)
DRAIN_TIMEOUT_MS=10000

work=$(mktemp -d /tmp/coinfer-reliability.XXXXXX)
export RELIABILITY_RESULTS=$work/results.jsonl
SERVER_PID=""
bg_pids=()
cleanup() {
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
  if [[ -n $SERVER_PID ]]; then kill -9 "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  if [[ -n ${RELIABILITY_KEEP:-} ]]; then mkdir -p "$RELIABILITY_KEEP" && cp -r "$work"/. "$RELIABILITY_KEEP"/; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '[reliability] %s\n' "$*" >&2; }
failed=0
note_status() { (( $1 == 0 )) || failed=1; }

wait_quiet() {
  [[ -n ${RELIABILITY_QUIET:-} ]] || return 0
  while pgrep -f "$RELIABILITY_QUIET" >/dev/null; do log "waiting: '$RELIABILITY_QUIET' is running"; sleep 10; done
}

wait_binary() {  # a binary may be relinked under us: give it a moment to come back
  local b
  for b in "$SERVE" "$LOADGEN"; do
    for _ in $(seq 60); do [[ -x $b ]] && break; sleep 0.5; done
    [[ -x $b ]] || { log "missing $b (set COINFER_BUILD_DIR)"; exit 1; }
  done
}

# Config copies: configs/default.toml with paths made absolute and some keys changed.
make_config() {  # OUT, then section.key=value ...
  local out=$1; shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  $REL config configs/default.toml "$out" --set log.level='"warn"' "${sets[@]}"
}

start_server() {  # CONFIG [PORT]: sets SERVER_PID, PORT, URL
  local config=$1 port=${2:-0} n
  wait_binary
  n=$((++server_count))
  : > "$work/listen.$n"
  "$SERVE" --config "$config" --port "$port" --grpc-port 0 > "$work/listen.$n" 2> "$work/server.$n.log" &
  SERVER_PID=$!
  for _ in $(seq 600); do
    grep -q '^listening on ' "$work/listen.$n" && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  URL=$(sed -n '1s/^listening on //p' "$work/listen.$n")
  if [[ -z $URL ]]; then
    log "server did not start:"; tail -5 "$work/server.$n.log" >&2; SERVER_PID=""; return 1
  fi
  PORT=${URL##*:}
}
server_count=0

stop_server() {  # SIGTERM, wait; returns the exit status
  local rc=0
  [[ -n $SERVER_PID ]] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID"; rc=$?
  SERVER_PID=""
  return $rc
}

loadgen() {  # OUT_JSON, loadgen options...
  local out=$1; shift
  wait_binary
  "$LOADGEN" --url "$URL/v1/embeddings" --body-lines "$work/bodies.txt" --json "$@" > "$out" \
    2> "$out.err" || { log "loadgen failed: $(tail -2 "$out.err")"; echo '{}' > "$out"; }
}

CAPACITY=""
measure_capacity() {  # closed loop, 64 clients (one full batch): sentences/s
  [[ -z $CAPACITY ]] || return 0
  wait_quiet
  log "capacity: closed loop, 64 clients, ${CAP_S} s"
  loadgen "$work/capacity.json" --mode closed --concurrency 64 --duration-s "$CAP_S" --warmup-s 1
  CAPACITY=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d.get("ok",0)/d.get("duration_s",1),1))' "$work/capacity.json")
  $REPORT capacity "$work"
  if [[ $(python3 -c "print(int(float('$CAPACITY') > 0))") != 1 ]]; then log "capacity is 0: giving up"; exit 1; fi
}
rate() { python3 -c "print(round(float('$CAPACITY') * $1, 1))"; }

# ----------------------------------------------------------------------------- scenarios

scenario_overload() {
  local d=$work/overload; mkdir -p "$d"
  make_config "$d/config.toml" "models.minilm.max_queue_size=$QUEUE_SIZE" \
    "models.minilm.default_timeout_us=$DEADLINE_US"
  start_server "$d/config.toml" || { failed=1; return; }
  measure_capacity
  local half double; half=$(rate 0.5); double=$(rate 2)
  wait_quiet
  log "overload: baseline at 0.5x ($half/s) ${RECOVERY_S} s"
  loadgen "$d/baseline.json" --mode open --rate "$half" --connections 64 --duration-s "$RECOVERY_S" --warmup-s "$WARM_S"
  log "overload: 2x capacity ($double/s) for ${OVERLOAD_S} s, with a 503 latency probe"
  # The probe starts once the queue is full and ends before the run does.
  ( sleep 2; $REL probe "$URL/v1/embeddings" "$work/bodies.txt" --duration "$(python3 -c "print($OVERLOAD_S - 1.5)")" \
      > "$d/probe.json" 2> "$d/probe.err" ) &
  local probe_pid=$!; bg_pids+=("$probe_pid")
  loadgen "$d/overload.json" --mode open --rate "$double" --connections 512 --duration-s "$OVERLOAD_S" --warmup-s 1
  wait "$probe_pid"
  log "overload: load drops to 0.5x at once (no warm-up), ${RECOVERY_S} s"
  loadgen "$d/recovery.json" --mode open --rate "$half" --connections 64 --duration-s "$RECOVERY_S" --warmup-s 0
  stop_server; echo "$?" > "$d/exit_code"
  $REPORT overload "$d" --capacity "$CAPACITY" --deadline-us "$DEADLINE_US" --queue "$QUEUE_SIZE"
  note_status $?
}

scenario_soak() {
  local d=$work/soak; mkdir -p "$d"
  make_config "$d/config.toml"
  start_server "$d/config.toml" || { failed=1; return; }
  measure_capacity
  local r interval; r=$(rate 0.7); interval=$(python3 -c "print(max(1.0, $SOAK_S / 120))")
  wait_quiet
  log "soak: 0.7x capacity ($r/s) for ${SOAK_S} s, sampling RSS and fds every ${interval} s"
  touch "$d/stop0"; $REL sample "$SERVER_PID" "$d/stop0" --port "$PORT" > "$d/before.json"
  $REL sample "$SERVER_PID" "$d/stop" --port "$PORT" --interval "$interval" > "$d/samples.json" &
  local sampler=$!; bg_pids+=("$sampler")
  loadgen "$d/soak.json" --mode open --rate "$r" --connections 64 --duration-s "$SOAK_S" --warmup-s 2
  touch "$d/stop"; wait "$sampler"
  sleep 1  # the load generator's connections are closed; the server's fds should be back
  $REL sample "$SERVER_PID" "$d/stop0" --port "$PORT" > "$d/after.json"
  stop_server; echo "$?" > "$d/exit_code"
  $REPORT soak "$d" --capacity "$CAPACITY"
  note_status $?
}

conn_config() {  # OUT
  make_config "$1" "server.max_connections=$((IDLE_N + 2000))" "server.idle_timeout_ms=600000"
}

raise_fd_limit() {  # NEEDED
  local hard; hard=$(ulimit -Hn)
  [[ $hard == unlimited ]] && hard=1048576
  ulimit -n "$hard" 2>/dev/null
  if (( $(ulimit -n) < $1 )); then log "fd limit $(ulimit -n) < $1 needed"; return 1; fi
}

cpu_mark() {  # FILE PID...: appends "wall_time cpu_ticks_of_each_pid" (utime + stime)
  local out=$1 line p; shift
  line=$(date +%s.%N)
  for p in "$@"; do line+=" $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)"; done
  echo "$line" >> "$out"
}

# Normal load beside the extra clients: open loop at half the capacity.
normal_load() { loadgen "$1" --mode open --rate "$(rate 0.5)" --connections 64 --duration-s "$2" --warmup-s "$WARM_S"; }

scenario_connections() {
  local d=$work/connections; mkdir -p "$d"
  raise_fd_limit $((IDLE_N + 1000)) || { failed=1; return; }
  conn_config "$d/config.toml"
  start_server "$d/config.toml" || { failed=1; return; }
  measure_capacity
  wait_quiet
  log "connections: normal load alone (0.5x) ${CONN_LOAD_S} s"
  cpu_mark "$d/cpu_baseline" "$SERVER_PID"
  normal_load "$d/baseline.json" "$CONN_LOAD_S"
  cpu_mark "$d/cpu_baseline" "$SERVER_PID"
  $REL sample "$SERVER_PID" "$d/before_stop" --interval 0.2 > "$d/before.json" & sleep 0.5; touch "$d/before_stop"; wait $!
  log "connections: opening $IDLE_N idle keep-alive connections"
  $REL idle "$URL" "$IDLE_N" "$d/ready" "$d/stop" > "$d/idle.json" 2> "$d/idle.err" &
  local idle_pid=$!; bg_pids+=("$idle_pid")
  for _ in $(seq 1200); do [[ -s $d/ready ]] && break; kill -0 "$idle_pid" 2>/dev/null || break; sleep 0.1; done
  log "connections: $(cat "$d/ready" 2>/dev/null || echo 0) held; normal load beside them ${CONN_LOAD_S} s"
  $REL sample "$SERVER_PID" "$d/with_stop" --interval 1 > "$d/with.json" &
  local sampler=$!; bg_pids+=("$sampler")
  cpu_mark "$d/cpu_with" "$SERVER_PID" "$idle_pid"
  normal_load "$d/with_idle.json" "$CONN_LOAD_S"
  cpu_mark "$d/cpu_with" "$SERVER_PID" "$idle_pid"
  touch "$d/with_stop" "$d/stop"; wait "$sampler"; wait "$idle_pid"
  stop_server; echo "$?" > "$d/exit_code"
  $REPORT connections "$d" --idle "$IDLE_N"
  note_status $?
}

scenario_slowloris() {
  local d=$work/slowloris; mkdir -p "$d"
  raise_fd_limit $((SLOW_N + 1000)) || { failed=1; return; }
  conn_config "$d/config.toml"
  start_server "$d/config.toml" || { failed=1; return; }
  measure_capacity
  wait_quiet
  log "slowloris: normal load alone (0.5x) ${SLOW_LOAD_S} s"
  cpu_mark "$d/cpu_baseline" "$SERVER_PID"
  normal_load "$d/baseline.json" "$SLOW_LOAD_S"
  cpu_mark "$d/cpu_baseline" "$SERVER_PID"
  log "slowloris: $SLOW_N clients, a header byte a second each"
  $REL slowloris "$URL" "$SLOW_N" "$d/ready" "$d/stop" --ramp-s "$( ((quick)) && echo 1 || echo 3)" \
    > "$d/slowloris.json" 2> "$d/slowloris.err" &
  local slow_pid=$!; bg_pids+=("$slow_pid")
  for _ in $(seq 600); do [[ -s $d/ready ]] && break; kill -0 "$slow_pid" 2>/dev/null || break; sleep 0.1; done
  log "slowloris: normal load beside them ${SLOW_LOAD_S} s"
  cpu_mark "$d/cpu_with" "$SERVER_PID" "$slow_pid"
  normal_load "$d/with_slowloris.json" "$SLOW_LOAD_S"
  cpu_mark "$d/cpu_with" "$SERVER_PID" "$slow_pid"
  touch "$d/stop"; wait "$slow_pid"
  stop_server; echo "$?" > "$d/exit_code"
  $REPORT slowloris "$d" --clients "$SLOW_N"
  note_status $?
}

scenario_drain() {
  local d=$work/drain; mkdir -p "$d"
  make_config "$d/config.toml" "server.drain_timeout_ms=$DRAIN_TIMEOUT_MS"
  # HTTP: 64 keep-alive clients in a closed loop (a batch queued, a batch computing)
  start_server "$d/config.toml" || { failed=1; return; }
  wait_quiet
  log "drain: HTTP, 64 clients, SIGTERM after ${DRAIN_BEFORE_S} s"
  $REL drain "$URL/v1/embeddings" "$work/bodies.txt" "$SERVER_PID" --concurrency 64 \
    --before-s "$DRAIN_BEFORE_S" --max-after-s $((DRAIN_TIMEOUT_MS / 1000 + 5)) > "$d/http.json" 2> "$d/http.err"
  wait "$SERVER_PID"; echo "$?" > "$d/http_exit_code"; SERVER_PID=""
  # WebSocket: 4 connections, 32 requests in flight on each
  start_server "$d/config.toml" || { failed=1; return; }
  wait_quiet
  log "drain: WebSocket, 4 connections x 32 in flight, SIGTERM after ${DRAIN_BEFORE_S} s"
  $REL ws-drain "ws://127.0.0.1:$PORT/v2/ws" "$work/oip_bodies.txt" "$SERVER_PID" --model minilm \
    --connections 4 --in-flight 32 --before-s "$DRAIN_BEFORE_S" \
    --max-after-s $((DRAIN_TIMEOUT_MS / 1000 + 5)) > "$d/ws.json" 2> "$d/ws.err"
  wait "$SERVER_PID"; echo "$?" > "$d/ws_exit_code"; SERVER_PID=""
  $REPORT drain "$d" --drain-timeout-ms "$DRAIN_TIMEOUT_MS"
  note_status $?
}

scenario_kill() {
  local d=$work/kill; mkdir -p "$d"
  make_config "$d/config.toml"
  start_server "$d/config.toml" || { failed=1; return; }
  wait_quiet
  log "kill: 32 clients for ${KILL_S} s, kill -9 at ${KILL_AT} s, restart on port $PORT"
  $REL kill-load "$URL/v1/embeddings" "$work/bodies.txt" "$d/marks" --concurrency 32 \
    --duration "$KILL_S" > "$d/load.json" 2> "$d/load.err" &
  local load_pid=$!; bg_pids+=("$load_pid")
  sleep "$KILL_AT"
  printf '{"kill": %s}\n' "$(date +%s.%N)" >> "$d/marks"
  kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; echo "$?" > "$d/killed_status"; SERVER_PID=""
  # The readiness probe polls from before the restart, so that its own start-up is not timed.
  $REL wait-ready "http://127.0.0.1:$PORT" --timeout 60 > "$d/ready.json" &
  local ready_pid=$!; bg_pids+=("$ready_pid")
  printf '{"exec": %s}\n' "$(date +%s.%N)" >> "$d/marks"
  start_server "$d/config.toml" "$PORT" || { failed=1; wait "$load_pid"; return; }
  wait "$ready_pid" || log "kill: server not ready after restart"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"ready": d["ready_at"]}))' "$d/ready.json" >> "$d/marks"
  wait "$load_pid"
  stop_server; echo "$?" > "$d/exit_code"
  $REPORT kill "$d"
  note_status $?
}

# ----------------------------------------------------------------------------- main

log "$( ((quick)) && echo quick || echo full) run: ${scenarios[*]}; binaries in $BUILD"
wait_binary
python3 bench/embedding_sentences.py 4000 "$work/sentences.txt" > /dev/null
$REL bodies "$work/sentences.txt" "$work/bodies.txt" "$work/oip_bodies.txt" --min-words 5 --max-words 12 > /dev/null

t0=$SECONDS
for s in "${scenarios[@]}"; do
  log "== $s"
  "scenario_$s"
done
log "done in $((SECONDS - t0)) s"
$REPORT summary "$work" >&2
exit $failed
