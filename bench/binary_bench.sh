#!/usr/bin/env bash
# Binary tensor data vs JSON: the same infer requests, sent as JSON and as Triton's binary
# tensor data extension (inputs after the JSON header, outputs asked for as binary), against
# one coinfer-serve, in one run.
#
# Cases (bench/binary_bodies.py writes the bodies and checks that both forms get the same
# answer before anything is measured): digits [1,64], identity [1,64], identity [1,4096].
# coinfer-serve is pinned to core 0, wrk to core 1; every (case, form) pair is measured once
# per round, BENCH_ROUNDS interleaved rounds, medians reported.
#
# Output (stdout): a markdown table. Progress goes to stderr.
#
# Environment:
#   COINFER_SERVE      coinfer-serve binary      (default build/coinfer-serve)
#   COINFER_CONFIG     its config                (default configs/default.toml)
#   BENCH_DURATION     seconds per measurement   (default 8)
#   BENCH_ROUNDS       interleaved rounds        (default 3)
#   BENCH_CONNECTIONS  wrk connections           (default 64)
#   BENCH_SERVER_CPU / BENCH_CLIENT_CPU           (default 0 / 1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

COINFER_SERVE=${COINFER_SERVE:-build/coinfer-serve}
COINFER_CONFIG=${COINFER_CONFIG:-configs/default.toml}
DURATION=${BENCH_DURATION:-8}
ROUNDS=${BENCH_ROUNDS:-3}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}

log() { printf '[binary_bench] %s\n' "$*" >&2; }
for tool in wrk taskset python3; do
  command -v "$tool" >/dev/null 2>&1 || { log "error: '$tool' not found (scripts/setup --bench)"; exit 1; }
done
[[ -x $COINFER_SERVE ]] || { log "error: '$COINFER_SERVE' not found (scripts/build)"; exit 1; }

tmp=$(mktemp -d)
server=""
cleanup() { [[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

taskset -c "$SERVER_CPU" "$COINFER_SERVE" --config "$COINFER_CONFIG" --port 0 \
  > "$tmp/serve.out" 2> "$tmp/serve.log" &
server=$!
for _ in $(seq 100); do grep -q '^listening on ' "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
address=$(sed -n 's|^listening on http://||p' "$tmp/serve.out")
[[ -n $address ]] || { log "error: coinfer-serve did not start:"; cat "$tmp/serve.log" >&2; exit 1; }
log "coinfer-serve at $address"

python3 bench/binary_bodies.py "$tmp" "$address" > "$tmp/cases"
log "answers agree for: $(cut -d' ' -f1 "$tmp/cases" | tr '\n' ' ')"

# wrk once: prints requests/s.
measure() {  # path body_file header_length(or empty)
  BENCH_BODY_FILE=$2 BENCH_INFER_PATH=$1 BENCH_HEADER_LENGTH=$3 \
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s \
    -s bench/digits_infer.lua "http://$address$1" | awk '/^Requests\/sec:/ { print $2 }'
}

declare -A results
for round in $(seq "$ROUNDS"); do
  while read -r name path json_file bin_file header_length; do
    results[$name,json]+="$(measure "$path" "$json_file" "") "
    results[$name,binary]+="$(measure "$path" "$bin_file" "$header_length") "
    log "round $round $name: json ${results[$name,json]}| binary ${results[$name,binary]}"
  done < "$tmp/cases"
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "| case | JSON req/s (median of $ROUNDS) | binary req/s | binary/JSON |"
echo "|---|---:|---:|---:|"
while read -r name _ _ _ _; do
  j=$(echo "${results[$name,json]}" | median)
  b=$(echo "${results[$name,binary]}" | median)
  awk -v n="$name" -v j="$j" -v b="$b" 'BEGIN { printf "| %s | %.0f | %.0f | %.2f |\n", n, j, b, b / j }'
done < "$tmp/cases"
