#!/usr/bin/env python3
"""Writes tests/fixtures/cache_verifier/reference.json: the cache verifier's scores of a few
text pairs as Hugging Face transformers computes them, for the C++ cross-encoder to match.

The adapter (assets/cache_verifier/adapter.safetensors) is applied to transformers' BertModel
as its format says (W += lora_b @ lora_a per linear, its layer norms replace the base's), the
pair is tokenized by the model's tokenizer.json (`tokenizer(a, b)`: [CLS] a [SEP] b [SEP],
token types 0 and 1, longest-first truncation), and the score is
sigmoid(classifier . mean of the last hidden states) in float64 from the float32 states.

Ran with python 3.11, torch 2.15 (CPU), transformers 5.25, safetensors.

Usage: python3 scripts/cache_verifier_reference.py [--model assets/all-MiniLM-L6-v2]
           [--adapter assets/cache_verifier/adapter.safetensors]
           [--out tests/fixtures/cache_verifier/reference.json]
"""

import argparse
import json
import math
import pathlib

import torch
import transformers
from safetensors.numpy import load_file
from transformers import AutoTokenizer, BertModel

# (cached, asked): hits and non-hits of several kinds, short and long, and one pair over the
# 128-token limit the fixture's rows use, to check longest-first truncation.
PAIRS = [
    ("How do I reset my router?", "What's the way to reset my router?"),
    ("Did Rome conquer Carthage?", "Did Carthage conquer Rome?"),
    ("Which foods are safe for dogs?", "Which foods are not safe for dogs?"),
    ("how do I make my chocolate chip cookies chewier?",
     "What's the trick to getting chewier chocolate chip cookies?"),
    ("What is the capital of Austria?", "What is the capital of Australia?"),
    ("Convert 5 miles to kilometres", "Convert 50 miles to kilometres"),
    ("Summarize the plot of Hamlet in French.", "Summarize the plot of Hamlet in German."),
    ("wat is the bets way to lern python", "What is the best way to learn Python?"),
    ("Can I take ibuprofen with coffee?", "If I'm pregnant, can I take ibuprofen with coffee?"),
    ("Explain photosynthesis. " * 40, "Explain how plants turn sunlight into energy. " * 30),
]
MAX_LENGTH = 128


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="assets/all-MiniLM-L6-v2")
    parser.add_argument("--adapter", default="assets/cache_verifier/adapter.safetensors")
    parser.add_argument("--out", default="tests/fixtures/cache_verifier/reference.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = BertModel.from_pretrained(args.model, add_pooling_layer=False).eval()
    adapter = load_file(args.adapter)
    state = model.state_dict()
    with torch.no_grad():
        for name, tensor in adapter.items():
            if name.endswith(".lora_a"):
                prefix = name[: -len(".lora_a")]
                delta = torch.from_numpy(adapter[prefix + ".lora_b"]) @ torch.from_numpy(tensor)
                state[prefix + ".weight"] += delta
            elif "LayerNorm" in name:
                state[name].copy_(torch.from_numpy(tensor))
    weight = torch.from_numpy(adapter["classifier.weight"]).double()[0]
    bias = float(adapter["classifier.bias"][0])
    cases = []
    for a, b in PAIRS:
        encoded = tokenizer(a, b, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**encoded).last_hidden_state[0].double()
        logit = float(hidden.mean(0) @ weight) + bias
        cases.append({"a": a, "b": b, "ids": encoded["input_ids"][0].tolist(),
                      "token_types": encoded["token_type_ids"][0].tolist(),
                      "score": 1.0 / (1.0 + math.exp(-logit))})
    out = {
        "generator": f"python, torch {torch.__version__}, transformers {transformers.__version__}",
        "max_length": MAX_LENGTH,
        "cases": cases,
    }
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
