#!/usr/bin/env python3
"""Prompt-lookup speculative decoding, measured: chat requests where the answer copies the
prompt (edit: repeat, correct or summarize a given text) and where it does not (chat: short
everyday questions), against several OpenAI-compatible servers in one run.

Python 3 standard library only. Each target is NAME=URL[=JSON]: the JSON object's fields are
added to every request body (e.g. coinfer's {"num_speculative_tokens": 0} to turn drafting off
on the same server). Targets are measured in turn within each round (--rounds, interleaved, so
that a disturbance of the shared machine falls on all of them alike), one request at a time:
POST /v1/chat/completions, greedy ("temperature": 0), "max_tokens" --max-tokens, streamed with
usage ("stream_options": {"include_usage": true}), answers ending where the model ends them.

Workloads: edit (below), chat (12 everyday questions), chat-b (9 more, written later to judge
changes on questions they were not made from).

Per target and workload, over all rounds:
  tokens_per_s   output tokens / time from request sent to [DONE], summed over requests
  decode_per_s   per request (completion tokens - 1) / (done - first token), median: the
                 decode rate without the prefill
  ttft_ms        median time to first token
  tokens         mean completion tokens (servers whose weights differ answer differently)
The edit prompts are paragraphs of the Apache License 2.0 (tests/fixtures/smollm2/
apache-2.0.txt) with an instruction; the correct-the-spelling ones have a few letters swapped
(seeded). Nothing here was used to choose coinfer's speculation defaults.

Usage:
  python3 bench/speculative_bench.py --target 'coinfer=http://127.0.0.1:8091={"num_speculative_tokens":0}' \\
      --target 'coinfer+lookup=http://127.0.0.1:8091={"num_speculative_tokens":4}' \\
      --target llama.cpp=http://127.0.0.1:8092 --rounds 2 --prompts 8
Output: one JSON line per target and workload ("bench": "speculative"), then a table.
"""

import argparse
import http.client
import json
import random
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

CHAT = [
    "What should I pack for a weekend hiking trip?",
    "How do I keep basil alive on a windowsill?",
    "Give me three ideas for a quick weeknight dinner.",
    "Why is the sky blue?",
    "What is a good way to start learning to play the guitar?",
    "How can I sleep better when I travel?",
    "Explain what a budget is to a teenager.",
    "What are some tips for a job interview?",
    "How do bees make honey?",
    "Suggest a name for a small bakery.",
    "How often should I water a cactus?",
    "What is the difference between weather and climate?",
]

# Written after the first measurements, to judge a change (shorter drafts after a miss: no
# better, not kept) on questions it was not made from.
CHAT_B = [
    "What can I do with leftover rice?",
    "How do I clean a cast iron pan?",
    "Why do cats purr?",
    "Give me a short plan for learning to swim as an adult.",
    "What is the best way to remember people's names?",
    "How do I politely decline an invitation?",
    "What makes bread rise?",
    "Suggest a few board games for a family evening.",
    "How can I make my phone battery last longer?",
]

INSTRUCTIONS = [
    "Repeat the following text exactly, word for word:",
    "Correct the spelling mistakes in the following text and write out the whole corrected text:",
    "Summarize the following text in two or three sentences:",
]


def with_typos(text, rng, count=4):
    words = text.split(" ")
    for _ in range(count):
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 4:
            j = rng.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def edit_prompts(count, seed):
    text = (REPO_ROOT / "tests/fixtures/smollm2/apache-2.0.txt").read_text()
    paras = [" ".join(p.split()) for p in text.split("\n\n")]
    paras = [p for p in paras if 250 <= len(p) <= 900]
    rng = random.Random(seed)
    out = []
    for i in range(count):
        instruction = INSTRUCTIONS[i % len(INSTRUCTIONS)]
        para = paras[(i * 7) % len(paras)]
        if "spelling" in instruction:
            para = with_typos(para, rng)
        out.append(f"{instruction}\n\n{para}")
    return out


def one(url, extra, prompt, max_tokens, timeout):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    body = {"model": "smollm2", "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    body.update(extra)
    sent = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"{url}: HTTP {resp.status}: {resp.read()[:200]!r}")
    first = None
    tokens = None
    text = []
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            break
        event = json.loads(data)
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
        for choice in event.get("choices", []):
            piece = choice.get("delta", {}).get("content")
            if piece:
                if first is None:
                    first = time.perf_counter()
                text.append(piece)
    done = time.perf_counter()
    conn.close()
    return {"tokens": tokens or 0, "e2e": done - sent,
            "ttft": (first or done) - sent, "decode": done - (first or done),
            "text": "".join(text)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", action="append", required=True, help="NAME=URL[=JSON]")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=9, help="prompts per workload")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--workload", default="edit,chat,chat-b",
                    help="comma-separated: edit, chat, chat-b (default: all three)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()

    targets = []
    for t in args.target:
        name, rest = t.split("=", 1)
        url, _, extra = rest.partition("={")
        targets.append((name, url, json.loads("{" + extra) if extra else {}))
    workloads = {"edit": edit_prompts(args.prompts, args.seed),
                 "chat": [CHAT[i % len(CHAT)] for i in range(args.prompts)],
                 "chat-b": [CHAT_B[i % len(CHAT_B)] for i in range(args.prompts)]}
    kinds = args.workload.split(",")
    for k in kinds:
        if k not in workloads:
            ap.error(f"--workload: unknown workload {k!r}")

    results = {(n, k): [] for n, _, _ in targets for k in kinds}
    for name, url, extra in targets:  # warm-up
        one(url, extra, CHAT[0], 8, args.timeout)
    for r in range(args.rounds):
        for kind in kinds:
            for name, url, extra in targets:
                for p in workloads[kind]:
                    results[(name, kind)].append(one(url, extra, p, args.max_tokens, args.timeout))
                print(f"round {r + 1}: {name} {kind} done", file=sys.stderr)

    lines = []
    for (name, kind), runs in results.items():
        tokens = sum(x["tokens"] for x in runs)
        line = {
            "bench": "speculative", "target": name, "workload": kind,
            "requests": len(runs), "rounds": args.rounds, "max_tokens": args.max_tokens,
            "tokens_per_s": tokens / sum(x["e2e"] for x in runs),
            "decode_per_s": statistics.median(
                (x["tokens"] - 1) / x["decode"] for x in runs if x["tokens"] > 1 and x["decode"] > 0),
            "ttft_ms": 1000 * statistics.median(x["ttft"] for x in runs),
            "tokens": tokens / len(runs),
        }
        lines.append(line)
        print(json.dumps(line))
    print("\n| target | workload | tokens/s | decode tok/s (median) | TTFT p50 (ms) | mean tokens |")
    print("|---|---|---:|---:|---:|---:|")
    for l in lines:
        print(f"| {l['target']} | {l['workload']} | {l['tokens_per_s']:.1f} | "
              f"{l['decode_per_s']:.1f} | {l['ttft_ms']:.0f} | {l['tokens']:.0f} |")


if __name__ == "__main__":
    main()
