"""End-to-end digits MLP on the CUDA executor vs the CPU executor, in one coinfer-serve process.

One server serves the same weights twice: `digits_cpu` (device "cpu", the CpuExecutor and
oneDNN) and `digits_cuda` (device "cuda:0", the CudaExecutor and cuBLASLt), so both share the
I/O threads, the decoder and the batcher, and differ only in the executor. It then

1. sends every held-out digit (assets/digits_mlp/test_split.safetensors) to both models and
   compares: labels must agree, probabilities within --tolerance (the same INT8 scheme; FP32
   rounding order differs);
2. runs coinfer-loadgen closed loop at each --concurrency against each model, interleaved
   over --rounds rounds, and prints requests/s, p50/p99 and the mean batch from /metrics.

Output is one `key=value` line per result (scripts/gpu_check greps them). Standard library
only, so it runs on a GPU machine with nothing installed:

    python3 bench/gpu_e2e.py --serve BIN/coinfer-serve --loadgen BIN/coinfer-loadgen

MiniLM mode (`--model minilm --weights DIR`, DIR an all-MiniLM-L6-v2 directory with an F32
model.safetensors, e.g. from scripts/gpu_minilm_unpack): the server serves DIR twice as
`minilm_cpu` and `minilm_cuda` (kind sentence_embedding, INT8, same I/O threads and batcher
settings), and the script

1. embeds every text of tests/fixtures/minilm/reference.json on both through OpenAI's
   /v1/embeddings (with "truncate": true: long texts are cut at 256 tokens as
   sentence-transformers does) and checks min cosine >= --min-cosine-devices (0.998) between
   the devices; >= --min-cosine-reference (0.99) against the fixture's stored
   sentence-transformers vectors (made from the original FP32 weights) and, when
   `sentence_transformers` imports, against sentence-transformers run here on DIR (on CUDA if
   torch has it); min and mean are printed;
2. runs coinfer-loadgen closed loop at each --concurrency (16,64) against each model,
   interleaved over --rounds rounds, each request --texts-per-request (4) of the benchmark
   sentences (minilm_bench_sentences(): bench/embedding_sentences.py, seed 20240601);
3. when torch has CUDA (or --peer cpu), times sentence-transformers' own encode() on those
   sentences at --peer-batch (64), FP32 and FP16: `peer=sentence-transformers ...`.

Any error (an HTTP error, a failed check, loadgen errors) is printed as an `e2e error` line
(or `... FAILED`) and the exit status is 1. The digits mode's behaviour and output are
unchanged.
"""

import argparse
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def server_config(a):
    """The [server], [log] and [compute] sections both modes serve their two models under."""
    return f"""
[server]
io_threads = {a.io_threads}
[log]
level = "warn"
[compute]
threads = {a.compute_threads}
"""


def start_server(binary, config, log_path):
    """(process, "HOST:PORT") once coinfer-serve printed its listening line; its log (stderr)
    goes to log_path, whose end is shown if it does not come up."""
    log = open(log_path, "w+")
    proc = subprocess.Popen([binary, "--config", config, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        line = proc.stdout.readline().strip()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    prefix = "listening on http://"
    if not line.startswith(prefix):
        proc.kill()
        proc.wait()
        log.seek(0)
        raise SystemExit(f"coinfer-serve did not start (first line {line!r}); its log ends:\n"
                         + log.read()[-1500:])
    return proc, line[len(prefix):]


def stop_server(proc):
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def load_split(path):
    """x: list of 64-float rows, y: list of labels, from the safetensors file."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    def tensor(name, fmt, size):
        begin, end = header[name]["data_offsets"]
        count = (end - begin) // size
        return list(struct.unpack(f"<{count}{fmt}", data[begin:end])), header[name]["shape"]
    x, shape = tensor("x", "f", 4)
    y, _ = tensor("y", "q", 8)
    k = shape[1]
    return [x[i * k:(i + 1) * k] for i in range(shape[0])], y


def infer(address, model, row):
    body = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, len(row)],
                                   "datatype": "FP32", "data": row}]}).encode()
    req = urllib.request.Request(f"http://{address}/v2/models/{model}/infer", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            outputs = {o["name"]: o["data"] for o in json.loads(r.read())["outputs"]}
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{model}: HTTP {e.code}: {e.read().decode(errors='replace')[:500]}")
    return outputs["probabilities"], outputs["label"][0]


def metric(address, name, model):
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        text = r.read().decode()
    m = re.search(rf'^{name}\{{model="{model}"[^}}]*\}} ([0-9.e+]+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--serve", required=True)
    p.add_argument("--loadgen", required=True)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--io-threads", type=int, default=4)
    p.add_argument("--compute-threads", type=int, default=8)
    p.add_argument("--loadgen-threads", type=int, default=4)
    p.add_argument("--cuda-streams", type=int, default=2)
    p.add_argument("--max-batch", type=int, default=None,
                   help="rows (digits) or texts (minilm) per batch; default 64 / 128")
    p.add_argument("--concurrency", default=None, help="default 64,256 (digits), 16,64 (minilm)")
    p.add_argument("--duration-s", type=float, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tolerance", type=float, default=1e-3)
    p.add_argument("--model", choices=("digits", "minilm"), default="digits")
    m = p.add_argument_group("minilm")
    m.add_argument("--weights", default=os.path.join(ROOT, "assets", "all-MiniLM-L6-v2"),
                   help="the model directory (model.safetensors F32, vocab.txt, ...)")
    m.add_argument("--max-batch-tokens", type=int, default=16384)
    m.add_argument("--queue-delay-us", type=int, default=0)
    m.add_argument("--texts-per-request", type=int, default=4)
    m.add_argument("--min-cosine-devices", type=float, default=0.998)
    m.add_argument("--min-cosine-reference", type=float, default=0.99)
    m.add_argument("--peer", choices=("auto", "cuda", "cpu", "off"), default="auto",
                   help="sentence-transformers throughput: auto = on CUDA when torch has it")
    m.add_argument("--peer-batch", type=int, default=64)
    m.add_argument("--peer-seconds", type=float, default=3)
    m.add_argument("--server-log", help="copy the server's log (stderr) to this file at the end")
    a = p.parse_args()
    # A timeout's SIGTERM still runs the `finally` below, which stops the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if a.model == "minilm":
        return minilm_main(a)
    a.concurrency = a.concurrency or "64,256"
    a.max_batch = a.max_batch or 64

    weights = os.path.join(ROOT, "assets", "digits_mlp", "model.safetensors")
    x, y = load_split(os.path.join(ROOT, "assets", "digits_mlp", "test_split.safetensors"))
    models = {"digits_cpu": "cpu", "digits_cuda": a.device}
    config = server_config(a)
    for name, device in models.items():
        config += f"""
[models.{name}]
kind = "mlp"
weights = "{weights}"
device = "{device}"
max_batch_size = {a.max_batch}
max_queue_delay_us = 2000
"""
        if device != "cpu":
            config += f"cuda_streams = {a.cuda_streams}\n"
    with tempfile.TemporaryDirectory() as tmp:
        config_path = os.path.join(tmp, "gpu_e2e.toml")
        with open(config_path, "w") as f:
            f.write(config)
        proc, address = start_server(a.serve, config_path, os.path.join(tmp, "serve.log"))
        try:
            ok = check(address, x, y, a.tolerance)
            body_path = os.path.join(tmp, "body.json")
            with open(body_path, "w") as f:
                json.dump({"inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32",
                                       "data": x[0]}]}, f)
            ok = load(a, address, body_path) and ok
        finally:
            stop_server(proc)
    return 0 if ok else 1


def check(address, x, y, tolerance):
    results = {}
    for model in ("digits_cpu", "digits_cuda"):
        results[model] = [infer(address, model, row) for row in x]
    agree = sum(c[1] == g[1] for c, g in zip(results["digits_cpu"], results["digits_cuda"]))
    worst = max(abs(pc - pg) for (c, _), (g, _) in zip(results["digits_cpu"], results["digits_cuda"])
                for pc, pg in zip(c, g))
    for model, r in results.items():
        correct = sum(label == expected for (_, label), expected in zip(r, y))
        print(f"e2e_accuracy model={model} rows={len(y)} correct={correct} "
              f"accuracy={correct / len(y):.4f}")
    ok = agree == len(y) and worst <= tolerance
    print(f"e2e_check rows={len(y)} labels_agree={agree} max_prob_diff={worst:.2e} "
          f"tolerance={tolerance:g} {'ok' if ok else 'FAILED'}")
    return ok


def load(a, address, body_path):
    ok = True
    best = {}
    for rnd in range(1, a.rounds + 1):
        for c in (int(v) for v in a.concurrency.split(",")):
            for model in ("digits_cpu", "digits_cuda"):
                execs = metric(address, "coinfer_inference_exec_count_total", model)
                rows = metric(address, "coinfer_inference_count_total", model)
                out = subprocess.run(
                    [a.loadgen, "--url", f"http://{address}/v2/models/{model}/infer",
                     "--body-file", body_path, "--mode", "closed", "--concurrency", str(c),
                     "--threads", str(a.loadgen_threads), "--duration-s", str(a.duration_s),
                     "--warmup-s", "1", "--json"],
                    capture_output=True, text=True, timeout=a.duration_s * 4 + 60)
                if out.returncode != 0:
                    print(f"e2e error model={model} concurrency={c} rc={out.returncode} "
                          f"stderr=\"{out.stderr.strip()[-300:]}\"")
                    ok = False
                    continue
                r = json.loads(out.stdout)
                execs = metric(address, "coinfer_inference_exec_count_total", model) - execs
                rows = metric(address, "coinfer_inference_count_total", model) - rows
                mean_batch = rows / execs if execs else 0.0
                rps = r["throughput_rps"]
                best[(model, c)] = max(best.get((model, c), 0.0), rps)
                print(f"e2e model={model} device={'cpu' if model == 'digits_cpu' else a.device} "
                      f"concurrency={c} round={rnd} rps={rps:.0f} "
                      f"p50_us={r['latency_us']['p50']} p99_us={r['latency_us']['p99']} "
                      f"errors={r['errors']} mean_batch={mean_batch:.1f}")
                ok = ok and r["errors"] == 0
                if not r.get("ok"):
                    print(f"e2e error model={model} concurrency={c} no request completed "
                          f"within --duration-s {a.duration_s:g}")
                    ok = False
    for c in (int(v) for v in a.concurrency.split(",")):
        cpu, gpu = best.get(("digits_cpu", c), 0.0), best.get(("digits_cuda", c), 0.0)
        ratio = gpu / cpu if cpu else 0.0
        print(f"e2e_ratio concurrency={c} cpu_rps={cpu:.0f} cuda_rps={gpu:.0f} "
              f"cuda_over_cpu={ratio:.2f}")
    return ok


# --- MiniLM (kind sentence_embedding) -------------------------------------------------------

MINILM_BENCH_SEED = 20240601   # bench/embedding_sentences.py's default seed
MINILM_BENCH_COUNT = 512


def minilm_bench_sentences():
    """The benchmark sentences: the first MINILM_BENCH_COUNT lines that
    `bench/embedding_sentences.py N FILE` writes with its default seed (5..60 words each).
    scripts/gpu_minilm_pack keeps the word-embedding rows of their token ids."""
    import random
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from embedding_sentences import sentence
    rng = random.Random(MINILM_BENCH_SEED)
    return [sentence(rng) for _ in range(MINILM_BENCH_COUNT)]


class E2EError(Exception):
    pass


def embed(address, model, texts):
    """The served vectors of texts (one request, "truncate": true) from /v1/embeddings."""
    body = json.dumps({"model": model, "input": texts, "truncate": True}).encode()
    req = urllib.request.Request(f"http://{address}/v1/embeddings", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            reply = json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise E2EError(f"{model}: HTTP {e.code} from /v1/embeddings: "
                       f"{e.read().decode(errors='replace')[:500]}")
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise E2EError(f"{model}: /v1/embeddings failed: {type(e).__name__}: {e}")
    data = sorted(reply.get("data", []), key=lambda d: d.get("index", -1))
    if [d.get("index") for d in data] != list(range(len(texts))):
        raise E2EError(f"{model}: /v1/embeddings returned {len(data)} vectors for {len(texts)} texts")
    vectors = [d["embedding"] for d in data]
    for v in vectors:
        if len(v) != 384 or any(x != x or abs(x) == float("inf") for x in v):
            raise E2EError(f"{model}: a vector of {len(v)} values, or with NaN/Inf")
    return vectors


def cosine(u, v):
    dot = sum(x * y for x, y in zip(u, v))
    nu = sum(x * x for x in u) ** 0.5
    nv = sum(y * y for y in v) ** 0.5
    return dot / (nu * nv) if nu and nv else 0.0


def report_cosines(label, us, vs, threshold, note=""):
    cos = [cosine(u, v) for u, v in zip(us, vs)]
    ok = min(cos) >= threshold
    print(f"e2e_check_minilm pair={label} texts={len(cos)} min_cos={min(cos):.6f} "
          f"mean_cos={sum(cos) / len(cos):.6f} threshold={threshold:g} "
          f"{'ok' if ok else 'FAILED'}{' ' + note if note else ''}", flush=True)
    return ok


def load_sentence_transformers(weights_dir, want_peer):
    """(SentenceTransformer or None, device, note). None with a note when the package does not
    import; any other failure is an E2EError."""
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                 ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)
    try:
        import torch
        import sentence_transformers
        from sentence_transformers import SentenceTransformer
    except ModuleNotFoundError as e:
        return None, None, f"not importable ({e})"
    except Exception as e:  # a broken install: say so, and fail
        raise E2EError(f"sentence-transformers does not import: {type(e).__name__}: {e}")
    try:
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
    except Exception:
        pass
    device = "cpu"
    if want_peer == "cuda" or (want_peer == "auto" and torch.cuda.is_available()):
        device = "cuda"
    try:
        model = SentenceTransformer(weights_dir, device=device)
    except Exception as e:
        raise E2EError(f"sentence-transformers could not load {weights_dir} on {device}: "
                       f"{type(e).__name__}: {e}")
    cuda = torch.cuda.get_device_name(0) if device == "cuda" else ""
    note = (f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"
            f", device {device}{' (' + cuda + ')' if cuda else ''}")
    return model, device, note


def minilm_check(a, address, texts, ids, reference, st):
    """Every fixture text through both models; cosines between the devices, to the fixture's
    vectors and to sentence-transformers here. True when every check passes. Texts that
    tokenize to nothing ("", whitespace: [CLS] [SEP] only), which /v1/embeddings refuses as
    empty, go as their token ids."""
    served = {}
    plain = [i for i in range(len(texts)) if len(ids[i]) > 2]
    as_ids = [i for i in range(len(texts)) if len(ids[i]) <= 2]
    for model in ("minilm_cpu", "minilm_cuda"):
        vectors = {}
        for j in range(0, len(plain), 16):
            chunk = plain[j:j + 16]
            vectors.update(zip(chunk, embed(address, model, [texts[i] for i in chunk])))
        if as_ids:
            vectors.update(zip(as_ids, embed(address, model, [ids[i] for i in as_ids])))
        served[model] = [vectors[i] for i in range(len(texts))]
    if as_ids:
        print(f"e2e_check_minilm note: texts {as_ids} (empty or blank) sent as token ids")
    ok = report_cosines("cpu_vs_cuda", served["minilm_cpu"], served["minilm_cuda"],
                        a.min_cosine_devices, f"(device {a.device})")
    for model in ("minilm_cuda", "minilm_cpu"):
        ok = report_cosines(f"{model}_vs_fixture", served[model], reference,
                            a.min_cosine_reference,
                            "(fixture: sentence-transformers on the original FP32 weights)") and ok
    model, device, note = st
    if model is None:
        print(f"e2e_check_minilm pair=*_vs_sentence_transformers skipped: {note}")
        return ok
    try:
        vectors = model.encode(texts, batch_size=16, convert_to_numpy=True,
                               show_progress_bar=False).tolist()
    except Exception as e:
        raise E2EError(f"sentence-transformers encode failed: {type(e).__name__}: {e}")
    for served_model in ("minilm_cuda", "minilm_cpu"):
        ok = report_cosines(f"{served_model}_vs_sentence_transformers", served[served_model],
                            vectors, a.min_cosine_reference, f"({note}, on {a.weights})") and ok
    return ok


def run_loadgen(a, address, model, url_path, body_args, c):
    """(loadgen's JSON result, mean batch from /metrics) or (None, error text)."""
    execs = metric(address, "coinfer_inference_exec_count_total", model)
    rows = metric(address, "coinfer_inference_count_total", model)
    try:
        out = subprocess.run(
            [a.loadgen, "--url", f"http://{address}{url_path}", *body_args, "--mode", "closed",
             "--concurrency", str(c), "--threads", str(a.loadgen_threads),
             "--duration-s", str(a.duration_s), "--warmup-s", "1", "--json"],
            capture_output=True, text=True, timeout=a.duration_s * 4 + 60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{type(e).__name__}: {e}"
    if out.returncode != 0:
        return None, f"rc={out.returncode} stderr=\"{out.stderr.strip()[-300:]}\""
    try:
        r = json.loads(out.stdout)
    except ValueError:
        return None, f"unreadable output \"{out.stdout.strip()[-300:]}\""
    execs = metric(address, "coinfer_inference_exec_count_total", model) - execs
    rows = metric(address, "coinfer_inference_count_total", model) - rows
    return r, rows / execs if execs else 0.0


def minilm_load(a, address, tmp, sentences):
    """coinfer-loadgen closed loop on /v1/embeddings, --texts-per-request sentences per request
    (the requests cycle through the sentences). Returns (ok, best sentences/s per model)."""
    k = a.texts_per_request
    bodies = {}
    for model in ("minilm_cpu", "minilm_cuda"):
        bodies[model] = os.path.join(tmp, f"bodies_{model}.jsonl")
        with open(bodies[model], "w") as f:
            for i in range(0, len(sentences) - k + 1, k):
                f.write(json.dumps({"model": model, "input": sentences[i:i + k]}) + "\n")
    ok = True
    best = {}
    for rnd in range(1, a.rounds + 1):
        for c in (int(v) for v in a.concurrency.split(",")):
            for model in ("minilm_cpu", "minilm_cuda"):
                r, extra = run_loadgen(a, address, model, "/v1/embeddings",
                                       ["--body-lines", bodies[model]], c)
                device = "cpu" if model == "minilm_cpu" else a.device
                if r is None:
                    print(f"e2e error model={model} concurrency={c} round={rnd} loadgen {extra}",
                          flush=True)
                    ok = False
                    continue
                rps = r["ok"] / r["duration_s"] if r.get("duration_s") else r["throughput_rps"]
                best[(model, c)] = max(best.get((model, c), 0.0), rps)
                print(f"e2e model={model} device={device} concurrency={c} round={rnd} "
                      f"rps={rps:.0f} sentences_per_s={rps * k:.0f} "
                      f"p50_us={r['latency_us']['p50']} p99_us={r['latency_us']['p99']} "
                      f"errors={r['errors']} mean_batch={extra:.1f}", flush=True)
                if r["errors"]:
                    print(f"e2e error model={model} concurrency={c} round={rnd} "
                          f"errors={r['errors']} by_status={json.dumps(r.get('errors_by_status', {}))}",
                          flush=True)
                    ok = False
                if not r.get("ok"):
                    print(f"e2e error model={model} concurrency={c} round={rnd} no request "
                          f"completed within --duration-s {a.duration_s:g}", flush=True)
                    ok = False
    best_cuda = 0.0
    for c in (int(v) for v in a.concurrency.split(",")):
        cpu, gpu = best.get(("minilm_cpu", c), 0.0), best.get(("minilm_cuda", c), 0.0)
        ratio = gpu / cpu if cpu else 0.0
        best_cuda = max(best_cuda, gpu * k)
        print(f"e2e_ratio model=minilm concurrency={c} texts_per_request={k} cpu_rps={cpu:.0f} "
              f"cuda_rps={gpu:.0f} cuda_over_cpu={ratio:.2f}")
    return ok, best_cuda


def minilm_peer(a, st, sentences, best_cuda):
    """sentence-transformers' own encode() throughput on the benchmark sentences, FP32 then FP16."""
    model, device, note = st
    if a.peer == "off":
        return True
    if model is None:
        print(f"peer=sentence-transformers skipped: {note}")
        return True
    if a.peer == "auto" and device != "cuda":
        print("peer=sentence-transformers skipped: torch has no CUDA device (--peer cpu forces it)")
        return True
    import time
    import torch
    results = {}
    try:
        for dtype in ("fp32", "fp16"):
            if dtype == "fp16":
                if device != "cuda":
                    break
                model.half()
            model.encode(sentences[:2 * a.peer_batch], batch_size=a.peer_batch,
                         show_progress_bar=False)  # warm-up
            if device == "cuda":
                torch.cuda.synchronize()
            n, started = 0, time.perf_counter()
            while True:
                model.encode(sentences, batch_size=a.peer_batch, convert_to_numpy=True,
                             show_progress_bar=False)
                n += len(sentences)
                elapsed = time.perf_counter() - started
                if elapsed >= a.peer_seconds:
                    break
            results[dtype] = n / elapsed
            print(f"peer=sentence-transformers device={device} dtype={dtype} batch={a.peer_batch} "
                  f"sentences={len(sentences)} seconds={elapsed:.2f} "
                  f"sentences_per_s={n / elapsed:.0f} ({note})", flush=True)
    except Exception as e:
        print(f"e2e error peer=sentence-transformers {type(e).__name__}: {e}")
        return False
    for dtype, rate in results.items():
        print(f"e2e_peer_ratio coinfer_cuda_sentences_per_s={best_cuda:.0f} (HTTP, best concurrency) "
              f"st_{device}_{dtype}_sentences_per_s={rate:.0f} (in process) "
              f"coinfer_over_st={best_cuda / rate if rate else 0:.2f}")
    return True


def minilm_main(a):
    a.concurrency = a.concurrency or "16,64"
    a.max_batch = a.max_batch or 128
    a.weights = os.path.abspath(a.weights)
    weights = os.path.join(a.weights, "model.safetensors")
    if not os.path.isfile(weights):
        print(f"e2e error: {weights} not found (scripts/gpu_minilm_unpack DIR writes one)")
        return 1
    with open(os.path.join(ROOT, "tests", "fixtures", "minilm", "reference.json")) as f:
        cases = json.load(f)["cases"]
    texts = [c["text"] for c in cases]
    ids = [c["ids"] for c in cases]
    reference = [c["embedding"] for c in cases]
    sentences = minilm_bench_sentences()
    models = {"minilm_cpu": "cpu", "minilm_cuda": a.device}
    config = server_config(a)
    for name, device in models.items():
        config += f"""
[models.{name}]
kind = "sentence_embedding"
weights = "{weights}"
device = "{device}"
max_batch_size = {a.max_batch}
max_batch_tokens = {a.max_batch_tokens}
max_queue_delay_us = {a.queue_delay_us}
max_input_tokens = 256
"""
        if device != "cpu":
            config += f"cuda_streams = {a.cuda_streams}\n"
    print(f"e2e_setup model=minilm weights={a.weights} device={a.device} io_threads={a.io_threads} "
          f"compute_threads={a.compute_threads} max_batch={a.max_batch} "
          f"max_batch_tokens={a.max_batch_tokens} max_queue_delay_us={a.queue_delay_us} "
          f"cuda_streams={a.cuda_streams} texts={len(texts)} sentences={len(sentences)}", flush=True)
    ok = True
    st = (None, None, "not loaded")
    with tempfile.TemporaryDirectory() as tmp:
        config_path = os.path.join(tmp, "gpu_e2e.toml")
        with open(config_path, "w") as f:
            f.write(config)
        log_path = os.path.join(tmp, "serve.log")
        try:
            proc, address = start_server(a.serve, config_path, log_path)
        except SystemExit as e:
            print(f"e2e error: {e}")
            return 1
        try:
            try:
                st = load_sentence_transformers(a.weights, a.peer)
            except E2EError as e:  # reported; the served checks and the load still run
                print(f"e2e error: {e}", flush=True)
                st = (None, None, "failed to load (see the error above)")
                ok = False
            ok = minilm_check(a, address, texts, ids, reference, st) and ok
            load_ok, best_cuda = minilm_load(a, address, tmp, sentences)
            ok = load_ok and ok
        except E2EError as e:
            print(f"e2e error: {e}")
            ok = False
            best_cuda = 0.0
        finally:
            stop_server(proc)
            if proc.returncode not in (0, -signal.SIGTERM):
                print(f"e2e error: coinfer-serve exited with {proc.returncode}")
                ok = False
            if a.server_log:
                import shutil
                shutil.copyfile(log_path, a.server_log)
            if not ok:
                with open(log_path, errors="replace") as f:
                    tail = f.read()[-1500:]
                print("e2e server log ends:\n" + (tail or "(empty)"))
    if ok:  # the peer's figures mean little next to failed checks: skipped then
        try:
            ok = minilm_peer(a, st, sentences, best_cuda) and ok
        except E2EError as e:
            print(f"e2e error: {e}")
            ok = False
    print(f"e2e_result model=minilm {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
