"""coinfer-batch end to end: real files, the real digits MLP and MiniLM, real processes.

Usage: python3 batch_test.py COINFER_BATCH CONFIG MINILM_REFERENCE_JSON

Checks, each against its own temporary directory:
  - JSONL with malformed lines: every row once (a result or a dead letter naming the reason),
    parts in row order, labels matching the digits data set's targets (>= 95%);
  - the same rows as CSV and as .npy give the same labels; .npy output equals JSONL output;
  - kill -9 at 12 random moments, each followed by --resume: every row exactly once, and the
    results equal an uninterrupted run's;
  - --shard i/3 by three processes: every row exactly once across the shards;
  - --max-error-rate aborts with exit 1 and a message; --resume of another job is refused;
  - MiniLM over text rows: embeddings within docs/MODELS.md's cosine of sentence-transformers' (the
    reference fixture), with ids from the input;
  - SmolLM2 over prompts: greedy completions that begin as llama.cpp's where its choices are
    clear (tests/fixtures/smollm2), and the same whether 1 or 8 run at once.
"""

import glob
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits

BATCH, CONFIG, REFERENCE = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)


def run(args, expect=0, timeout=600):
    p = subprocess.run([BATCH, "--config", CONFIG, "--progress", "off"] + args,
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != expect:
        print(p.stderr[-3000:])
    check(p.returncode == expect, f"exit {p.returncode}, expected {expect}: {' '.join(args)}")
    return p


def read_parts(directory):
    """{id: result} from every part file, failing on a duplicate id; and the part files' ids."""
    results, order_ok = {}, True
    for path in sorted(glob.glob(os.path.join(directory, "part-*.jsonl"))):
        previous = None
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                check(r["id"] not in results, f"id {r['id']} written twice ({path})")
                results[r["id"]] = r
                if previous is not None and r["id"] <= previous:
                    order_ok = False
                previous = r["id"]
    check(order_ok, f"rows out of order within a part of {directory}")
    return results


def read_dead(directory, name="dead-letter.jsonl"):
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        return {}
    dead = {}
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            check(d["row"] not in dead, f"dead letter for row {d['row']} written twice")
            dead[d["row"]] = d
    return dead


digits = load_digits()
N = 30000
BAD = {17: '{"id": 17, "pixels": [1, 2, 3]}',
       4242: '{"id": 4242, "pixels": [1, 2',
       9999: "",
       20001: '{"id": 20001, "pixels": "no"}',
       29999: '[1, 2, 3]'}
rng = np.random.default_rng(7)
pixels = digits.data[np.arange(N) % len(digits.data)].astype(np.int64)
targets = digits.target[np.arange(N) % len(digits.target)]

work = tempfile.mkdtemp(prefix="coinfer-batch-test-")
jsonl = os.path.join(work, "digits.jsonl")
with open(jsonl, "w") as f:
    for i in range(N):
        f.write(BAD.get(i, json.dumps({"id": i, "pixels": pixels[i].tolist()})) + "\n")

# --- JSONL, dead letters, labels -------------------------------------------------------
out = os.path.join(work, "jsonl")
p = run(["--model", "digits", "--input", jsonl, "--field", "pixels", "--id-field", "id",
         "--output", out, "--chunk-rows", "4096", "--json"])
summary = json.loads(p.stdout)
check(summary["rows"] == N and summary["errors"] == len(BAD), f"summary {summary}")
results = read_parts(out)
dead = read_dead(out)
check(set(results) | set(dead) == set(range(N)), "rows missing from results and dead letters")
check(not (set(results) & set(dead)), "a row is both a result and a dead letter")
check(set(dead) == set(BAD), f"dead letters {sorted(dead)} != {sorted(BAD)}")
check("63" not in dead.get(17, {}).get("error", "") and "3 numbers" in dead.get(17, {}).get("error", ""),
      f"row 17's reason: {dead.get(17)}")
check("empty line" in dead.get(9999, {}).get("error", ""), f"row 9999's reason: {dead.get(9999)}")
labels = np.array([results[i]["label"] for i in range(N) if i in results])
truth = np.array([targets[i] for i in range(N) if i in results])
accuracy = float((labels == truth).mean())
check(accuracy >= 0.95, f"label accuracy {accuracy:.3f} < 0.95")
probs = results[0]["probabilities"]
check(len(probs) == 10 and abs(sum(probs) - 1) < 1e-3, f"probabilities {probs}")
manifest = json.load(open(os.path.join(out, "manifest.json")))
check(manifest["complete"] and manifest["completed_rows"] == [[0, N]] and manifest["errors"] == len(BAD),
      f"manifest {manifest['completed_rows']} {manifest['complete']}")
print(f"jsonl: {len(results)} results, {len(dead)} dead letters, accuracy {accuracy:.4f}", flush=True)

# A second run into the same output without --resume is refused.
p = run(["--model", "digits", "--input", jsonl, "--field", "pixels", "--output", out], expect=2)
check("--resume" in p.stderr, f"no hint to --resume: {p.stderr}")
# --resume of another job (other field) is refused, naming both.
p = run(["--model", "digits", "--input", jsonl, "--field", "other", "--id-field", "id", "--output", out,
         "--chunk-rows", "4096", "--resume"], expect=2)
check("another job" in p.stderr, f"--resume of another job: {p.stderr}")

# --- CSV and .npy inputs give the same labels; .npy output equals JSONL output -------------
csv_path = os.path.join(work, "digits.csv")
with open(csv_path, "w") as f:
    f.write("key," + ",".join(f"p{k}" for k in range(64)) + "\n")
    for i in range(N):
        f.write(f"{i}," + ",".join(str(v) for v in pixels[i]) + "\n")
out_csv = os.path.join(work, "csv")
run(["--model", "digits", "--input", csv_path, "--id-field", "key", "--output", out_csv])
csv_results = read_parts(out_csv)
check(len(csv_results) == N, f"csv: {len(csv_results)} results")
mismatch = [i for i in results if csv_results[i]["label"] != results[i]["label"]]
check(not mismatch, f"csv labels differ at {mismatch[:5]}")

npy_path = os.path.join(work, "digits.npy")
np.save(npy_path, pixels.astype(np.float32))
out_npy = os.path.join(work, "npy")
run(["--model", "digits", "--input", npy_path, "--output", out_npy, "--output-format", "npy",
     "--chunk-rows", "5000"])
rows = np.concatenate([np.load(f) for f in sorted(glob.glob(os.path.join(out_npy, "part-*.rows.npy")))])
probabilities = np.concatenate(
    [np.load(f) for f in sorted(glob.glob(os.path.join(out_npy, "part-*.probabilities.npy")))])
npy_labels = np.concatenate([np.load(f) for f in sorted(glob.glob(os.path.join(out_npy, "part-*.label.npy")))])
check(np.array_equal(rows, np.arange(N)), "npy: rows are not 0..N-1 in order")
check(probabilities.shape == (N, 10) and probabilities.dtype == np.float32, f"npy: {probabilities.shape}")
same = [i for i in results if npy_labels[i] == results[i]["label"] and
        np.allclose(probabilities[i], results[i]["probabilities"], atol=1e-6)]
check(len(same) == len(results), f"npy output differs from jsonl output at {len(results) - len(same)} rows")

# --- kill -9 at random moments, then --resume: exactly once ---------------------------------
out_kill = os.path.join(work, "killed")
# Enough rows that a dozen kills land before the run could finish, on a fast CPU too (24 copies
# left only 8 once the INT8 layers got faster).
COPIES = 48
big = os.path.join(work, "big.jsonl")
with open(jsonl) as src, open(big, "w") as dst:
    lines = src.readlines()
    for _ in range(COPIES):
        dst.writelines(lines)
total = COPIES * N
# Small batches and chunks: a run takes seconds, so kills land in every stage.
args = ["--model", "digits", "--input", big, "--field", "pixels", "--output", out_kill,
        "--chunk-rows", "1000", "--batch-size", "16", "--resume"]
random.seed(11)
kills = 0
for attempt in range(40):
    proc = subprocess.Popen([BATCH, "--config", CONFIG, "--progress", "off"] + args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(0.1, 0.6))
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    else:
        break
    if kills >= 12:
        break
check(kills >= 10, f"only {kills} kills happened before the run finished")
run(args)
killed = read_parts(out_kill)
killed_dead = read_dead(out_kill)
check(len(killed) + len(killed_dead) == total, f"after {kills} kills: {len(killed)} + {len(killed_dead)} != {total}")
check(set(killed) | set(killed_dead) == set(range(total)), "after kills: rows missing")
reference = {}
for copy in range(COPIES):
    for i, r in results.items():
        reference[copy * N + i] = r["label"]
diff = [k for k, r in killed.items() if reference.get(k) != r["label"]]
check(not diff, f"after kills: labels differ from the uninterrupted run at {diff[:5]}")
check(not glob.glob(os.path.join(out_kill, "*.tmp")), "temporary files left behind")
print(f"kill -9: {kills} kills, {len(killed)} results, {len(killed_dead)} dead letters, exactly once", flush=True)

# --- shards ------------------------------------------------------------------------------
out_shards = os.path.join(work, "shards")
procs = [subprocess.Popen([BATCH, "--config", CONFIG, "--progress", "off", "--model", "digits",
                           "--input", jsonl, "--field", "pixels", "--output", out_shards,
                           "--chunk-rows", "1000", "--shard", f"{i}/3", "--workers", "1"],
                          stderr=subprocess.PIPE, text=True) for i in range(3)]
for proc in procs:
    _, err = proc.communicate(timeout=600)
    check(proc.returncode == 0, f"shard exited {proc.returncode}: {err[-2000:]}")
sharded = read_parts(out_shards)
sharded_dead = {}
for i in range(3):
    d = read_dead(out_shards, f"dead-letter.shard-{i}-of-3.jsonl")
    check(not (set(d) & set(sharded_dead)), "a dead letter in two shards")
    sharded_dead.update(d)
check(set(sharded) | set(sharded_dead) == set(range(N)) and len(sharded) + len(sharded_dead) == N,
      "shards do not cover every row exactly once")
for i in range(3):
    m = json.load(open(os.path.join(out_shards, f"manifest.shard-{i}-of-3.json")))
    chunks = [c[0] for c in m["chunks"]]
    check(all(c % 3 == i for c in chunks) and m["complete"], f"shard {i} manifest chunks {chunks[:5]}")

# --- --max-error-rate ----------------------------------------------------------------------
noisy = os.path.join(work, "noisy.jsonl")
with open(noisy, "w") as f:
    for i in range(5000):
        f.write("not json\n" if i % 10 == 0 else json.dumps({"pixels": pixels[i].tolist()}) + "\n")
p = run(["--model", "digits", "--input", noisy, "--field", "pixels", "--output", os.path.join(work, "noisy"),
         "--chunk-rows", "500", "--max-error-rate", "0.05"], expect=1)
check("--max-error-rate" in p.stderr and "aborting" in p.stderr, f"error-rate abort message: {p.stderr[-500:]}")
run(["--model", "digits", "--input", noisy, "--field", "pixels", "--output", os.path.join(work, "noisy2"),
     "--chunk-rows", "500", "--max-error-rate", "0.2"])

# Bad options get clear errors naming them.
p = run(["--model", "digits", "--input", csv_path, "--columns", "p0,nope", "--output", os.path.join(work, "x")], expect=2)
check("no column 'nope'" in p.stderr, p.stderr)
p = run(["--model", "nope", "--input", jsonl, "--output", os.path.join(work, "x")], expect=2)
check("no model 'nope'" in p.stderr, p.stderr)
p = run(["--model", "digits", "--input", jsonl, "--field", "pixels", "--shard", "3/3",
         "--output", os.path.join(work, "x")], expect=2)
check("--shard" in p.stderr, p.stderr)

# --- MiniLM embeddings against sentence-transformers ---------------------------------------
reference_cases = json.load(open(REFERENCE))["cases"]
texts = os.path.join(work, "texts.jsonl")
with open(texts, "w") as f:
    for k, case in enumerate(reference_cases):
        f.write(json.dumps({"doc": f"d{k}", "text": case["text"]}) + "\n")
out_text = os.path.join(work, "minilm")
# --truncate: as sentence-transformers, which made the reference, cuts at max_seq_length.
run(["--model", "minilm", "--input", texts, "--field", "text", "--id-field", "doc", "--output", out_text,
     "--chunk-rows", "16", "--truncate"])
embedded = {}
for path in sorted(glob.glob(os.path.join(out_text, "part-*.jsonl"))):
    for line in open(path):
        r = json.loads(line)
        embedded[r["id"]] = np.array(r["embedding"], dtype=np.float64)
text_dead = read_dead(out_text)
worst = 1.0
for k, case in enumerate(reference_cases):
    key = f"d{k}"
    if not case["text"]:
        check(text_dead.get(k, {}).get("error") == "empty text", f"minilm: empty text {text_dead.get(k)}")
        continue
    if key not in embedded:
        check(False, f"minilm: no embedding for {key} ({text_dead.get(k)})")
        continue
    ref = np.array(case["embedding"], dtype=np.float64)
    cos = float(embedded[key] @ ref / np.linalg.norm(embedded[key]) / np.linalg.norm(ref))
    worst = min(worst, cos)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
from serve import minilm_int8_floors  # noqa: E402  (docs/MODELS.md's figures per instruction set)
floor = minilm_int8_floors()[0]
check(worst >= floor, f"minilm: worst cosine to sentence-transformers {worst:.4f} < {floor}")
print(f"minilm: {len(embedded)} embeddings, worst cosine {worst:.4f}", flush=True)

# --- SmolLM2: greedy completions, batched by the engine ---------------------------------------
# Prompts whose first tokens llama.cpp chooses by wide margins (tests/fixtures/smollm2: the
# prefixes below are its first 4 and 9 tokens, each ahead of the runner-up by more than 1.2
# nats; the next are near-ties): the greedy completions must begin the same way.
greedy = json.load(open(os.path.join(os.path.dirname(REFERENCE), "..", "smollm2", "reference.json")))["greedy"]
expected = {case["prompt"]: case["text"] for case in greedy if case["kind"] == "plain"}
prompts = ["The capital of France is", "Q: What is 12 + 30?\nA:"]
prefixes = {"The capital of France is": " Paris.\n\n", "Q: What is 12 + 30?\nA:": " 12 + 30 = "}
for prompt in prompts:
    check(expected[prompt].startswith(prefixes[prompt]), f"llama.cpp's text for {prompt!r}: {expected[prompt]!r}")
llm_in = os.path.join(work, "prompts.jsonl")
with open(llm_in, "w") as f:
    for k, prompt in enumerate(prompts + [case["text"] for case in reference_cases[:6]] + [""]):
        f.write(json.dumps({"id": f"p{k}", "prompt": prompt}) + "\n")
outputs = {}
for concurrency in ("1", "8"):
    out_llm = os.path.join(work, f"llm-{concurrency}")
    run(["--model", "smollm2", "--input", llm_in, "--field", "prompt", "--id-field", "id", "--output", out_llm,
         "--max-tokens", "12", "--concurrency", concurrency])
    outputs[concurrency] = read_parts(out_llm)
    llm_dead = read_dead(out_llm)
    check(list(llm_dead) == [len(prompts) + 6] and llm_dead[len(prompts) + 6]["error"] == "empty text",
          f"llm dead letters {llm_dead}")
one, eight = outputs["1"], outputs["8"]
check(len(one) == len(prompts) + 6, f"llm: {len(one)} completions")
for k, prompt in enumerate(prompts):
    text = one.get(f"p{k}", {}).get("text", "")
    check(text.startswith(prefixes[prompt]), f"llm: {prompt!r} -> {text!r}, llama.cpp {expected[prompt][:40]!r}")
for key, r in one.items():
    check(r["finish_reason"] in ("stop", "length") and 0 < r["completion_tokens"] <= 12, f"llm row {r}")
    check(eight.get(key) == r, f"llm: concurrency 8 differs from 1 at {key}: {eight.get(key)} vs {r}")
print(f"smollm2: {len(one)} greedy completions, the same at concurrency 1 and 8", flush=True)

# --- SmolLM2 with --json-schema: every row's output follows the schema -------------------------
import jsonschema  # noqa: E402  (setup installs it; only this part needs it)
schema = {"type": "object", "properties": {"topic": {"type": "string", "maxLength": 24},
                                           "sentiment": {"enum": ["positive", "negative", "neutral"]},
                                           "words": {"type": "integer", "minimum": 0, "maximum": 500}},
          "required": ["topic", "sentiment"], "additionalProperties": False}
schema_path = os.path.join(work, "schema.json")
with open(schema_path, "w") as f:
    json.dump(schema, f)
out_schema = os.path.join(work, "llm-schema")
run(["--model", "smollm2", "--input", llm_in, "--field", "prompt", "--id-field", "id", "--output", out_schema,
     "--max-tokens", "60", "--chat", "--json-schema", schema_path, "--concurrency", "4"])
constrained = read_parts(out_schema)
check(len(constrained) == len(prompts) + 6, f"llm --json-schema: {len(constrained)} rows")
for key, r in constrained.items():
    check(r["finish_reason"] == "stop", f"llm --json-schema row {key} did not finish: {r}")
    try:
        jsonschema.validate(json.loads(r["text"]), schema)
    except (ValueError, jsonschema.ValidationError) as e:
        check(False, f"llm --json-schema row {key}: {r['text']!r}: {e}")
bad_schema = os.path.join(work, "bad-schema.json")
with open(bad_schema, "w") as f:
    f.write('{"type": "array", "uniqueItems": true}')
p = run(["--model", "smollm2", "--input", llm_in, "--field", "prompt", "--output", os.path.join(work, "bad"),
         "--json-schema", bad_schema], expect=2)
check("keyword 'uniqueItems' is not supported" in p.stderr, f"bad schema: {p.stderr[-300:]}")
print(f"smollm2 --json-schema: {len(constrained)} rows, all valid", flush=True)

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
