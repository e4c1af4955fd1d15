"""Triton's generate extension from third-party clients: `requests` (POST generate, and
generate_stream read as Server-Sent Events) and the `websockets` package (tokens streamed
over /v2/ws), against coinfer-serve's SmolLM2 (configs/default.toml, started with
--model smollm2). Exit 0 on success; skipped (exit 0 with a message) when the model is not
installed.

Usage: generate_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
"""
import asyncio
import json
import sys

import requests
import websockets

from serve import SKIPPED, smollm2_installed, start_server  # tests/conformance/serve.py

PROMPT = "The three primary colors are"
PARAMETERS = {"max_tokens": 16, "temperature": 0, "ignore_eos": True}


def sse_events(response):
    """The JSON payloads of a text/event-stream response, as they arrive."""
    for line in response.iter_lines(decode_unicode=True):
        if line.startswith("data: "):
            yield json.loads(line[len("data: "):])


async def websocket_stream(url, expected):
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"id": "g1", "model_name": "smollm2", "text_input": PROMPT,
                                  "parameters": dict(PARAMETERS, stream=True)}))
        # An infer request on the same connection is answered while the text streams.
        await ws.send(json.dumps({"id": "i1", "model_name": "missing", "inputs": []}))
        pieces, final, other = [], None, None
        while final is None or other is None:
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            if message["id"] == "i1":
                other = message
                continue
            assert message["id"] == "g1" and message["model_name"] == "smollm2", message
            pieces.append(message["text_output"])
            if message.get("final"):
                final = message
        assert other["status"] == 404, other
        assert "".join(pieces) == expected, ("".join(pieces), expected)
        assert len(pieces) > 2, pieces  # streamed, not one message
        assert final["finish_reason"] == "length", final
        assert final["usage"]["completion_tokens"] == 16, final


def main():
    binary, config = sys.argv[1], sys.argv[2]
    if not smollm2_installed(config):
        sys.exit(SKIPPED)
    proc, address = start_server(binary, config, extra_args=["--model", "smollm2"])
    try:
        base = f"http://{address}"
        reference = requests.post(f"{base}/v1/completions", timeout=60, json=dict(
            PARAMETERS, model="smollm2", prompt=PROMPT)).json()["choices"][0]["text"]

        whole = requests.post(f"{base}/v2/models/smollm2/generate", timeout=60,
                              json={"text_input": PROMPT, "parameters": PARAMETERS})
        assert whole.status_code == 200, whole.text
        body = whole.json()
        assert body["text_output"] == reference, (body, reference)
        assert body["finish_reason"] == "length" and body["usage"]["completion_tokens"] == 16, body

        with requests.post(f"{base}/v2/models/smollm2/generate_stream", timeout=60, stream=True,
                           json={"text_input": PROMPT, **PARAMETERS}) as streamed:
            assert streamed.status_code == 200, streamed.text
            assert streamed.headers["Content-Type"].startswith("text/event-stream"), streamed.headers
            events = list(sse_events(streamed))
        assert "".join(e["text_output"] for e in events) == reference, events
        assert events[-1]["finish_reason"] == "length", events[-1]

        bad = requests.post(f"{base}/v2/models/smollm2/generate", timeout=60,
                            json={"text_input": PROMPT, "parameters": {"top_p": 5}})
        assert bad.status_code == 400 and "parameters.top_p" in bad.json()["error"], bad.text
        metadata = requests.get(f"{base}/v2/models/smollm2", timeout=60).json()
        assert metadata["inputs"][0]["name"] == "text_input", metadata

        asyncio.run(websocket_stream(f"ws://{address}/v2/ws", reference))
        print(f"generate: {reference!r}, streamed over SSE ({len(events)} events) and /v2/ws")
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


if __name__ == "__main__":
    main()
