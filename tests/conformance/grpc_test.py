"""Triton's own gRPC client (pip tritonclient[grpc]) against coinfer-serve's gRPC port.

Usage: grpc_test.py PATH/TO/coinfer-serve PATH/TO/config.toml PATH/TO/proto
The default config is copied with a 1 MiB message limit and one more model, `slow` (the
identity model with a 2 s batching delay and a one-request queue), so that a request can wait
in the queue past its deadline and a second one find the queue full. Checks, in order:
- proto/*.proto against tritonclient's generated descriptors: every message, field number,
  type and name of coinfer's protos is tritonclient's (so every generated client interoperates);
- readiness, server and model metadata, model config, repository index;
- infer on identity (raw_input_contents, and typed contents through the bare stub) and on
  digits (labels equal to the HTTP answers for the same rows); statistics count them;
- errors: an unknown model (NOT_FOUND), a wrong input (INVALID_ARGUMENT naming the field), a
  message over the limit (RESOURCE_EXHAUSTED), a deadline that passes in the queue
  (DEADLINE_EXCEEDED, and the request is never computed), a full queue (UNAVAILABLE with
  google.rpc.RetryInfo in the status details);
- ModelStreamInfer: a streamed greedy generate from SmolLM2 whose text equals HTTP generate's,
  several responses, the last flagged triton_final_response; infers and a failing request
  interleaved on the same stream, each answered by id; a generation cancelled by closing the
  stream stops in the engine;
- SIGTERM while a streamed generation runs: it completes, and the server exits 0.
"""
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import grpc
import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tritonclient.grpc import model_config_pb2, service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException

from serve import SKIPPED, config_copy, read_grpc_address, smollm2_installed, start_server

SLOW_MODEL = """
[models.slow]
kind = "identity"
version = "1"
max_batch_size = 64
max_queue_delay_us = 2000000
max_queue_size = 1
"""


def expect_error(what, call, code, *fragments):
    """call() must fail with gRPC status `code` and a message holding every fragment."""
    try:
        call()
    except InferenceServerException as e:
        assert e.status() == str(code), (what, e.status(), e.message())
        assert all(f in e.message() for f in fragments), (what, e.message())
    except grpc.RpcError as e:
        assert e.code() == code, (what, e.code(), e.details())
        assert all(f in e.details() for f in fragments), (what, e.details())
    else:
        raise AssertionError(f"{what} was accepted")


def compiled_protos(proto_dir):
    """coinfer's protos, compiled by protoc into a pool of their own."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "protos.pb")
        subprocess.run(["protoc", f"-I{proto_dir}", "--include_imports", f"--descriptor_set_out={out}",
                        "grpc_service.proto", "model_config.proto", "rpc_status.proto"], check=True)
        files = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    return files, pool


def check_protos(files):
    """Every message and field of coinfer's protos, as tritonclient's generated code has it."""
    theirs = {}
    for module in (service_pb2, model_config_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        for m in proto.message_type:
            theirs[m.name] = m
        for e in proto.enum_type:
            theirs[e.name] = e
        if proto.service:
            their_service = proto.service[0]
    fields = 0

    def compare(ours, their, path):
        nonlocal fields
        by_number = {f.number: f for f in their.field}
        for f in ours.field:
            t = by_number.get(f.number)
            assert t is not None, f"{path}.{f.name} = {f.number}: tritonclient has no such field"
            assert (f.name, f.type, f.label, f.type_name) == (t.name, t.type, t.label, t.type_name), \
                (path, f, t)
            fields += 1
        nested = {n.name: n for n in their.nested_type}
        for n in ours.nested_type:
            assert n.name in nested, f"{path}.{n.name}: not in tritonclient"
            compare(n, nested[n.name], f"{path}.{n.name}")

    service = None
    for f in files.file:
        if f.package != "inference":
            continue
        for m in f.message_type:
            assert m.name in theirs, f"{m.name}: not in tritonclient"
            compare(m, theirs[m.name], m.name)
        for e in f.enum_type:
            assert [(v.name, v.number) for v in e.value] == \
                [(v.name, v.number) for v in theirs[e.name].value], e.name
        if f.service:
            service = f.service[0]
    assert service.name == their_service.name == "GRPCInferenceService"
    their_methods = {m.name: m for m in their_service.method}
    for m in service.method:
        t = their_methods[m.name]
        assert (m.input_type, m.output_type, m.client_streaming, m.server_streaming) == \
            (t.input_type, t.output_type, t.client_streaming, t.server_streaming), m.name
    print(f"protos: {len(service.method)} methods and {fields} fields as tritonclient's")


def check_metadata(client):
    assert client.is_server_live() and client.is_server_ready()
    assert client.is_model_ready("identity") and client.is_model_ready("identity", "1")
    expect_error("ModelReady of an unknown model", lambda: client.is_model_ready("no_such_model"),
                 grpc.StatusCode.NOT_FOUND, "no_such_model")
    server = client.get_server_metadata(as_json=True)
    assert server["name"] == "coinfer" and "binary_tensor_data" in server["extensions"], server
    model = client.get_model_metadata("identity", as_json=True)
    assert model["name"] == "identity" and model["versions"] == ["1"], model
    assert model["inputs"] == [{"name": "INPUT0", "datatype": "FP32", "shape": ["-1", "-1"]}], model
    config = client.get_model_config("digits", as_json=True)["config"]
    assert config["max_batch_size"] == 64 and config["input"][0]["dims"] == ["64"], config
    assert config["input"][0]["data_type"] == "TYPE_FP32", config
    llm = client.get_model_config("smollm2", as_json=True)["config"]
    assert llm["model_transaction_policy"]["decoupled"] is True, llm
    index = client.get_model_repository_index(as_json=True)["models"]
    assert {"name": "identity", "version": "1", "state": "READY"} in index, index
    print("metadata: live, ready, server, model, config, repository index")


def check_infer(client, http_address, stub):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    inp = grpcclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    result = client.infer("identity", [inp], request_id="grpc-1")
    assert result.get_response().id == "grpc-1"
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), x)
    np.testing.assert_allclose(result.as_numpy("OUTPUT1"), x.sum(axis=1), rtol=1e-5, atol=1e-5)
    only = client.infer("identity", [inp], outputs=[grpcclient.InferRequestedOutput("OUTPUT1")])
    assert [o.name for o in only.get_response().outputs] == ["OUTPUT1"]

    # Typed contents (tritonclient always sends raw bytes): the bare generated stub.
    request = service_pb2.ModelInferRequest(model_name="identity", id="typed")
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[2, 3])
    tensor.contents.fp32_contents.extend([1, 2, 3, 4, 5, 6.5])
    response = stub.ModelInfer(request)
    sums = np.frombuffer(response.raw_output_contents[1], dtype=np.float32)
    assert response.id == "typed" and sums.tolist() == [6.0, 15.5], response

    # Digits: the same labels as over HTTP for the same pixels.
    pixels = rng.integers(0, 17, size=(8, 64)).astype(np.float32)
    digits = grpcclient.InferInput("INPUT0", list(pixels.shape), "FP32")
    digits.set_data_from_numpy(pixels)
    labels = client.infer("digits", [digits]).as_numpy("label")
    http = httpclient.InferenceServerClient(http_address)
    http_in = httpclient.InferInput("INPUT0", list(pixels.shape), "FP32")
    http_in.set_data_from_numpy(pixels)
    np.testing.assert_array_equal(labels, http.infer("digits", [http_in]).as_numpy("label"))

    stats = client.get_inference_statistics("digits", as_json=True)["model_stats"][0]
    assert stats["name"] == "digits" and int(stats["inference_count"]) >= 16, stats
    assert int(stats["inference_stats"]["success"]["count"]) >= 2, stats
    print(f"infer: identity (raw and typed contents), digits labels {labels.tolist()} as HTTP's; "
          f"statistics count {stats['inference_count']} digits rows")


def check_errors(client, stub, pool, http_address):
    x = np.zeros((1, 4), dtype=np.float32)
    inp = grpcclient.InferInput("INPUT0", [1, 4], "FP32")
    inp.set_data_from_numpy(x)
    expect_error("an unknown model", lambda: client.infer("no_such_model", [inp]),
                 grpc.StatusCode.NOT_FOUND, "unknown model 'no_such_model'")
    wrong = grpcclient.InferInput("INPUT9", [1, 4], "FP32")
    wrong.set_data_from_numpy(x)
    expect_error("a wrong input name", lambda: client.infer("identity", [wrong]),
                 grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].name", "INPUT9")
    ints = grpcclient.InferInput("INPUT0", [1, 4], "INT32")
    ints.set_data_from_numpy(x.astype(np.int32))
    expect_error("a wrong datatype", lambda: client.infer("identity", [ints]),
                 grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].datatype: expected FP32, got INT32")
    big = np.zeros((1, 300_000), dtype=np.float32)  # 1.2 MB, over the 1 MiB limit
    large = grpcclient.InferInput("INPUT0", list(big.shape), "FP32")
    large.set_data_from_numpy(big)
    expect_error("a message over max_body_bytes", lambda: client.infer("identity", [large]),
                 grpc.StatusCode.RESOURCE_EXHAUSTED, "larger than max")
    print("errors: NOT_FOUND, INVALID_ARGUMENT naming the field, RESOURCE_EXHAUSTED over the limit")

    # A deadline that passes while the request waits for its batch (2 s): dropped, never run.
    before = client.get_inference_statistics("slow", as_json=True)["model_stats"][0]
    expect_error("a deadline in the queue", lambda: client.infer("slow", [inp], client_timeout=0.3),
                 grpc.StatusCode.DEADLINE_EXCEEDED, "")
    time.sleep(2.5)  # past the batching delay: a request still queued would have run by now
    after = client.get_inference_statistics("slow", as_json=True)["model_stats"][0]
    assert after.get("execution_count", "0") == before.get("execution_count", "0"), (before, after)
    fail = after["inference_stats"]["fail"]
    assert int(fail.get("count", 0)) == int(before["inference_stats"]["fail"].get("count", 0)) + 1, after
    print("deadline: DEADLINE_EXCEEDED, the request dropped in the queue, never computed")

    # A full queue (max_queue_size 1): UNAVAILABLE with google.rpc.RetryInfo in the details.
    request = service_pb2.ModelInferRequest(model_name="slow")
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 1])
    tensor.contents.fp32_contents.append(1.0)
    first = stub.ModelInfer.future(request, timeout=10)
    deadline = time.time() + 10
    while metric(metrics(http_address), "coinfer_inference_queue_depth") < 1:  # it is queued
        assert time.time() < deadline, "the first request never reached the queue"
        time.sleep(0.05)
    try:
        stub.ModelInfer(request, timeout=10)
        raise AssertionError("a request beyond max_queue_size was queued")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.UNAVAILABLE, (e.code(), e.details())
        details = dict(e.trailing_metadata() or ()).get("grpc-status-details-bin")
        assert details, e.trailing_metadata()
        factory = message_factory.GetMessageClass
        status = factory(pool.FindMessageTypeByName("google.rpc.Status"))()
        status.ParseFromString(details)
        retry = factory(pool.FindMessageTypeByName("google.rpc.RetryInfo"))()
        assert status.details[0].Unpack(retry), status
        assert retry.retry_delay.seconds >= 1, retry
        print(f"full queue: UNAVAILABLE '{e.details()}', RetryInfo {retry.retry_delay.seconds} s")
    assert first.result().raw_output_contents  # the queued one is answered


def metrics(http_address):
    with urllib.request.urlopen(f"http://{http_address}/metrics", timeout=10) as r:
        text = r.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("coinfer_") and " " in line and "{" in line:
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def metric(values, name):
    return sum(v for k, v in values.items() if k.startswith(name + "{"))


def http_generate(http_address, prompt, max_tokens):
    body = json.dumps({"text_input": prompt, "parameters": {"max_tokens": max_tokens,
                                                            "temperature": 0, "ignore_eos": True}}).encode()
    req = urllib.request.Request(f"http://{http_address}/v2/models/smollm2/generate", data=body,
                                 headers={"Content-Type": "application/json",
                                          "Cache-Control": "no-store"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def text_input(prompt):
    t = grpcclient.InferInput("text_input", [1], "BYTES")
    t.set_data_from_numpy(np.array([prompt.encode()], dtype=object))
    return t


def check_stream(address, http_address):
    responses = queue.Queue()
    client = grpcclient.InferenceServerClient(address)
    client.start_stream(callback=lambda result, error: responses.put((result, error)),
                        headers={"cache-control": "no-store"})
    prompt = "Once upon a time, by the sea, there was"
    client.async_stream_infer("smollm2", [text_input(prompt)], request_id="gen",
                              parameters={"max_tokens": 32, "temperature": 0, "ignore_eos": True,
                                          "stream": True})
    # Infers and a failing request on the same stream while it generates.
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    inp = grpcclient.InferInput("INPUT0", [2, 3], "FP32")
    inp.set_data_from_numpy(x)
    client.async_stream_infer("identity", [inp], request_id="sum")
    client.async_stream_infer("no_such_model", [inp], request_id="bad")
    pieces, final, others, errors = [], None, {}, []
    while final is None or len(others) < 1 or not errors:
        result, error = responses.get(timeout=120)
        if error is not None:
            errors.append(str(error))
            continue
        response = result.get_response()
        if response.id == "gen":
            pieces.append(result.as_numpy("text_output")[0].decode())
            if response.parameters["triton_final_response"].bool_param:
                final = response
        else:
            others[response.id] = result
    assert "request 'bad'" in errors[0] and "unknown model 'no_such_model'" in errors[0], errors
    np.testing.assert_allclose(others["sum"].as_numpy("OUTPUT1"), [3.0, 12.0])
    assert others["sum"].get_response().parameters["triton_final_response"].bool_param
    text = "".join(pieces)
    assert len(pieces) > 2, pieces
    assert final.parameters["finish_reason"].string_param == "length", final.parameters
    assert final.parameters["completion_tokens"].int64_param == 32, final.parameters
    reference = http_generate(http_address, prompt, 32)
    assert text == reference["text_output"], (text, reference)
    print(f"stream: {len(pieces)} responses, text == HTTP generate's ({text!r}); an infer and an "
          f"error ({errors[0]!r}) on the same stream")

    # A generation cancelled by closing the stream stops in the engine.
    before = metrics(http_address)
    client.async_stream_infer("smollm2", [text_input("Count from one to a thousand.")],
                              request_id="long",
                              parameters={"max_tokens": 2000, "ignore_eos": True, "stream": True})
    first, error = responses.get(timeout=60)
    assert error is None and first.get_response().id == "long", error
    client.stop_stream(cancel_requests=True)
    deadline = time.time() + 10
    while True:
        after = metrics(http_address)
        if metric(after, "coinfer_num_requests_running") == 0:
            break
        assert time.time() < deadline, "the cancelled generation still runs"
        time.sleep(0.1)
    generated = metric(after, "coinfer_generation_tokens_total") - metric(before, "coinfer_generation_tokens_total")
    failed = metric(after, "coinfer_generation_failure_total") - metric(before, "coinfer_generation_failure_total")
    assert generated < 1000 and failed == 1, (generated, failed)
    print(f"cancel: closing the stream stopped the generation after {generated:.0f} of 2000 tokens")
    client.close()


def check_drain(proc, address):
    """SIGTERM while a streamed generation runs: it completes; the server exits 0."""
    responses = queue.Queue()
    client = grpcclient.InferenceServerClient(address)
    client.start_stream(callback=lambda result, error: responses.put((result, error)),
                        headers={"cache-control": "no-store"})
    client.async_stream_infer("smollm2", [text_input("Tell me about rivers.")], request_id="drain",
                              parameters={"max_tokens": 48, "ignore_eos": True, "stream": True})
    first, error = responses.get(timeout=60)
    assert error is None, error
    proc.send_signal(signal.SIGTERM)
    count = 1
    while not first.get_response().parameters["triton_final_response"].bool_param:
        first, error = responses.get(timeout=60)
        assert error is None, error
        count += 1
    assert first.get_response().parameters["completion_tokens"].int64_param == 48
    client.stop_stream()
    code = proc.wait(timeout=30)
    assert code == 0, code
    print(f"drain: the streamed generation finished after SIGTERM ({count} responses); exit 0")


def main():
    binary, default_config, proto_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    files, pool = compiled_protos(proto_dir)
    check_protos(files)
    with tempfile.TemporaryDirectory() as tmp:
        config = config_copy(default_config, tmp, append=SLOW_MODEL,
                             replace=[("max_body_bytes = 16777216", "max_body_bytes = 1048576")])
        proc, http_address = start_server(binary, config)
        try:
            address = read_grpc_address(proc)
            client = grpcclient.InferenceServerClient(address)
            stub = service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address))
            check_metadata(client)
            check_infer(client, http_address, stub)
            check_errors(client, stub, pool, http_address)
            if not smollm2_installed(default_config):
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
                return SKIPPED
            check_stream(address, http_address)
            check_drain(proc, address)
        finally:
            if proc.poll() is None:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
