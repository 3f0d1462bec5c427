"""An item id is not a unique key: xAI's Responses API was seen sending two
reasoning items (different encrypted content) under one id.  Every item is
kept and replayed, in order."""

from __future__ import annotations

import json

from elelem.shapes.openai_responses import SHAPE
from elelem.shapes.openai_responses.encoder import encode_request
from elelem.stream import Assembler
from elelem.vocabulary import Message, ProviderId, ReasoningBlock, TextBlock
from elelem.wire import ModelRequest

XAI = ProviderId("xai")
ONE = {
    "id": "rs_same",
    "type": "reasoning",
    "summary": [],
    "encrypted_content": "ENC-A",
    "status": "completed",
}
TWO = {
    "id": "rs_same",
    "type": "reasoning",
    "summary": [],
    "encrypted_content": "ENC-B",
    "status": "completed",
}
MSG_A = {"id": "msg_same", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "first", "annotations": []}]}  # fmt: skip
MSG_B = {**MSG_A, "content": [{"type": "output_text", "text": "second", "annotations": []}]}


def parse(items: list[dict]) -> tuple:  # type: ignore[type-arg]
    parser = SHAPE.new_parser(XAI)
    assembler = Assembler(XAI)
    envelope = {
        "id": "resp_1",
        "object": "response",
        "model": "grok",
        "status": "in_progress",
        "output": [],
    }
    frames = [{"type": "response.created", "response": envelope}]
    for n, item in enumerate(items):
        frames.append({"type": "response.output_item.added", "output_index": n, "item": item})
        frames.append({"type": "response.output_item.done", "output_index": n, "item": item})
    frames.append({"type": "response.completed", "response": {**envelope, "status": "completed", "output": items,
                   "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})  # fmt: skip
    assembler.feed_all(parser.open(200, {}))
    for f in frames:
        assembler.feed_all(parser.message(f["type"], json.dumps(f)))
    assembler.feed_all(parser.eof())
    return assembler.result().content


def test_two_reasoning_items_with_one_id_are_both_kept_and_replayed() -> None:
    content = parse([ONE, TWO, MSG_A])
    reasoning = [p for p in content if isinstance(p, ReasoningBlock)]
    assert [p.payloads[0].value["encrypted_content"] for p in reasoning] == ["ENC-A", "ENC-B"]
    history = (Message.user("q"), Message("assistant", content, provider=XAI))
    items = encode_request(ModelRequest("grok", history), provider=XAI).body["input"]
    assert items[1:] == [ONE, TWO, MSG_A]  # type: ignore[index]


def test_two_message_items_with_one_id_stay_two_items() -> None:
    content = parse([MSG_A, ONE, MSG_B])
    assert [p.text for p in content if isinstance(p, TextBlock)] == ["first", "second"]
    history = (Message.user("q"), Message("assistant", content, provider=XAI))
    items = encode_request(ModelRequest("grok", history), provider=XAI).body["input"]
    assert items[1:] == [MSG_A, ONE, MSG_B]  # type: ignore[index]


def test_adjacent_message_items_with_one_id_are_not_merged() -> None:
    content = parse([MSG_A, MSG_B])
    history = (Message.user("q"), Message("assistant", content, provider=XAI))
    items = encode_request(ModelRequest("grok", history), provider=XAI).body["input"]
    assert items[1:] == [MSG_A, MSG_B]  # type: ignore[index]
