"""History the provider keeps (issue #42): a stored Responses conversation
continues with ``previous_response_id`` and only the new input; a lost
state falls back to the whole history, recorded.

The server is :class:`elelem.testing.responses_state.StatefulResponses`,
a loopback Responses API keeping state as OpenAI documents it
(platform.openai.com/docs/guides/conversation-state,
platform.openai.com/docs/api-reference/responses/create): each answer
says how many input items the model saw in all, so a continuation and a
full replay are seen to give the model the same context.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elelem import SyncClient
from elelem.conversation import Conversation, SQLiteStore
from elelem.errors import FULL_REPLAY, STATE_LOST, RecoverableError
from elelem.shapes.openai_responses.errors import classify_error
from elelem.shapes.openai_responses.state import RESPONSE_FORMAT, held_state
from elelem.shapes.provider_state import continues
from elelem.testing.responses_state import StatefulResponses
from elelem.testing.servers import LoopbackServer
from elelem.turns.drive import send_sync
from elelem.vocabulary import GenerationOptions, Message, ProviderId, ProviderPayload
from elelem.vocabulary.drop import EXPIRED

OPENAI = ProviderId("openai")
STORED = GenerationOptions(extra={"store": True})


def _env(server: LoopbackServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "sk-test-0123456789",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


def _run(
    tmp_path: Path, turns: int, options: GenerationOptions | None, name: str
) -> tuple[Conversation, list[dict[str, Any]], StatefulResponses]:
    state = StatefulResponses()
    conv = Conversation.create(SQLiteStore(tmp_path / f"{name}.db"))
    with LoopbackServer(state) as server, SyncClient(env=_env(server)) as client:
        for n in range(1, turns + 1):
            kwargs: dict[str, Any] = {"options": options} if options is not None else {}
            result = send_sync(conv, client, "openai:gpt-5", f"question {n}", **kwargs)
            assert result.text == f"turn {n}: {2 * n - 1} items"
        bodies = [json.loads(r.body) for r in server.requests]
    return conv, bodies, state


def test_a_stored_conversation_sends_only_the_new_input_each_turn(tmp_path: Path) -> None:
    conv, bodies, state = _run(tmp_path, 6, STORED, "stored")
    assert state.seen == [1, 3, 5, 7, 9, 11]  # the model saw the whole history
    assert [b.get("previous_response_id") for b in bodies] == [
        None,
        "resp_0001",
        "resp_0002",
        "resp_0003",
        "resp_0004",
        "resp_0005",
    ]
    assert [len(b["input"]) for b in bodies] == [1, 1, 1, 1, 1, 1]
    question = {"type": "input_text", "text": "question 6"}
    assert bodies[5]["input"] == [{"type": "message", "role": "user", "content": [question]}]
    assert all(b["store"] is True for b in bodies)
    # The ids are kept on the response records (the response envelope).
    records = [r for t in conv.turns() for r in t.responses]
    envelopes = [p.value for r in records for p in r.payloads if p.format == "response"]
    assert [(e["id"], e["previous_response_id"]) for e in envelopes][:3] == [
        ("resp_0001", None),
        ("resp_0002", "resp_0001"),
        ("resp_0003", "resp_0002"),
    ]


def test_without_store_every_turn_replays_the_history_and_the_log_is_the_same(
    tmp_path: Path,
) -> None:
    stored, _, _ = _run(tmp_path, 4, STORED, "stored")
    plain, bodies, state = _run(tmp_path, 4, None, "plain")
    assert state.seen == [1, 3, 5, 7]
    assert [len(b["input"]) for b in bodies] == [1, 3, 5, 7]
    assert all("previous_response_id" not in b and b["store"] is False for b in bodies)
    # The portable projection does not depend on how the turns were sent.
    assert _texts(stored) == _texts(plain)


def _texts(conv: Conversation) -> list[tuple[str, str]]:
    return [
        (m.role, "".join(getattr(p, "text", "") for p in m.content))
        for m in conv.portable().messages
    ]


def test_a_lost_previous_response_falls_back_to_the_whole_history_recorded(
    tmp_path: Path,
) -> None:
    state = StatefulResponses()
    conv = Conversation.create(SQLiteStore(tmp_path / "lost.db"))
    with LoopbackServer(state) as server, SyncClient(env=_env(server)) as client:
        for n in (1, 2, 3):
            send_sync(conv, client, "openai:gpt-5", f"question {n}", options=STORED)
        state.forget("resp_0003")  # expired on the provider
        result = send_sync(conv, client, "openai:gpt-5", "question 4", options=STORED)
        assert result.text == "turn 4: 7 items"
        after = send_sync(conv, client, "openai:gpt-5", "question 5", options=STORED)
        assert after.text == "turn 5: 9 items"
        bodies = [json.loads(r.body) for r in server.requests]
    # Turn 4: refused once, then sent whole; turn 5 continues the new response.
    assert [(b.get("previous_response_id"), len(b["input"])) for b in bodies[3:]] == [
        ("resp_0003", 1),
        (None, 7),
        ("resp_0004", 1),
    ]
    replayed = result.responses[-1]
    records = [r for t in conv.turns() for r in t.responses]
    failed = [r for r in records if r.finish == "aborted"]
    assert len(failed) == 1 and "previous_response_not_found" in (failed[0].error or "")
    assert [(d.where, d.what, d.why, d.detail) for d in replayed.dropped] == [
        (
            "previous_response_id",
            "previous_response_id",
            EXPIRED,
            "openai no longer holds resp_0003: the whole history was sent",
        )
    ]


def test_the_error_asks_for_a_full_replay() -> None:
    body = {
        "error": {
            "message": "Previous response with id 'resp_abc' not found.",
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }
    }
    error = classify_error(400, {}, json.dumps(body).encode())
    assert isinstance(error, RecoverableError)
    assert [(p.action, dict(p.target)) for p in error.patches] == [
        (FULL_REPLAY, {"id": "resp_abc"})
    ]
    terse = {"error": {"message": "Invalid `previous_response_id`.", "type": "invalid_request_error", "code": "invalid_request_error"}}  # fmt: skip
    error = classify_error(400, {}, json.dumps(terse).encode())
    assert isinstance(error, RecoverableError)
    assert [(p.action, dict(p.target)) for p in error.patches] == [(FULL_REPLAY, {"id": "*"})]


@pytest.mark.parametrize(
    ("envelope", "field"),
    [
        ({"id": "resp_1", "store": True}, {"previous_response_id": "resp_1"}),
        ({"id": "resp_1", "store": False}, None),
        (
            {"id": "resp_1", "store": True, "conversation": {"id": "conv_9"}},
            {"conversation": "conv_9"},
        ),
    ],
)
def test_which_state_a_request_continues(
    envelope: dict[str, Any], field: dict[str, str] | None
) -> None:
    history = (
        Message.user("a"),
        Message("assistant", (), "assistant", OPENAI, "gpt-5"),
        Message.user("b"),
    )
    payloads = (ProviderPayload(OPENAI, "response", None, envelope),)
    state, drops = continues(history, payloads, OPENAI, {}, RESPONSE_FORMAT, held_state)
    assert drops == []
    assert (None if state is None else (state.start, dict(state.fields))) == (
        None if field is None else (2, field)
    )
    # Another provider's last answer, or a lost state: the whole history.
    other = (
        *history[:1],
        Message("assistant", (), "assistant", ProviderId("xai"), "grok"),
        history[2],
    )
    assert continues(other, payloads, OPENAI, {}, RESPONSE_FORMAT, held_state) == (None, [])
    lost = (*payloads, ProviderPayload(OPENAI, STATE_LOST, None, {"id": "*"}))
    state, drops = continues(history, lost, OPENAI, {}, RESPONSE_FORMAT, held_state)
    assert state is None and len(drops) == (0 if field is None else 1)


def test_a_compaction_item_is_kept_and_replayed_as_it_came() -> None:
    # developers.openai.com/api/docs/guides/compaction: server-side
    # compaction returns an opaque {"type": "compaction", "id",
    # "encrypted_content"} output item; stateless chaining appends it to the
    # next input as it came.
    from elelem.shapes.openai_responses import SHAPE
    from elelem.stream import Assembler
    from elelem.vocabulary import UnknownBlock
    from elelem.wire import ModelRequest

    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"}
    said = {"type": "output_text", "text": "Hi", "annotations": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed"}
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5",
        "store": False,
        "output": [compaction, {**message, "content": [said]}],
        "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    }
    assembler = Assembler(OPENAI)
    assembler.feed_all(SHAPE.parse_response(json.dumps(body).encode(), OPENAI, None))
    result = assembler.result()
    kept = result.content[0]
    assert isinstance(kept, UnknownBlock) and kept.raw == compaction
    assert result.finish is not None
    request = ModelRequest(
        "gpt-5",
        (Message.user("a"), result.to_message(), Message.user("b")),
        response_payloads=result.finish.payloads,
    )
    encoded = SHAPE.encode_request(request, provider=OPENAI, stream=True)
    assert encoded.body["input"][1] == compaction
    assert encoded.dropped == ()


def test_the_async_driver_falls_back_the_same_way(tmp_path: Path) -> None:
    # One engine, two drivers: the full-replay repair is the engine's.
    import asyncio

    from elelem import Client
    from elelem.turns.drive import send

    state = StatefulResponses()
    conv = Conversation.create(SQLiteStore(tmp_path / "async.db"))

    async def run(url_env: dict[str, str]) -> list[str]:
        async with Client(env=url_env) as client:
            said = []
            for n in (1, 2, 3):
                if n == 3:
                    state.forget("resp_0002")
                result = await send(conv, client, "openai:gpt-5", f"q{n}", options=STORED)
                said.append(result.text)
            return said

    with LoopbackServer(state) as server:
        said = asyncio.run(run(_env(server)))
        bodies = [json.loads(r.body) for r in server.requests]
    assert said == ["turn 1: 1 items", "turn 2: 3 items", "turn 3: 5 items"]
    assert [(b.get("previous_response_id"), len(b["input"])) for b in bodies] == [
        (None, 1),
        ("resp_0001", 1),
        ("resp_0002", 1),
        (None, 5),
    ]
