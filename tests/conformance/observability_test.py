"""What an operator sees, from curl and requests: Server-Timing and X-Request-Id on every
response, JSON logs with an access line per request carrying its id, the text format, and the
live stats stream (/v2/stats/stream) counting the requests it saw; a stats stream does not hold
up a graceful stop.
configs/default.toml started with --model digits --model minilm (and --model smollm2 for the
JSON-log server when SmolLM2 is installed). Exit 0 on success.

Usage: observability_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import requests
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from serve import SKIPPED, config_copy, read_grpc_address, smollm2_installed  # tests/conformance/serve.py

DIGIT = [0, 0, 5, 13, 9, 0, 0, 0, 0, 0, 13, 16, 9, 15, 5, 1, 1, 3, 15, 3, 0, 11, 9, 0, 1, 3,
         12, 0, 1, 8, 7, 0, 0, 4, 7, 0, 0, 9, 7, 0, 0, 5, 10, 0, 2, 12, 7, 0, 0, 2, 13, 5, 9,
         11, 0, 0, 1, 1, 6, 13, 10, 0, 0, 1]  # assets/samples/digits.jsonl, id 0 (a zero)
INFER = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 64], "data": DIGIT}]}

failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)


def start(binary, config, log_file, llm=False):
    models = ["--model", "digits", "--model", "minilm"] + (["--model", "smollm2"] if llm else [])
    proc = subprocess.Popen([binary, "--config", config, "--port", "0", "--grpc-port", "0", *models],
                            stdout=subprocess.PIPE, stderr=log_file, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on http://"):
        proc.kill()
        raise SystemExit(f"unexpected first line from coinfer-serve: {line!r}")
    proc.grpc_address = read_grpc_address(proc)
    return proc, "http://" + line[len("listening on http://"):]


def server_timing(value):
    """Server-Timing's entries as {name: ms}."""
    entries = {}
    for part in value.split(","):
        m = re.fullmatch(r"\s*([a-z_]+);dur=([0-9.]+)\s*", part)
        if not m:
            raise AssertionError(f"Server-Timing entry {part!r} is not name;dur=ms")
        entries[m.group(1)] = float(m.group(2))
    return entries


def curl_headers(url, *args):
    """The response headers of `curl -v` (its '< ' lines) as {lower name: value}."""
    out = subprocess.run(["curl", "-sv", "-o", "/dev/null", *args, url], capture_output=True,
                         text=True, timeout=30).stderr
    headers = {}
    for line in out.splitlines():
        if line.startswith("< ") and ":" in line:
            name, value = line[2:].split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return headers


def read_stream(url, messages, stop):
    """Appends every data message of the stats stream to `messages` until it ends."""
    try:
        with requests.get(url + "/v2/stats/stream", stream=True, timeout=30) as r:
            messages.append(("headers", r.status_code, r.headers.get("Content-Type")))
            for line in r.iter_lines(decode_unicode=True):
                if line.startswith("data: "):
                    messages.append(json.loads(line[len("data: "):]))
                if stop.is_set():
                    return
    except requests.RequestException as e:
        messages.append(("ended", str(e)))


def log_config(default_toml, directory, log_keys):
    """A copy of default_toml in `directory` (made) with `log_keys` (TOML lines) added to its
    [log] table; returns the copy's path."""
    os.mkdir(directory)
    config = config_copy(default_toml, directory)
    with open(config) as f:
        text = f.read()
    section = '[log]\nlevel = "info"\n'
    assert section in text, f"{default_toml} has no [log] table as expected"
    with open(config, "w") as f:
        f.write(text.replace(section, section + log_keys, 1))
    return config


def main():
    binary, default_toml = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        config = log_config(default_toml, os.path.join(tmp, "json"), 'format = "json"\naccess = true\n')
        log_path = os.path.join(tmp, "server.log")
        llm = smollm2_installed(default_toml)
        with open(log_path, "w") as log_file:
            proc, url = start(binary, config, log_file, llm)
        try:
            run_json(proc, url, log_path, llm)
        finally:
            if proc.poll() is None:
                proc.kill()

        config = log_config(default_toml, os.path.join(tmp, "text"), "access = true\n")
        log_path = os.path.join(tmp, "server-text.log")
        with open(log_path, "w") as log_file:
            proc, url = start(binary, config, log_file)
        try:
            r = requests.post(url + "/v2/models/digits/infer", json=INFER,
                              headers={"X-Request-Id": "text-format-1"}, timeout=30)
            check(r.status_code == 200, "text format: an infer request answers 200")
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        check(code == 0, f"coinfer-serve exited {code} after SIGTERM")
        with open(log_path) as f:
            lines = f.read().splitlines()
        access = [l for l in lines if "request_id=text-format-1" in l]
        check(len(access) == 1 and re.search(r"\] access request_id=text-format-1 method=POST "
                                             r"target=/v2/models/digits/infer status=200 bytes=\d+ "
                                             r"duration_ms=[0-9.]+ server_timing=\"[^\"]*total;dur=",
                                             access[0]) is not None,
              f"text format: the access line reads key=value: {access}")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    if not llm:
        sys.exit(SKIPPED)  # the rest passed; the language model's part could not run


def run_json(proc, url, log_path, llm):
    messages, stop = [], threading.Event()
    reader = threading.Thread(target=read_stream, args=(url, messages, stop), daemon=True)
    reader.start()
    stream_started = time.monotonic()

    # curl -v shows Server-Timing and the id it sent.
    h = curl_headers(url + "/v2/models/digits/infer", "-H", "Content-Type: application/json",
                     "-H", "X-Request-Id: order-42", "-d", json.dumps(INFER))
    check(h.get("x-request-id") == "order-42", f"X-Request-Id sent is echoed: {h.get('x-request-id')}")
    timing = server_timing(h.get("server-timing", ""))
    check({"decode", "queue", "compute", "encode", "total"} <= set(timing),
          f"Server-Timing of an infer request has decode, queue, compute, encode, total: {timing}")
    check(timing.get("total", 0) >= timing.get("compute", 0) > 0,
          "Server-Timing's total covers the compute it lists")

    # Without an id (or with one that is no token), the server makes one: 32 hex digits.
    ids = set()
    for sent in [None, "has spaces in it", "x" * 129]:
        headers = {"X-Request-Id": sent} if sent else {}
        r = requests.post(url + "/v2/models/digits/infer", json=INFER, headers=headers, timeout=30)
        ids.add(r.headers.get("X-Request-Id", ""))
    check(len(ids) == 3 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids),
          f"missing or invalid ids are replaced by distinct generated ones: {ids}")

    # A gRPC call has its access line too: method GRPC, the RPC as target, the model, the
    # outcome as HTTP's status and gRPC's code.
    x = grpcclient.InferInput("INPUT0", [1, 64], "FP32")
    x.set_data_from_numpy(np.array(INFER["inputs"][0]["data"], dtype=np.float32).reshape(1, 64))
    grpc_client = grpcclient.InferenceServerClient(proc.grpc_address)
    grpc_client.infer("digits", [x], request_id="grpc-7")
    try:
        grpc_client.get_model_metadata("no_such_model")
    except InferenceServerException:
        pass

    # A text endpoint adds its tokenization; an error still has an id and a total.
    r = requests.post(url + "/v1/embeddings", json={"model": "minilm", "input": ["a cat sat"]},
                      timeout=30)
    timing = server_timing(r.headers.get("Server-Timing", ""))
    check(r.status_code == 200 and "preprocess" in timing and "compute" in timing,
          f"Server-Timing of an embeddings request has preprocess and compute: {timing}")
    if llm:  # a whole chat answer reports its time to first token and its generation
        r = requests.post(url + "/v1/chat/completions", timeout=120, json={
            "model": "smollm2", "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}]})
        timing = server_timing(r.headers.get("Server-Timing", ""))
        check(r.status_code == 200 and
              timing.get("generation", 0) >= timing.get("first_token", 0) > 0 and "cache" in timing,
              f"Server-Timing of a chat completion has cache, first_token, generation: {timing}")
    r = requests.post(url + "/v2/models/digits/infer", json={"inputs": []},
                      headers={"X-Request-Id": "bad-1"}, timeout=30)
    check(r.status_code == 400 and r.headers.get("X-Request-Id") == "bad-1" and
          "total" in server_timing(r.headers.get("Server-Timing", "")),
          "an error answer carries its id and Server-Timing total")

    # Load the stats stream sees.
    session = requests.Session()
    sent = 0
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:
        assert session.post(url + "/v2/models/digits/infer", json=INFER, timeout=30).status_code == 200
        sent += 1
    time.sleep(2.2)  # two more messages: the last requests' window is reported
    stats = [m for m in messages if isinstance(m, dict)]
    streamed = time.monotonic() - stream_started
    check(messages and messages[0] == ("headers", 200, "text/event-stream"),
          f"the stats stream answers 200 text/event-stream: {messages[:1]}")
    check(streamed - 2 <= len(stats) <= streamed + 1,
          f"a stats message a second: {len(stats)} in {streamed:.1f} s")
    digits = [next(x for x in m["models"] if x["name"] == "digits") for m in stats]
    counted = sum(d["success"] for d in digits)
    check(counted == sent + 5,  # and the 4 over HTTP and the one over gRPC before the loop
          f"the stream's windows count every digits request once: {counted} for {sent} + 5")
    check(sum(d["failure"] for d in digits) == 1, "... and the one that failed (400)")
    busy = [d for d in digits if d["requests_per_s"] > 0]
    check(busy and all(d["latency_ms"]["p50"] is not None and d["latency_ms"]["p99"] >=
                       d["latency_ms"]["p50"] > 0 for d in busy),
          "windows with requests report p50 <= p99 latency")
    check(any(d["batch_sizes"] for d in busy) and all(
        sum(d["batch_sizes"].values()) > 0 for d in busy if d["batch_sizes"]),
          "windows with requests report the batch-size histogram")
    if llm:
        check(all(m["cache"] is not None and [g["name"] for g in m["generators"]] == ["smollm2"]
                  for m in stats), "the language model and its response cache are in every message")
        check(sum(g["success"] for m in stats for g in m["generators"]) == 1,
              "the one chat answer is counted once")
    else:
        check(all(m["cache"] is None and m["generators"] == [] for m in stats),
              "no cache and no language model in this configuration: cache null, generators []")

    # SIGTERM with the stream open: the server ends it and exits without waiting for the
    # drain timeout (10 s).
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=30)
    elapsed = time.monotonic() - started
    stop.set()
    reader.join(timeout=10)
    check(code == 0 and elapsed < 5, f"SIGTERM with a stats stream open: exit {code} in {elapsed:.1f} s")

    with open(log_path) as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            check(False, f"every log line is a JSON object: {line[:120]!r}")
    check(all({"time", "level", "logger", "msg"} <= set(p) for p in parsed),
          "every JSON log line has time, level, logger and msg")
    check(any(p["msg"].startswith("effective config") and "\n" in p["msg"] for p in parsed),
          "a multi-line message (the effective config) is one JSON line")
    access = [p for p in parsed if p["msg"] == "access"]
    mine = [p for p in access if p.get("request_id") == "order-42"]
    check(len(mine) == 1 and mine[0]["status"] == 200 and mine[0]["method"] == "POST" and
          mine[0]["target"] == "/v2/models/digits/infer" and mine[0]["bytes"] > 0 and
          "compute;dur=" in mine[0]["server_timing"] and mine[0]["duration_ms"] >= 0,
          f"the access line of the request with id order-42: {mine}")
    grpc_lines = [p for p in access if p.get("method") == "GRPC"]
    infer = [p for p in grpc_lines if p.get("request_id") == "grpc-7"]
    check(len(infer) == 1 and infer[0]["target"] == "/inference.GRPCInferenceService/ModelInfer"
          and infer[0]["model"] == "digits" and infer[0]["status"] == 200
          and infer[0]["grpc_status"] == 0 and infer[0]["duration_ms"] >= 0,
          f"the access line of the gRPC infer with id grpc-7: {infer}")
    unknown = [p for p in grpc_lines if p.get("model") == "no_such_model"]
    check(len(unknown) == 1 and unknown[0]["status"] == 404 and unknown[0]["grpc_status"] == 5
          and unknown[0]["target"].endswith("/ModelMetadata"),
          f"the gRPC NOT_FOUND's access line: {unknown}")
    bad = [p for p in access if p.get("request_id") == "bad-1"]
    check(len(bad) == 1 and bad[0]["status"] == 400, f"the 400's access line: {bad}")
    expected = sent + 6 + 2 + (1 if llm else 0)  # and the stats stream's own, once it ended
    check(len(access) >= expected, f"an access line per request: {len(access)} for {expected}+")


if __name__ == "__main__":
    main()
