"""Triton's own HTTP client (pip tritonclient[http]) against coinfer-serve.

Usage: tritonclient_test.py PATH/TO/coinfer-serve PATH/TO/config.toml
Starts the server on a free port, runs every check, stops it with SIGTERM.
"""
import signal
import sys

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from serve import start_server  # tests/conformance/serve.py


def expect_error(what, call, *fragments):
    """call() must fail with a server error whose message holds every fragment."""
    try:
        call()
    except InferenceServerException as e:
        assert all(f in e.message() for f in fragments), e.message()
    else:
        raise AssertionError(f"{what} was accepted")


def check_health(client):
    assert client.is_server_live()
    assert client.is_server_ready()
    assert client.is_model_ready("identity")
    assert client.is_model_ready("identity", "1")
    assert not client.is_model_ready("no_such_model")


def check_metadata(client):
    server = client.get_server_metadata()
    assert server["name"] == "coinfer", server
    assert "model_repository" in server["extensions"], server
    assert "binary_tensor_data" in server["extensions"], server
    model = client.get_model_metadata("identity")
    assert model["name"] == "identity" and model["versions"] == ["1"], model
    assert model["inputs"] == [{"name": "INPUT0", "datatype": "FP32", "shape": [-1, -1]}], model
    assert [o["name"] for o in model["outputs"]] == ["OUTPUT0", "OUTPUT1"], model
    index = client.get_model_repository_index()
    assert {"name": "identity", "version": "1", "state": "READY"} in index, index


def check_infer(client):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    inp = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=False)
    outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=False),
               httpclient.InferRequestedOutput("OUTPUT1", binary_data=False)]
    result = client.infer("identity", [inp], outputs=outputs, request_id="conformance-1")
    assert result.get_response()["id"] == "conformance-1"
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), x)  # floats round-trip exactly
    np.testing.assert_allclose(result.as_numpy("OUTPUT1"), x.sum(axis=1), rtol=1e-5, atol=1e-5)

    only_sum = client.infer("identity", [inp], outputs=outputs[1:])
    assert [o["name"] for o in only_sum.get_response()["outputs"]] == ["OUTPUT1"]


def check_binary(client):
    """tritonclient's defaults: binary tensor data for inputs and for outputs."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    inp = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)  # binary_data=True
    # No outputs named: the client asks for every output as binary ("binary_data_output").
    result = client.infer("identity", [inp])
    for output in result.get_response()["outputs"]:
        assert "data" not in output and output["parameters"]["binary_data_size"] > 0, output
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), x)
    np.testing.assert_allclose(result.as_numpy("OUTPUT1"), x.sum(axis=1), rtol=1e-5, atol=1e-5)

    # One output binary, one JSON, in the order asked for.
    outputs = [httpclient.InferRequestedOutput("OUTPUT1", binary_data=True),
               httpclient.InferRequestedOutput("OUTPUT0", binary_data=False)]
    mixed = client.infer("identity", [inp], outputs=outputs)
    names = [o["name"] for o in mixed.get_response()["outputs"]]
    assert names == ["OUTPUT1", "OUTPUT0"], names
    np.testing.assert_array_equal(mixed.as_numpy("OUTPUT0"), x)
    np.testing.assert_allclose(mixed.as_numpy("OUTPUT1"), x.sum(axis=1), rtol=1e-5, atol=1e-5)

    # The digits classifier: a binary FP32 input, a binary INT64 label back, batched with others.
    digits = rng.uniform(0, 16, (4, 64)).astype(np.float32)
    d = httpclient.InferInput("INPUT0", list(digits.shape), "FP32")
    d.set_data_from_numpy(digits)
    labels = client.infer("digits", [d], outputs=[httpclient.InferRequestedOutput("label")])
    as_json = httpclient.InferInput("INPUT0", list(digits.shape), "FP32")
    as_json.set_data_from_numpy(digits, binary_data=False)
    expected = client.infer("digits", [as_json],
                            outputs=[httpclient.InferRequestedOutput("label", binary_data=False)])
    assert labels.as_numpy("label").dtype == np.int64
    np.testing.assert_array_equal(labels.as_numpy("label"), expected.as_numpy("label"))

    # A binary input whose size does not match its shape is refused, naming the input.
    short = httpclient.InferInput("INPUT0", [1, 4], "FP32")
    short.set_data_from_numpy(np.ones((1, 4), np.float32))
    short._raw_data = short._raw_data[:12]
    short._parameters["binary_data_size"] = 12
    expect_error("a short binary input", lambda: client.infer("identity", [short]),
                 "binary_data_size: 12 bytes", "needs 16")


def check_errors(client):
    inp = httpclient.InferInput("INPUT0", [1, 2], "FP32")
    inp.set_data_from_numpy(np.ones((1, 2), np.float32), binary_data=False)
    expect_error("infer on an unknown model", lambda: client.infer("no_such_model", [inp]),
                 "unknown model 'no_such_model'")
    wrong = httpclient.InferInput("INPUT0", [1, 2], "INT32")
    wrong.set_data_from_numpy(np.ones((1, 2), np.int32), binary_data=False)
    expect_error("a datatype mismatch", lambda: client.infer("identity", [wrong]),
                 "datatype", "FP32")


def check_statistics(client):
    """Triton's statistics extension, read by tritonclient's get_inference_statistics."""
    before = client.get_inference_statistics("digits")["model_stats"][0]
    x = np.tile(np.arange(64, dtype=np.float32) % 17, (2, 1))
    inp = httpclient.InferInput("INPUT0", [2, 64], "FP32")
    inp.set_data_from_numpy(x, binary_data=False)
    for _ in range(5):
        client.infer("digits", [inp])
    bad = httpclient.InferInput("INPUT0", [1, 3], "FP32")
    bad.set_data_from_numpy(np.ones((1, 3), np.float32), binary_data=False)
    expect_error("a row of 3 values for the digits model", lambda: client.infer("digits", [bad]), "64")
    stats = client.get_inference_statistics("digits")["model_stats"]
    assert len(stats) == 1 and stats[0]["name"] == "digits" and stats[0]["version"] == "1", stats
    s = stats[0]
    inference, base = s["inference_stats"], before["inference_stats"]
    assert inference["success"]["count"] - base["success"]["count"] == 5, inference
    assert inference["success"]["ns"] > base["success"]["ns"], inference
    assert inference["queue"]["count"] - base["queue"]["count"] == 5, inference
    assert inference["compute_infer"]["count"] - base["compute_infer"]["count"] == 5, inference
    assert inference["compute_infer"]["ns"] > base["compute_infer"]["ns"], inference
    assert s["inference_count"] - before["inference_count"] == 10, s  # rows
    assert s["execution_count"] - before["execution_count"] >= 1, s
    assert s["last_inference"] > 1_700_000_000_000, s  # ms since the epoch
    sizes = {b["batch_size"]: b for b in s["batch_stats"]}
    assert 2 in sizes and sizes[2]["compute_infer"]["count"] >= 1 and sizes[2]["compute_infer"]["ns"] > 0, sizes
    # The row of 3 values was refused by the model's pipeline: one failure.
    assert inference["fail"]["count"] - base["fail"]["count"] == 1, inference
    assert inference["fail"]["ns"] > base["fail"]["ns"], inference
    everything = client.get_inference_statistics()["model_stats"]
    assert {"digits", "identity", "minilm"} <= {m["name"] for m in everything}, everything
    versioned = client.get_inference_statistics("digits", "1")["model_stats"]
    assert versioned[0]["name"] == "digits", versioned
    expect_error("statistics of an unknown model",
                 lambda: client.get_inference_statistics("no_such_model"), "unknown model 'no_such_model'")
    server = client.get_server_metadata()
    assert "statistics" in server["extensions"], server


def main():
    proc, address = start_server(sys.argv[1], sys.argv[2])
    checks = [check_health, check_metadata, check_infer, check_binary, check_errors, check_statistics]
    passed = failed = 0
    try:
        client = httpclient.InferenceServerClient(url=address)
        for check in checks:
            try:
                check(client)
                passed += 1
                print(f"ok   {check.__name__}")
            except Exception as e:  # report every failing check, not only the first
                failed += 1
                print(f"FAIL {check.__name__}: {type(e).__name__}: {e}")
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=15)
    if code != 0:
        print(f"FAIL coinfer-serve exited {code} after SIGTERM")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
