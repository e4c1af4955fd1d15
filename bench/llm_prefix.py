#!/usr/bin/env python3
"""Prefix caching on a shared-system-prompt workload: C client threads send streamed chat
requests that share one long system prompt (the first --system-words words of the Apache
License text, about 1.4 tokens a word) and differ in a short user question; reports TTFT
p50/p99, requests/s and the prompt tokens the server says it took from its cache
(usage.prompt_tokens_details.cached_tokens). Run it against two coinfer servers, prefix
caching on and off (bench/llm_prefix.sh), in one run. Python 3 standard library only.

Usage: python3 bench/llm_prefix.py --url http://127.0.0.1:8091 --label on [--concurrency 4]
         [--requests 48] [--max-tokens 16] [--system-words 400]
"""
import argparse
import http.client
import json
import statistics
import threading
import time
import urllib.parse
from pathlib import Path

TEXT = Path(__file__).resolve().parent.parent / "tests/fixtures/smollm2/apache-2.0.txt"


def one_request(conn, model, system, question, max_tokens):
    body = json.dumps({"model": model, "stream": True, "max_tokens": max_tokens, "temperature": 0,
                       "stream_options": {"include_usage": True},
                       "messages": [{"role": "system", "content": system},
                                    {"role": "user", "content": question}]})
    start = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    ttft, cached, prompt = None, 0, 0
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            resp.read()  # the chunked body's end, so the connection takes the next request
            break
        event = json.loads(data)
        if event.get("usage"):
            prompt = event["usage"]["prompt_tokens"]
            cached = event["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
        for choice in event.get("choices", []):
            if choice.get("delta", {}).get("content") and ttft is None:
                ttft = time.perf_counter() - start
    return ttft if ttft is not None else time.perf_counter() - start, prompt, cached


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--label", default="coinfer")
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--requests", type=int, default=48)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--system-words", type=int, default=400)
    args = ap.parse_args()
    system = " ".join(TEXT.read_text().split()[: args.system_words])
    url = urllib.parse.urlparse(args.url)
    lock = threading.Lock()
    next_index = [0]
    results = []

    def worker():
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
        while True:
            with lock:
                i = next_index[0]
                if i >= args.requests:
                    return
                next_index[0] += 1
            question = f"Question {i}: in one sentence, what does section {i % 9 + 1} say?"
            r = one_request(conn, args.model, system, question, args.max_tokens)
            with lock:
                results.append(r)

    # One request first, unmeasured: it fills the cache (when there is one) as a user's first would.
    warm = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    one_request(warm, args.model, system, "Warm-up.", args.max_tokens)
    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    ttfts = sorted(r[0] * 1000 for r in results)
    line = {"bench": "llm_prefix", "label": args.label, "concurrency": args.concurrency,
            "requests": len(results), "prompt_tokens_mean": statistics.mean(r[1] for r in results),
            "cached_tokens_mean": statistics.mean(r[2] for r in results),
            "ttft_ms": {"p50": round(ttfts[len(ttfts) // 2], 1),
                        "p99": round(ttfts[min(len(ttfts) - 1, int(len(ttfts) * 0.99))], 1)},
            "requests_per_s": round(len(results) / wall, 3)}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
