"""The Bedrock Converse shape (decoded events), rule by rule, and over the
corpus's recorded reasoning stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from elelem.cli import main
from elelem.errors import (
    ContextWindowError,
    MalformedStreamError,
    ProviderStreamError,
    RateLimitError,
)
from elelem.recordings import cassettes
from elelem.shapes.bedrock_converse import SHAPE, assistant_wire
from elelem.stream import (
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
from elelem.transport.driver import stamp_error
from elelem.vocabulary import (
    Attribution,
    GenerationOptions,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    Usage,
    WebSearch,
)
from elelem.vocabulary.drop import FOREIGN_REASONING, UNSUPPORTED, Drop
from elelem.wire import ModelRequest

BEDROCK = ProviderId("bedrock")
RECORDING = (
    "vercel__ai/packages__amazon-bedrock__src____fixtures____amazon-bedrock-reasoning.chunks.txt"
)


def _events(*events: tuple[str, dict[str, Any]]) -> list[Chunk]:
    parser = SHAPE.new_parser(BEDROCK)
    out: list[Chunk] = []
    for name, body in events:
        out.extend(parser.message("", json.dumps({name: body})))
    out.extend(parser.eof())
    return out


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})


USAGE = {"inputTokens": 10, "outputTokens": 4, "cacheReadInputTokens": 2, "totalTokens": 16}


def test_reasoning_signature_text_tool_use_usage_and_finish() -> None:
    chunks = _events(
        ("messageStart", {"role": "assistant"}),
        _delta(0, {"reasoningContent": {"text": "Think."}}),
        _delta(0, {"reasoningContent": {"signature": "c2ln"}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        _delta(1, {"text": "Hi"}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
        ),
        _delta(2, {"toolUse": {"input": '{"a":'}}),
        _delta(2, {"toolUse": {"input": "1}"}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": USAGE, "metrics": {"latencyMs": 9}}),
    )
    assert chunks == [
        ResponseStart(provider=BEDROCK),
        BlockStart(0, "reasoning"),
        ReasoningDelta(0, "Think."),
        Payload(0, ProviderPayload(BEDROCK, "signature", None, "c2ln")),
        BlockEnd(0),
        BlockStart(1, "text"),
        TextDelta(1, "Hi"),
        BlockEnd(1),
        BlockStart(2, "tool-call", id="t1", name="f"),
        ToolCallDelta(2, '{"a":'),
        ToolCallDelta(2, "1}"),
        BlockEnd(2),
        UsageUpdate(Usage(input=10, output=4, cache_read=2, raw=USAGE)),
        Finish(
            "tool-calls",
            raw="tool_use",
            payloads=(
                ProviderPayload(BEDROCK, "bedrock.response", None, {"metrics": {"latencyMs": 9}}),
            ),
        ),
    ]


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "max-tokens"),
        ("guardrail_intervened", "content-filter"),
        ("model_context_window_exceeded", "model_context_window_exceeded"),
    ],
)
def test_stop_reason_maps_and_finish_waits_for_the_end_without_metadata(
    stop: str, reason: str
) -> None:
    final = _events(_delta(0, {"text": "x"}), ("messageStop", {"stopReason": stop}))[-1]
    assert final == Finish(reason, raw=stop)


def test_redacted_reasoning_citations_and_unknown_events_are_kept() -> None:
    result = assemble(
        _events(
            _delta(0, {"reasoningContent": {"redactedContent": "cmVk"}}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            _delta(1, {"text": "A"}),
            _delta(1, {"citation": {"title": "doc"}}),
            ("contentBlockStop", {"contentBlockIndex": 1}),
            ("futureEvent", {"x": 1}),
            ("messageStop", {"stopReason": "end_turn"}),
        ),
        BEDROCK,
    )
    redacted, text, unknown = result.blocks
    assert redacted == ReasoningBlock(
        "", payloads=(ProviderPayload(BEDROCK, "redacted", None, "cmVk"),)
    )
    assert text == TextBlock(
        "A",
        (
            Attribution(
                Source(title="doc"),
                replay=ProviderPayload(BEDROCK, "citation", None, {"title": "doc"}),
            ),
        ),
    )
    assert unknown.raw == {"type": "bedrock.event", "event": "futureEvent", "value": {"x": 1}}  # type: ignore[union-attr]


def test_exception_events_raise_typed_errors() -> None:
    parser = SHAPE.new_parser(BEDROCK)
    with pytest.raises(RateLimitError) as caught:
        parser.message("", json.dumps({"throttlingException": {"message": "Too many requests"}}))
    assert (caught.value.message, caught.value.retryable) == (
        "bedrock stream ThrottlingException: Too many requests",
        True,
    )
    with pytest.raises(ProviderStreamError):
        parser.message("modelStreamErrorException", json.dumps({"message": "boom"}))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"a": 1, "b": 2}', "bedrock event 1 is not a one-key event union (keys: a, b)"),
        (
            '{"contentBlockStop": {"contentBlockIndex": 3}}',
            "bedrock event 1: block 3 stops but never started",
        ),
        (
            '{"contentBlockDelta": {"delta": {"text": "x"}}}',
            "bedrock event 1: contentBlockIndex is not an integer",
        ),
        ('{"messageStop": {"stopReason": 3}}', "bedrock event 1: stopReason is not a string"),
    ],
)
def test_bad_events_are_malformed(data: str, message: str) -> None:
    with pytest.raises(MalformedStreamError) as caught:
        SHAPE.new_parser(BEDROCK).message("", data)
    assert str(caught.value) == message


def test_http_errors_follow_the_amzn_error_type() -> None:
    headers = {
        "x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/",
        "x-amzn-RequestId": "r1",
    }
    # The shape classifies; the driver stamps the request id from the headers.
    error = stamp_error(
        SHAPE.classify_error(400, headers, b'{"message":"Input is too long for requested model."}'),
        400,
        headers,
    )
    assert type(error) is ContextWindowError
    assert (error.message, error.request_id, error.provider_type) == (
        "bedrock 400 ValidationException: Input is too long for requested model.",
        "r1",
        "ValidationException",
    )


def test_a_whole_converse_response_maps_to_the_same_blocks() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "R", "signature": "s"}}},
                    {"text": "T"},
                    {"toolUse": {"toolUseId": "t", "name": "f", "input": {"q": 1}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
        "metrics": {"latencyMs": 5},
    }
    result = assemble(SHAPE.parse_response(json.dumps(body).encode(), BEDROCK), BEDROCK)
    assert result.blocks == (
        ReasoningBlock("R", payloads=(ProviderPayload(BEDROCK, "signature", None, "s"),)),
        TextBlock("T"),
        ToolCallBlock("t", "f", '{"q":1}'),
    )
    assert (result.finish_reason, result.usage.output if result.usage else None) == (
        "tool-calls",
        2,
    )
    wire, dropped = assistant_wire(result.to_message(), BEDROCK)
    assert (wire, dropped) == (body["output"]["message"], [])  # type: ignore[index]


def test_encoder_merges_user_turns_and_maps_options() -> None:
    call = ToolCallBlock("t", "f", "{}")
    request = ModelRequest(
        "anthropic.claude-sonnet-4:0",
        (
            Message.user("Go"),
            Message(
                role="assistant", content=(ReasoningBlock("r"), call), provider=ProviderId("openai")
            ),
            Message(
                role="user", content=(ToolResultBlock("t", "ok", is_error=True),), source="tool"
            ),
            Message.user("More"),
        ),
        system="Sys",
        tools=(ToolSpec("f", "", {"type": "object"}),),
        options=GenerationOptions(
            max_tokens=5, stop=("X",), reasoning=ReasoningOptions(budget_tokens=1024)
        ),
    )
    encoded = SHAPE.encode_request(request, provider=BEDROCK)
    assert encoded.path == "/model/anthropic.claude-sonnet-4%3A0/converse-stream"
    assert encoded.body == {
        "messages": [
            {"role": "user", "content": [{"text": "Go"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "t",
                            "content": [{"text": "ok"}],
                            "status": "error",
                        }
                    },
                    {"text": "More"},
                ],
            },
        ],
        "system": [{"text": "Sys"}],
        "inferenceConfig": {"maxTokens": 5, "stopSequences": ["X"]},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "f",
                        "description": "f",
                        "inputSchema": {"json": {"type": "object"}},
                    }
                }
            ]
        },
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }
    assert encoded.dropped == (
        Drop("messages[1].content[0]", "reasoning", FOREIGN_REASONING, "from openai"),
    )
    hosted = SHAPE.encode_request(
        ModelRequest("m", (), hosted_tools=(WebSearch(),)), provider=BEDROCK
    )
    assert hosted.dropped == (
        Drop(
            "hosted_tools[0]",
            "web_search",
            UNSUPPORTED,
            "'m': Converse grounds only Amazon Nova models on the web",
        ),
    )
    # On a Nova model, web search is Nova web grounding, a system tool
    # (https://docs.aws.amazon.com/nova/latest/userguide/grounding.html).
    nova = SHAPE.encode_request(
        ModelRequest("us.amazon.nova-premier-v1:0", (), hosted_tools=(WebSearch(max_uses=3),)),
        provider=BEDROCK,
    )
    assert nova.body["toolConfig"] == {"tools": [{"systemTool": {"name": "nova_grounding"}}]}
    assert [(d.where, d.what) for d in nova.dropped] == [("hosted_tools[0].max_uses", "max_uses")]


# -- corpus ---------------------------------------------------------------------


def test_the_recorded_reasoning_stream_keeps_every_artifact(corpus: Path) -> None:
    path = corpus / RECORDING
    if not path.exists():
        pytest.skip("recording not in this corpus")
    raw = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    deltas = [e["contentBlockDelta"]["delta"] for e in raw if "contentBlockDelta" in e]
    thinking = "".join(
        d["reasoningContent"].get("text", "") for d in deltas if "reasoningContent" in d
    )
    signatures = [
        d["reasoningContent"]["signature"]
        for d in deltas
        if "signature" in d.get("reasoningContent", {})
    ]
    text = "".join(d["text"] for d in deltas if "text" in d)
    usage = next(e["metadata"]["usage"] for e in raw if "metadata" in e)
    (interaction,) = cassettes.load(path).interactions
    parser = SHAPE.new_parser(BEDROCK)
    chunks: list[Chunk] = []
    for frame in cassettes.sse_frames(interaction.response.body):
        chunks.extend(parser.message(frame.event, frame.data))
    chunks.extend(parser.eof())
    result = assemble(chunks, BEDROCK)
    reasoning, answer = result.blocks
    assert isinstance(reasoning, ReasoningBlock) and isinstance(answer, TextBlock)
    assert (reasoning.text, answer.text) == (thinking, text)
    assert [p.value for p in reasoning.payloads if p.format == "signature"] == signatures
    assert len(signatures) == 1
    assert result.usage is not None and (
        result.usage.input,
        result.usage.output,
        result.usage.raw,
    ) == (
        51,
        94,
        usage,
    )
    assert result.finish is not None and (result.finish.reason, result.finish.raw) == (
        "stop",
        "end_turn",
    )
    assert result.finish.payloads[0].value == {
        "additionalModelResponseFields": {"delta": {"stop_sequence": None}},
        "metrics": {"latencyMs": 2281},
    }
    outcome = CliRunner().invoke(main, ["inspect", "--json", "--wire-replay", str(path)])
    assert outcome.exit_code == 0, outcome.output
    replay = json.loads(outcome.output.splitlines()[-1])
    assert replay["wire"]["content"][0]["reasoningContent"]["reasoningText"] == {
        "text": thinking,
        "signature": signatures[0],
    }


def test_a_start_kind_nobody_modelled_is_kept_on_its_block() -> None:
    start = {"image": {"format": "png"}}
    result = assemble(
        _events(
            ("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
            _delta(0, {"text": "A"}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("contentBlockStart", {"contentBlockIndex": 1, "start": start}),
            ("contentBlockStop", {"contentBlockIndex": 1}),
            ("messageStop", {"stopReason": "end_turn"}),
        ),
        BEDROCK,
    )
    kept = ProviderPayload(BEDROCK, "bedrock.deltas", None, [{"start": start}])
    assert result.blocks == (TextBlock("A", payloads=(kept,)), TextBlock("", payloads=(kept,)))
