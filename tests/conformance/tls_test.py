"""TLS from third-party clients: curl --cacert, Python `requests`, the `openai` package,
tritonclient and the `websockets` package (wss://) against coinfer-serve with
[server] tls_cert_file / tls_key_file (tests/fixtures/tls: a test CA and a certificate for
127.0.0.1), API keys on at the same time.

Usage: tls_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
"""
import asyncio
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile

import numpy as np
import openai
import requests
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException
import websockets

from serve import config_copy, read_grpc_address, start_server  # tests/conformance/serve.py

KEY = "sk-tls-5d4c"


def write_config(default_toml, directory):
    """The default config with TLS and one API key; returns (config, the test CA's file)."""
    tls = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "tls")
    tls = os.path.normpath(tls)
    config = config_copy(default_toml, directory,
                         server_keys=f'tls_cert_file = "{tls}/server.pem"\n'
                                     f'tls_key_file = "{tls}/server.key"\n',
                         append=f'\n[auth.tenants.tls]\nkey = "{KEY}"\n')
    return config, os.path.join(tls, "ca.pem")


def check_curl(address, ca):
    base = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", ca]
    url = f"https://{address}/v2/health/ready"
    assert subprocess.run(base + [url], capture_output=True, text=True).stdout == "200"
    # Without the CA curl refuses the server (exit 60: peer certificate cannot be verified).
    refused = subprocess.run(["curl", "-s", url], capture_output=True, text=True)
    assert refused.returncode == 60, refused.returncode
    # TLS 1.1 at most: the server refuses the handshake.
    old = subprocess.run(base + ["--tls-max", "1.1", url], capture_output=True, text=True)
    assert old.returncode != 0 and old.stdout in ("", "000"), (old.returncode, old.stdout)
    print("curl: 200 with --cacert, refused without it (exit 60) and at TLS 1.1")


def check_requests(address, ca):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}
    ok = requests.post(f"https://{address}/v2/models/identity/infer", json=body, verify=ca,
                       headers={"Authorization": f"Bearer {KEY}"}, timeout=10)
    assert ok.status_code == 200 and ok.json()["outputs"][1]["data"] == [3.0], ok.text
    try:
        requests.get(f"https://{address}/v2/health/live", timeout=10)
        raise AssertionError("requests trusted an unknown CA")
    except requests.exceptions.SSLError:
        pass
    print("requests: infer with verify=ca.pem, SSLError without it")


def check_openai(address, ca):
    http_client = openai.DefaultHttpxClient(verify=ca)
    client = openai.OpenAI(base_url=f"https://{address}/v1", api_key=KEY, http_client=http_client,
                           max_retries=0)
    result = client.embeddings.create(model="minilm", input="encrypted on the wire")
    assert len(result.data[0].embedding) == 384
    print("openai: embeddings over https with the test CA")


def check_tritonclient(address, ca):
    client = httpclient.InferenceServerClient(address, ssl=True,
                                              ssl_options={"ca_certs": ca})
    x = np.full((1, 64), 4.0, dtype=np.float32)
    inp = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    result = client.infer("digits", [inp], headers={"Authorization": f"Bearer {KEY}"})
    assert result.as_numpy("probabilities").shape == (1, 10)
    print("tritonclient: infer with ssl=True, ssl_options={'ca_certs': ...}")


def check_grpc(address, ca):
    """tritonclient.grpc over TLS with the API key as `authorization` metadata; health calls
    are public ([auth] public_paths), an infer without the key is UNAUTHENTICATED."""
    client = grpcclient.InferenceServerClient(address, ssl=True, root_certificates=ca)
    assert client.is_server_live()
    x = np.full((1, 64), 4.0, dtype=np.float32)
    inp = grpcclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    result = client.infer("digits", [inp], headers={"authorization": f"Bearer {KEY}"})
    assert result.as_numpy("probabilities").shape == (1, 10)
    try:
        client.infer("digits", [inp])
        raise AssertionError("an infer without a key was answered")
    except InferenceServerException as e:
        assert e.status() == "StatusCode.UNAUTHENTICATED", (e.status(), e.message())
    try:
        grpcclient.InferenceServerClient(address, ssl=True).is_server_live()
        raise AssertionError("gRPC trusted an unknown CA")
    except InferenceServerException:
        pass
    print("tritonclient.grpc: grpcs:// with the test CA, the key as metadata; UNAUTHENTICATED "
          "without it, refused without the CA")


async def check_websockets(address, ca):
    context = ssl.create_default_context(cafile=ca)
    header = {"Authorization": f"Bearer {KEY}"}
    url = f"wss://{address}/v2/ws"
    try:  # websockets >= 14 names it additional_headers, older versions extra_headers
        connection = websockets.connect(url, ssl=context, additional_headers=header)
    except TypeError:
        connection = websockets.connect(url, ssl=context, extra_headers=header)
    async with connection as ws:
        await ws.send(json.dumps({"model_name": "identity", "id": "t", "inputs": [
            {"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}))
        reply = json.loads(await ws.recv())
        assert reply["id"] == "t" and reply["outputs"][1]["data"] == [3.0], reply
    print("websockets: wss:// with the test CA")


def main():
    binary, default_toml = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as directory:
        config, ca = write_config(default_toml, directory)
        proc, address = start_server(binary, config, scheme="https")
        try:
            grpc_address = read_grpc_address(proc, scheme="grpcs")
            check_curl(address, ca)
            check_requests(address, ca)
            check_openai(address, ca)
            check_tritonclient(address, ca)
            asyncio.run(check_websockets(address, ca))
            check_grpc(grpc_address, ca)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0


if __name__ == "__main__":
    main()
