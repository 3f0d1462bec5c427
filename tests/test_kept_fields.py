"""Unknown but well-formed fields on *known* events, deltas and blocks are kept.

docs/architecture.md §2.3: unknown is never dropped and never an error.  A field nobody
modelled on a known event is kept as the skeleton keeps it (an
``<shape>.event`` field block where it arrived, again when its value
changes), a field of a known delta or block joins what native replay sends
back for that block, and a field of the response object rides on the
finish.  Native replay sends back what the wire takes and reports the rest;
a portable replay reports what it leaves out.  Each case is one gap, with
its exact outcome; where a shape has a fast path, the same frames through
the dict path alone give the same chunks.
"""

from __future__ import annotations

import json
from typing import Any

from elelem.shapes.anthropic_messages import SHAPE as ANTHROPIC_SHAPE
from elelem.shapes.anthropic_messages.encoder import assistant_wire as anthropic_wire
from elelem.shapes.anthropic_messages.parser import MessagesParser
from elelem.shapes.bedrock_converse import SHAPE as BEDROCK_SHAPE
from elelem.shapes.bedrock_converse.encoder import assistant_wire as bedrock_wire
from elelem.shapes.bedrock_converse.parser import BedrockParser
from elelem.shapes.gemini import SHAPE as GEMINI_SHAPE
from elelem.shapes.gemini.encoder import encode_request as gemini_request
from elelem.shapes.ollama_native import SHAPE as OLLAMA_SHAPE
from elelem.shapes.ollama_native.encoder import assistant_wire as ollama_wire
from elelem.shapes.openai_responses.encoder import assistant_wire as responses_wire
from elelem.shapes.openai_responses.parser import ResponsesParser
from elelem.stream import AssembledResponse, BlockStart, Chunk, TextDelta, assemble
from elelem.vocabulary import (
    Attribution,
    Drop,
    Message,
    ProviderId,
    ProviderPayload,
    Source,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import FOREIGN_PAYLOAD, UNREPLAYABLE
from elelem.wire import ModelRequest

A = ProviderId("anthropic")
B = ProviderId("bedrock")
OPENAI = ProviderId("openai")


def _feed(parser: Any, frames: list[tuple[str, dict[str, Any]]]) -> list[Chunk]:
    chunks: list[Chunk] = []
    for event, obj in frames:
        chunks += parser.message(event, json.dumps(obj))
    return chunks + list(parser.eof())


# -- Anthropic Messages --------------------------------------------------------


class _AnthropicDictOnly(MessagesParser):
    def fast(self, event: str, data: str) -> list[Chunk] | None:
        return None


def _anthropic(frames: list[dict[str, Any]]) -> AssembledResponse:
    """The frames through the real parser, after checking that the dict path
    alone gives exactly the same chunks."""
    pairs = [(str(f["type"]), f) for f in frames]
    chunks = _feed(ANTHROPIC_SHAPE.new_parser(A), pairs)
    assert chunks == _feed(_AnthropicDictOnly(A), pairs)
    return assemble(chunks, A)


def _message_start(**extra: Any) -> dict[str, Any]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x"}
    return {"type": "message_start", "message": {**message, "content": [], **extra}}


def _text_start(index: int = 0, **extra: Any) -> dict[str, Any]:
    block = {"type": "text", "text": "", **extra}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _text_delta(text: str, index: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text, **extra},
    }


def _end(stop: str = "end_turn") -> list[dict[str, Any]]:
    return [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]


def _anthropic_event(event: str, field: str, value: Any) -> UnknownBlock:
    return UnknownBlock({"type": "anthropic.event", "event": event, "field": field, "value": value})


def test_anthropic_a_new_field_of_a_known_delta_joins_its_blocks_fields() -> None:
    new_thing = {"score": 0.5}
    result = _anthropic(
        [
            _message_start(),
            _text_start(),
            _text_delta("Hel", new_thing=new_thing),
            _text_delta("lo", new_thing=new_thing),
            *_end(),
        ]
    )
    # The text is whole; the field, an object, is the last one sent (a string
    # would have been joined, as for a delta type nobody modelled).
    assert result.blocks == (
        TextBlock(
            "Hello", payloads=(ProviderPayload(A, "block_fields", None, {"new_thing": new_thing}),)
        ),
    )
    message = result.to_message()
    wire, dropped = anthropic_wire(message, A)
    assert wire["content"] == [{"type": "text", "text": "Hello", "new_thing": new_thing}]
    assert dropped == ()
    # Portably the field is Anthropic's payload: left out, and said so.
    _, portable = bedrock_wire(message, B)
    assert portable == [Drop("content[0]", "payload", FOREIGN_PAYLOAD, "anthropic block_fields")]


def test_anthropic_fields_of_a_known_thinking_signature_and_tool_delta_are_kept() -> None:
    frames = [
        _message_start(),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hm", "lang": "en"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "c2ln", "alg": 2},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}', "part": "x"},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]
    result = _anthropic(frames)
    wire, dropped = anthropic_wire(result.to_message(), A)
    assert wire["content"] == [
        {"type": "thinking", "thinking": "hm", "signature": "c2ln", "lang": "en", "alg": 2},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}, "part": "x"},
    ]
    assert dropped == ()


def test_anthropic_a_new_field_of_every_known_event_is_kept_once_where_it_arrived() -> None:
    frames = [
        {"type": "ping", "trace": "t"},
        {**_message_start(), "trace": "t"},
        {**_text_start(), "trace": "t"},
        *[{**_text_delta(piece), "trace": "t"} for piece in ("a", "b", "c")],
        {**_text_delta("d"), "trace": "u"},  # a new value: kept again
        {"type": "content_block_stop", "index": 0, "trace": "t"},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop", "trace": "t"},
    ]
    result = _anthropic(frames)
    # In stream order of what committed: the text block when it stopped.
    assert result.content == (
        _anthropic_event("ping", "trace", "t"),
        _anthropic_event("message_start", "trace", "t"),
        _anthropic_event("content_block_start", "trace", "t"),
        _anthropic_event("content_block_delta", "trace", "t"),
        _anthropic_event("content_block_delta", "trace", "u"),
        TextBlock("abcd"),
        _anthropic_event("content_block_stop", "trace", "t"),
        _anthropic_event("message_stop", "trace", "t"),
    )
    assert result.finish is not None and result.finish.reason == "stop"
    # A stream event is no content: native replay leaves it out and says so.
    wire, dropped = anthropic_wire(result.to_message(), A)
    assert wire["content"] == [{"type": "text", "text": "abcd"}]
    assert dropped[0] == Drop(
        "content[0]", "anthropic.event", UNREPLAYABLE, "'ping': a stream event, not content"
    )
    assert len(dropped) == 7


def test_anthropic_a_field_on_every_delta_keeps_the_fast_path_and_its_changes() -> None:
    # 1 and true are different values, and so are 1 and 1.0.
    values = [1, 1, True, True, 1.0, 1]
    frames = [_message_start(), _text_start()]
    frames += [{**_text_delta("x"), "n": v} for v in values] + _end()
    parser = ANTHROPIC_SHAPE.new_parser(A)
    hits = 0
    for f in frames:
        data = json.dumps(f)
        hits += parser.fast("", data) is not None if f["type"] == "content_block_delta" else 0
        parser.message("", data)  # a fresh parser per frame would not learn
    result = _anthropic(frames)
    kept = [b.raw["value"] for b in result.content if isinstance(b, UnknownBlock)]
    assert [(type(v), v) for v in kept] == [(int, 1), (bool, True), (float, 1.0), (int, 1)]
    assert hits >= 5  # every delta after the first stays typed


def test_anthropic_new_fields_of_the_message_and_a_block_start_are_kept() -> None:
    result = _anthropic(
        [
            _message_start(region="eu"),
            _text_start(lang="en"),
            _text_delta("Hi"),
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "why": "done"},
                "context": {"k": 1},
            },
            {"type": "message_stop"},
        ]
    )
    assert result.blocks == (
        TextBlock("Hi", payloads=(ProviderPayload(A, "block_fields", None, {"lang": "en"}),)),
    )
    assert result.finish is not None
    (envelope,) = result.finish.payloads
    assert envelope == ProviderPayload(
        A,
        "message",
        None,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "region": "eu",
            "stop_reason": "end_turn",
            "why": "done",
            "context": {"k": 1},
        },
    )


# -- Bedrock Converse ----------------------------------------------------------


def _bedrock(events: list[tuple[str, dict[str, Any]]]) -> AssembledResponse:
    return assemble(_feed(BedrockParser(B), events), B)


def _bedrock_end() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("messageStop", {"stopReason": "end_turn", "p": "abcd"}),
        ("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2}, "p": "abcdefgh"}),
    ]


def test_bedrock_padding_is_passed_over_and_a_new_event_field_is_kept() -> None:
    result = _bedrock(
        [
            ("messageStart", {"role": "assistant", "p": "abc"}),
            (
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"text": "Hi"}, "p": "ab", "trace": 7},
            ),
            (
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"text": "!"}, "p": "abcde", "trace": 7},
            ),
            ("contentBlockStop", {"contentBlockIndex": 0, "p": "a"}),
            *_bedrock_end(),
        ]
    )
    kept = {"type": "bedrock.event", "event": "contentBlockDelta", "field": "trace", "value": 7}
    assert result.content == (UnknownBlock(kept), TextBlock("Hi!"))
    assert result.finish is not None and result.finish.payloads == ()  # no padding kept


def test_bedrock_fields_of_a_tool_use_start_and_delta_replay_natively() -> None:
    start = {"toolUse": {"toolUseId": "t1", "name": "f", "kind": "fast"}, "hint": 1}
    result = _bedrock(
        [
            ("messageStart", {"role": "assistant"}),
            ("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
            (
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": 1}', "seq": 0}}},
            ),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            *_bedrock_end(),
        ]
    )
    deltas = [{"toolUse": {"kind": "fast"}}, {"start": {"hint": 1}}, {"toolUse": {"seq": 0}}]
    assert result.blocks == (
        ToolCallBlock(
            "t1", "f", '{"a": 1}', payloads=(ProviderPayload(B, "bedrock.deltas", None, deltas),)
        ),
    )
    wire, dropped = bedrock_wire(result.to_message(), B)
    assert wire["content"] == [
        {"toolUse": {"kind": "fast", "seq": 0, "toolUseId": "t1", "name": "f", "input": {"a": 1}}}
    ]
    assert dropped == [
        Drop("content[0]", "start", UNREPLAYABLE, "a Converse delta with no request form")
    ]


def test_bedrock_every_citation_delta_is_an_attribution_and_replays_in_order() -> None:
    known = {
        "title": "Report",
        "sourceContent": [{"text": "Revenue grew 12%."}],
        "location": {"documentChar": {"documentIndex": 0, "start": 10, "end": 27}},
    }
    future = {
        "title": "Deck",
        "sourceContent": [{"text": "slide"}],
        "location": {"slide": {"n": 3}},
    }
    result = _bedrock(
        [
            ("messageStart", {"role": "assistant"}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Revenue grew 12%."}}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": future}}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": known}}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            *_bedrock_end(),
        ]
    )
    (text,) = result.blocks
    assert isinstance(text, TextBlock) and text.payloads == ()
    assert text.attributions[0] == Attribution(
        Source(title="Deck"), excerpt="slide", replay=ProviderPayload(B, "citation", None, future)
    )
    assert text.attributions[1].replay == ProviderPayload(B, "citation", None, known)
    assert text.attributions[1].source.document is not None
    wire, dropped = bedrock_wire(result.to_message(), B)
    assert wire["content"] == [
        {
            "citationsContent": {
                "content": [{"text": "Revenue grew 12%."}],
                "citations": [future, known],
            }
        }
    ]
    assert dropped == []


def test_bedrock_a_new_reasoning_field_of_any_type_is_kept_not_an_error() -> None:
    result = _bedrock(
        [
            ("messageStart", {"role": "assistant"}),
            (
                "contentBlockDelta",
                {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"text": "hm", "meta": {"k": 1}}},
                },
            ),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            *_bedrock_end(),
        ]
    )
    (reasoning,) = result.blocks
    deltas = [{"reasoningContent": {"meta": {"k": 1}}}]
    assert reasoning.payloads == (ProviderPayload(B, "bedrock.deltas", None, deltas),)


def test_bedrock_a_new_delta_of_a_server_tool_block_joins_the_block_it_replays() -> None:
    use = {"toolUseId": "tu_1", "name": "nova_grounding", "type": "server_tool_use"}
    result = _bedrock(
        [
            ("messageStart", {"role": "assistant"}),
            ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": use}}),
            (
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"q": 1}', "step": "a"}}},
            ),
            (
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "", "step": "b"}}},
            ),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"progress": {"pct": 50}}}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            *_bedrock_end(),
        ]
    )
    (started,) = result.activities
    wire = {"toolUse": {**use, "step": "ab", "progress": {"pct": 50}, "input": {"q": 1}}}
    assert started.payload == ProviderPayload(B, "server_tool_use", None, wire)
    native, dropped = bedrock_wire(result.to_message(), B)
    assert native["content"] == [wire]
    assert dropped == []


def test_bedrock_a_whole_response_keeps_the_fields_beside_its_content() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": "hm", "signature": "c2ln"},
                            "budget": 9,
                        }
                    },
                    {
                        "toolUse": {
                            "toolUseId": "t1",
                            "name": "f",
                            "input": {"a": 1},
                            "kind": "fast",
                        }
                    },
                ],
                "note": "n",
            },
            "trace": {"id": 1},
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 2},
    }
    result = assemble(BEDROCK_SHAPE.parse_response(json.dumps(body).encode(), B), B)
    reasoning, _ = result.blocks
    assert [p.value for p in reasoning.payloads if p.format == "bedrock.deltas"] == [
        [{"reasoningContent": {"budget": 9}}]
    ]
    wire, _ = bedrock_wire(result.to_message(), B)
    assert wire["content"][1] == {
        "toolUse": {"kind": "fast", "toolUseId": "t1", "name": "f", "input": {"a": 1}}
    }
    assert result.finish is not None
    (envelope,) = result.finish.payloads
    assert envelope.value == {"output": {"trace": {"id": 1}, "message": {"note": "n"}}}


# -- OpenAI Responses ----------------------------------------------------------


class _ResponsesDictOnly(ResponsesParser):
    def fast(self, event: str, data: str) -> list[Chunk] | None:
        return None


MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
}


def _responses(events: list[dict[str, Any]], final: dict[str, Any]) -> AssembledResponse:
    head = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-x",
        "status": "in_progress",
        "output": [],
    }
    frames = [
        {"type": "response.created", "response": head},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**MESSAGE, "content": []},
        },
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": ""},
        },
        *events,
        {"type": "response.output_item.done", "output_index": 0, "item": MESSAGE},
        {"type": "response.completed", "response": {**head, **final, "output": [MESSAGE]}},
    ]
    pairs = [(str(f["type"]), f) for f in frames]
    chunks = _feed(ResponsesParser(OPENAI), pairs)
    assert chunks == _feed(_ResponsesDictOnly(OPENAI), pairs)
    return assemble(chunks, OPENAI)


def _text(delta: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "item_id": "msg_1",
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
        "sequence_number": 4,
        "logprobs": [],
        "obfuscation": "xyz",
        **extra,
    }


def test_responses_hot_deltas_with_their_usual_fields_stay_typed() -> None:
    parser = ResponsesParser(OPENAI)
    head = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    parser.message("response.created", json.dumps({"type": "response.created", "response": head}))
    item = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {**MESSAGE, "content": []},
    }
    parser.message(item["type"], json.dumps(item))
    frame = json.dumps(_text("Hi"))
    assert parser.fast("response.output_text.delta", frame) == [
        BlockStart("0.0", "text"),
        TextDelta("0.0", "Hi"),
    ]
    assert parser.fast("response.output_text.delta", frame) == [TextDelta("0.0", "Hi")]
    # A field nobody modelled fails the typed decode until the dict path kept it.
    shard = json.dumps(_text("!", shard=1))
    assert parser.fast("response.output_text.delta", shard) is None
    parser.message("response.output_text.delta", shard)
    assert parser.fast("response.output_text.delta", shard) == [TextDelta("0.0", "!")]


def test_responses_a_new_field_of_the_hot_delta_is_kept_once_and_the_rest_stays_typed() -> None:
    result = _responses(
        [_text("He", shard=2), _text("l", shard=2), _text("lo", shard=3)], {"status": "completed"}
    )
    assert [b.text for b in result.content if isinstance(b, TextBlock)] == ["Hello"]
    kept = [b.raw for b in result.content if isinstance(b, UnknownBlock)]
    event = {
        "type": "openai_responses.event",
        "event": "response.output_text.delta",
        "field": "shard",
    }
    assert kept == [{**event, "value": 2}, {**event, "value": 3}]
    wire, dropped = responses_wire(result.to_message(), OPENAI)
    assert [item["type"] for item in wire] == ["message"]
    assert [d.what for d in dropped] == ["openai_responses.event"] * 2


def test_responses_a_new_field_of_the_response_object_rides_on_the_finish() -> None:
    result = _responses([_text("Hello")], {"status": "completed", "region": "eu", "usage": None})
    assert result.finish is not None
    (envelope,) = result.finish.payloads
    assert envelope == ProviderPayload(
        OPENAI,
        "response",
        None,
        {
            "id": "resp_1",
            "object": "response",
            "model": "gpt-x",
            "status": "completed",
            "region": "eu",
            "usage": None,
        },
    )


# -- Gemini --------------------------------------------------------------------


def test_gemini_a_new_content_field_rides_with_the_candidate() -> None:

    def chunk(text: str, **content: Any) -> dict[str, Any]:
        parts = {"parts": [{"text": text}], "role": "model", **content}
        return {
            "candidates": [{"content": parts, "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
            "modelVersion": "gemini-x",
            "responseId": "r1",
        }

    last = chunk("!", lang="en")
    last["candidates"][0]["finishReason"] = "STOP"
    frames = [("", chunk("Hi")), ("", chunk(" there", lang="fr")), ("", last)]
    result = assemble(_feed(GEMINI_SHAPE.new_parser(ProviderId("google")), frames), "google")
    assert [b.text for b in result.blocks if isinstance(b, TextBlock)] == ["Hi there!"]
    assert result.finish is not None
    candidate = [p.value for p in result.finish.payloads if p.format == "candidate"]
    assert candidate == [{"content": {"lang": "en"}, "index": 0, "finishReason": "STOP"}]


def test_gemini_a_text_part_whose_new_field_differs_is_a_part_of_its_own() -> None:

    def chunk(*parts: dict[str, Any], finish: bool = False) -> tuple[str, dict[str, Any]]:
        candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = "STOP"
        return "", {"candidates": [candidate], "modelVersion": "g", "responseId": "r1"}

    google = ProviderId("google")
    frames = [
        chunk({"text": "a", "lang": "en"}),
        chunk({"text": "b", "lang": "en"}),  # the same value: more of the same part
        chunk({"text": "c"}),
        chunk({"text": "d", "lang": "fr"}, finish=True),
    ]
    result = assemble(_feed(GEMINI_SHAPE.new_parser(google), frames), google)
    fields = [
        (b.text, [p.value for p in b.payloads]) for b in result.blocks if isinstance(b, TextBlock)
    ]
    assert fields == [("abc", [{"lang": "en"}]), ("d", [{"lang": "fr"}])]

    body = gemini_request(
        ModelRequest("g", (Message.user("q"), result.to_message())), provider=google
    ).body
    assert body["contents"][1]["parts"] == [
        {"text": "abc", "lang": "en"},
        {"text": "d", "lang": "fr"},
    ]


# -- Ollama native ---------------------------------------------------------------


def test_ollama_a_new_field_of_a_streamed_line_is_kept_where_it_arrived() -> None:

    def line(text: str, **top: Any) -> tuple[str, dict[str, Any]]:
        message = {"role": "assistant", "content": text}
        return "", {"model": "m", "created_at": "t", "message": message, "done": False, **top}

    done = {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": ""}}
    frames = [line("Hi", node="a"), line(" you", node="a"), line("!", node="b")]
    frames.append(("", {**done, "done": True, "done_reason": "stop", "node": "b"}))
    provider = ProviderId("ollama-native")
    result = assemble(_feed(OLLAMA_SHAPE.new_parser(provider), frames), provider)
    event = {"type": "ollama.event", "event": "line", "field": "node"}
    assert result.content == (
        UnknownBlock({**event, "value": "a"}),
        UnknownBlock({**event, "value": "b"}),
        TextBlock("Hi you!"),
    )
    assert result.finish is not None
    assert result.finish.payloads[0].value["node"] == "b"  # the last line's own, as ever
    wire, dropped = ollama_wire(result.to_message(), provider)
    assert wire == {"role": "assistant", "content": "Hi you!"}
    assert [d.what for d in dropped] == ["ollama.event", "ollama.event"]


def test_responses_a_new_field_of_a_progress_event_is_kept_its_known_ones_passed_over() -> None:
    done = {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Hello", "logprobs": [], "sequence_number": 9}  # fmt: skip
    result = _responses([_text("Hello"), {**done, "safety": {"ok": True}}], {"status": "completed"})
    kept = [b.raw for b in result.content if isinstance(b, UnknownBlock)]
    event = {"type": "openai_responses.event", "event": "response.output_text.done"}
    assert kept == [{**event, "field": "safety", "value": {"ok": True}}]
    plain = _responses([_text("Hello"), done], {"status": "completed"})
    assert not [b for b in plain.content if isinstance(b, UnknownBlock)]
