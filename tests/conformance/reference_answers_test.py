"""What the served SmolLM2 says, against an independent reference: Hugging Face transformers in
FP32 on the GGUF's dequantized weights (tests/fixtures/smollm2/reference_transformers.json,
written by scripts/smollm2_reference_transformers.py: for each of its 10 greedy cases the first
32 tokens, "answer" = the text before the first end token, decoded by transformers' tokenizer,
and "answer_finish" = "stop" if an end token came, else "length").

coinfer-serve with SmolLM2 at precision = "fp32" (the response cache off, so that every route
computes) must give exactly the reference's text and finish reason, max_tokens 32, greedy:
  - /v1/completions: the 5 plain prompts as text, and the ChatML one as text with its special
    tokens;
  - /v1/chat/completions: the 4 chat cases' messages, rendered by coinfer's chat template (the
    reference's prompt is the GGUF template's rendering by llama.cpp);
  - Triton's generate (POST generate, and generate_stream's events joined) and /v2/ws generate
    messages (streamed, joined): the plain prompts;
  - coinfer-batch: the plain prompts, and --chat for the cases with one user message.
Six of the ten answers end with the end-of-sequence token before 32 tokens: those must finish
with "stop", the others with "length". The completions and chat cases again one at a time with
prompt-lookup drafts (num_speculative_tokens 4): the same answers, and /metrics must show draft
tokens both confirmed and rejected on the way.

The default service with precision = "int8" and with precision = "int4" (its "auto" is one of
them, by the file's quantization), decode greedily from
activations quantized to 8 bits, so their answers drift from FP32 at near-ties. Their answers
are checked where the reference is never close to a tie (every step's top-1 logit ahead by
more than MARGIN): those must be the reference's, "stop" included; and their first 16 tokens on
all 10 prompts must equal the FP32 service's on at least as many prompts as
tests/reference/llm_reference_test.cpp asserts in process (7 of 10 for INT8, 5 for INT4, the same
bits on every instruction set; docs/LLM.md). The same of INT4 with activations = "int16" (a
second byte per activation: 9 of 10 asserted in process, 10 measured), which must also reach
the service through its config.

Usage: reference_answers_test.py PATH/TO/coinfer-serve PATH/TO/configs/default.toml
       PATH/TO/coinfer-batch PATH/TO/reference_transformers.json
Exit 0 on success, 77 (skipped) when SmolLM2 is not installed.
"""
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import requests
import websockets

from serve import SKIPPED, config_copy, smollm2_installed, start_server  # tests/conformance/serve.py

MAX_TOKENS = 32
INT8_SAME_OF_16 = 7  # the reference test's floor for greedy INT8 = FP32 over 16 tokens
INT4_SAME_OF_16 = 5  # ... and for INT4
INT4_A16_SAME_OF_16 = 9  # ... and for INT4 with activations = "int16"
# INT8 answers must equal FP32's where transformers' top-1 logit leads the runner-up by more
# than this at every step of the answer: INT8's logit error on SmolLM2 is about 0.1 (the
# reference test's teacher-forced disagreements are at margins below 0.5).
MARGIN = 0.5
GREEDY = {"temperature": 0, "max_tokens": MAX_TOKENS}


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def parallel(function, items):
    """function(item) for every item, at once (the engine batches them), in order."""
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        return list(pool.map(function, items))


def completion(base, prompt, max_tokens=MAX_TOKENS, extra=None):
    r = requests.post(f"{base}/v1/completions", timeout=300,
                      json={"model": "smollm2", "prompt": prompt, **GREEDY, "max_tokens": max_tokens,
                            **(extra or {})})
    check(r.status_code == 200, r.text)
    choice = r.json()["choices"][0]
    return choice["text"], choice["finish_reason"]


def chat(base, messages, max_tokens=MAX_TOKENS, extra=None):
    r = requests.post(f"{base}/v1/chat/completions", timeout=300,
                      json={"model": "smollm2", "messages": messages, **GREEDY,
                            "max_tokens": max_tokens, **(extra or {})})
    check(r.status_code == 200, r.text)
    choice = r.json()["choices"][0]
    return choice["message"]["content"], choice["finish_reason"]


def generate(base, prompt):
    r = requests.post(f"{base}/v2/models/smollm2/generate", timeout=300,
                      json={"text_input": prompt, "parameters": GREEDY})
    check(r.status_code == 200, r.text)
    return r.json()["text_output"], r.json()["finish_reason"]


def generate_stream(base, prompt):
    pieces, finish = [], None
    with requests.post(f"{base}/v2/models/smollm2/generate_stream", timeout=300, stream=True,
                       json={"text_input": prompt, "parameters": GREEDY}) as r:
        check(r.status_code == 200, r.text)
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("data: "):
                event = json.loads(line[6:])
                pieces.append(event["text_output"])
                finish = event.get("finish_reason") or finish
    return "".join(pieces), finish


async def ws_generate(address, prompts):
    """/v2/ws generate messages, one per prompt, all on one connection at once."""
    async with websockets.connect(f"ws://{address}/v2/ws", max_size=None) as ws:
        for k, prompt in enumerate(prompts):
            await ws.send(json.dumps({"id": f"g{k}", "model_name": "smollm2", "text_input": prompt,
                                      "parameters": dict(GREEDY, stream=True)}))
        pieces = {k: [] for k in range(len(prompts))}
        finish = {}
        while len(finish) < len(prompts):
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout=300))
            k = int(message["id"][1:])
            check("error" not in message, message)
            pieces[k].append(message["text_output"])
            if message.get("final"):
                finish[k] = message["finish_reason"]
    return [("".join(pieces[k]), finish[k]) for k in range(len(prompts))]


def batch(binary, config, work, rows, chat_mode):
    """coinfer-batch over `rows` (texts): [(text, finish_reason)] in row order."""
    name = "chat" if chat_mode else "plain"
    source = os.path.join(work, f"{name}.jsonl")
    with open(source, "w") as f:
        for k, text in enumerate(rows):
            f.write(json.dumps({"id": k, "text": text}) + "\n")
    out = os.path.join(work, f"{name}-out")
    args = [binary, "--config", config, "--model", "smollm2", "--input", source, "--field", "text",
            "--id-field", "id", "--max-tokens", str(MAX_TOKENS), "--output", out]
    if chat_mode:
        args.append("--chat")
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, f"coinfer-batch exited {p.returncode}: {p.stderr[-2000:]}")
    results = {}
    for part in sorted(f for f in os.listdir(out) if f.startswith("part-")):
        with open(os.path.join(out, part)) as f:
            for line in f:
                row = json.loads(line)
                results[int(row["id"])] = (row["text"], row["finish_reason"])
    check(len(results) == len(rows), f"coinfer-batch wrote {len(results)} of {len(rows)} rows")
    return [results[k] for k in range(len(rows))]


def compare(route, cases, answers):
    """Every answer is its case's reference answer, with its finish reason."""
    wrong = [(c["prompt"][-50:], got, (c["answer"], c["answer_finish"]))
             for c, got in zip(cases, answers) if got != (c["answer"], c["answer_finish"])]
    check(not wrong, f"{route}: {len(wrong)} of {len(cases)} answers differ from transformers' "
                     "(prompt end, served, reference): " + "\n  ".join(map(repr, wrong)))
    print(f"{route}: {len(cases)} answers equal transformers' FP32 answers "
          f"({sum(c['answer_finish'] == 'stop' for c in cases)} ending with stop)", flush=True)


def first_16(base, cases):
    """Each case's greedy answer from `base` with max_tokens 16 (chat cases through chat, the
    others through completions): (text, finish reason); an answer may end sooner, at its end
    token, the same way on both services unless their tokens differ before it."""
    return parallel(lambda c: chat(base, c["messages"], 16) if c["kind"] == "chat"
                    else completion(base, c["prompt"], 16), cases)


def spec_counters(base):
    """The server's draft tokens proposed and confirmed so far."""
    text = requests.get(f"{base}/metrics", timeout=30).text
    def value(name):
        line = next(l for l in text.splitlines() if l.startswith(name + "{"))
        return float(line.rsplit(" ", 1)[1])
    return (value("coinfer_spec_decode_num_draft_tokens_total"),
            value("coinfer_spec_decode_num_accepted_tokens_total"))


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=60)
    check(code == 0, f"coinfer-serve exited {code} after SIGTERM")


def main():
    serve_binary, default_config, batch_binary, fixture = sys.argv[1:5]
    if not smollm2_installed(default_config):
        sys.exit(SKIPPED)
    with open(fixture) as f:
        cases = json.load(f)["greedy"]
    plain = [c for c in cases if c["kind"] == "plain"]
    chatml = [c for c in cases if c["kind"] == "chatml"]
    chats = [c for c in cases if c["kind"] == "chat"]
    check(len(plain) == 5 and len(chatml) == 1 and len(chats) == 4, "the fixture's cases changed")
    check(sum(c["answer_finish"] == "stop" for c in cases) == 6, "the fixture's end tokens changed")

    with tempfile.TemporaryDirectory() as work:
        config = config_copy(default_config, work, replace=[
            ('precision = "auto"         #', 'precision = "fp32"  #'),
            ('cache = "exact"            # repeated', 'cache = "off"  #')])

        proc, address = start_server(serve_binary, config, extra_args=["--model", "smollm2"])
        base = f"http://{address}"
        try:
            prompts = [c["prompt"] for c in plain]
            compare("/v1/completions", plain + chatml,
                    parallel(lambda c: completion(base, c["prompt"]), plain + chatml))
            compare("/v1/chat/completions", chats,
                    parallel(lambda c: chat(base, c["messages"]), chats))
            compare("Triton generate", plain, parallel(lambda p: generate(base, p), prompts))
            compare("Triton generate_stream", plain,
                    parallel(lambda p: generate_stream(base, p), prompts))
            compare("/v2/ws generate", plain, asyncio.run(ws_generate(address, prompts)))
            fp32_16 = first_16(base, cases)
            # One request at a time, so that every decode step may draft (speculation stops
            # beyond 4 decoding sequences): the same answers, with drafts verified on the way.
            drafted, accepted = spec_counters(base)
            compare("/v1/completions, one at a time, drafting", plain + chatml,
                    [completion(base, c["prompt"], extra={"num_speculative_tokens": 4})
                     for c in plain + chatml])
            compare("/v1/chat/completions, one at a time, drafting", chats,
                    [chat(base, c["messages"], extra={"num_speculative_tokens": 4}) for c in chats])
            drafted2, accepted2 = spec_counters(base)
            print(f"drafting: {accepted2 - accepted} of {drafted2 - drafted} draft tokens confirmed",
                  flush=True)
            check(accepted2 > accepted and drafted2 > accepted2 - accepted + drafted,
                  "the drafting requests confirmed no draft token, or all of them")
        finally:
            stop_server(proc)

        compare("coinfer-batch", plain, batch(batch_binary, config, work, prompts, False))
        one_user = [c for c in chats if len(c["messages"]) == 1 and c["messages"][0]["role"] == "user"]
        check(len(one_user) == 2, "the fixture's one-message chats changed")
        compare("coinfer-batch --chat", one_user,
                batch(batch_binary, config, work, [c["messages"][0]["content"] for c in one_user], True))

    # The default service in INT8 and in INT4 ("auto" picks one of them by the CPU): the chat
    # answers transformers never nearly tied on.
    clear = [c for c in chats + chatml
             if min(c["margins"][:len(c["margins"]) if c["answer_finish"] == "length"
                                 else c["first_eog"] + 1]) > MARGIN]
    check(clear, f"no chat case leads by more than {MARGIN} at every step")
    with tempfile.TemporaryDirectory() as work:
        for sub in ("int8", "int4", "int4_a16"):
            os.mkdir(os.path.join(work, sub))
        int8_config = config_copy(default_config, os.path.join(work, "int8"), replace=[
            ('precision = "auto"         #', 'precision = "int8"  #')])
        int4_config = config_copy(default_config, os.path.join(work, "int4"), replace=[
            ('precision = "auto"         #', 'precision = "int4"  #')])
        int4_a16_config = config_copy(default_config, os.path.join(work, "int4_a16"), replace=[
            ('precision = "auto"         #', 'precision = "int4"  #'),
            ('activations = "int8"       #', 'activations = "int16"  #')])
        for name, config, floor in (("INT8", int8_config, INT8_SAME_OF_16),
                                    ("INT4", int4_config, INT4_SAME_OF_16),
                                    ("INT4 with int16 activations", int4_a16_config, INT4_A16_SAME_OF_16)):
            proc, address = start_server(serve_binary, config, extra_args=["--model", "smollm2"])
            try:
                answers = parallel(lambda c: chat(f"http://{address}", c["messages"]) if c["kind"] == "chat"
                                   else completion(f"http://{address}", c["prompt"]), clear)
                compare(f"{name}, the {len(clear)} cases without a near-tie", clear, answers)
                quantized_16 = first_16(f"http://{address}", cases)
            finally:
                stop_server(proc)
            same = sum(a == b for a, b in zip(quantized_16, fp32_16))
            print(f"{name}: the first 16 tokens equal FP32's on {same} of {len(cases)} prompts",
                  flush=True)
            check(same >= floor, f"{name} = FP32 on {same} of 10 prompts, below {floor}")
    print("ok")


if __name__ == "__main__":
    main()
