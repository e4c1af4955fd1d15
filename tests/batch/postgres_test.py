"""coinfer-batch against a real PostgreSQL server (Debian's postgresql), started here on a
temporary directory and a free port, stopped at the end.

Usage: python3 postgres_test.py COINFER_BATCH CONFIG

  - a query's rows (a real[] column, ids from a column, a few malformed rows) in, results out
    to a table through COPY: every row once, as a result or a dead letter, labels right;
  - kill -9 at random moments with a PostgreSQL sink, then --resume: exactly once (the chunk's
    rows and its record in coinfer_batch_chunks commit in one transaction);
  - a PostgreSQL source to JSONL files, and a JSONL file to a PostgreSQL table;
  - a bad query and a missing --table are clear errors.
"""

import glob
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits

BATCH, CONFIG = sys.argv[1], sys.argv[2]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)


def pg_bin(name):
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        sys.exit(f"postgres_test: no {name} (scripts/setup installs postgresql-15)")
    return found[-1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


root = os.geteuid() == 0
work = tempfile.mkdtemp(prefix="coinfer-pg-test-")
os.chmod(work, 0o755)
data_dir = os.path.join(work, "data")
socket_dir = os.path.join(work, "socket")
os.makedirs(socket_dir)
if root:  # the server refuses to run as root: run it as the postgres user
    shutil.chown(work, "postgres")
    shutil.chown(socket_dir, "postgres")
as_server = ["runuser", "-u", "postgres", "--"] if root else []
port = free_port()
subprocess.run(as_server + [pg_bin("initdb"), "-D", data_dir, "--auth=trust", "-U", "postgres",
                            "--no-sync"], check=True, capture_output=True)
subprocess.run(as_server + [pg_bin("pg_ctl"), "-D", data_dir, "-l", os.path.join(work, "server.log"),
                            "-o", f"-p {port} -k {socket_dir} -c listen_addresses=''", "-w", "start"],
               check=True, capture_output=True)
CONN = f"host={socket_dir} port={port} dbname=postgres user=postgres"


def psql(sql):
    p = subprocess.run([pg_bin("psql"), CONN, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return p.stdout.strip()


def run(args, expect=0):
    p = subprocess.run([BATCH, "--config", CONFIG, "--progress", "off"] + args,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        print(p.stderr[-3000:])
    check(p.returncode == expect, f"exit {p.returncode}, expected {expect}: {' '.join(args)}")
    return p


try:
    digits = load_digits()
    N = 12000
    BAD = {5: "{1,2,3}", 777: None, 4000: "{1,2,x}"}
    rows_csv = os.path.join(work, "digits.tsv")
    with open(rows_csv, "w") as f:
        for i in range(N):
            k = i % len(digits.data)
            value = BAD[i] if i in BAD else "{" + ",".join(str(int(v)) for v in digits.data[k]) + "}"
            value = "\\N" if value is None else value  # COPY's NULL
            f.write(f"{1000 + i}\t{value}\t{int(digits.target[k])}\n")
    os.chmod(rows_csv, 0o644)
    psql("CREATE TABLE digits (id bigint PRIMARY KEY, pixels text, target int)")
    psql(f"\\copy digits FROM '{rows_csv}'")
    check(psql("SELECT count(*) FROM digits") == str(N), "digits table not loaded")
    query = "SELECT id, pixels FROM digits ORDER BY id"

    # --- a query in, a table out ----------------------------------------------------------
    p = run(["--model", "digits", "--input", CONN, "--query", query, "--columns", "pixels",
             "--id-field", "id", "--output", CONN, "--table", "results", "--chunk-rows", "1000", "--json"])
    summary = json.loads(p.stdout)
    check(summary["rows"] == N and summary["errors"] == len(BAD), f"summary {summary}")
    check(psql("SELECT count(*) FROM results") == str(N - len(BAD)), "results count")
    wrong = psql("SELECT count(*) FROM results r JOIN digits d ON d.id::text = r.id WHERE r.label <> d.target")
    check(int(wrong) < N * 0.05, f"{wrong} wrong labels")
    dead = psql("SELECT row_index, id, error FROM results_dead_letter ORDER BY row_index").splitlines()
    check([d.split("|")[1] for d in dead] == [str(1000 + i) for i in sorted(BAD)], f"dead letters {dead}")
    check("3 numbers" in dead[0] and "expected an array" in dead[1] and "not a number" in dead[2],
          f"dead-letter reasons {dead}")
    check(psql("SELECT count(*) FROM coinfer_batch_chunks") == str(N // 1000), "chunk records")
    check(psql("SELECT array_length(probabilities, 1) FROM results LIMIT 1") == "10", "probabilities column")
    print(f"query -> table: {N - len(BAD)} results, {len(dead)} dead letters, {wrong} wrong labels", flush=True)

    # A second run without --resume is refused; a bad query names the server's error.
    p = run(["--model", "digits", "--input", CONN, "--query", query, "--columns", "pixels",
             "--id-field", "id", "--output", CONN, "--table", "results", "--chunk-rows", "1000"], expect=2)
    check("--resume" in p.stderr, p.stderr)
    # Another job (here: another chunk size) into the same table is refused before reading.
    p = run(["--model", "digits", "--input", CONN, "--query", query, "--columns", "pixels",
             "--id-field", "id", "--output", CONN, "--table", "results", "--chunk-rows", "500", "--resume"],
            expect=2)
    check("holds rows of another job" in p.stderr, p.stderr)
    jobs = psql("SELECT DISTINCT job FROM coinfer_batch_chunks")
    check("user=" not in jobs and f"port={port}" in jobs, f"the recorded job keeps no user: {jobs}")
    p = run(["--model", "digits", "--input", CONN, "--query", "SELECT nope FROM digits", "--output",
             os.path.join(work, "x")], expect=2)
    check('column "nope" does not exist' in p.stderr, p.stderr)
    p = run(["--model", "digits", "--input", CONN, "--query", query, "--columns", "pixels",
             "--output", CONN], expect=2)
    check("--table" in p.stderr, p.stderr)

    # --- kill -9 with a PostgreSQL sink, then --resume: exactly once ----------------------
    big = 16
    psql("CREATE TABLE big AS SELECT (c * 100000 + id) AS id, pixels FROM digits, generate_series(0, %d) c"
         % (big - 1))
    total = big * N
    args = ["--model", "digits", "--input", CONN, "--query", "SELECT id, pixels FROM big ORDER BY id",
            "--columns", "pixels", "--id-field", "id", "--output", CONN, "--table", "big_results",
            "--chunk-rows", "500", "--batch-size", "16", "--resume"]
    random.seed(5)
    kills = 0
    for _ in range(30):
        proc = subprocess.Popen([BATCH, "--config", CONFIG, "--progress", "off"] + args,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(random.uniform(0.1, 0.5))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        if kills >= 6:
            break
    run(args)
    results = int(psql("SELECT count(*) FROM big_results"))
    dead_rows = int(psql("SELECT count(*) FROM big_results_dead_letter"))
    check(results + dead_rows == total and dead_rows == big * len(BAD),
          f"after {kills} kills: {results} + {dead_rows} != {total}")
    covered = psql("SELECT count(*) FROM (SELECT row_index FROM big_results UNION ALL "
                   "SELECT row_index FROM big_results_dead_letter) u")
    distinct = psql("SELECT count(DISTINCT row_index) FROM (SELECT row_index FROM big_results UNION ALL "
                    "SELECT row_index FROM big_results_dead_letter) u")
    check(covered == distinct == str(total), f"rows {covered} distinct {distinct} of {total}")
    check(kills >= 3, f"only {kills} kills")
    print(f"kill -9 with a PostgreSQL sink: {kills} kills, {results} results, exactly once", flush=True)

    # --- PostgreSQL source -> files; file -> PostgreSQL table -------------------------------
    out = os.path.join(work, "files")
    run(["--model", "digits", "--input", CONN, "--query", query, "--columns", "pixels", "--id-field", "id",
         "--output", out])
    lines = sum(1 for path in glob.glob(os.path.join(out, "part-*.jsonl")) for _ in open(path))
    check(lines == N - len(BAD), f"postgres -> files: {lines} results")
    jsonl = os.path.join(work, "in.jsonl")
    with open(jsonl, "w") as f:
        for i in range(3000):
            f.write(json.dumps({"key": f"k{i}", "pixels": [int(v) for v in digits.data[i % len(digits.data)]]}) + "\n")
    run(["--model", "digits", "--input", jsonl, "--field", "pixels", "--id-field", "key",
         "--output", CONN, "--table", "from_file"])
    check(psql("SELECT count(*) FROM from_file WHERE id LIKE 'k%'") == "3000", "file -> postgres")
finally:
    subprocess.run(as_server + [pg_bin("pg_ctl"), "-D", data_dir, "-m", "immediate", "stop"],
                   capture_output=True)
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
