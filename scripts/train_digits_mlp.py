#!/usr/bin/env python3
"""Trains the digits MLP that coinfer serves by default (kind "mlp").

A 64 -> 256 -> 256 -> 10 ReLU MLP on scikit-learn's bundled 8x8 digits (no download),
with fixed seeds and a stratified 20% held-out split. The input scaling (pixels 0..16 -> 0..1)
is folded into the first layer, so the served model takes raw pixel values 0..16.

Writes, in the safetensors format (by hand: 8-byte little-endian header length, JSON header,
raw little-endian data), without the safetensors package:
  assets/digits_mlp/model.safetensors       fc{0,1,2}.weight F32 [out, in], fc{0,1,2}.bias F32
                                            [out]; __metadata__ fp32_test_accuracy, ...
  assets/digits_mlp/test_split.safetensors  x F32 [n, 64] (raw pixels), y I64 [n]

Usage: python3 scripts/train_digits_mlp.py [--out assets/digits_mlp]
"""

import argparse
import json
import os
import pathlib
import struct

# Single-threaded BLAS so that the training arithmetic (and hence the weights) is reproducible.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

SEED = 0
PIXEL_MAX = 16.0

DTYPES = {np.dtype("<f4"): "F32", np.dtype("<i8"): "I64"}


def write_safetensors(path, tensors, metadata):
    """tensors: dict name -> numpy array (F32 or I64); metadata: dict str -> str."""
    header = {"__metadata__": metadata}
    offset = 0
    blobs = []
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        blob = array.tobytes()
        header[name] = {
            "dtype": DTYPES[array.dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data section 8-byte aligned, as safetensors does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def relu(v):
    return np.maximum(v, 0.0)


def forward(layers, x):
    """layers: [(W [out, in], b [out])] -> logits, in float64 like the C++ reference."""
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(layers):
        h = h @ w.astype(np.float64).T + b.astype(np.float64)
        if i + 1 < len(layers):
            h = relu(h)
    return h


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="assets/digits_mlp")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    digits = load_digits()
    x = digits.data.astype(np.float32)  # [1797, 64], pixel values 0..16
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, stratify=y, random_state=SEED)

    clf = MLPClassifier(hidden_layer_sizes=(256, 256), activation="relu", solver="adam",
                        alpha=1e-4, batch_size=64, learning_rate_init=1e-3, max_iter=200,
                        random_state=SEED)
    clf.fit(x_train / PIXEL_MAX, y_train)

    # sklearn stores coefs_[i] as [in, out]; PyTorch Linear (and coinfer) as [out, in].
    layers = []
    for i, (w, b) in enumerate(zip(clf.coefs_, clf.intercepts_)):
        w = w.T.astype(np.float64)
        if i == 0:
            w = w / PIXEL_MAX  # fold the input scaling: served inputs are raw pixels 0..16
        layers.append((w.astype(np.float32), b.astype(np.float32)))

    predicted = forward(layers, x_test).argmax(axis=1)
    correct = int((predicted == y_test).sum())
    accuracy = correct / len(y_test)
    sklearn_accuracy = clf.score(x_test / PIXEL_MAX, y_test)

    tensors = {}
    for i, (w, b) in enumerate(layers):
        tensors[f"fc{i}.weight"] = w
        tensors[f"fc{i}.bias"] = b
    metadata = {
        "fp32_test_accuracy": f"{accuracy:.6f}",
        "fp32_test_correct": str(correct),
        "test_samples": str(len(y_test)),
        "input": "raw 8x8 digit pixels 0..16, row-major, FP32 [n, 64]",
        "trained_with": f"scikit-learn {sklearn.__version__} MLPClassifier, seed {SEED}",
    }
    write_safetensors(out / "model.safetensors", tensors, metadata)
    write_safetensors(out / "test_split.safetensors", {"x": x_test, "y": y_test},
                      {"source": "sklearn.datasets.load_digits, stratified 20% split, seed 0"})

    print(f"train samples {len(y_train)}, test samples {len(y_test)}")
    print(f"FP32 test accuracy (folded weights): {accuracy:.4f} ({correct}/{len(y_test)}); "
          f"sklearn score: {sklearn_accuracy:.4f}")
    print(f"wrote {out / 'model.safetensors'} ({(out / 'model.safetensors').stat().st_size} bytes)")


if __name__ == "__main__":
    main()
