"""PyTorch peer for bench/classifier_bench.sh: the digits MLP served the way Python services
usually do it, FastAPI + uvicorn + PyTorch (CPU), answering OIP v2 infer.

POST /v2/models/digits/infer takes
  {"inputs":[{"name":"INPUT0","shape":[n,64],"datatype":"FP32","data":[n*64 numbers]}]}
(flat or nested data) and answers
  {"model_name":"digits","model_version":"1","outputs":[
     {"name":"probabilities","datatype":"FP32","shape":[n,10],"data":[...]},
     {"name":"label","datatype":"INT64","shape":[n],"data":[...]}]}
with the request's "id" echoed when present. Malformed input gets 400 {"error": "..."}; an
unknown model gets 404.

The model is an nn.Sequential(Linear(64,256), ReLU, Linear(256,256), ReLU, Linear(256,10))
loaded from assets/digits_mlp/model.safetensors (fc{0,1,2}.weight/.bias, FP32; read with
numpy by bench/safetensors_numpy.py), run in FP32 under
torch.no_grad() with torch.set_num_threads(1), then softmax and argmax, as coinfer's Mlp.
Requests are parsed with json.loads and validated by hand (no pydantic models, which would
be slower), and the answer is serialized with json.dumps, as in bench/fastapi_peer.py.

This needs torch, which on this project's machines comes from Debian (python3-torch 1.13,
python3-fastapi 0.92, python3-uvicorn 0.17) for /usr/bin/python3 only, so run (one worker):
  /usr/bin/python3 -m uvicorn bench.torch_peer:app --workers 1 --log-level warning --no-access-log
Environment: DIGITS_WEIGHTS (default assets/digits_mlp/model.safetensors next to this repo).

  /usr/bin/python3 bench/torch_peer.py --check [SPLIT]
prints the held-out accuracy of this model (test_split.safetensors by default) and exits.
"""

import json
import math
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_numpy import read_safetensors  # noqa: E402 (bench/safetensors_numpy.py)
import torch
from torch import nn

REPO = Path(__file__).resolve().parent.parent
WEIGHTS = Path(os.environ.get("DIGITS_WEIGHTS", REPO / "assets/digits_mlp/model.safetensors"))

MODEL_NAME = "digits"
MODEL_VERSION = "1"





def build_model(path=WEIGHTS) -> nn.Sequential:
    tensors = read_safetensors(path)
    layers = []
    i = 0
    while f"fc{i}.weight" in tensors:
        w, b = tensors[f"fc{i}.weight"], tensors[f"fc{i}.bias"]
        lin = nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w))
            lin.bias.copy_(torch.from_numpy(b))
        layers += [lin, nn.ReLU()]
        i += 1
    if not layers:
        raise ValueError(f"{path}: no fc0.weight")
    return nn.Sequential(*layers[:-1]).eval()  # no ReLU after the last layer


torch.set_num_threads(1)
MODEL = build_model()
IN_FEATURES = MODEL[0].in_features
CLASSES = MODEL[-1].out_features


def predict(x: torch.Tensor):
    """x: FP32 [n, in] -> (probabilities FP32 [n, classes], labels INT64 [n])."""
    with torch.no_grad():
        probs = torch.softmax(MODEL(x), dim=1)
        return probs, torch.argmax(probs, dim=1)


class BadRequest(Exception):
    pass


def _infer(req) -> dict:
    if not isinstance(req, dict):
        raise BadRequest("request body must be a JSON object")
    inputs = req.get("inputs")
    if not isinstance(inputs, list) or len(inputs) != 1:
        raise BadRequest("'inputs' must be an array with exactly one tensor (INPUT0)")
    t = inputs[0]
    if not isinstance(t, dict):
        raise BadRequest("inputs[0] must be an object")
    if t.get("name") != "INPUT0":
        raise BadRequest(f"inputs[0].name: expected 'INPUT0', got {t.get('name')!r}")
    if t.get("datatype") != "FP32":
        raise BadRequest(f"inputs[0].datatype: expected 'FP32', got {t.get('datatype')!r}")
    shape = t.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) != 2
        or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
        or shape[1] != IN_FEATURES
    ):
        raise BadRequest(f"inputs[0].shape: expected [n, {IN_FEATURES}], got {shape!r}")
    rows = shape[0]
    data = t.get("data")
    if not isinstance(data, list):
        raise BadRequest("inputs[0].data: expected an array of numbers")
    if data and isinstance(data[0], list):  # nested (row-major) form
        flat = []
        for row in data:
            if not isinstance(row, list):
                raise BadRequest("inputs[0].data: mixed nested and flat elements")
            flat.extend(row)
        data = flat
    if len(data) != rows * IN_FEATURES:
        raise BadRequest(
            f"inputs[0].data: shape {shape} needs {rows * IN_FEATURES} elements, got {len(data)}"
        )
    for i, v in enumerate(data):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise BadRequest(f"inputs[0].data[{i}]: expected a finite number")
    probs, labels = predict(torch.tensor(data, dtype=torch.float32).reshape(rows, IN_FEATURES))
    resp = {
        "model_name": MODEL_NAME,
        "model_version": MODEL_VERSION,
        "outputs": [
            {"name": "probabilities", "datatype": "FP32", "shape": [rows, CLASSES],
             "data": probs.reshape(-1).tolist()},
            {"name": "label", "datatype": "INT64", "shape": [rows], "data": labels.tolist()},
        ],
    }
    if "id" in req:
        resp["id"] = req["id"]
    return resp


def _make_app():
    from fastapi import FastAPI, Request
    from fastapi.responses import Response

    app = FastAPI()

    def _json(status: int, obj) -> Response:
        return Response(
            content=json.dumps(obj, separators=(",", ":")),
            status_code=status,
            media_type="application/json",
        )

    @app.get("/v2/health/live")
    @app.get("/v2/health/ready")
    async def health() -> Response:
        return Response(status_code=200)

    @app.post("/v2/models/{model}/infer")
    async def infer(model: str, request: Request) -> Response:
        if model != MODEL_NAME:
            return _json(404, {"error": f"unknown model '{model}'"})
        body = await request.body()
        try:
            req = json.loads(body)
        except (ValueError, UnicodeDecodeError) as e:
            return _json(400, {"error": f"malformed JSON: {e}"})
        try:
            return _json(200, _infer(req))
        except BadRequest as e:
            return _json(400, {"error": str(e)})

    return app


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--check":
    split = read_safetensors(sys.argv[2] if len(sys.argv) > 2
                             else REPO / "assets/digits_mlp/test_split.safetensors")
    _, labels = predict(torch.from_numpy(split["x"]))
    correct = int((labels.numpy() == split["y"]).sum())
    print(f"torch {torch.__version__}: held-out accuracy {correct}/{len(split['y'])}")
    sys.exit(0)

app = _make_app()
