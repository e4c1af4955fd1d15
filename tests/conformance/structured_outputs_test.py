"""Structured outputs from third-party clients: the openai package asks coinfer-serve's SmolLM2
for JSON that follows a schema (response_format json_schema and json_object, the client's
Pydantic `parse`, streamed), for a regex, a choice and a GBNF grammar (vLLM's
structured_outputs), and Triton's generate takes the same fields (requests). Every answer that
finishes with "stop" must validate against its schema with the `jsonschema` package, or match
its pattern with Python's `re`. Exit 0 on success, 77 when the model is not installed."""
import asyncio
import json
import re
import sys
from typing import Literal

import jsonschema
import openai
import pydantic
import requests
import websockets

from serve import SKIPPED, smollm2_installed, start_server

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"type": "string", "maxLength": 40},
        "hobbies": {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
ORDER = {
    "$defs": {
        "item": {
            "type": "object",
            "properties": {
                "product": {"enum": ["apple", "bread", "milk", "cheese"]},
                "quantity": {"type": "integer", "minimum": 1, "maximum": 20},
                "price": {"type": "number", "minimum": 0, "maximum": 100},
            },
            "required": ["product", "quantity"],
            "additionalProperties": False,
        }
    },
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 4},
        "delivery": {"type": "string", "format": "date"},
        "paid": {"type": "boolean"},
        "note": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}]},
    },
    "required": ["items", "paid"],
    "additionalProperties": False,
}
PROMPTS = [
    "Tell me about a person named Alice who is 30 and lives in Paris.",
    "Invent a character for a story.",
    "I want three apples and a bottle of milk delivered tomorrow, already paid.",
    "Write a short shopping list.",
]


class Weather(pydantic.BaseModel):
    city: str = pydantic.Field(max_length=40)
    temperature_c: int = pydantic.Field(ge=-60, le=60)
    conditions: Literal["sunny", "cloudy", "rain", "snow"]


def main():
    binary, config = sys.argv[1], sys.argv[2]
    if not smollm2_installed(config):
        sys.exit(SKIPPED)
    proc, address = start_server(binary, config, extra_args=["--model", "smollm2"])
    try:
        client = openai.OpenAI(base_url=f"http://{address}/v1", api_key="unused", max_retries=0)
        stops = 0
        answers = 0
        for schema, prompts in ((PERSON, PROMPTS[:2]), (ORDER, PROMPTS[2:])):
            for prompt in prompts:
                for settings in ({"temperature": 0}, {"temperature": 1.0, "seed": 7},
                                 {"temperature": 1.2, "top_p": 0.95, "seed": 11}):
                    chat = client.chat.completions.create(
                        model="smollm2", messages=[{"role": "user", "content": prompt}],
                        max_tokens=300, **settings,
                        response_format={"type": "json_schema",
                                         "json_schema": {"name": "answer", "schema": schema,
                                                         "strict": True}})
                    answers += 1
                    text = chat.choices[0].message.content
                    if chat.choices[0].finish_reason == "stop":
                        stops += 1
                        jsonschema.validate(json.loads(text), schema)
                    else:  # a prefix the grammar allowed: it cannot be invalid JSON so far
                        assert chat.choices[0].finish_reason == "length", chat
        # Bounded strings and arrays: a constrained answer ends within its budget.
        assert stops == answers, (stops, answers)

        # Streamed: the pieces join to a valid answer equal to the whole one.
        request = dict(model="smollm2", messages=[{"role": "user", "content": PROMPTS[0]}],
                       max_tokens=200, temperature=0,
                       response_format={"type": "json_schema",
                                        "json_schema": {"name": "person", "schema": PERSON}})
        whole = client.chat.completions.create(**request).choices[0].message.content
        streamed = "".join(c.choices[0].delta.content or ""
                           for c in client.chat.completions.create(**request, stream=True)
                           if c.choices)
        assert streamed == whole, (streamed, whole)
        jsonschema.validate(json.loads(streamed), PERSON)

        # json_object: any JSON object.
        obj = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": "Give me a JSON object about cats."}],
            max_tokens=120, temperature=0, response_format={"type": "json_object"})
        if obj.choices[0].finish_reason == "stop":
            assert isinstance(json.loads(obj.choices[0].message.content), dict)
        else:
            assert obj.choices[0].message.content.startswith("{")

        # The client's own structured-output helper: a Pydantic model in, a parsed object out.
        chat_api = client.chat.completions
        parse = getattr(chat_api, "parse", None) or client.beta.chat.completions.parse
        parsed = parse(model="smollm2", max_tokens=120, temperature=0, response_format=Weather,
                       messages=[{"role": "user", "content": "What is the weather in Oslo?"}])
        weather = parsed.choices[0].message.parsed
        assert isinstance(weather, Weather), parsed
        jsonschema.validate(json.loads(parsed.choices[0].message.content), Weather.model_json_schema())

        # vLLM's structured_outputs: regex, choice, grammar; and its older guided_* fields.
        phone = client.completions.create(
            model="smollm2", prompt="Call me at", max_tokens=20, temperature=1.0, seed=3,
            extra_body={"structured_outputs": {"regex": r" \(\d{3}\) \d{3}-\d{4}"}})
        assert phone.choices[0].finish_reason == "stop"
        assert re.fullmatch(r" \(\d{3}\) \d{3}-\d{4}", phone.choices[0].text), phone
        for field in ({"structured_outputs": {"choice": ["positive", "negative", "neutral"]}},
                      {"guided_choice": ["positive", "negative", "neutral"]}):
            sentiment = client.chat.completions.create(
                model="smollm2", max_tokens=10, temperature=0, extra_body=field,
                messages=[{"role": "user", "content": "Sentiment of 'I love this!'?"}])
            assert sentiment.choices[0].message.content in ("positive", "negative", "neutral")
        spaced = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": PROMPTS[0]}], max_tokens=200, temperature=0,
            extra_body={"structured_outputs": {"json": PERSON, "whitespace_pattern": "[ ]?"}})
        assert spaced.choices[0].finish_reason == "stop", spaced
        jsonschema.validate(json.loads(spaced.choices[0].message.content), PERSON)
        gbnf = 'root ::= "The answer is " [0-9]+ "."'
        math = client.chat.completions.create(
            model="smollm2", max_tokens=16, temperature=0, extra_body={"structured_outputs": {"grammar": gbnf}},
            messages=[{"role": "user", "content": "What is 12 + 30?"}])
        assert re.fullmatch(r"The answer is [0-9]+\.", math.choices[0].message.content), math

        # Triton's generate takes the same fields.
        base = f"http://{address}"
        gen = requests.post(f"{base}/v2/models/smollm2/generate", timeout=60, json={
            "text_input": "The year is", "max_tokens": 8, "structured_outputs": {"regex": r" [12][0-9]{3}"}})
        assert gen.status_code == 200, gen.text
        assert re.fullmatch(r" [12][0-9]{3}", gen.json()["text_output"]), gen.json()
        # ... streamed over SSE (parameters object) and over /v2/ws.
        year = {"max_tokens": 8, "structured_outputs": {"regex": r" [12][0-9]{3}"}}
        with requests.post(f"{base}/v2/models/smollm2/generate_stream", timeout=60, stream=True,
                           json={"text_input": "The year is", "parameters": year}) as streamed:
            assert streamed.status_code == 200, streamed.text
            text = "".join(json.loads(line[6:])["text_output"] for line in
                           streamed.iter_lines(decode_unicode=True) if line.startswith("data: "))
        assert text == gen.json()["text_output"], (text, gen.json())

        async def over_websocket():
            async with websockets.connect(f"ws://{address}/v2/ws") as ws:
                await ws.send(json.dumps({"id": "g", "model_name": "smollm2", "text_input": "The year is",
                                          "parameters": dict(year, stream=True)}))
                pieces = []
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
                    pieces.append(message["text_output"])
                    if message.get("final"):
                        return "".join(pieces)
        assert asyncio.run(over_websocket()) == text

        # Tools: each tool_choice; forced calls name a listed function and their arguments follow
        # its parameters' schema.
        weather_params = {"type": "object", "properties": {
            "city": {"type": "string", "maxLength": 30}, "unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]}
        time_params = {"type": "object", "properties": {"timezone": {"type": "string", "maxLength": 30}},
                       "required": ["timezone"]}
        tools = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
                                                    "parameters": weather_params}},
                 {"type": "function", "function": {"name": "get_time", "parameters": time_params}}]
        schemas = {"get_weather": weather_params, "get_time": time_params}
        ask = [{"role": "user", "content": "What is the weather in Paris?"}]

        def check_calls(message, names):
            assert message.tool_calls, message
            for call in message.tool_calls:
                assert call.type == "function" and call.id, call
                assert call.function.name in names, call
                jsonschema.validate(json.loads(call.function.arguments), schemas[call.function.name])

        required = client.chat.completions.create(model="smollm2", messages=ask, tools=tools, max_tokens=120,
                                                  temperature=0, tool_choice="required")
        assert required.choices[0].finish_reason == "tool_calls", required
        check_calls(required.choices[0].message, schemas)
        named = client.chat.completions.create(
            model="smollm2", messages=ask, tools=tools, max_tokens=60, temperature=0.8, seed=5,
            tool_choice={"type": "function", "function": {"name": "get_time"}})
        assert named.choices[0].finish_reason == "tool_calls", named
        check_calls(named.choices[0].message, {"get_time"})
        assert len(named.choices[0].message.tool_calls) == 1
        single = client.chat.completions.create(model="smollm2", messages=ask, tools=tools, max_tokens=120,
                                                temperature=0, tool_choice="required", parallel_tool_calls=False)
        assert len(single.choices[0].message.tool_calls) == 1, single
        none = client.chat.completions.create(model="smollm2", messages=ask, tools=tools, max_tokens=16,
                                              temperature=0, tool_choice="none")
        assert not none.choices[0].message.tool_calls and none.choices[0].message.content, none
        auto = client.chat.completions.create(model="smollm2", messages=ask, tools=tools, max_tokens=60,
                                              temperature=0)
        if auto.choices[0].message.tool_calls:
            check_calls(auto.choices[0].message, schemas)
            assert auto.choices[0].finish_reason == "tool_calls"
        else:
            assert auto.choices[0].message.content

        # Streamed: the client's deltas reassemble to the same calls.
        calls = {}
        finish = None
        for chunk in client.chat.completions.create(model="smollm2", messages=ask, tools=tools, max_tokens=120,
                                                    temperature=0, tool_choice="required", stream=True):
            for choice in chunk.choices:
                for delta in choice.delta.tool_calls or []:
                    entry = calls.setdefault(delta.index, {"name": "", "arguments": ""})
                    entry["name"] += delta.function.name or ""
                    entry["arguments"] += delta.function.arguments or ""
                finish = choice.finish_reason or finish
        assert finish == "tool_calls"
        assert [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())] == [
            (t.function.name, json.loads(t.function.arguments)) for t in required.choices[0].message.tool_calls]

        # The history: the assistant's call and the tool's result go back to the model.
        history = ask + [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature":18,"conditions":"sunny"}'}]
        followup = client.chat.completions.create(model="smollm2", messages=history, tools=tools,
                                                  max_tokens=24, temperature=0)
        assert followup.choices[0].message.content or followup.choices[0].message.tool_calls, followup

        # n = 3: three sampled choices of one prompt, each valid; streamed, the deltas of each
        # index join to an answer of its own.
        many = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": PROMPTS[1]}], max_tokens=300, n=3,
            temperature=1.0, seed=21,
            response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}})
        assert [c.index for c in many.choices] == [0, 1, 2], many
        for c in many.choices:
            assert c.finish_reason == "stop", c
            jsonschema.validate(json.loads(c.message.content), PERSON)
        assert len({c.message.content for c in many.choices}) > 1, "three samples, all the same"
        single = client.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": PROMPTS[1]}], max_tokens=300,
            temperature=1.0, seed=21,
            response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}})
        # The prompt counts once; the first choice is the same request's answer with that seed.
        assert many.usage.prompt_tokens == single.usage.prompt_tokens, (many.usage, single.usage)
        assert many.choices[0].message.content == single.choices[0].message.content
        assert many.usage.completion_tokens > single.usage.completion_tokens
        texts, finishes = {}, {}
        for chunk in client.chat.completions.create(
                model="smollm2", messages=[{"role": "user", "content": PROMPTS[0]}], max_tokens=300, n=2,
                temperature=0.9, seed=4, stream=True,
                response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}}):
            for c in chunk.choices:
                texts[c.index] = texts.get(c.index, "") + (c.delta.content or "")
                finishes[c.index] = c.finish_reason or finishes.get(c.index)
        assert sorted(texts) == [0, 1] and finishes == {0: "stop", 1: "stop"}, (texts, finishes)
        for text in texts.values():
            jsonschema.validate(json.loads(text), PERSON)

        # The response cache keeps a constrained answer under its constraint: the same request is a
        # hit, the same prompt unconstrained or under another schema is not.
        def cached(**extra):
            raw = client.chat.completions.with_raw_response.create(
                model="smollm2", messages=[{"role": "user", "content": "Describe Bob, 41, from Oslo."}],
                max_tokens=200, temperature=0, **extra)
            return raw.headers.get("x-cache"), raw.parse().choices[0].message.content

        as_person = {"response_format": {"type": "json_schema",
                                         "json_schema": {"name": "person", "schema": PERSON}}}
        outcome, answer = cached(**as_person)
        assert outcome == "miss", outcome
        assert cached(**as_person) == ("hit-exact", answer)
        assert cached()[0] == "miss"
        assert cached(response_format={"type": "json_schema",
                                       "json_schema": {"name": "order", "schema": ORDER}})[0] == "miss"
        assert cached(response_format={"type": "json_object"})[0] == "miss"

        # What cannot be enforced is refused, naming it.
        for body, message in (
                ({"response_format": {"type": "json_schema", "json_schema": {
                    "name": "x", "schema": {"type": "array", "uniqueItems": True}}}},
                 "keyword 'uniqueItems' is not supported"),
                ({"structured_outputs": {"regex": "(?=a)b"}}, "lookaround is not supported"),
                ({"structured_outputs": {"regex": "a", "whitespace_pattern": " "}},
                 "whitespace_pattern: only with a JSON schema or a JSON object"),
                ({"structured_outputs": {"grammar": "root ::= item"}}, "'item' is referenced but not defined"),
                ({"response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}},
                 "only one structured output may be given"),
                ({"tools": tools, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
                 "'nope' is not in tools"),
                ({"tool_choice": "required"}, "tool_choice: needs tools"),
                ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
                    "type": "object", "properties": {"a": {"type": "string", "format": "hostname"}}}}}],
                  "tool_choice": "required"}, "format 'hostname' is not supported")):
            try:
                client.chat.completions.create(model="smollm2", max_tokens=4, extra_body=body,
                                               messages=[{"role": "user", "content": "hi"}])
                raise AssertionError(f"{body} was accepted")
            except openai.BadRequestError as e:
                assert message in str(e), (message, str(e))
        print(f"{answers} schema answers, all valid; weather {weather!r}; phone {phone.choices[0].text!r}")
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


if __name__ == "__main__":
    main()
