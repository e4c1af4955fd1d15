"""The openai package (a real third-party client) streams and receives chat and text
completions from coinfer-serve's SmolLM2 (configs/default.toml). Exit 0 on success; skipped
(exit 0 with a message) when the model is not installed."""
import sys

import openai

from serve import SKIPPED, smollm2_installed, start_server


def main():
    binary, config = sys.argv[1], sys.argv[2]
    if not smollm2_installed(config):
        sys.exit(SKIPPED)
    proc, address = start_server(binary, config)
    try:
        client = openai.OpenAI(base_url=f"http://{address}/v1", api_key="unused", max_retries=0)
        assert "smollm2" in [m.id for m in client.models.list().data]

        messages = [{"role": "user", "content": "What is the capital of France?"}]
        chat = client.chat.completions.create(model="smollm2", messages=messages,
                                              max_tokens=24, temperature=0)
        answer = chat.choices[0].message.content
        assert chat.choices[0].message.role == "assistant"
        assert answer, answer  # (with its default system prompt SmolLM2 says "L'Étoile ...", as llama.cpp does)
        assert chat.choices[0].finish_reason in ("stop", "length")
        assert chat.usage.total_tokens == chat.usage.prompt_tokens + chat.usage.completion_tokens

        # Streamed: the same greedy answer, piece by piece, and the usage chunk last.
        pieces, finish, usage = [], None, None
        stream = client.chat.completions.create(model="smollm2", messages=messages, max_tokens=24,
                                                temperature=0, stream=True,
                                                stream_options={"include_usage": True})
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                if choice.delta.content:
                    pieces.append(choice.delta.content)
                if choice.finish_reason:
                    finish = choice.finish_reason
        assert "".join(pieces) == answer, ("".join(pieces), answer)
        assert len(pieces) > 1, pieces
        assert finish == chat.choices[0].finish_reason
        assert usage is not None and usage.completion_tokens == chat.usage.completion_tokens

        # Text completions, whole and streamed.
        done = client.completions.create(model="smollm2", prompt="The three primary colors are",
                                         max_tokens=16, temperature=0,
                                         extra_body={"ignore_eos": True})
        assert done.choices[0].finish_reason == "length"
        assert done.usage.completion_tokens == 16
        text = "".join(c.choices[0].text for c in client.completions.create(
            model="smollm2", prompt="The three primary colors are", max_tokens=16,
            temperature=0, stream=True, extra_body={"ignore_eos": True}) if c.choices)
        assert text == done.choices[0].text, (text, done.choices[0].text)

        # echo: the prompt, then the same completion; streamed, the same text.
        echoed = client.completions.create(model="smollm2", prompt="The three primary colors are",
                                           max_tokens=16, temperature=0, echo=True,
                                           extra_body={"ignore_eos": True})
        assert echoed.choices[0].text == "The three primary colors are" + done.choices[0].text, echoed
        streamed_echo = "".join(c.choices[0].text for c in client.completions.create(
            model="smollm2", prompt="The three primary colors are", max_tokens=16, temperature=0,
            echo=True, stream=True, extra_body={"ignore_eos": True}) if c.choices)
        assert streamed_echo == echoed.choices[0].text, (streamed_echo, echoed.choices[0].text)

        # Errors arrive as the client's exception types.
        # best_of: the n of best_of candidates whose tokens are likeliest, likeliest first; the
        # candidates are those n = best_of gives with the same seed (choice i: seed + i).
        sample = dict(model="smollm2", prompt="My favourite animal is", max_tokens=8, temperature=1.0,
                      seed=9, logprobs=0)
        three = client.completions.create(n=3, **sample)
        best = client.completions.create(n=2, best_of=3, **sample)
        ranked = sorted(three.choices, key=lambda c: -sum(c.logprobs.token_logprobs))
        assert [c.text for c in best.choices] == [c.text for c in ranked[:2]], (best, three)
        assert best.usage.completion_tokens == three.usage.completion_tokens
        try:
            client.completions.create(model="smollm2", prompt="x", n=3, best_of=2)
            raise AssertionError("best_of < n was accepted")
        except openai.BadRequestError as e:
            assert "best_of: must be at least n" in str(e), e
        try:
            client.chat.completions.create(model="nope", messages=messages)
            raise AssertionError("an unknown model was accepted")
        except openai.NotFoundError:
            pass
        print(f"chat: {answer!r}; completion: {done.choices[0].text!r}")
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


if __name__ == "__main__":
    main()
