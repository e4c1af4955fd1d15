"""FastAPI peer for bench/http_bench.sh: the same OIP v2 "identity" model in Python.

POST /v2/models/identity/infer takes
  {"inputs":[{"name":"INPUT0","shape":[R,C],"datatype":"FP32","data":[R*C numbers]}]}
and answers
  {"model_name":"identity","model_version":"1","outputs":[
     {"name":"OUTPUT0","datatype":"FP32","shape":[R,C],"data":[...echo...]},
     {"name":"OUTPUT1","datatype":"FP32","shape":[R],"data":[row sums]}]}
with the request's "id" echoed when present. Malformed input gets 400 with
{"error": "..."}; an unknown model gets 404.

It parses the raw body with the standard library's json module and validates by hand
(no pydantic models), which is the fastest plain FastAPI way to do this; the response
is serialized with json.dumps, as FastAPI's JSONResponse does.

Run (one worker, as for one core):
  python3 -m uvicorn bench.fastapi_peer:app --workers 1 --log-level warning --no-access-log
"""

import json
import math

from fastapi import FastAPI, Request
from fastapi.responses import Response

app = FastAPI()

MODEL_NAME = "identity"
MODEL_VERSION = "1"


class BadRequest(Exception):
    pass


def _json(status: int, obj) -> Response:
    return Response(
        content=json.dumps(obj, separators=(",", ":")),
        status_code=status,
        media_type="application/json",
    )


def _err(status: int, message: str) -> Response:
    return _json(status, {"error": message})


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
    ):
        raise BadRequest("inputs[0].shape: expected two non-negative integers [rows, cols]")
    rows, cols = shape
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
    if len(data) != rows * cols:
        raise BadRequest(
            f"inputs[0].data: shape {shape} needs {rows * cols} elements, got {len(data)}"
        )
    for i, v in enumerate(data):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise BadRequest(f"inputs[0].data[{i}]: expected a finite number")
    sums = [math.fsum(data[r * cols:(r + 1) * cols]) for r in range(rows)]
    resp = {
        "model_name": MODEL_NAME,
        "model_version": MODEL_VERSION,
        "outputs": [
            {"name": "OUTPUT0", "datatype": "FP32", "shape": [rows, cols], "data": data},
            {"name": "OUTPUT1", "datatype": "FP32", "shape": [rows], "data": sums},
        ],
    }
    if "id" in req:
        resp["id"] = req["id"]
    return resp


@app.get("/v2/health/live")
@app.get("/v2/health/ready")
async def health() -> Response:
    return Response(status_code=200)


@app.post("/v2/models/{model}/infer")
async def infer(model: str, request: Request) -> Response:
    if model != MODEL_NAME:
        return _err(404, f"unknown model '{model}'")
    body = await request.body()
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        return _err(400, f"malformed JSON: {e}")
    try:
        return _json(200, _infer(req))
    except BadRequest as e:
        return _err(400, str(e))
