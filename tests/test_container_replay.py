"""Response-level native data (``Finish.payloads``) is kept in the log, and the
Anthropic code-execution ``container`` it names goes back with the next
request: the encoder's rules, the log's record of it, the turn API over a
loopback server, a direct client caller, and the recorded programmatic tool
calling run."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import KEY, base_env, run
from elelem import Client, codec
from elelem.conversation import Conversation, ResponseRecord, SQLiteStore
from elelem.conversation.errors import ImportRefused
from elelem.conversation.events import Draft, Event, decode_event, encode_event
from elelem.conversation.export import (
    FORMAT,
    VERSION,
    ExportedConversation,
    Header,
    export_conversation,
    import_conversation,
    read_export,
)
from elelem.conversation.projections import response_payloads
from elelem.errors import PayloadError
from elelem.shapes.anthropic_messages import SHAPE
from elelem.shapes.anthropic_messages.encoder import container_id
from elelem.shapes.common import Dropped
from elelem.stream import assemble
from elelem.testing.servers import LoopbackServer, replay, sse_body
from elelem.turns.drive import send
from elelem.vocabulary import (
    CodeExecution,
    EventId,
    GenerationOptions,
    Message,
    ProviderId,
    ProviderPayload,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
)
from elelem.vocabulary.drop import EXPIRED, FOREIGN_PAYLOAD, Drop
from elelem.wire import ModelRequest
from test_turn import _ev, env_for

ANT = ProviderId("anthropic")
OPENAI = ProviderId("openai")
MODEL = "anthropic:claude-sonnet-4-5"
WIRE_MODEL = "claude-sonnet-4-5-20250929"
FUTURE = "2099-01-01T00:00:00.000000Z"
PAST = "2025-12-31T23:59:59Z"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
PTC = "vercel__ai/packages__anthropic__src____fixtures____anthropic-programmatic-tool-calling.1.chunks.txt"
PTC_CONTAINER = "container_011CWHPPTDTn1XufeRB9uHeH"


def envelope(container: dict[str, Any] | None, provider: str = "anthropic") -> ProviderPayload:
    """A ``message`` payload as the Anthropic parser writes it."""
    value: dict[str, Any] = {"id": "msg_1", "type": "message", "stop_reason": "end_turn"}
    if container is not None:
        value["container"] = container
    return ProviderPayload(ProviderId(provider), "message", None, value)


def encode(*payloads: ProviderPayload, now: datetime | None = NOW, **kw: Any) -> Any:
    request = ModelRequest(
        "claude-sonnet-4-5",
        (Message.user("again"),),
        response_payloads=payloads,
        now=now,
        **kw,
    )
    return SHAPE.encode_request(request, provider=ANT)


# -- the encoder ---------------------------------------------------------------


def test_the_latest_container_named_goes_back_as_its_id() -> None:
    encoded = encode(
        envelope({"id": "container_A", "expires_at": FUTURE}),
        envelope({"id": "container_B", "expires_at": FUTURE}),
    )
    assert encoded.body["container"] == "container_B"
    assert encoded.dropped == ()


def test_a_later_response_that_names_no_container_leaves_the_earlier_one_in_use() -> None:
    encoded = encode(envelope({"id": "container_A", "expires_at": FUTURE}), envelope(None))
    assert encoded.body["container"] == "container_A"
    assert encoded.dropped == ()


def test_no_response_data_sends_no_container() -> None:
    assert "container" not in encode().body
    assert "container" not in encode(envelope(None)).body
    # A null container (as the API writes when no container tool ran).
    null = ProviderPayload(ANT, "message", None, {"container": None})
    assert "container" not in encode(null).body


def test_an_expired_container_is_not_sent_and_is_reported() -> None:
    encoded = encode(envelope({"id": "container_A", "expires_at": PAST}))
    assert "container" not in encoded.body
    assert encoded.dropped == (
        Drop(
            "response_payloads",
            "container",
            EXPIRED,
            "'container_A' expired at '2025-12-31T23:59:59Z'",
        ),
    )


def test_expiry_is_judged_against_the_requests_now_in_any_zone() -> None:
    at = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    payload = envelope({"id": "c", "expires_at": "2026-01-01T12:00:00Z"})
    # The instant of expiry is expired; a microsecond before is not.
    assert "container" not in encode(payload, now=at).body
    assert encode(payload, now=at - timedelta(microseconds=1)).body["container"] == "c"
    # The same instant written in another zone.
    plus_two = timezone(timedelta(hours=2))
    assert "container" not in encode(payload, now=datetime(2026, 1, 1, 14, tzinfo=plus_two)).body
    # A naive now is UTC.
    assert encode(payload, now=datetime(2026, 1, 1, 11, 59)).body["container"] == "c"


def test_without_a_now_nothing_is_judged_expired() -> None:
    encoded = encode(envelope({"id": "container_A", "expires_at": PAST}), now=None)
    assert encoded.body["container"] == "container_A"
    assert encoded.dropped == ()


def test_a_container_without_an_expiry_is_sent() -> None:
    assert encode(envelope({"id": "container_A"})).body["container"] == "container_A"


def test_another_providers_response_data_is_never_sent_and_is_reported_in_one_line() -> None:
    encoded = encode(
        envelope({"id": "container_X", "expires_at": FUTURE}, "openai"),
        envelope({"id": "container_Y", "expires_at": FUTURE}, "openai"),
        envelope({"id": "container_Z", "expires_at": FUTURE}, "minimax"),
    )
    assert "container" not in encoded.body
    assert encoded.dropped == (
        Drop(
            "response_payloads",
            "payload",
            FOREIGN_PAYLOAD,
            "3 of another provider (minimax, openai)",
        ),
    )


def test_an_anthropic_compatible_provider_replays_its_own_container() -> None:
    request = ModelRequest(
        "m",
        (Message.user("hi"),),
        response_payloads=(envelope({"id": "c9", "expires_at": FUTURE}, "minimax"),),
        now=NOW,
    )
    encoded = SHAPE.encode_request(request, provider=ProviderId("minimax"))
    assert encoded.body["container"] == "c9"
    assert encoded.dropped == ()


def test_a_callers_own_container_option_wins() -> None:
    encoded = encode(
        envelope({"id": "container_A", "expires_at": FUTURE}),
        options=GenerationOptions(extra={"container": {"id": "mine", "skills": []}}),
    )
    assert encoded.body["container"] == {"id": "mine", "skills": []}


def test_response_data_formats_with_no_request_counterpart_are_ignored() -> None:
    other = ProviderPayload(ANT, "context_management", None, {"applied_edits": []})
    encoded = encode(other)
    assert "container" not in encoded.body
    assert encoded.dropped == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("not an object", "anthropic message payload is not an object"),
        ({"container": "container_A"}, "container is not an object with a string id"),
        ({"container": {"id": 7}}, "container is not an object with a string id"),
        ({"container": {"id": "c", "expires_at": "soon"}}, "expires_at 'soon' is not an ISO"),
        ({"container": {"id": "c", "expires_at": 17}}, "expires_at 17 is not an ISO"),
    ],
)
def test_a_malformed_envelope_is_an_error_not_a_silent_fresh_container(
    value: Any, message: str
) -> None:
    with pytest.raises(PayloadError, match=message):
        encode(ProviderPayload(ANT, "message", None, value))


def test_container_id_is_usable_on_its_own() -> None:
    dropped = Dropped()
    payloads = [envelope({"id": "c1", "expires_at": FUTURE})]
    assert container_id(payloads, "anthropic", NOW, dropped) == "c1"
    assert container_id(payloads, "anthropic", datetime(2100, 1, 1, tzinfo=UTC), dropped) is None
    assert dropped.items == [
        Drop(
            "response_payloads",
            "container",
            EXPIRED,
            "'c1' expired at '2099-01-01T00:00:00.000000Z'",
        )
    ]


# -- the log -------------------------------------------------------------------

# A response record as elelem encoded it before records kept payloads.
OLD_RECORD = (
    b'{"id":"ev_old","seq":4,"at":"2026-11-30T01:00:00Z","turn":1,"response":1,'
    b'"kind":"response","body":{"provider":"anthropic","model":"claude-sonnet-4-5-20250929",'
    b'"response_id":"msg_1","request_id":"req_1","finish":"stop","finish_raw":"end_turn",'
    b'"failure":null,"usage":null,"complete":true,"dropped":[],"continuation":0,'
    b'"error":null,"request":"ev_3"}}'
)


def test_a_response_record_stored_before_payloads_existed_still_loads() -> None:
    expected = ResponseRecord(
        provider=ANT,
        model=WIRE_MODEL,
        response_id="msg_1",  # type: ignore[arg-type]
        request_id="req_1",
        finish="stop",
        finish_raw="end_turn",
        request="ev_3",  # type: ignore[arg-type]
    )
    fast = decode_event(OLD_RECORD)  # bytes: the one-pass decoder
    general = decode_event(OLD_RECORD.decode())  # text: the general path
    assert fast == general
    assert fast.body == expected
    assert fast.body.payloads == ()
    assert (fast.id, fast.seq, fast.turn, fast.response) == ("ev_old", 4, 1, 1)


def _old_export() -> bytes:
    header = codec.dumps(
        Header(
            FORMAT,
            VERSION,
            ExportedConversation("c_00000000000000aa", "old", "2026-11-30T01:00:00Z", None, None),
            1,
        )
    )
    return header + b"\n" + OLD_RECORD.replace(b'"seq":4', b'"seq":1') + b"\n"


def test_an_export_written_before_records_kept_payloads_still_imports(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "old.db") as store:
        info = import_conversation(store, _old_export())
        (event,) = Conversation.open(store, info.id).events
        assert event.body.payloads == ()
        assert event.body.finish_raw == "end_turn"
        # Kept in today's canonical form: the field it lacked, at its default.
        (stored,) = store.load_bytes(info.id)
        assert stored == encode_event(event)
        assert stored.endswith(b'"request":"ev_3","payloads":[],"retries":[],"tier":null}}')


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'"request":"ev_3"}', b'"request":"ev_3","mood":"new"}'),  # a field nobody knows
        (b'"seq":1,', b'"seq": 1,'),  # reformatted
        (b'"finish":"stop"', b'"finish": "stop"'),
    ],
)
def test_an_old_export_with_anything_but_missing_fields_is_still_refused(
    old: bytes, new: bytes
) -> None:
    data = _old_export()
    assert old in data
    with pytest.raises(ImportRefused, match="line 2: event ev_old is not in canonical form"):
        read_export(data.replace(old, new))


def test_a_record_with_payloads_round_trips_through_store_and_export(tmp_path: Path) -> None:
    payload = envelope({"id": "container_A", "expires_at": FUTURE})
    record = ResponseRecord(provider=ANT, finish="stop", payloads=(payload,))
    with SQLiteStore(tmp_path / "a.db") as store:
        conv = Conversation.create(store)
        conv.start_turn(model=MODEL)
        (event,) = conv.append(Draft.of(record, turn=1, response=1))
        data = encode_event(event)
        assert b'"payloads":[{"provider":"anthropic","format":"message"' in data
        assert decode_event(data) == decode_event(data.decode()) == event
        assert store.load_bytes(conv.id)[-1] == data
        assert Conversation.open(store, conv.id).events == conv.events
        exported = export_conversation(store, conv.id)
        copy = import_conversation(store, exported, new_id=True)
        assert store.load_bytes(copy.id) == store.load_bytes(conv.id)
        assert Conversation.open(store, copy.id).response_payloads(ANT) == (payload,)


def test_response_payloads_are_one_providers_own_oldest_first() -> None:
    a1 = envelope({"id": "a1"})
    a2 = envelope({"id": "a2"})
    o1 = ProviderPayload(OPENAI, "response", None, {"id": "resp_1"})
    records = [
        ResponseRecord(provider=ANT, payloads=(a1,)),
        ResponseRecord(provider=OPENAI, payloads=(o1,)),
        ResponseRecord(provider=ANT),
        ResponseRecord(provider=ANT, payloads=(a2,)),
    ]
    events = [
        Event(EventId(f"ev_{n}"), n, "2026-01-01T00:00:00Z", n, n, "response", r)
        for n, r in enumerate(records, start=1)
    ]
    assert response_payloads(events, ANT) == (a1, a2)
    assert response_payloads(events, OPENAI) == (o1,)
    assert response_payloads(events, "gemini") == ()


# -- the turn API over a loopback server -------------------------------------------


def answer(msg_id: str, text: str, container: dict[str, Any] | None) -> bytes:
    """A short Anthropic answer whose message_delta names ``container``."""
    delta: dict[str, Any] = {"stop_reason": "end_turn", "stop_sequence": None}
    if container is not None:
        delta["container"] = container
    return sse_body(
        [
            _ev(
                "message_start",
                message={
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": WIRE_MODEL,
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            ),
            _ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
            _ev("content_block_delta", index=0, delta={"type": "text_delta", "text": text}),
            _ev("content_block_stop", index=0),
            _ev("message_delta", delta=delta, usage={"input_tokens": 10, "output_tokens": 5}),
            _ev("message_stop"),
        ]
    )


def run_turns(
    path: Path, bodies: list[bytes], clock: Any = None
) -> tuple[str, list[dict[str, Any]], list[Any]]:
    """One user turn per body, with code execution on; the conversation id,
    the request bodies sent and the turn results."""

    async def main() -> tuple[str, list[dict[str, Any]], list[Any]]:
        with LoopbackServer([replay(b) for b in bodies]) as server:
            async with Client(env=env_for(server), clock=clock) as client:
                with SQLiteStore(path) as store:
                    conv = Conversation.create(store)
                    results = []
                    for n in range(len(bodies)):
                        results.append(
                            await send(
                                conv,
                                client,
                                MODEL,
                                f"step {n + 1}",
                                hosted_tools=(CodeExecution(),),
                            )
                        )
                    sent = [json.loads(r.body) for r in server.requests]
                    return conv.id, sent, results

    return asyncio.run(main())


def test_a_turns_container_is_recorded_and_named_by_the_next_turns_requests(
    tmp_path: Path,
) -> None:
    container = {"id": "container_011TURN", "expires_at": FUTURE}
    bodies = [
        answer("msg_1", "Made data.csv.", container),
        answer("msg_2", "No code this time.", None),
        answer("msg_3", "Read data.csv.", container),
    ]
    conv_id, sent, results = run_turns(tmp_path / "t.db", bodies)
    assert "container" not in sent[0]
    assert sent[1]["container"] == "container_011TURN"
    # Turn 2 ran no code and named no container; the container lives on.
    assert sent[2]["container"] == "container_011TURN"
    (first,) = results[0].responses
    assert first.payloads == (
        ProviderPayload(
            ANT,
            "message",
            None,
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": WIRE_MODEL,
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
                "stop_sequence": None,
                "container": container,
            },
        ),
    )
    assert [r.responses[0].dropped for r in results] == [(), (), ()]
    # Reloaded from disk, the log still holds what the next request needs.
    with SQLiteStore(tmp_path / "t.db") as store:
        conv = Conversation.open(store, conv_id)
        payloads = conv.response_payloads(ANT)
        assert len(payloads) == 3
        assert payloads[0] == first.payloads[0]
        request = ModelRequest("claude-sonnet-4-5", conv.history(), response_payloads=payloads)
        assert SHAPE.encode_request(request, provider=ANT).body["container"] == (
            "container_011TURN"
        )


def test_an_expired_container_is_left_out_of_the_next_turn_and_the_record_says_so(
    tmp_path: Path,
) -> None:
    bodies = [
        answer("msg_1", "Made data.csv.", {"id": "container_OLD", "expires_at": PAST}),
        answer("msg_2", "Fresh container.", None),
    ]
    _, sent, results = run_turns(tmp_path / "e.db", bodies, clock=lambda: NOW)
    assert "container" not in sent[1]
    assert results[1].responses[0].dropped == (
        Drop(
            "response_payloads",
            "container",
            EXPIRED,
            "'container_OLD' expired at '2025-12-31T23:59:59Z'",
        ),
    )


def test_a_client_caller_continues_from_an_assembled_response() -> None:
    container = {"id": "container_CLIENT", "expires_at": FUTURE}

    async def main() -> list[dict[str, Any]]:
        bodies = [answer("msg_1", "one", container), answer("msg_2", "two", None)]
        with LoopbackServer([replay(b) for b in bodies]) as server:
            async with Client(env=env_for(server)) as client:
                async with client.stream(MODEL, "start", hosted_tools=(CodeExecution(),)) as stream:
                    first = await stream.final()
                assert first.finish is not None
                history = (Message.user("start"), first.to_message(), Message.user("more"))
                async with client.stream(
                    MODEL,
                    history,
                    hosted_tools=(CodeExecution(),),
                    response_payloads=first.finish.payloads,
                ) as stream:
                    await stream.final()
                return [json.loads(r.body) for r in server.requests]

    sent = asyncio.run(main())
    assert "container" not in sent[0]
    assert sent[1]["container"] == "container_CLIENT"


# -- the recorded programmatic tool calling run ----------------------------------------


def ptc_responses(corpus: Path) -> list[bytes]:
    """The recording's complete responses (each ends with message_stop), as SSE bodies."""
    lines = (corpus / PTC).read_text().splitlines()
    responses: list[list[str]] = []
    for line in lines:
        kind = json.loads(line)["type"]
        if kind == "message_start":
            responses.append([])
        responses[-1].append(line)
    complete = [r for r in responses if json.loads(r[-1])["type"] == "message_stop"]
    return [sse_body((json.loads(x)["type"], x) for x in r) for r in complete]


def test_programmatic_tool_calls_results_go_back_to_the_container_that_waits(
    corpus: Path, tmp_path: Path
) -> None:
    bodies = ptc_responses(corpus)
    # 14 responses end in a programmatic tool call; the 15th is the answer.
    assert len(bodies) == 15
    roll = ToolSpec("rollDie", "Roll a die", {"type": "object", "properties": {}})
    # The recording was made before the containers' expiry.
    recorded_at = datetime(2025, 12, 20, 5, 13, tzinfo=UTC)

    async def main() -> tuple[list[dict[str, Any]], list[Any], tuple[ProviderPayload, ...], Any]:
        with LoopbackServer([replay(b) for b in bodies]) as server:
            async with Client(env=env_for(server), clock=lambda: recorded_at) as client:
                with SQLiteStore(tmp_path / "ptc.db") as store:
                    conv = Conversation.create(store)
                    results = [
                        await send(
                            conv,
                            client,
                            MODEL,
                            "Play a dice game",
                            tools=(roll,),
                            hosted_tools=(CodeExecution(),),
                        )
                    ]
                    while len(results) < len(bodies):
                        (call,) = [
                            p
                            for p in results[-1].messages[-1].content
                            if isinstance(p, ToolCallBlock)
                        ]
                        conv.add_tool_results((ToolResultBlock(call.id, "4", name=call.name),))
                        results.append(
                            await send(
                                conv,
                                client,
                                MODEL,
                                None,
                                trigger="tool-results",
                                tools=(roll,),
                                hosted_tools=(CodeExecution(),),
                            )
                        )
                    sent = [json.loads(r.body) for r in server.requests]
                    following = SHAPE.encode_request(
                        ModelRequest(
                            "claude-sonnet-4-5",
                            conv.history(),
                            response_payloads=conv.response_payloads(ANT),
                            now=recorded_at,
                        ),
                        provider=ANT,
                    )
                    return sent, results, conv.response_payloads(ANT), following

    sent, results, payloads, following = asyncio.run(main())
    assert [r.finish for r in results] == ["tool-calls"] * 14 + ["stop"]
    assert len(payloads) == 15
    named = [p.value.get("container") for p in payloads]  # type: ignore[union-attr]
    assert [c["id"] for c in named[:14]] == [PTC_CONTAINER] * 14  # type: ignore[index]
    assert named[14] is None  # the answer ran no more code
    assert "container" not in sent[0]
    # Every request that returns a programmatic call's result names the container.
    assert [s.get("container") for s in sent[1:]] == [PTC_CONTAINER] * 14
    # The tool_use each of those answers was replayed with its caller.
    assert sent[1]["messages"][-2]["content"][-1]["caller"] == {
        "type": "code_execution_20250825",
        "tool_id": "srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK",
    }
    assert sent[1]["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_019jKkXz4jAdwHweHBw92CVY", "content": "4"}
    ]
    assert not any("response data" in d for r in results for d in r.responses[0].dropped)
    # And the next request after the answer still names it.
    assert following.body["container"] == PTC_CONTAINER
    # After the container's last recorded expiry, the same history sends none.
    later = datetime(2025, 12, 20, 5, 34, tzinfo=UTC)
    expired = SHAPE.encode_request(
        ModelRequest("m", (), response_payloads=payloads, now=later), provider=ANT
    )
    assert "container" not in expired.body
    assert expired.dropped == (
        Drop(
            "response_payloads",
            "container",
            EXPIRED,
            f"{PTC_CONTAINER!r} expired at '2025-12-20T05:33:58.450677Z'",
        ),
    )


# -- the command line ------------------------------------------------------------------


def test_the_cli_continuation_names_the_container_and_show_never_prints_it(
    tmp_path: Path,
) -> None:
    container = {"id": "container_CLI_01", "expires_at": FUTURE}
    bodies = [answer("msg_1", "Saved it.", container), answer("msg_2", "Still there.", None)]
    with LoopbackServer([replay(b) for b in bodies]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        first = run(env, "ask", "-m", MODEL, "Save a file")
        assert first.returncode == 0, first.stderr
        second = run(env, "ask", "-c", "Is it there?")
        assert second.returncode == 0, second.stderr
        shown = run(env, "show")
    assert "container" not in json.loads(server.requests[0].body)
    assert json.loads(server.requests[1].body)["container"] == "container_CLI_01"
    assert shown.returncode == 0, shown.stderr
    assert "Saved it." in shown.stdout and "Still there." in shown.stdout
    assert "container_CLI_01" not in shown.stdout + shown.stderr


def test_a_non_streamed_responses_container_goes_back_too(corpus: Path) -> None:
    name = "vercel__ai/packages__anthropic__src____fixtures____anthropic-code-execution-20250825.1.json"
    response = assemble(SHAPE.parse_response((corpus / name).read_bytes(), ANT))
    assert response.finish is not None
    before = datetime(2025, 10, 14, 10, 0, tzinfo=UTC)
    request = ModelRequest(
        "claude-sonnet-4-5",
        (Message.user("again"),),
        response_payloads=response.finish.payloads,
        now=before,
    )
    assert SHAPE.encode_request(request, provider=ANT).body["container"] == (
        "container_011CU6rVteVhydYXRyNs6G1M"
    )
