"""The Anthropic Messages parser, rule by rule, on hand-built streams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem.errors import (
    InvalidRequestError,
    MalformedStreamError,
    OverloadedError,
    ProviderStreamError,
    RateLimitError,
    StreamError,
)
from elelem.shapes.anthropic_messages import SHAPE
from elelem.shapes.anthropic_messages import encoder as anthropic_encoder
from elelem.stream import (
    AssembledResponse,
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    Hosted,
    Payload,
    ResponseStart,
    TextDelta,
    UsageUpdate,
    assemble,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    DocumentLocation,
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
    WebFetch,
    WebSearch,
)
from elelem.wire import ModelRequest

A = ProviderId("anthropic")


def pp(fmt: str, value: Any, version: str | None = None) -> ProviderPayload:
    return ProviderPayload(A, fmt, version, value)


def start(content: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content or [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
        **extra,
    }
    return {"type": "message_start", "message": message}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str = "end_turn", usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": usage or {"output_tokens": 7},
    }


END = {"type": "message_stop"}


def chunks_of(events: list[dict[str, Any]], request: Any = None) -> list[Chunk]:
    parser = SHAPE.new_parser(A, request)
    out: list[Chunk] = list(parser.open(200, {"content-type": "text/event-stream"}))
    for event in events:
        out.extend(parser.message(event["type"], json.dumps(event)))
    out.extend(parser.eof())
    return out


def run(events: list[dict[str, Any]], request: Any = None) -> AssembledResponse:
    return assemble(chunks_of(events, request), A)


def test_text_with_citations_before_its_text_and_blocks_never_merged() -> None:
    citation = {
        "type": "web_search_result_location",
        "cited_text": "Paris &amp; more",
        "url": "https://example.com/paris",
        "title": "Paris",
        "encrypted_index": "EqkB",
    }
    result = run(
        [
            start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="First."),
            stop(0),
            block_start(1, {"type": "text", "text": "", "citations": []}),
            delta(1, type="citations_delta", citation=citation),
            delta(1, type="text_delta", text="Paris is "),
            delta(1, type="text_delta", text="big."),
            stop(1),
            message_delta(),
            END,
        ]
    )
    assert result.content == (
        TextBlock("First."),
        TextBlock(
            "Paris is big.",
            attributions=(
                Attribution(
                    source=Source(url="https://example.com/paris", title="Paris"),
                    excerpt="Paris & more",
                    range=None,
                    replay=pp("citation", citation),
                ),
            ),
        ),
    )


@pytest.mark.parametrize(
    "citation",
    [
        {
            "type": "char_location",
            "cited_text": "abc",
            "document_index": 0,
            "document_title": "Doc",
            "start_char_index": 0,
            "end_char_index": 3,
        },
        {
            "type": "page_location",
            "cited_text": "abc",
            "document_index": 1,
            "document_title": "Doc",
            "start_page_number": 1,
            "end_page_number": 2,
        },
        {
            "type": "content_block_location",
            "cited_text": "abc",
            "document_index": 0,
            "document_title": "Doc",
            "start_block_index": 0,
            "end_block_index": 1,
        },
    ],
)
def test_document_citations_have_the_title_and_no_url(citation: dict[str, Any]) -> None:
    result = run(
        [
            start(),
            block_start(0, {"type": "text", "text": "", "citations": []}),
            delta(0, type="citations_delta", citation=citation),
            delta(0, type="text_delta", text="x"),
            stop(0),
            message_delta(),
            END,
        ]
    )
    (block,) = result.content
    assert isinstance(block, TextBlock)
    unit, start_key, end_key = {
        "char_location": ("char", "start_char_index", "end_char_index"),
        "page_location": ("page", "start_page_number", "end_page_number"),
        "content_block_location": ("block", "start_block_index", "end_block_index"),
    }[citation["type"]]
    where = DocumentLocation(
        citation["document_index"], unit, citation[start_key], citation[end_key]
    )
    assert block.attributions == (
        Attribution(
            Source(url=None, title="Doc", document=where), "abc", None, pp("citation", citation)
        ),
    )


def test_search_result_citation_uses_its_source_and_title() -> None:
    citation = {
        "type": "search_result_location",
        "cited_text": "q",
        "source": "https://kb.example/1",
        "title": "KB",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 0,
    }
    result = run(
        [
            start(),
            block_start(0, {"type": "text", "text": "t", "citations": [citation]}),
            stop(0),
            message_delta(),
            END,
        ]
    )
    (block,) = result.content
    assert isinstance(block, TextBlock)
    assert block.text == "t"
    assert block.attributions[0].source == Source(
        url=None, title="KB", document=DocumentLocation(0, "block", 0, 0)
    )
    assert block.attributions[0].replay == pp("citation", citation)


def test_thinking_with_signature_replaced_and_redacted_thinking() -> None:
    result = run(
        [
            start(),
            block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, type="thinking_delta", thinking="Let me "),
            delta(0, type="thinking_delta", thinking="think."),
            delta(0, type="signature_delta", signature="sig-old"),
            delta(0, type="signature_delta", signature="sig-new"),
            stop(0),
            block_start(1, {"type": "redacted_thinking", "data": "ENCRYPTED"}),
            stop(1),
            message_delta(),
            END,
        ]
    )
    assert result.content == (
        ReasoningBlock("Let me think.", payloads=(pp("signature", "sig-new"),)),
        ReasoningBlock("", payloads=(pp("redacted_thinking", "ENCRYPTED"),)),
    )


def test_tool_use_with_input_json_deltas_and_extra_fields() -> None:
    caller = {"type": "direct"}
    result = run(
        [
            start(),
            block_start(
                0,
                {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}, "caller": caller},
            ),
            delta(0, type="input_json_delta", partial_json=""),
            delta(0, type="input_json_delta", partial_json='{"city": '),
            delta(0, type="input_json_delta", partial_json='"Paris"}'),
            stop(0),
            message_delta("tool_use"),
            END,
        ]
    )
    assert result.content == (
        ToolCallBlock(
            "toolu_1",
            "get",
            '{"city": "Paris"}',
            payloads=(pp("block_fields", {"caller": caller}),),
        ),
    )
    assert result.finish == Finish("tool-calls", raw="tool_use", payloads=result.finish.payloads)


def test_web_search_server_tool_and_result_are_hosted_transitions() -> None:
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    results = [
        {"type": "web_search_result", "url": f"https://e.com/{i}", "title": str(i)}
        for i in range(5)
    ]
    result_block = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": results,
    }
    tools = {"tools": [{"type": "web_search_20250305", "name": "web_search"}]}
    result = run(
        [
            start(),
            block_start(0, server),
            delta(0, type="input_json_delta", partial_json='{"query": "pa'),
            delta(0, type="input_json_delta", partial_json='ris"}'),
            stop(0),
            block_start(1, result_block),
            stop(1),
            message_delta(),
            END,
        ],
        tools,
    )
    v = "web_search_20250305"
    final = {**server, "input": {"query": "paris"}}
    assert result.content == (
        HostedActivity(
            "srvtoolu_1",
            "web_search",
            "started",
            {"query": "paris"},
            "",
            pp("server_tool_use", final, v),
        ),
        HostedActivity(
            "srvtoolu_1",
            "web_search",
            "completed",
            {"query": "paris"},
            "5 results",
            pp("web_search_tool_result", result_block, v),
        ),
    )


def test_version_comes_from_the_neutral_request_too() -> None:
    request = ModelRequest(
        model="m",
        messages=(Message.user("hi"),),
        hosted_tools=(WebSearch(), WebFetch(version="web_fetch_20260209")),
    )
    events = [
        start(),
        block_start(
            0, {"type": "server_tool_use", "id": "s1", "name": "web_fetch", "input": {"url": "u"}}
        ),
        stop(0),
        block_start(
            1,
            {"type": "server_tool_use", "id": "s2", "name": "web_search", "input": {"query": "q"}},
        ),
        stop(1),
        block_start(
            2, {"type": "server_tool_use", "id": "s3", "name": "bash_code_execution", "input": {}}
        ),
        stop(2),
        message_delta(),
        END,
    ]
    versions = [a.payload.version for a in run(events, request).activities if a.payload]
    assert versions == ["web_fetch_20260209", "web_search_20250305", None]
    assert [a.payload.version for a in run(events).activities if a.payload] == [None, None, None]


@pytest.mark.parametrize(
    ("result_block", "state", "summary"),
    [
        (
            {
                "type": "web_search_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "web_search_tool_result_error",
                    "error_code": "max_uses_exceeded",
                },
            },
            "failed",
            "max_uses_exceeded",
        ),
        (
            {
                "type": "web_fetch_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "web_fetch_result",
                    "url": "https://example.com/a/b?c",
                    "content": {"type": "document", "source": {"type": "text", "data": "x"}},
                },
            },
            "completed",
            "fetched example.com",
        ),
        (
            {
                "type": "web_fetch_tool_result",
                "tool_use_id": "s",
                "content": {"type": "web_fetch_tool_result_error", "error_code": "unavailable"},
            },
            "failed",
            "unavailable",
        ),
        (
            {
                "type": "code_execution_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "code_execution_result",
                    "stdout": "4\n",
                    "stderr": "",
                    "return_code": 0,
                    "content": [],
                },
            },
            "completed",
            "exit 0",
        ),
        (
            {
                "type": "bash_code_execution_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "bash_code_execution_result",
                    "stdout": "",
                    "stderr": "boom",
                    "return_code": 2,
                    "content": [],
                },
            },
            "completed",
            "exit 2",
        ),
        (
            {
                "type": "text_editor_code_execution_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "text_editor_code_execution_create_result",
                    "is_file_update": False,
                },
            },
            "completed",
            "created file",
        ),
        (
            {
                "type": "tool_search_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": "a"}],
                },
            },
            "completed",
            "1 tool found",
        ),
        (
            {
                "type": "advisor_tool_result",
                "tool_use_id": "s",
                "content": {"type": "advisor_result", "text": "Plan: ..."},
            },
            "completed",
            "advice given",
        ),
        (
            {
                "type": "code_execution_tool_result",
                "tool_use_id": "s",
                "content": {
                    "type": "code_execution_tool_result_error",
                    "error_code": "too_many_requests",
                },
            },
            "failed",
            "too_many_requests",
        ),
    ],
)
def test_result_states_and_summaries(
    result_block: dict[str, Any], state: str, summary: str
) -> None:
    # The code execution tool's helpers report under the neutral code_execution.
    name = {
        "bash_code_execution_tool_result": "code_execution",
        "text_editor_code_execution_tool_result": "code_execution",
    }.get(result_block["type"], result_block["type"].removesuffix("_tool_result"))
    result = run([start(), block_start(0, result_block), stop(0), message_delta(), END])
    (activity,) = result.activities
    # Its server_tool_use is not in this response: the name comes from the result type.
    assert (activity.id, activity.name, activity.state, activity.summary) == (
        "s",
        name,
        state,
        summary,
    )
    assert activity.input is None
    assert activity.payload == pp(result_block["type"], result_block)


def test_unknown_blocks_keep_raw_json_with_deltas_applied_in_position() -> None:
    result = run(
        [
            start(),
            block_start(0, {"type": "compaction", "content": None}),
            delta(0, type="compaction_delta", content="## Summary"),
            delta(0, type="compaction_delta", content=" of it"),
            stop(0),
            block_start(1, {"type": "text", "text": "after"}),
            stop(1),
            message_delta(),
            END,
        ]
    )
    assert result.content == (
        UnknownBlock({"type": "compaction", "content": "## Summary of it"}),
        TextBlock("after"),
    )


def test_mcp_connector_blocks_are_hosted_activity_replayed_byte_exact() -> None:
    use = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "input": {}}
    use["server_name"] = "e"
    result_block = {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": False,
        "content": [{"type": "text", "text": "Tool echo: x"}],
    }
    failed_block = {**result_block, "tool_use_id": "mcptoolu_2", "is_error": True}
    result = run(
        [
            start(),
            block_start(0, use),
            delta(0, type="input_json_delta", partial_json='{"m": '),
            delta(0, type="input_json_delta", partial_json='"x"}'),
            stop(0),
            block_start(1, result_block),
            stop(1),
            block_start(2, {**use, "id": "mcptoolu_2"}),
            stop(2),
            block_start(3, failed_block),
            stop(3),
            message_delta(),
            END,
        ]
    )
    wire_use = {**use, "input": {"m": "x"}}
    given = {"server_label": "e", "name": "echo", "arguments": {"m": "x"}}
    assert result.content == (
        HostedActivity(
            ActivityId("mcptoolu_1"),
            "mcp",
            "started",
            given,
            payload=ProviderPayload(A, "mcp_tool_use", None, wire_use),
        ),
        HostedActivity(
            ActivityId("mcptoolu_1"),
            "mcp",
            "completed",
            given,
            "called echo",
            ProviderPayload(A, "mcp_tool_result", None, result_block),
        ),
        HostedActivity(
            ActivityId("mcptoolu_2"),
            "mcp",
            "started",
            {"server_label": "e", "name": "echo", "arguments": {}},
            payload=ProviderPayload(A, "mcp_tool_use", None, {**use, "id": "mcptoolu_2"}),
        ),
        HostedActivity(
            ActivityId("mcptoolu_2"),
            "mcp",
            "failed",
            {"server_label": "e", "name": "echo", "arguments": {}},
            "error from echo",
            ProviderPayload(A, "mcp_tool_result", None, failed_block),
        ),
    )
    message = Message("assistant", result.content, provider=A, model="m")
    request = ModelRequest("m", (Message.user("hi"), message))
    body = anthropic_encoder.encode_request(request, provider=A).body
    assert body["messages"][1]["content"] == [
        wire_use,
        result_block,
        {**use, "id": "mcptoolu_2"},
        failed_block,
    ]


def test_unknown_deltas_on_a_known_block_are_each_kept_in_order_with_their_type() -> None:
    # docs.anthropic.com/en/docs/build-with-claude/streaming ("Other events"):
    # "new event types may be added, and your code should handle unknown event
    # types gracefully"; a content_block_delta's delta is tagged by its "type".
    chunks = chunks_of(
        [
            start(),
            block_start(0, {"type": "text", "text": "", "lang": "en"}),
            delta(0, type="text_delta", text="Hi"),
            delta(0, type="future_delta", note="a", n=1),
            delta(0, type="future_delta", note="b", n=2),
            delta(0, type="other_delta", n=3),
            stop(0),
            message_delta(),
            END,
        ]
    )
    first = {"type": "future_delta", "note": "a", "n": 1}
    second = {"type": "future_delta", "note": "b", "n": 2}
    third = {"type": "other_delta", "n": 3}
    assert [c for c in chunks if isinstance(c, Payload)] == [
        Payload(0, pp("block_fields", {"lang": "en"})),
        Payload(0, pp("unknown_deltas", [first])),
        Payload(0, pp("unknown_deltas", [first, second])),
        Payload(0, pp("unknown_deltas", [first, second, third])),
    ]
    text = assemble(chunks, A).content[0]
    assert isinstance(text, TextBlock) and text.text == "Hi"
    assert text.payloads == (
        pp("block_fields", {"lang": "en"}),
        pp("unknown_deltas", [first, second, third]),
    )
    # Native replay sends the block its known deltas built, and says what it left out.
    message = Message("assistant", (text,), provider=A, model="m")
    encoded = anthropic_encoder.encode_request(
        ModelRequest("m", (Message.user("hi"), message)), provider=A
    )
    assert encoded.body["messages"][1]["content"] == [{"type": "text", "text": "Hi", "lang": "en"}]
    assert [(d.where, d.what, d.detail) for d in encoded.dropped] == [
        ("messages[1].content[0]", "unknown_deltas", "3 delta(s) of a type nobody modelled")
    ]


def test_a_known_delta_on_the_wrong_block_is_an_error() -> None:
    with pytest.raises(
        MalformedStreamError, match="thinking_delta delta is not valid for a text block 0"
    ):
        run(
            [
                start(),
                block_start(0, {"type": "text", "text": ""}),
                delta(0, type="thinking_delta", thinking="x"),
            ]
        )


def test_an_unknown_event_is_kept_in_position() -> None:
    news = {"type": "brand_new_event", "detail": {"a": [1, 2]}}
    early = {"type": "early_event", "n": 1}
    chunks = chunks_of(
        [
            early,
            start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="Hi"),
            news,
            stop(0),
            message_delta(),
            END,
        ]
    )
    kept = [c for c in chunks if isinstance(c, BlockStart) and c.block == "unknown"]
    assert kept == [
        BlockStart(
            "event-1",
            "unknown",
            raw={"type": "anthropic.event", "event": "early_event", "value": early},
        ),
        BlockStart(
            "event-2",
            "unknown",
            raw={"type": "anthropic.event", "event": "brand_new_event", "value": news},
        ),
    ]
    assert isinstance(chunks[0], ResponseStart) and chunks.index(kept[0]) == 1
    response = assemble(chunks, A)
    assert [type(p).__name__ for p in response.content] == [
        "UnknownBlock",
        "UnknownBlock",
        "TextBlock",
    ]


def test_message_stop_without_a_stop_reason_finishes_unknown_keeping_everything() -> None:
    chunks = chunks_of(
        [
            start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="Hi"),
            stop(0),
            {"type": "message_delta", "delta": {}, "usage": {"output_tokens": 3}},
            END,
        ]
    )
    response = assemble(chunks, A)
    assert (response.finish.reason, response.finish.raw) == ("unknown", None)
    assert [p.text for p in response.content if isinstance(p, TextBlock)] == ["Hi"]
    assert response.usage is not None and response.usage.output == 3


def test_unfoldable_delta_on_an_unknown_block_is_an_error() -> None:
    with pytest.raises(MalformedStreamError, match="cannot apply anthropic odd_delta field 'n'"):
        run([start(), block_start(0, {"type": "odd", "n": 1}), delta(0, type="odd_delta", n=2)])


def test_usage_is_cumulative_and_replaced_with_hosted_counters() -> None:
    chunks = chunks_of(
        [
            start(),
            message_delta(usage={"output_tokens": 5}),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {
                    "input_tokens": 12,
                    "cache_read_input_tokens": 3,
                    "cache_creation_input_tokens": 4,
                    "output_tokens": 9,
                    "server_tool_use": {
                        "web_search_requests": 2,
                        "web_fetch_requests": 1,
                        "code_execution_requests": 3,
                        "tool_search_requests": 1,
                    },
                },
            },
            END,
        ]
    )
    usages = [c.usage for c in chunks if isinstance(c, UsageUpdate)]
    assert [u.output for u in usages] == [1, 5, 9]
    assert usages[-1] == Usage(
        input=12,
        output=9,
        cache_read=3,
        cache_write=4,
        reasoning=0,
        hosted={"web_search": 2, "web_fetch": 1, "code_execution": 3, "tool_search": 1},
        raw={
            "input_tokens": 12,
            "output_tokens": 9,
            "cache_read_input_tokens": 3,
            "cache_creation_input_tokens": 4,
            "server_tool_use": {
                "web_search_requests": 2,
                "web_fetch_requests": 1,
                "code_execution_requests": 3,
                "tool_search_requests": 1,
            },
        },
    )
    assert assemble(chunks, A).usage == usages[-1]


@pytest.mark.parametrize(
    ("wire", "neutral"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool-calls"),
        ("max_tokens", "max-tokens"),
        ("pause_turn", "paused"),
        ("refusal", "refused"),
        ("some_future_reason", "some_future_reason"),
    ],
)
def test_finish_reasons(wire: str, neutral: str) -> None:
    result = run([start(), message_delta(wire), END])
    assert result.finish is not None
    assert (result.finish.reason, result.finish.raw) == (neutral, wire)


def test_finish_keeps_the_message_envelope() -> None:
    container = {"id": "container_1", "expires_at": "2025-12-20T05:33:35Z"}
    result = run(
        [
            start(),
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None, "container": container},
                "context_management": {"applied_edits": []},
                "usage": {"output_tokens": 3},
            },
            END,
        ]
    )
    assert result.finish is not None
    assert result.finish.payloads == (
        pp(
            "message",
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 3},
                "container": container,
                "context_management": {"applied_edits": []},
            },
        ),
    )


def test_message_start_may_hold_complete_blocks_and_the_stop_reason() -> None:
    block = {
        "type": "tool_use",
        "id": "toolu_2",
        "name": "roll",
        "input": {"player": "p2"},
        "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"},
    }
    result = run([start([block], stop_reason="tool_use"), END])
    assert result.content == (
        ToolCallBlock(
            "toolu_2",
            "roll",
            '{"player":"p2"}',
            payloads=(pp("block_fields", {"caller": block["caller"]}),),
        ),
    )
    assert result.finish_reason == "tool-calls"


def test_response_start_and_ping() -> None:
    chunks = chunks_of([start(), {"type": "ping"}, message_delta(), END])
    assert chunks[0] == ResponseStart("msg_1", "claude-test", A)
    assert [type(c).__name__ for c in chunks] == [
        "ResponseStart",
        "UsageUpdate",
        "UsageUpdate",
        "Finish",
    ]


@pytest.mark.parametrize(
    ("etype", "cls"),
    [
        ("overloaded_error", OverloadedError),
        ("rate_limit_error", RateLimitError),
        ("invalid_request_error", InvalidRequestError),
        ("brand_new_error", ProviderStreamError),
    ],
)
def test_error_event_raises_typed_error(etype: str, cls: type[Exception]) -> None:
    parser = SHAPE.new_parser(A)
    parser.message("message_start", json.dumps(start()))
    event = {"type": "error", "error": {"type": etype, "message": "Overloaded now"}}
    with pytest.raises(cls) as info:
        parser.message("error", json.dumps(event))
    err = info.value
    assert type(err) is cls
    assert (err.provider_type, err.provider_message) == (etype, "Overloaded now")  # type: ignore[attr-defined]
    assert err.status is None  # type: ignore[attr-defined]


def test_overloaded_event_is_retryable() -> None:
    parser = SHAPE.new_parser(A)
    event = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(OverloadedError) as info:
        parser.message("error", json.dumps(event))
    assert info.value.retryable is True


@pytest.mark.parametrize(
    ("frames", "error", "match"),
    [
        ([("message_start", "{not json")], MalformedStreamError, "data is not JSON"),
        ([("x", "[1]")], MalformedStreamError, "not a JSON object"),
        ([("", json.dumps(message_delta()))], MalformedStreamError, "before message_start"),
        (
            [("", json.dumps(start())), ("", json.dumps(start()))],
            MalformedStreamError,
            "second anthropic message_start",
        ),
        (
            [("", json.dumps(start())), ("", json.dumps(delta(3, type="text_delta", text="x")))],
            MalformedStreamError,
            "block 3 that is not open",
        ),
        (
            [
                ("", json.dumps(start())),
                ("", json.dumps(block_start(0, {"type": "text", "text": ""}))),
                ("", json.dumps(message_delta())),
                ("", json.dumps(END)),
            ],
            MalformedStreamError,
            "while blocks 0 are open",
        ),
    ],
)
def test_malformed_streams(
    frames: list[tuple[str, str]], error: type[Exception], match: str
) -> None:
    parser = SHAPE.new_parser(A)
    with pytest.raises(error, match=match):
        for event, data in frames:
            parser.message(event, data)


def test_eof_before_message_stop_leaves_the_stream_to_the_driver() -> None:
    parser = SHAPE.new_parser(A)
    parser.message("message_start", json.dumps(start()))
    assert parser.eof() == ()


def test_frames_after_message_stop_are_an_error() -> None:
    parser = SHAPE.new_parser(A)
    for event in [start(), message_delta(), END]:
        parser.message("", json.dumps(event))
    assert parser.eof() == ()
    with pytest.raises(MalformedStreamError, match="frame 4 arrived after the response finished"):
        parser.message("", json.dumps(block_start(0, {"type": "text", "text": ""})))


def test_non_streaming_response_maps_to_the_same_result() -> None:
    citation = {
        "type": "web_search_result_location",
        "url": "u",
        "title": "t",
        "cited_text": "c",
        "encrypted_index": "e",
    }
    content = [
        {"type": "thinking", "thinking": "hm", "signature": "SIG"},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
        {"type": "text", "text": "cited", "citations": [citation]},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
        {"type": "mcp_tool_use", "id": "m1", "name": "e", "server_name": "s", "input": {"b": 2}},
    ]
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 7},
    }
    whole = assemble(SHAPE.parse_response(json.dumps(body).encode(), A), A)
    streamed = run(
        [
            start(),
            block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, type="thinking_delta", thinking="hm"),
            delta(0, type="signature_delta", signature="SIG"),
            stop(0),
            block_start(1, {**content[1], "input": {}}),
            delta(1, type="input_json_delta", partial_json='{"query": "q"}'),
            stop(1),
            block_start(2, content[2]),
            stop(2),
            block_start(3, {"type": "text", "text": "", "citations": []}),
            delta(3, type="citations_delta", citation=citation),
            delta(3, type="text_delta", text="cited"),
            stop(3),
            block_start(4, {**content[4], "input": {}}),
            delta(4, type="input_json_delta", partial_json='{"a":1}'),
            stop(4),
            block_start(5, {**content[5], "input": {}}),
            delta(5, type="input_json_delta", partial_json='{"b": 2}'),
            stop(5),
            message_delta("tool_use", {"input_tokens": 10, "output_tokens": 7}),
            END,
        ]
    )
    assert whole.content == streamed.content
    assert whole.usage == streamed.usage
    assert whole.finish_reason == streamed.finish_reason == "tool-calls"
    assert (whole.response_id, whole.model) == ("msg_1", "claude-test")
    assert [type(p).__name__ for p in whole.content] == [
        "ReasoningBlock",
        "HostedActivity",
        "HostedActivity",
        "TextBlock",
        "ToolCallBlock",
        "HostedActivity",
    ]


def test_non_streaming_error_body_raises() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(OverloadedError):
        SHAPE.parse_response(json.dumps(body).encode(), A)
    with pytest.raises(MalformedStreamError, match="not JSON"):
        SHAPE.parse_response(b"{", A)


def test_chunk_grammar_one_block_per_anthropic_block() -> None:
    chunks = chunks_of(
        [
            start(),
            block_start(0, {"type": "text", "text": "a"}),
            delta(0, type="text_delta", text="b"),
            stop(0),
            block_start(
                1,
                {
                    "type": "server_tool_use",
                    "id": "s",
                    "name": "web_search",
                    "input": {"query": "x"},
                },
            ),
            stop(1),
            message_delta(),
            END,
        ]
    )
    assert chunks[1:6] == [
        UsageUpdate(chunks[1].usage),  # type: ignore[union-attr]
        BlockStart(0, "text"),
        TextDelta(0, "a"),
        TextDelta(0, "b"),
        BlockEnd(0),
    ]
    assert isinstance(chunks[6], Hosted)
    assert isinstance(chunks[-1], Finish)


def test_result_of_an_earlier_response_takes_name_and_input_from_the_history() -> None:
    server = {
        "type": "server_tool_use",
        "id": "srv_9",
        "name": "web_search",
        "input": {"query": "q"},
    }
    result_block = {"type": "web_search_tool_result", "tool_use_id": "srv_9", "content": []}
    events = [start(), block_start(0, result_block), stop(0), message_delta(), END]
    wire_request = {
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [server]},
        ],
    }
    (activity,) = run(events, wire_request).activities
    assert activity == HostedActivity(
        "srv_9",
        "web_search",
        "completed",
        {"query": "q"},
        "0 results",
        pp("web_search_tool_result", result_block, "web_search_20250305"),
    )
    paused = Message(
        role="assistant",
        provider=A,
        content=(
            HostedActivity(
                "srv_9",
                "web_search",
                "started",
                {"query": "q"},
                "",
                pp("server_tool_use", server, "v1"),
            ),
        ),
    )
    request = ModelRequest(model="m", messages=(Message.user("go"), paused))
    (activity,) = run(events, request).activities
    assert (activity.name, activity.input, activity.payload and activity.payload.version) == (
        "web_search",
        {"query": "q"},
        "v1",
    )


def test_error_event_keeps_its_request_id_and_body() -> None:
    event = {
        "type": "error",
        "error": {"type": "api_error", "message": "Internal server error"},
        "request_id": "req_ev",
    }
    with pytest.raises(StreamError) as info:
        SHAPE.new_parser(A).message("error", json.dumps(event))
    err = info.value
    assert (err.kind, err.request_id, err.retryable) == ("server", "req_ev", True)
    assert err.body is not None and json.loads(err.body) == event
    assert str(err) == "anthropic stream api_error: Internal server error"
