#!/usr/bin/env bash
# HTTP benchmark: OIP v2 infer on the built-in "identity" model, coinfer vs a FastAPI +
# uvicorn peer vs nginx (a fixed 200, as this machine's ceiling), in one run.
#
# All three servers run pinned to core 0 (an idle server costs nothing) and wrk runs on
# core 1. wrk measures them one at a time, in BENCH_ROUNDS interleaved rounds (coinfer,
# fastapi, nginx, coinfer, ...), so that noise from this shared machine falls on all three
# alike; each server's figures are the medians over its rounds. Every server gets the same request:
# POST /v2/models/identity/infer, Content-Type: application/json, INPUT0 FP32 [1,64].
# Before measuring, one curl per server checks the answer (coinfer and FastAPI: OUTPUT0
# echoes the input and OUTPUT1 is the row sum; nginx: 200 with {"ok":true}).
#
# Output (stdout): one JSON line per server, one summary JSON line with the ratios,
# then a markdown table. Progress and server logs go to stderr / the temp dir.
#
# Environment:
#   COINFER_SERVE        coinfer-serve binary           (default build/coinfer-serve)
#   COINFER_SERVE_PREVIOUS  another coinfer-serve (e.g. the previous main's), measured as
#                        "coinfer_previous" in the same interleaved rounds (default: none)
#   COINFER_CONFIG       its config file                (default configs/default.toml)
#   COINFER_CONFIG_PREVIOUS  the previous build's config  (default COINFER_CONFIG; e.g. that
#                        checkout's configs/default.toml, for an older main's own defaults)
#   BENCH_DURATION       seconds measured per server    (default 10)
#   BENCH_WARMUP         seconds of unreported warm-up before each server's first round (default 2)
#   BENCH_ROUNDS         interleaved rounds; medians are reported (default 1)
#   BENCH_CONNECTIONS    wrk connections                (default 64)
#   BENCH_WRK_THREADS    wrk threads                    (default 1)
#   BENCH_SERVER_CPU     core for the servers           (default 0)
#   BENCH_CLIENT_CPU     core for wrk                   (default 1)
#   BENCH_ALLOW_MISSING  1: skip coinfer with a message when the binary is missing
#                        (otherwise a missing binary is an error)
#   PYTHON               interpreter with fastapi + uvicorn (default python3)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

COINFER_SERVE=${COINFER_SERVE:-build/coinfer-serve}
COINFER_CONFIG=${COINFER_CONFIG:-configs/default.toml}
COINFER_CONFIG_PREVIOUS=${COINFER_CONFIG_PREVIOUS:-$COINFER_CONFIG}
DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-2}
ROUNDS=${BENCH_ROUNDS:-1}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
WRK_THREADS=${BENCH_WRK_THREADS:-1}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
ALLOW_MISSING=${BENCH_ALLOW_MISSING:-0}
PYTHON=${PYTHON:-python3}
INFER_PATH=/v2/models/identity/infer

log() { printf '[http_bench] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for tool in wrk nginx curl taskset "$PYTHON"; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found"
done
"$PYTHON" -c 'import fastapi, uvicorn' 2>/dev/null \
  || die "$PYTHON cannot import fastapi and uvicorn (pip install fastapi 'uvicorn[standard]')"

RUN_COINFER=1
if [[ ! -x $COINFER_SERVE ]]; then
  if [[ $ALLOW_MISSING == 1 ]]; then
    log "SKIPPING coinfer: '$COINFER_SERVE' not found (BENCH_ALLOW_MISSING=1); ratios will be null"
    RUN_COINFER=0
  else
    die "'$COINFER_SERVE' not found or not executable (build it, set COINFER_SERVE, or BENCH_ALLOW_MISSING=1 to skip it)"
  fi
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/coinfer-http-bench.XXXXXX")
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
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      return 1
    fi
    if curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# The request body, shared by the curl check and wrk (via BENCH_BODY_FILE).
BODY_FILE=$TMP/body.json
"$PYTHON" - "$BODY_FILE" <<'EOF'
import json, sys
data = [i * 0.25 + 0.125 - 4 for i in range(64)]   # exact in FP32; sum 256
body = {"inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32", "data": data}]}
open(sys.argv[1], "w").write(json.dumps(body, separators=(",", ":")))
EOF
export BENCH_BODY_FILE=$BODY_FILE

# check_oip NAME URL: POST the body once; the answer must be a valid identity response.
check_oip() {
  local name=$1 url=$2
  local out=$TMP/$name.check.json code
  code=$(curl -sS -o "$out" -w '%{http_code}' --max-time 5 -X POST \
    -H 'Content-Type: application/json' --data-binary "@$BODY_FILE" "$url$INFER_PATH") \
    || die "$name: curl failed"
  [[ $code == 200 ]] || die "$name: HTTP $code: $(head -c 500 "$out")"
  "$PYTHON" - "$BODY_FILE" "$out" "$name" <<'EOF' || die "$name: invalid answer: $(head -c 500 "$out")"
import json, math, sys
req = json.load(open(sys.argv[1]))
resp = json.load(open(sys.argv[2]))
name = sys.argv[3]
x = req["inputs"][0]["data"]
outs = {o["name"]: o for o in resp["outputs"]}
assert resp["model_name"] == "identity", resp.get("model_name")
o0, o1 = outs["OUTPUT0"], outs["OUTPUT1"]
assert o0["datatype"] == "FP32" and o0["shape"] == [1, 64], o0
assert o1["datatype"] == "FP32" and o1["shape"] == [1], o1
assert len(o0["data"]) == 64 and all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(o0["data"], x)), "OUTPUT0 != INPUT0"
assert math.isclose(o1["data"][0], math.fsum(x), rel_tol=1e-6, abs_tol=1e-4), f"OUTPUT1 {o1['data']} != row sum {math.fsum(x)}"
print(f"[http_bench] {name}: answer ok (OUTPUT1 = {o1['data'][0]} = row sum)", file=sys.stderr)
EOF
}

check_nginx() {
  local url=$1 out=$TMP/nginx.check.json code
  code=$(curl -sS -o "$out" -w '%{http_code}' --max-time 5 -X POST \
    -H 'Content-Type: application/json' --data-binary "@$BODY_FILE" "$url$INFER_PATH") \
    || die "nginx: curl failed"
  [[ $code == 200 && $(cat "$out") == '{"ok":true}' ]] || die "nginx: HTTP $code: $(head -c 200 "$out")"
  log "nginx: answer ok (200 {\"ok\":true})"
}

# cpu_ticks PID: user and system clock ticks of the process and its children (nginx's worker),
# every thread counted.
cpu_ticks() {
  local pids=("$1") p u s total_u=0 total_s=0
  mapfile -t -O 1 pids < <(pgrep -P "$1" 2>/dev/null)
  for p in "${pids[@]}"; do
    # Fields after the command name, which is in parentheses and may hold spaces.
    read -r u s < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12, $13}') || continue
    total_u=$((total_u + ${u:-0})) total_s=$((total_s + ${s:-0}))
  done
  echo "$total_u $total_s"
}
# System calls and context switches per request come from `perf stat` (linux-perf, with
# `scripts/setup --bench`) where it may trace; otherwise they are null.
PERF_OK=0
perf stat -e raw_syscalls:sys_enter,context-switches -o /dev/null -- true >/dev/null 2>&1 && PERF_OK=1

# run_wrk NAME ROUND: (warm up in round 1,) measure, append one JSON line to $RESULTS.
RESULTS=$TMP/results.jsonl
: >"$RESULTS"
run_wrk() {
  local name=$1 round=$2
  local url=${URLS[$name]} info=${INFO[$name]}
  local out=$TMP/$name.$round.wrk.txt
  if [[ $WARMUP != 0 && $round == 1 ]]; then
    taskset -c "$CLIENT_CPU" wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" \
      -s bench/oip_infer.lua "$url$INFER_PATH" >/dev/null
  fi
  log "$name: round $round/$ROUNDS: measuring ${DURATION}s, $CONNECTIONS connections, $WRK_THREADS wrk thread(s)"
  local noisy=false perf_out=$TMP/$name.$round.perf.txt perf_pid="" pids ticks0 ticks1
  pgrep -x cc1plus >/dev/null 2>&1 && noisy=true
  pids=$(echo "${PIDS[$name]}" $(pgrep -P "${PIDS[$name]}") | tr ' ' ',')
  ticks0=$(cpu_ticks "${PIDS[$name]}")
  if [[ $PERF_OK == 1 ]]; then
    perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$pids" -o "$perf_out" \
      -- sleep "$DURATION" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  taskset -c "$CLIENT_CPU" wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
    -s bench/oip_infer.lua "$url$INFER_PATH" >"$out"
  ticks1=$(cpu_ticks "${PIDS[$name]}")
  [[ -z $perf_pid ]] || wait "$perf_pid" || true
  pgrep -x cc1plus >/dev/null 2>&1 && noisy=true
  [[ $noisy == false ]] || log "WARNING: $name: a compiler was running around this measurement"
  kill -0 "${PIDS[$name]}" 2>/dev/null || die "$name: server died during the run"
  "$PYTHON" - "$out" "$name" "$DURATION" "$CONNECTIONS" "$WRK_THREADS" "$info" "$noisy" "$round" \
    "$ticks0" "$ticks1" "$(getconf CLK_TCK)" "$perf_out" <<'EOF' >>"$RESULTS"
import json, os, re, sys
path, name, dur, conns, threads, server_info, noisy, rnd, t0, t1, hz, perf_path = sys.argv[1:13]
text = open(path).read()
def lat_ms(s):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", s)
    return round(float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[m.group(2)], 3)
rps = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
pct = {p: lat_ms(v) for p, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", text, re.M)}
total = int(re.search(r"(\d+) requests in", text).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
# The server's CPU per request, from its clock ticks over the run (wrk's requests; the few
# answered after wrk's last count are noise at these rates).
(u0, s0), (u1, s1) = map(int, t0.split()), map(int, t1.split())
us_per_tick = 1e6 / int(hz)
per_req = lambda ticks: round(ticks * us_per_tick / total, 2) if total else None
counts = {}
if os.path.exists(perf_path):
    for line in open(perf_path):
        f = line.strip().split(",")
        if len(f) > 2 and f[0].isdigit():
            counts[f[2]] = int(f[0])
per_req_count = lambda key: round(counts[key] / total, 2) if key in counts and total else None
print(json.dumps({
    "bench": "http_oip_infer", "server": name, "server_info": server_info,
    "req_per_s": rps, "p50_ms": pct.get("50"), "p99_ms": pct.get("99"),
    "user_us_per_request": per_req(u1 - u0), "kernel_us_per_request": per_req(s1 - s0),
    "syscalls_per_request": per_req_count("raw_syscalls:sys_enter"),
    "context_switches_per_request": per_req_count("context-switches"),
    "requests": total, "non_2xx": int(non2xx.group(1)) if non2xx else 0,
    "socket_errors": dict(zip(["connect", "read", "write", "timeout"], map(int, sock.groups()))) if sock else None,
    "duration_s": int(dur), "connections": int(conns), "wrk_threads": int(threads),
    "compiler_running": noisy == "true", "round": int(rnd),
}))
if non2xx or (sock and any(map(int, sock.groups()))):
    print(f"[http_bench] WARNING: {name}: non-2xx or socket errors during the run; see the JSON line",
          file=sys.stderr)
EOF
}

UVICORN_LOOP=asyncio UVICORN_HTTP=h11
"$PYTHON" -c 'import uvloop' 2>/dev/null && UVICORN_LOOP=uvloop
"$PYTHON" -c 'import httptools' 2>/dev/null && UVICORN_HTTP=httptools
PY_VERSIONS=$("$PYTHON" -c 'import sys, fastapi, uvicorn; print(f"Python {sys.version.split()[0]}, FastAPI {fastapi.__version__}, uvicorn {uvicorn.__version__}")')
WRK_VERSION=$(wrk -v 2>&1 | head -1 | awk '{print $2}' || true)
NGINX_VERSION=$(nginx -v 2>&1 | sed 's/.*nginx\///')
log "servers on core $SERVER_CPU, wrk $WRK_VERSION on core $CLIENT_CPU"
if pgrep -x cc1plus >/dev/null 2>&1; then
  log "WARNING: a compiler (cc1plus) is running; this machine is shared and the figures will be noisy"
fi

# --- 1. coinfer (and the previous build, when given) ----------------------------------
# start_coinfer NAME BINARY CONFIG
start_coinfer() {
  local name=$1 binary=$2 config=$3 port="" rev
  taskset -c "$SERVER_CPU" "$binary" --config "$config" --port 0 --threads 1 \
    >"$TMP/$name.out" 2>"$TMP/$name.err" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    port=$(sed -n 's#^listening on http://[^ ]*:\([0-9][0-9]*\)/\{0,1\}$#\1#p' "$TMP/$name.out" | head -1)
    [[ -n $port ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n $port ]] || die "$name: no 'listening on http://HOST:PORT' line; stderr: $(tail -5 "$TMP/$name.err")"
  wait_http "http://127.0.0.1:$port/v2/health/ready" || die "$name: not ready on port $port"
  log "$name: listening on port $port"
  check_oip "$name" "http://127.0.0.1:$port"
  rev=$(git -C "$(dirname "$(realpath "$binary")")" rev-parse --short HEAD 2>/dev/null || echo unknown)
  [[ -z $(git -C "$(dirname "$(realpath "$binary")")" status --porcelain --untracked-files=no 2>/dev/null) ]] \
    || rev+="+dirty"
  PIDS[$name]=$SERVER_PID URLS[$name]="http://127.0.0.1:$port" SERVER_PID=""
  INFO[$name]="coinfer-serve --threads 1, git $rev"
}
if [[ $RUN_COINFER == 1 ]]; then
  start_coinfer coinfer "$COINFER_SERVE" "$COINFER_CONFIG"
fi
if [[ -n ${COINFER_SERVE_PREVIOUS:-} ]]; then
  [[ -x $COINFER_SERVE_PREVIOUS ]] || die "COINFER_SERVE_PREVIOUS '$COINFER_SERVE_PREVIOUS' is not executable"
  start_coinfer coinfer_previous "$COINFER_SERVE_PREVIOUS" "$COINFER_CONFIG_PREVIOUS"
fi

# --- 2. FastAPI + uvicorn ---------------------------------------------------------
port=$(free_port)
taskset -c "$SERVER_CPU" "$PYTHON" -m uvicorn bench.fastapi_peer:app --host 127.0.0.1 --port "$port" \
  --workers 1 --loop "$UVICORN_LOOP" --http "$UVICORN_HTTP" --log-level warning --no-access-log \
  >"$TMP/fastapi.out" 2>"$TMP/fastapi.err" &
SERVER_PID=$!
wait_http "http://127.0.0.1:$port/v2/health/ready" 150 \
  || die "fastapi: not ready on port $port; stderr: $(tail -5 "$TMP/fastapi.err")"
log "fastapi: listening on port $port (loop $UVICORN_LOOP, http $UVICORN_HTTP)"
check_oip fastapi "http://127.0.0.1:$port"
PIDS[fastapi]=$SERVER_PID URLS[fastapi]="http://127.0.0.1:$port" SERVER_PID=""
INFO[fastapi]="$PY_VERSIONS, 1 worker, loop=$UVICORN_LOOP, http=$UVICORN_HTTP"

# --- 3. nginx (ceiling) ---------------------------------------------------------------
port=$(free_port)
mkdir -p "$TMP/nginx/logs" "$TMP/nginx/temp"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/temp/body;
  proxy_temp_path $TMP/nginx/temp/proxy;
  fastcgi_temp_path $TMP/nginx/temp/fastcgi;
  uwsgi_temp_path $TMP/nginx/temp/uwsgi;
  scgi_temp_path $TMP/nginx/temp/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    location / {
      default_type application/json;
      return 200 '{"ok":true}';
    }
  }
}
EOF
taskset -c "$SERVER_CPU" nginx -e "$TMP/nginx/logs/error.log" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" \
  -g 'daemon off;' >"$TMP/nginx.out" 2>"$TMP/nginx.err" &
SERVER_PID=$!
wait_http "http://127.0.0.1:$port/" || die "nginx: not ready; $(tail -5 "$TMP/nginx.err" "$TMP/nginx/logs/error.log")"
log "nginx: listening on port $port"
check_nginx "http://127.0.0.1:$port"
PIDS[nginx]=$SERVER_PID URLS[nginx]="http://127.0.0.1:$port" SERVER_PID=""
INFO[nginx]="nginx $NGINX_VERSION, worker_processes 1, fixed 200"

# --- measure, interleaved ---------------------------------------------------------------
ORDER=()
[[ $RUN_COINFER == 1 ]] && ORDER+=(coinfer)
[[ -n ${COINFER_SERVE_PREVIOUS:-} ]] && ORDER+=(coinfer_previous)
ORDER+=(fastapi nginx)
for round in $(seq "$ROUNDS"); do
  for name in "${ORDER[@]}"; do
    run_wrk "$name" "$round"
  done
done
stop_all

# --- summary --------------------------------------------------------------------------
"$PYTHON" - "$RESULTS" "$WRK_VERSION" "$NGINX_VERSION" "$PY_VERSIONS" "$UVICORN_LOOP" "$UVICORN_HTTP" \
  "$SERVER_CPU" "$CLIENT_CPU" <<'EOF'
import datetime, json, os, statistics, sys
path, wrk_v, nginx_v, py_v, loop, http, scpu, ccpu = sys.argv[1:9]
runs = {}
for line in open(path):
    r = json.loads(line)
    runs.setdefault(r.pop("server"), []).append(r)
res = {}
for name, rs in runs.items():   # one JSON line per server: medians over the rounds
    med = lambda key: round(statistics.median(r[key] for r in rs), 3)
    def medn(key):  # None when a round has no figure (no perf)
        values = [r[key] for r in rs if r.get(key) is not None]
        return round(statistics.median(values), 2) if values else None
    res[name] = {
        "bench": "http_oip_infer", "server": name, "server_info": rs[0]["server_info"],
        "req_per_s": med("req_per_s"), "p50_ms": med("p50_ms"), "p99_ms": med("p99_ms"),
        "user_us_per_request": medn("user_us_per_request"),
        "kernel_us_per_request": medn("kernel_us_per_request"),
        "syscalls_per_request": medn("syscalls_per_request"),
        "context_switches_per_request": medn("context_switches_per_request"),
        "rounds": len(rs), "req_per_s_rounds": [r["req_per_s"] for r in rs],
        "p99_ms_rounds": [r["p99_ms"] for r in rs],
        "requests": sum(r["requests"] for r in rs), "non_2xx": sum(r["non_2xx"] for r in rs),
        "socket_errors": [r["socket_errors"] for r in rs if r["socket_errors"]] or None,
        "duration_s": rs[0]["duration_s"], "connections": rs[0]["connections"],
        "wrk_threads": rs[0]["wrk_threads"],
        "compiler_running": any(r["compiler_running"] for r in rs),
    }
    print(json.dumps(res[name]))
rps = {k: v["req_per_s"] for k, v in res.items()}
p99 = {k: v["p99_ms"] for k, v in res.items()}
c, f, n = rps.get("coinfer"), rps.get("fastapi"), rps.get("nginx")
prev = rps.get("coinfer_previous")
x_fastapi = round(c / f, 2) if c and f else None
pct_nginx = round(100 * c / n, 1) if c and n else None
x_previous = round(c / prev, 3) if c and prev else None
pct_nginx_previous = round(100 * prev / n, 1) if prev and n else None
summary = {
    "bench": "http_oip_infer_summary",
    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    "cores": os.cpu_count(), "loadavg_1m": round(os.getloadavg()[0], 2), "server_cpu": int(scpu), "client_cpu": int(ccpu),
    "wrk": wrk_v, "nginx": nginx_v, "python": py_v, "uvicorn_loop": loop, "uvicorn_http": http,
    "req_per_s": rps, "p99_ms": p99,
    "coinfer_over_fastapi": x_fastapi, "coinfer_pct_of_nginx": pct_nginx,
    "coinfer_over_previous": x_previous, "previous_pct_of_nginx": pct_nginx_previous,
    "target_coinfer_over_fastapi": 10, "target_coinfer_pct_of_nginx": 75,
    "met_fastapi_target": None if x_fastapi is None else x_fastapi >= 10,
    "met_nginx_target": None if pct_nginx is None else pct_nginx >= 75,
    "compiler_running": sorted(k for k, v in res.items() if v.get("compiler_running")),
}
print(json.dumps(summary))
fmt = lambda v, nd: "—" if v is None else f"{v:,.{nd}f}"
print()
print("| server | req/s | p50 (ms) | p99 (ms) | server CPU µs/request (user + kernel) | syscalls/request | coinfer ratio |")
print("|---|---:|---:|---:|---:|---:|---|")
for k in ("coinfer", "coinfer_previous", "fastapi", "nginx"):
    r = res.get(k)
    if r is None:
        if k != "coinfer_previous":
            print(f"| {k} | skipped | | | | | |")
        continue
    ratio = ""
    if k == "coinfer_previous":
        ratio = f"coinfer = {x_previous}× (previous: {pct_nginx_previous}% of nginx)"
    if k == "fastapi":
        ratio = "—" if x_fastapi is None else f"coinfer = {x_fastapi}× (target ≥ 10×: {'met' if x_fastapi >= 10 else 'NOT met'})"
    if k == "nginx":
        ratio = "—" if pct_nginx is None else f"coinfer = {pct_nginx}% (target ≥ 75%: {'met' if pct_nginx >= 75 else 'NOT met'})"
    u, kern = r["user_us_per_request"], r["kernel_us_per_request"]
    cpu = "—" if u is None or kern is None else f"{u + kern:.1f} ({u:.1f} + {kern:.1f})"
    print(f"| {k} ({r['server_info']}) | {fmt(r['req_per_s'], 0)} | {fmt(r['p50_ms'], 2)} | {fmt(r['p99_ms'], 2)} "
          f"| {cpu} | {fmt(r['syscalls_per_request'], 2)} | {ratio} |")
print()
print(f"{summary['date']}; {os.cpu_count()} cores; servers on core {scpu}, wrk {wrk_v} on core {ccpu}; "
      f"{res[next(iter(res))]['connections']} connections, {res[next(iter(res))]['wrk_threads']} wrk thread(s), "
      f"{res[next(iter(res))]['duration_s']} s per server per round, "
      f"{res[next(iter(res))]['rounds']} interleaved round(s), medians."
      + (f" NOISY: a compiler was running during {', '.join(summary['compiler_running'])}."
         if summary["compiler_running"] else ""))
EOF
