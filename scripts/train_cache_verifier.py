#!/usr/bin/env python3
"""Trains the response cache's verifier: all-MiniLM-L6-v2 as a cross-encoder of text pairs.

The cache asks it, for a cached prompt `a` and a new prompt `b` whose embeddings are close,
whether an answer to `a` answers `b` (docs/CACHE.md). The base model stays as shipped; the
adapter holds what training changes: rank-8 low-rank updates of every linear (query, key,
value, attention output, intermediate, output: W + B A, the scale folded into B), the layer
norms, and a classifier over the mean of the last hidden states (sigmoid: the probability that
the pair should hit). Input: [CLS] a [SEP] b [SEP], token type 1 for b; the two texts swap
places at random in training, so the order matters little.

Data: the labelled pair sources of bench/data/cache_pairs (every pair whose earlier messages
agree: with different ones the conversation check decides, not the texts).

  --held-out SOURCE  train without SOURCE (a leave-one-source-out fold of docs/CACHE.md: the
                     bench scores SOURCE with this adapter); --scores FILE also writes
                     transformers' scores of SOURCE's pairs (JSON lines: source, a, b, score)
  --out DIR          write DIR/adapter.safetensors (F32 tensors:
                     encoder.layer.i.<linear>.lora_a [r, in], .lora_b [out, r];
                     embeddings.LayerNorm.*, encoder.layer.i.{attention.output,output}.LayerNorm.*;
                     classifier.weight [1, 384], classifier.bias [1])

Ran with python 3.11, torch 2.15 (CPU), transformers 5.25, safetensors; 2 threads, about
3 minutes an epoch on 2 cores. Seeds are fixed; the arithmetic of threaded CPU kernels is
not, so a rerun gives close, not identical, weights.

Usage: python3 scripts/train_cache_verifier.py --out assets/cache_verifier
       python3 scripts/train_cache_verifier.py --held-out everyday --out /tmp/fold-everyday
"""

import argparse
import json
import math
import pathlib
import random

import numpy as np
import torch
from safetensors.numpy import save_file
from torch import nn
from transformers import AutoTokenizer, BertModel

SOURCES = ["project", "forms", "everyday", "handwritten"]
LINEARS = ["attention.self.query", "attention.self.key", "attention.self.value",
           "attention.output.dense", "intermediate.dense", "output.dense"]


def load(data_dir, source):
    pairs = []
    for line in open(data_dir / f"{source}.jsonl", encoding="utf-8"):
        p = json.loads(line)
        if p.get("context_a", []) != p.get("context_b", []):
            continue
        pairs.append((source, p["a"], p["b"], 1.0 if p["hit"] else 0.0))
    return pairs


class LoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.a = nn.Parameter(torch.empty(rank, linear.in_features))
        nn.init.kaiming_uniform_(self.a, a=math.sqrt(5))
        self.b = nn.Parameter(torch.zeros(linear.out_features, rank))
        self.scale = alpha / rank

    def forward(self, x):
        return self.linear(x) + (x @ self.a.t() @ self.b.t()) * self.scale


class CrossEncoder(nn.Module):
    def __init__(self, model_dir, rank):
        super().__init__()
        self.bert = BertModel.from_pretrained(model_dir, add_pooling_layer=False)
        for p in self.bert.parameters():
            p.requires_grad = False
        for layer in self.bert.encoder.layer:
            for name in LINEARS:
                parent = layer.get_submodule(name.rsplit(".", 1)[0])
                leaf = name.rsplit(".", 1)[1]
                setattr(parent, leaf, LoRA(getattr(parent, leaf), rank, 2.0 * rank))
        for name, p in self.bert.named_parameters():
            if "LayerNorm" in name:
                p.requires_grad = True
        self.classifier = nn.Linear(self.bert.config.hidden_size, 1)

    def forward(self, batch):
        h = self.bert(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return self.classifier((h * mask).sum(1) / mask.sum(1)).squeeze(-1)


def batches(tokenizer, pairs, size, train):
    order = list(range(len(pairs)))
    if train:
        random.shuffle(order)
    for i in range(0, len(order), size):
        chunk = [pairs[j] for j in order[i:i + size]]
        first, second = [], []
        for _, a, b, _ in chunk:
            if train and random.random() < 0.5:
                a, b = b, a
            first.append(a)
            second.append(b)
        encoded = tokenizer(first, second, padding=True, truncation=True, max_length=128,
                            return_tensors="pt")
        yield encoded, torch.tensor([c[3] for c in chunk])


def train(model_dir, tokenizer, pairs, epochs, rank, lr):
    model = CrossEncoder(model_dir, rank)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(pairs) / 32)
    step = 0
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for encoded, labels in batches(tokenizer, pairs, 32, True):
            for group in optimizer.param_groups:  # 30 steps of warm-up, then linear decay
                group["lr"] = lr * min(1.0, (step + 1) / 30) * max(0.0, 1 - step / steps)
            loss = nn.functional.binary_cross_entropy_with_logits(model(encoded), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            total += loss.item()
        print(f"epoch {epoch + 1}: loss {total / math.ceil(len(pairs) / 32):.4f}", flush=True)
    return model


@torch.no_grad()
def score(model, tokenizer, pairs):
    model.eval()
    out = []
    for encoded, _ in batches(tokenizer, pairs, 64, False):
        out += torch.sigmoid(model(encoded)).tolist()
    return out


def write_adapter(model, path, metadata):
    tensors = {}
    for i, layer in enumerate(model.bert.encoder.layer):
        for name in LINEARS:
            lora = layer.get_submodule(name)
            prefix = f"encoder.layer.{i}.{name}"
            tensors[prefix + ".lora_a"] = lora.a.detach().numpy().astype(np.float32)
            tensors[prefix + ".lora_b"] = (lora.b.detach() * lora.scale).numpy().astype(np.float32)
    for name, p in model.bert.named_parameters():
        if "LayerNorm" in name:
            tensors[name] = p.detach().numpy().astype(np.float32)
    tensors["classifier.weight"] = model.classifier.weight.detach().numpy().astype(np.float32)
    tensors["classifier.bias"] = model.classifier.bias.detach().numpy().astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(path), metadata)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="assets/all-MiniLM-L6-v2")
    parser.add_argument("--data", default="bench/data/cache_pairs")
    parser.add_argument("--held-out", choices=SOURCES)
    parser.add_argument("--scores")
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.scores and not args.held_out:
        parser.error("--scores needs --held-out")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    random.seed(0)
    data_dir = pathlib.Path(args.data)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    training = [p for s in SOURCES if s != args.held_out for p in load(data_dir, s)]
    model = train(args.model, tokenizer, training, args.epochs, args.rank, args.lr)
    if args.scores:
        pairs = load(data_dir, args.held_out)
        with open(args.scores, "w", encoding="utf-8") as f:
            for (source, a, b, _), s in zip(pairs, score(model, tokenizer, pairs)):
                f.write(json.dumps({"source": source, "a": a, "b": b, "score": s}) + "\n")
    write_adapter(model, pathlib.Path(args.out) / "adapter.safetensors",
                  {"base": "all-MiniLM-L6-v2", "rank": str(args.rank),
                   "epochs": str(args.epochs),
                   "sources": ",".join(s for s in SOURCES if s != args.held_out),
                   "torch": torch.__version__})


if __name__ == "__main__":
    main()
