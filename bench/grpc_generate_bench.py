"""Streamed generation over gRPC vs Server-Sent Events: the same greedy requests to one
coinfer-serve's SmolLM2, one at a time, interleaved, through Triton's generate_stream (SSE,
Python `requests`) and gRPC's ModelStreamInfer (tritonclient.grpc, a decoupled stream).
Reports per transport the median time to first token, time between streamed pieces and tokens/s, and the
ratio gRPC / SSE, after checking that both transports return the same text.

    python3 bench/grpc_generate_bench.py --http 127.0.0.1:8000 --grpc 127.0.0.1:8001 \\
        [--rounds 5] [--max-tokens 128]

Needs tritonclient[grpc] and requests; the server with its default config (smollm2).
"""
import argparse
import json
import queue
import statistics
import time

import numpy as np
import requests
import tritonclient.grpc as grpcclient

PROMPTS = ["Once upon a time, by the sea, there was", "The three most useful kitchen tools are",
           "In the year 2050, cities will"]


def sse(http, prompt, max_tokens):
    body = {"text_input": prompt, "parameters": {"max_tokens": max_tokens, "temperature": 0,
                                                  "ignore_eos": True}}
    started = time.perf_counter()
    times, text = [], ""
    with requests.post(f"http://{http}/v2/models/smollm2/generate_stream", json=body, stream=True,
                       headers={"Cache-Control": "no-store"}, timeout=300) as r:
        for line in r.iter_lines():
            if line.startswith(b"data: "):
                event = json.loads(line[6:])
                text += event["text_output"]
                times.append(time.perf_counter() - started)
    return text, times


def grpc_stream(client, responses, prompt, max_tokens):
    t = grpcclient.InferInput("text_input", [1], "BYTES")
    t.set_data_from_numpy(np.array([prompt.encode()], dtype=object))
    started = time.perf_counter()
    client.async_stream_infer("smollm2", [t], parameters={
        "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True, "stream": True})
    times, text = [], ""
    while True:
        result, error = responses.get(timeout=300)
        if error is not None:
            raise RuntimeError(error)
        text += result.as_numpy("text_output")[0].decode()
        times.append(time.perf_counter() - started)
        if result.get_response().parameters["triton_final_response"].bool_param:
            return text, times


def summary(runs, max_tokens):
    ttft = statistics.median(t[0] for t in runs) * 1e3
    itl = statistics.median(statistics.median(b - a for a, b in zip(t, t[1:])) for t in runs) * 1e3
    tps = statistics.median(max_tokens / t[-1] for t in runs)
    return ttft, itl, tps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)
    parser.add_argument("--grpc", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()
    client = grpcclient.InferenceServerClient(args.grpc)
    responses = queue.Queue()
    client.start_stream(callback=lambda result, error: responses.put((result, error)),
                        headers={"cache-control": "no-store"})
    runs = {"SSE": [], "gRPC": []}
    sse(args.http, PROMPTS[0], 8)  # warm-up
    for _ in range(args.rounds):
        for prompt in PROMPTS:
            a, sse_times = sse(args.http, prompt, args.max_tokens)
            b, grpc_times = grpc_stream(client, responses, prompt, args.max_tokens)
            assert a == b, (prompt, a, b)
            runs["SSE"].append(sse_times)
            runs["gRPC"].append(grpc_times)
    client.stop_stream()
    print(f"| transport | TTFT ms (median) | between pieces ms | tokens/s | vs SSE |")
    print("|---|---:|---:|---:|---:|")
    base = summary(runs["SSE"], args.max_tokens)[2]
    for name, r in runs.items():
        ttft, itl, tps = summary(r, args.max_tokens)
        print(f"| {name} | {ttft:.1f} | {itl:.2f} | {tps:.1f} | {tps / base:.2f} |")


if __name__ == "__main__":
    main()
