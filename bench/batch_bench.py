#!/usr/bin/env python3
"""coinfer-batch against its Python peers on the same files, in one run, and its peak RSS as
the input grows (docs/BENCHMARKS.md, "Offline batch").

  python3 bench/batch_bench.py [--rows 1000000] [--texts 2000] [--rounds 2]
                               [--rss 100000,1000000,10000000] [--dir /tmp/coinfer-batch-bench]

Data from bench/batch_data.py (seeded; digits rows with 0.01% malformed lines, MiniLM texts of
5-60 words). Each round runs coinfer-batch and the peer back to back on the same file,
writing JSONL results; the table gives the median rows/s of the rounds and the ratio.
  MLP:    coinfer-batch --model digits (INT8, 1 compute thread, 2 preprocess workers) vs a
          PyTorch DataLoader pipeline (bench/batch_peers.py mlp, Debian's torch 1.13, FP32) at
          its best setting on this machine (num_workers 0 and 2 both measured, batch 1024).
  MiniLM: coinfer-batch --model minilm (INT8, 2 compute threads) vs sentence-transformers
          encode() (bench/batch_peers.py minilm, batch 64) in the reference venv.
  RSS:    coinfer-batch's peak RSS (getrusage of the child) on digits files of each size.
Needs: scripts/setup --bench (Debian's python3-torch) and scripts/minilm_reference
--ensure-venv (sentence-transformers); build/coinfer-batch built.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = os.path.join(REPO, "build", "coinfer-batch")
CONFIG = os.path.join(REPO, "configs", "default.toml")
TORCH_PYTHON = "/usr/bin/python3"
REFENV_PYTHON = os.environ.get("MINILM_REFENV", "/work/refenv") + "/bin/python"


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def coinfer(args, out):
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = sh([BATCH, "--config", CONFIG, "--progress", "off", "--json", "--output", out] + args)
    result = last_json(p.stdout)
    result["max_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result["rss_is_new_max"] = result["max_rss_mib"] * 1024 > before
    shutil.rmtree(out, ignore_errors=True)
    return result


def peer(python, args, out):
    p = sh([python, os.path.join(REPO, "bench", "batch_peers.py")] + args + [])
    if os.path.exists(out):
        os.remove(out)
    return last_json(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rss", default="100000,1000000,10000000")
    ap.add_argument("--dir", default="/tmp/coinfer-batch-bench")
    ap.add_argument("--skip", default="", help="comma list of mlp,minilm,rss to skip")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    os.makedirs(a.dir, exist_ok=True)
    data = os.path.join(REPO, "bench", "batch_data.py")
    report = {"rows": a.rows, "texts": a.texts, "rounds": a.rounds, "date": time.strftime("%Y-%m-%d %H:%M")}

    if "mlp" not in skip:
        digits = os.path.join(a.dir, f"digits-{a.rows}.jsonl")
        if not os.path.exists(digits):
            sh([sys.executable, data, "digits", str(a.rows), digits, "--bad", str(max(1, a.rows // 10000))])
        rounds = []
        for r in range(a.rounds):
            c = coinfer(["--model", "digits", "--input", digits, "--field", "pixels", "--id-field", "id",
                         "--batch-size", "1024", "--compute-threads", "1", "--workers", "2"],
                        os.path.join(a.dir, "out-coinfer"))
            peers = [peer(TORCH_PYTHON, ["mlp", digits, os.path.join(a.dir, "out-torch.jsonl"),
                                         "--batch-size", "1024", "--num-workers", str(w)],
                          os.path.join(a.dir, "out-torch.jsonl")) for w in (0, 2)]
            best = max(peers, key=lambda p: p["rows_per_s"])
            print(f"mlp round {r}: coinfer {c['rows_per_s']:.0f} rows/s (bound: {c['bound']}), "
                  f"torch {[round(p['rows_per_s']) for p in peers]} rows/s (workers 0, 2)", flush=True)
            rounds.append({"coinfer": c, "torch": peers, "best_torch": best["rows_per_s"]})
        c_rate = statistics.median(r["coinfer"]["rows_per_s"] for r in rounds)
        t_rate = statistics.median(r["best_torch"] for r in rounds)
        report["mlp"] = {"coinfer_rows_per_s": c_rate, "torch_rows_per_s": t_rate, "ratio": c_rate / t_rate,
                         "rounds": rounds}
        print(f"MLP: coinfer {c_rate:,.0f} rows/s, DataLoader {t_rate:,.0f} rows/s: {c_rate / t_rate:.2f}x",
              flush=True)

    if "minilm" not in skip:
        texts = os.path.join(a.dir, f"text-{a.texts}.jsonl")
        if not os.path.exists(texts):
            sh([sys.executable, data, "text", str(a.texts), texts])
        rounds = []
        for r in range(a.rounds):
            c = coinfer(["--model", "minilm", "--input", texts, "--field", "text", "--id-field", "id",
                         "--compute-threads", "2", "--workers", "1", "--truncate", "--chunk-rows", "1024"],
                        os.path.join(a.dir, "out-coinfer"))
            s = peer(REFENV_PYTHON, ["minilm", texts, os.path.join(a.dir, "out-st.jsonl"), "--batch-size", "64"],
                     os.path.join(a.dir, "out-st.jsonl"))
            print(f"minilm round {r}: coinfer {c['rows_per_s']:.1f} rows/s (bound: {c['bound']}), "
                  f"sentence-transformers {s['rows_per_s']:.1f} rows/s", flush=True)
            rounds.append({"coinfer": c, "sentence_transformers": s})
        c_rate = statistics.median(r["coinfer"]["rows_per_s"] for r in rounds)
        s_rate = statistics.median(r["sentence_transformers"]["rows_per_s"] for r in rounds)
        report["minilm"] = {"coinfer_rows_per_s": c_rate, "st_rows_per_s": s_rate, "ratio": c_rate / s_rate,
                            "rounds": rounds}
        print(f"MiniLM: coinfer {c_rate:,.1f} rows/s, sentence-transformers {s_rate:,.1f} rows/s: "
              f"{c_rate / s_rate:.2f}x", flush=True)

    if "rss" not in skip:
        report["rss"] = []
        for n in [int(x) for x in a.rss.split(",")]:
            path = os.path.join(a.dir, f"digits-{n}.jsonl")
            if not os.path.exists(path):
                sh([sys.executable, data, "digits", str(n), path, "--bad", str(max(1, n // 10000))])
            # Each size in its own child process, so ru_maxrss is that run's peak alone.
            probe = ("import json,resource,subprocess,sys;"
                     "p=subprocess.run(sys.argv[1:],capture_output=True,text=True,check=True);"
                     "r=json.loads(p.stdout.strip().splitlines()[-1]);"
                     "r['max_rss_mib']=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024;"
                     "print(json.dumps(r))")
            out = os.path.join(a.dir, "out-rss")
            shutil.rmtree(out, ignore_errors=True)
            p = sh([sys.executable, "-c", probe, BATCH, "--config", CONFIG, "--progress", "off", "--json",
                    "--model", "digits", "--input", path, "--field", "pixels", "--id-field", "id",
                    "--batch-size", "1024", "--compute-threads", "1", "--workers", "2", "--output", out])
            shutil.rmtree(out, ignore_errors=True)
            r = json.loads(p.stdout)
            print(f"RSS at {n:,} rows: {r['max_rss_mib']:.1f} MiB ({r['rows_per_s']:,.0f} rows/s)", flush=True)
            report["rss"].append({"rows": n, "max_rss_mib": r["max_rss_mib"], "rows_per_s": r["rows_per_s"]})

    out = os.path.join(REPO, "bench", "results", f"batch_{time.strftime('%Y%m%d_%H%M')}.json")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print("wrote", out)


if __name__ == "__main__":
    main()
