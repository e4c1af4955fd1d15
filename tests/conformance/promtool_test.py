"""promtool (Debian's prometheus) on what an operator deploys: /metrics of a server that served
every kind of model passes `promtool check metrics`; deploy/prometheus/prometheus.yml passes
`check config`, alerts.yml `check rules` and its unit tests (`test rules alerts_test.yml`);
every metric the rules and the Grafana dashboard query is served, and every metric family
served is in docs/METRICS.md.
configs/default.toml (SmolLM2 and the response cache when installed). Exit 0 on success.

Usage: promtool_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml PATH/TO/deploy/prometheus
"""
import json
import os
import re
import signal
import subprocess
import sys

import requests

from serve import SKIPPED, smollm2_installed, start_server  # tests/conformance/serve.py

failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)


def promtool(*args, cwd=None, stdin=None):
    r = subprocess.run(["promtool", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                       timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


def main():
    binary, default_toml, deploy = sys.argv[1], sys.argv[2], sys.argv[3]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(default_toml)))

    code, out = promtool("check", "config", "prometheus.yml", cwd=deploy)
    check(code == 0, f"promtool check config prometheus.yml: {out}")
    code, out = promtool("check", "rules", "alerts.yml", cwd=deploy)
    check(code == 0, f"promtool check rules alerts.yml: {out}")
    code, out = promtool("test", "rules", "alerts_test.yml", cwd=deploy)
    check(code == 0, f"promtool test rules alerts_test.yml: {out}")

    llm = smollm2_installed(default_toml)
    proc, address = start_server(binary, default_toml)
    url = f"http://{address}"
    try:
        digit = json.loads(open(os.path.join(repo, "assets", "samples", "digits.jsonl")).readline())
        infer = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 64],
                             "data": digit["pixels"]}]}
        for _ in range(3):
            assert requests.post(url + "/v2/models/digits/infer", json=infer, timeout=60).ok
        assert requests.post(url + "/v2/models/digits/infer", json={"inputs": []},
                             timeout=60).status_code == 400
        assert requests.post(url + "/v1/embeddings", json={"model": "minilm", "input": ["hi"]},
                             timeout=60).ok
        if llm:
            chat = {"model": "smollm2", "max_tokens": 4, "temperature": 0,
                    "messages": [{"role": "user", "content": "Name a colour."}]}
            for _ in range(2):  # the second is a cache hit
                assert requests.post(url + "/v1/chat/completions", json=chat, timeout=120).ok
        r = requests.get(url + "/metrics", timeout=30)
        check(r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain"),
              "/metrics answers text/plain")
        metrics = r.text
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    check(code == 0, f"coinfer-serve exited {code} after SIGTERM")

    code, out = promtool("check", "metrics", stdin=metrics)
    check(code == 0 and out == "", f"promtool check metrics on /metrics: exit {code} {out}")

    families = set(re.findall(r"^# TYPE (\S+) ", metrics, re.M))
    served = set(re.findall(r"^([a-z_:][a-z0-9_:]*)[{ ]", metrics, re.M))
    expected = {"coinfer_inference_request_success_total", "coinfer_inference_queue_depth",
                "coinfer_inference_request_duration_seconds"}
    if llm:
        expected |= {"coinfer_time_to_first_token_seconds", "coinfer_kv_cache_usage_perc",
                     "coinfer_cache_exact_hits_total"}
    check(expected <= families, f"/metrics has the model, LLM and cache families: {sorted(expected - families)} missing")

    with open(os.path.join(deploy, "alerts.yml")) as f:
        used = set(re.findall(r"\bcoinfer_[a-z0-9_]+", f.read()))
    with open(os.path.join(repo, "deploy", "grafana", "coinfer-dashboard.json")) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    check(len(exprs) >= 8, f"the Grafana dashboard queries {len(exprs)} series")
    for expr in exprs:
        used |= set(re.findall(r"\bcoinfer_[a-z0-9_]+", expr))
    missing = sorted(u for u in used if u not in served and u not in families)
    if not llm:  # served only with a language model and the cache
        missing = [m for m in missing if not re.match(r"coinfer_(time_|kv_|cache_|generation|num_|prompt|e2e)", m)]
    check(not missing, f"every metric the alert rules and the Grafana dashboard use is served: {missing} missing")

    with open(os.path.join(repo, "docs", "METRICS.md")) as f:
        documented = set(re.findall(r"`(coinfer_[a-z0-9_]+)`", f.read()))
    undocumented = sorted(families - documented)
    check(not undocumented, f"every metric family served is in docs/METRICS.md: {undocumented} missing")

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    if not llm:
        sys.exit(SKIPPED)  # the rest passed; the language model's metrics could not be checked


if __name__ == "__main__":
    main()
