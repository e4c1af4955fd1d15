"""The `openai` Python package (a third-party client) against coinfer-serve's /v1/embeddings,
compared with reference embeddings from sentence-transformers (tests/fixtures/minilm).

Usage: openai_test.py PATH/TO/coinfer-serve PATH/TO/config.toml PATH/TO/reference.json
"""
import base64
import json
import math
import signal
import struct
import sys
import urllib.error
import urllib.request

import openai

from serve import minilm_int8_floors, start_server  # tests/conformance/serve.py

MODEL = "minilm"


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def post(address, path, body):
    req = urllib.request.Request(f"http://{address}{path}", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def main():
    binary, config, fixtures = sys.argv[1:4]
    with open(fixtures) as f:
        cases = json.load(f)["cases"]
    # Texts the server takes as they are: non-empty, within max_input_tokens (256).
    served = [c for c in cases if c["ids"] and len(c["ids"]) <= 256 and len(c["ids"]) > 2]
    proc, address = start_server(binary, config)
    try:
        client = openai.OpenAI(base_url=f"http://{address}/v1", api_key="unused")

        # A list of strings: every vector close to sentence-transformers' FP32 one.
        cosines = []
        for start in range(0, len(served), 16):
            chunk = served[start:start + 16]
            result = client.embeddings.create(model=MODEL, input=[c["text"] for c in chunk])
            assert [d.index for d in result.data] == list(range(len(chunk))), result.data
            assert result.model == MODEL, result.model
            assert result.usage.prompt_tokens == sum(len(c["ids"]) for c in chunk), result.usage
            for case, item in zip(chunk, result.data):
                assert len(item.embedding) == 384
                cosines.append(cosine(item.embedding, case["embedding"]))
        floor_min, floor_mean = minilm_int8_floors()
        mean = sum(cosines) / len(cosines)
        assert min(cosines) >= floor_min and mean >= floor_mean, (min(cosines), mean)
        print(f"openai list input: {len(cosines)} texts, cosine to sentence-transformers "
              f"min {min(cosines):.5f} mean {sum(cosines) / len(cosines):.5f}")

        # A single string, and the same as base64 (the client's default when it asks itself).
        one = served[0]
        single = client.embeddings.create(model=MODEL, input=one["text"]).data[0].embedding
        assert cosine(single, one["embedding"]) >= floor_min
        raw = client.embeddings.create(model=MODEL, input=one["text"],
                                       encoding_format="base64").data[0].embedding
        if isinstance(raw, str):  # older clients hand the string back as it came
            raw = list(struct.unpack("<384f", base64.b64decode(raw)))
        assert max(abs(a - b) for a, b in zip(raw, single)) < 1e-6

        # Token ids give the same vector as the text they came from.
        by_ids = client.embeddings.create(model=MODEL, input=[one["ids"]]).data[0].embedding
        assert max(abs(a - b) for a, b in zip(by_ids, single)) < 1e-6

        # Refusals name what was wrong.
        for kwargs, needle in [({"input": "x", "dimensions": 8}, "dimensions"),
                               ({"input": ""}, "empty"),
                               ({"input": "word " * 400}, "max_input_tokens")]:
            try:
                client.embeddings.create(model=MODEL, **kwargs)
                raise AssertionError(f"accepted {kwargs}")
            except openai.BadRequestError as e:
                assert needle in str(e), str(e)
        try:
            client.embeddings.create(model="nope", input="x")
            raise AssertionError("unknown model accepted")
        except openai.NotFoundError:
            pass
        long_case = next(c for c in cases if len(c["ids"]) > 256)
        truncated = client.embeddings.create(model=MODEL, input=long_case["text"],
                                             extra_body={"truncate": True})
        assert truncated.usage.prompt_tokens == 256
        assert cosine(truncated.data[0].embedding, long_case["embedding"]) >= 0.99

        models = [m.id for m in client.models.list()]
        assert MODEL in models, models

        # vLLM's tokenizer routes.
        status, tokens = post(address, "/tokenize", {"model": MODEL, "prompt": one["text"]})
        assert status == 200 and tokens["tokens"] == one["ids"], tokens
        assert tokens["count"] == len(one["ids"]) and tokens["max_model_len"] == 256
        status, text = post(address, "/detokenize", {"model": MODEL, "tokens": one["ids"]})
        assert status == 200 and isinstance(text["prompt"], str), text
        status, bare = post(address, "/tokenize", {"model": MODEL, "prompt": one["text"],
                                                   "add_special_tokens": False})
        assert status == 200 and bare["tokens"] == one["ids"][1:-1], bare

        # OIP v2 with a BYTES input: the same vector as OpenAI's route.
        status, oip = post(address, f"/v2/models/{MODEL}/infer", {"inputs": [
            {"name": "text", "shape": [1], "datatype": "BYTES", "data": [one["text"]]}]})
        assert status == 200, oip
        vector = oip["outputs"][0]["data"]
        assert oip["outputs"][0]["shape"] == [1, 384], oip["outputs"][0]["shape"]
        assert max(abs(a - b) for a, b in zip(vector, single)) < 1e-6
        status, oip_error = post(address, f"/v2/models/{MODEL}/infer", {"inputs": [
            {"name": "text", "shape": [1], "datatype": "BYTES", "data": ["word " * 400]}]})
        assert status == 400 and "max_input_tokens" in oip_error["error"], oip_error
        status, error = post(address, "/tokenize", {"model": "digits", "prompt": "x"})
        assert status == 400 and "does not take text" in error["error"]["message"], error
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    assert code == 0, f"coinfer-serve exited {code} after SIGTERM"
    print("openai conformance: all checks passed")


if __name__ == "__main__":
    main()
