"""A chat request answered by the response cache against the same request answered by the
model, in one run on one server (docs/CACHE.md).

Starts coinfer-serve (configs/default.toml, minilm + smollm2) and, over the paraphrase pairs of
bench/data/cache_pairs/project.jsonl (prompt a stored, paraphrase b asked):
  model     a with Cache-Control: no-store (the full model call, cache bypassed)
  exact     a again after it was stored (hit-exact)
  semantic  b (hit-semantic where the cache finds a; the rest are misses, reported apart)
Each phase: sequential latency p50/p99, then req/s with CONCURRENCY clients.

Usage: cache_e2e.py BUILD/coinfer-serve configs/default.toml [--pairs N] [--max-tokens T]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import time

import requests

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "conformance"))
from serve import config_copy, opt_into_semantic_cache, start_server  # noqa: E402
import tempfile  # noqa: E402

CONCURRENCY = 8


def ask(session, base, content, max_tokens, headers=None):
    started = time.perf_counter()
    r = session.post(f"{base}/v1/chat/completions", timeout=120, headers=headers or {},
                     json={"model": "smollm2", "temperature": 0, "max_tokens": max_tokens,
                           "messages": [{"role": "user", "content": content}]})
    r.raise_for_status()
    return time.perf_counter() - started, r.headers.get("X-Cache")


def sequential(base, prompts, max_tokens, headers=None):
    session = requests.Session()
    latencies, outcomes = [], []
    for p in prompts:
        seconds, outcome = ask(session, base, p, max_tokens, headers)
        latencies.append(seconds)
        outcomes.append(outcome)
    return latencies, outcomes


def concurrent_rate(base, prompts, max_tokens, headers=None):
    def worker(chunk):
        s = requests.Session()
        for p in chunk:
            ask(s, base, p, max_tokens, headers)
    chunks = [prompts[i::CONCURRENCY] for i in range(CONCURRENCY)]
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(worker, chunks))
    return len(prompts) / (time.perf_counter() - started)


def phase(base, prompts, max_tokens, headers=None):
    latencies, outcomes = sequential(base, prompts, max_tokens, headers)
    return latencies, outcomes, concurrent_rate(base, prompts, max_tokens, headers)


def summary(name, latencies, rate, outcomes):
    ms = sorted(x * 1000 for x in latencies)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    counts = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    print(json.dumps({"bench": "cache_e2e", "phase": name, "requests": len(ms),
                      "p50_ms": round(statistics.median(ms), 2), "p99_ms": round(p99, 2),
                      "req_per_s": round(rate, 1), "x_cache": counts}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("config")
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()
    data = os.path.join(os.path.dirname(__file__), "data", "cache_pairs", "project.jsonl")
    pairs = [json.loads(line) for line in open(data)]
    pairs = [p for p in pairs if p["kind"] == "paraphrase"][: args.pairs]
    stored = [p["a"] for p in pairs]
    paraphrases = [p["b"] for p in pairs]

    config = config_copy(args.config, tempfile.mkdtemp())
    opt_into_semantic_cache(config)
    proc, address = start_server(args.binary, config,
                                 extra_args=["--model", "minilm", "--model", "smollm2"])
    base = f"http://{address}"
    try:
        latencies, outcomes, rate = phase(base, stored, args.max_tokens, {"Cache-Control": "no-store"})
        summary("model", latencies, rate, outcomes)
        for p in stored:  # store each answer once
            ask(requests, base, p, args.max_tokens)
        latencies, outcomes, rate = phase(base, stored, args.max_tokens)
        summary("exact", latencies, rate, outcomes)
        # Paraphrases: a hit stores nothing, so asking the hits again hits again by meaning
        # (a miss stored its own answer: asked again it would be an exact hit, so the rate is
        # taken over the hits only).
        latencies, outcomes = sequential(base, paraphrases, args.max_tokens)
        hit_prompts = [p for p, o in zip(paraphrases, outcomes) if o == "hit-semantic"]
        hits = [x for x, o in zip(latencies, outcomes) if o == "hit-semantic"]
        misses = [x for x, o in zip(latencies, outcomes) if o != "hit-semantic"]
        if hits:
            summary("semantic hits", hits, concurrent_rate(base, hit_prompts, args.max_tokens),
                    ["hit-semantic"] * len(hits))
        if misses:
            summary("semantic misses (model called)", misses, float("nan"), ["miss"] * len(misses))
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
