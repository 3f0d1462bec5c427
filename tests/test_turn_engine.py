"""The one turn engine: a flow of actions, the same under both drivers.

The async and sync drivers run the same engine against the same scripted
loopback server (a stale signature repaired and resent, a paused response
continued, then a turn whose connection breaks mid-answer) and must leave
byte-identical logs and show the observer the same chunks.  The log module
imports without the engine, and the engine's flow, driven by hand, shows the
protocol other flows (the tool loop) build on.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from elelem import Client, SyncClient
from elelem.codec import to_builtins
from elelem.conversation import Conversation, SQLiteStore
from elelem.errors import TransportError
from elelem.providers import load_catalog
from elelem.stream import Assembler, BlockEnd, BlockStart, Finish, ResponseStart, TextDelta
from elelem.testing.servers import (
    LoopbackServer,
    frame_ends,
    replay,
    reset_after,
    sse_body,
    status,
)
from elelem.turns.drive import send, send_sync
from elelem.turns.engine import (
    READ,
    Append,
    Call,
    Send,
    TurnEngine,
    TurnResult,
)
from elelem.vocabulary import EventId, ProviderId, TextBlock
from test_turn import (
    MODEL,
    STALE,
    WIRE_MODEL,
    env_for,
    signed_history,
    web_frames,
)

PAUSED = sse_body(web_frames("pause_turn", "msg_p1"))
DONE = sse_body(web_frames("end_turn", "msg_p2"))
ENDS = frame_ends(DONE)


def deterministic_store(path: Path) -> SQLiteStore:
    """A store whose clock and event ids repeat from run to run."""
    count = iter(range(1, 10_000))
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return SQLiteStore(path, clock=lambda: moment, ids=lambda: EventId(f"ev_{next(count):016x}"))


def scripted_run(tmp_path: Path, *, sync: bool) -> tuple[list[bytes], list[Any], Any, Any]:
    """Two turns through one driver: the stored log's bytes, what the
    observer saw, the first turn's result and the second turn's error."""
    store = deterministic_store(tmp_path / ("sync.db" if sync else "async.db"))
    conv = signed_history(store)
    seen: list[Any] = []

    def observe(chunk: Any, committed: Any) -> None:
        seen.append((to_builtins(chunk), to_builtins(committed)))

    replies = [status(400, STALE), replay(PAUSED), replay(DONE), reset_after(DONE, ENDS[8])]
    with LoopbackServer(replies) as server:
        if sync:
            with SyncClient(env=env_for(server)) as client:
                result = send_sync(conv, client, MODEL, "Second question", on_chunk=observe)
                with pytest.raises(TransportError) as broken:
                    send_sync(conv, client, MODEL, "Third question", on_chunk=observe)
        else:

            async def main() -> tuple[TurnResult, pytest.ExceptionInfo[TransportError]]:
                async with Client(env=env_for(server)) as client:
                    first = await send(conv, client, MODEL, "Second question", on_chunk=observe)
                    with pytest.raises(TransportError) as info:
                        await send(conv, client, MODEL, "Third question", on_chunk=observe)
                    return first, info

            result, broken = asyncio.run(main())
        assert len(server.requests) == 4
    data = store.load_bytes(conv.id)
    store.close()
    return data, seen, result, broken.value


def test_the_sync_and_async_drivers_leave_identical_logs(tmp_path: Path) -> None:
    async_log, async_seen, async_result, async_error = scripted_run(tmp_path, sync=False)
    sync_log, sync_seen, sync_result, sync_error = scripted_run(tmp_path, sync=True)
    assert sync_log == async_log
    assert sync_seen == async_seen
    assert sync_result == async_result
    assert str(sync_error) == str(async_error)
    # What the script made: the history, the repaired turn (aborted record,
    # overlay, paused response, continuation), the broken turn (partial kept).
    kinds = [row.split(b'"kind":"', 1)[1].split(b'"', 1)[0].decode() for row in async_log]
    assert kinds == [
        "turn-start", "message", "message", "message",              # signed history
        "turn-start", "message", "response", "strip-signature",     # stale: repaired
        "hosted", "hosted", "message", "response",                  # paused
        "hosted", "hosted", "message", "response",                  # continued
        "turn-start", "message", "hosted", "hosted", "message", "response",  # broken
    ]  # fmt: skip
    assert [r.finish for r in async_result.responses] == ["paused", "stop"]
    assert async_result.end == "completed"
    assert b'"finish":"aborted"' in async_log[-1]
    assert b'"complete":false' in async_log[-2]  # the text so far, marked incomplete


def test_the_log_imports_without_the_turn_engine() -> None:
    code = (
        "import sys, elelem.conversation.log\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('elelem.conversation.'))\n"
        "print(' '.join(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "elelem.conversation.log" in out
    assert "elelem.turns.drive" not in out
    assert "elelem.turns.engine" not in out


class HandStream:
    """A finished stream for a flow driven by hand: an assembler fed chunks."""

    def __init__(self, chunks: list[Any]) -> None:
        self.assembler = Assembler(ProviderId("anthropic"))
        self.pairs = [(c, self.assembler.feed(c)) for c in chunks]
        self.request_id: str | None = "req_1"
        self.dropped: tuple[str, ...] = ()

    def partial(self) -> Any:
        return self.assembler.partial()

    def result(self) -> Any:
        return self.assembler.result()


def test_the_engine_is_a_flow_of_actions_a_hand_driver_can_run(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "hand.db")
    conv = Conversation.create(store)
    target = load_catalog().target(MODEL, {"ANTHROPIC_API_KEY": "sk-ant-x"})
    shown: list[Any] = []
    engine = TurnEngine.create(conv, target, "Hi", on_chunk=lambda c, p: shown.append(p))
    flow = engine.run()
    chunks = [
        ResponseStart("msg_1", WIRE_MODEL),
        BlockStart(0, "text"),
        TextDelta(0, "Hello"),
        BlockEnd(0),
        Finish("stop"),
    ]
    stream = HandStream(chunks)
    actions: list[str] = []
    do: dict[type, Callable[[Any], Any]] = {
        Append: lambda a: conv.append(*a.drafts),
        Send: lambda a: stream,
        Call: lambda a: a.function(*a.args),
    }
    pairs = iter(stream.pairs)
    reply: Any = None
    try:
        while True:
            action = flow.send(reply)
            actions.append(type(action).__name__)
            reply = next(pairs, None) if action is READ else do[type(action)](action)
    except StopIteration as stop:
        result = stop.value
    assert actions == [
        "Append",  # turn start + user message
        "Send",
        "Read", "Call",            # response-start
        "Read", "Call",            # block-start
        "Read", "Call",            # text-delta
        "Read", "Append", "Call",  # block-end commits the block, then shows it
        "Read", "Call",            # finish
        "Read",                    # end of stream
        "Append",                  # the response record
    ]  # fmt: skip
    assert shown == [(), (), (), (TextBlock("Hello"),), ()]
    assert (result.text, result.end, result.responses[0].request_id) == (
        "Hello",
        "completed",
        "req_1",
    )
    assert [e.kind for e in conv.events] == ["turn-start", "message", "message", "response"]
    store.close()
