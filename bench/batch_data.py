#!/usr/bin/env python3
"""Deterministic input files for the offline batch-inference bench (coinfer-batch and the
Python peers in bench/batch_peers.py).

  python3 bench/batch_data.py digits N OUT.jsonl [--seed S] [--bad K]
                              [--npy OUT.npy] [--csv OUT.csv] [--labels OUT.npy]
  python3 bench/batch_data.py text N OUT.jsonl [--seed S] [--bad K]

digits: N lines {"id":i,"pixels":[64 integers 0..16]} for i = 0..N-1, written compactly
  (no spaces). Row i is scikit-learn's digits image i % 1797 (load_digits().data, the same
  data the digits MLP was trained on) with a seeded perturbation: each pixel independently
  gets -1 with probability 1/8, +1 with probability 1/8, then is clipped to 0..16, so that
  rows that share an image differ. The true label of row i is load_digits().target[i % 1797].
  Rows are made in blocks of 65,536 with one numpy Generator per block, seeded with
  (seed, block index): row i's values are the same for every N > i (which rows --bad
  picks does depend on N). The lines are formatted with numpy
  (a byte matrix and a mask, no per-row Python): 10M rows (1.7 GB) take about 25 s on the
  2-core machine, about 70 s with --npy (2.6 GB) and --csv (1.5 GB) as well.
  --npy OUT.npy     also writes the pixel rows as float32 [N, 64] (a memory-mapped .npy);
                    it holds the generated values of every row, malformed lines' rows too.
                    (Its mapped pages show in this process's RSS: page cache, not heap.)
  --csv OUT.csv     also writes them as CSV: a header id,p0,...,p63, then i,v0,...,v63.
  --labels OUT.npy  also writes the true labels, int64 [N].
text: N lines {"id":i,"text":"..."} whose texts are bench/embedding_sentences.py's sentences:
  with the same seed, line i's text is line i of `embedding_sentences.py N FILE --seed S`.

--bad K turns K distinct rows, chosen with the seed, into malformed lines (still one line
each, ending in a newline). Each gets one of four kinds, also chosen with the seed:
  digits JSONL: 0 truncated JSON (the line cut before its closing brace), 1 a pixels array of
                63 values, 2 one pixel a string ("7"), 3 not JSON (a bare word in the array)
  digits CSV:   0 truncated row (cut before its last comma: fewer than 65 fields),
                1 63 pixel fields, 2 one field a word, 3 one field empty
  text:         0 truncated JSON, 1 "text" a number, 2 no "text" key, 3 not JSON
The CSV's malformed rows are the same rows, with the same kinds. A summary goes to stderr.

Pinned: standard library and numpy (1.24 or newer) only, plus scikit-learn's bundled digits
data (load_digits() reads a file shipped in the package; nothing is downloaded). Run it with
a python3 that has scikit-learn: the pyenv python3 (numpy 2.4, scikit-learn 1.9) and
/work/refenv/bin/python (numpy 1.24, scikit-learn 1.3) write the same bytes; Debian's
/usr/bin/python3 has no scikit-learn. The default seed 20240601 is embedding_sentences.py's.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_SEED = 20240601
BLOCK = 65536          # rows per generated block (fixed: it is part of what the seed means)
BAD_KINDS = 4


# ---------------------------------------------------------------------------------------
# digits rows

def load_digits():
    """(pixels uint8 [1797, 64], labels int64 [1797]) from scikit-learn's bundled data."""
    from sklearn.datasets import load_digits as sk_load_digits
    d = sk_load_digits()
    return d.data.astype(np.uint8), d.target.astype(np.int64)


def digit_rows(base, seed, first, count):
    """Pixels uint8 [count, 64] of rows first..first+count-1; first must be a block start."""
    assert first % BLOCK == 0
    out = np.empty((count, 64), dtype=np.uint8)
    for start in range(0, count, BLOCK):
        n = min(BLOCK, count - start)
        rng = np.random.default_rng([seed, (first + start) // BLOCK])
        ids = np.arange(first + start, first + start + n, dtype=np.int64)
        pix = base[ids % len(base)].astype(np.int16)
        r = rng.integers(0, 8, size=(n, 64), dtype=np.uint8)   # 0: -1, 1: +1, else 0
        pix -= r == 0
        pix += r == 1
        np.clip(pix, 0, 16, out=pix)
        out[start:start + n] = pix
    return out


def _id_cells(ids, width):
    """Decimal digits of ids as a right-aligned byte matrix [n, width] and its mask."""
    cells = np.empty((len(ids), width), dtype=np.uint8)
    mask = np.empty((len(ids), width), dtype=bool)
    for k in range(width):
        place = 10 ** (width - 1 - k)
        cells[:, k] = ord("0") + (ids // place) % 10
        mask[:, k] = (ids >= place) | (k == width - 1)
    return cells, mask


def _const_cells(n, text):
    b = np.frombuffer(text, dtype=np.uint8)
    return np.broadcast_to(b, (n, len(b))), np.ones((n, len(b)), dtype=bool)


def render(ids, pix, head, mid, last, tail):
    """Lines `head + id + mid + v0 sep v1 ... v63 + last + tail` for each row, as bytes,
    with sep ",", and each line's length in bytes. Values must be 0..99. Built as one byte
    matrix with a mask of the cells in use, so no Python runs per row."""
    n = len(ids)
    id_cells, id_mask = _id_cells(ids, len(str(int(ids.max()))))
    v = pix.astype(np.uint8)
    tens = v >= 10
    sep = np.full(v.shape, ord(","), dtype=np.uint8)
    sep[:, -1] = ord(last)
    vc = np.empty(v.shape + (3,), dtype=np.uint8)      # per value: up to 2 digits + sep
    vc[..., 0] = np.where(tens, ord("0") + v // 10, ord("0") + v)
    vc[..., 1] = np.where(tens, ord("0") + v % 10, sep)
    vc[..., 2] = sep
    vm = np.ones(v.shape + (3,), dtype=bool)
    vm[..., 2] = tens
    parts = [_const_cells(n, head), (id_cells, id_mask), _const_cells(n, mid),
             (vc.reshape(n, -1), vm.reshape(n, -1)), _const_cells(n, tail)]
    cells = np.concatenate([p[0] for p in parts], axis=1)
    mask = np.concatenate([p[1] for p in parts], axis=1)
    return cells[mask].tobytes(), mask.sum(axis=1)


JSONL_FORMAT = dict(head=b'{"id":', mid=b',"pixels":[', last="]", tail=b"}\n")
CSV_FORMAT = dict(head=b"", mid=b",", last="\n", tail=b"")
CSV_HEADER = "id," + ",".join(f"p{k}" for k in range(64)) + "\n"


def bad_digits_jsonl(i, vals, kind, rng):
    good = '{"id":%d,"pixels":[%s]}' % (i, ",".join(map(str, vals)))
    if kind == 0:   # truncated: any prefix without the closing brace is invalid JSON
        cut = rng.randrange(len('{"id":%d,"pixels":[' % i) + 1, len(good) - 1)
        return good[:cut]
    if kind == 1:   # 63 values
        return '{"id":%d,"pixels":[%s]}' % (i, ",".join(map(str, vals[:63])))
    p = rng.randrange(64)
    if kind == 2:   # a string instead of a number
        vals = vals[:p] + ['"%d"' % vals[p]] + vals[p + 1:]
    else:           # not JSON: a bare word
        vals = vals[:p] + ["x%d" % vals[p]] + vals[p + 1:]
    return '{"id":%d,"pixels":[%s]}' % (i, ",".join(map(str, vals)))


def bad_digits_csv(i, vals, kind, rng):
    good = "%d,%s" % (i, ",".join(map(str, vals)))
    if kind == 0:   # truncated before the last comma: at most 64 fields
        cut = rng.randrange(len(str(i)) + 1, good.rindex(","))
        return good[:cut]
    if kind == 1:
        return "%d,%s" % (i, ",".join(map(str, vals[:63])))
    p = rng.randrange(64)
    vals = vals[:p] + ["abc" if kind == 2 else ""] + vals[p + 1:]
    return "%d,%s" % (i, ",".join(map(str, vals)))


def choose_bad(n, k, seed):
    """{row: (kind, seed for the line's details)} for k distinct rows."""
    if k > n:
        sys.exit(f"--bad {k}: more than the {n} rows")
    if k <= 0:
        return {}
    rng = np.random.default_rng([seed, 0xBAD])
    rows = rng.choice(n, size=k, replace=False)
    kinds = rng.integers(0, BAD_KINDS, size=k)
    return {int(r): (int(kd), seed * 1_000_003 + int(r)) for r, kd in zip(rows, kinds)}


def splice(buf, lengths, first, bad, make_line):
    """buf's lines with those of rows in bad replaced by make_line(row, local index, kind, rng)."""
    rows = sorted(r for r in bad if first <= r < first + len(lengths))
    if not rows:
        return [buf]
    ends = np.cumsum(lengths)
    pieces, prev = [], 0
    for r in rows:
        j = r - first
        begin = int(ends[j - 1]) if j else 0
        pieces.append(buf[prev:begin])
        kind, line_seed = bad[r]
        pieces.append((make_line(r, j, kind, random.Random(line_seed)) + "\n").encode())
        prev = int(ends[j])
    pieces.append(buf[prev:])
    return pieces


def write_digits(args):
    base, labels = load_digits()
    n = args.n
    bad = choose_bad(n, args.bad, args.seed)
    out = open(args.out, "wb")
    csv = open(args.csv, "wb") if args.csv else None
    if csv:
        csv.write(CSV_HEADER.encode())
    npy = None
    if args.npy:
        npy = np.lib.format.open_memmap(args.npy, mode="w+", dtype=np.float32, shape=(n, 64))
    if args.labels:
        np.save(args.labels, labels[np.arange(n, dtype=np.int64) % len(labels)])
    chunk = BLOCK
    for first in range(0, n, chunk):
        count = min(chunk, n - first)
        pix = digit_rows(base, args.seed, first, count)
        ids = np.arange(first, first + count, dtype=np.int64)
        buf, lengths = render(ids, pix, **JSONL_FORMAT)
        out.writelines(splice(buf, lengths, first, bad, lambda r, j, kind, rng:
                              bad_digits_jsonl(r, pix[j].tolist(), kind, rng)))
        if csv:
            buf, lengths = render(ids, pix, **CSV_FORMAT)
            csv.writelines(splice(buf, lengths, first, bad, lambda r, j, kind, rng:
                                  bad_digits_csv(r, pix[j].tolist(), kind, rng)))
        if npy is not None:
            npy[first:first + count] = pix
    out.close()
    if csv:
        csv.close()
    if npy is not None:
        npy.flush()
        del npy
    return bad


# ---------------------------------------------------------------------------------------
# text rows

def sentence_function():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from embedding_sentences import sentence
    return sentence


def bad_text(i, text, kind, rng):
    good = json.dumps({"id": i, "text": text}, separators=(",", ":"))
    if kind == 0:
        return good[:rng.randrange(len('{"id":%d,"text":' % i), len(good) - 1)]
    if kind == 1:
        return '{"id":%d,"text":%d}' % (i, len(text))
    if kind == 2:
        return '{"id":%d,"txt":%s}' % (i, json.dumps(text))
    return "id=%d text=%s" % (i, text)


def write_text(args):
    sentence = sentence_function()
    rng = random.Random(args.seed)    # the same stream as embedding_sentences.py's
    bad = choose_bad(args.n, args.bad, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        lines = []
        for i in range(args.n):
            text = sentence(rng)
            if i in bad:
                kind, line_seed = bad[i]
                lines.append(bad_text(i, text, kind, random.Random(line_seed)) + "\n")
            else:
                lines.append('{"id":%d,"text":%s}\n' % (i, json.dumps(text)))
            if len(lines) >= 10000:
                f.writelines(lines)
                lines.clear()
        f.writelines(lines)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["digits", "text"])
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--bad", type=int, default=0, metavar="K",
                    help="make K seeded-random lines malformed")
    ap.add_argument("--npy", help="digits: also write float32 [N,64] pixels here")
    ap.add_argument("--csv", help="digits: also write id,p0..p63 CSV here")
    ap.add_argument("--labels", help="digits: also write int64 [N] true labels here")
    args = ap.parse_args()
    if args.n < 0 or args.seed < 0:
        ap.error("N and --seed must be non-negative")
    if args.kind == "text" and (args.npy or args.csv or args.labels):
        ap.error("--npy, --csv and --labels are for digits")
    t0 = time.perf_counter()
    bad = write_digits(args) if args.kind == "digits" else write_text(args)
    secs = time.perf_counter() - t0
    kinds = [0] * BAD_KINDS
    for kind, _ in bad.values():
        kinds[kind] += 1
    print(f"batch_data: {args.n} {args.kind} rows ({len(bad)} malformed, by kind {kinds}) "
          f"-> {args.out} in {secs:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
