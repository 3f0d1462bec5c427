"""Provider-hosted MCP as hosted activity: OpenAI Responses mcp_list_tools,
mcp_call and mcp_approval_request (answered with mcp_approval_response),
from constructed and recorded streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import corpus_root
from elelem.recordings import cassettes
from elelem.shapes.anthropic_messages import encoder as anthropic
from elelem.shapes.openai_responses import SHAPE
from elelem.shapes.openai_responses import encoder as responses
from elelem.stream import AssembledResponse, Assembler
from elelem.vocabulary import (
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    approval_response,
    awaits_approval,
)
from elelem.vocabulary.drop import EMPTY, UNSUPPORTED, Drop
from elelem.wire import ModelRequest

OPENAI = ProviderId("openai")


def parse(frames: list[dict]) -> AssembledResponse:  # type: ignore[type-arg]
    parser = SHAPE.new_parser(OPENAI)
    assembler = Assembler(OPENAI)
    assembler.feed_all(parser.open(200, {}))
    for frame in frames:
        assembler.feed_all(parser.message(frame["type"], json.dumps(frame)))
    assembler.feed_all(parser.eof())
    return assembler.result()


REQUEST_ITEM = {
    "id": "mcpr_1",
    "type": "mcp_approval_request",
    "arguments": '{"url":"https://x.dev/"}',
    "name": "shorten",
    "server_label": "zip",
}
CALL_ITEM = {
    "id": "mcp_2",
    "type": "mcp_call",
    "approval_request_id": "mcpr_1",
    "arguments": '{"url":"https://x.dev/"}',
    "error": None,
    "name": "shorten",
    "output": "https://zip/abc",
    "server_label": "zip",
}


def response(*items: dict, rid: str = "resp_1") -> list[dict]:  # type: ignore[type-arg]
    envelope = {
        "id": rid,
        "object": "response",
        "model": "gpt-5",
        "status": "in_progress",
        "output": [],
    }
    frames: list[dict] = [{"type": "response.created", "response": envelope}]  # type: ignore[type-arg]
    for n, item in enumerate(items):
        frames.append({"type": "response.output_item.added", "output_index": n, "item": item})
        frames.append({"type": "response.output_item.done", "output_index": n, "item": item})
    done = {**envelope, "status": "completed", "output": list(items),
            "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}  # fmt: skip
    frames.append({"type": "response.completed", "response": done})
    return frames


def test_an_approval_request_is_hosted_activity_that_awaits_the_caller() -> None:
    result = parse(response(REQUEST_ITEM))
    given = {"server_label": "zip", "name": "shorten", "arguments": '{"url":"https://x.dev/"}',
             "approval": "requested"}  # fmt: skip
    assert result.content == (
        HostedActivity("mcpr_1", "mcp", "started", given),  # type: ignore[arg-type]
        HostedActivity(
            "mcpr_1",  # type: ignore[arg-type]
            "mcp",
            "completed",
            given,
            "approval requested for shorten",
            ProviderPayload(OPENAI, "item", None, REQUEST_ITEM),
        ),
    )
    assert [awaits_approval(p) for p in result.content if isinstance(p, HostedActivity)] == [
        False,
        True,
    ]


def test_the_answer_replays_after_the_request_item_and_the_call_follows() -> None:
    first = parse(response(REQUEST_ITEM))
    asked = first.content[-1]
    assert isinstance(asked, HostedActivity)
    answer = Message("user", (approval_response(asked, True),), "tool")
    history = (
        Message.user("shorten it"),
        Message("assistant", first.content, provider=OPENAI),
        answer,
    )
    body = responses.encode_request(ModelRequest("gpt-5", history), provider=OPENAI).body
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "shorten it"}],
        },
        REQUEST_ITEM,
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    ]
    second = parse(response(CALL_ITEM, rid="resp_2"))
    call = second.content[-1]
    assert isinstance(call, HostedActivity)
    assert (call.state, call.summary) == ("completed", "called shorten")
    assert call.input == {"server_label": "zip", "name": "shorten",
                          "arguments": '{"url":"https://x.dev/"}', "approval_request_id": "mcpr_1"}  # fmt: skip
    assert not awaits_approval(call)


def test_a_refusal_carries_its_reason_and_other_wires_report_it_dropped() -> None:
    asked = parse(response(REQUEST_ITEM)).content[-1]
    assert isinstance(asked, HostedActivity)
    refusal = approval_response(asked, False, "not now")
    assert refusal.raw == {"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                           "approve": False, "reason": "not now"}  # fmt: skip
    history = (Message.user("x"), Message("user", (refusal,), "tool"))
    encoded = anthropic.encode_request(ModelRequest("c", history), provider=ProviderId("anthropic"))
    # Anthropic has no form for the Responses approval answer: reported, not sent.
    assert encoded.dropped == (
        Drop(
            "messages[1].content[0]",
            "mcp_approval_response",
            UNSUPPORTED,
            "Anthropic has no form for it",
        ),
        Drop("messages[1]", "message", EMPTY, "nothing left to send"),
    )


def _recording(name: str) -> Path:
    return corpus_root() / "vercel__ai" / name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "packages__openai__src__responses____fixtures____openai-mcp-tool-approval.1.chunks.txt",
            [
                "mcp:4 tools",
                "mcp:approval requested for create_short_url",
            ],
        ),
        (
            "packages__openai__src__responses____fixtures____openai-mcp-tool.1.chunks.txt",
            None,
        ),
    ],
)
def test_recorded_responses_mcp_streams(name: str, expected: list[str] | None) -> None:
    recording = cassettes.load(_recording(name))
    results = []
    for interaction in recording.interactions:
        parser = SHAPE.new_parser(OPENAI)
        assembler = Assembler(OPENAI)
        assembler.feed_all(parser.open(200, {}))
        for frame in cassettes.sse_frames(interaction.response.body):
            assembler.feed_all(parser.message(frame.event, frame.data))
        assembler.feed_all(parser.eof())
        results.append(assembler.result())
    done = [p for r in results for p in r.content if isinstance(p, HostedActivity) and p.terminal]
    wire = [line for line in Path(_recording(name)).read_text().splitlines()
            if '"response.output_item.done"' in line and '"type":"mcp' in line]  # fmt: skip
    assert len(done) == len(wire) > 0
    assert {p.name for p in done} == {"mcp"}
    if expected is not None:
        assert [f"{p.name}:{p.summary}" for p in done] == expected
        assert sum(awaits_approval(p) for p in done) == 1
