"""The turn API's ``on_chunk`` observer, through the real client, driver and
Anthropic shape against loopback servers: the exact chunks it sees and what
each committed, that everything it is shown is already stored, continuations
and recovery retries observed, async observers, and an observer's exception
ending the turn like any interruption."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elelem import Client, SyncClient
from elelem.codec import to_builtins
from elelem.conversation import (
    Conversation,
    HostedBody,
    MessageBody,
    SQLiteStore,
)
from elelem.errors import Patch, RecoverableError
from elelem.stream import Chunk
from elelem.testing.servers import LoopbackServer, Reply, replay, sse_body, stall, status
from elelem.turns.drive import send, send_sync
from elelem.vocabulary import HostedActivity, Part, TextBlock
from test_turn import (
    BODY,
    ENDS,
    MODEL,
    STALE,
    WIRE_MODEL,
    env_for,
    kept_first_text,
    kinds,
    signed_history,
    web_frames,
)

EVEREST = "https://en.wikipedia.org/wiki/Mount_Everest"

# What the Anthropic parser makes of test_turn.web_frames(), chunk by chunk,
# with the kinds of the parts each chunk committed.
ONE_RESPONSE = [
    ("response-start msg_web_1", ()),
    ("usage 12/1", ()),
    ("hosted srvtoolu_1 started", ("HostedActivity",)),
    ("hosted srvtoolu_1 completed", ("HostedActivity",)),
    ("block-start 2 text", ()),
    (f"citation 2 {EVEREST}", ()),
    ("text-delta 2 'Everest is the tallest'", ()),
    ("text-delta 2 ' mountain, 8849 m.'", ()),
    ("block-end 2", ("TextBlock",)),
    ("usage 12/40", ()),
    ("finish stop", ()),
]


# The fields that tell the chunks of these tests apart, by chunk type.
SHOWN: dict[str, Callable[[dict[str, Any]], str]] = {
    "response-start": lambda d: str(d["response_id"]),
    "usage": lambda d: f"{d['usage']['input']}/{d['usage']['output']}",
    "hosted": lambda d: f"{d['transition']['id']} {d['transition']['state']}",
    "block-start": lambda d: f"{d['index']} {d['block']}",
    "citation": lambda d: f"{d['index']} {d['attribution']['source']['url']}",
    "text-delta": lambda d: f"{d['index']} {d['text']!r}",
    "block-end": lambda d: str(d["index"]),
    "finish": lambda d: str(d["reason"]),
}


def show(chunk: Chunk) -> str:
    """One chunk as a short exact line."""
    d: dict[str, Any] = to_builtins(chunk)
    return f"{d['type']} {SHOWN[d['type']](d)}"


def stored_part(body: Any) -> Part:
    if isinstance(body, HostedBody):
        return body.activity
    assert isinstance(body, MessageBody)
    (part,) = body.content
    return part


class Watcher:
    """An observer that notes each chunk, what it committed, and what the
    store (read through a connection of its own) held at that moment."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conv: Conversation | None = None
        self.seen: list[tuple[str, tuple[str, ...]]] = []
        self.stored_kinds: list[list[str]] = []

    def __call__(self, chunk: Chunk, committed: tuple[Part, ...]) -> None:
        assert self.conv is not None
        self.seen.append((show(chunk), tuple(type(p).__name__ for p in committed)))
        with SQLiteStore(self.path) as other:
            events = other.load(self.conv.id)
        self.stored_kinds.append([e.kind for e in events])
        if committed:
            # What the observer is shown is exactly the newest stored content.
            tail = events[-len(committed) :]
            assert tuple(stored_part(e.body) for e in tail) == committed


class Boom(Exception):
    """An observer's own failure."""


# What the turns below may raise, returned rather than raised so the test
# can look at the log afterwards.
RAISED = (Boom, TypeError, RecoverableError)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "observed.db")
    yield s  # type: ignore[misc]
    s.close()


def turn(
    store: SQLiteStore,
    replies: list[Reply],
    on_chunk: Callable[..., object],
    *,
    sync: bool,
    conv: Conversation | None = None,
    text: str = "How tall?",
) -> tuple[Conversation, Any, int]:
    """Run one turn (async or sync) against ``replies``; return the
    conversation, the result or the exception raised, and the request count."""
    conv = conv or Conversation.create(store)
    if isinstance(on_chunk, Watcher):
        on_chunk.conv = conv
    outcome: Any
    with LoopbackServer(replies) as server:
        if sync:
            with SyncClient(env=env_for(server)) as sclient:
                try:
                    outcome = send_sync(conv, sclient, MODEL, text, on_chunk=on_chunk)
                except RAISED as exc:
                    outcome = exc
        else:

            async def main() -> Any:
                async with Client(env=env_for(server)) as client:
                    try:
                        return await send(conv, client, MODEL, text, on_chunk=on_chunk)
                    except RAISED as exc:
                        return exc

            outcome = asyncio.run(main())
        return conv, outcome, len(server.requests)


@pytest.mark.parametrize("sync", [False, True], ids=["send", "send_sync"])
def test_the_observer_sees_every_chunk_once_what_it_committed_is_stored(
    store: SQLiteStore, sync: bool
) -> None:
    watcher = Watcher(store.path)
    conv, result, sent = turn(store, [replay(BODY, chunk_size=40)], watcher, sync=sync)
    assert sent == 1
    assert result.text == "Everest is the tallest mountain, 8849 m."
    assert watcher.seen == ONE_RESPONSE
    start = ["turn-start", "message"]
    assert watcher.stored_kinds == [
        start,
        start,
        [*start, "hosted"],
        [*start, "hosted", "hosted"],
        [*start, "hosted", "hosted"],
        [*start, "hosted", "hosted"],
        [*start, "hosted", "hosted"],
        [*start, "hosted", "hosted"],
        [*start, "hosted", "hosted", "message"],
        [*start, "hosted", "hosted", "message"],
        # The response record follows the stream's last chunk.
        [*start, "hosted", "hosted", "message"],
    ]
    assert [e.kind for e in conv.events] == [*start, "hosted", "hosted", "message", "response"]


def test_an_async_observer_is_awaited_chunk_by_chunk(store: SQLiteStore) -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []
    running = 0

    async def observe(chunk: Chunk, committed: tuple[Part, ...]) -> None:
        nonlocal running
        running += 1
        assert running == 1  # the next chunk waits for this observer
        await asyncio.sleep(0.001)
        seen.append((show(chunk), tuple(type(p).__name__ for p in committed)))
        running -= 1

    _, result, _ = turn(store, [replay(BODY)], observe, sync=False)
    assert result.end == "completed"
    assert seen == ONE_RESPONSE


def test_a_paused_turn_is_observed_through_its_continuation(store: SQLiteStore) -> None:
    paused = sse_body(web_frames("pause_turn", "msg_p1"))
    final = sse_body(web_frames("end_turn", "msg_p2"))
    watcher = Watcher(store.path)
    conv, result, sent = turn(store, [replay(paused), replay(final)], watcher, sync=True)
    assert (sent, result.end) == (2, "completed")
    first = [("response-start msg_p1", ()), *ONE_RESPONSE[1:-1], ("finish paused", ())]
    second = [("response-start msg_p2", ()), *ONE_RESPONSE[1:]]
    assert watcher.seen == first + second
    # The paused response's record is stored before its continuation's first chunk.
    assert watcher.stored_kinds[len(first)][-1] == "response"
    assert [e.response for e in conv.events if e.kind == "response"] == [1, 2]


def test_a_recovery_retry_is_observed(store: SQLiteStore) -> None:
    conv = signed_history(store)
    watcher = Watcher(store.path)
    conv, result, sent = turn(
        store, [status(400, STALE), replay(BODY)], watcher, sync=False, conv=conv, text="Again"
    )
    assert (sent, result.end) == (2, "completed")
    # The refused request streamed nothing; the retry's chunks are all seen.
    assert watcher.seen == ONE_RESPONSE
    assert watcher.stored_kinds[0][-4:] == ["turn-start", "message", "response", "strip-signature"]


@pytest.mark.parametrize("sync", [False, True], ids=["send", "send_sync"])
def test_an_observer_exception_propagates_and_keeps_what_arrived(
    store: SQLiteStore, sync: bool
) -> None:
    boom = Boom("renderer gave up")
    seen: list[str] = []

    def observe(chunk: Chunk, committed: tuple[Part, ...]) -> None:
        seen.append(show(chunk))
        if show(chunk) == "text-delta 2 'Everest is the tallest'":
            raise boom

    # What arrived is defined: the server goes silent after that text delta.
    conv, raised, sent = turn(store, [stall(BODY, ENDS[8], 5.0)], observe, sync=sync)
    assert raised is boom
    assert sent == 1
    assert seen == [line for line, _ in ONE_RESPONSE[:7]]
    reloaded = Conversation.open(store, conv.id)
    record = kept_first_text(reloaded)
    assert (record.response_id, record.model, record.error) == (
        "msg_web_1",
        WIRE_MODEL,
        "Boom: renderer gave up",
    )
    assert reloaded.turns()[0].end == "interrupted"


def test_an_observer_raising_a_recoverable_error_is_not_retried(store: SQLiteStore) -> None:
    conv = signed_history(store)
    fake = RecoverableError(
        "not the provider's", patches=(Patch("strip-signature", {"message": 1, "block": 0}),)
    )

    def observe(chunk: Chunk, committed: tuple[Part, ...]) -> None:
        raise fake

    conv, raised, sent = turn(
        store,
        [stall(BODY, ENDS[0], 5.0), replay(BODY)],
        observe,
        sync=False,
        conv=conv,
        text="Again",
    )
    assert raised is fake
    assert sent == 1
    assert [e.kind for e in conv.events][-3:] == ["turn-start", "message", "response"]
    assert conv.events[-1].body.error == "recoverable: not the provider's"


def test_send_sync_refuses_an_async_observer_before_storing_anything(
    store: SQLiteStore,
) -> None:
    async def observe(chunk: Chunk, committed: tuple[Part, ...]) -> None:
        raise AssertionError("never called")

    conv, raised, sent = turn(store, [replay(BODY)], observe, sync=True)
    assert isinstance(raised, TypeError)
    assert str(raised) == "send_sync needs a synchronous on_chunk; use send for an async one"
    assert (sent, store.load(conv.id)) == (0, ())


def test_send_sync_ends_the_turn_when_an_observer_returns_an_awaitable(
    store: SQLiteStore,
) -> None:
    async def later() -> None:
        raise AssertionError("never awaited")

    conv, raised, sent = turn(
        store, [stall(BODY, ENDS[0], 5.0)], lambda chunk, committed: later(), sync=True
    )
    assert isinstance(raised, TypeError)
    assert str(raised) == "send_sync needs a synchronous on_chunk; it returned an awaitable"
    assert sent == 1
    assert kinds(conv) == [("turn-start", None), ("message", None), ("response", 1)]
    assert conv.events[-1].body.error == (
        "TypeError: send_sync needs a synchronous on_chunk; it returned an awaitable"
    )


def test_the_stored_answer_matches_what_the_observer_was_shown(store: SQLiteStore) -> None:
    shown: list[Part] = []
    conv, result, _ = turn(
        store, [replay(BODY)], lambda chunk, committed: shown.extend(committed), sync=False
    )
    (message,) = result.messages
    assert tuple(shown) == message.content
    assert isinstance(shown[0], HostedActivity) and isinstance(shown[2], TextBlock)
    assert Conversation.open(store, conv.id).history()[-1].content == tuple(shown)
