"""Decode speed with and without a structured output, in the same run against one coinfer-serve:
chat requests at 1 and 16 concurrent streams, each once unconstrained (ignore_eos, so every
request makes max_tokens tokens) and once with a JSON schema whose answer is long (an array of
8 bounded records), greedy. Reports completion tokens per second of wall time over the batch.

  python3 bench/structured_bench.py http://127.0.0.1:8000 [model]
"""
import json
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

SCHEMA = {
    "type": "array", "minItems": 8, "maxItems": 8,
    "items": {"type": "object", "additionalProperties": False, "required": ["name", "age", "city"],
              "properties": {"name": {"type": "string", "maxLength": 12},
                             "age": {"type": "integer", "minimum": 0, "maximum": 99},
                             "city": {"type": "string", "maxLength": 12}}},
}


def post(base, body):
    request = urllib.request.Request(f"{base}/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json", "cache-control": "no-store, no-cache"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def run(base, model, streams, constrained, requests_per_stream=2):
    def one(i):
        body = {"model": model, "max_tokens": 160, "temperature": 0,
                "messages": [{"role": "user", "content": f"List 8 people (name, age, city), set {i}."}]}
        if constrained:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "people", "schema": SCHEMA}}
        else:
            body["ignore_eos"] = True
        tokens = 0
        for _ in range(requests_per_stream):
            answer = post(base, body)
            tokens += answer["usage"]["completion_tokens"]
            if constrained:
                assert answer["choices"][0]["finish_reason"] == "stop", answer
                json.loads(answer["choices"][0]["message"]["content"])
        return tokens
    start = time.monotonic()
    with ThreadPoolExecutor(streams) as pool:
        tokens = sum(pool.map(one, range(streams)))
    return tokens / (time.monotonic() - start), tokens


def main():
    base = sys.argv[1]
    model = sys.argv[2] if len(sys.argv) > 2 else "smollm2"
    run(base, model, 1, True, 1)  # the schema's token sets computed, as after its first requests
    print("streams | unconstrained tok/s | with the schema tok/s | ratio")
    for streams in (1, 16):
        free, _ = run(base, model, streams, False)
        schema, n = run(base, model, streams, True)
        print(f"{streams:7d} | {free:19.1f} | {schema:21.1f} | {schema / free:.2f}  ({n} tokens)")


if __name__ == "__main__":
    main()
