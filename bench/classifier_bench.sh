#!/usr/bin/env bash
# Classifier benchmark: the digits MLP (assets/digits_mlp) over OIP v2 infer, in one run:
#   coinfer_on     coinfer-serve, dynamic batching on, the default policy (max_batch_size 64,
#                  max_queue_delay_us 0: a batch forms as soon as the executor is free)
#   coinfer_delay  the same with the former default, max_queue_delay_us 2000 (a partial batch
#                  waits for company)
#   coinfer_off    coinfer-serve, batching off         (max_batch_size 1)
#   torch        bench/torch_peer.py: FastAPI + uvicorn + PyTorch (CPU), Debian's packages
# at wrk concurrency 1, 4, 16, 64, 256: throughput, p50 and p99 latency, and for coinfer the mean
# executed batch size (coinfer_inference_count_total / coinfer_inference_exec_count_total from /metrics,
# as the difference over the measured run).
#
# Cores: every server runs pinned to core 0 (taskset -c 0) and wrk to core 1. coinfer-serve
# runs one I/O thread and one compute thread: both share core 0, which is the fair comparison
# with one uvicorn worker (torch.set_num_threads(1)) on core 0. The servers are all started
# first (an idle server costs nothing) and measured one at a time, interleaved per
# concurrency level (on, off, torch, on, off, torch, ...), so that noise from this shared
# machine falls on all three alike; with BENCH_ROUNDS > 1 the medians over rounds are reported.
# Before each measurement the script waits (up to BENCH_QUIET_WAIT seconds in all) until no
# compiler (cc1plus) is running and the machine is otherwise idle (≤ 25 % of one core busy
# over 1 s: other engineers' tests and benchmarks share it). During each point it measures the
# CPU that other processes took on the server's and wrk's cores (each core's busy time from
# /proc/stat minus the server's / wrk's own CPU time) and flags the point "noisy" when a
# compiler ran or that exceeded 15 % of either core; a noisy point is measured again (after
# waiting for quiet) up to BENCH_RETRIES times, and the JSON says whether the kept one is clean. coinfer runs from a copy of the binary in
# the temp dir, so that a concurrent rebuild of build/ cannot swap it mid-run.
#
# Request: one held-out digit (row BENCH_BODY_ROW of assets/digits_mlp/test_split.safetensors,
# tensor "x") as {"inputs":[{"name":"INPUT0","shape":[1,64],"datatype":"FP32","data":[...]}]},
# POST /v2/models/digits/infer, via bench/digits_infer.lua. Correctness before measuring: every
# server answers each of the 360 held-out digits (one request each); the script fails unless
# coinfer's labels (every config) equal the PyTorch peer's on every digit but near-ties (torch's
# two likeliest labels within 0.1 probability, at most 1% of the digits), where INT8 may flip.
#
# Output (stdout): one JSON line per (server, concurrency), a summary JSON line with the ratios
# (batching on/off, coinfer/torch per concurrency; target: on/off >= 10x at concurrency 64),
# then markdown tables. Progress goes to stderr; server logs to the temp dir.
#
# Environment:
#   COINFER_SERVE        coinfer-serve binary                  (default build/coinfer-serve)
#   COINFER_SERVE_PREVIOUS  another coinfer-serve (e.g. the previous main's), measured as
#                        coinfer_previous with coinfer_on's config in the same rounds (default: none)
#   COINFER_PREVIOUS_QUEUE_DELAY_US  coinfer_previous's max_queue_delay_us (default 0; 2000 gives
#                        a main from before the no-delay policy its own default)
#   BENCH_DURATION       seconds measured per point            (default 6)
#   BENCH_WARMUP         seconds of unreported warm-up per point (default 1)
#   BENCH_ROUNDS         interleaved rounds; medians reported  (default 1)
#   BENCH_CONCURRENCY    wrk connection counts                 (default "1 4 16 64 256")
#   BENCH_MAX_BATCH      max_batch_size with batching on       (default 64)
#   BENCH_QUEUE_DELAY_US coinfer_delay's max_queue_delay_us     (default 2000)
#   BENCH_SERVER_CPU     core for the servers                  (default 0)
#   BENCH_CLIENT_CPU     core for wrk                          (default 1)
#   BENCH_QUIET_WAIT     max seconds to wait for a quiet machine, in all (default 900)
#   BENCH_RETRIES        times a noisy point is measured again (default 2)
#   BENCH_BODY_ROW       held-out row used as the request      (default 0)
#   PYTHON               interpreter with torch, fastapi, uvicorn, numpy (default /usr/bin/python3:
#                        Debian's python3-torch / python3-fastapi / python3-uvicorn)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

COINFER_SERVE=${COINFER_SERVE:-build/coinfer-serve}
DURATION=${BENCH_DURATION:-6}
WARMUP=${BENCH_WARMUP:-1}
ROUNDS=${BENCH_ROUNDS:-1}
read -r -a CONCURRENCY <<<"${BENCH_CONCURRENCY:-1 4 16 64 256}"
MAX_BATCH=${BENCH_MAX_BATCH:-64}
QUEUE_DELAY_US=${BENCH_QUEUE_DELAY_US:-2000}
PREVIOUS_DELAY_US=${COINFER_PREVIOUS_QUEUE_DELAY_US:-0}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
QUIET_WAIT=${BENCH_QUIET_WAIT:-900}
RETRIES=${BENCH_RETRIES:-2}
BODY_ROW=${BENCH_BODY_ROW:-0}
PYTHON=${PYTHON:-/usr/bin/python3}
WEIGHTS=assets/digits_mlp/model.safetensors
SPLIT=assets/digits_mlp/test_split.safetensors
export BENCH_INFER_PATH=/v2/models/digits/infer
SERVERS=(coinfer_on coinfer_delay coinfer_off torch)
[[ -n ${COINFER_SERVE_PREVIOUS:-} ]] && SERVERS+=(coinfer_previous)

log() { printf '[classifier_bench] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for tool in wrk curl taskset "$PYTHON"; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found"
done
"$PYTHON" -c 'import torch, fastapi, uvicorn, numpy' 2>/dev/null \
  || die "$PYTHON cannot import torch, fastapi, uvicorn and numpy (Debian: apt-get install python3-torch python3-fastapi python3-uvicorn; the pyenv python3 has no torch)"
[[ -x $COINFER_SERVE ]] || die "'$COINFER_SERVE' not found or not executable (build it or set COINFER_SERVE)"
[[ -f $WEIGHTS && -f $SPLIT ]] || die "$WEIGHTS or $SPLIT missing"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/coinfer-classifier-bench.XXXXXX")
SERVER_PID=""          # the server being started
declare -A PIDS=()     # name -> pid, for every server started
declare -A URLS=()     # name -> base URL
declare -A INFO=()     # name -> description for the results

stop_pid() {
  local pid=$1
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
stop_all() {
  local name
  for name in "${!PIDS[@]}"; do
    stop_pid "${PIDS[$name]}"
    unset "PIDS[$name]"
  done
  if [[ -n $SERVER_PID ]]; then
    stop_pid "$SERVER_PID"
    SERVER_PID=""
  fi
}
cleanup() {
  local rc=$?
  stop_all
  if [[ $rc != 0 ]]; then
    log "failed (exit $rc); server logs kept in $TMP"
  else
    rm -rf "$TMP"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_http URL [tries]: poll until URL answers 2xx (0.1 s apart), or fail.
wait_http() {
  local url=$1 tries=${2:-100}
  for _ in $(seq "$tries"); do
    kill -0 "$SERVER_PID" 2>/dev/null || return 1
    curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# cpu_busy CORE: user + nice + system jiffies of that core so far (/proc/stat).
cpu_busy() {
  awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 }' /proc/stat
}
# proc_jiffies PID: utime + stime of a process, all threads (/proc/PID/stat).
proc_jiffies() {
  sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
# machine_busy_pct: CPU use of the whole machine over one second, in % of one core.
machine_busy_pct() {
  local a b
  a=$(awk '$1 == "cpu" { print $2 + $3 + $4 }' /proc/stat)
  sleep 1
  b=$(awk '$1 == "cpu" { print $2 + $3 + $4 }' /proc/stat)
  echo $(((b - a) * 100 / $(getconf CLK_TCK)))
}

# wait_quiet: wait until no compiler runs and the machine is otherwise idle (other engineers'
# builds, tests and benchmarks share it), within the run's total budget of QUIET_WAIT seconds.
QUIET_LEFT=$QUIET_WAIT
QUIET_MAX_BUSY=25   # % of one core that the idle machine may use
wait_quiet() {
  local announced=0 busy
  while :; do
    busy=$(machine_busy_pct)
    if ! pgrep -x cc1plus >/dev/null 2>&1 && ((busy <= QUIET_MAX_BUSY)); then
      return 0
    fi
    if ((QUIET_LEFT <= 0)); then
      log "WARNING: the machine is still busy (${busy}% of a core; compilers: $(pgrep -xc cc1plus || true)) after waiting ${QUIET_WAIT}s in all; measuring anyway"
      return 0
    fi
    ((announced)) || log "waiting for a quiet CPU (${busy}% of a core busy, compilers: $(pgrep -xc cc1plus || true); ${QUIET_LEFT}s of waiting left)..."
    announced=1
    sleep 4
    QUIET_LEFT=$((QUIET_LEFT - 5))
  done
}

# --- request body: one held-out digit ---------------------------------------------------------
BODY_FILE=$TMP/body.json
"$PYTHON" - "$SPLIT" "$BODY_ROW" "$BODY_FILE" <<'EOF'
import json, struct, sys
import numpy as np
path, row, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
raw = open(path, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
hdr = json.loads(raw[8:8 + n])
b, e = hdr["x"]["data_offsets"]
x = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=np.float32).reshape(hdr["x"]["shape"])
body = {"inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32",
                    "data": [float(v) for v in x[row]]}]}
open(out, "w").write(json.dumps(body, separators=(",", ":")))
EOF
export BENCH_BODY_FILE=$BODY_FILE

# --- start the servers --------------------------------------------------------------------
# Run a snapshot of the binary: others rebuild build/ concurrently on this machine, and a
# rebuild (or a `pkill coinfer-serve` meant for their own servers) must not change or stop
# ours mid-run.
mkdir -p "$TMP/bin"
cp "$COINFER_SERVE" "$TMP/bin/coinfer-serve-bench"
SERVE_BIN=$TMP/bin/coinfer-serve-bench
COINFER_REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || COINFER_REV+="+dirty"

# start_coinfer NAME MAX_BATCH QUEUE_DELAY_US [BINARY REVISION]
start_coinfer() {
  local name=$1 max_batch=$2 delay=$3 conf=$TMP/$1.toml port="" bin=${4:-$SERVE_BIN} rev=${5:-$COINFER_REV}
  cat >"$conf" <<EOF
[server]
port = 0
[compute]
threads = 1
[models.digits]
kind = "mlp"
weights = "$PWD/$WEIGHTS"
max_batch_size = $max_batch
max_queue_delay_us = $delay
EOF
  taskset -c "$SERVER_CPU" "$bin" --config "$conf" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    port=$(sed -n 's#^listening on http://[^ ]*:\([0-9][0-9]*\)/\{0,1\}$#\1#p' "$TMP/$name.out" | head -1)
    [[ -n $port ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n $port ]] || die "$name: no 'listening on http://HOST:PORT' line; stderr: $(tail -5 "$TMP/$name.err")"
  wait_http "http://127.0.0.1:$port/v2/health/ready" || die "$name: not ready on port $port"
  log "$name: listening on port $port (max_batch_size $max_batch)"
  PIDS[$name]=$SERVER_PID URLS[$name]="http://127.0.0.1:$port" SERVER_PID=""
  INFO[$name]="coinfer-serve git $rev, 1 I/O + 1 compute thread sharing core $SERVER_CPU, max_batch_size $max_batch, max_queue_delay_us $delay"
}
start_coinfer coinfer_on "$MAX_BATCH" 0
start_coinfer coinfer_delay "$MAX_BATCH" "$QUEUE_DELAY_US"
start_coinfer coinfer_off 1 0
if [[ -n ${COINFER_SERVE_PREVIOUS:-} ]]; then
  [[ -x $COINFER_SERVE_PREVIOUS ]] || die "COINFER_SERVE_PREVIOUS '$COINFER_SERVE_PREVIOUS' is not executable"
  cp "$COINFER_SERVE_PREVIOUS" "$TMP/bin/coinfer-serve-previous"
  PREVIOUS_REV=$(git -C "$(dirname "$(realpath "$COINFER_SERVE_PREVIOUS")")" rev-parse --short HEAD 2>/dev/null \
    || echo unknown)
  start_coinfer coinfer_previous "$MAX_BATCH" "$PREVIOUS_DELAY_US" "$TMP/bin/coinfer-serve-previous" "$PREVIOUS_REV"
fi

UVICORN_LOOP=asyncio UVICORN_HTTP=h11
"$PYTHON" -c 'import uvloop' 2>/dev/null && UVICORN_LOOP=uvloop
"$PYTHON" -c 'import httptools' 2>/dev/null && UVICORN_HTTP=httptools
PY_VERSIONS=$("$PYTHON" -c 'import sys, torch, fastapi, uvicorn; print(f"Python {sys.version.split()[0]} ({sys.executable}), torch {torch.__version__}, FastAPI {fastapi.__version__}, uvicorn {uvicorn.__version__}")')
TORCH_PKG=$(dpkg-query -W -f='${Package} ${Version}' python3-torch 2>/dev/null || echo "python3-torch: not a Debian package here")
port=$(free_port)
OMP_NUM_THREADS=1 taskset -c "$SERVER_CPU" "$PYTHON" -m uvicorn bench.torch_peer:app --host 127.0.0.1 \
  --port "$port" --workers 1 --loop "$UVICORN_LOOP" --http "$UVICORN_HTTP" --log-level warning \
  --no-access-log >"$TMP/torch.out" 2>"$TMP/torch.err" &
SERVER_PID=$!
wait_http "http://127.0.0.1:$port/v2/health/ready" 300 \
  || die "torch: not ready on port $port; stderr: $(tail -5 "$TMP/torch.err")"
log "torch: listening on port $port ($PY_VERSIONS; loop $UVICORN_LOOP, http $UVICORN_HTTP)"
PIDS[torch]=$SERVER_PID URLS[torch]="http://127.0.0.1:$port" SERVER_PID=""
INFO[torch]="$PY_VERSIONS [Debian: $TORCH_PKG], 1 uvicorn worker on core $SERVER_CPU, loop=$UVICORN_LOOP, http=$UVICORN_HTTP, torch threads 1, FP32"

# --- correctness: all held-out digits, one request each, on every server -------------------
"$PYTHON" - "$SPLIT" "$BODY_FILE" "${URLS[coinfer_on]}" "${URLS[coinfer_delay]}" "${URLS[coinfer_off]}" "${URLS[torch]}" ${URLS[coinfer_previous]:+"${URLS[coinfer_previous]}"} <<'EOF' \
  || die "correctness check failed"
import http.client, json, struct, sys, urllib.parse
import numpy as np
split, body_file, *urls = sys.argv[1:]
names = ["coinfer_on", "coinfer_delay", "coinfer_off", "torch", "coinfer_previous"][:len(urls)]
raw = open(split, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
hdr = json.loads(raw[8:8 + n])
def tensor(name, dt):
    b, e = hdr[name]["data_offsets"]
    return np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dt).reshape(hdr[name]["shape"])
x, y = tensor("x", np.float32), tensor("y", np.int64)

def post(conn, body):
    conn.request("POST", "/v2/models/digits/infer", body, {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    assert r.status == 200, f"HTTP {r.status}: {data[:300]!r}"
    resp = json.loads(data)
    assert resp["model_name"] == "digits", resp.get("model_name")
    outs = {o["name"]: o for o in resp["outputs"]}
    p, l = outs["probabilities"], outs["label"]
    assert p["datatype"] == "FP32" and p["shape"] == [1, 10] and len(p["data"]) == 10, p
    assert l["datatype"] == "INT64" and l["shape"] == [1] and len(l["data"]) == 1, l
    return np.array(p["data"], dtype=np.float64), int(l["data"][0])

labels, probs = {}, {}
for name, url in zip(names, urls):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    post(conn, open(body_file, "rb").read())   # the exact bytes wrk sends
    ls, ps = [], []
    for row in x:
        body = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32",
                                       "data": [float(v) for v in row]}]})
        p, l = post(conn, body)
        ps.append(p); ls.append(l)
    conn.close()
    labels[name], probs[name] = np.array(ls), np.array(ps)
    print(f"[classifier_bench] {name}: held-out accuracy {(labels[name] == y).sum()}/{len(y)}",
          file=sys.stderr)
for name in [n for n in names if n != "torch"]:
    same = int((labels[name] == labels["torch"]).sum())
    diff = float(np.abs(probs[name] - probs["torch"]).max())
    print(f"[classifier_bench] {name} vs torch: labels equal on {same}/{len(y)}, "
          f"max |Δprobability| {diff:.2e} (INT8 vs FP32)", file=sys.stderr)
    # INT8 may flip only a near-tie: every disagreement on a digit where torch's two most
    # likely labels are within 0.1 probability, and at most 1% of the digits.
    top2 = np.sort(probs["torch"], axis=1)[:, -2:]
    margin = top2[:, 1] - top2[:, 0]
    flips = np.nonzero(labels[name] != labels["torch"])[0]
    for i in flips:
        print(f"[classifier_bench] {name}: digit {i}: label {labels[name][i]} vs torch's "
              f"{labels['torch'][i]} (torch's top-2 margin {margin[i]:.3f})", file=sys.stderr)
    assert len(flips) <= len(y) // 100 and all(margin[i] < 0.1 for i in flips), \
        f"{name}: labels differ from torch's on {len(flips)} digits, not all near-ties"
assert (labels["coinfer_on"] == labels["coinfer_off"]).all()
assert (labels["coinfer_delay"] == labels["coinfer_off"]).all()
EOF

# --- measure -------------------------------------------------------------------------------
# metric NAME COUNTER: the digits model's counter value from coinfer's /metrics.
metric() {
  curl -fsS --max-time 5 "${URLS[$1]}/metrics" \
    | sed -n "s/^$2{model=\"digits\"[^}]*} \([0-9.e+]*\)$/\1/p" | head -1
}

RESULTS=$TMP/results.jsonl
: >"$RESULTS"
# run_wrk NAME CONCURRENCY ROUND: measure one point; a noisy point is measured again (after
# waiting for quiet) up to BENCH_RETRIES times, and the last attempt is kept.
run_wrk() {
  local attempt
  for attempt in $(seq 0 "$RETRIES"); do
    measure_point "$@"
    if [[ $POINT_NOISY == false || $attempt == "$RETRIES" ]]; then
      cat "$TMP/point.json" >>"$RESULTS"
      return 0
    fi
    log "$1 c=$2: noisy; measuring again ($((attempt + 1))/$RETRIES)"
  done
}
# measure_point NAME CONCURRENCY ROUND: warm up, measure, write one JSON line to
# $TMP/point.json and set POINT_NOISY.
POINT_NOISY=false
measure_point() {
  local name=$1 conns=$2 round=$3
  local url=${URLS[$name]} out=$TMP/$name.c$2.r$3.wrk.txt
  wait_quiet
  kill -0 "${PIDS[$name]}" 2>/dev/null \
    || die "$name: server is gone before c=$conns; its stderr ends: $(tail -3 "$TMP/$name.err" 2>/dev/null)"
  if [[ $WARMUP != 0 ]]; then
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$conns" -d"${WARMUP}s" --timeout 10s \
      -s bench/digits_infer.lua "$url$BENCH_INFER_PATH" >/dev/null || die "$name: wrk warm-up failed"
  fi
  local count0="" exec0="" count1="" exec1=""
  if [[ $name == coinfer_* ]]; then
    count0=$(metric "$name" coinfer_inference_count_total) exec0=$(metric "$name" coinfer_inference_exec_count_total)
  fi
  log "$name: round $round/$ROUNDS: concurrency $conns, measuring ${DURATION}s"
  local noisy=false cc=false
  pgrep -x cc1plus >/dev/null 2>&1 && cc=true
  # Foreign CPU use during the run: each core's busy time minus what the server (on
  # SERVER_CPU) or wrk (on CLIENT_CPU) used; anything else there is interference.
  local s0 c0 p0 s1 c1 p1 t0 t1
  s0=$(cpu_busy "$SERVER_CPU") c0=$(cpu_busy "$CLIENT_CPU") p0=$(proc_jiffies "${PIDS[$name]}")
  t0=$(date +%s%N)
  /usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" wrk -t1 -c"$conns" \
    -d"${DURATION}s" --timeout 10s --latency -s bench/digits_infer.lua "$url$BENCH_INFER_PATH" \
    >"$out" || die "$name: wrk failed: $(tail -3 "$out")"
  t1=$(date +%s%N)
  s1=$(cpu_busy "$SERVER_CPU") c1=$(cpu_busy "$CLIENT_CPU") p1=$(proc_jiffies "${PIDS[$name]}" 2>/dev/null || echo "$p0")
  pgrep -x cc1plus >/dev/null 2>&1 && cc=true
  local foreign
  foreign=$(awk -v hz="$(getconf CLK_TCK)" -v ns=$((t1 - t0)) -v ds=$((s1 - s0)) -v dc=$((c1 - c0)) \
    -v dp=$((p1 - p0)) -v wrk="$(tail -1 "$out.time")" 'BEGIN {
      split(wrk, w, " "); secs = ns / 1e9;
      fs = (ds - dp) / hz / secs * 100; fc = (dc - (w[1] + w[2]) * hz) / hz / secs * 100;
      printf "%.0f %.0f", fs < 0 ? 0 : fs, fc < 0 ? 0 : fc }')
  local foreign_server=${foreign% *} foreign_client=${foreign#* }
  if [[ $cc == true ]] || ((foreign_server > 15 || foreign_client > 15)); then noisy=true; fi
  POINT_NOISY=$noisy
  [[ $noisy == false ]] || log "WARNING: $name c=$conns: interference (compiler running: $cc; foreign CPU on core $SERVER_CPU: ${foreign_server}%, on core $CLIENT_CPU: ${foreign_client}%)"
  kill -0 "${PIDS[$name]}" 2>/dev/null \
    || die "$name: server died during the run; its stderr ends: $(tail -3 "$TMP/$name.err" 2>/dev/null)"
  if [[ $name == coinfer_* ]]; then
    count1=$(metric "$name" coinfer_inference_count_total) exec1=$(metric "$name" coinfer_inference_exec_count_total)
  fi
  "$PYTHON" - "$out" "$name" "$DURATION" "$conns" "${INFO[$name]}" "$noisy" "$round" \
    "$count0" "$exec0" "$count1" "$exec1" "$cc" "$foreign_server" "$foreign_client" <<'EOF' >"$TMP/point.json"
import json, os, re, sys
path, name, dur, conns, info, noisy, rnd, c0, e0, c1, e1, cc, fs, fc = sys.argv[1:15]
text = open(path).read()
def lat_ms(s):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", s)
    return round(float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[m.group(2)], 3)
rps = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
pct = {p: lat_ms(v) for p, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", text, re.M)}
total = int(re.search(r"(\d+) requests in", text).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
mean_batch = None
if c0 and c1 and e0 and e1 and float(e1) > float(e0):
    mean_batch = round((float(c1) - float(c0)) / (float(e1) - float(e0)), 2)
print(json.dumps({
    "bench": "classifier_oip_infer", "server": name, "server_info": info,
    "concurrency": int(conns), "req_per_s": rps, "p50_ms": pct.get("50"), "p99_ms": pct.get("99"),
    "mean_batch": mean_batch, "requests": total, "non_2xx": int(non2xx.group(1)) if non2xx else 0,
    "socket_errors": dict(zip(["connect", "read", "write", "timeout"], map(int, sock.groups()))) if sock else None,
    "duration_s": int(dur), "noisy": noisy == "true", "compiler_running": cc == "true",
    "foreign_cpu_pct": {"server_core": int(fs), "client_core": int(fc)}, "round": int(rnd),
    "loadavg_1m": round(os.getloadavg()[0], 2),
}))
if non2xx or (sock and any(map(int, sock.groups()))):
    print(f"[classifier_bench] WARNING: {name} c={conns}: non-2xx or socket errors; see the JSON line",
          file=sys.stderr)
if mean_batch is not None:
    print(f"[classifier_bench] {name} c={conns}: {rps:.0f} req/s, mean batch "
          f"(coinfer_inference_count_total / coinfer_inference_exec_count_total) {mean_batch}", file=sys.stderr)
EOF
}

WRK_VERSION=$(wrk -v 2>&1 | head -1 | awk '{print $2}' || true)
log "servers on core $SERVER_CPU (coinfer: I/O + compute thread both there), wrk $WRK_VERSION on core $CLIENT_CPU"
for round in $(seq "$ROUNDS"); do
  for conns in "${CONCURRENCY[@]}"; do
    for name in "${SERVERS[@]}"; do
      run_wrk "$name" "$conns" "$round"
    done
  done
done
stop_all

# --- summary --------------------------------------------------------------------------------
"$PYTHON" - "$RESULTS" "$WRK_VERSION" "$SERVER_CPU" "$CLIENT_CPU" "$MAX_BATCH" "$QUEUE_DELAY_US" "$PREVIOUS_DELAY_US" <<'EOF'
import datetime, json, os, platform, statistics, sys
path, wrk_v, scpu, ccpu, max_batch, delay, previous_delay = sys.argv[1:8]
runs = {}
for line in open(path):
    r = json.loads(line)
    runs.setdefault((r["server"], r["concurrency"]), []).append(r)
res = {}
for (name, conns), rs in runs.items():   # medians over the rounds
    med = lambda key: None if any(r[key] is None for r in rs) else round(statistics.median(r[key] for r in rs), 3)
    res[name, conns] = {
        "bench": "classifier_oip_infer", "server": name, "server_info": rs[0]["server_info"],
        "concurrency": conns, "req_per_s": med("req_per_s"), "p50_ms": med("p50_ms"),
        "p99_ms": med("p99_ms"), "mean_batch": med("mean_batch"), "rounds": len(rs),
        "req_per_s_rounds": [r["req_per_s"] for r in rs],
        "requests": sum(r["requests"] for r in rs), "non_2xx": sum(r["non_2xx"] for r in rs),
        "socket_errors": [r["socket_errors"] for r in rs if r["socket_errors"]] or None,
        "duration_s": rs[0]["duration_s"],
        "noisy": any(r["noisy"] for r in rs),
        "foreign_cpu_pct_max": max(max(r["foreign_cpu_pct"].values()) for r in rs),
    }
    print(json.dumps(res[name, conns]))
concs = sorted({c for _, c in res})
rps = lambda name, c: (res.get((name, c)) or {}).get("req_per_s")
ratio = lambda a, b: round(a / b, 2) if a and b else None
on_off = {c: ratio(rps("coinfer_on", c), rps("coinfer_off", c)) for c in concs}
on_torch = {c: ratio(rps("coinfer_on", c), rps("torch", c)) for c in concs}
off_torch = {c: ratio(rps("coinfer_off", c), rps("torch", c)) for c in concs}
delay_off = {c: ratio(rps("coinfer_delay", c), rps("coinfer_off", c)) for c in concs}
on_delay = {c: ratio(rps("coinfer_on", c), rps("coinfer_delay", c)) for c in concs}
on_previous = {c: ratio(rps("coinfer_on", c), rps("coinfer_previous", c)) for c in concs}
target = on_off.get(64)
summary = {
    "bench": "classifier_oip_infer_summary",
    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    "cores": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
    "loadavg_1m": round(os.getloadavg()[0], 2), "server_cpu": int(scpu), "client_cpu": int(ccpu),
    "wrk": wrk_v, "max_batch_size": int(max_batch), "max_queue_delay_us": int(delay),
    "batching_on_over_off": on_off, "coinfer_on_over_torch": on_torch,
    "coinfer_off_over_torch": off_torch, "delay_over_off": delay_off,
    "on_over_delay": on_delay, "on_over_previous": on_previous,
    "target_on_over_off_at_64": 10, "met_on_over_off_target": None if target is None else target >= 10,
    "noisy": sorted(f"{k[0]}@{k[1]}" for k, v in res.items() if v["noisy"]),
    "server_info": {name: res[name, concs[0]]["server_info"] for name in ("coinfer_on", "coinfer_delay", "coinfer_off", "torch", "coinfer_previous") if (name, concs[0]) in res},
}
print(json.dumps(summary))
fmt = lambda v, nd: "—" if v is None else f"{v:,.{nd}f}"
labels = {"coinfer_on": f"coinfer, batching on (≤ {max_batch}, no delay: the default)",
          "coinfer_delay": f"coinfer, batching on (≤ {max_batch}, {delay} µs: the former default)",
          "coinfer_off": "coinfer, batching off (max_batch_size 1)", "torch": "FastAPI + PyTorch peer",
          "coinfer_previous": f"previous coinfer, batching on (≤ {max_batch}, "
                              + ("no delay)" if previous_delay == "0" else f"{previous_delay} µs)")}
print()
print("| server | concurrency | req/s | p50 (ms) | p99 (ms) | mean batch |")
print("|---|---:|---:|---:|---:|---:|")
for name in ("coinfer_on", "coinfer_delay", "coinfer_off", "torch", "coinfer_previous"):
    for c in concs:
        r = res.get((name, c))
        if r:
            print(f"| {labels[name]} | {c} | {fmt(r['req_per_s'], 0)} | {fmt(r['p50_ms'], 2)} | "
                  f"{fmt(r['p99_ms'], 2)} | {fmt(r['mean_batch'], 2) if name != 'torch' else '—'} |")
print()
print("| concurrency | batching on / off | former default (delay) / off | on / former default | coinfer (on) / torch | coinfer (off) / torch |")
print("|---:|---:|---:|---:|---:|---:|")
for c in concs:
    mark = ""
    if c == 64 and on_off[c] is not None:
        mark = f" (target ≥ 10×: {'met' if on_off[c] >= 10 else 'NOT met'})"
    f = lambda v: "—" if v is None else f"{v}×"
    print(f"| {c} | {f(on_off[c])}{mark} | {f(delay_off[c])} | {f(on_delay[c])} | {f(on_torch[c])} | {f(off_torch[c])} |")
if any(v is not None for v in on_previous.values()):
    print()
    print("| concurrency | coinfer (on) / previous coinfer (on) |")
    print("|---:|---:|")
    for c in concs:
        print(f"| {c} | {'—' if on_previous[c] is None else f'{on_previous[c]}×'} |")
first = res[next(iter(res))]
print()
print(f"{summary['date']}; {os.cpu_count()} cores; servers on core {scpu} (coinfer's I/O and compute "
      f"threads share it), wrk {wrk_v} on core {ccpu}, 1 wrk thread; {first['duration_s']} s per point, "
      f"{first['rounds']} interleaved round(s), medians.")
for name in ("coinfer_on", "coinfer_delay", "coinfer_off", "torch", "coinfer_previous"):
    if name in summary["server_info"]:
        print(f"- {name}: {summary['server_info'][name]}")
if summary["noisy"]:
    print(f"NOISY (a compiler ran, or > 15 % of a measured core went to other processes): "
          f"{', '.join(summary['noisy'])}.")
else:
    print("Clean: no compiler ran and other processes used ≤ 15 % of either core during every point.")
EOF
