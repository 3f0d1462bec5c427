"""Bedrock Converse citations replay as citationsContent; what cannot replay is reported."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem.errors import PayloadError
from elelem.shapes.bedrock_converse import SHAPE
from elelem.shapes.bedrock_converse.encoder import assistant_wire
from elelem.shapes.bedrock_converse.parser import DELTAS_FORMAT, BedrockParser
from elelem.stream.assembler import assemble
from elelem.vocabulary import (
    Attribution,
    Drop,
    Message,
    ProviderId,
    ProviderPayload,
    Source,
    TextBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED
from elelem.wire import ModelRequest

BEDROCK = ProviderId("bedrock")
CITATION: dict[str, Any] = {
    "title": "Report",
    "sourceContent": [{"text": "Revenue grew 12%."}],
    "location": {"documentChar": {"documentIndex": 0, "start": 10, "end": 27}},
}


def _stream(*deltas: dict[str, Any]) -> Message:
    parser = BedrockParser(BEDROCK)
    chunks = parser.feed_event("messageStart", {"role": "assistant"})
    for delta in deltas:
        chunks += parser.feed_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": delta})
    chunks += parser.feed_event("contentBlockStop", {"contentBlockIndex": 0})
    chunks += parser.feed_event("messageStop", {"stopReason": "end_turn"})
    chunks += parser.feed_event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}})
    chunks += parser.eof()
    return assemble(chunks, BEDROCK).to_message()


def test_streamed_citation_deltas_replay_as_one_citations_content_block() -> None:
    message = _stream({"text": "Revenue grew "}, {"text": "12%."}, {"citation": CITATION})
    wire, dropped = assistant_wire(message, BEDROCK)
    assert wire == {
        "role": "assistant",
        "content": [
            {
                "citationsContent": {
                    "content": [{"text": "Revenue grew 12%."}],
                    "citations": [CITATION],
                }
            }
        ],
    }
    assert dropped == []


def test_a_whole_responses_citations_content_block_replays_as_it_came() -> None:
    block = {"content": [{"text": "Revenue grew 12%."}], "citations": [CITATION]}
    body = {
        "output": {"message": {"role": "assistant", "content": [{"citationsContent": block}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
    }
    chunks = SHAPE.parse_response(json.dumps(body).encode(), BEDROCK)
    wire, dropped = assistant_wire(assemble(chunks, BEDROCK).to_message(), BEDROCK)
    assert wire["content"] == [{"citationsContent": block}]
    assert dropped == []


def test_a_delta_converse_has_no_request_form_for_is_reported_not_sent() -> None:
    message = _stream({"text": "Hi"}, {"futureThing": {"x": 1}})
    request = ModelRequest("m", (Message.user("q"), message))
    encoded = SHAPE.encode_request(request, provider=BEDROCK)
    assert encoded.body["messages"][1]["content"] == [{"text": "Hi"}]
    assert encoded.dropped == (
        Drop(
            "messages[1].content[0]",
            "futureThing",
            UNREPLAYABLE,
            "a Converse delta with no request form",
        ),
    )


def test_a_native_text_citation_without_a_bedrock_payload_is_reported() -> None:
    text = TextBlock("Hi", (Attribution(Source("https://e.example")),))
    message = Message("assistant", (text,), "assistant", BEDROCK)
    wire, dropped = assistant_wire(message, BEDROCK)
    assert wire["content"] == [{"text": "Hi"}]
    assert dropped == [
        Drop("content[0].attributions[0]", "citation", UNREPLAYABLE, "no bedrock citation payload")
    ]


def test_another_providers_citations_are_reported() -> None:
    text = TextBlock("Hi", (Attribution(Source("https://e.example")),))
    message = Message("assistant", (text,), "assistant", ProviderId("anthropic"))
    wire, dropped = assistant_wire(message, BEDROCK)
    assert wire["content"] == [{"text": "Hi"}]
    assert dropped == [
        Drop(
            "content[0]",
            "citation",
            UNSUPPORTED,
            "1: Bedrock Converse has no input form for another provider's citations",
        )
    ]


def test_an_undecodable_deltas_payload_is_an_error() -> None:
    bad = ProviderPayload(BEDROCK, DELTAS_FORMAT, None, {"citation": CITATION})
    message = Message("assistant", (TextBlock("Hi", payloads=(bad,)),), "assistant", BEDROCK)
    with pytest.raises(PayloadError, match=r"content\[0\]: bedrock bedrock.deltas payload"):
        assistant_wire(message, BEDROCK)
