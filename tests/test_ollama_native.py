"""The Ollama native shape, rule by rule: NDJSON lines -> chunks, the
non-streaming body, errors, and the ``/api/chat`` request encoder."""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem.errors import (
    ContextWindowError,
    MalformedStreamError,
    NotFoundError,
    ProviderStreamError,
    RateLimitError,
    ServerError,
)
from elelem.shapes.ollama_native import SHAPE, assistant_wire
from elelem.stream import (
    AssembledResponse,
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
    assemble,
)
from elelem.vocabulary import (
    GenerationOptions,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    Usage,
    WebSearch,
)
from elelem.vocabulary.drop import FOREIGN_REASONING, INVALID, UNSUPPORTED, Drop
from elelem.wire import ModelRequest

OLLAMA = ProviderId("ollama-native")
MODEL = "qwen3:8b"


def _line(message: dict[str, Any] | None = None, **top: Any) -> str:
    obj: dict[str, Any] = {
        "model": MODEL,
        "created_at": top.pop("created_at", "2026-01-01T00:00:00Z"),
    }
    if message is not None:
        obj["message"] = {"role": "assistant", **message}
    obj["done"] = top.pop("done", False)
    obj.update(top)
    return json.dumps(obj)


FINAL = {
    "done": True,
    "done_reason": "stop",
    "total_duration": 900,
    "load_duration": 100,
    "prompt_eval_count": 12,
    "prompt_eval_duration": 300,
    "eval_count": 7,
    "eval_duration": 500,
}


def _parse(lines: list[str]) -> list[Chunk]:
    parser = SHAPE.new_parser(OLLAMA)
    out: list[Chunk] = list(parser.open(200, {}))
    for line in lines:
        out.extend(parser.message("", line))
    out.extend(parser.eof())
    return out


def _result(lines: list[str]) -> AssembledResponse:
    return assemble(_parse(lines), OLLAMA)


# -- parser -------------------------------------------------------------------


def test_thinking_then_content_become_reasoning_then_text_in_order() -> None:
    chunks = _parse(
        [
            _line({"content": "", "thinking": "Hm"}),
            _line({"content": "", "thinking": "m."}),
            _line({"content": "Hi"}),
            _line({"content": " there"}, created_at="2026-01-01T00:00:09Z", **FINAL),
        ]
    )
    envelope = {
        "model": MODEL,
        "created_at": "2026-01-01T00:00:09Z",
        "done": True,
        "done_reason": "stop",
        "total_duration": 900,
        "load_duration": 100,
        "prompt_eval_count": 12,
        "prompt_eval_duration": 300,
        "eval_count": 7,
        "eval_duration": 500,
        "first_created_at": "2026-01-01T00:00:00Z",
    }
    assert chunks == [
        ResponseStart(None, MODEL, OLLAMA),
        BlockStart("reasoning-1", "reasoning"),
        ReasoningDelta("reasoning-1", "Hm"),
        ReasoningDelta("reasoning-1", "m."),
        BlockEnd("reasoning-1"),
        BlockStart("text-2", "text"),
        TextDelta("text-2", "Hi"),
        TextDelta("text-2", " there"),
        BlockEnd("text-2"),
        UsageUpdate(Usage(input=12, output=7, raw={"prompt_eval_count": 12, "eval_count": 7})),
        Finish(
            "stop",
            raw="stop",
            payloads=(ProviderPayload(OLLAMA, "ollama.response", None, envelope),),
        ),
    ]


def test_tool_calls_are_whole_blocks_with_object_arguments_as_json_text() -> None:
    call = {
        "id": "call_1",
        "function": {"index": 0, "name": "weather", "arguments": {"city": "Zürich", "n": 2}},
    }
    result = _result(
        [
            _line({"content": "", "thinking": "Need weather."}),
            _line({"content": "", "tool_calls": [call]}),
            _line({"content": ""}, **FINAL),
        ]
    )
    thought, tool = result.blocks
    assert thought == ReasoningBlock("Need weather.")
    assert isinstance(tool, ToolCallBlock)
    assert (tool.id, tool.name, tool.arguments) == ("call_1", "weather", '{"city":"Zürich","n":2}')
    assert tool.payloads == (
        ProviderPayload(OLLAMA, "tool-call-extra", None, {"function": {"index": 0}}),
    )
    assert (result.finish_reason, result.finish.raw if result.finish else None) == (
        "tool-calls",
        "stop",
    )


def test_a_call_without_id_gets_a_derived_id_marked_synthesized() -> None:
    chunks = _parse(
        [
            _line(
                {"content": "", "tool_calls": [{"function": {"name": "a", "arguments": {}}}]},
                created_at="T1",
            ),
            _line({"content": ""}, **FINAL),
        ]
    )
    assert chunks[1:5] == [
        BlockStart("tool-1", "tool-call", id="ollama-T1-1", name="a"),
        Payload("tool-1", ProviderPayload(OLLAMA, "synthesized-id", None, True)),
        ToolCallDelta("tool-1", "{}"),
        BlockEnd("tool-1"),
    ]


@pytest.mark.parametrize(
    ("done_reason", "reason"),
    [("stop", "stop"), ("length", "max-tokens"), ("load", "load"), ("unload", "unload")],
)
def test_done_reason_maps_to_the_finish_reason(done_reason: str, reason: str) -> None:
    final = _parse([_line({"content": "x"}, done=True, done_reason=done_reason)])[-1]
    assert isinstance(final, Finish)
    assert (final.reason, final.raw) == (reason, done_reason)


def test_unknown_message_fields_and_top_level_fields_are_kept() -> None:
    result = _result(
        [
            _line({"content": "a", "images": ["aW1n"]}),
            _line({"content": "", "images": ["aW1o"]}, done=True, done_reason="stop", extra_stat=5),
        ]
    )
    text, field = result.blocks
    assert text == TextBlock("a")
    assert isinstance(field, UnknownBlock)
    assert field.raw == {"type": "ollama.field", "field": "images", "value": [["aW1n"], ["aW1o"]]}
    assert result.finish is not None
    (payload,) = result.finish.payloads
    assert isinstance(payload.value, dict) and payload.value["extra_stat"] == 5


def test_eof_before_done_emits_nothing_so_the_stream_stays_incomplete() -> None:
    parser = SHAPE.new_parser(OLLAMA)
    assert parser.message("", _line({"content": "partial"}))[-1] == TextDelta("text-1", "partial")
    assert (parser.eof(), parser.done) == ((), False)


def test_a_mid_stream_error_line_raises_a_typed_error() -> None:
    parser = SHAPE.new_parser(OLLAMA)
    parser.message("", _line({"content": "a"}))
    with pytest.raises(ProviderStreamError) as caught:
        parser.message("", '{"error":"an error was encountered while running the model"}')
    assert caught.value.provider_message == "an error was encountered while running the model"
    assert caught.value.retryable is False


@pytest.mark.parametrize(
    ("line", "message", "retryable"),
    [
        ('{"model": "m", "message": ', "ollama line 1 data is not JSON", True),
        ("[1]", "ollama line 1 data is not a JSON object", False),
        (_line({"content": 5}), "ollama line 1: message.content is not a string", False),
        (_line({"tool_calls": [{"function": {}}]}), "ollama line 1: tool call has no name", False),
        (_line({}, done="yes"), "ollama line 1: 'done' is not a boolean", False),
        (_line({}, done=True, eval_count=-1), "ollama line 1: eval_count is not a count", False),
    ],
)
def test_bad_lines_raise_malformed_naming_the_problem(
    line: str, message: str, retryable: bool
) -> None:
    with pytest.raises(MalformedStreamError) as caught:
        SHAPE.new_parser(OLLAMA).message("", line)
    assert str(caught.value).startswith(message)
    assert caught.value.retryable is retryable


def test_a_line_after_done_is_malformed() -> None:
    parser = SHAPE.new_parser(OLLAMA)
    parser.message("", _line({"content": "a"}, **FINAL))
    with pytest.raises(
        MalformedStreamError, match="ollama line: frame 2 arrived after the response finished"
    ):
        parser.message("", _line({"content": "b"}))


def test_a_non_streaming_body_gives_the_same_chunks_as_one_line() -> None:
    body = _line({"content": "Hi", "thinking": "t"}, **FINAL)
    assert SHAPE.parse_response(body.encode(), OLLAMA) == _parse([body])
    with pytest.raises(MalformedStreamError, match="not done"):
        SHAPE.parse_response(_line({"content": "Hi"}).encode(), OLLAMA)
    with pytest.raises(ProviderStreamError, match=r"^ollama stream error: model runner stopped$"):
        SHAPE.parse_response(b'{"error": "model runner stopped"}', OLLAMA)


def test_a_non_streaming_body_that_is_not_utf8_is_malformed_not_replaced() -> None:
    body = _line({"content": "caf\u00e9"}, **FINAL).encode().replace(b"caf", b"c\xe9f")
    at = body.index(b"\xe9")
    with pytest.raises(MalformedStreamError) as info:
        SHAPE.parse_response(body, OLLAMA)
    assert info.value.message == (
        f"ollama response body is not valid UTF-8 (byte 0xe9 at offset {at})"
    )
    assert (info.value.retryable, info.value.body) == (True, body)


# -- errors -------------------------------------------------------------------


def test_http_errors_are_typed_by_status_and_wording() -> None:
    missing = SHAPE.classify_error(404, {}, b'{"error":"model \'q\' not found"}')
    assert type(missing) is NotFoundError
    assert (missing.message, missing.status, missing.provider_message) == (
        "ollama 404 error: model 'q' not found",
        404,
        "model 'q' not found",
    )
    limited = SHAPE.classify_error(429, {"retry-after": "7"}, b'{"error":"busy"}')
    # The hint is the driver's to stamp, once, for every shape.
    assert type(limited) is RateLimitError and limited.retry_after is None
    crashed = SHAPE.classify_error(500, {}, b"upstream died")
    assert type(crashed) is ServerError and crashed.message == "ollama 500 error: upstream died"
    big = SHAPE.classify_error(400, {}, b'{"error":"input exceeds the context window"}')
    assert type(big) is ContextWindowError


# -- encoder ------------------------------------------------------------------


def _encode(messages: list[Message], **kw: Any) -> Any:
    return SHAPE.encode_request(ModelRequest(MODEL, tuple(messages), **kw), provider=OLLAMA)


def test_a_plain_request_with_options_tools_and_think() -> None:
    encoded = _encode(
        [Message.user("Hi")],
        system="Be brief.",
        tools=(ToolSpec("weather", "Weather", {"type": "object", "properties": {}}),),
        options=GenerationOptions(
            max_tokens=64,
            temperature=0.5,
            top_p=0.9,
            stop=("END",),
            reasoning=ReasoningOptions(effort="high"),
            extra={"keep_alive": "5m"},
        ),
    )
    assert (encoded.path, encoded.stream, encoded.dropped) == ("/api/chat", True, ())
    assert encoded.body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "stream": True,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Weather",
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        ],
        "options": {"num_predict": 64, "temperature": 0.5, "top_p": 0.9, "stop": ["END"]},
        "think": "high",
        "keep_alive": "5m",
    }


@pytest.mark.parametrize(
    ("reasoning", "think", "dropped"),
    [
        (ReasoningOptions(), True, ()),
        (ReasoningOptions(effort="none"), False, ()),
        (ReasoningOptions(effort="low"), "low", ()),
        (
            ReasoningOptions(budget_tokens=100),
            True,
            (
                Drop(
                    "options.reasoning.budget_tokens",
                    "budget_tokens",
                    UNSUPPORTED,
                    "Ollama takes no thinking budget",
                ),
            ),
        ),
    ],
)
def test_reasoning_options_become_think(
    reasoning: ReasoningOptions, think: object, dropped: tuple[Drop, ...]
) -> None:
    encoded = _encode([Message.user("x")], options=GenerationOptions(reasoning=reasoning))
    assert (encoded.body["think"], encoded.dropped) == (think, dropped)


def test_native_replay_sends_thinking_and_tool_calls_back_and_results_name_the_tool() -> None:
    lines = [
        _line({"content": "", "thinking": "Need it."}),
        _line(
            {
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_9",
                        "function": {"index": 0, "name": "run", "arguments": {"a": [1]}},
                    }
                ],
            }
        ),
        _line({"content": ""}, **FINAL),
    ]
    first = _result(lines)
    call = first.blocks[1]
    assert isinstance(call, ToolCallBlock)
    result = Message(role="user", content=(ToolResultBlock(call.id, "ok"),), source="tool")
    encoded = _encode([Message.user("go"), first.to_message(), result])
    assert encoded.body["messages"] == [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "thinking": "Need it.",
            "tool_calls": [
                {"id": "call_9", "function": {"index": 0, "name": "run", "arguments": {"a": [1]}}}
            ],
        },
        {"role": "tool", "content": "ok", "tool_name": "run", "tool_call_id": "call_9"},
    ]
    assert encoded.dropped == ()


def test_a_synthesized_call_id_is_not_sent_back() -> None:
    first = _result(
        [
            _line({"content": "", "tool_calls": [{"function": {"name": "a", "arguments": {}}}]}),
            _line({"content": ""}, **FINAL),
        ]
    )
    wire, dropped = assistant_wire(first.to_message(), OLLAMA)
    assert (wire, dropped) == (
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "a", "arguments": {}}}],
        },
        [],
    )


def test_portable_replay_keeps_text_calls_and_hosted_lines_and_reports_the_rest() -> None:
    foreign = Message(
        role="assistant",
        content=(
            ReasoningBlock(
                "secret", payloads=(ProviderPayload(ProviderId("anthropic"), "sig", None, "s"),)
            ),
            HostedActivity(id="h1", name="web_search", state="completed", summary="3 results"),
            TextBlock("Answer."),
            ToolCallBlock("c1", "f", '{"x":1}'),
            ToolCallBlock("c2", "g", "not json"),
        ),
        provider=ProviderId("anthropic"),
    )
    wire, dropped = assistant_wire(foreign, OLLAMA)
    assert wire == {
        "role": "assistant",
        "content": "[hosted web_search: completed, 3 results]\nAnswer.",
        "tool_calls": [
            {"id": "c1", "function": {"name": "f", "arguments": {"x": 1}}},
            {"id": "c2", "function": {"name": "g", "arguments": {}}},
        ],
    }
    assert dropped == [
        Drop("content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
        Drop("content[4]", "arguments", INVALID, "tool call c2: not a JSON object; sent {}"),
    ]


def test_hosted_tools_and_tool_choice_are_reported() -> None:
    hosted = _encode([Message.user("x")], hosted_tools=(WebSearch(),))
    assert "tools" not in hosted.body
    assert hosted.dropped == (
        Drop(
            "hosted_tools[0]",
            "web_search",
            UNSUPPORTED,
            "Ollama's /api/chat has no hosted web_search",
        ),
    )
    encoded = _encode([Message.user("x")], options=GenerationOptions(tool_choice="required"))
    assert encoded.dropped == (
        Drop("options.tool_choice", "tool_choice", UNSUPPORTED, "'required': Ollama takes none"),
    )


def test_non_streaming_request_says_stream_false() -> None:
    encoded = SHAPE.encode_request(
        ModelRequest(MODEL, (Message.user("x"),)), provider=OLLAMA, stream=False
    )
    assert (encoded.body["stream"], encoded.stream) == (False, False)


def test_inspect_detects_the_shape_by_path_and_by_payload() -> None:
    from elelem.cli.inspect import detect_shape
    from elelem.recordings.cassettes import Interaction, RecordedRequest, RecordedResponse

    body = (_line({"content": "a"}) + "\n").encode()
    response = RecordedResponse(200, {"content-type": "application/x-ndjson"}, body, True)
    by_payload = Interaction(0, None, response)
    by_path = Interaction(0, RecordedRequest("POST", "/api/chat"), response)
    assert (detect_shape(by_payload), detect_shape(by_path)) == ("ollama_native", "ollama_native")
