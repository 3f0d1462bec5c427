"""The OpenAI Responses shape, rule by rule, on small hand-written streams."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.codec import dumps
from elelem.errors import (
    ContextWindowError,
    MalformedStreamError,
    ProviderStreamError,
    RateLimitError,
    ServerError,
)
from elelem.shapes.openai_responses import SHAPE, native_items
from elelem.shapes.openai_responses.encoder import assistant_wire
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    Attribution,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
)
from elelem.vocabulary.drop import UNREPLAYABLE, Drop

OPENAI = ProviderId("openai")


def _response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5-2025-08-07",
        "status": status,
        "output": [],
        **{"tools": [{"type": "web_search_preview"}], **extra},
    }


USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 30},
    "output_tokens": 50,
    "output_tokens_details": {"reasoning_tokens": 20},
    "total_tokens": 150,
}


def _stream(events: list[dict[str, Any]], provider: ProviderId = OPENAI) -> list[Chunk]:
    parser = SHAPE.new_parser(provider)
    chunks = list(parser.open(200, {}))
    for event in events:
        chunks += parser.message(event["type"], json.dumps(event))
    chunks += parser.eof()
    return chunks


def _assemble(chunks: list[Chunk]) -> AssembledResponse:
    assembler = Assembler(OPENAI)
    assembler.feed_all(chunks)
    return assembler.result()


def _run(events: list[dict[str, Any]], provider: ProviderId = OPENAI) -> AssembledResponse:
    return _assemble(_stream(events, provider))


def _created() -> dict[str, Any]:
    return {"type": "response.created", "response": _response()}


def _completed(output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.completed",
        "response": _response("completed", output=output, usage=USAGE, **extra),
    }


def _added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def _done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


TEXT = "Rain today ([example.com](https://example.com/w))."
CITE = {
    "type": "url_citation",
    "start_index": 11,
    "end_index": 49,
    "url": "https://example.com/w",
    "title": "Weather",
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "annotations": [CITE], "logprobs": [], "text": TEXT}],
}


def _text_events() -> list[dict[str, Any]]:
    base = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        _created(),
        {"type": "response.in_progress", "response": _response()},
        _added(0, {**MESSAGE, "status": "in_progress", "content": []}),
        {"type": "response.content_part.added", **base, "part": {"type": "output_text"}},
        {"type": "response.output_text.delta", **base, "delta": TEXT[:30]},
        {"type": "response.output_text.delta", **base, "delta": TEXT[30:]},
        {"type": "response.output_text.annotation.added", **base, "annotation": CITE},
        {"type": "response.output_text.done", **base, "text": TEXT},
        {"type": "response.content_part.done", **base, "part": MESSAGE["content"][0]},
        _done(0, MESSAGE),
        _completed([MESSAGE]),
    ]


# -- text and citations ---------------------------------------------------------------


def test_text_stream_with_url_citation() -> None:
    result = _run(_text_events())
    assert (result.response_id, result.model, result.provider) == (
        "resp_1",
        "gpt-5-2025-08-07",
        "openai",
    )
    (block,) = result.blocks
    assert isinstance(block, TextBlock)
    assert block.text == TEXT
    (a,) = block.attributions
    assert a.source == Source(url="https://example.com/w", title="Weather")
    assert a.range == (11, 49)
    assert block.text[11:49] == "([example.com](https://example.com/w))"
    assert a.replay == ProviderPayload(OPENAI, "annotation", None, CITE)
    (payload,) = block.payloads
    assert payload.format == "message-part"
    # The part's text is the block's: kept once, put back when it replays.
    part = {"type": "output_text", "annotations": [CITE], "logprobs": []}
    assert payload.value == {
        "item": {**MESSAGE, "content": []},
        "part": part,
        "output_index": 0,
    }
    assert result.finish is not None and result.finish.reason == "stop"
    assert result.finish.raw == "completed"


def test_a_part_kept_without_its_text_replays_whole() -> None:
    result = _run(_text_events())
    message = Message("assistant", tuple(result.blocks), provider=OPENAI)
    items, dropped = assistant_wire(message, OPENAI)
    # What the provider sent, the part's text from the block: byte for byte.
    assert (items, dropped) == ([MESSAGE], [])
    stored = dumps(message)
    assert stored.count(TEXT.encode()) == 1  # the text is kept once


def test_usage_is_split_into_disjoint_counters() -> None:
    result = _run(_text_events())
    assert result.usage == Usage(
        input=70, output=30, cache_read=30, cache_write=0, reasoning=20, hosted={}, raw=USAGE
    )


def test_xai_server_side_tool_counters_become_hosted_usage() -> None:
    usage = {
        **USAGE,
        "server_side_tool_usage_details": {"web_search_calls": 2, "x_search_calls": 1},
    }
    events = [_created(), _completed([])]
    events[-1]["response"]["usage"] = usage
    result = _run(events, ProviderId("xai"))
    assert result.usage is not None
    assert result.usage.hosted == {"web_search": 2, "x_search": 1}


def _cited(annotation: dict[str, Any], text: str) -> Attribution:
    message = {
        **MESSAGE,
        "content": [{"type": "output_text", "annotations": [annotation], "text": text}],
    }
    result = _assemble(
        SHAPE.parse_response(json.dumps(_response("completed", output=[message])).encode(), OPENAI)
    )
    (block,) = result.blocks
    assert isinstance(block, TextBlock)
    (a,) = block.attributions
    return a


def test_a_range_that_does_not_slice_to_its_url_is_dropped() -> None:
    wrong = {**CITE, "start_index": 0, "end_index": 10}
    a = _cited(wrong, TEXT)
    assert a.range is None
    assert a.source.url == "https://example.com/w"
    assert a.replay is not None and a.replay.value == wrong


def test_a_range_past_the_text_is_dropped() -> None:
    assert _cited({**CITE, "start_index": 11, "end_index": 400}, TEXT).range is None


def test_ranges_are_code_points_and_utf16_offsets_are_converted() -> None:
    text = "😀 see ([ex](https://ex.org))"
    # Code points: the marker starts at 6.
    assert _cited(
        {**CITE, "url": "https://ex.org", "start_index": 6, "end_index": 28}, text
    ).range == (6, 28)
    # The same span in UTF-16 units (the emoji is two units) converts to code points.
    assert _cited(
        {**CITE, "url": "https://ex.org", "start_index": 7, "end_index": 29}, text
    ).range == (6, 28)


def test_file_and_container_citations() -> None:
    text = "See sandbox:/mnt/data/out.csv now"
    container = {
        "type": "container_file_citation",
        "container_id": "cntr_1",
        "file_id": "cfile_1",
        "filename": "out.csv",
        "start_index": 4,
        "end_index": 29,
    }
    a = _cited(container, text)
    assert (a.source, a.range) == (Source(url=None, title="out.csv"), (4, 29))
    f = _cited(
        {"type": "file_citation", "file_id": "file-1", "filename": "ai.pdf", "index": 3}, text
    )
    assert (f.source, f.range) == (Source(url=None, title="ai.pdf"), None)


def test_text_deltas_short_of_the_final_text_are_completed() -> None:
    events = _text_events()
    del events[5]  # the second delta never arrived
    result = _run(events)
    assert result.text == TEXT


def test_refusal_part_is_text_and_finishes_refused() -> None:
    item = {
        "id": "msg_r",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    base = {"item_id": "msg_r", "output_index": 0, "content_index": 0}
    result = _run(
        [
            _created(),
            _added(0, {**item, "content": []}),
            {"type": "response.content_part.added", **base, "part": {"type": "refusal"}},
            {"type": "response.refusal.delta", **base, "delta": "I can't"},
            _done(0, item),
            _completed([item]),
        ]
    )
    assert result.text == "I can't help with that."
    assert result.finish is not None and result.finish.reason == "refused"


# -- reasoning --------------------------------------------------------------------------

REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [
        {"type": "summary_text", "text": "**Plan**\n\nLook it up."},
        {"type": "summary_text", "text": "Then answer."},
    ],
    "encrypted_content": "gAAAA-opaque",
}


def test_reasoning_summary_parts_and_encrypted_item() -> None:
    base = {"item_id": "rs_1", "output_index": 0}
    result = _run(
        [
            _created(),
            _added(0, {"id": "rs_1", "type": "reasoning", "summary": []}),
            {"type": "response.reasoning_summary_part.added", **base, "summary_index": 0},
            {
                "type": "response.reasoning_summary_text.delta",
                **base,
                "summary_index": 0,
                "delta": "**Plan**\n\n",
            },
            {
                "type": "response.reasoning_summary_text.delta",
                **base,
                "summary_index": 0,
                "delta": "Look it up.",
            },
            {"type": "response.reasoning_summary_part.added", **base, "summary_index": 1},
            {
                "type": "response.reasoning_summary_text.delta",
                **base,
                "summary_index": 1,
                "delta": "Then answer.",
            },
            _done(0, REASONING),
            _completed([REASONING]),
        ]
    )
    (block,) = result.blocks
    assert isinstance(block, ReasoningBlock)
    assert block.text == "**Plan**\n\nLook it up.\n\nThen answer."
    assert block.payloads == (ProviderPayload(OPENAI, "item", None, REASONING),)
    assert native_items(result.to_message(), OPENAI) == [REASONING]


def test_reasoning_without_encrypted_content_replays_only_when_stored() -> None:
    bare = {"id": "rs_2", "type": "reasoning", "summary": []}
    body = json.dumps(_response("completed", output=[bare])).encode()
    message = _assemble(SHAPE.parse_response(body, OPENAI)).to_message()
    assert native_items(message, OPENAI) == []
    assert native_items(message, OPENAI, stored=True) == [bare]


# -- client tool calls --------------------------------------------------------------------

CALL = {
    "id": "fc_1",
    "type": "function_call",
    "status": "completed",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
}


def _call_events(deltas: list[str], final: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"item_id": "fc_1", "output_index": 0}
    return [
        _created(),
        _added(0, {**CALL, "status": "in_progress", "arguments": ""}),
        *({"type": "response.function_call_arguments.delta", **base, "delta": d} for d in deltas),
        {"type": "response.function_call_arguments.done", **base, "arguments": final["arguments"]},
        _done(0, final),
        _completed([final]),
    ]


def test_function_call_streams_arguments_and_finishes_tool_calls() -> None:
    result = _run(_call_events(['{"city":', '"Paris"}'], CALL))
    (block,) = result.blocks
    assert block == ToolCallBlock(
        id="call_1",  # type: ignore[arg-type]
        name="get_weather",
        arguments='{"city":"Paris"}',
        payloads=(ProviderPayload(OPENAI, "item", None, CALL),),
    )
    assert result.finish is not None and result.finish.reason == "tool-calls"
    assert native_items(result.to_message(), OPENAI) == [CALL]


def test_arguments_contradicting_the_final_item_are_an_error() -> None:
    with pytest.raises(MalformedStreamError, match="arguments of 'fc_1' differ"):
        _run(_call_events(['{"town":'], CALL))


def test_custom_tool_input_becomes_a_json_string_argument() -> None:
    item = {
        "type": "custom_tool_call",
        "id": "ct_1",
        "call_id": "call_c",
        "name": "sql",
        "input": "",
    }
    final = {**item, "input": 'SELECT "a"\nFROM t', "status": "completed"}
    base = {"item_id": "ct_1", "output_index": 0}
    # OpenAI echoes the custom tool the request declared in the response's tools.
    tools = [{"type": "custom", "name": "sql"}]
    result = _run(
        [
            {"type": "response.created", "response": _response(tools=tools)},
            _added(0, item),
            {"type": "response.custom_tool_call_input.delta", **base, "delta": 'SELECT "a"'},
            {"type": "response.custom_tool_call_input.delta", **base, "delta": "\nFROM t"},
            _done(0, final),
            _completed([final]),
        ]
    )
    (block,) = result.blocks
    assert isinstance(block, ToolCallBlock)
    assert block.arguments == '"SELECT \\"a\\"\\nFROM t"'
    assert block.input == 'SELECT "a"\nFROM t'
    assert (block.id, block.name) == ("call_c", "sql")


def test_xai_custom_tool_call_is_hosted_unless_it_is_a_client_tool() -> None:
    item = {
        "type": "custom_tool_call",
        "id": "ctc_9",
        "call_id": "xs_call_9",
        "name": "x_keyword_search",
        "input": '{"query":"from:xai"}',
        "status": "completed",
    }
    result = _run(
        [_created(), _added(0, {**item, "input": ""}), _done(0, item), _completed([item])],
        ProviderId("xai"),
    )
    started, finished = result.activities
    # xAI's function name maps to the neutral x_search; the item keeps it for replay.
    assert (started.id, started.name, started.state) == ("ctc_9", "x_search", "started")
    assert (finished.state, finished.input) == ("completed", {"query": "from:xai"})
    assert finished.payload is not None and finished.payload.value["name"] == "x_keyword_search"
    assert result.blocks == ()


def test_local_shell_call_is_a_client_call_and_its_result_answers_in_kind() -> None:
    item = {
        "id": "lsh_1",
        "type": "local_shell_call",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls", "-a"], "env": {}},
        "call_id": "call_ls",
    }
    result = _run(
        [
            _created(),
            _added(0, {**item, "status": "in_progress"}),
            _done(0, item),
            _completed([item]),
        ]
    )
    (block,) = result.blocks
    assert isinstance(block, ToolCallBlock)
    assert (block.id, block.name) == ("call_ls", "local_shell")
    assert block.input == {"type": "exec", "command": ["ls", "-a"], "env": {}}
    from elelem.vocabulary import CallId, ToolResultBlock
    from elelem.wire import ModelRequest

    request = ModelRequest(
        model="gpt-5-codex",
        messages=(
            Message.user("list"),
            result.to_message(),
            Message(
                role="user", content=(ToolResultBlock(CallId("call_ls"), "a b"),), source="tool"
            ),
        ),
    )
    body = SHAPE.encode_request(request, provider=OPENAI).body
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list"}]},
        item,
        {"type": "local_shell_call_output", "call_id": "call_ls", "output": "a b"},
    ]


# -- hosted activity ---------------------------------------------------------------------

SEARCH = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {
        "type": "search",
        "query": "weather paris",
        "sources": [{"type": "url", "url": "https://a"}, {"type": "url", "url": "https://b"}],
    },
}


def test_web_search_call_is_a_hosted_activity_with_version() -> None:
    base = {"item_id": "ws_1", "output_index": 0}
    result = _run(
        [
            _created(),
            _added(0, {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}),
            {"type": "response.web_search_call.in_progress", **base},
            {"type": "response.web_search_call.searching", **base},
            {"type": "response.web_search_call.completed", **base},
            _done(0, SEARCH),
            _completed([SEARCH]),
        ]
    )
    assert result.activities == (
        HostedActivity(id="ws_1", name="web_search", state="started", input=None),  # type: ignore[arg-type]
        HostedActivity(
            id="ws_1",  # type: ignore[arg-type]
            name="web_search",
            state="completed",
            input={"type": "search", "query": "weather paris"},
            summary='searched "weather paris" → 2 sources',
            payload=ProviderPayload(OPENAI, "item", "web_search_preview", SEARCH),
        ),
    )
    assert result.finish is not None and result.finish.reason == "stop"
    assert native_items(result.to_message(), OPENAI) == [SEARCH]


def test_failed_code_interpreter_call_is_a_failed_transition() -> None:
    item = {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "status": "failed",
        "code": "1/0",
        "container_id": "cntr_1",
        "outputs": None,
    }
    result = _run(
        [
            _created(),
            _added(0, {**item, "status": "in_progress"}),
            _done(0, item),
            _completed([item]),
        ]
    )
    started, failed = result.activities
    assert (started.state, failed.state, failed.name) == ("started", "failed", "code_execution")
    assert failed.input == {"code": "1/0", "container_id": "cntr_1"}
    assert failed.summary == "ran code"


def test_hosted_shell_output_reports_exit_code() -> None:
    item = {
        "id": "sho_1",
        "type": "shell_call_output",
        "status": "completed",
        "call_id": "call_sh",
        "output": [{"outcome": {"type": "exit", "exit_code": 0}, "stdout": "hi", "stderr": ""}],
    }
    result = _run([_created(), _added(0, item), _done(0, item), _completed([item])])
    assert [(a.name, a.state, a.summary) for a in result.activities] == [
        ("shell", "started", ""),
        ("shell", "completed", "exit 0"),
    ]


def test_progress_event_for_an_item_never_added_is_malformed() -> None:
    with pytest.raises(MalformedStreamError, match="never added"):
        _stream(
            [
                _created(),
                {
                    "type": "response.web_search_call.searching",
                    "output_index": 3,
                    "item_id": "ws_x",
                },
            ]
        )


# -- unknown ---------------------------------------------------------------------------------


def test_unknown_item_is_kept_raw_in_position() -> None:
    odd = {"id": "cmp_1", "type": "compaction", "encrypted_content": "zzz"}
    result = _run(
        [
            _created(),
            _added(0, {"id": "rs_1", "type": "reasoning", "summary": []}),
            _done(0, REASONING),
            _added(1, odd),
            _done(1, odd),
            _added(2, {**MESSAGE, "content": []}),
            _done(2, MESSAGE),
            _completed([REASONING, odd, MESSAGE]),
        ]
    )
    kinds = [type(b).__name__ for b in result.blocks]
    assert kinds == ["ReasoningBlock", "UnknownBlock", "TextBlock"]
    assert result.blocks[1] == UnknownBlock(odd)
    assert native_items(result.to_message(), OPENAI) == [REASONING, odd, MESSAGE]


def test_unknown_event_outside_any_item_is_kept_and_not_replayed() -> None:
    event = {"type": "response.future_thing", "detail": 1}
    result = _run([_created(), event, _completed([])])
    (block,) = result.blocks
    kept = {"type": "openai_responses.event", "event": "response.future_thing", "value": event}
    assert block == UnknownBlock(kept)
    from elelem.shapes.openai_responses import assistant_wire

    assert assistant_wire(result.to_message(), OPENAI) == (
        [],
        [
            Drop(
                "content[0]",
                "openai_responses.event",
                UNREPLAYABLE,
                "'response.future_thing': a stream event, not content",
            )
        ],
    )


def test_unknown_events_of_a_known_item_are_kept_after_it() -> None:
    sparkle = {"type": "response.output_text.sparkle", "item_id": "msg_1", "output_index": 0}
    events = _text_events()
    events.insert(5, sparkle)
    result = _run(events)
    assert result.blocks[0] == _run(_text_events()).blocks[0]
    assert result.blocks[1] == UnknownBlock(
        {"type": "openai_responses.event", "event": sparkle["type"], "value": sparkle}
    )
    from elelem.shapes.openai_responses import assistant_wire

    wire, dropped = assistant_wire(result.to_message(), OPENAI)
    assert wire == [MESSAGE]
    assert dropped == [
        Drop(
            "content[1]",
            "openai_responses.event",
            UNREPLAYABLE,
            "'response.output_text.sparkle': a stream event, not content",
        )
    ]


# -- finish and errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("max_output_tokens", "max-tokens"), ("content_filter", "content-filter"), ("other", "other")],
)
def test_incomplete_reasons(reason: str, finish: str) -> None:
    response = _response("incomplete", incomplete_details={"reason": reason}, usage=USAGE)
    result = _run([_created(), {"type": "response.incomplete", "response": response}])
    assert result.finish is not None
    assert (result.finish.reason, result.finish.raw) == (finish, reason)


def test_error_event_raises_a_typed_error() -> None:
    event = {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}
    with pytest.raises(RateLimitError) as info:
        _stream([_created(), event])
    assert (info.value.provider_type, info.value.provider_message) == (
        "rate_limit_exceeded",
        "slow down",
    )
    assert info.value.retryable is True


def test_nested_error_event_and_quota_is_not_retryable() -> None:
    event = {
        "type": "error",
        "error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "pay"},
    }
    with pytest.raises(RateLimitError) as info:
        _stream([_created(), event])
    assert info.value.retryable is False


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        ("server_error", ServerError),
        ("context_length_exceeded", ContextWindowError),
        ("vector_store_timeout", ProviderStreamError),
    ],
)
def test_response_failed_raises_by_code(code: str, cls: type[Exception]) -> None:
    failed = {
        "type": "response.failed",
        "response": _response("failed", error={"code": code, "message": "m"}),
    }
    with pytest.raises(cls) as info:
        _stream([_created(), failed])
    assert type(info.value) is cls


def test_malformed_frames() -> None:
    parser = SHAPE.new_parser(OPENAI)
    with pytest.raises(MalformedStreamError, match="not JSON"):
        parser.message("response.created", "{nope")
    parser = SHAPE.new_parser(OPENAI)
    parser.message("", json.dumps(_created()))
    parser.message("", json.dumps(_completed([])))
    with pytest.raises(MalformedStreamError, match="after the response finished"):
        parser.message("", json.dumps(_created()))


def test_item_done_twice_is_malformed() -> None:
    with pytest.raises(MalformedStreamError, match="done twice"):
        _stream([_created(), _added(0, SEARCH), _done(0, SEARCH), _done(0, SEARCH)])


def test_non_streaming_body_maps_to_the_same_content_as_the_stream() -> None:
    streamed = _run(_text_events())
    body = json.dumps(_response("completed", output=[MESSAGE], usage=USAGE)).encode()
    whole = _assemble(SHAPE.parse_response(body, OPENAI))
    assert whole.content == streamed.content
    assert whole.usage == streamed.usage
    assert whole.finish == streamed.finish


def test_annotation_ahead_of_its_text_is_verified_at_the_end() -> None:
    events = _text_events()
    annotation = events.pop(6)
    events.insert(5, annotation)  # arrives before the text it spans
    late = {**CITE, "url": "https://example.com/z", "start_index": 0, "end_index": 4}
    events.insert(6, {**annotation, "annotation": late})  # held behind it, order kept
    result = _run(events)
    (block,) = result.blocks
    assert isinstance(block, TextBlock)
    assert [(a.source.url, a.range) for a in block.attributions] == [
        ("https://example.com/w", (11, 49)),
        ("https://example.com/z", None),
    ]


def test_an_interrupted_stream_keeps_text_and_citations_so_far() -> None:
    assembler = Assembler(OPENAI)
    assembler.feed_all(_stream(_text_events()[:7]))
    partial = assembler.partial()
    (block,) = partial.blocks
    assert isinstance(block, TextBlock)
    assert (block.text, block.complete) == (TEXT, False)
    (a,) = block.attributions
    assert (a.range, a.complete) == ((11, 49), False)


def test_raw_reasoning_text_deltas() -> None:
    item = {
        "id": "rs_3",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Short."}],
        "content": [{"type": "reasoning_text", "text": "Long thought."}],
    }
    base = {"item_id": "rs_3", "output_index": 0}
    result = _run(
        [
            _created(),
            _added(0, {"id": "rs_3", "type": "reasoning", "summary": []}),
            {
                "type": "response.reasoning_summary_text.delta",
                **base,
                "summary_index": 0,
                "delta": "Short.",
            },
            {
                "type": "response.content_part.added",
                **base,
                "content_index": 0,
                "part": {"type": "reasoning_text"},
            },
            {"type": "response.reasoning_text.delta", **base, "content_index": 0, "delta": "Long "},
            {
                "type": "response.reasoning_text.delta",
                **base,
                "content_index": 0,
                "delta": "thought.",
            },
            _done(0, item),
            _completed([item]),
        ]
    )
    (block,) = result.blocks
    assert isinstance(block, ReasoningBlock)
    assert block.text == "Short.\n\nLong thought."


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(TEXT)), max_size=6))
def test_any_split_of_the_deltas_gives_the_same_content(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(TEXT)]
    pieces = [TEXT[a:b] for a, b in itertools.pairwise(bounds)]
    base = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events = _text_events()
    events[4:6] = [{"type": "response.output_text.delta", **base, "delta": p} for p in pieces]
    assert _run(events).content == _run(_text_events()).content


def test_a_queued_background_body_is_not_taken_for_a_finished_one() -> None:
    from elelem.errors import UnsupportedError

    body = json.dumps(_response("queued")).encode()
    with pytest.raises(UnsupportedError, match="'resp_1' is still queued"):
        SHAPE.parse_response(body, OPENAI)
