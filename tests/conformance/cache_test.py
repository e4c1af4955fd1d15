"""The response cache in front of SmolLM2's chat, from the `openai` package (raw responses,
for the X-Cache headers) and `requests`: exact and semantic hits answer with the cached
completion, a negated question and another namespace miss, a stream is replayed, no-store
skips the cache, invalidation by id and by namespace, /metrics, and a snapshot restored
after a restart; Triton's generate extension over HTTP and as /v2/ws messages (the `websockets`
package: "cache" in the final reply, "cache_namespace" and "cache_control" fields); and OIP
infer of the digits classifier with cache = "exact".
configs/default.toml started with --model minilm --model smollm2 --model digits. Exit 0 on
success; skipped (exit 0 with a message) when SmolLM2 is not installed.

Usage: cache_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
"""
import asyncio
import json
import os
import signal
import sys
import tempfile

import openai
import requests
import websockets

from serve import SKIPPED, config_copy, opt_into_semantic_cache, smollm2_installed, start_server  # tests/conformance/serve.py

QUESTION = "Which fruits are safe for dogs to eat?"
PARAPHRASE = "What fruits can dogs safely eat?"
NEGATED = "Which fruits are not safe for dogs to eat?"
SETTINGS = {"model": "smollm2", "temperature": 0, "max_tokens": 12}


def chat(client, content, **extra):
    """(content, headers) of one chat completion."""
    raw = client.chat.completions.with_raw_response.create(
        messages=[{"role": "user", "content": content}], **SETTINGS, **extra)
    return raw.parse().choices[0].message.content, raw.headers


def embedding_cosine(base, a, b):
    """The cosine of two texts' MiniLM embeddings from /v1/embeddings."""
    r = requests.post(f"{base}/v1/embeddings", json={"model": "minilm", "input": [a, b]}, timeout=30)
    assert r.status_code == 200, r.text
    x, y = (d["embedding"] for d in sorted(r.json()["data"], key=lambda d: d["index"]))
    norm = (sum(v * v for v in x) * sum(v * v for v in y)) ** 0.5
    return sum(p * q for p, q in zip(x, y)) / norm


def start(binary, config):
    return start_server(binary, config, extra_args=["--model", "minilm", "--model", "smollm2",
                                                    "--model", "digits"])


def digits_infer(base, pixels, headers=None):
    """One OIP infer of the digits classifier: (outputs by name, response headers)."""
    r = requests.post(f"{base}/v2/models/digits/infer", timeout=30, headers=headers or {},
                      json={"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 64],
                                        "data": pixels}]})
    assert r.status_code == 200, r.text
    return {o["name"]: o["data"] for o in r.json()["outputs"]}, r.headers


def check_generate_cache(base):
    """Triton's generate extension, whole and as Server-Sent Events, through the same cache;
    returns the text it stored."""
    body = {"text_input": "The three primary colors are", "parameters": {"max_tokens": 8, "temperature": 0}}
    url = f"{base}/v2/models/smollm2/generate"
    first = requests.post(url, json=body, timeout=60)
    assert first.status_code == 200 and first.headers["X-Cache"] == "miss", first.headers
    again = requests.post(url, json=body, timeout=60)
    assert again.headers["X-Cache"] == "hit-exact", again.headers
    assert again.json()["text_output"] == first.json()["text_output"], (again.text, first.text)
    assert again.json()["finish_reason"] == "length", again.text
    with requests.post(f"{url}_stream", json=body, timeout=60, stream=True) as streamed:
        assert streamed.headers["X-Cache"] == "hit-exact", streamed.headers
        events = [json.loads(line[6:]) for line in streamed.iter_lines(decode_unicode=True)
                  if line.startswith("data: ")]
    assert "".join(e["text_output"] for e in events) == first.json()["text_output"], events
    assert events[-1]["finish_reason"] == "length", events[-1]
    return first.json()["text_output"]


async def ws_generate(ws, id, text, max_tokens=8, stream=False, **fields):
    """One /v2/ws generate message; (the final reply, the text of every message)."""
    await ws.send(json.dumps({"id": id, "model_name": "smollm2", "text_input": text,
                              "parameters": {"max_tokens": max_tokens, "temperature": 0,
                                             "stream": stream}, **fields}))
    pieces = []
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
        assert message["id"] == id, message
        if "error" in message:
            return message, ""
        pieces.append(message["text_output"])
        if message.get("final"):
            return message, "".join(pieces)


async def check_ws_generate_cache(address, http_text):
    """/v2/ws generate messages go through the same cache as HTTP: a final reply says
    "cache"; "cache_namespace" and "cache_control" are the headers' equivalents."""
    async with websockets.connect(f"ws://{address}/v2/ws") as ws:
        # What HTTP's generate stored (the same route, text and parameters) answers a message.
        reply, text = await ws_generate(ws, "w0", "The three primary colors are")
        assert reply["cache"] == "hit-exact" and text == http_text, (reply, http_text)
        first, text = await ws_generate(ws, "w1", "A haiku about the sea:", stream=True)
        assert first["cache"] == "miss" and first["finish_reason"] == "length", first
        again, replayed = await ws_generate(ws, "w2", "A  haiku about the sea: ", stream=True)
        assert again["cache"] == "hit-exact" and replayed == text, (again, replayed, text)
        assert again["usage"]["completion_tokens"] == first["usage"]["completion_tokens"], again
        other, _ = await ws_generate(ws, "w3", "A haiku about the sea:", cache_namespace="poems")
        assert other["cache"] == "miss", other
        skipped, _ = await ws_generate(ws, "w4", "A haiku about the sea:", cache_control="no-store")
        assert skipped["cache"] == "miss", skipped
        # no-store stored nothing: the same text asked again without it misses.
        for id, fields in (("w5", {"cache_control": "no-store"}), ("w6", {})):
            reply, _ = await ws_generate(ws, id, "Name a blue fruit.", **fields)
            assert reply["cache"] == "miss", reply
        bad, _ = await ws_generate(ws, "w7", "hi", cache_namespace="no spaces")
        assert bad["status"] == 400 and "cache_namespace" in bad["error"], bad


def check_infer_cache(base):
    """The classifier (cache = "exact"): repeated inputs are answered from the cache."""
    one = [0, 0, 0, 12, 13, 5, 0, 0] * 8
    seven = [0, 7, 15, 16, 16, 14, 0, 0] + [0, 0, 0, 0, 10, 13, 0, 0] * 7
    first, headers = digits_infer(base, one)
    assert headers["X-Cache"] == "miss" and "X-Cache-Entry" in headers, headers
    again, repeat = digits_infer(base, one)
    assert repeat["X-Cache"] == "hit-exact", repeat
    assert repeat["X-Cache-Entry"] == headers["X-Cache-Entry"] and again == first, (again, first)
    other, headers = digits_infer(base, seven)
    assert headers["X-Cache"] == "miss" and other != first, headers
    _, headers = digits_infer(base, one, {"Cache-Control": "no-cache"})
    assert headers["X-Cache"] == "miss", headers


def check_feedback(base, client):
    """POST /v2/cache/feedback: a semantic hit reported wrong raises that entry's bar (and,
    with no right reports to outweigh it, the namespace's), an exact hit reported wrong removes
    the entry; GET / PUT /v2/cache/namespaces/{name} show and set a namespace's settings."""
    space = {"X-Cache-Namespace": "feedback"}
    _, headers = chat(client, QUESTION, extra_headers=space)
    assert headers["x-cache"] == "miss", dict(headers)
    entry = int(headers["x-cache-entry"])
    _, headers = chat(client, PARAPHRASE, extra_headers=space)
    assert headers["x-cache"] == "hit-semantic" and int(headers["x-cache-entry"]) == entry, dict(headers)
    similarity = float(headers["x-cache-similarity"])

    wrong = requests.post(f"{base}/v2/cache/feedback", timeout=10,
                          json={"entry": entry, "correct": False, "similarity": similarity})
    assert wrong.status_code == 200, wrong.text
    verdict = wrong.json()
    assert verdict["removed"] is False and verdict["entry_threshold"] > similarity, verdict
    state = requests.get(f"{base}/v2/cache/namespaces/feedback", timeout=10).json()
    assert state["feedback"] == {"right": 0, "wrong": 1}, state
    assert state["threshold_in_force"] > similarity >= state["similarity_threshold"], state
    other = requests.get(f"{base}/v2/cache/namespaces/default", timeout=10).json()
    assert other["threshold_in_force"] == other["similarity_threshold"], other
    _, headers = chat(client, PARAPHRASE, extra_headers=space)
    assert headers["x-cache"] == "miss", dict(headers)  # the bar is above this paraphrase now

    _, headers = chat(client, QUESTION, extra_headers=space)
    assert headers["x-cache"] == "hit-exact", dict(headers)
    removed = requests.post(f"{base}/v2/cache/feedback", timeout=10,
                            json={"entry": entry, "correct": False})
    assert removed.status_code == 200 and removed.json()["removed"] is True, removed.text
    gone = requests.post(f"{base}/v2/cache/feedback", timeout=10, json={"entry": entry, "correct": True})
    assert gone.status_code == 404, gone.text
    for body, field in (({"correct": False}, "entry"), ({"entry": entry}, "correct"),
                        ({"entry": -3, "correct": False}, "entry"),
                        ({"entry": entry, "correct": "no"}, "correct"),
                        ({"entry": entry, "correct": False, "similarity": 7}, "similarity"),
                        ({"entry": entry, "correct": False, "verdict": 1}, "verdict")):
        bad = requests.post(f"{base}/v2/cache/feedback", json=body, timeout=10)
        assert bad.status_code == 400 and field in bad.json()["error"], (body, bad.text)
    bad = requests.post(f"{base}/v2/cache/feedback", data="[1,", timeout=10)
    assert bad.status_code == 400 and "JSON object" in bad.json()["error"], bad.text

    put = requests.put(f"{base}/v2/cache/namespaces/strict", timeout=10,
                       json={"similarity_threshold": 0.99, "target_error_rate": 0.01})
    assert put.status_code == 200, put.text
    assert abs(put.json()["similarity_threshold"] - 0.99) < 1e-6, put.text
    assert abs(put.json()["target_error_rate"] - 0.01) < 1e-6, put.text
    bad = requests.put(f"{base}/v2/cache/namespaces/strict", json={"similarity_threshold": 2}, timeout=10)
    assert bad.status_code == 400 and "similarity_threshold" in bad.json()["error"], bad.text
    bad = requests.put(f"{base}/v2/cache/namespaces/no%20spaces", json={}, timeout=10)
    assert bad.status_code == 400, bad.text
    strict = {"X-Cache-Namespace": "strict"}
    chat(client, QUESTION, extra_headers=strict)
    _, headers = chat(client, PARAPHRASE, extra_headers=strict)
    assert headers["x-cache"] == "miss", dict(headers)  # below 0.99

    metrics = requests.get(f"{base}/metrics", timeout=10).text
    assert 'coinfer_cache_feedback_total{verdict="wrong"} 2' in metrics, metrics
    assert 'coinfer_cache_feedback_total{verdict="right"} 0' in metrics, metrics
    # The stats stream (the dashboard's source) reports them and the precision they give.
    with requests.get(f"{base}/v2/stats/stream", stream=True, timeout=10) as stream:
        line = next(l for l in stream.iter_lines(decode_unicode=True) if l.startswith("data: "))
    cache = json.loads(line[6:])["cache"]
    assert cache["feedback_right"] == 0 and cache["feedback_wrong"] == 2, cache
    assert cache["reported_precision"] == 0, cache


def main():
    binary, default_config = sys.argv[1], sys.argv[2]
    if not smollm2_installed(default_config):
        sys.exit(SKIPPED)
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = os.path.join(tmp, "cache.snapshot")
        config = config_copy(default_config, tmp)
        with open(config) as f:
            text = f.read().replace('snapshot_file = ""', f'snapshot_file = "{snapshot}"')
            text = text.replace("[models.digits]\n", '[models.digits]\ncache = "exact"\n')
            text = text.replace("[models.smollm2]\n", '[models.smollm2]\nversion = "3"\n')
        with open(config, "w") as f:
            f.write(text)
        opt_into_semantic_cache(config)  # the default service caches exact repeats only

        proc, address = start(binary, config)
        base = f"http://{address}"
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused")
        try:
            answer, headers = chat(client, QUESTION)
            assert headers["x-cache"] == "miss", dict(headers)
            entry = headers["x-cache-entry"]

            again, headers = chat(client, QUESTION)
            assert headers["x-cache"] == "hit-exact" and headers["x-cache-entry"] == entry, dict(headers)
            assert again == answer

            similar, headers = chat(client, PARAPHRASE)
            assert headers["x-cache"] == "hit-semantic", dict(headers)
            # The similarity is the two questions' MiniLM cosine, as /v1/embeddings gives it.
            cosine = embedding_cosine(base, QUESTION, PARAPHRASE)
            assert abs(float(headers["x-cache-similarity"]) - cosine) < 1e-3, (dict(headers), cosine)
            assert headers["x-cache-entry"] == entry and similar == answer

            # Close in meaning, opposite in sense: above the threshold, refused by the checks.
            _, headers = chat(client, NEGATED)
            assert headers["x-cache"] == "miss", dict(headers)
            cosine = embedding_cosine(base, QUESTION, NEGATED)
            assert cosine >= 0.86, cosine
            assert abs(float(headers["x-cache-similarity"]) - cosine) < 1e-3, (dict(headers), cosine)

            # Other sampling parameters, another namespace: other entries.
            _, headers = chat(client, QUESTION, seed=7, extra_headers={"X-Cache-Namespace": "team-b"})
            assert headers["x-cache"] == "miss", dict(headers)
            _, headers = chat(client, QUESTION, extra_headers={"X-Cache-Namespace": "team-b"})
            assert headers["x-cache"] == "miss", dict(headers)

            # A stream replayed from the cache: the same chunks' text, with the hit header.
            with requests.post(f"{base}/v1/chat/completions", stream=True, timeout=60,
                               json={**SETTINGS, "stream": True,
                                     "messages": [{"role": "user", "content": QUESTION}]}) as streamed:
                assert streamed.headers["X-Cache"] == "hit-exact", streamed.headers
                chunks = [json.loads(line[6:]) for line in streamed.iter_lines(decode_unicode=True)
                          if line.startswith("data: {")]
            assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == answer
            assert len(chunks) > 2 and chunks[-1]["choices"][0]["finish_reason"] == "length"

            _, headers = chat(client, QUESTION, extra_headers={"Cache-Control": "no-store"})
            assert headers["x-cache"] == "miss" and "x-cache-entry" not in headers, dict(headers)

            bad = requests.post(f"{base}/v1/chat/completions", timeout=60,
                                headers={"X-Cache-Namespace": "no spaces"},
                                json={**SETTINGS, "messages": [{"role": "user", "content": "hi"}]})
            assert bad.status_code == 400 and "X-Cache-Namespace" in bad.json()["error"]["message"], bad.text

            check_feedback(base, client)
            check_infer_cache(base)
            asyncio.run(check_ws_generate_cache(address, check_generate_cache(base)))

            # The configured version: in the metadata, and in the cache's scope.
            metadata = requests.get(f"{base}/v2/models/smollm2", timeout=10).json()
            assert metadata["versions"] == ["3"], metadata

            metrics = requests.get(f"{base}/metrics", timeout=10).text
            assert "coinfer_cache_semantic_hits_total 2" in metrics, metrics
            assert "coinfer_cache_guard_rejections_total" in metrics
            stats = requests.get(f"{base}/v2/cache", timeout=10).json()
            # 2 digits entries; the generate entry has a vector too, and so have the three the
            # /v2/ws messages stored (the haiku in two namespaces, the blue fruit) and the three
            # of check_feedback (the paraphrase in "feedback", both questions in "strict")
            assert stats["entries"] == 13 and stats["vectors"] == 11, stats
        finally:
            proc.send_signal(signal.SIGTERM)  # drains, then writes the snapshot
            code = proc.wait(timeout=60)
        assert code == 0, f"coinfer-serve exited {code} after SIGTERM (the snapshot is written on the way out)"
        assert os.path.getsize(snapshot) > 0

        proc, address = start(binary, config)
        base = f"http://{address}"
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused")
        try:
            restored, headers = chat(client, QUESTION)
            assert headers["x-cache"] == "hit-exact" and headers["x-cache-entry"] == entry, dict(headers)
            assert restored == answer

            deleted = requests.delete(f"{base}/v2/cache/entries/{entry}", timeout=10)
            assert deleted.status_code == 200 and deleted.json() == {"deleted": 1}, deleted.text
            gone = requests.delete(f"{base}/v2/cache/entries/{entry}", timeout=10)
            assert gone.status_code == 404, gone.text
            _, headers = chat(client, PARAPHRASE)  # its vector went with it
            assert headers["x-cache"] == "miss", dict(headers)

            cleared = requests.delete(f"{base}/v2/cache/namespaces/team-b", timeout=10)
            assert cleared.status_code == 200 and cleared.json()["deleted"] == 2, cleared.text
            _, headers = chat(client, QUESTION, extra_headers={"X-Cache-Namespace": "team-b"})
            assert headers["x-cache"] == "miss", dict(headers)
        finally:
            proc.kill()
            proc.wait()
    print("ok")


if __name__ == "__main__":
    main()
