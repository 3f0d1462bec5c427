"""OpenAI's base64 embedding answers read by one typed msgspec pass (the
``openai`` wire) give exactly what the general reader gives: the same
vectors and usage for an answer it takes, the same error for one it does
not (it hands those to the general reader)."""

from __future__ import annotations

import base64
import json
import random
import struct
from typing import Any

import pytest

from elelem.errors import MalformedStreamError
from elelem.shapes.openai_responses.embeddings import EMBEDDINGS, _base64_answer, openai_decode

TYPED = openai_decode("openai", b64=True)
GENERAL = openai_decode("openai")


def _b64(*values: float) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def _read(decode: Any, body: bytes, expected: int) -> Any:
    try:
        got = decode(body, expected)
    except MalformedStreamError as exc:
        return ("error", str(exc), exc.body)
    usage = None if got.usage is None else (got.usage.input, got.usage.raw)
    return [v.tolist() for v in got.vectors], usage, got.truncated


def test_the_openai_wire_reads_with_the_typed_pass() -> None:
    usage = {"prompt_tokens": 7, "total_tokens": 7, "extra": [1, {"a": None}]}
    items = [
        {"object": "embedding", "index": 1, "embedding": _b64(0.5, -2.0)},
        {"index": 0, "embedding": _b64(1.25, 3.0)},
    ]
    body = json.dumps({"object": "list", "data": items, "model": "m", "usage": usage}).encode()
    assert _base64_answer(body) is not None  # taken by the typed pass
    got = EMBEDDINGS.wires["openai"].decode(body, 2)
    assert [v.tolist() for v in got.vectors] == [[1.25, 3.0], [0.5, -2.0]]
    assert got.usage is not None and got.usage.input == 7
    assert got.usage.raw == usage
    assert _read(TYPED, body, 2) == _read(GENERAL, body, 2)


@pytest.mark.parametrize(
    "body",
    [
        b'{"data": [{"embedding": "AACAPw=="}]}',  # no index: by position; no usage
        b'{"data": [{"embedding": "AACAPw=="}], "usage": {"total_tokens": 3}}',
        b'{"data": [{"embedding": "AACAPw=="}], "usage": [1]}',  # usage not an object
        b'{"data": [{"embedding": "AACAPw=="}], "usage": null}',
        b'{"data": [{"embedding": "AACAPw=="}], "data": [{"embedding": ""}]}',  # the last one
        b'{"data": [{"embedding": [1.0, 2]}]}',  # floats, though base64 was asked
        b'{"data": [{"embedding": "AACAPw==", "index": null}]}',
        b'{"data": [{"embedding": "AACAPw==", "index": true}]}',
        b'{"data": [{"embedding": "AACAPw==", "index": 1.0}]}',
        b'{"data": [{"embedding": "AACAPw==", "index": -1}]}',
        b'{"data": [{"embedding": "AACAPw==", "index": 1}]}',
        b'{"data": [{"embedding": "AACAPw==", "index": 0}, {"embedding": "AACAPw==", "index": 0}]}',
        b'{"data": [{"embedding": "AACA"}]}',  # 3 bytes: not whole float32 values
        b'{"data": [{"embedding": "AAC@Pw=="}]}',
        b'{"data": [{"embedding": "AAC\\nPw=="}]}',
        b'{"data": [{"embedding": "AACAP=="}]}',
        b'{"data": [{"embedding": "AACAPw="}]}',
        b'{"data": [{"embedding": "AACAPw=="}, 3]}',
        b'{"data": {"embedding": "AACAPw=="}}',
        b'{"embedding": "AACAPw=="}',
        b'[{"embedding": "AACAPw=="}]',
        b'{"data": [{"embedding": "AACAPw=="}], "usage": {"prompt_tokens": 1}',  # cut short
        b'{"data": [], "usage": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # too deep
        b"not json",
    ],
)
def test_what_the_typed_pass_reads_and_refuses_is_what_the_general_reader_does(
    body: bytes,
) -> None:
    assert _read(TYPED, body, 1) == _read(GENERAL, body, 1)


def test_base64_the_typed_pass_refuses_is_read_the_general_way() -> None:
    # b64decode(validate=True) takes a "=" after whole groups; msgspec does not.
    body = b'{"data": [{"embedding": "AACAPwAAgD8AAIA/="}]}'
    assert _base64_answer(body) is None
    assert _read(TYPED, body, 1) == _read(GENERAL, body, 1)
    assert _read(TYPED, body, 1)[0] == [[1.0, 1.0, 1.0]]


def test_random_base64_reads_alike() -> None:
    rng = random.Random(37)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
    for _ in range(3000):
        text = "".join(rng.choice(alphabet + "-_ .") for _ in range(rng.randint(0, 13)))
        body = b'{"data": [{"embedding": "%s"}]}' % text.encode()
        assert _read(TYPED, body, 1) == _read(GENERAL, body, 1), text
