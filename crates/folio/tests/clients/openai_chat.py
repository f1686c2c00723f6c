"""OpenAI's own Python client against `folio serve`: the methods listed as
models, a streamed answer from folio/vanilla-rag, a follow-up in the same
chat, and one answer not streamed. Prints what it got as JSON for the Rust
test (crates/folio/tests/serve.rs) to check.

usage: openai_chat.py BASE_URL TOKEN QUESTION FOLLOW_UP
"""

import json
import sys

from openai import OpenAI

base, token, question, follow_up = sys.argv[1:5]
client = OpenAI(base_url=f"{base}/v1", api_key=token, max_retries=0, timeout=600)
MODEL = "folio/vanilla-rag"


def streamed(messages):
    stream = client.chat.completions.create(
        model=MODEL, messages=messages, stream=True, max_tokens=96, temperature=0
    )
    pieces, finish, chunks = [], None, 0
    for chunk in stream:
        chunks += 1
        choice = chunk.choices[0]
        if choice.delta.content:
            pieces.append(choice.delta.content)
        if choice.finish_reason:
            finish = choice.finish_reason
    return {"text": "".join(pieces), "finish": finish, "chunks": chunks}


models = [m.id for m in client.models.list()]
first = streamed([{"role": "user", "content": question}])
second = streamed(
    [
        {"role": "user", "content": question},
        {"role": "assistant", "content": first["text"]},
        {"role": "user", "content": follow_up},
    ]
)
plain = client.chat.completions.create(
    model=MODEL,
    messages=[{"role": "user", "content": [{"type": "text", "text": question}]}],
    max_tokens=64,
    temperature=0,
)
print(
    json.dumps(
        {
            "models": models,
            "first": first,
            "second": second,
            "plain": {
                "text": plain.choices[0].message.content,
                "finish": plain.choices[0].finish_reason,
                "total_tokens": plain.usage.total_tokens,
            },
        }
    )
)
