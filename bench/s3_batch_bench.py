#!/usr/bin/env python3
"""coinfer-batch reading its input from an S3 server against the same rows from a local file,
in one run, and its peak RSS as the S3 input grows (docs/BENCHMARKS.md, "Offline batch").

  python3 bench/s3_batch_bench.py [--rows 1000000] [--rounds 3] [--rss 100000,1000000,4000000]
                                  [--dir /tmp/coinfer-s3-bench]

The digits job of docs/BATCH.md (bench/batch_data.py's rows, --field pixels, JSONL results to
a local directory) with --input FILE and with --input s3://bench/digits.jsonl on moto's S3
server (PyPI moto[server], started here on localhost, no authentication, objects in its
memory), rounds alternating; the table gives the median rows/s and the S3/file ratio. The RSS
rows run the S3 input at each size (getrusage of the child). moto is a Python server: what it
can serve bounds the S3 rate, not coinfer-batch (the summary line's read stage says which).
"""

import argparse
import json
import os
import threading
import shutil
import socket
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = os.path.join(REPO, "build", "coinfer-batch")
CONFIG = os.path.join(REPO, "configs", "default.toml")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, env):
    p = subprocess.Popen([BATCH, "--config", CONFIG, "--progress", "off", "--json"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out = []
    reader = threading.Thread(target=lambda: out.append(p.stdout.read()))
    reader.start()
    err = p.stderr.read()
    reader.join()
    _, status, usage = os.wait4(p.pid, 0)  # this child's own peak RSS
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(err[-3000:])
    r = json.loads(out[0].strip().splitlines()[-1])
    r["max_rss_mib"] = usage.ru_maxrss / 1024
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rss", default="100000,1000000,4000000")
    ap.add_argument("--dir", default="/tmp/coinfer-s3-bench")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    import boto3

    port = free_port()
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_ENDPOINT_URL=endpoint)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bench",
                          aws_secret_access_key="bench")
        s3.create_bucket(Bucket="bench")

        def data(rows):
            path = os.path.join(a.dir, f"digits-{rows}.jsonl")
            if not os.path.exists(path):
                subprocess.run([sys.executable, os.path.join(REPO, "bench", "batch_data.py"), "digits", str(rows), path],
                               check=True)
            key = f"digits-{rows}.jsonl"
            s3.upload_file(path, "bench", key)
            return path, f"s3://bench/{key}"

        common = ["--model", "digits", "--field", "pixels", "--id-field", "id"]
        path, url = data(a.rows)
        out = os.path.join(a.dir, "out")
        rates = {"file": [], "s3": []}
        for _ in range(a.rounds):
            for name, source in (("file", path), ("s3", url)):
                shutil.rmtree(out, ignore_errors=True)
                r = run(common + ["--input", source, "--output", out], env)
                rates[name].append(r["rows_per_s"])
                print(f"{name}: {r['rows_per_s']:.0f} rows/s (bound: {r['bound']}, read {r['read_s']:.2f} s)",
                      flush=True)
        f, s = statistics.median(rates["file"]), statistics.median(rates["s3"])
        print(f"\n{a.rows} rows: file {f:.0f} rows/s, S3 {s:.0f} rows/s: S3/file {s / f:.2f}")
        for rows in [int(x) for x in a.rss.split(",") if x]:
            _, url = data(rows)
            shutil.rmtree(out, ignore_errors=True)
            r = run(common + ["--input", url, "--output", out], env)
            print(f"RSS, S3 input of {rows} rows: {r['max_rss_mib']:.0f} MiB peak, {r['rows_per_s']:.0f} rows/s")
            s3.delete_object(Bucket="bench", Key=f"digits-{rows}.jsonl")
        shutil.rmtree(out, ignore_errors=True)
    finally:
        moto.kill()


if __name__ == "__main__":
    main()
