"""A response of many blocks costs linear work: projecting the log builds
each message once, not once per block (issue #33).

Counted, not timed: every Message construction scans its content for
unknown blocks (``place_unknowns``), so the parts scanned while projecting
say how often content was copied into a new message.  A builder that grows
the message block by block scans about n²/2 parts; one that builds it once
scans n.
"""

from __future__ import annotations

import pytest

from elelem.conversation import projections
from elelem.conversation.events import Event, MessageBody
from elelem.vocabulary import EventId, ProviderId, TextBlock
from elelem.vocabulary import blocks as blocks_module
from elelem.vocabulary import message as message_module

N = 2_000


def _event(seq: int, body: MessageBody, response: int | None) -> Event:
    return Event(
        EventId(f"e_{seq:016x}"), seq, "2026-01-01T00:00:00Z", 1, response, "message", body
    )


def _log(n: int) -> list[Event]:
    question = MessageBody("user", (TextBlock("hi"),), "user")
    blocks = [
        MessageBody(
            "assistant", (TextBlock(chr(97 + i % 26)),), "assistant", ProviderId("anthropic")
        )
        for i in range(n)
    ]
    return [_event(1, question, None)] + [_event(i + 2, b, 1) for i, b in enumerate(blocks)]


def test_projecting_n_blocks_scans_each_block_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[int] = []
    place = blocks_module.place_unknowns

    def counted(content: tuple[object, ...]) -> tuple[object, ...] | None:
        scanned.append(len(content))
        return place(content)

    monkeypatch.setattr(message_module, "place_unknowns", counted)
    events = _log(N)
    scanned.clear()  # the log's own messages are built; count the projection alone
    messages = projections.native_history(events)
    assert [len(m.content) for m in messages] == [1, N]
    assert "".join(p.text for p in messages[1].content if isinstance(p, TextBlock)) == "".join(
        chr(97 + i % 26) for i in range(N)
    )
    assert (messages[1].provider, messages[1].source) == ("anthropic", "assistant")
    # Each event's content is scanned once as it is read into a message, and
    # the assistant message's whole content once, when it is built.
    assert sum(scanned) == (N + 1) + N
