#!/usr/bin/env python3
"""In-process throughput of two all-MiniLM-L6-v2 embedding peers on the same sentences.

  st        sentence-transformers SentenceTransformer.encode(batch_size=64), FP32, on Debian's
            CPU PyTorch 1.13 with torch.set_num_threads(1) (its best setting on these
            machines: OpenBLAS still uses every core for the matrix multiplies; see
            /work/shared/TOOLING.md). encode() tokenizes, orders each call's sentences by
            character length, pads per batch, mean-pools and L2-normalizes (the model's
            Normalize module).
  ort_int8  onnxruntime on an INT8 model: BertModel exported with torch.onnx.export (opset
            14, dynamic batch and sequence axes) into a temporary folder, then
            onnxruntime.quantization.quantize_dynamic(per_channel=True,
            op_types_to_quantize=["MatMul"], weight_type=QInt8); tokenized with the `tokenizers`
            library (tokenizer.json, truncation at 256, no fixed padding), padded per batch of
            64, masked mean pooling and L2 normalization in numpy. Run twice, in file order and
            with sentences sorted by token length; the faster is reported (both are printed).

Timed: tokenization + inference + pooling for all sentences, after a short untimed warm-up;
not timed: loading, export, quantization. Prints one JSON line per peer
  {"peer", "sentences", "seconds", "sentences_per_s", "batch", "versions", ...}
and one line comparing the ort_int8 vectors with sentence-transformers' (min/mean cosine).
"other_cpu_s" is the CPU time other processes took while a peer ran (this machine is shared).

Usage (the wrapper bench/embedding_peers.sh makes the venv):
  python3 bench/embedding_sentences.py 2000 /tmp/sentences.txt
  bench/embedding_peers.sh /tmp/sentences.txt [--batch 64] [--ort-threads N] [--ort-fp32]
                                               [--no-ort]
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_SEQ_LENGTH = 256


def v(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def busy_jiffies():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle


def timed(fn):
    """Runs fn(); returns (result, wall seconds, CPU seconds other processes used meanwhile)."""
    hz = os.sysconf("SC_CLK_TCK")
    b0, c0, t0 = busy_jiffies(), time.process_time(), time.perf_counter()
    out = fn()
    t1, c1, b1 = time.perf_counter(), time.process_time(), busy_jiffies()
    return out, t1 - t0, max(0.0, (b1 - b0) / hz - (c1 - c0))


def line(peer, n, seconds, batch, versions, **extra):
    d = {"peer": peer, "sentences": n, "seconds": round(seconds, 3),
         "sentences_per_s": round(n / seconds, 1), "batch": batch, "versions": versions}
    d.update(extra)
    print(json.dumps(d), flush=True)


def export_int8(model_dir, tmp, keep_fp32):
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    class Hidden(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    bert = AutoModel.from_pretrained(model_dir).eval()
    x = torch.ones(2, 8, dtype=torch.int64)
    fp32 = os.path.join(tmp, "model.onnx")
    int8 = os.path.join(tmp, "model.int8.onnx")
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Hidden(bert), (x, x, torch.zeros_like(x)), fp32, opset_version=14,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes,
                                        "token_type_ids": axes, "last_hidden_state": axes})
    quantize_dynamic(fp32, int8, per_channel=True, op_types_to_quantize=["MatMul"],
                     weight_type=QuantType.QInt8)
    return int8, (fp32 if keep_fp32 else None)


class OrtPeer:
    def __init__(self, path, model_dir, batch, threads):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        so = ort.SessionOptions()
        if threads:
            so.intra_op_num_threads = threads
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(str(Path(model_dir, "tokenizer.json")))
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_SEQ_LENGTH)
        self.batch = batch

    def encode(self, sentences, sort_by_tokens):
        encs = self.tok.encode_batch(sentences)
        order = list(range(len(sentences)))
        if sort_by_tokens:
            order.sort(key=lambda i: len(encs[i].ids))
        out = np.empty((len(sentences), 384), dtype=np.float32)
        for s in range(0, len(order), self.batch):
            idx = order[s:s + self.batch]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            h = self.sess.run(None, {"input_ids": ids, "attention_mask": mask,
                                     "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            e = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            e /= np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
            out[idx] = e
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sentences", help="text file, one sentence per line")
    ap.add_argument("--model-dir", default=str(REPO_ROOT / "assets" / "all-MiniLM-L6-v2"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--ort-threads", type=int, default=0,
                    help="onnxruntime intra-op threads (0: its default, one per core)")
    ap.add_argument("--no-ort", action="store_true",
                    help="time sentence-transformers only (no export, no onnxruntime)")
    ap.add_argument("--ort-fp32", action="store_true",
                    help="also time the un-quantized ONNX export (accuracy/speed reference)")
    args = ap.parse_args()

    with open(args.sentences, encoding="utf-8") as f:
        sentences = [s.rstrip("\n") for s in f if s.strip()]
    n = len(sentences)
    warm = sentences[:args.batch]

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    torch_v = torch.__version__
    st_versions = {"torch": torch_v, "sentence-transformers": v("sentence-transformers"),
                   "transformers": v("transformers"), "tokenizers": v("tokenizers"),
                   "numpy": np.__version__, "torch_threads": torch.get_num_threads(),
                   "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "default")}

    st = SentenceTransformer(args.model_dir, device="cpu")

    def st_encode(xs):
        return st.encode(xs, batch_size=args.batch, normalize_embeddings=False,
                         convert_to_numpy=True, show_progress_bar=False)

    st_encode(warm)
    ref, secs, other = timed(lambda: st_encode(sentences))
    line("sentence-transformers", n, secs, args.batch, st_versions,
         order="encode() sorts by characters", other_cpu_s=round(other, 2))
    if args.no_ort:
        return 0

    with tempfile.TemporaryDirectory(prefix="minilm_onnx_") as tmp:
        t0 = time.perf_counter()
        int8_path, fp32_path = export_int8(args.model_dir, tmp, args.ort_fp32)
        prep = time.perf_counter() - t0
        import onnxruntime as ort

        ort_versions = {"onnxruntime": ort.__version__, "onnx": v("onnx"),
                        "tokenizers": v("tokenizers"), "numpy": np.__version__,
                        "export": f"torch {torch_v} opset 14",
                        "quantization": "quantize_dynamic per_channel MatMul QInt8",
                        "intra_op_threads": args.ort_threads or "default"}
        models = [("onnxruntime-int8", int8_path)]
        if fp32_path:
            models.append(("onnxruntime-fp32", fp32_path))
        for name, path in models:
            peer = OrtPeer(path, args.model_dir, args.batch, args.ort_threads)
            peer.encode(warm, True)
            runs = {}
            for sort in (False, True):
                vecs, secs, other = timed(lambda: peer.encode(sentences, sort))
                runs[sort] = (vecs, secs, other)
            best = min(runs, key=lambda s: runs[s][1])
            vecs, secs, other = runs[best]
            versions = dict(ort_versions)
            if name.endswith("fp32"):
                versions["quantization"] = "none (FP32 export)"
            line(name, n, secs, args.batch, versions,
                 order="sorted by token length" if best else "file order",
                 seconds_file_order=round(runs[False][1], 3),
                 seconds_sorted_by_tokens=round(runs[True][1], 3),
                 export_and_quantize_s=round(prep, 1), other_cpu_s=round(other, 2))
            cos = (vecs * ref).sum(1) / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(ref, axis=1))
            print(json.dumps({"compare": f"{name} vs sentence-transformers", "sentences": n,
                              "cosine_min": round(float(cos.min()), 6),
                              "cosine_mean": round(float(cos.mean()), 6),
                              "cosine_p01": round(float(np.quantile(cos, 0.01)), 6)}),
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
