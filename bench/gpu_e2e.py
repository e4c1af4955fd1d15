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


def start_server(binary, config, log_path):
    """(process, "HOST:PORT") once coinfer-serve printed its listening line; its log (stderr)
    goes to log_path, whose end is shown if it does not come up."""
    log = open(log_path, "w+")
    proc = subprocess.Popen([binary, "--config", config, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline().strip()
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
    p.add_argument("--max-batch", type=int, default=64)
    p.add_argument("--concurrency", default="64,256")
    p.add_argument("--duration-s", type=float, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tolerance", type=float, default=1e-3)
    a = p.parse_args()
    # A timeout's SIGTERM still runs the `finally` below, which stops the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    weights = os.path.join(ROOT, "assets", "digits_mlp", "model.safetensors")
    x, y = load_split(os.path.join(ROOT, "assets", "digits_mlp", "test_split.safetensors"))
    models = {"digits_cpu": "cpu", "digits_cuda": a.device}
    config = f"""
[server]
io_threads = {a.io_threads}
[log]
level = "warn"
[compute]
threads = {a.compute_threads}
"""
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
    for c in (int(v) for v in a.concurrency.split(",")):
        cpu, gpu = best.get(("digits_cpu", c), 0.0), best.get(("digits_cuda", c), 0.0)
        ratio = gpu / cpu if cpu else 0.0
        print(f"e2e_ratio concurrency={c} cpu_rps={cpu:.0f} cuda_rps={gpu:.0f} "
              f"cuda_over_cpu={ratio:.2f}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
