"""coinfer-batch against a real S3-compatible server: moto's S3 server (PyPI `moto[server]`)
with authentication on, so every request's SigV4 signature is verified by botocore's signer;
boto3 puts the inputs and reads the results back.

Usage: python3 s3_test.py COINFER_BATCH CONFIG

moto rebuilds a request's URL before it checks the signature, and its rebuilt URL loses the
percent-encoding of '/' in query values and of '$' in paths, so a correctly signed request
that lists a prefix with a '/' (botocore's own as much as coinfer's) fails its check. The
prefixes here are whole buckets (s3://bucket/), listed with an empty prefix; the encoding
itself is checked against AWS's published signatures in the unit tests.

Checks:
  - a prefix of three JSONL objects (and a folder marker) in, results out as multipart parts,
    through a proxy that answers SlowDown to every 7th request and cuts every 5th body
    halfway: the same results and dead letters as the same rows read from a local file;
  - CSV objects (a header each) and an .npy object in, .npy parts out: equal to the JSONL run;
  - kill -9 at random moments, each followed by --resume: every row exactly once;
  - the server taken away (the proxy killed) mid-job and back 3 s later: the job completes;
  - a lock held and renewed by another writer: refused; a stale one: taken over;
  - bad credentials, a missing bucket or object: exit 2 naming them, nothing written.
"""

import glob
import io
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import boto3
import botocore
import numpy as np
from sklearn.datasets import load_digits

BATCH, CONFIG = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


work = tempfile.mkdtemp(prefix="coinfer-s3-test-")
moto_port = free_port()
# The first three requests (creating the IAM user, its key and its policy) run without
# authentication; every later one must carry a valid signature of a known key.
moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-p", str(moto_port)],
                        env=dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3"),
                        stdout=open(os.path.join(work, "moto.log"), "w"), stderr=subprocess.STDOUT)
proxy = None
proxy_port = free_port()


def start_proxy(slowdown=0, cut=0):
    global proxy
    proxy = subprocess.Popen([sys.executable, os.path.join(HERE, "s3_fault_proxy.py"), str(proxy_port),
                              str(moto_port), "--slowdown-every", str(slowdown), "--cut-every", str(cut)],
                             stdout=subprocess.PIPE, text=True)
    check(proxy.stdout.readline().strip() == "ready", "the proxy started")


try:
    wait_port(moto_port)
    endpoint = f"http://127.0.0.1:{moto_port}"
    boot = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bootstrap",
                aws_secret_access_key="bootstrap")
    iam = boto3.client("iam", **boot)
    iam.create_user(UserName="batch")
    key = iam.create_access_key(UserName="batch")["AccessKey"]
    iam.put_user_policy(UserName="batch", PolicyName="s3", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    KEY_ID, SECRET = key["AccessKeyId"], key["SecretAccessKey"]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=KEY_ID,
                      aws_secret_access_key=SECRET)
    for bucket in ["coinfer-in", "coinfer-digits", "coinfer-csv", "out-run", "out-csv", "out-npy", "out-kill",
                   "out-outage", "out-locked", "out-badcred", "out-profile"]:
        s3.create_bucket(Bucket=bucket)
    start_proxy(slowdown=7, cut=5)
    via_proxy = f"http://127.0.0.1:{proxy_port}"
    ENV = dict(os.environ, AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
               AWS_ENDPOINT_URL=via_proxy)
    ENV.pop("AWS_PROFILE", None)

    def run(args, expect=0, env=None, timeout=600):
        p = subprocess.run([BATCH, "--config", CONFIG, "--progress", "off"] + args, capture_output=True, text=True,
                           timeout=timeout, env=env or ENV)
        if p.returncode != expect:
            print(p.stderr[-3000:])
        check(p.returncode == expect, f"exit {p.returncode}, expected {expect}: {' '.join(args)}")
        return p

    def keys(bucket, prefix):
        out = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return sorted(out)

    def get(bucket, key):
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read()

    def s3_results(bucket):
        """{id: result} from the part objects, failing on a duplicate; dead letters by row."""
        results, dead = {}, {}
        for name in keys(bucket, ""):
            k = name
            if name.startswith("part-") and name.endswith(".jsonl"):
                for line in get(bucket, k).decode().splitlines():
                    r = json.loads(line)
                    check(r["id"] not in results, f"id {r['id']} written twice ({k})")
                    results[r["id"]] = r
            elif name.startswith("dead-letter/"):
                for line in get(bucket, k).decode().splitlines():
                    d = json.loads(line)
                    check(d["row"] not in dead, f"dead letter for row {d['row']} written twice")
                    dead[d["row"]] = d
        return results, dead

    # The inputs: 20,000 digits rows with three bad ones, as three JSONL objects.
    digits = load_digits()
    N = 20000
    BAD = {17: '{"id": 17, "pixels": [1, 2, 3]}', 9999: "", 15001: '{"id": 15001, "pixels": "no"}'}
    pixels = digits.data[np.arange(N) % len(digits.data)].astype(np.int64)
    lines = [BAD.get(i, json.dumps({"id": i, "pixels": pixels[i].tolist()})) + "\n" for i in range(N)]
    cuts = [0, 7000, 13000, N]
    for j in range(3):
        s3.put_object(Bucket="coinfer-digits", Key=f"part-{j}.jsonl", Body="".join(lines[cuts[j]:cuts[j + 1]]))
    s3.put_object(Bucket="coinfer-digits", Key="notes/", Body=b"")  # a console's folder marker
    local = os.path.join(work, "digits.jsonl")
    with open(local, "w") as f:
        f.writelines(lines)
    base = ["--model", "digits", "--field", "pixels", "--id-field", "id"]
    common = base + ["--chunk-rows", "3000"]
    run(common + ["--input", local, "--output", os.path.join(work, "local")])
    expected = {}
    for path in sorted(glob.glob(os.path.join(work, "local", "part-*.jsonl"))):
        for line in open(path):
            r = json.loads(line)
            expected[r["id"]] = r
    check(len(expected) == N - len(BAD), f"the local run gave {len(expected)} results")

    # --- a prefix in, multipart parts out, through SlowDown and cut bodies ----------------
    p = run(common + ["--input", "s3://coinfer-digits/", "--output", "s3://out-run/",
                      "--s3-range-mib", "0.0625", "--json"])
    summary = json.loads(p.stdout.splitlines()[-1]) if p.stdout.strip() else {}
    check(summary.get("rows") == N and summary.get("errors") == len(BAD), f"summary {summary}")
    results, dead = s3_results("out-run")
    check(results == expected, f"S3 results differ from the local file's ({len(results)} vs {len(expected)})")
    check(set(dead) == set(BAD), f"dead letters {sorted(dead)} != {sorted(BAD)}")
    check("3 numbers" in dead.get(17, {}).get("error", ""), f"row 17's reason: {dead.get(17)}")
    manifest = json.loads(get("out-run", "manifest.json"))
    check(manifest["complete"] and manifest["completed_rows"] == [[0, N]], f"manifest {manifest}")
    check("manifest.json.lock" not in keys("out-run", ""), "the lock was released")
    retried = [l for l in p.stderr.splitlines() if "s3:" in l]
    check(retried and "retried" in retried[0] and not retried[0].strip().startswith("s3: 0 "), f"s3 line {retried}")
    print("prefix in, parts out:", retried[0].strip() if retried else "?", flush=True)

    # --- CSV objects and an .npy object in, .npy out ---------------------------------------
    good = [i for i in range(N) if i not in BAD]
    header = "id," + ",".join(f"p{k}" for k in range(64)) + "\n"
    for j, (a, b) in enumerate([(0, 5000), (5000, len(good))]):
        body = header + "".join(f"{i}," + ",".join(str(v) for v in pixels[i]) + "\n" for i in good[a:b])
        s3.put_object(Bucket="coinfer-csv", Key=f"part-{j}.csv", Body=body)
    run(["--model", "digits", "--id-field", "id", "--chunk-rows", "3000", "--input", "s3://coinfer-csv/",
         "--output", "s3://out-csv/"])
    csv_results, _ = s3_results("out-csv")
    check(csv_results == expected, "CSV objects give other results than the JSONL file")
    buf = io.BytesIO()
    np.save(buf, pixels[good].astype(np.float32))
    s3.put_object(Bucket="coinfer-in", Key="digits.npy", Body=buf.getvalue())
    run(["--model", "digits", "--chunk-rows", "3000", "--input", "s3://coinfer-in/digits.npy",
         "--output", "s3://out-npy/", "--output-format", "npy"])
    rows = np.concatenate([np.load(io.BytesIO(get("out-npy", k))) for k in keys("out-npy", "")
                           if k.endswith(".rows.npy")])
    labels = np.concatenate([np.load(io.BytesIO(get("out-npy", k))) for k in keys("out-npy", "")
                             if k.endswith(".label.npy")])
    check(rows.tolist() == list(range(len(good))), "npy parts: rows")
    check(labels.tolist() == [expected[i]["label"] for i in good], "npy parts: labels differ from the JSONL run's")

    # --- kill -9 and --resume ------------------------------------------------------------
    random.seed(3)
    args = base + ["--input", "s3://coinfer-digits/", "--output", "s3://out-kill/",
                     "--s3-range-mib", "0.0625", "--s3-lock-ttl", "1", "--chunk-rows", "1000", "--batch-size", "64"]
    first = True
    killed_runs = 0
    for attempt in range(4):
        proc = subprocess.Popen([BATCH, "--config", CONFIG, "--progress", "off"] + args + ([] if first else ["--resume"]),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
        time.sleep(random.uniform(1.0, 3.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_runs += 1
        proc.wait()
        first = False
    check(killed_runs >= 2, f"only {killed_runs} of 4 runs were killed before they finished")
    run(args + ["--resume"])
    print(f"kill -9: {killed_runs} of 4 runs killed", flush=True)
    killed, killed_dead = s3_results("out-kill")
    check(killed == expected, f"after kills and resumes: {len(killed)} results, expected {len(expected)}")
    check(set(killed_dead) == set(BAD), f"after kills: dead letters {sorted(killed_dead)}")
    check(json.loads(get("out-kill", "manifest.json"))["complete"], "after kills: manifest complete")

    # --- the server away for 3 s mid-job -------------------------------------------------
    proxy.kill()
    proxy.wait()
    start_proxy()
    job = subprocess.Popen([BATCH, "--config", CONFIG, "--progress", "off"] + base +
                           ["--input", "s3://coinfer-digits/", "--output", "s3://out-outage/",
                            "--s3-range-mib", "0.0625", "--chunk-rows", "500", "--batch-size", "64"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    # Mid-job: once its first manifest is written (before any chunk), the server goes away.
    deadline = time.time() + 60
    while "manifest.json" not in keys("out-outage", "") and time.time() < deadline and job.poll() is None:
        time.sleep(0.02)
    proxy.kill()
    proxy.wait()
    time.sleep(3.0)
    start_proxy()
    _, err = job.communicate(timeout=600)
    check(job.returncode == 0, f"the job through an outage exited {job.returncode}: {err[-2000:]}")
    stats = [l.strip() for l in err.splitlines() if l.strip().startswith("s3:")]
    print("through an outage:", stats, flush=True)
    check(stats and "(0 retried)" not in stats[0], f"the outage was not seen: {stats}")
    outage, _ = s3_results("out-outage")
    check(outage == expected, "after an outage: other results")

    # --- one writer per output -----------------------------------------------------------
    s3.put_object(Bucket="out-locked", Key="manifest.json.lock", Body=b'{"owner":"test","ttl_s":1}')
    stop = threading.Event()

    def renew():
        while not stop.wait(0.3):
            s3.put_object(Bucket="out-locked", Key="manifest.json.lock", Body=str(time.time()).encode())

    renewer = threading.Thread(target=renew)
    renewer.start()
    p = run(common + ["--input", local, "--output", "s3://out-locked/", "--s3-lock-ttl", "1"], expect=2)
    stop.set()
    renewer.join()
    check("another coinfer-batch is writing" in p.stderr, f"a held lock: {p.stderr[-500:]}")
    check(keys("out-locked", "") == ["manifest.json.lock"], "nothing written beside a held lock")
    p = run(common + ["--input", local, "--output", "s3://out-locked/", "--s3-lock-ttl", "1"])
    check("took over the stale lock" in p.stderr, f"a stale lock: {p.stderr[-500:]}")
    check(s3_results("out-locked")[0] == expected, "after taking over a stale lock: other results")

    # --- errors name what is wrong --------------------------------------------------------
    bad = dict(ENV, AWS_SECRET_ACCESS_KEY="not-the-secret")
    p = run(common + ["--input", "s3://coinfer-digits/", "--output", os.path.join(work, "x")], expect=2, env=bad)
    check("SignatureDoesNotMatch" in p.stderr and "credentials" in p.stderr, f"bad credentials: {p.stderr[-500:]}")
    p = run(common + ["--input", local, "--output", "s3://out-badcred/"], expect=2, env=bad)
    check("SignatureDoesNotMatch" in p.stderr, f"bad credentials, output: {p.stderr[-500:]}")
    check(keys("out-badcred", "") == [], "nothing written with bad credentials")
    p = run(common + ["--input", "s3://no-such-bucket/", "--output", os.path.join(work, "y")], expect=2)
    check("NoSuchBucket" in p.stderr, f"a missing bucket: {p.stderr[-500:]}")
    p = run(common + ["--input", "s3://coinfer-in/missing.jsonl", "--output", os.path.join(work, "z")], expect=2)
    check("no such object" in p.stderr, f"a missing object: {p.stderr[-500:]}")
    p = run(common + ["--input", local, "--output", "s3://no-such-bucket/"], expect=2)
    check("NoSuchBucket" in p.stderr, f"a missing output bucket: {p.stderr[-500:]}")
    noenv = {k: v for k, v in ENV.items() if not k.startswith("AWS_")}
    noenv["HOME"] = work  # no ~/.aws there
    p = run(common + ["--input", "s3://coinfer-digits/", "--output", os.path.join(work, "w"),
                      "--s3-endpoint", via_proxy], expect=2, env=noenv)
    check("no AWS credentials" in p.stderr, f"no credentials: {p.stderr[-500:]}")
    # A profile in ~/.aws/credentials instead of the environment.
    os.makedirs(os.path.join(work, ".aws"), exist_ok=True)
    with open(os.path.join(work, ".aws", "credentials"), "w") as f:
        f.write(f"[default]\naws_access_key_id = x\naws_secret_access_key = y\n[batch]\n"
                f"aws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n")
    run(common + ["--input", "s3://coinfer-digits/part-0.jsonl", "--output", "s3://out-profile/",
                  "--s3-endpoint", via_proxy, "--s3-profile", "batch"], env=noenv)
    check(len(s3_results("out-profile")[0]) == 7000 - 1, "a run with a profile's credentials")
finally:
    if proxy:
        proxy.kill()
    moto.kill()

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
