"""Request bodies for bench/binary_bench.sh, checked against a running coinfer-serve.

For each case it writes CASE.json (a JSON infer request) and CASE.bin (the same tensors as
binary tensor data, outputs asked for as binary too) into OUTDIR, sends both once, checks
that the answers carry the same outputs, and prints one line per case:
    CASE PATH JSON_FILE BIN_FILE HEADER_LENGTH
Standard library only.

    python3 bench/binary_bodies.py OUTDIR HOST:PORT
"""
import json
import os
import struct
import sys
import urllib.request

# name, model, input shape, value of element i
CASES = [
    ("digits_1x64", "digits", [1, 64], lambda i: float(i % 17)),
    ("identity_1x64", "identity", [1, 64], lambda i: i * 0.25 - 8),
    ("identity_1x4096", "identity", [1, 4096], lambda i: (i % 1000) * 0.125 - 60),
]


def post(address, path, body, header_length=None):
    headers = {"Content-Type": "application/json"}
    if header_length is not None:
        headers = {"Content-Type": "application/octet-stream",
                   "Inference-Header-Content-Length": str(header_length)}
    req = urllib.request.Request(f"http://{address}{path}", data=body, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read(), r.headers.get("Inference-Header-Content-Length")


def outputs_of(body, header_length):
    """{name: list of values} from a JSON or binary response."""
    if header_length is None:
        return {o["name"]: o["data"] for o in json.loads(body)["outputs"]}
    n = int(header_length)
    head, rest = json.loads(body[:n]), body[n:]
    out, at = {}, 0
    for o in head["outputs"]:
        if "data" in o:
            out[o["name"]] = o["data"]
            continue
        size = o["parameters"]["binary_data_size"]
        fmt = {"FP32": "f", "INT64": "q"}[o["datatype"]]
        out[o["name"]] = list(struct.unpack(f"<{size // struct.calcsize(fmt)}{fmt}",
                                            rest[at:at + size]))
        at += size
    return out


def main():
    outdir, address = sys.argv[1], sys.argv[2]
    for name, model, shape, value in CASES:
        count = shape[0] * shape[1]
        data = [value(i) for i in range(count)]
        path = f"/v2/models/{model}/infer"
        as_json = json.dumps({"inputs": [{"name": "INPUT0", "shape": shape, "datatype": "FP32",
                                          "data": data}]}).encode()
        head = json.dumps({"inputs": [{"name": "INPUT0", "shape": shape, "datatype": "FP32",
                                       "parameters": {"binary_data_size": 4 * count}}],
                           "parameters": {"binary_data_output": True}}).encode()
        as_binary = head + struct.pack(f"<{count}f", *data)
        json_file, bin_file = os.path.join(outdir, name + ".json"), os.path.join(outdir, name + ".bin")
        with open(json_file, "wb") as f:
            f.write(as_json)
        with open(bin_file, "wb") as f:
            f.write(as_binary)
        a = outputs_of(*post(address, path, as_json))
        b = outputs_of(*post(address, path, as_binary, len(head)))
        if a.keys() != b.keys() or any(
                max((abs(x - y) for x, y in zip(a[k], b[k])), default=0) > 1e-6 * max(1, abs(max(a[k], key=abs)))
                for k in a):
            raise SystemExit(f"{name}: JSON and binary answers differ")
        print(name, path, json_file, bin_file, len(head))


if __name__ == "__main__":
    main()
