#!/usr/bin/env bash
# Sentence-embedding benchmark, all in one run on the same sentences:
#   coinfer    coinfer-embedding (all-MiniLM-L6-v2, INT8) over HTTP: POST /v1/embeddings,
#              one sentence per request, driven by coinfer-loadgen in a closed loop at 1, 16
#              and 64 concurrent clients, with batching on (max_batch_size 64) and off (1);
#   peers      in-process, batch 64 (bench/embedding_peers.sh): sentence-transformers
#              encode() on Debian's CPU PyTorch, and onnxruntime INT8 (dynamically quantized
#              export of the same model); and coinfer's BertEncoder in-process
#              (build/bench/coinfer-bert-encoder-bench) with the server's compute threads.
# Before measuring, the served vectors of the first 64 sentences are checked against
# sentence-transformers' (cosine >= 0.99 each; min and mean are printed).
#
# Output (stdout): one JSON line per measurement, then a markdown table with the ratios.
# Environment: BENCH_SENTENCES (2000), BENCH_DURATION (15 s per point), BENCH_COMPUTE_THREADS
# (the server's compute pool, default 2 as in the shipped config; the I/O thread is one
# more), MINILM_REFENV (the peers' venv, default /work/refenv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SENTENCES=${BENCH_SENTENCES:-2000}
DURATION=${BENCH_DURATION:-15}
THREADS=${BENCH_COMPUTE_THREADS:-2}
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
log() { printf '[embedding_bench] %s\n' "$*" >&2; }

python3 bench/embedding_sentences.py "$SENTENCES" "$work/sentences.txt" >/dev/null
python3 - "$work/sentences.txt" "$work/bodies.txt" <<'PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        if line.strip():
            out.write(json.dumps({"model": "minilm", "input": line.rstrip("\n")}) + "\n")
PY

start_server() {  # $1: max_batch_size
  sed -e "s/^max_batch_size = .*/max_batch_size = $1/" -e "s/^threads = .*/threads = $THREADS/" \
    configs/embedding_service.toml > "$work/config.toml"
  sed -i "s|\.\./assets/|$PWD/assets/|" "$work/config.toml"
  build/coinfer-embedding --config "$work/config.toml" --port 0 > "$work/listen.txt" 2> "$work/server.log" &
  server_pid=$!
  for _ in $(seq 100); do
    if grep -q "listening on" "$work/listen.txt" 2>/dev/null; then break; fi
    sleep 0.1
  done
  url=$(sed -n 's/^listening on //p' "$work/listen.txt")
  [[ -n $url ]] || { cat "$work/server.log" >&2; exit 1; }
}
stop_server() { kill "$server_pid"; wait "$server_pid" || true; server_pid=""; }

# Accuracy first: the served vectors of 64 sentences against sentence-transformers'.
start_server 64
MINILM_REFENV=${MINILM_REFENV:-/work/refenv} scripts/minilm_reference --ensure-venv >/dev/null
"${MINILM_REFENV:-/work/refenv}/bin/python" - "$url" "$work/sentences.txt" <<'PY' >&2
import json, sys, urllib.request
import numpy as np
from sentence_transformers import SentenceTransformer
url, path = sys.argv[1], sys.argv[2]
texts = [l.rstrip("\n") for l in open(path) if l.strip()][:64]
req = urllib.request.Request(url + "/v1/embeddings", json.dumps({"model": "minilm", "input": texts}).encode(),
                             {"Content-Type": "application/json"})
served = np.array([d["embedding"] for d in json.load(urllib.request.urlopen(req))["data"]])
ref = SentenceTransformer("assets/all-MiniLM-L6-v2", device="cpu").encode(texts, batch_size=64)
cos = (served * ref).sum(1) / np.linalg.norm(served, axis=1) / np.linalg.norm(ref, axis=1)
print(json.dumps({"check": "cosine served vs sentence-transformers", "min": float(cos.min()), "mean": float(cos.mean())}))
assert cos.min() >= 0.99, cos.min()
PY

declare -A results
for batching in on off; do
  [[ -n $server_pid ]] || start_server $([[ $batching == on ]] && echo 64 || echo 1)
  for c in 1 16 64; do
    log "coinfer batching $batching, $c clients"
    line=$(build/coinfer-loadgen --url "$url/v1/embeddings" --body-lines "$work/bodies.txt" \
             --mode closed --concurrency "$c" --duration-s "$DURATION" --warmup-s 2 --json)
    echo "{\"server\":\"coinfer\",\"batching\":\"$batching\",\"clients\":$c,\"loadgen\":$line}"
    results[$batching,$c]=$line
  done
  stop_server
done

log "peers (in-process, batch 64)"
peers=$(bench/embedding_peers.sh "$work/sentences.txt" --batch 64)
echo "$peers"
log "coinfer's BertEncoder in-process (batch 64, $THREADS compute threads)"
encoder=$(build/bench/coinfer-bert-encoder-bench assets/all-MiniLM-L6-v2 "$work/sentences.txt" \
            --threads "$THREADS" --batch 64 --seconds "$DURATION")
echo "$encoder"
peers="$peers
$encoder"

python3 - "$peers" <<PY
import json, sys
peers = {}
for line in sys.argv[1].splitlines():
    d = json.loads(line)
    if "peer" in d: peers[d["peer"]] = d["sentences_per_s"]
    if d.get("bench") == "bert_encoder": peers["coinfer BertEncoder (INT8)"] = d["sentences_per_s"]
rows = {}
$(for k in "${!results[@]}"; do echo "rows['$k'] = json.loads('''${results[$k]}''')"; done)
print()
print("| coinfer over HTTP | clients | sentences/s | p50 ms | p99 ms | errors |")
print("|---|---|---|---|---|---|")
for b in ("on", "off"):
    for c in (1, 16, 64):
        d = rows[f"{b},{c}"]
        lat = d["latency_us"]
        print(f"| batching {b} | {c} | {d['ok'] / d['duration_s']:.1f} | {lat['p50'] / 1000:.2f} | {lat['p99'] / 1000:.2f} | {d['errors']} |")
print()
print("| in-process, batch 64 | sentences/s |")
print("|---|---|")
for p, v in peers.items(): print(f"| {p} | {v:.1f} |")
on64 = rows["on,64"]["ok"] / rows["on,64"]["duration_s"]
off64 = rows["off,64"]["ok"] / rows["off,64"]["duration_s"]
print()
print(f"coinfer at 64 clients / sentence-transformers: {on64 / peers.get('sentence-transformers', float('nan')):.2f}x")
print(f"coinfer at 64 clients / onnxruntime INT8: {on64 / peers.get('onnxruntime-int8', float('nan')):.2f}x")
print(f"batching on / off at 64 clients: {on64 / off64 if off64 else float('nan'):.2f}x")
PY
