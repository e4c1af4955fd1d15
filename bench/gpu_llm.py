#!/usr/bin/env python3
"""The language model on the GPU, served end to end, and its benchmark against transformers.

Starts coinfer-serve with SmolLM2 (kind "llm") on --device (default cuda:0) and runs, over
real sockets:

  stream      a streaming chat completion: SSE chunks with text, a finish_reason, [DONE]
  cancel      a streaming completion of 4,000 tokens dropped after a few events: the
              running gauge (coinfer_num_requests_running) is back to 0 within 5 s
  concurrent  --concurrent (256) streaming completions at once, 64 tokens each with
              ignore_eos: every one 200 with 64 tokens and [DONE]
  preemption  a second server whose KV cache is --small-kv-mib (8: 22 blocks of 16 tokens)
              runs 16 concurrent 160-token completions: all finish with 160 tokens, and
              /metrics counts preemptions

then the benchmark (bench/llm_bench.py, streaming /v1/completions, 128 greedy tokens with
ignore_eos, 200-token prompts) at --concurrency (1,8,16,64,256): tokens/s, TTFT and ITL.
The peer, when torch has CUDA and transformers imports: transformers' generate() in FP16 on
the same GPU with SmolLM2's architecture (LlamaConfig from the GGUF's shape; random weights,
as the time of a forward does not depend on them), batch 1 and 64, 200-token prompts, 128
new tokens (min_new_tokens = max_new_tokens): `peer=transformers ...` lines.

Standard library only for the served part, so it runs on a GPU machine with nothing
installed. `--device cpu` runs the same checks on the CPU runner (how this script is tested
on a machine without a GPU). Output: one `key=value` line per result; exit status 1 if a
check failed.

    python3 bench/gpu_llm.py --serve BIN/coinfer-serve --gguf assets/SmolLM2-135M-Instruct.Q4_1.gguf
"""

import argparse
import http.client
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
failed = []


def report(key, **fields):
    print(key + " " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)


def check(name, ok, detail=""):
    report(f"llm_served {name}", result="ok" if ok else "FAILED", detail=json.dumps(detail))
    if not ok:
        failed.append(name)


class Server:
    """coinfer-serve on a config of our own, stopped on exit."""

    def __init__(self, serve, gguf, device, port, extra=""):
        self.port = port
        self.dir = tempfile.TemporaryDirectory()
        config = Path(self.dir.name) / "llm.toml"
        config.write_text(
            f'[server]\nhost = "127.0.0.1"\nport = {port}\n'
            '[log]\nlevel = "warn"\n'
            "[models.smollm2]\n"
            f'kind = "llm"\nweights = "{gguf}"\ndevice = "{device}"\n'
            "max_queue_size = 4096\nprefix_caching = false\n" + extra)
        self.log = open(Path(self.dir.name) / "serve.log", "w+")
        self.proc = subprocess.Popen([serve, "--config", str(config)], stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + 240
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("coinfer-serve exited: " + self.tail())
            try:
                if self.get("/v2/health/ready")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError("coinfer-serve not ready in 240 s: " + self.tail())

    def tail(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-2000:]

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read().decode()
        c.close()
        return r.status, body

    def metric(self, name):
        total = 0.0
        for line in self.get("/metrics")[1].splitlines():
            if line.startswith(name + "{") or line.startswith(name + " "):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stream(self, path, body, stop_after=None, timeout=600):
        """POSTs a streaming request; returns (status, events, text, finish, usage, done).
        With stop_after, closes the connection after that many events."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            text = r.read().decode()
            c.close()
            return r.status, 0, text, None, None, False
        events, text, finish, usage, done = 0, "", None, None, False
        while True:
            line = r.fp.readline()
            if not line:
                break
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                done = True
                break
            event = json.loads(data)
            events += 1
            for choice in event.get("choices", []):
                text += choice.get("text") or (choice.get("delta") or {}).get("content") or ""
                finish = choice.get("finish_reason") or finish
            usage = event.get("usage") or usage
            if stop_after is not None and events >= stop_after:
                break
        c.close()
        return r.status, events, text, finish, usage, done

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.dir.cleanup()


def completion(tokens, prompt="Write a long story about a lighthouse keeper."):
    return {"model": "smollm2", "prompt": prompt, "max_tokens": tokens, "min_tokens": tokens,
            "ignore_eos": True, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}


def served_checks(server, concurrent):
    status, events, text, finish, usage, done = server.stream(
        "/v1/chat/completions",
        {"model": "smollm2", "stream": True, "max_tokens": 48,
         "messages": [{"role": "user", "content": "What is the capital of France?"}]})
    check("stream", status == 200 and events > 1 and text.strip() != "" and finish is not None
          and done, {"status": status, "events": events, "text": text[:80], "finish": finish})

    status, events, *_ = server.stream("/v1/completions", completion(4000), stop_after=3)
    deadline, running = time.time() + 5, None
    while time.time() < deadline:
        running = server.metric("coinfer_num_requests_running")
        if running == 0:
            break
        time.sleep(0.1)
    check("cancel", status == 200 and events == 3 and running == 0,
          {"status": status, "events": events, "running_after": running})

    results = [None] * concurrent

    def one(i):
        try:
            results[i] = server.stream("/v1/completions", completion(64, f"Story {i}: once"))
        except Exception as e:  # noqa: BLE001 - reported as the check's detail
            results[i] = (0, 0, repr(e), None, None, False)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(concurrent)]
    started = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [i for i, r in enumerate(results)
           if not (r[0] == 200 and r[5] and (r[4] or {}).get("completion_tokens") == 64)]
    check("concurrent", not bad, {"streams": concurrent, "failed": len(bad),
                                  "first_failed": results[bad[0]][:3] if bad else None,
                                  "seconds": round(time.time() - started, 1)})


def preemption_check(serve, gguf, device, port, small_kv_mib):
    server = Server(serve, gguf, device, port, f"kv_cache_mib = {small_kv_mib}\n")
    try:
        results = [None] * 16

        def one(i):
            results[i] = server.stream("/v1/completions", completion(160, f"Tale {i}: it began"))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        preemptions = server.metric("coinfer_num_preemptions_total")
        ok = all(r[0] == 200 and r[5] and (r[4] or {}).get("completion_tokens") == 160
                 for r in results)
        check("preemption", ok and preemptions > 0,
              {"kv_cache_mib": small_kv_mib, "all_finished": ok, "preemptions": preemptions})
    finally:
        server.stop()


def benchmark(server, concurrency, duration):
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench/llm_bench.py"), "--url",
         f"http://127.0.0.1:{server.port}", "--label", "coinfer-cuda", "--concurrency",
         concurrency, "--duration", str(duration), "--prompt-tokens", "200:200",
         "--max-tokens", "128", "--warmup", "4",
         "--prompt-cache"],  # not llama-server's field; the server's prefix cache is off
        capture_output=True, text=True, timeout=1200)
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        pick = {k: r.get(k) for k in ("concurrency", "tokens_per_s", "requests_ok",
                                      "requests_failed")}
        for key in ("ttft_ms", "itl_ms"):
            stats = r.get(key) or {}
            pick[key + "_p50"] = stats.get("p50")
            pick[key + "_p99"] = stats.get("p99")
        report("llm_bench", **pick)
    if out.returncode != 0:
        check("benchmark", False, out.stderr[-500:])


def gguf_shape(gguf):
    """SmolLM2's architecture from the GGUF's metadata: each key `llama.<name>` (a string: its
    uint64 length, then its bytes) is followed by its value type (4: uint32, 6: float32) and the value."""
    with open(gguf, "rb") as f:
        head = f.read(1 << 20)
    shape = {}
    for key in ("embedding_length", "feed_forward_length", "block_count", "attention.head_count",
                "attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon",
                "context_length"):
        name = b"llama." + key.encode()
        name = struct.pack("<Q", len(name)) + name  # as GGUF writes a string: its length first
        at = head.find(name)
        if at < 0:
            return None
        value_type = struct.unpack_from("<I", head, at + len(name))[0]
        if value_type not in (4, 6):
            return None
        shape[key] = struct.unpack_from("<I" if value_type == 4 else "<f", head,
                                        at + len(name) + 4)[0]
    return shape


def peer(gguf, batches, prompt_tokens, new_tokens):
    try:
        import torch
        import transformers
    except ImportError as e:
        report("peer=transformers", skipped=json.dumps(f"not importable: {e}"))
        return
    if not torch.cuda.is_available():
        report("peer=transformers", skipped='"torch has no CUDA device"')
        return
    s = gguf_shape(gguf)
    if s is None:
        report("peer=transformers", skipped='"GGUF shape keys not found"')
        return
    config = transformers.LlamaConfig(
        vocab_size=49152, hidden_size=s["embedding_length"],
        intermediate_size=s["feed_forward_length"], num_hidden_layers=s["block_count"],
        num_attention_heads=s["attention.head_count"],
        num_key_value_heads=s["attention.head_count_kv"], rope_theta=s["rope.freq_base"],
        rms_norm_eps=s["attention.layer_norm_rms_epsilon"],
        max_position_embeddings=s["context_length"], tie_word_embeddings=True)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).to("cuda", torch.float16).eval()
    report("peer=transformers", version=transformers.__version__, torch=torch.__version__,
           gpu=json.dumps(torch.cuda.get_device_name()))
    for batch in batches:
        ids = torch.randint(100, 49000, (batch, prompt_tokens), device="cuda")
        kwargs = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                      pad_token_id=0)
        with torch.no_grad():
            model.generate(ids, **dict(kwargs, max_new_tokens=8, min_new_tokens=8))  # warm up
            torch.cuda.synchronize()
            started = time.perf_counter()
            out = model.generate(ids, **kwargs)
            torch.cuda.synchronize()
            seconds = time.perf_counter() - started
        made = (out.shape[1] - prompt_tokens) * batch
        report("peer=transformers generate", batch=batch, tokens_per_s=round(made / seconds, 1),
               seconds=round(seconds, 3), dtype="fp16")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve", required=True, help="coinfer-serve binary")
    ap.add_argument("--gguf", required=True, type=Path, help="SmolLM2 GGUF")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--port", type=int, default=18630)
    ap.add_argument("--concurrent", type=int, default=256)
    ap.add_argument("--small-kv-mib", type=int, default=8)
    ap.add_argument("--concurrency", default="1,8,16,64,256", help="benchmark; '' to skip")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per benchmark run")
    ap.add_argument("--peer-batches", default="1,64", help="'' to skip the peer")
    a = ap.parse_args()
    gguf = a.gguf.resolve()
    if not gguf.exists():
        report("llm_served", skipped=json.dumps(f"{gguf} is absent"))
        return 0
    try:
        server = Server(a.serve, gguf, a.device, a.port)
        try:
            served_checks(server, a.concurrent)
            if a.concurrency:
                benchmark(server, a.concurrency, a.duration)
        finally:
            server.stop()
        preemption_check(a.serve, gguf, a.device, a.port + 1, a.small_kv_mib)
    except Exception as e:  # noqa: BLE001 - a server that would not start, a broken socket
        check("error", False, repr(e))
    if a.peer_batches:
        peer(gguf, [int(b) for b in a.peer_batches.split(",")], 200, 128)
    report("llm_served summary", failed=json.dumps(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
