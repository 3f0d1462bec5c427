"""Reading a batch's results file costs its answers once (issue #41:
``batch results`` of one 200 MB answer took 867 MB).

Each line's answer is kept as it came (a view of the file, copied once into
its item), never decoded to be encoded again for its shape's parser, and
the file is not split into copies of its lines: counted with
``tracemalloc`` on the OpenAI and Anthropic results files (their formats:
platform.openai.com/docs/guides/batch, docs.anthropic.com/en/api/
retrieving-message-batch-results).
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest

from elelem.shapes.anthropic_messages.batch import BATCH as ANTHROPIC
from elelem.shapes.openai_responses.batch import BATCH as OPENAI
from elelem.vocabulary import ProviderId
from elelem.wire.batch import BatchRecord, BatchTarget, BatchWire, Item
from test_batch_chat_bodies import COMPLETION
from test_batches import MESSAGE

SIZE = 8 * 1024 * 1024


def _openai_line(text: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.dumps(COMPLETION))
    body["choices"][0]["message"]["content"] = text
    return {"id": "batch_req_1", "custom_id": "r1", "error": None,
            "response": {"status_code": 200, "request_id": "req_1", "body": body}}  # fmt: skip


def _anthropic_line(text: str) -> dict[str, Any]:
    message = dict(MESSAGE, content=[{"type": "text", "text": text}])
    return {"custom_id": "r1", "result": {"type": "succeeded", "message": message}}


def _read(wire: BatchWire, body: bytes) -> list[Item]:
    target = BatchTarget(ProviderId("p"), "p:m", "m", "https://api.example")
    record = BatchRecord(ProviderId("p"), "p:m", wire.name, "b1", "ended", "ended", ("r1",),
                         output="https://api.example/results")  # fmt: skip
    step = next(wire.results(target, record))
    tracemalloc.start()
    try:
        items: list[Item] = step.parse(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The file is held by the caller; reading it holds each answer once more.
    # Before: its lines copied, the answer decoded, then encoded again (2.5x).
    assert peak < 1.2 * len(body), (peak, len(body))
    return items


@pytest.mark.parametrize(
    ("wire", "line"),
    [(OPENAI, _openai_line), (ANTHROPIC, _anthropic_line)],
    ids=["openai", "anthropic"],
)
def test_a_large_answer_is_held_once(wire: BatchWire, line: Any) -> None:
    text = "word " * (SIZE // 5)
    small = json.dumps(line("Paris.")).encode()
    body = small + b"\r\n\n" + json.dumps(line(text)).replace('"r1"', '"r2"', 1).encode() + b"\n"
    first, second = _read(wire, body)
    assert (first.custom_id, second.custom_id) == ("r1", "r2")
    assert second.body is not None and json.loads(second.body) == json.loads(
        json.dumps(line(text)))["response" if wire is OPENAI else "result"][
        "body" if wire is OPENAI else "message"]  # fmt: skip
    assert first.shape == ("openai_chat" if wire is OPENAI else None)
