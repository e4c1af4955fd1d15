#!/usr/bin/env python3
"""Python peers of coinfer-batch (apps/batch_infer): offline batch inference over a JSONL file
the way it is usually written in Python, timed end to end (read, parse, compute, write).

  /usr/bin/python3 bench/batch_peers.py mlp INPUT.jsonl OUTPUT.jsonl [--batch-size 256]
      [--num-workers 2] [--prefetch-factor 4] [--pin-memory] [--weights SAFETENSORS]
  /work/refenv/bin/python bench/batch_peers.py minilm INPUT.jsonl OUTPUT.jsonl
      [--batch-size 64] [--block 10000] [--model-dir DIR]

Inputs come from bench/batch_data.py (`digits` for mlp, `text` for minilm).

mlp (peer "torch-dataloader"): an IterableDataset reads INPUT lines {"id":..,"pixels":[64
  numbers]}, parses each with json.loads and yields (id, float32 tensor [64]); a line that is
  not such an object (bad JSON, not 64 finite numbers, a string or bool among them, an id that
  is not an integer or a string) is skipped and counted. The file is shared among the
  DataLoader's worker processes in chunks of --batch-size lines, chunk k going to worker
  k % num_workers; a malformed line still yields a placeholder that the collate function
  drops, so batches stay aligned with the chunks and the output comes in file order (with
  the DataLoader's default in-order delivery). The DataLoader (batch_size,
  num_workers, prefetch_factor, pin_memory, a collate function that stacks the rows and counts
  the skipped ones) feeds the digits MLP, nn.Sequential(Linear(64,256), ReLU,
  Linear(256,256), ReLU, Linear(256,10)) with fc{0,1,2}.weight/.bias from
  assets/digits_mlp/model.safetensors, read by bench/safetensors_numpy.py (shared with
  bench/torch_peer.py). Softmax and argmax under torch.no_grad(); OUTPUT gets
  {"id":..,"probabilities":[10 floats],"label":k} per row (json.dumps, compact).
  pin_memory only takes effect with CUDA: on a CPU-only torch the DataLoader ignores it.
minilm (peer "sentence-transformers"): SentenceTransformer(assets/all-MiniLM-L6-v2) on the
  CPU; INPUT lines {"id":..,"text":".."} are read --block lines at a time (memory stays
  bounded), malformed lines skipped and counted, and each block's texts go through
  encode(texts, batch_size=--batch-size, normalize_embeddings=True) (which orders each
  call's texts by length); OUTPUT gets {"id":..,"embedding":[384 floats]} per row.

Both print one JSON line at the end:
  {"peer", "rows", "bad_rows", "seconds", "rows_per_s", "max_rss_mib", "other_cpu_s",
   ...settings}
rows: lines written; seconds: time.perf_counter() around the whole read -> compute -> write
(DataLoader worker start-up included; imports and model loading not). max_rss_mib: peak RSS
of this process plus the largest peak among its finished child processes (the DataLoader
workers; getrusage RUSAGE_SELF + RUSAGE_CHILDREN; forked pages shared with the parent are
counted in both). other_cpu_s: CPU seconds that other processes used during the timed
window (/proc/stat less this process tree's own usage): this 2-core machine is shared, and a
figure taken while it is well above 0 is not a clean one.

Pinned: Debian's python3-torch 1.13 (CPU) under /usr/bin/python3 for mlp; for minilm the venv
made by scripts/minilm_reference --ensure-venv (/work/refenv: Debian's torch through
--system-site-packages, sentence-transformers 2.5.1, transformers 4.38.2, tokenizers
0.15.2). torch.set_num_threads(1) in both: Debian's torch runs its matrix multiplies on
OpenBLAS threads, which still use both cores, and more torch threads oversubscribe the
machine (see /work/shared/TOOLING.md).
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_numpy import read_safetensors  # noqa: E402 (bench/safetensors_numpy.py)

REPO = Path(__file__).resolve().parent.parent
DIGITS_WEIGHTS = REPO / "assets/digits_mlp/model.safetensors"
MINILM_DIR = REPO / "assets/all-MiniLM-L6-v2"
PIXELS = 64


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


def max_rss_mib():
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round((own + children) / 1024, 1)  # ru_maxrss is in KiB on Linux


def busy_cpu_s():
    """CPU seconds the whole machine has been busy (all cores, from /proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:8]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


def own_cpu_s():
    """CPU seconds of this process and its finished children."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


class Timer:
    """Wall seconds of a with-block, and the CPU seconds other processes took meanwhile."""

    def __enter__(self):
        self.busy, self.own, self.t0 = busy_cpu_s(), own_cpu_s(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self.other_cpu_s = max(0.0, (busy_cpu_s() - self.busy) - (own_cpu_s() - self.own))
        return False


def report(peer, rows, bad, timer, **settings):
    seconds = timer.seconds
    line = {"peer": peer, "rows": rows, "bad_rows": bad, "seconds": round(seconds, 3),
            "rows_per_s": round(rows / seconds, 1) if seconds > 0 else None,
            "max_rss_mib": max_rss_mib(), "other_cpu_s": round(timer.other_cpu_s, 1)}
    line.update(settings)
    print(dumps(line), flush=True)


def valid_id(v):
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, str)


# ---------------------------------------------------------------------------------------
# mlp: PyTorch DataLoader pipeline



def digits_mlp(path):
    import torch
    from torch import nn
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    tensors = read_safetensors(path)
    with torch.no_grad():
        for i, layer in enumerate(model[0::2]):
            w, b = tensors[f"fc{i}.weight"], tensors[f"fc{i}.bias"]
            if tuple(w.shape) != tuple(layer.weight.shape) or tuple(b.shape) != tuple(layer.bias.shape):
                raise ValueError(f"{path}: fc{i} has shape {w.shape}/{b.shape}, "
                                 f"expected {tuple(layer.weight.shape)}")
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
    return model.eval()


def parse_digits_line(line):
    """(id, list of 64 numbers) from one JSONL line, or None when it is malformed."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    rid, pixels = obj.get("id"), obj.get("pixels")
    if not valid_id(rid) or not isinstance(pixels, list) or len(pixels) != PIXELS:
        return None
    for v in pixels:
        if type(v) is not int and not (type(v) is float and math.isfinite(v)):
            return None
    return rid, pixels


def make_dataset(path, chunk):
    import torch
    from torch.utils.data import IterableDataset, get_worker_info

    class DigitsJsonl(IterableDataset):
        """Yields (id, float32 tensor [64]) per good line and (None, None) per malformed one;
        worker w of n takes the chunks of `chunk` lines whose index is w modulo n."""

        def __iter__(self):
            info = get_worker_info()
            worker, workers = (info.id, info.num_workers) if info else (0, 1)
            with open(path, "rb") as f:
                for lineno, line in enumerate(f):
                    if (lineno // chunk) % workers != worker:
                        continue
                    row = parse_digits_line(line)
                    if row is None:
                        yield None, None
                    else:
                        yield row[0], torch.tensor(row[1], dtype=torch.float32)

    return DigitsJsonl()


def collate_digits(samples):
    """(ids, float32 [n, 64], number of malformed lines) for one batch."""
    import torch
    good = [(rid, x) for rid, x in samples if x is not None]
    ids = [rid for rid, _ in good]
    x = torch.stack([x for _, x in good]) if good else torch.empty(0, PIXELS)
    return ids, x, len(samples) - len(good)


def run_mlp(args):
    import torch
    from torch.utils.data import DataLoader

    torch.set_num_threads(1)
    model = digits_mlp(args.weights)
    loader_args = dict(batch_size=args.batch_size, num_workers=args.num_workers,
                       pin_memory=args.pin_memory, collate_fn=collate_digits)
    if args.num_workers > 0:
        loader_args["prefetch_factor"] = args.prefetch_factor
    rows = bad = 0
    with Timer() as timer, open(args.output, "w", encoding="utf-8") as out, torch.no_grad():
        loader = DataLoader(make_dataset(args.input, args.batch_size), **loader_args)
        for ids, x, nbad in loader:
            bad += nbad
            if not ids:
                continue
            probs = torch.softmax(model(x), dim=1)
            labels = torch.argmax(probs, dim=1)
            out.write("".join(
                dumps({"id": rid, "probabilities": p, "label": k}) + "\n"
                for rid, p, k in zip(ids, probs.tolist(), labels.tolist())))
            rows += len(ids)
    # The workers were joined when the iterator ran out, so their usage is in RUSAGE_CHILDREN.
    report("torch-dataloader", rows, bad, timer, batch_size=args.batch_size,
           num_workers=args.num_workers,
           prefetch_factor=args.prefetch_factor if args.num_workers > 0 else None,
           pin_memory=args.pin_memory, pin_memory_effective=args.pin_memory
           and torch.cuda.is_available(), torch=torch.__version__)


# ---------------------------------------------------------------------------------------
# minilm: sentence-transformers

def parse_text_line(line):
    """(id, text) from one JSONL line, or None when it is malformed."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    rid, text = obj.get("id"), obj.get("text")
    if not valid_id(rid) or not isinstance(text, str):
        return None
    return rid, text


def line_blocks(path, size):
    """Lists of at most `size` lines of the file at path."""
    with open(path, "rb") as f:
        block = []
        for line in f:
            block.append(line)
            if len(block) == size:
                yield block
                block = []
        if block:
            yield block


def run_minilm(args):
    try:
        import torch
        import sentence_transformers
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        sys.exit(f"batch_peers minilm: {e}; run it with the reference venv's interpreter "
                 "(scripts/minilm_reference --ensure-venv makes /work/refenv)")
    torch.set_num_threads(1)
    model = SentenceTransformer(str(args.model_dir), device="cpu")
    rows = bad = 0
    with Timer() as timer, open(args.output, "w", encoding="utf-8") as out:
        for block in line_blocks(args.input, args.block):
            parsed = [parse_text_line(line) for line in block]
            good = [p for p in parsed if p is not None]
            bad += len(parsed) - len(good)
            if not good:
                continue
            emb = model.encode([t for _, t in good], batch_size=args.batch_size,
                               normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
            out.write("".join(dumps({"id": rid, "embedding": e}) + "\n"
                              for (rid, _), e in zip(good, emb.tolist())))
            rows += len(good)
    report("sentence-transformers", rows, bad, timer, batch_size=args.batch_size,
           block=args.block, torch=torch.__version__,
           sentence_transformers=sentence_transformers.__version__)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="peer", required=True)
    mlp = sub.add_parser("mlp", help="digits MLP through a PyTorch DataLoader")
    mlp.add_argument("input")
    mlp.add_argument("output")
    mlp.add_argument("--batch-size", type=int, default=256)
    mlp.add_argument("--num-workers", type=int, default=2)
    mlp.add_argument("--prefetch-factor", type=int, default=4)
    mlp.add_argument("--pin-memory", action="store_true")
    mlp.add_argument("--weights", default=str(DIGITS_WEIGHTS))
    st = sub.add_parser("minilm", help="all-MiniLM-L6-v2 through sentence-transformers")
    st.add_argument("input")
    st.add_argument("output")
    st.add_argument("--batch-size", type=int, default=64)
    st.add_argument("--block", type=int, default=10000, help="lines read and encoded at a time")
    st.add_argument("--model-dir", default=str(MINILM_DIR))
    args = ap.parse_args()
    if args.batch_size < 1 or getattr(args, "block", 1) < 1:
        ap.error("--batch-size and --block must be positive")
    if args.peer == "mlp":
        if args.num_workers < 0 or args.prefetch_factor < 1:
            ap.error("--num-workers must be >= 0 and --prefetch-factor >= 1")
        run_mlp(args)
    else:
        run_minilm(args)


if __name__ == "__main__":
    main()
