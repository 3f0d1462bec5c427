"""A stock ``useChat`` backend in ``elelem serve`` (``POST /api/ui-chat``),
read by the AI SDK's own client code: ``DefaultChatTransport`` and
``readUIMessageStream`` of the real ``ai`` 6 and ``ai`` 7 packages
(tests/web_node; ai 7 under Node 22), every message checked by the
package's ``validateUIMessages``.

A deferred call arrives as ``tool-approval-request``; the page's answer
(the tool part ``approval-responded``, as ``addToolApprovalResponse``
writes it) resumes the run: an approved call runs once and its output and
the answer continue the same message, a refused one is
``tool-output-denied``.  A real uvicorn server on 127.0.0.1 and a loopback
Anthropic provider speaking the Messages API's streamed events
(https://docs.anthropic.com/en/api/messages-streaming)."""

from __future__ import annotations

import copy
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

import elelem
from elelem.conversation import Conversation, SQLiteStore, Store
from elelem.errors import DecodeError
from elelem.stream import Assembler, Chunk
from elelem.stream.chunks import BlockEnd, BlockStart, Finish, Hosted, ResponseStart, TextDelta
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply
from elelem.vocabulary import (
    ActivityId,
    FileSource,
    HostedActivity,
    ImageBlock,
    Part,
    ProviderId,
    UnknownBlock,
)
from elelem.web import AwaitingApproval, UIMessageStreamResponse
from elelem.web.app import create_app
from elelem.web.messages import approvals_from_ui, messages_from_ui
from toolloop_wires import WIRES, anthropic_calls, anthropic_text
from web_helpers import ai7_reader_ready, ai_reader_ready, read_with_ai

TOKEN = "usechat-token-0123456789abcdef"
ANTHROPIC = WIRES[0]
CALL = "toolu_charge_7"
REFUSED = "refused: the user did not approve this call"
ran: list[int] = []
seen: list[dict[str, Any]] = []


@elelem.tool
def charge(amount: int) -> str:
    """Charge the card."""
    ran.append(amount)
    return f"charged {amount}"


def answer(request: RecordedRequest) -> Reply:
    """A call of charge; once its result is sent, the answer naming it."""
    body = json.loads(request.body)
    seen.append(body)
    results = [
        block["content"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    if results:
        return anthropic_text(f"Done: {results[0]}.")
    if "just talk" in json.dumps(body["messages"]):
        return anthropic_text("Talking.")
    return anthropic_calls([(CALL, "charge", {"amount": 42})])


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(answer, lifetime=300) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "log.db")


@pytest.fixture(params=[pytest.param("ai", marks=pytest.mark.slow), "ai7"])
def reader(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(node, package): ai 7 under Node 22; ai 6 under the machine's Node
    in the slow run (test_ui_chunks.py reads ai 6 in the default run)."""
    package = str(request.param)
    return (ai7_reader_ready() if package == "ai7" else ai_reader_ready()), package


def serving(store: Store, provider: LoopbackServer) -> ASGIServer:
    def client() -> elelem.Client:
        return elelem.Client(env=ANTHROPIC.env(provider))

    app = create_app(
        store, token=TOKEN, model=ANTHROPIC.model, client=client, models=[], tools=[charge]
    )
    return ASGIServer(app)


USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "charge 42"}]}
APPROVAL_REQUESTED = {
    "type": "tool-charge",
    "toolCallId": CALL,
    "state": "approval-requested",
    "input": {"amount": 42},
    "approval": {"id": CALL},
}


APPROVED = [
    {"type": "step-start"},
    {
        "type": "tool-charge",
        "toolCallId": CALL,
        "state": "output-available",
        "input": {"amount": 42},
        "output": "charged 42",
        "approval": {"id": CALL, "approved": True},
    },
    {"type": "step-start"},
    {"type": "text", "text": "Done: charged 42.", "state": "done"},
]
"""The message's parts once the approved call ran and the model answered."""


def answered(message: dict[str, Any], approved: bool) -> dict[str, Any]:
    """``message`` as ``addToolApprovalResponse`` leaves it."""
    out = copy.deepcopy(message)
    for part in out["parts"]:
        if part.get("state") == "approval-requested":
            part["state"] = "approval-responded"
            part["approval"] = {**part["approval"], "approved": approved}
    return out


def post(reader: tuple[str, str], url: str, history: list[Any]) -> dict[str, Any]:
    """``history`` posted to ``url`` and read by ``reader``'s ``ai`` package."""
    node, package = reader
    body = {"aiVersion": 7 if package == "ai7" else 6}  # the stream the page reads
    (got,) = read_with_ai(node, [{"url": url, "body": body, "messages": history}], package)
    return got


def test_an_approval_is_requested_and_an_approved_call_runs_once(
    store: Store, provider: LoopbackServer, reader: tuple[str, str]
) -> None:
    ran.clear()
    with serving(store, provider) as server:
        url = f"{server.url}/api/ui-chat?token={TOKEN}"
        asked = post(reader, url, [USER])
        assert asked["errors"] == [] and asked["invalid"] is None
        assert asked["status"]["code"] == 200
        first = asked["message"]
        assert first["parts"] == [{"type": "step-start"}, APPROVAL_REQUESTED]
        assert first["metadata"]["finishReason"] == "tool-calls"
        assert [c for c in asked["chunks"] if c["type"] == "tool-approval-request"] == [
            {"type": "tool-approval-request", "approvalId": CALL, "toolCallId": CALL}
        ]
        assert ran == []
        history = [USER, answered(first, True)]
        went_on = post(reader, url, history)
        # A replayed answer: the run waits for nothing any more, nothing runs.
        again = post(reader, url, history)
    assert went_on["errors"] == [] and went_on["invalid"] is None
    assert went_on["message"]["parts"] == APPROVED
    assert went_on["message"]["metadata"]["finishReason"] == "stop"
    assert ran == [42]
    assert again["status"]["code"] == 409
    assert ran == [42]


def test_a_refused_call_is_denied_and_never_runs(
    store: Store, provider: LoopbackServer, reader: tuple[str, str]
) -> None:
    ran.clear()
    with serving(store, provider) as server:
        url = f"{server.url}/api/ui-chat?token={TOKEN}"
        asked = post(reader, url, [USER])
        went_on = post(reader, url, [USER, answered(asked["message"], False)])
    assert went_on["errors"] == [] and went_on["invalid"] is None
    assert [c for c in went_on["chunks"] if c["type"].startswith("tool-")] == [
        {"type": "tool-output-denied", "toolCallId": CALL}
    ]
    assert went_on["message"]["parts"] == [
        {"type": "step-start"},
        {
            "type": "tool-charge",
            "toolCallId": CALL,
            "state": "output-denied",
            "input": {"amount": 42},
            "approval": {"id": CALL, "approved": False},
        },
        {"type": "step-start"},
        {"type": "text", "text": f"Done: {REFUSED}.", "state": "done"},
    ]
    assert ran == []


def test_bad_answers_are_refused_before_anything_is_stored(
    store: Store, provider: LoopbackServer
) -> None:
    asked_for = {"role": "assistant", "parts": [{"type": "step-start"}, APPROVAL_REQUESTED]}
    wrong = answered(asked_for, True)
    wrong["parts"][1]["approval"]["id"] = "someone-else"
    with serving(store, provider) as server:
        url = f"{server.url}/api/ui-chat?token={TOKEN}"
        first = _post_raw(url, {"id": "c1", "messages": [USER]})
        (conv_id,) = [c.id for c in store.list_conversations()]
        before = len(Conversation.open(store, conv_id).events)
        got = [
            _post_raw(url, {"id": "c1", **body})
            for body in (
                {"messages": [USER, asked_for]},
                {"messages": [USER, wrong]},
                {"messages": [USER], "model": "nosuch:model"},
                {"messages": [USER], "aiVersion": 5},
            )
        ]
    assert first[0] == 200 and '"type":"tool-approval-request"' in first[1]
    assert got[:2] == [
        (400, f"cannot resume: calls await approval: {CALL} (charge); "
         "give approvals={id: True or False}"),
        (400, f"bad chat request: approval id 'someone-else' is not the call's id {CALL!r} "
         "(at $.messages[-1].parts[1].approval.id)"),
    ]  # fmt: skip
    assert [code for code, _ in got[2:]] == [400, 400]
    assert len(Conversation.open(store, conv_id).events) == before
    assert [c.id for c in store.list_conversations()] == [conv_id]


def test_approvals_from_ui_reads_only_answered_parts() -> None:
    message = {"role": "assistant", "parts": [{"type": "step-start"}, APPROVAL_REQUESTED]}
    assert approvals_from_ui(message) == {}
    assert approvals_from_ui(answered(message, False)) == {CALL: False}
    bad = answered(message, True)
    bad["parts"][1]["approval"]["approved"] = "yes"
    with pytest.raises(DecodeError, match="approved: true or false"):
        approvals_from_ui(bad)


# -- a file the provider holds, by its id (AI SDK 7's providerReference) ---------

PNG_URL = "data:image/png;base64,iVBORw0KGgo="


def test_a_file_part_with_a_provider_reference_is_sent_by_its_id(
    store: Store, provider: LoopbackServer
) -> None:
    part = {
        "type": "file",
        "mediaType": "image/png",
        "url": PNG_URL,
        "providerReference": {"anthropic": "file_011abc", "openai": "file-xyz"},
    }
    (held,) = messages_from_ui([{"role": "user", "parts": [part]}], provider="anthropic")
    block = held.content[0]
    assert isinstance(block, ImageBlock) and isinstance(block.source, FileSource)
    assert (block.source.file.provider, block.source.id) == ("anthropic", "file_011abc")
    # Another provider's model gets the bytes.
    (inline,) = messages_from_ui([{"role": "user", "parts": [part]}], provider="google")
    assert not isinstance(inline.content[0].source, FileSource)  # type: ignore[union-attr]
    # No URL to send: the reference is kept (another provider's wire reports it dropped).
    (kept,) = messages_from_ui(
        [{"role": "user", "parts": [{**part, "url": "", "providerReference": {"openai": "f-1"}}]}],
        provider="anthropic",
    )
    source = kept.content[0].source  # type: ignore[union-attr]
    assert isinstance(source, FileSource)
    assert (source.file.provider, source.id) == ("openai", "f-1")
    with pytest.raises(DecodeError, match="providerReference maps provider names"):
        messages_from_ui([{"role": "user", "parts": [{**part, "providerReference": {"a": 1}}]}])
    # Through the useChat route to the provider: the wire names the file id.
    seen.clear()
    user = {
        "id": "u2",
        "role": "user",
        "parts": [{"type": "text", "text": "just talk"}, part],
    }
    with serving(store, provider) as server:
        url = f"{server.url}/api/ui-chat?token={TOKEN}"
        status, _ = _post_raw(url, {"id": "c2", "messages": [user]})
    assert status == 200
    assert seen[-1]["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "file", "file_id": "file_011abc"},
    }


# -- the end of a stopped run, and a block no neutral part holds -----------------

P = ProviderId("anthropic")


async def _stopped() -> AsyncIterator[tuple[Chunk, tuple[Part, ...]]]:
    assembler = Assembler(P)
    chunks: list[Chunk] = [
        ResponseStart("msg_9", "claude-x", P),
        BlockStart(0, "text"),
        TextDelta(0, "partial"),
        BlockEnd(0),
        Finish("aborted", failure="stopped by the user"),
    ]
    for chunk in chunks:
        yield chunk, assembler.feed(chunk)
    yield None, (UnknownBlock({"type": "compaction", "encrypted_content": "SECRET-9"}),)  # type: ignore[misc]


def test_a_stopped_run_ends_with_abort_and_a_custom_part_for_an_unknown_block(
    reader: tuple[str, str],
) -> None:
    node, package = reader
    version: Literal[6, 7] = 7 if package == "ai7" else 6

    async def stopped(_request: Request) -> UIMessageStreamResponse:
        return UIMessageStreamResponse(_stopped(), ai_version=version)

    with ASGIServer(Starlette(routes=[Route("/x", stopped, methods=["POST"])])) as server:
        (got,) = read_with_ai(node, [{"url": server.url + "/x", "body": {}}], package)
    assert got["errors"] == [] and got["invalid"] is None
    assert "SECRET-9" not in json.dumps(got["chunks"])
    assert got["chunks"][-2:] == [
        {"type": "abort", "reason": "stopped by the user"},
        {
            "type": "finish",
            "finishReason": "interrupted" if version == 7 else "other",
            "messageMetadata": {"finishReason": "aborted"},
        },
    ]
    unknown = (
        {
            "type": "custom",
            "kind": "anthropic.compaction",
            "providerMetadata": {"elelem": {"type": "compaction"}},
        }
        if version == 7
        else {"type": "data-block", "data": {"type": "compaction"}}
    )
    assert got["message"]["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "partial", "state": "done"},
        unknown,
    ]
    assert got["message"]["metadata"] == {
        "provider": "anthropic",
        "model": "claude-x",
        "finishReason": "aborted",
    }


# -- a hosted tool's approval request (an OpenAI mcp_approval_request) ----------

MCP_REQUEST = HostedActivity(
    ActivityId("mcpr_1"),
    "mcp",
    "completed",
    {"approval": "requested", "name": "roll", "arguments": '{"sides": 6}', "server_label": "dice"},
)


async def _asks_for_mcp() -> AsyncIterator[tuple[Chunk, tuple[Part, ...]] | AwaitingApproval]:
    assembler = Assembler(ProviderId("openai"))
    chunks: list[Chunk] = [ResponseStart("resp_1", "gpt-x", ProviderId("openai"))]
    chunks += [Hosted(MCP_REQUEST), Finish("stop")]
    for chunk in chunks:
        yield chunk, assembler.feed(chunk)
    yield AwaitingApproval((), (MCP_REQUEST,))


def test_a_hosted_tools_approval_request_is_a_provider_executed_tool_part(
    reader: tuple[str, str],
) -> None:
    node, package = reader

    async def asks(_request: Request) -> UIMessageStreamResponse:
        return UIMessageStreamResponse(_asks_for_mcp(), ai_version=6)

    with ASGIServer(Starlette(routes=[Route("/x", asks, methods=["POST"])])) as server:
        (got,) = read_with_ai(node, [{"url": server.url + "/x", "body": {}}], package)
    assert got["errors"] == [] and got["invalid"] is None
    message = got["message"]
    assert message["parts"][-1] == {
        "type": "dynamic-tool",
        "toolName": "roll",
        "toolCallId": "mcpr_1",
        "state": "approval-requested",
        "input": {"sides": 6},
        "providerExecuted": True,
        "approval": {"id": "mcpr_1"},
    }
    assert [p["type"] for p in message["parts"]] == [
        "step-start",
        "data-hosted-activity",
        "dynamic-tool",
    ]
    assert approvals_from_ui(answered(message, True)) == {"mcpr_1": True}


def _post_raw(url: str, body: object) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_regenerate_sends_the_last_message_again_and_the_route_keeps_its_gate(
    store: Store, provider: LoopbackServer
) -> None:
    talk = {"id": "u3", "role": "user", "parts": [{"type": "text", "text": "just talk"}]}
    seen.clear()
    with serving(store, provider) as server:
        url = f"{server.url}/api/ui-chat"
        first = _post_raw(f"{url}?token={TOKEN}", {"id": "c9", "messages": [talk]})
        again = _post_raw(
            f"{url}?token={TOKEN}",
            {"id": "c9", "messages": [talk], "trigger": "regenerate-message"},
        )
        gated = _post_raw(url, {"id": "c9", "messages": [talk]})
        system = _post_raw(
            f"{url}?token={TOKEN}", {"id": "c9", "messages": [{**talk, "role": "system"}]}
        )
    assert first[0] == again[0] == 200
    assert '"delta":"Talking."' in again[1]
    assert gated[0] == 403
    assert system == (
        400,
        "bad chat request: the last message must be the user's or the assistant's",
    )
    # The retry was sent with the same question, once: the first turn is rewound.
    asked = [[m for m in body["messages"] if m["role"] == "user"] for body in seen]
    assert len(seen) == 2 and asked[0] == asked[1]
    (info,) = store.list_conversations()
    assert info.turns == 2


def test_parts_that_only_display_are_not_history() -> None:
    shown = {
        "role": "assistant",
        "parts": [
            {"type": "custom", "kind": "openai.compaction", "providerMetadata": {}},
            {"type": "reasoning-file", "mediaType": "image/png", "url": PNG_URL},
            {"type": "text", "text": "kept"},
        ],
    }
    (message,) = messages_from_ui([shown])
    assert [type(p).__name__ for p in message.content] == ["TextBlock"]
