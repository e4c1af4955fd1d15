"""Reads a safetensors file into numpy arrays, by hand (no safetensors package): an 8-byte
little-endian header length, a JSON header, then the tensors' bytes. Shared by the PyTorch
peers (bench/torch_peer.py, bench/batch_peers.py)."""

import json
import struct
from pathlib import Path

import numpy as np

_NP_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    """{name: numpy array} of every tensor in the file (copies, writable)."""
    raw = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + header_len])
    data = memoryview(raw)[8 + header_len:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=_NP_DTYPES[info["dtype"]]) \
            .reshape(info["shape"]).copy()
    return out
