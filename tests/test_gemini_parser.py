"""Gemini parser rules, one test each, on hand-written chunks with exact values."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.errors import MalformedStreamError, RateLimitError
from elelem.shapes.gemini import SHAPE, assistant_wire, finish_reason
from elelem.stream import (
    AssembledResponse,
    Assembler,
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.vocabulary import (
    HostedActivity,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
)

G = ProviderId("google")


def _chunk(parts: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    for key in ("finishReason", "groundingMetadata", "urlContextMetadata", "safetyRatings"):
        if key in extra:
            candidate[key] = extra.pop(key)
    out: dict[str, Any] = {"candidates": [candidate]} if candidate else {}
    out.update({"modelVersion": "gemini-3-pro-preview", "responseId": "r1"})
    out.update(extra)
    return out


def _stream(*chunks: dict[str, Any]) -> list[Chunk]:
    parser = SHAPE.new_parser(G)
    out = list(parser.open(200, {}))
    for c in chunks:
        out += parser.message("", json.dumps(c))
    return out + list(parser.eof())


def _result(*chunks: dict[str, Any]) -> AssembledResponse:
    assembler = Assembler(G)
    assembler.feed_all(_stream(*chunks))
    return assembler.result()


def _sig(fmt: str, value: Any) -> ProviderPayload:
    return ProviderPayload(G, fmt, None, value)


def test_text_in_many_chunks_is_one_block_with_usage_and_start() -> None:
    usage = {"promptTokenCount": 10, "cachedContentTokenCount": 4, "candidatesTokenCount": 3}
    chunks = _stream(
        _chunk([{"text": "Hel"}]),
        _chunk(
            [{"text": "lo"}], finishReason="STOP", usageMetadata={**usage, "thoughtsTokenCount": 7}
        ),
    )
    raw_usage = {**usage, "thoughtsTokenCount": 7}
    assert chunks == [
        ResponseStart("r1", "gemini-3-pro-preview", G),
        BlockStart(0, "text"),
        TextDelta(0, "Hel"),
        TextDelta(0, "lo"),
        UsageUpdate(Usage(input=6, output=3, cache_read=4, reasoning=7, raw=raw_usage)),
        BlockEnd(0),
        Finish(
            "stop",
            raw="STOP",
            payloads=(
                _sig("response", {"modelVersion": "gemini-3-pro-preview", "responseId": "r1"}),
                _sig("candidate", {"finishReason": "STOP"}),
            ),
        ),
    ]


def test_usage_is_cumulative_and_replaced_and_an_unchanged_report_is_not_repeated() -> None:
    u1 = {"promptTokenCount": 5, "candidatesTokenCount": 1, "toolUsePromptTokenCount": 9}
    u2 = {"promptTokenCount": 5, "candidatesTokenCount": 4}
    chunks = _stream(
        _chunk([{"text": "a"}], usageMetadata=u1),
        _chunk([{"text": "b"}], usageMetadata=u1),
        _chunk([{"text": "c"}], finishReason="STOP", usageMetadata=u2),
    )
    updates = [c.usage for c in chunks if isinstance(c, UsageUpdate)]
    # tool-use prompt tokens are input (5 + 9)
    assert updates == [Usage(input=14, output=1, raw=u1), Usage(input=5, output=4, raw=u2)]


def test_thought_parts_are_one_reasoning_block_with_their_signature() -> None:
    result = _result(
        _chunk([{"text": "Think ", "thought": True}]),
        _chunk([{"text": "more", "thought": True, "thoughtSignature": "c2ln"}]),
        _chunk([{"text": "Answer"}], finishReason="STOP"),
    )
    assert result.blocks == (
        ReasoningBlock("Think more", payloads=(_sig("thought_signature", "c2ln"),)),
        TextBlock("Answer"),
    )
    wire, dropped = assistant_wire(result.to_message(), G)
    assert dropped == ()
    assert wire == {
        "role": "model",
        "parts": [
            {"text": "Think more", "thought": True, "thoughtSignature": "c2ln"},
            {"text": "Answer"},
        ],
    }


def test_a_signature_on_its_own_empty_part_is_kept_and_replayed_on_its_own_part() -> None:
    result = _result(
        _chunk([{"text": "Three r's."}]),
        _chunk([{"text": "", "thoughtSignature": "U0lH"}], finishReason="STOP"),
    )
    (block,) = result.blocks
    assert block == TextBlock(
        "Three r's.",
        payloads=(_sig("thought_signature", "U0lH"), _sig("signature_layout", "own-part")),
    )
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"text": "Three r's."}, {"text": "", "thoughtSignature": "U0lH"}]


def test_a_signature_on_the_first_text_part_stays_on_the_merged_part() -> None:
    result = _result(
        _chunk([{"text": "One", "thoughtSignature": "Rmlyc3Q="}]),
        _chunk([{"text": " two"}], finishReason="STOP"),
    )
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"text": "One two", "thoughtSignature": "Rmlyc3Q="}]


def test_text_after_a_trailing_signature_part_starts_a_new_block() -> None:
    result = _result(
        _chunk([{"text": "A"}, {"text": "", "thoughtSignature": "QQ=="}, {"text": "B"}]),
        _chunk([], finishReason="STOP"),
    )
    assert [b.text for b in result.blocks if isinstance(b, TextBlock)] == ["A", "B"]


def test_a_second_signature_starts_a_new_block() -> None:
    result = _result(
        _chunk(
            [{"text": "A", "thoughtSignature": "MQ=="}, {"text": "B", "thoughtSignature": "Mg=="}]
        ),
        _chunk([], finishReason="STOP"),
    )
    assert result.blocks == (
        TextBlock("A", payloads=(_sig("thought_signature", "MQ=="),)),
        TextBlock("B", payloads=(_sig("thought_signature", "Mg=="),)),
    )


def test_function_call_with_id_args_and_signature_finishes_as_tool_calls() -> None:
    call = {"id": "call-7", "name": "weather", "args": {"city": "Zürich"}}
    result = _result(
        _chunk([{"functionCall": call, "thoughtSignature": "Q0FMTA=="}]),
        _chunk([{"text": ""}], finishReason="STOP"),
    )
    assert result.finish is not None and result.finish.reason == "tool-calls"
    (block,) = result.blocks
    assert block == ToolCallBlock(
        "call-7", "weather", '{"city":"Zürich"}', payloads=(_sig("thought_signature", "Q0FMTA=="),)
    )
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"functionCall": call, "thoughtSignature": "Q0FMTA=="}]


def test_a_call_without_id_or_args_gets_a_synthesized_id_and_replays_without_either() -> None:
    result = _result(_chunk([{"functionCall": {"name": "read_theme"}}], finishReason="STOP"))
    (block,) = result.blocks
    assert block == ToolCallBlock(
        "r1:call:1", "read_theme", "", payloads=(_sig("synthesized_id", "r1:call:1"),)
    )
    assert block.input == {}
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"functionCall": {"name": "read_theme"}}]


def test_vertex_partial_args_build_nested_arguments() -> None:
    def piece(path: str, more: bool = True, **value: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {"jsonPath": path, **value}
        if more:
            entry["willContinue"] = True
        return {"functionCall": {"partialArgs": [entry], "willContinue": True}}

    result = _result(
        _chunk(
            [{"functionCall": {"name": "cook", "willContinue": True}, "thoughtSignature": "Vg=="}]
        ),
        _chunk([piece("$.recipe.items[0].name", stringValue="Lasa")]),
        _chunk([piece("$.recipe.items[0].name", stringValue="gna")]),
        _chunk([piece("$.recipe.items[0].name", more=False, stringValue="")]),
        _chunk([{"functionCall": {"willContinue": True}}]),
        _chunk([piece("$.recipe.items[1]", more=False, numberValue=2)]),
        _chunk([piece("$.recipe['hot dish']", more=False, boolValue=True)]),
        _chunk([piece("$.note", more=False, nullValue="NULL_VALUE")]),
        _chunk([{"functionCall": {}}], finishReason="STOP"),
    )
    (block,) = result.blocks
    assert isinstance(block, ToolCallBlock) and block.name == "cook"
    assert block.input == {
        "recipe": {"items": [{"name": "Lasagna"}, 2], "hot dish": True},
        "note": None,
    }
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [
        {"functionCall": {"name": "cook", "args": block.input}, "thoughtSignature": "Vg=="}
    ]


def test_a_bad_partial_args_path_is_a_malformed_stream() -> None:
    bad = {"functionCall": {"partialArgs": [{"jsonPath": "recipe"}], "willContinue": True}}
    with pytest.raises(MalformedStreamError, match="does not start at"):
        _stream(_chunk([{"functionCall": {"name": "f", "willContinue": True}}]), _chunk([bad]))


def test_code_execution_parts_are_one_hosted_activity() -> None:
    code = {
        "executableCode": {"language": "PYTHON", "code": "print(1)"},
        "thoughtSignature": "Qw==",
    }
    ok = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}
    run2 = {"executableCode": {"language": "PYTHON", "code": "1/0", "id": "x2"}}
    bad = {
        "codeExecutionResult": {
            "outcome": "OUTCOME_FAILED",
            "output": "ZeroDivisionError",
            "id": "x2",
        }
    }
    result = _result(
        _chunk([{"text": "Let me run it."}, code]),
        _chunk([ok, run2]),
        _chunk([bad, {"text": "Done."}], finishReason="STOP"),
    )
    inp1 = {"language": "PYTHON", "code": "print(1)"}
    inp2 = {"language": "PYTHON", "code": "1/0"}
    first = HostedActivity("r1:code:1", "code_execution", "started", inp1, "", _sig("part", code))
    second = HostedActivity("x2", "code_execution", "started", inp2, "", _sig("part", run2))
    assert result.content == (
        TextBlock("Let me run it."),
        first,
        first.transition("completed", summary="ok", payload=_sig("part", ok)),
        second,
        second.transition("failed", summary="ZeroDivisionError", payload=_sig("part", bad)),
        TextBlock("Done."),
    )
    assert result.finish is not None and result.finish.reason == "stop"
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"text": "Let me run it."}, code, ok, run2, bad, {"text": "Done."}]


# "Café ☕ est ouvert. Über gut!" : "é" is 2 bytes, "☕" 3, "Ü" 2.
NON_ASCII = "Café ☕ est ouvert. Über gut!"


def _seg(text: str, piece: str) -> dict[str, Any]:
    start = text.encode().index(piece.encode())
    return {"startIndex": start, "endIndex": start + len(piece.encode()), "text": piece}


def test_grounding_supports_become_code_point_ranges_over_non_ascii_text() -> None:
    first, second = "Café ☕ est ouvert.", "Über gut!"
    assert _seg(NON_ASCII, second) == {"startIndex": 22, "endIndex": 32, "text": second}
    bogus = {"startIndex": 0, "endIndex": 5, "text": "Cafe "}  # not what bytes 0..5 hold
    metadata = {
        "webSearchQueries": ["café paris"],
        "groundingChunks": [
            {"web": {"uri": "https://a.example/1", "title": "a.example"}},
            {"web": {"uri": "https://b.example/2", "title": "b.example"}},
        ],
        "groundingSupports": [
            {"segment": {**_seg(NON_ASCII, first), "startIndex": 0}, "groundingChunkIndices": [0]},
            {"segment": _seg(NON_ASCII, second), "groundingChunkIndices": [0, 1]},
            {"segment": bogus, "groundingChunkIndices": [1]},
        ],
    }
    result = _result(
        _chunk([{"text": "Café ☕ est "}], groundingMetadata={}),
        _chunk([{"text": "ouvert. Über gut!"}], finishReason="STOP", groundingMetadata=metadata),
    )
    (block, started, completed) = result.content
    assert isinstance(block, TextBlock) and block.text == NON_ASCII
    spans = [(a.range, a.source) for a in block.attributions]
    a_src = Source("https://a.example/1", "a.example")
    b_src = Source("https://b.example/2", "b.example")
    assert spans == [((0, 18), a_src), ((19, 28), a_src), ((19, 28), b_src), (None, b_src)]
    assert NON_ASCII[19:28] == second and NON_ASCII[0:18] == first
    support = metadata["groundingSupports"][1]
    assert block.attributions[2].replay == _sig(
        "grounding_support",
        {"support": support, "chunk_index": 1, "chunk": metadata["groundingChunks"][1]},
    )
    assert (started.state, started.name, started.input) == (  # type: ignore[union-attr]
        "started",
        "web_search",
        {"queries": ["café paris"]},
    )
    assert isinstance(completed, HostedActivity)
    assert (completed.state, completed.summary) == ("completed", "2 sources")
    assert completed.payload == _sig("grounding_metadata", metadata)
    # Grounding is response metadata: native replay sends the text only.
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"text": NON_ASCII}]


def test_a_segment_that_cuts_a_character_has_its_range_dropped() -> None:
    metadata = {
        "groundingChunks": [{"retrievedContext": {"text": "src", "title": "doc.txt"}}],
        "groundingSupports": [
            {"segment": {"startIndex": 3, "endIndex": 4}, "groundingChunkIndices": [0]}
        ],
    }
    result = _result(_chunk([{"text": "Café"}], finishReason="STOP", groundingMetadata=metadata))
    (block,) = result.blocks
    assert isinstance(block, TextBlock)
    ((attribution),) = block.attributions
    assert (attribution.range, attribution.source, attribution.excerpt) == (
        None,
        Source(None, "doc.txt"),
        "src",
    )
    assert result.activities == ()  # no search queries: no search activity


def test_url_context_metadata_is_a_web_fetch_activity() -> None:
    meta = {
        "urlMetadata": [
            {
                "retrievedUrl": "https://ex.com/a",
                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
            },
            {
                "retrievedUrl": "https://bad.example/",
                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_ERROR",
            },
        ]
    }
    result = _result(_chunk([{"text": "x"}], finishReason="STOP", urlContextMetadata=meta))
    started, done = result.activities
    assert (started.id, started.name, started.input) == (
        "r1:fetch",
        "web_fetch",
        {"urls": ["https://ex.com/a", "https://bad.example/"]},
    )
    assert (done.state, done.summary, done.payload) == (
        "completed",
        "fetched ex.com",
        _sig("url_context_metadata", meta),
    )


@pytest.mark.parametrize(
    ("raw", "called", "reason"),
    [
        ("STOP", False, "stop"),
        ("STOP", True, "tool-calls"),
        ("MAX_TOKENS", False, "max-tokens"),
        ("SAFETY", False, "content-filter"),
        ("RECITATION", False, "content-filter"),
        ("BLOCKLIST", False, "content-filter"),
        ("PROHIBITED_CONTENT", False, "content-filter"),
        ("SPII", False, "content-filter"),
        ("MALFORMED_FUNCTION_CALL", True, "MALFORMED_FUNCTION_CALL"),
    ],
)
def test_finish_reasons(raw: str, called: bool, reason: str) -> None:
    assert finish_reason(raw, called) == reason


def test_a_filtered_empty_candidate_keeps_its_safety_ratings() -> None:
    ratings = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW", "blocked": True}]
    body = {"candidates": [{"content": {}, "finishReason": "SAFETY", "safetyRatings": ratings}]}
    chunks = SHAPE.parse_response(json.dumps(body).encode(), G)
    assert chunks[-1] == Finish(
        "content-filter",
        raw="SAFETY",
        payloads=(_sig("candidate", {"finishReason": "SAFETY", "safetyRatings": ratings}),),
    )


def test_a_blocked_prompt_is_refused() -> None:
    feedback = {"blockReason": "PROHIBITED_CONTENT"}
    chunks = SHAPE.parse_response(json.dumps({"promptFeedback": feedback}).encode(), G)
    assert chunks == [
        ResponseStart(None, None, G),
        Finish(
            "refused",
            raw="PROHIBITED_CONTENT",
            payloads=(_sig("response", {"promptFeedback": feedback}),),
        ),
    ]


def test_an_unknown_part_is_an_unknown_block_replayed_verbatim() -> None:
    # Inline data that is no image and no audio (those become their blocks).
    part = {"inlineData": {"mimeType": "video/mp4", "data": "AAAA"}}
    result = _result(_chunk([{"text": "Here:"}, part, {"text": "done"}], finishReason="STOP"))
    assert result.blocks == (
        TextBlock("Here:"),
        UnknownBlock({"type": "inlineData", "part": part}, 1),
        TextBlock("done"),
    )
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [{"text": "Here:"}, part, {"text": "done"}]


def test_unmodelled_part_fields_are_kept_for_replay() -> None:
    part = {"text": "hi", "partMetadata": {"k": 1}}
    result = _result(_chunk([part], finishReason="STOP"))
    assert result.blocks == (
        TextBlock("hi", payloads=(_sig("part_fields", {"partMetadata": {"k": 1}}),)),
    )
    wire, _ = assistant_wire(result.to_message(), G)
    assert wire["parts"] == [part]


def test_other_candidates_are_kept_in_the_finish() -> None:
    other = {"index": 1, "content": {"parts": [{"text": "alt"}]}, "finishReason": "STOP"}
    body = _chunk([{"text": "main"}], finishReason="STOP")
    body["candidates"].append(other)
    chunks = SHAPE.parse_response(json.dumps(body).encode(), G)
    finish = chunks[-1]
    assert isinstance(finish, Finish)
    assert finish.payloads[-1] == _sig("other_candidates", [other])


def test_the_non_streaming_body_gives_the_stream_chunks() -> None:
    body = _chunk([{"text": "Hi", "thoughtSignature": "eA=="}], finishReason="STOP")
    assert SHAPE.parse_response(json.dumps(body).encode(), G) == _stream(body)
    array = json.dumps([_chunk([{"text": "H"}]), _chunk([{"text": "i"}], finishReason="STOP")])
    texts = [c.text for c in SHAPE.parse_response(array.encode(), G) if isinstance(c, TextDelta)]
    assert texts == ["H", "i"]


def test_an_error_object_in_the_stream_is_a_typed_error() -> None:
    error = {
        "error": {
            "code": 429,
            "message": "Quota exceeded",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}],
        }
    }
    parser = SHAPE.new_parser(G)
    parser.message("", json.dumps(_chunk([{"text": "a"}])))
    with pytest.raises(RateLimitError) as caught:
        parser.message("", json.dumps(error))
    assert (caught.value.retry_after, caught.value.status, caught.value.provider_type) == (
        12.0,
        429,
        "RESOURCE_EXHAUSTED",
    )


def test_a_stream_without_finish_reason_leaves_the_stream_to_the_driver() -> None:
    # No finish at EOF: the driver raises its retryable incomplete-stream error.
    parser = SHAPE.new_parser(G)
    parser.message("", json.dumps(_chunk([{"text": "a"}])))
    assert parser.eof() == []
    assert SHAPE.new_parser(G).eof() == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not JSON"),
        ("[1]", "not a JSON object"),
        ('{"candidates": {}}', "candidates is not a list"),
        ('{"candidates": [{"content": {"parts": {}}}]}', "parts is not a list"),
        ('{"candidates": [{"content": {"parts": [{"text": 3}]}}]}', "text is not a string"),
        (
            '{"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}',
            "without a name",
        ),
    ],
)
def test_malformed_chunks_are_named(data: str, message: str) -> None:
    with pytest.raises(MalformedStreamError, match=message):
        SHAPE.new_parser(G).message("", data)


def test_partial_keeps_open_text_when_the_stream_is_cut() -> None:
    assembler = Assembler(G)
    parser = SHAPE.new_parser(G)
    assembler.feed_all(list(parser.message("", json.dumps(_chunk([{"text": "Half"}])))))
    assert assembler.partial().blocks == (TextBlock("Half", complete=False),)


def test_reasoning_delta_chunks_for_thoughts() -> None:
    chunks = _stream(_chunk([{"text": "t", "thought": True}, {"text": "a"}], finishReason="STOP"))
    assert chunks[1:6] == [
        BlockStart(0, "reasoning"),
        ReasoningDelta(0, "t"),
        BlockEnd(0),
        BlockStart(1, "text"),
        TextDelta(1, "a"),
    ]
    assert not any(isinstance(c, (ToolCallDelta, Payload)) for c in chunks)


def test_supports_over_an_earlier_block_stay_in_the_metadata_only() -> None:
    # The first text block ended (a code part interrupted it) before the
    # grounding arrived: its support cannot be attached, and is kept raw.
    metadata = {
        "webSearchQueries": ["q"],
        "groundingChunks": [{"web": {"uri": "https://x.example/", "title": "x"}}],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 3, "text": "One"},
                "groundingChunkIndices": [0],
            },
            {
                "segment": {"startIndex": 3, "endIndex": 6, "text": "Two"},
                "groundingChunkIndices": [0],
            },
        ],
    }
    code = {"executableCode": {"language": "PYTHON", "code": "1"}}
    result = _result(
        _chunk(
            [{"text": "One"}, code, {"text": "Two"}],
            finishReason="STOP",
            groundingMetadata=metadata,
        )
    )
    first, second = (b for b in result.blocks if isinstance(b, TextBlock))
    assert first.attributions == ()
    assert [a.range for a in second.attributions] == [(0, 3)]
    finish = result.finish
    assert finish is not None
    assert finish.payloads[-1].value["groundingMetadata"] == metadata  # type: ignore[index]


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(NON_ASCII)), max_size=6))
def test_any_split_of_the_text_gives_the_same_block_and_citations(cuts: list[int]) -> None:
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://a.example/", "title": "a"}}],
        "groundingSupports": [
            {"segment": _seg(NON_ASCII, "Über gut!"), "groundingChunkIndices": [0]},
            {"segment": _seg(NON_ASCII, "☕ est"), "groundingChunkIndices": [0]},
        ],
    }
    bounds = [0, *sorted(cuts), len(NON_ASCII)]
    pieces = [NON_ASCII[a:b] for a, b in pairwise(bounds) if b > a]
    chunks = [_chunk([{"text": p}]) for p in pieces[:-1]]
    chunks.append(_chunk([{"text": pieces[-1]}], finishReason="STOP", groundingMetadata=metadata))
    (block,) = _result(*chunks).blocks
    assert isinstance(block, TextBlock) and block.text == NON_ASCII
    assert [a.range for a in block.attributions] == [(19, 28), (5, 10)]


def test_a_misaligned_segment_is_realigned_by_its_text_and_says_so() -> None:
    # ai.google.dev/gemini-api/docs/google-search: a support's segment holds
    # byte offsets into the response text and the text itself; offsets seen
    # a few bytes off still name their text, which is found where it is.
    piece = "Über gut!"
    right = _seg(NON_ASCII, piece)
    off = {**right, "startIndex": right["startIndex"] - 3, "endIndex": right["endIndex"] - 3}
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://a.example/1", "title": "a.example"}}],
        "groundingSupports": [{"segment": off, "groundingChunkIndices": [0]}],
    }
    result = _result(_chunk([{"text": NON_ASCII}], finishReason="STOP", groundingMetadata=metadata))
    (block, *_) = result.content
    assert isinstance(block, TextBlock)
    ((attribution),) = block.attributions
    assert attribution.range == (19, 28) and NON_ASCII[19:28] == piece
    assert (
        attribution.replay is not None and attribution.replay.value["realigned"] == "segment.text"
    )


def test_a_count_of_thousands_of_digits_is_no_count_not_a_value_error() -> None:
    # proto3 JSON writes counts as strings; int() refuses one past 4,300 digits.
    huge = "9" * 5000
    usage = {"promptTokenCount": huge, "candidatesTokenCount": "3"}
    result = _result(_chunk([{"text": "Hi"}], finishReason="STOP", usageMetadata=usage))
    assert result.text == "Hi"
    assert result.usage is not None
    assert (result.usage.input, result.usage.output, result.usage.raw) == (0, 3, usage)
