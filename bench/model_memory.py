#!/usr/bin/env python3
"""Resident weight memory per model: how much memory each model coinfer serves takes in a
running `coinfer-serve`, beside the size of its weights file and of one INT8 / FP32 copy of
its parameters (docs/BENCHMARKS.md, "Resident weight memory per model").

  python3 bench/model_memory.py [--rounds 2] [--serve build/coinfer-serve] [--no-peers]
          [--no-malloc-probe] [--cases minilm-int8,...] [--ready-timeout 180]
          [--json bench/results/model_memory-DATE.json]

How: for each case a temporary TOML config with ONE model ([server] port = 0, i.e. a free
port, [compute] threads = 1, [log] level = "warn", weights by absolute path) is written,
`coinfer-serve --config FILE` started, its "listening on" line read (printed once the model
is loaded and, for the LLM, calibrated) and GET /v2/health/ready polled until 200; after a 1 s
settle the script reads /proc/PID/status (VmRSS, RssAnon, RssFile, VmHWM), /proc/PID/
smaps_rollup and /proc/PID/smaps (the weights file's resident pages if it is still mapped,
the largest mappings). That is the idle server: no request served. Then one ordinary request
(an infer, an embedding, an 8-token completion) and RSS again ("after 1 request", as the
peer's encode() below); then SIGTERM and wait. Each case is started a second time with
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 (see FIXED_MMAP_THRESHOLD; skip with
--no-malloc-probe): the RSS difference is load-time memory glibc kept, not memory in use.
Cases:
  baseline            kind "identity" only: the server's own footprint (no weights)
  digits              kind "mlp", assets/digits_mlp/model.safetensors (INT8)
  minilm-int8         kind "sentence_embedding", all-MiniLM-L6-v2, default precision (INT8)
  minilm-fp32         the same, precision = "fp32" (the reference path)
  smollm2-int4        kind "llm", SmolLM2-135M-Instruct.Q4_1.gguf, default precision ("auto":
                      the file's Q4_1 blocks, INT4)
  smollm2-int8        the same, precision = "int8" (Q8_0 blocks)
  smollm2-fp32        the same, precision = "fp32"
  smollm2-int4-step16 smollm2-int4 with max_step_tokens = 16 (default 256): a diagnostic, the
                      difference is the scratch sized by the step (activations and their
                      quantized blocks), which the weights are not
Every LLM case sets kv_cache_mib = 8 (the default is 512), so that the paged KV cache does not
dominate; it is allocated uninitialized, so only pages written (by a request) count.
A case whose weights file is missing is skipped with a note. Rounds are interleaved (every
case once, then again); tables give the median over rounds, and each round's RSS.
Peers, same run: sentence-transformers' process (the `python3` on PATH, torch on 1 thread):
RSS after `import torch, sentence_transformers`, after loading assets/all-MiniLM-L6-v2 on
the CPU, and after one encode(), with the resident pages of model.safetensors (it keeps them
mmap'd); llama.cpp's llama-server on the same GGUF (-c 512, -t 1) if
~/.cache/coinfer/llama.cpp/build/bin/llama-server exists (it is never built here).

How to read it: MB are 10^6 bytes (so the 90,868,376-byte MiniLM file is 90.9 MB). "RSS -
baseline" is what the model adds to an idle server: its weights, but also its tokenizer,
activation and GEMM scratch sized at load for the largest batch or step, and memory malloc
kept from loading (second table). RssFile is file-backed pages: the binary, its libraries,
and any weights file still mmap'd (the LLM keeps its GGUF mapped and reads token embeddings
from it; those pages are clean page cache, shared and reclaimable); RssAnon is heap. VmHWM
is the peak RSS, reached while loading (FP32 tensors read from the file, quantized,
reordered; the INT8 LLM builds its linears twice, before and after calibration). "params"
counts the file's floating-point tensors; "INT8 copy" and "FP32 copy" are 1 and 4 bytes per
parameter: RSS - baseline well above one copy of what the model keeps means a second copy or
scratch somewhere; the third table splits the parameters by role (GEMM matrices, embeddings,
vectors) to tell which. The last table is the peers'. JSON lines (one per measurement) go to
stdout, the tables at the end, everything to --json. Python 3 standard library only.
"""

import argparse
import http.client
import json
import math
import mmap
import os
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.path.join(REPO, "assets")
DIGITS = os.path.join(ASSETS, "digits_mlp", "model.safetensors")
MINILM_DIR = os.path.join(ASSETS, "all-MiniLM-L6-v2")
MINILM = os.path.join(MINILM_DIR, "model.safetensors")
SMOLLM2 = os.path.join(ASSETS, "SmolLM2-135M-Instruct.Q4_1.gguf")
LLAMA_SERVER = os.path.expanduser("~/.cache/coinfer/llama.cpp/build/bin/llama-server")
MB = 1e6
STATUS = ("VmRSS", "RssAnon", "RssFile", "VmHWM")
BULKY = ("smaps_rollup", "top_mappings")  # in the --json file, not the JSON lines

# name, model table lines (weights added when the case has a file), weights file
LLM_KV = 'kv_cache_mib = 8'
CASES = [
    ("baseline", ['kind = "identity"'], None),
    ("digits", ['kind = "mlp"'], DIGITS),
    ("minilm-int8", ['kind = "sentence_embedding"'], MINILM),
    ("minilm-fp32", ['kind = "sentence_embedding"', 'precision = "fp32"'], MINILM),
    ("smollm2-int4", ['kind = "llm"', LLM_KV], SMOLLM2),
    ("smollm2-int8", ['kind = "llm"', LLM_KV, 'precision = "int8"'], SMOLLM2),
    ("smollm2-fp32", ['kind = "llm"', LLM_KV, 'precision = "fp32"'], SMOLLM2),
    # Diagnostic: the step's scratch scales with max_step_tokens (default 256), the weights do not.
    ("smollm2-int4-step16", ['kind = "llm"', LLM_KV, "max_step_tokens = 16"], SMOLLM2),
]
# glibc's malloc raises its mmap threshold (up to 32 MiB) each time a mmap'd block is freed, so
# later blocks of that size come from the heap, where freed load-time buffers stay resident. A
# threshold set by hand stays fixed: blocks >= 128 KiB are then their own mappings, unmapped when
# freed, and the RSS difference is load-time memory malloc kept, not memory the model uses.
FIXED_MMAP_THRESHOLD = "glibc.malloc.mmap_threshold=131072"


# ---------------------------------------------------------------- /proc readings

def read_proc(pid, weights=None):
    """VmRSS, RssAnon, RssFile, RssShmem, VmHWM (bytes), smaps_rollup's fields, the largest
    mappings, and the resident pages of `weights` if the process still maps that file."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM", "VmSize", "Threads"):
                parts = rest.split()
                out[key] = int(parts[0]) * (1024 if key not in ("Threads",) else 1)
    rollup = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    rollup[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except OSError:
        pass
    out["smaps_rollup"] = rollup
    out["top_mappings"], out["weights_mapped"] = mappings(pid, weights)
    return out


def mappings(pid, weights=None, count=8):
    """The largest mappings by Rss ([rss, anonymous, name], bytes) and the Rss of the
    mappings of `weights` (resolved: assets/ holds symlinks), None when not mapped."""
    rows, cur = [], None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    parts = line.split()
                    cur = [0, 0, parts[5] if len(parts) > 5 else "[anon]"]
                    rows.append(cur)
                elif first == "Rss:" and cur:
                    cur[0] = int(line.split()[1]) * 1024
                elif first == "Anonymous:" and cur:
                    cur[1] = int(line.split()[1]) * 1024
    except OSError:
        return [], None
    target = os.path.realpath(weights) if weights else None
    mapped = [r[0] for r in rows if target and r[2] == target]
    rows.sort(key=lambda r: -r[0])
    return rows[:count], (sum(mapped) if mapped else None)


# ---------------------------------------------------------------- parameter counts

def safetensors_params(path):
    """Floating-point parameters by role: GEMM matrices, embeddings, vectors, unused."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    roles = {"matrices": 0, "embeddings": 0, "vectors": 0, "not loaded by coinfer": 0}
    for name, t in header.items():
        if name == "__metadata__" or not t["dtype"].startswith(("F", "BF")):
            continue  # e.g. MiniLM's I64 position_ids buffer
        count = math.prod(t["shape"])
        if name.startswith("pooler."):
            # BertModel's pooler: sentence-transformers loads it, coinfer does not
            roles["not loaded by coinfer"] += count
        elif len(t["shape"]) == 1:
            roles["vectors"] += count
        elif name.startswith("embeddings."):
            roles["embeddings"] += count
        else:
            roles["matrices"] += count
    return roles, ""


GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                10: "<Q", 11: "<q", 12: "<d"}
# ggml type: (elements per block, bytes per block), for the types this repository reads
GGML_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 8: (32, 34), 30: (1, 2)}


def gguf_params(path):
    """Parameters by role from the GGUF header's tensor infos (stdlib parse of GGUF v2/v3)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        pos = 0

        def take(fmt):
            nonlocal pos
            (v,) = struct.unpack_from(fmt, m, pos)
            pos += struct.calcsize(fmt)
            return v

        def string():
            nonlocal pos
            n = take("<Q")
            s = bytes(m[pos:pos + n]).decode("utf-8", "replace")
            pos += n
            return s

        def skip_value(vtype):
            nonlocal pos
            if vtype in GGUF_SCALARS:
                pos += struct.calcsize(GGUF_SCALARS[vtype])
            elif vtype == 8:
                n = take("<Q")  # not `pos += take(...)`: that adds to pos as it was before take
                pos += n
            elif vtype == 9:
                etype, count = take("<I"), take("<Q")
                if etype in GGUF_SCALARS:
                    pos += count * struct.calcsize(GGUF_SCALARS[etype])
                else:
                    for _ in range(count):
                        skip_value(etype)
            else:
                raise ValueError(f"{path}: GGUF value type {vtype}")

        if bytes(m[0:4]) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        pos = 4
        version = take("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version}")
        n_tensors, n_kv = take("<Q"), take("<Q")
        for _ in range(n_kv):
            string()
            skip_value(take("<I"))
        tensors = {}
        for _ in range(n_tensors):
            name = string()
            dims = [take("<Q") for _ in range(take("<I"))]
            ttype = take("<I")
            take("<Q")  # offset
            tensors[name] = (math.prod(dims), ttype)
    roles = {"matrices": 0, "embeddings": 0, "vectors": 0}
    for name, (count, ttype) in tensors.items():
        if name == "token_embd.weight":
            roles["embeddings"] += count
        elif name.endswith("norm.weight") or name.endswith(".bias"):
            roles["vectors"] += count
        else:
            roles["matrices"] += count
    note = ""
    if "token_embd.weight" in tensors:
        count, ttype = tensors["token_embd.weight"]
        per, size = GGML_BLOCKS.get(ttype, (0, 0))
        file_bytes = count // per * size if per else 0
        tied = "output.weight" not in tensors
        note = (f"token_embd {count:,} params ({file_bytes / MB:.1f} MB in the file, ggml type "
                f"{ttype}){'; the output head is tied to it' if tied else ''}")
    return roles, note


def params_of(path):
    if path is None or not os.path.exists(path):
        return None, ""
    return gguf_params(path) if path.endswith(".gguf") else safetensors_params(path)


# ---------------------------------------------------------------- coinfer-serve

def write_config(directory, case, lines, weights):
    path = os.path.join(directory, f"{case}.toml")
    body = ["[server]", 'host = "127.0.0.1"', "port = 0", "",
            "[compute]", "threads = 1", "",
            "[log]", 'level = "warn"', "",
            f"[models.{case.replace('.', '_')}]"]
    body += lines
    if weights:
        body.append(f"weights = {json.dumps(weights)}")
    with open(path, "w") as f:
        f.write("\n".join(body) + "\n")
    return path


def http_status(port, path, timeout=2.0):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp.status
    except OSError:
        return None


SENTENCE = "The quick brown fox jumps over the lazy dog."


def one_request(port, kind, model):
    """One ordinary request to the served model (200 expected)."""
    if kind in ("identity", "mlp"):
        width = 64 if kind == "mlp" else 4
        path = f"/v2/models/{model}/infer"
        body = {"inputs": [{"name": "INPUT0", "shape": [1, width], "datatype": "FP32",
                            "data": [float(i % 17) for i in range(width)]}]}
    elif kind == "sentence_embedding":
        path, body = "/v1/embeddings", {"model": model, "input": SENTENCE}
    else:
        path, body = "/v1/completions", {"model": model, "prompt": SENTENCE, "max_tokens": 8,
                                         "temperature": 0}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"{model}: POST {path}: HTTP {resp.status}: {data[:200]!r}")


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_coinfer(serve, directory, case, lines, weights, ready_timeout, tunables=None):
    config = write_config(directory, case, lines, weights)
    err_path = os.path.join(directory, f"{case}.stderr")
    with open(err_path, "w") as err:
        start = time.monotonic()
        env = dict(os.environ)
        if tunables:
            env["GLIBC_TUNABLES"] = tunables
        proc = subprocess.Popen([serve, "--config", config], stdout=subprocess.PIPE,
                                stderr=err, cwd=REPO, env=env)
    try:
        # The "listening on" line comes once the model is loaded (and, for the LLM, calibrated).
        line = b""
        while not line.endswith(b"\n"):
            left = ready_timeout - (time.monotonic() - start)
            if left <= 0 or proc.poll() is not None:
                break
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(proc.stdout.fileno(), 256)
                if not chunk:
                    break
                line += chunk
        text = line.decode(errors="replace").strip()
        if not text.startswith("listening on "):
            raise RuntimeError(f"{case}: no 'listening on' line (got {text!r}); stderr: "
                               + open(err_path).read()[-2000:])
        port = int(text.rsplit(":", 1)[1])
        while http_status(port, "/v2/health/ready") != 200:
            if proc.poll() is not None or time.monotonic() - start > ready_timeout:
                raise RuntimeError(f"{case}: not ready after {time.monotonic() - start:.0f} s; "
                                   "stderr: " + open(err_path).read()[-2000:])
            time.sleep(0.2)
        ready_s = time.monotonic() - start
        time.sleep(1.0)  # settle
        mem = read_proc(proc.pid, weights)
        mem["ready_s"] = round(ready_s, 2)
        kind = lines[0].split('"')[1]
        one_request(port, kind, case.replace(".", "_"))
        time.sleep(0.5)
        after = read_proc(proc.pid, weights)
        mem["after_request"] = {k: after[k] for k in ("VmRSS", "RssAnon", "RssFile", "VmHWM",
                                                      "weights_mapped")}
        return mem
    finally:
        stop(proc)


# ---------------------------------------------------------------- peers

ST_PEER = r"""
import json, os, sys
WEIGHTS = os.path.realpath(os.path.join(sys.argv[1], "model.safetensors"))
def mem():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[k] = int(v.split()[0]) * 1024
    mapped, inside = 0, False  # resident pages of model.safetensors, if mmap'd
    for line in open("/proc/self/smaps"):
        first = line.split(None, 1)[0]
        if "-" in first and not first.endswith(":"):
            parts = line.split()
            inside = len(parts) > 5 and parts[5] == WEIGHTS
        elif inside and first == "Rss:":
            mapped += int(line.split()[1]) * 1024
    out["weights_mapped"] = mapped
    return out
r = {"start": mem()}
import torch, sentence_transformers
torch.set_num_threads(1)
r["import"] = mem()
r["versions"] = {"torch": torch.__version__,
                 "sentence_transformers": sentence_transformers.__version__}
from sentence_transformers import SentenceTransformer
model = SentenceTransformer(sys.argv[1], device="cpu")
r["load"] = mem()
r["params"] = sum(p.numel() for p in model.parameters())
r["param_dtypes"] = sorted({str(p.dtype) for p in model.parameters()})
model.encode(["The quick brown fox jumps over the lazy dog."])
r["encode"] = mem()
print(json.dumps(r))
"""


def measure_sentence_transformers():
    proc = subprocess.run(["python3", "-c", ST_PEER, MINILM_DIR], capture_output=True,
                          text=True, timeout=600,
                          env=dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
                                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"))
    if proc.returncode != 0:
        raise RuntimeError("sentence-transformers peer failed: " + proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_llama_server(ready_timeout):
    port = free_port()
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen([LLAMA_SERVER, "-m", SMOLLM2, "--host", "127.0.0.1",
                                 "--port", str(port), "-t", "1", "-c", "512"],
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            while http_status(port, "/health") != 200:
                if proc.poll() is not None or time.monotonic() - start > ready_timeout:
                    err.seek(0)
                    raise RuntimeError("llama-server not ready: " + err.read().decode()[-2000:])
                time.sleep(0.2)
            time.sleep(1.0)
            return read_proc(proc.pid, SMOLLM2)
        finally:
            stop(proc)


# ---------------------------------------------------------------- report

def fmt(b):
    return f"{b / MB:,.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", default=os.path.join(REPO, "build", "coinfer-serve"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ready-timeout", type=float, default=180.0)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--no-malloc-probe", action="store_true",
                    help="skip the second start of each case with a fixed malloc mmap threshold")
    ap.add_argument("--cases", default="", help="comma-separated subset of the case names")
    ap.add_argument("--json", default=os.path.join(
        REPO, "bench", "results", time.strftime("model_memory-%Y%m%d-%H%M%S.json")))
    args = ap.parse_args()
    if not os.access(args.serve, os.X_OK):
        sys.exit(f"model_memory: {args.serve} is not built")
    wanted = set(filter(None, args.cases.split(",")))
    cases = [c for c in CASES if not wanted or c[0] in wanted or c[0] == "baseline"]

    notes, skipped = [], []
    runnable = []
    for name, lines, weights in cases:
        if weights and not os.path.exists(weights):
            skipped.append(name)
            notes.append(f"{name}: skipped, weights missing ({os.path.relpath(weights, REPO)})")
        else:
            runnable.append((name, lines, weights))

    results = {name: [] for name, _, _ in runnable}
    probe = {name: [] for name, _, _ in runnable}
    peers = {}
    with tempfile.TemporaryDirectory(prefix="coinfer-model-memory-") as directory:
        for rnd in range(args.rounds):
            for name, lines, weights in runnable:
                mem = measure_coinfer(args.serve, directory, name, lines, weights,
                                      args.ready_timeout)
                results[name].append(mem)
                print(json.dumps({"bench": "model_memory", "case": name, "round": rnd + 1,
                                  **{k: v for k, v in mem.items() if k not in BULKY},
                                  "Pss": mem["smaps_rollup"].get("Pss"),
                                  "Private_Dirty": mem["smaps_rollup"].get("Private_Dirty")}),
                      flush=True)
                if args.no_malloc_probe:
                    continue
                fixed = measure_coinfer(args.serve, directory, name, lines, weights,
                                        args.ready_timeout, FIXED_MMAP_THRESHOLD)
                probe[name].append(fixed)
                print(json.dumps({"bench": "model_memory", "case": name, "round": rnd + 1,
                                  "GLIBC_TUNABLES": FIXED_MMAP_THRESHOLD,
                                  **{k: fixed[k] for k in STATUS}}),
                      flush=True)
            if args.no_peers:
                continue
            if os.path.exists(MINILM):
                try:
                    st = measure_sentence_transformers()
                    peers.setdefault("sentence_transformers", []).append(st)
                    print(json.dumps({"bench": "model_memory_peer", "peer": "sentence-transformers",
                                      "round": rnd + 1, **st}), flush=True)
                except Exception as e:  # noqa: BLE001 - a missing peer is a note, not a failure
                    if rnd == 0:
                        notes.append(f"sentence-transformers: {str(e)[:300]}")
            if os.path.exists(LLAMA_SERVER) and os.path.exists(SMOLLM2):
                try:
                    ls = measure_llama_server(args.ready_timeout)
                    peers.setdefault("llama_server", []).append(ls)
                    print(json.dumps({"bench": "model_memory_peer", "peer": "llama-server",
                                      "round": rnd + 1,
                                      **{k: v for k, v in ls.items() if k not in BULKY}}),
                          flush=True)
                except Exception as e:  # noqa: BLE001
                    if rnd == 0:
                        notes.append(f"llama-server: {str(e)[:300]}")
    if not args.no_peers and not os.path.exists(LLAMA_SERVER):
        notes.append(f"llama-server: not measured, {LLAMA_SERVER} does not exist (not built)")

    def med(name, key):
        return statistics.median(m[key] for m in results[name])

    def med_opt(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    def opt(b):
        return "—" if b is None else fmt(b)

    base_rss = med("baseline", "VmRSS") if "baseline" in results else None
    base_fixed = med_opt(m["VmRSS"] for m in probe.get("baseline", []))
    rows = []
    table = ["| case | RSS | RssAnon | RssFile | VmHWM (load peak) | RSS − baseline | "
             "weights file | params | INT8 copy (1 B/param) | FP32 copy (4 B/param) | "
             "RSS per round |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    more_table = ["| case | weights file pages resident (still mmap'd) | RSS after 1 request | "
                  "RSS, mmap threshold fixed at 128 KiB | its − baseline | load-time memory "
                  "malloc kept |",
                  "|---|---:|---:|---:|---:|---:|"]
    role_table = ["| weights | GEMM matrices | embeddings | vectors | other | note |",
                  "|---|---:|---:|---:|---:|---|"]
    seen_files = set()
    for name, _, weights in runnable:
        roles, note = params_of(weights)
        params = sum(v for k, v in roles.items() if k != "not loaded by coinfer") if roles else None
        size = os.path.getsize(weights) if weights else None
        rss = med(name, "VmRSS")
        mapped = med_opt(m["weights_mapped"] for m in results[name])
        after = med_opt(m["after_request"]["VmRSS"] for m in results[name])
        fixed = med_opt(m["VmRSS"] for m in probe[name])
        row = {"case": name, "weights": os.path.relpath(weights, REPO) if weights else None,
               "weights_bytes": size, "weights_mapped": mapped, "params": params,
               "roles": roles, **{k: med(name, k) for k in STATUS},
               "rss_minus_baseline": rss - base_rss if base_rss is not None else None,
               "rss_after_request": after, "rss_fixed_mmap_threshold": fixed,
               "rounds": results[name], "rounds_fixed_mmap_threshold": probe[name]}
        rows.append(row)
        table.append("| " + " | ".join([
            name, fmt(rss), fmt(row["RssAnon"]), fmt(row["RssFile"]), fmt(row["VmHWM"]),
            "—" if name == "baseline" or base_rss is None else fmt(rss - base_rss),
            opt(size), f"{params / 1e6:.2f} M" if params else "—",
            fmt(params) if params else "—", fmt(4 * params) if params else "—",
            " / ".join(fmt(m["VmRSS"]) for m in results[name])]) + " |")
        more_table.append("| " + " | ".join([
            name, ("not mapped" if weights else "—") if mapped is None else fmt(mapped),
            opt(after), opt(fixed),
            "—" if name == "baseline" or fixed is None or base_fixed is None
            else fmt(fixed - base_fixed),
            "—" if fixed is None else fmt(rss - fixed)]) + " |")
        if roles and weights not in seen_files:
            seen_files.add(weights)
            other = roles.get("not loaded by coinfer", 0)
            role_table.append("| " + " | ".join([
                os.path.relpath(weights, ASSETS), f"{roles['matrices']:,}",
                f"{roles['embeddings']:,}", f"{roles['vectors']:,}",
                f"{other:,} (pooler, not loaded by coinfer)" if other else "0",
                note or "—"]) + " |")

    peer_table = []
    if peers.get("sentence_transformers"):
        st = peers["sentence_transformers"]
        v = st[0]["versions"]
        peer_table += [f"sentence-transformers {v['sentence_transformers']}, torch {v['torch']} "
                       f"(CPU, 1 thread; {st[0]['params']:,} params, "
                       f"{', '.join(st[0]['param_dtypes'])}):",
                       "",
                       "| point | RSS | RssAnon | RssFile | model.safetensors pages resident "
                       "(mmap'd) | RSS per round |",
                       "|---|---:|---:|---:|---:|---|"]
        for point, label in (("import", "after `import torch, sentence_transformers`"),
                             ("load", "after loading all-MiniLM-L6-v2"),
                             ("encode", "after one encode() of one sentence")):
            vals = {k: statistics.median(r[point][k] for r in st)
                    for k in ("VmRSS", "RssAnon", "RssFile", "weights_mapped")}
            peer_table.append(f"| {label} | {fmt(vals['VmRSS'])} | {fmt(vals['RssAnon'])} | "
                              f"{fmt(vals['RssFile'])} | {fmt(vals['weights_mapped'])} | "
                              + " / ".join(fmt(r[point]["VmRSS"]) for r in st) + " |")
        for point, label in (("load", "loading the model"), ("encode", "loading + one encode()")):
            d = {k: statistics.median(r[point][k] - r["import"][k] for r in st)
                 for k in ("VmRSS", "RssAnon", "RssFile")}
            peer_table.append(f"\n{label} adds {fmt(d['VmRSS'])} MB RSS over the imports "
                              f"({fmt(d['RssAnon'])} MB anonymous, {fmt(d['RssFile'])} MB file).")
    if peers.get("llama_server"):
        ls = peers["llama_server"]
        vals = {k: statistics.median(r[k] for r in ls) for k in STATUS}
        mapped = med_opt(r["weights_mapped"] for r in ls)
        peer_table += ["", "llama-server (same GGUF, -c 512, -t 1): RSS " + fmt(vals["VmRSS"])
                       + f" MB (RssAnon {fmt(vals['RssAnon'])}, RssFile {fmt(vals['RssFile'])}, "
                       f"GGUF pages resident {opt(mapped)}, VmHWM {fmt(vals['VmHWM'])})"]

    report = {"bench": "model_memory_summary", "serve": args.serve,
              "serve_mtime": time.strftime("%Y-%m-%d %H:%M:%S",
                                           time.gmtime(os.path.getmtime(args.serve))),
              "rounds": args.rounds, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "cases": rows, "skipped": skipped, "peers": peers, "notes": notes}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)

    print()
    print(f"MB = 10^6 bytes; medians of {args.rounds} round(s); idle servers (no request served) "
          "unless said; LLM cases with kv_cache_mib = 8.")
    print()
    print("\n".join(table))
    print()
    print("\n".join(more_table))
    print()
    print("Parameters by role (floating-point tensors of the file):")
    print()
    print("\n".join(role_table))
    if peer_table:
        print()
        print("\n".join(peer_table))
    for n in notes:
        print(f"note: {n}")
    print(f"(all figures: {os.path.relpath(args.json, REPO)})")


if __name__ == "__main__":
    main()
