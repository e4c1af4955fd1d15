#!/usr/bin/env python3
"""Streaming load generator for OpenAI-compatible /v1/completions (llama-server, vLLM, coinfer).

Python 3 standard library only. C client threads ("streams"), each with one persistent HTTP/1.1
connection, send requests back to back: POST /v1/completions with "stream": true,
"temperature": 0, "max_tokens": N, "ignore_eos": true and "min_tokens": N (so that every
request really produces N tokens on servers that honour them: llama-server and vLLM do;
others should ignore the fields), "stream_options": {"include_usage": true}, and
"cache_prompt": false (llama-server's prefix cache would otherwise serve the prompts of an
earlier run, e.g. the fixed workload's to the mixed one; --prompt-cache leaves it on). Each
answer is read as server-sent events, `data: {...}` lines up to `data: [DONE]`.

Workloads (both use the same prompts):
  fixed   every request asks for --max-tokens (128) tokens
  mixed   output lengths drawn uniformly from --output-range (16:256), for comparing
          continuous with static batching (static batching wastes the slots of short
          requests while the longest in its batch runs)
Prompts: request i gets words of the Apache License 2.0 text (tests/fixtures/smollm2/
apache-2.0.txt), read cyclically from a seeded random offset, as many as make a seeded
random length in --prompt-tokens (32:512) tokens at 1.40 tokens per word (SmolLM2's
tokenizer on that text); the server's own count (usage.prompt_tokens) is what is reported.
Request i is the same for every server, concurrency and run with the same --seed.

Arrivals: by default each stream sends its next request when its last one is done (closed
loop, C requests always in flight). --arrival-rate R makes requests arrive as a seeded Poisson
process of R requests/s (open loop): a stream takes the next arrival and sends it at its time,
at most C in flight, and TTFT and e2e count from the arrival (a request that waited for a free
stream is charged for the wait).

Measures, per concurrency:
  tokens_per_s   output tokens of all finished requests / wall time from the first request
                 sent to the last one finished (requests in flight at the deadline finish and
                 count)
  ttft_ms        time to first token: request sent -> first SSE event with non-empty text
  itl_ms         inter-token latency: time between consecutive events with non-empty text
                 (a token that ends inside a UTF-8 character arrives with the next one)
  tpot_ms        per request, (e2e - ttft) / (output tokens - 1)
  e2e_ms         request sent -> [DONE]
  requests ok / failed (HTTP error, broken stream, no [DONE]) / short (fewer tokens than
  asked: the server stopped at EOS or did not honour max_tokens)
  prompt_tokens_cached  prompt tokens the server reports it took from a cache
                 (usage.prompt_tokens_details.cached_tokens), which should be 0
Output tokens of a request: usage.completion_tokens when the server sends usage, otherwise
the number of non-empty events.

On a shared machine, --server-pid PID lets each run record how much CPU other processes
took meanwhile (other_cpu_pct); with --retries N a run where they took more than
--max-other-cpu % is measured again, and the JSON line says "disturbed" if it still was.

Output: one JSON line per run on stdout ("bench": "llm_stream"), then a table; progress on
stderr. `--compare FILE` prints side-by-side tables with ratios for the JSON lines of two or
more servers (what bench/llm_bench.sh does).

Usage:
  python3 bench/llm_bench.py --url http://127.0.0.1:8080 --concurrency 1,4,16,64 --duration 30
  python3 bench/llm_bench.py --url URL --workload mixed --requests 200 --concurrency 16
  python3 bench/llm_bench.py --compare results.jsonl
"""

import argparse
import http.client
import json
import math
import os
import random
import resource
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TEXT_FILES = [REPO_ROOT / "tests/fixtures/smollm2/apache-2.0.txt",
              Path("/usr/share/common-licenses/Apache-2.0")]
TOKENS_PER_WORD = 1.40  # SmolLM2's tokenizer: 2,215 tokens for the license's 1,581 words


def percentile(values, q):
    """Linear interpolation between closest ranks (numpy's default); None when empty."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def parse_range(text):
    lo, _, hi = text.partition(":")
    lo, hi = int(lo), int(hi or lo)
    if not 0 < lo <= hi:
        raise argparse.ArgumentTypeError(f"bad range {text!r}: want LO:HI with 0 < LO <= HI")
    return lo, hi


class Workload:
    """Request i -> (prompt, max_tokens). Deterministic in (seed, i); prompts do not depend
    on the workload kind, so fixed and mixed runs send the same prompts."""

    def __init__(self, kind, seed, prompt_tokens, max_tokens, output_range, text):
        self.kind = kind
        self.seed = seed
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.output_range = output_range
        self.words = text.split()

    def request(self, i):
        rng = random.Random(f"{self.seed}/prompt/{i}")
        n_tokens = rng.randint(*self.prompt_tokens)
        n_words = max(1, round(n_tokens / TOKENS_PER_WORD))
        start = rng.randrange(len(self.words))
        prompt = " ".join(self.words[(start + k) % len(self.words)] for k in range(n_words))
        if self.kind == "mixed":
            out = random.Random(f"{self.seed}/output/{i}").randint(*self.output_range)
        else:
            out = self.max_tokens
        return prompt, out


class Dispatcher:
    """Hands out request indices until the deadline or the request count is reached. With an
    arrival rate (requests/s), request i also gets an arrival time of a seeded Poisson process
    (exponential gaps) from the start: the stream that takes it waits until then, and its
    TTFT and e2e count from the arrival, so a request that waited for a free stream is charged
    for it (an open-loop load, bounded by the number of streams)."""

    def __init__(self, deadline, limit, rate=None, seed=0):
        self.deadline = deadline
        self.limit = limit
        self.next = 0
        self.lock = threading.Lock()
        self.rate = rate
        self.rng = random.Random(f"{seed}/arrivals")
        self.start = time.monotonic()
        self.arrival = self.start

    def take(self):
        """(index, arrival time or None), or None when done."""
        with self.lock:
            if self.limit is not None and self.next >= self.limit:
                return None
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return None
            i = self.next
            self.next += 1
            if self.rate is None:
                return i, None
            self.arrival += self.rng.expovariate(self.rate)
            if self.deadline is not None and self.arrival >= self.deadline:
                return None
            return i, self.arrival


class Stream(threading.Thread):
    """One client: one persistent connection, one request at a time."""

    def __init__(self, url, model, workload, dispatcher, timeout_s, extra, results):
        # extra: fields merged into every request body (--extra, cache_prompt)
        super().__init__(daemon=True)
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.path = (u.path.rstrip("/") or "") + "/v1/completions"
        self.model = model
        self.workload = workload
        self.dispatcher = dispatcher
        self.timeout_s = timeout_s
        self.extra = extra
        self.results = results
        self.conn = None

    def run(self):
        while (taken := self.dispatcher.take()) is not None:
            i, arrival = taken
            if arrival is not None:
                time.sleep(max(0.0, arrival - time.monotonic()))
            prompt, n = self.workload.request(i)
            self.results.append(self.one(i, prompt, n, arrival))
        if self.conn is not None:
            self.conn.close()

    def body(self, prompt, n):
        b = {"model": self.model, "prompt": prompt, "max_tokens": n, "min_tokens": n,
             "ignore_eos": True, "temperature": 0, "stream": True,
             "stream_options": {"include_usage": True}}
        b.update(self.extra)
        return json.dumps(b).encode()

    def one(self, i, prompt, n, arrival=None):
        r = {"i": i, "max_tokens": n, "ok": False, "tokens": 0, "prompt_tokens": None,
             "cached_tokens": 0, "ttft": None, "e2e": None, "gaps": [], "error": None}
        body = self.body(prompt, n)
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        t0 = time.monotonic() if arrival is None else arrival
        try:
            resp = self.send(body, headers)
            if resp.status != 200:
                r["error"] = f"HTTP {resp.status}: {resp.read(300)!r}"
                return r
            events, usage, done, last = 0, None, False, None
            while True:
                line = resp.readline()
                if not line:
                    break
                if not line.startswith(b"data:"):
                    continue  # blank separators, SSE comments (": ping"), event: lines
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    break
                msg = json.loads(data)
                if "error" in msg:
                    r["error"] = f"stream error: {str(msg['error'])[:300]}"
                    break
                if msg.get("usage"):
                    usage = msg["usage"]
                choices = msg.get("choices") or []
                if choices and choices[0].get("text"):
                    now = time.monotonic()
                    if last is None:
                        r["ttft"] = now - t0
                    else:
                        r["gaps"].append(now - last)
                    last = now
                    events += 1
            resp.read()  # the end of the chunked body, so that the connection can be reused
            r["e2e"] = time.monotonic() - t0
            if usage and usage.get("completion_tokens") is not None:
                r["tokens"] = int(usage["completion_tokens"])
                r["prompt_tokens"] = usage.get("prompt_tokens")
                details = usage.get("prompt_tokens_details") or {}
                r["cached_tokens"] = int(details.get("cached_tokens") or 0)
            else:
                r["tokens"] = events
            if r["error"] is None and not done:
                r["error"] = "stream ended without [DONE]"
            r["ok"] = r["error"] is None
        except (OSError, http.client.HTTPException, ValueError) as e:
            r["error"] = f"{type(e).__name__}: {e}"
            if self.conn is not None:
                self.conn.close()
                self.conn = None
        return r

    def send(self, body, headers):
        # A kept-alive connection that the server closed meanwhile fails on first use: one
        # retry on a fresh connection.
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=self.timeout_s)
            try:
                self.conn.request("POST", self.path, body, headers)
                return self.conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


def cpu_ticks(server_pid):
    """(machine busy ticks incl. steal, steal ticks, server process ticks) from /proc; the
    difference over a run, less the server and this client, is CPU that others took."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] if len(f) > 7 else 0)
        steal = f[7] if len(f) > 7 else 0
        server = 0
        if server_pid:
            stat = Path(f"/proc/{server_pid}/stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            server = int(fields[11]) + int(fields[12])  # utime, stime (all threads)
        return busy, steal, server
    except (OSError, ValueError, IndexError):
        return None


def compiler_running():
    try:
        out = subprocess.run(["pgrep", "-x", "cc1plus|cc1|rustc|ninja"], capture_output=True,
                             text=True, check=False).stdout
    except OSError:
        return None
    return bool(out.strip())


def run_one(args, workload, concurrency, label):
    results = []
    deadline = None if args.requests else time.monotonic() + args.duration
    dispatcher = Dispatcher(deadline, args.requests, args.arrival_rate, workload.seed)
    streams = [Stream(args.url, args.model, workload, dispatcher, args.timeout, args.extra,
                      results) for _ in range(concurrency)]
    busy_before = compiler_running()
    load_before = os.getloadavg()[0]
    ticks0 = cpu_ticks(args.server_pid)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    for s in streams:
        s.start()
    for s in streams:
        s.join()
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    ticks1 = cpu_ticks(args.server_pid)
    busy_after = compiler_running()
    client_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    hz = os.sysconf("SC_CLK_TCK")
    other_pct = steal_pct = server_pct = None
    if ticks0 and ticks1 and wall > 0:
        capacity = wall * (os.cpu_count() or 1)
        busy, steal, server = ((b - a) / hz for a, b in zip(ticks0, ticks1))
        steal_pct = round(100 * steal / capacity, 1)
        if args.server_pid:
            server_pct = round(100 * server / capacity, 1)
            other_pct = round(100 * max(0.0, busy - server - client_cpu) / capacity, 1)

    ok = [r for r in results if r["ok"]]
    failed = [r for r in results if not r["ok"]]
    tokens = sum(r["tokens"] for r in ok)
    ttft = [r["ttft"] for r in ok if r["ttft"] is not None]
    gaps = [g for r in ok for g in r["gaps"]]
    e2e = [r["e2e"] for r in ok]
    tpot = [(r["e2e"] - r["ttft"]) / (r["tokens"] - 1) for r in ok
            if r["ttft"] is not None and r["tokens"] > 1]
    prompt_tokens = [r["prompt_tokens"] for r in ok if r["prompt_tokens"] is not None]

    def ms(values, q):
        v = percentile(values, q)
        return None if v is None else round(v * 1000, 2)

    line = {
        "bench": "llm_stream",
        "server": label,
        "url": args.url,
        "workload": workload.kind,
        "concurrency": concurrency,
        "requests_ok": len(ok),
        "requests_failed": len(failed),
        "requests_short": sum(1 for r in ok if r["tokens"] < r["max_tokens"]),
        "output_tokens": tokens,
        "wall_s": round(wall, 2),
        "tokens_per_s": round(tokens / wall, 2) if wall > 0 else None,
        "requests_per_s": round(len(ok) / wall, 3) if wall > 0 else None,
        "ttft_ms": {"p50": ms(ttft, 50), "p99": ms(ttft, 99)},
        "itl_ms": {"p50": ms(gaps, 50), "p99": ms(gaps, 99)},
        "tpot_ms": {"p50": ms(tpot, 50)},
        "e2e_ms": {"p50": ms(e2e, 50), "p99": ms(e2e, 99)},
        "prompt_tokens_mean": (round(sum(prompt_tokens) / len(prompt_tokens), 1)
                               if prompt_tokens else None),
        "prompt_tokens_cached": sum(r["cached_tokens"] for r in ok),
        "prompt_cache": args.prompt_cache,
        "max_tokens": workload.max_tokens if workload.kind == "fixed" else None,
        "output_range": list(workload.output_range) if workload.kind == "mixed" else None,
        "prompt_tokens_range": list(workload.prompt_tokens),
        "seed": workload.seed,
        "duration_s": None if args.requests else args.duration,
        "requests_limit": args.requests,
        "arrival_rate": args.arrival_rate,
        "client_cpu_s": round(client_cpu, 2),
        # % of all cores over the run: the server's, others' (not server, not this client),
        # and the hypervisor's steal; others' > a few % means the figures are disturbed
        "server_cpu_pct": server_pct,
        "other_cpu_pct": other_pct,
        "steal_cpu_pct": steal_pct,
        "loadavg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "compiler_running": bool(busy_before or busy_after),
    }
    if failed:
        line["first_error"] = failed[0]["error"]
    return line


def measure_quietly(args, workload, concurrency, label):
    """run_one, again (up to --retries times, --retry-wait-s apart) while other processes took
    more than --max-other-cpu % of the machine: on a shared machine, the figures of a
    disturbed run say little about the server."""
    for attempt in range(1, args.retries + 2):
        line = run_one(args, workload, concurrency, label)
        other = line["other_cpu_pct"]
        line["attempt"] = attempt
        line["disturbed"] = other is not None and other > args.max_other_cpu
        if not line["disturbed"] or attempt > args.retries:
            return line
        print(f"llm_bench: other processes took {other} % of the CPU (> {args.max_other_cpu}); "
              f"measuring again in {args.retry_wait_s:g} s", file=sys.stderr, flush=True)
        time.sleep(args.retry_wait_s)
    raise AssertionError("unreachable")


def warm_up(args, workload):
    """A few short requests, unreported; the first must succeed (checks the server works)."""
    dispatcher = Dispatcher(None, args.warmup)
    results = []
    short = Workload("fixed", workload.seed + 1, (32, 64), 8, (8, 8),
                     " ".join(workload.words))
    Stream(args.url, args.model, short, dispatcher, args.timeout, args.extra, results).run()
    bad = [r for r in results if not r["ok"] or r["tokens"] == 0]
    if bad:
        sys.exit(f"llm_bench: warm-up request to {args.url} failed: "
                 f"{bad[0]['error'] or 'no tokens'}")


def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"


def table(lines):
    out = ["| server | workload | C | ok / failed / short | tokens/s | TTFT p50 / p99 (ms) | "
           "ITL p50 / p99 (ms) | e2e p50 (ms) | prompt tok | others' CPU | compiler |",
           "|---|---|---:|---|---:|---|---|---:|---:|---:|---|"]
    for l in lines:
        out.append(
            f"| {l['server']} | {l['workload']} | {l['concurrency']} | "
            f"{l['requests_ok']} / {l['requests_failed']} / {l['requests_short']} | "
            f"{fmt(l['tokens_per_s'])} | {fmt(l['ttft_ms']['p50'])} / {fmt(l['ttft_ms']['p99'])} | "
            f"{fmt(l['itl_ms']['p50'])} / {fmt(l['itl_ms']['p99'])} | {fmt(l['e2e_ms']['p50'], 0)} | "
            f"{fmt(l['prompt_tokens_mean'], 0)} | {fmt(l.get('other_cpu_pct'), 0)} %"
            f"{' (disturbed)' if l.get('disturbed') else ''} | "
            f"{'yes' if l['compiler_running'] else 'no'} |")
    return "\n".join(out)


def compare(paths):
    lines = []
    for p in paths:
        for text in Path(p).read_text().splitlines():
            if text.startswith("{"):
                l = json.loads(text)
                if l.get("bench") == "llm_stream":
                    lines.append(l)
    servers = list(dict.fromkeys(l["server"] for l in lines))
    print(table(lines))
    if len(servers) < 2:
        return
    base, others = servers[0], servers[1:]
    print()
    head = "| workload | C | " + " | ".join(f"{s} tok/s" for s in servers) + " | " + \
        " | ".join(f"{o} / {base}" for o in others) + " | " + \
        " | ".join(f"{s} TTFT p50 / ITL p50 (ms)" for s in servers) + " |"
    print(head)
    print("|---|---:|" + "---:|" * (len(servers) + len(others)) + "---|" * len(servers))
    keys = list(dict.fromkeys((l["workload"], l["concurrency"]) for l in lines))
    by = {(l["server"], l["workload"], l["concurrency"]): l for l in lines}
    summary = {"bench": "llm_stream_compare", "baseline": base, "rows": []}
    for w, c in keys:
        row = [by.get((s, w, c)) for s in servers]
        tps = [r["tokens_per_s"] if r else None for r in row]
        ratios = [round(t / tps[0], 3) if t and tps[0] else None for t in tps[1:]]
        lat = [f"{fmt(r['ttft_ms']['p50'])} / {fmt(r['itl_ms']['p50'])}" if r else "-"
               for r in row]
        print(f"| {w} | {c} | " + " | ".join(fmt(t) for t in tps) + " | " +
              " | ".join("-" if x is None else f"{x:.2f}×" for x in ratios) + " | " +
              " | ".join(lat) + " |")
        summary["rows"].append({"workload": w, "concurrency": c,
                                "tokens_per_s": dict(zip(servers, tps)),
                                f"ratio_to_{base}": dict(zip(others, ratios))})
    print()
    print(json.dumps(summary))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="server base URL, e.g. http://127.0.0.1:8080")
    ap.add_argument("--label", help="server name in the output (default: the URL)")
    ap.add_argument("--model", default="smollm2", help='"model" field (default smollm2)')
    ap.add_argument("--concurrency", default="1,4,16,64",
                    help="comma-separated stream counts, run in turn (default 1,4,16,64)")
    ap.add_argument("--duration", type=float, default=30.0,
                    help="seconds of new requests per run (default 30)")
    ap.add_argument("--requests", type=int, help="requests per run instead of --duration")
    ap.add_argument("--workload", choices=["fixed", "mixed", "both"], default="fixed")
    ap.add_argument("--max-tokens", type=int, default=128, help="fixed workload (default 128)")
    ap.add_argument("--output-range", type=parse_range, default=(16, 256),
                    help="mixed workload output lengths LO:HI (default 16:256)")
    ap.add_argument("--prompt-tokens", type=parse_range, default=(32, 512),
                    help="prompt lengths LO:HI in tokens (default 32:512)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=2, help="unreported requests first (default 2)")
    ap.add_argument("--arrival-rate", type=float,
                    help="requests/s arriving as a Poisson process (open loop, at most "
                         "--concurrency in flight; TTFT counts from the arrival); default: "
                         "each stream sends its next request when the last one is done")
    ap.add_argument("--timeout", type=float, default=600.0, help="socket timeout, s")
    ap.add_argument("--extra", type=json.loads, default={},
                    help="JSON object merged into every request body")
    ap.add_argument("--prompt-cache", action="store_true",
                    help='do not send "cache_prompt": false (let llama-server reuse prefixes)')
    ap.add_argument("--server-pid", type=int,
                    help="server process id, to tell its CPU time from other processes'")
    ap.add_argument("--max-other-cpu", type=float, default=10.0,
                    help="%% of all cores that other processes may take before a run counts "
                         "as disturbed (needs --server-pid; default 10)")
    ap.add_argument("--retries", type=int, default=0,
                    help="measure a disturbed run again up to this many times (default 0)")
    ap.add_argument("--retry-wait-s", type=float, default=15.0)
    ap.add_argument("--text", type=Path, help="prompt source text (default: the Apache license)")
    ap.add_argument("--compare", nargs="+", metavar="FILE",
                    help="print side-by-side tables for the JSON lines in FILE(s) and exit")
    args = ap.parse_args()

    if args.compare:
        compare(args.compare)
        return
    if not args.url:
        ap.error("--url is required")
    if not args.prompt_cache:
        args.extra = {"cache_prompt": False, **args.extra}
    text_file = args.text or next(p for p in TEXT_FILES if p.exists())
    text = text_file.read_text(encoding="utf-8")
    label = args.label or args.url
    kinds = ["fixed", "mixed"] if args.workload == "both" else [args.workload]
    concurrencies = [int(c) for c in args.concurrency.split(",")]

    lines = []
    for kind in kinds:
        workload = Workload(kind, args.seed, args.prompt_tokens, args.max_tokens,
                            args.output_range, text)
        if not lines and args.warmup:
            warm_up(args, workload)
        for c in concurrencies:
            print(f"llm_bench: {label}: {kind}, {c} streams, "
                  f"{f'{args.requests} requests' if args.requests else f'{args.duration:g} s'}",
                  file=sys.stderr, flush=True)
            line = measure_quietly(args, workload, c, label)
            if line["requests_failed"]:
                print(f"llm_bench: warning: {line['requests_failed']} failed requests, first: "
                      f"{line['first_error']}", file=sys.stderr)
            if line["requests_short"]:
                print(f"llm_bench: warning: {line['requests_short']} requests produced fewer "
                      f"tokens than asked (EOS not ignored?)", file=sys.stderr)
            print(json.dumps(line), flush=True)
            lines.append(line)
    print(table(lines))


if __name__ == "__main__":
    main()
