#!/usr/bin/env bash
# gRPC vs HTTP binary tensor data vs HTTP JSON: the same infer requests to one coinfer-serve,
# in one run, from one load generator (coinfer-loadgen: grpc://, and http:// with the binary
# extension's header or plain JSON), closed loop, 64 requests in flight over 64 connections
# (gRPC: 64 channels, one call in flight on each, as HTTP/1.1's one request per connection).
#
# Cases: digits [1,64] and identity [1,64] (bench/binary_bodies.py writes the HTTP bodies and
# checks that both forms get the same answer; the gRPC request carries the binary body's
# bytes as raw_input_contents and is checked to get the same outputs too). coinfer-serve is
# pinned to core 0, the load generator to core 1; every (case, transport) is measured once per
# round, BENCH_ROUNDS interleaved rounds, medians reported.
#
# Output (stdout): a markdown table. Progress goes to stderr.
#
# Environment:
#   COINFER_BUILD      where coinfer-serve and coinfer-loadgen are   (default build)
#   BENCH_DURATION     seconds per measurement                       (default 8)
#   BENCH_ROUNDS       interleaved rounds                            (default 3)
#   BENCH_CONCURRENCY  requests in flight and connections            (default 64)
#   BENCH_SERVER_CPU / BENCH_CLIENT_CPU                               (default 0 / 1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD=${COINFER_BUILD:-build}
DURATION=${BENCH_DURATION:-8}
ROUNDS=${BENCH_ROUNDS:-3}
CONCURRENCY=${BENCH_CONCURRENCY:-64}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}

log() { printf '[grpc_bench] %s\n' "$*" >&2; }
for b in coinfer-serve coinfer-loadgen; do
  [[ -x $BUILD/$b ]] || { log "error: '$BUILD/$b' not found (scripts/build)"; exit 1; }
done

tmp=$(mktemp -d)
server=""
cleanup() { [[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

taskset -c "$SERVER_CPU" "$BUILD/coinfer-serve" --config configs/default.toml --port 0 \
  --grpc-port 0 --threads 1 --model digits --model identity > "$tmp/serve.out" 2> "$tmp/serve.log" &
server=$!
for _ in $(seq 100); do grep -q '^listening on grpc' "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
http=$(sed -n 's|^listening on http://||p' "$tmp/serve.out")
grpc=$(sed -n 's|^listening on grpc://||p' "$tmp/serve.out")
[[ -n $grpc ]] || { log "error: coinfer-serve did not start:"; cat "$tmp/serve.log" >&2; exit 1; }
log "coinfer-serve at http://$http grpc://$grpc (core $SERVER_CPU, 1 I/O thread)"

python3 bench/binary_bodies.py "$tmp" "$http" | grep -v 4096 > "$tmp/cases"
# The gRPC requests: the binary body's tensor bytes as raw_input_contents, in protobuf's JSON
# mapping; each sent once with tritonclient's stub and its outputs compared with HTTP's.
python3 - "$tmp" "$http" "$grpc" <<'PY'
import base64, json, os, sys, urllib.request
import grpc
from tritonclient.grpc import service_pb2, service_pb2_grpc
tmp, http, address = sys.argv[1:4]
stub = service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address))
for line in open(os.path.join(tmp, "cases")):
    name, path, json_file, bin_file, header_length = line.split()
    head = json.loads(open(json_file).read())
    data = open(bin_file, "rb").read()[int(header_length):]
    model = path.split("/")[3]
    request = {"model_name": model,
               "inputs": [{k: i[k] for k in ("name", "datatype", "shape")} for i in head["inputs"]],
               "raw_input_contents": [base64.b64encode(data).decode()]}
    with open(os.path.join(tmp, name + ".grpc.json"), "w") as f:
        json.dump(request, f)
    message = service_pb2.ModelInferRequest(model_name=model, raw_input_contents=[data])
    for i in head["inputs"]:
        message.inputs.add(name=i["name"], datatype=i["datatype"], shape=i["shape"])
    answer = stub.ModelInfer(message)
    req = urllib.request.Request(f"http://{http}{path}", data=open(json_file, "rb").read(),
                                 headers={"Content-Type": "application/json"})
    expected = {o["name"]: o["data"] for o in json.loads(urllib.request.urlopen(req).read())["outputs"]}
    import numpy as np
    for o, raw in zip(answer.outputs, answer.raw_output_contents):
        dtype = {"FP32": np.float32, "INT64": np.int64}[o.datatype]
        got = np.frombuffer(raw, dtype=dtype).tolist()
        assert np.allclose(got, expected[o.name], rtol=1e-6), (name, o.name)
print("gRPC answers agree", file=sys.stderr)
PY

measure() {  # url extra-args... ; prints "req/s p50_us p99_us"
  taskset -c "$CLIENT_CPU" "$BUILD/coinfer-loadgen" --url "$1" "${@:2}" --concurrency "$CONCURRENCY" \
    --connections "$CONCURRENCY" --duration-s "$DURATION" --warmup-s 1 --json |
    python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["errors"] == 0, r; print(r["throughput_rps"], r["latency_us"]["p50"], r["latency_us"]["p99"])'
}

declare -A results
for round in $(seq "$ROUNDS"); do
  while read -r name path json_file bin_file header_length; do
    results[$name,grpc]+="$(measure "grpc://$grpc" --body-file "$tmp/$name.grpc.json");"
    results[$name,binary]+="$(measure "http://$http$path" --body-file "$bin_file" \
      --content-type application/octet-stream --header "Inference-Header-Content-Length: $header_length");"
    results[$name,json]+="$(measure "http://$http$path" --body-file "$json_file");"
    log "round $round $name: grpc ${results[$name,grpc]} binary ${results[$name,binary]} json ${results[$name,json]}"
  done < "$tmp/cases"
done

echo "| case | transport | req/s (median of $ROUNDS) | p50 us | p99 us | req/s vs HTTP JSON |"
echo "|---|---|---:|---:|---:|---:|"
while read -r name _ _ _ _; do
  python3 - "$name" "${results[$name,grpc]}" "${results[$name,binary]}" "${results[$name,json]}" <<'PY'
import statistics, sys
name = sys.argv[1]
rows = {}
for transport, text in zip(("gRPC (raw contents)", "HTTP binary", "HTTP JSON"), sys.argv[2:5]):
    runs = [list(map(float, r.split())) for r in text.split(";") if r.strip()]
    rows[transport] = [statistics.median(col) for col in zip(*runs)]
base = rows["HTTP JSON"][0]
for transport, (rps, p50, p99) in rows.items():
    print(f"| {name} | {transport} | {rps:.0f} | {p50:.0f} | {p99:.0f} | {rps / base:.2f} |")
PY
done < "$tmp/cases"
