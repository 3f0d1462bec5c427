"""The turn API through the real client, driver and Anthropic shape, against
loopback servers: block-by-block commits, interruption, paused continuation,
the sync twin, and cross-provider continuation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem import Client, SyncClient
from elelem.conversation import (
    Conversation,
    Draft,
    HostedBody,
    MessageBody,
    ResponseRecord,
    SQLiteStore,
    TurnStart,
)
from elelem.errors import RateLimitError, TransportError
from elelem.testing.servers import (
    LoopbackServer,
    Reply,
    frame_ends,
    replay,
    reset_after,
    sse_body,
    stall,
    status,
)
from elelem.turns.drive import send, send_sync
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    Usage,
    WebSearch,
)

MODEL = "anthropic:claude-sonnet-4-5"
WIRE_MODEL = "claude-sonnet-4-5-20250929"
ANT = ProviderId("anthropic")
EVEREST = "https://en.wikipedia.org/wiki/Mount_Everest"
CITED = "Mount Everest is Earth's highest mountain above sea level"


def _ev(kind: str, **fields: Any) -> tuple[str, str]:
    return kind, json.dumps({"type": kind, **fields})


def web_frames(stop: str = "end_turn", msg_id: str = "msg_web_1") -> list[tuple[str, str]]:
    """A small Anthropic web-search answer: search, results, cited text."""
    return [
        _ev(
            "message_start",
            message={
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": WIRE_MODEL,
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        ),
        _ev(
            "content_block_start",
            index=0,
            content_block={
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {},
            },
        ),
        _ev(
            "content_block_delta",
            index=0,
            delta={"type": "input_json_delta", "partial_json": '{"query": "tallest mountain"}'},
        ),
        _ev("content_block_stop", index=0),
        _ev(
            "content_block_start",
            index=1,
            content_block={
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": [
                    {
                        "type": "web_search_result",
                        "title": "Mount Everest",
                        "url": EVEREST,
                        "encrypted_content": "ENC-1",
                        "page_age": None,
                    }
                ],
            },
        ),
        _ev("content_block_stop", index=1),
        _ev(
            "content_block_start",
            index=2,
            content_block={"type": "text", "text": "", "citations": []},
        ),
        _ev(
            "content_block_delta",
            index=2,
            delta={
                "type": "citations_delta",
                "citation": {
                    "type": "web_search_result_location",
                    "cited_text": CITED,
                    "url": EVEREST,
                    "title": "Mount Everest",
                    "encrypted_index": "EIDX-1",
                },
            },
        ),
        _ev(
            "content_block_delta",
            index=2,
            delta={"type": "text_delta", "text": "Everest is the tallest"},
        ),
        _ev(
            "content_block_delta",
            index=2,
            delta={"type": "text_delta", "text": " mountain, 8849 m."},
        ),
        _ev("content_block_stop", index=2),
        _ev(
            "message_delta",
            delta={"stop_reason": stop},
            usage={
                "input_tokens": 12,
                "output_tokens": 40,
                "server_tool_use": {"web_search_requests": 1},
            },
        ),
        _ev("message_stop"),
    ]


BODY = sse_body(web_frames())
ENDS = frame_ends(BODY)


def env_for(server: LoopbackServer) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


def with_request_id(reply: Reply, rid: str) -> Reply:
    return Reply(reply.status, {**reply.headers, "request-id": rid}, reply.script)


def kinds(conv: Conversation) -> list[tuple[str, int | None]]:
    return [(e.kind, e.response) for e in conv.events]


ANSWER_KINDS = [
    ("turn-start", None),
    ("message", None),
    ("hosted", 1),
    ("hosted", 1),
    ("message", 1),
    ("response", 1),
]
"""The log of one turn answered by :func:`web_frames`, as ``kinds`` shows it."""


def kept_first_text(conv: Conversation) -> ResponseRecord:
    """Check the log of a turn interrupted right after the first text delta
    of :func:`web_frames`: the search, then the cited text so far marked
    incomplete; return the aborted response's record."""
    assert kinds(conv) == ANSWER_KINDS
    (text,) = conv.events[4].body.content
    assert (text.text, text.complete, text.attributions[0].complete) == (
        "Everest is the tallest",
        False,
        False,
    )
    record: ResponseRecord = conv.events[5].body
    assert (record.finish, record.complete) == ("aborted", False)
    return record


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "turns.db")
    yield s  # type: ignore[misc]
    s.close()


def test_a_turn_interrupted_mid_stream_keeps_received_text_and_citations_marked_incomplete(
    store: SQLiteStore,
) -> None:
    async def main() -> Conversation:
        # The connection resets right after the first text delta of the cited block.
        with LoopbackServer([reset_after(BODY, ENDS[8])]) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                with pytest.raises(TransportError, match="the connection broke"):
                    await send(conv, client, MODEL, "How tall is the tallest mountain?")
                return conv

    conv = asyncio.run(main())
    reloaded = Conversation.open(store, conv.id)
    assert reloaded.events == conv.events
    assert kinds(reloaded) == ANSWER_KINDS
    text = reloaded.events[4].body
    assert text.content == (
        TextBlock(
            "Everest is the tallest",
            (
                Attribution(
                    Source(EVEREST, "Mount Everest"),
                    CITED,
                    None,
                    text.content[0].attributions[0].replay,
                    complete=False,
                ),
            ),
            (),
            complete=False,
        ),
    )
    assert text.content[0].attributions[0].replay.value["encrypted_index"] == "EIDX-1"
    assert [e.body.activity.state for e in reloaded.events[2:4]] == ["started", "completed"]
    record = reloaded.events[5].body
    assert (record.finish, record.complete, record.response_id, record.model) == (
        "aborted",
        False,
        "msg_web_1",
        WIRE_MODEL,
    )
    assert record.error.startswith("transport: the connection broke after ")
    assert reloaded.turns()[0].end == "interrupted"
    assert reloaded.diagnostics().incomplete == (reloaded.events[4].id,)


def test_each_block_is_committed_as_it_flushes_and_the_turn_returns_its_result(
    store: SQLiteStore,
) -> None:
    seen_mid_stream: list[list[str]] = []

    async def probe(conv_id: str) -> None:
        # Inside the server's stall, once the two blocks before it were
        # committed (polled, so a loaded machine is given the time it needs).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 1.6
        while True:
            await asyncio.sleep(0.02)
            with SQLiteStore(store.path) as other:
                kinds = [e.kind for e in other.load(conv_id)]  # type: ignore[arg-type]
            if len(kinds) >= 4 or loop.time() > deadline:
                seen_mid_stream.append(kinds)
                return

    async def main() -> Any:
        reply = with_request_id(stall(BODY, ENDS[6], 2.0), "req_abc")
        with LoopbackServer([reply]) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                task = asyncio.create_task(probe(conv.id))
                result = await send(
                    conv, client, MODEL, "How tall?", hosted_tools=(WebSearch(max_uses=3),)
                )
                await task
                sent = json.loads(server.requests[0].body)
                return conv, result, sent

    conv, result, sent = asyncio.run(main())
    assert seen_mid_stream == [["turn-start", "message", "hosted", "hosted"]]
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "How tall?"}]}
    ]
    assert sent["tools"][0]["type"].startswith("web_search_")
    assert kinds(conv) == ANSWER_KINDS
    assert conv.events[0].body == TurnStart("user", MODEL)
    assert (result.turn, result.end, result.finish, result.text) == (
        1,
        "completed",
        "stop",
        "Everest is the tallest mountain, 8849 m.",
    )
    assert result.usage == Usage(12, 40, hosted={"web_search": 1})
    (record,) = result.responses
    assert (record.provider, record.model, record.response_id, record.request_id) == (
        ANT,
        WIRE_MODEL,
        "msg_web_1",
        "req_abc",
    )
    assert (record.finish, record.finish_raw, record.complete, record.continuation) == (
        "stop",
        "end_turn",
        True,
        0,
    )
    (message,) = result.messages
    assert (message.provider, message.model) == (ANT, WIRE_MODEL)
    assert [type(p).__name__ for p in message.content] == [
        "HostedActivity",
        "HostedActivity",
        "TextBlock",
    ]
    assert store.info(conv.id).title == "How tall?"


def test_a_paused_turn_continues_automatically_each_continuation_its_own_response(
    store: SQLiteStore,
) -> None:
    paused = sse_body(web_frames("pause_turn", "msg_p1"))
    final = sse_body(web_frames("end_turn", "msg_p2"))

    async def main() -> Any:
        with LoopbackServer([replay(paused), replay(final)]) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                result = await send(conv, client, MODEL, "Search a lot")
                return conv, result, [json.loads(r.body) for r in server.requests]

    conv, result, requests = asyncio.run(main())
    assert len(requests) == 2
    # The continuation replays the paused assistant message, natively, last.
    last = requests[1]["messages"][-1]
    assert last["role"] == "assistant"
    assert [b["type"] for b in last["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert last["content"][1]["content"][0]["encrypted_content"] == "ENC-1"
    assert last["content"][2]["citations"][0]["encrypted_index"] == "EIDX-1"
    assert [(r.response_id, r.finish, r.continuation) for r in result.responses] == [
        ("msg_p1", "paused", 0),
        ("msg_p2", "stop", 1),
    ]
    # Each response names the last event its request was built from: the user
    # message, then the paused response's record.
    by_id = {e.id: e for e in conv.events}
    assert [by_id[r.request].kind for r in result.responses] == ["message", "response"]
    assert by_id[result.responses[0].request].body.content == (TextBlock("Search a lot"),)
    assert by_id[result.responses[1].request].body.response_id == "msg_p1"
    assert result.end == "completed"
    assert result.usage == Usage(24, 80, hosted={"web_search": 2})
    assert [e.response for e in conv.events if e.kind == "response"] == [1, 2]
    assert len(result.messages) == 2


def test_the_continuation_bound_stops_a_turn_that_keeps_pausing(store: SQLiteStore) -> None:
    paused = sse_body(web_frames("pause_turn"))

    async def main(bound: int) -> Any:
        with LoopbackServer([replay(paused)] * 3) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                result = await send(conv, client, MODEL, "go", max_continuations=bound)
                return result, len(server.requests)

    result, sent = asyncio.run(main(0))
    assert (result.end, sent, len(result.responses)) == ("paused", 1, 1)
    result, sent = asyncio.run(main(2))
    assert (result.end, sent, len(result.responses)) == ("max-continuations", 3, 3)


def test_an_http_error_is_recorded_against_the_turn_and_raised(store: SQLiteStore) -> None:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'

    async def main() -> Conversation:
        reply = status(429, body, headers={"retry-after": "7"})
        with LoopbackServer([reply]) as server:
            async with Client(env=env_for(server), max_retries=0) as client:
                conv = Conversation.create(store)
                with pytest.raises(RateLimitError) as info:
                    await send(conv, client, MODEL, "hi")
                assert info.value.retry_after == 7
                return conv

    conv = asyncio.run(main())
    assert kinds(conv) == [("turn-start", None), ("message", None), ("response", 1)]
    record = conv.events[-1].body
    assert (record.finish, record.complete, record.response_id) == ("aborted", False, None)
    assert record.error.startswith("rate-limit: ")


def test_the_sync_twin_commits_the_same_events(store: SQLiteStore) -> None:
    with (
        LoopbackServer([replay(BODY, chunk_size=50)]) as server,
        SyncClient(env=env_for(server)) as client,
    ):
        conv = Conversation.create(store)
        result = send_sync(conv, client, MODEL, "How tall?")
    assert result.text == "Everest is the tallest mountain, 8849 m."
    assert kinds(conv) == ANSWER_KINDS
    assert Conversation.open(store, conv.id).history() == conv.history()


def test_a_conversation_begun_on_another_provider_sends_no_foreign_payload(
    store: SQLiteStore,
) -> None:
    oa = ProviderId("openai")
    conv = Conversation.create(store)
    conv.start_turn(model="openai:gpt-5")
    conv.add_user("Find the tallest mountain")
    r = conv.next_response()
    search = HostedActivity(ActivityId("ws_1"), "web_search", "started", {"query": "tallest"})
    conv.append(
        Draft.of(
            MessageBody(
                "assistant",
                (
                    ReasoningBlock(
                        "", (ProviderPayload(oa, "encrypted_reasoning", None, "OA-SECRET-1"),)
                    ),
                ),
                "assistant",
                oa,
                "gpt-5",
            ),
            turn=1,
            response=r,
        ),
        Draft.of(HostedBody(search, oa, "gpt-5"), turn=1, response=r),
        Draft.of(
            HostedBody(
                search.transition(
                    "completed",
                    summary="3 results",
                    payload=ProviderPayload(oa, "item", None, "OA-SECRET-2"),
                ),
                oa,
                "gpt-5",
            ),
            turn=1,
            response=r,
        ),
        Draft.of(
            MessageBody(
                "assistant",
                (
                    TextBlock(
                        "Everest.",
                        (
                            Attribution(
                                Source(EVEREST, "Everest"),
                                replay=ProviderPayload(oa, "url_citation", None, "OA-SECRET-3"),
                            ),
                        ),
                        (ProviderPayload(oa, "item_id", None, "OA-SECRET-4"),),
                    ),
                ),
                "assistant",
                oa,
                "gpt-5",
            ),
            turn=1,
            response=r,
        ),
        Draft.of(ResponseRecord(oa, "gpt-5", "resp_1", finish="stop"), turn=1, response=r),
    )

    async def main() -> bytes:
        with LoopbackServer([replay(BODY)]) as server:
            async with Client(env=env_for(server)) as client:
                await send(conv, client, MODEL, "And in metres?")
                return server.requests[0].body

    sent = asyncio.run(main())
    assert b"OA-SECRET" not in sent
    messages = json.loads(sent)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "Everest." in json.dumps(messages[1])
    # The new turn's own content is Anthropic's and keeps its payloads.
    assert conv.history()[-1].provider == ANT


def test_the_system_prompt_is_recorded_and_kept_for_later_turns(store: SQLiteStore) -> None:
    async def main() -> list[Any]:
        with LoopbackServer([replay(BODY)] * 3) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                await send(conv, client, MODEL, "one", system="Answer in metres.")
                await send(conv, client, MODEL, "two")
                await send(conv, client, MODEL, "three", system="")
                return [json.loads(r.body).get("system") for r in server.requests], conv

    systems, conv = asyncio.run(main())
    assert systems == ["Answer in metres.", "Answer in metres.", None]
    starts = [e.body for e in conv.events if e.kind == "turn-start"]
    assert [t.system for t in starts] == ["Answer in metres.", "Answer in metres.", None]


def test_a_cancelled_turn_keeps_what_arrived(store: SQLiteStore) -> None:
    async def main() -> Conversation:
        # The server goes silent mid-text; the caller gives up (Ctrl-C in a CLI).
        with LoopbackServer([stall(BODY, ENDS[8], 5.0)]) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                task = asyncio.create_task(send(conv, client, MODEL, "How tall?"))
                while not any(e.kind == "hosted" for e in store.load(conv.id)):
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                return conv

    conv = asyncio.run(main())
    assert kept_first_text(conv).error == "cancelled"


def test_a_turn_that_cannot_be_sent_leaves_the_log_untouched(store: SQLiteStore) -> None:
    from elelem.errors import ConfigError

    async def main() -> None:
        env = {"ELELEM_CONFIG": "/nonexistent/elelem.toml"}  # no ANTHROPIC_API_KEY
        async with Client(env=env) as client:
            conv = Conversation.create(store)
            with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
                await send(conv, client, MODEL, "hello")
            with pytest.raises(ConfigError, match="nosuch"):
                await send(conv, client, "nosuch:model", "hello")
            assert conv.events == () and store.load(conv.id) == ()

    asyncio.run(main())
    with SyncClient(env={"ELELEM_CONFIG": "/nonexistent/elelem.toml"}) as client:
        conv = Conversation.create(store)
        with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
            send_sync(conv, client, MODEL, "hello")
        assert store.load(conv.id) == ()


def tool_frames() -> list[tuple[str, str]]:
    return [
        _ev(
            "message_start",
            message={
                "id": "msg_tool",
                "type": "message",
                "role": "assistant",
                "model": WIRE_MODEL,
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        ),
        _ev(
            "content_block_start",
            index=0,
            content_block={"type": "tool_use", "id": "toolu_1", "name": "height", "input": {}},
        ),
        _ev(
            "content_block_delta",
            index=0,
            delta={"type": "input_json_delta", "partial_json": '{"peak": "Everest"}'},
        ),
        _ev("content_block_stop", index=0),
        _ev("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 9}),
        _ev("message_stop"),
    ]


def test_a_tool_call_answered_in_the_next_turn_reaches_the_model(store: SQLiteStore) -> None:
    from elelem.vocabulary import CallId, Message, ToolCallBlock, ToolResultBlock, ToolSpec

    height = ToolSpec("height", "Height of a mountain", {"type": "object"})

    async def main() -> Any:
        with LoopbackServer([replay(sse_body(tool_frames())), replay(BODY)]) as server:
            async with Client(env=env_for(server)) as client:
                conv = Conversation.create(store)
                first = await send(conv, client, MODEL, "How tall?", tools=(height,))
                (call,) = [p for p in first.messages[0].content if isinstance(p, ToolCallBlock)]
                result = ToolResultBlock(call.id, "8849 m", name=call.name)
                second = await send(
                    conv,
                    client,
                    MODEL,
                    Message("user", (result,), "tool"),
                    tools=(height,),
                    trigger="tool-results",
                )
                return conv, first, second, [json.loads(r.body) for r in server.requests]

    conv, first, second, sent = asyncio.run(main())
    assert first.finish == "tool-calls"
    assert first.messages[0].content == (
        ToolCallBlock(CallId("toolu_1"), "height", '{"peak": "Everest"}'),
    )
    assert second.text == "Everest is the tallest mountain, 8849 m."
    assert [t.trigger for t in conv.turns()] == ["user", "tool-results"]
    assert sent[1]["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "height",
                    "input": {"peak": "Everest"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "8849 m"}],
        },
    ]
    assert conv.diagnostics().orphan_calls == ()


STALE = (
    b'{"type":"error","error":{"type":"invalid_request_error",'
    b'"message":"messages.1.content.0: Invalid `signature` in `thinking` block"}}'
)


def signed_history(store: SQLiteStore) -> Conversation:
    conv = Conversation.create(store)
    conv.start_turn(model=MODEL)
    conv.add_user("First question")
    conv.add_message(
        Message(
            "assistant",
            (
                ReasoningBlock(
                    "Let me think.", (ProviderPayload(ANT, "signature", None, "SIG-OLD"),)
                ),
                TextBlock("First answer."),
            ),
            "assistant",
            ANT,
            WIRE_MODEL,
        )
    )
    return conv


def test_a_stale_signature_is_stripped_by_an_overlay_and_the_request_sent_again(
    store: SQLiteStore,
) -> None:
    conv = signed_history(store)
    thinking = conv.events[2]
    before = store.load_bytes(conv.id)

    async def main() -> Any:
        with LoopbackServer([status(400, STALE), replay(BODY)]) as server:
            async with Client(env=env_for(server)) as client:
                result = await send(conv, client, MODEL, "Second question")
                return result, [json.loads(r.body) for r in server.requests]

    result, sent = asyncio.run(main())
    assert [b["type"] for b in sent[0]["messages"][1]["content"]] == ["thinking", "text"]
    assert sent[0]["messages"][1]["content"][0]["signature"] == "SIG-OLD"
    # The retry leaves the unsigned thinking out (it cannot be replayed).
    assert sent[1]["messages"][1]["content"] == [{"type": "text", "text": "First answer."}]
    assert result.end == "completed" and result.text.startswith("Everest")
    assert [e.kind for e in conv.events[len(before) :]] == [
        "turn-start",
        "message",
        "response",
        "strip-signature",
        "hosted",
        "hosted",
        "message",
        "response",
    ]
    aborted, overlay = conv.events[len(before) + 2], conv.events[len(before) + 3]
    assert (aborted.body.finish, aborted.body.complete) == ("aborted", False)
    assert aborted.body.error.startswith("recoverable: ")
    assert (overlay.body.event, overlay.body.block, overlay.body.format) == (
        thinking.id,
        0,
        "signature",
    )
    # The stored thinking block still holds its signature; only projections differ.
    assert store.load_bytes(conv.id)[: len(before)] == before
    assert thinking.body.content[0].payloads[0].value == "SIG-OLD"


def test_a_repair_that_does_not_help_is_not_made_twice(store: SQLiteStore) -> None:
    from elelem.errors import RecoverableError

    conv = signed_history(store)

    async def main(recover: bool) -> int:
        with LoopbackServer([status(400, STALE), status(400, STALE)]) as server:
            async with Client(env=env_for(server)) as client:
                with pytest.raises(RecoverableError):
                    await send(conv, client, MODEL, "Again?", recover=recover)
                return len(server.requests)

    assert asyncio.run(main(recover=True)) == 2
    kinds_now = [e.kind for e in conv.events]
    assert kinds_now.count("strip-signature") == 1
    assert asyncio.run(main(recover=False)) == 1
    assert [e.kind for e in conv.events].count("strip-signature") == 1
