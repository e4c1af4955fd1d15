"""API keys ([auth]) from third-party clients: the `openai` package, Triton's tritonclient,
the `websockets` package, Python `requests` and curl, against coinfer-serve; the stats stream
shows a key only the models it may use.

Usage: auth_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
The default config is copied (asset paths made absolute) with three tenants added:
  full    every model, a plain key in the file
  digits  only the digits model, its key given as a SHA-256 digest
  slow    one request per 100 s, burst 1
"""
import asyncio
import hashlib
import json
import signal
import subprocess
import sys
import tempfile

import numpy as np
import openai
import requests
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import websockets
from tritonclient.utils import InferenceServerException

from serve import config_copy, read_grpc_address, start_server  # tests/conformance/serve.py

FULL, DIGITS, SLOW = "sk-full-0c1d", "sk-digits-9a8b", "sk-slow-7e6f"


def write_config(default_toml, directory):
    return config_copy(default_toml, directory, append=f"""
[auth.tenants.full]
key = "{FULL}"

[auth.tenants.digits]
key_sha256 = "{hashlib.sha256(DIGITS.encode()).hexdigest()}"
models = ["digits"]

[auth.tenants.slow]
key = "{SLOW}"
requests_per_s = 0.01
burst = 1
""")


def expect(exception, call, status):
    try:
        call()
    except exception as e:
        got = getattr(e, "status_code", None)
        if got is None and hasattr(e, "status"):
            got = e.status() if callable(e.status) else e.status
        assert str(got) == str(status), (got, e)
        return e
    raise AssertionError(f"expected {exception.__name__} ({status})")


def check_openai(address):
    def client(key):  # no retries: a 429 must reach the test, not be retried away
        return openai.OpenAI(base_url=f"http://{address}/v1", api_key=key, max_retries=0)

    vector = client(FULL).embeddings.create(model="minilm", input="a key opens the door")
    assert len(vector.data[0].embedding) == 384
    expect(openai.AuthenticationError,
           lambda: client("sk-wrong").embeddings.create(model="minilm", input="x"), 401)
    denied = expect(openai.PermissionDeniedError,
                    lambda: client(DIGITS).embeddings.create(model="minilm", input="x"), 403)
    assert "may not use model 'minilm'" in str(denied), denied
    assert [m.id for m in client(DIGITS).models.list()] == ["digits"]
    slow = client(SLOW)
    slow.embeddings.create(model="minilm", input="first")
    limited = expect(openai.RateLimitError,
                     lambda: slow.embeddings.create(model="minilm", input="second"), 429)
    assert limited.response.headers["retry-after"] == "100", limited.response.headers
    print("openai: key accepted, 401 / 403 / 429 as AuthenticationError / PermissionDenied / "
          "RateLimitError")


def check_tritonclient(address):
    x = np.full((1, 64), 4.0, dtype=np.float32)
    inp = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    with_key = httpclient.InferenceServerClient(address)
    result = with_key.infer("digits", [inp], headers={"Authorization": f"Bearer {DIGITS}"})
    assert result.as_numpy("probabilities").shape == (1, 10)
    assert with_key.is_server_live()  # health probes need no key
    e = expect(InferenceServerException, lambda: with_key.infer("digits", [inp]), 401)
    assert "missing API key" in e.message(), e.message()
    e = expect(InferenceServerException,
               lambda: with_key.infer("identity", [inp],
                                      headers={"Authorization": f"Bearer {DIGITS}"}), 403)
    print("tritonclient: infer with headers={'Authorization': ...}, 401 without, 403 elsewhere")


def check_requests_and_curl(address):
    url = f"http://{address}/v2/models/identity/infer"
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}
    ok = requests.post(url, json=body, headers={"Authorization": f"Bearer {FULL}"}, timeout=10)
    assert ok.status_code == 200, ok.text
    missing = requests.post(url, json=body, timeout=10)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
    assert missing.json()["error"].startswith("missing API key"), missing.text
    curl = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H",
            "Content-Type: application/json", "-d", json.dumps(body), url]
    assert subprocess.run(curl + ["-H", f"Authorization: Bearer {FULL}"], capture_output=True,
                          text=True, check=True).stdout == "200"
    assert subprocess.run(curl, capture_output=True, text=True, check=True).stdout == "401"
    print("requests and curl: 200 with the key, 401 without")


def first_stats(address, key=None):
    """(status, the first message of /v2/stats/stream) with `key`."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with requests.get(f"http://{address}/v2/stats/stream", headers=headers, stream=True,
                      timeout=30) as r:
        if r.status_code != 200:
            return r.status_code, None
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("data: "):
                return r.status_code, json.loads(line[len("data: "):])
    return r.status_code, None


def check_stats_stream(address):
    status, _ = first_stats(address)
    assert status == 401, status
    status, full = first_stats(address, FULL)
    names = {m["name"] for m in full["models"]} | {g["name"] for g in full["generators"]}
    assert status == 200 and {"digits", "identity", "minilm"} <= names, names
    status, digits = first_stats(address, DIGITS)
    assert status == 200 and [m["name"] for m in digits["models"]] == ["digits"], digits
    assert digits["generators"] == [], digits["generators"]
    print("stats stream: 401 without a key; a key limited to digits sees only digits")


async def check_websockets(address):
    message = json.dumps({"model_name": "identity", "id": "w1", "inputs": [
        {"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]})
    header = {"Authorization": f"Bearer {FULL}"}
    try:  # websockets >= 14 names it additional_headers, older versions extra_headers
        connection = websockets.connect(f"ws://{address}/v2/ws", additional_headers=header)
    except TypeError:
        connection = websockets.connect(f"ws://{address}/v2/ws", extra_headers=header)
    async with connection as ws:
        await ws.send(message)
        reply = json.loads(await ws.recv())
        assert reply["id"] == "w1" and "outputs" in reply, reply
    try:
        async with websockets.connect(f"ws://{address}/v2/ws"):
            raise AssertionError("upgrade without a key was accepted")
    except websockets.exceptions.InvalidStatus as e:  # websockets >= 14
        assert e.response.status_code == 401, e
    except getattr(websockets.exceptions, "InvalidStatusCode", ()) as e:
        assert e.status_code == 401, e
    print("websockets: upgrade with the key, 401 without")


def check_grpc(address):
    """The same keys over gRPC (`authorization` metadata): a model the key may not use is
    PERMISSION_DENIED, a key over its rate RESOURCE_EXHAUSTED, a wrong key UNAUTHENTICATED; the
    repository index lists only the key's models."""
    client = grpcclient.InferenceServerClient(address)
    x = np.ones((1, 64), dtype=np.float32)
    inp = grpcclient.InferInput("INPUT0", [1, 64], "FP32")
    inp.set_data_from_numpy(x)

    def auth(key):
        return {"authorization": f"Bearer {key}"}

    assert client.infer("digits", [inp], headers=auth(DIGITS)).as_numpy("label").shape == (1,)
    expect(InferenceServerException, lambda: client.infer("identity", [inp], headers=auth(DIGITS)),
           "StatusCode.PERMISSION_DENIED")
    expect(InferenceServerException, lambda: client.infer("digits", [inp], headers=auth("sk-no")),
           "StatusCode.UNAUTHENTICATED")
    index = client.get_model_repository_index(headers=auth(DIGITS), as_json=True)["models"]
    assert [m["name"] for m in index] == ["digits"], index
    # The slow key's one request was spent over HTTP above: over its rate here too.
    expect(InferenceServerException, lambda: client.infer("digits", [inp], headers=auth(SLOW)),
           "StatusCode.RESOURCE_EXHAUSTED")
    print("tritonclient.grpc: PERMISSION_DENIED, UNAUTHENTICATED, RESOURCE_EXHAUSTED as 403, 401, 429")


def main():
    binary, default_toml = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as directory:
        proc, address = start_server(binary, write_config(default_toml, directory))
        try:
            grpc_address = read_grpc_address(proc)
            check_openai(address)
            check_tritonclient(address)
            check_requests_and_curl(address)
            check_stats_stream(address)
            asyncio.run(check_websockets(address))
            check_grpc(grpc_address)
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        assert code == 0, f"coinfer-serve exited {code} after SIGTERM"


if __name__ == "__main__":
    main()
