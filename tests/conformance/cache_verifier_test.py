"""The cache verifier (kind cross_encoder) over HTTP: `requests` scores text pairs through OIP
infer (the same scores as transformers' on the fixture's pairs, within INT8's error), bad pair
requests get 400s naming what was wrong, and the response cache in front of SmolLM2's chat
takes a semantic candidate only when the verifier scores it at or above its bar.

configs/default.toml with [models.cache-verifier] added (as docs/CACHE.md shows), SmolLM2's
cache semantic and cache.verifier_model set; started with --model minilm --model smollm2
--model cache-verifier. Exit 0 on success; skipped when SmolLM2 is not installed.

Usage: cache_verifier_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
"""
import json
import os
import pathlib
import signal
import sys
import tempfile

import requests

from serve import SKIPPED, config_copy, opt_into_semantic_cache, smollm2_installed, start_server  # tests/conformance/serve.py

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERIFIER = f"""
[models.cache-verifier]
kind = "cross_encoder"
weights = "{ROOT}/assets/all-MiniLM-L6-v2/model.safetensors"
adapter = "{ROOT}/assets/cache_verifier/adapter.safetensors"
max_input_tokens = 128
truncate = true
"""
SETTINGS = {"model": "smollm2", "temperature": 0, "max_tokens": 8}
QUESTION = "How do I reset my router?"
# Written for this test (in no training source): a paraphrase the verifier takes, and a
# question that passes the threshold and the lexical checks but asks something else.
PARAPHRASE = "What's the way to reset my router?"
OTHER = "How do I stop my router from resetting?"


def infer(base, first, second, **parameters):
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(first)], "data": first},
                       {"name": "text_pair", "datatype": "BYTES", "shape": [len(second)], "data": second}]}
    if parameters:
        body["parameters"] = parameters
    return requests.post(f"{base}/v2/models/cache-verifier/infer", json=body, timeout=60)


def chat(base, content):
    r = requests.post(f"{base}/v1/chat/completions", timeout=120,
                      json={**SETTINGS, "messages": [{"role": "user", "content": content}]})
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]["message"]["content"], r.headers


def metric(base, name):
    for line in requests.get(f"{base}/metrics", timeout=10).text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def check_scores(base):
    reference = json.loads((ROOT / "tests/fixtures/cache_verifier/reference.json").read_text())
    cases = reference["cases"]
    r = infer(base, [c["a"] for c in cases], [c["b"] for c in cases])
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    assert out["name"] == "score" and out["shape"] == [len(cases), 1], out
    for case, score in zip(cases, out["data"]):
        # INT8 against transformers' FP32 (the unit test bounds INT8 at 0.02, FP32 at 1e-5).
        assert abs(score - case["score"]) < 0.02, (case["a"][:60], case["b"][:60], score, case["score"])

    metadata = requests.get(f"{base}/v2/models/cache-verifier", timeout=10).json()
    assert [i["name"] for i in metadata["inputs"]] == ["text", "text_pair"], metadata
    assert metadata["outputs"][0]["name"] == "score", metadata

    bad = infer(base, ["a", "b"], ["c"])  # the OIP decoder checks the rows agree
    assert bad.status_code == 400 and "inputs[1].shape[0]" in bad.json()["error"], bad.text
    bad = infer(base, ["a"], [""])
    assert bad.status_code == 400 and "text_pair[0]: empty text" in bad.json()["error"], bad.text
    long = "word " * 200
    bad = infer(base, [long], ["a question"], truncate=False)
    assert bad.status_code == 400 and "max_input_tokens 128" in bad.json()["error"], bad.text
    single = requests.post(f"{base}/v2/models/cache-verifier/infer", timeout=30, json={
        "inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["a"]}]})
    assert single.status_code == 400 and "text_pair" in single.json()["error"], single.text
    embed = requests.post(f"{base}/v1/embeddings", timeout=30,
                          json={"model": "cache-verifier", "input": "a"})
    assert embed.status_code == 400 and "cross-encoder" in embed.json()["error"]["message"], embed.text

    scores = infer(base, [QUESTION, QUESTION], [PARAPHRASE, OTHER]).json()["outputs"][0]["data"]
    return scores


def main():
    binary, default_config = sys.argv[1], sys.argv[2]
    if not smollm2_installed(default_config):
        sys.exit(SKIPPED)
    with tempfile.TemporaryDirectory() as tmp:
        config = config_copy(default_config, tmp, append=VERIFIER, replace=[(
            'embedding_model = "minilm"',
            'embedding_model = "minilm"\nverifier_model = "cache-verifier"')])
        opt_into_semantic_cache(config)
        proc, address = start_server(binary, config, extra_args=[
            "--model", "minilm", "--model", "smollm2", "--model", "cache-verifier"])
        base = f"http://{address}"
        try:
            paraphrase_score, other_score = check_scores(base)
            assert paraphrase_score >= 0.95 and other_score < 0.8, (paraphrase_score, other_score)

            answer, headers = chat(base, QUESTION)
            assert headers["X-Cache"] == "miss", dict(headers)
            similar, headers = chat(base, PARAPHRASE)
            assert headers["X-Cache"] == "hit-semantic" and similar == answer, dict(headers)

            # Above the threshold, passed by the lexical checks, refused by the verifier.
            rejections = metric(base, "coinfer_cache_verifier_rejections_total")
            _, headers = chat(base, OTHER)
            assert headers["X-Cache"] == "miss", dict(headers)
            assert float(headers["X-Cache-Similarity"]) >= 0.86, dict(headers)
            assert metric(base, "coinfer_cache_verifier_rejections_total") == rejections + 1
            assert metric(base, "coinfer_cache_semantic_hits_total") == 1
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    print("ok")


if __name__ == "__main__":
    main()
