"""The chat of ``elelem serve`` told what the log recorded as it streams.

The turn engine stores each part before the stream relays it
(:func:`elelem.web.asgi.relay`), so the page's own chat routes can send,
besides the UI message stream, what the stored page shows after a reload and
the stream alone does not carry.  The protocol has no time of its own for a
part, so these are ``data-*`` parts (transient ones: a ``useChat`` page's
``onData`` sees them, no message keeps them):

- after each tool result, ``data-tool-time`` (``{toolCallId, calledAt,
  answeredAt}``, the ``at`` of the events that stored the call and its
  result; ``answeredAt`` is null for a result stored with others: the calls
  of a step answered together have no time of their own), from which the
  page writes how long the call took, as the stored page does;
- in each ``data-hosted-activity`` data, ``at`` (when that transition was
  stored: a run of activities says how long it took from these) and
  ``event`` (its event, where its search suggestions are served:
  :mod:`elelem.web.routes.frames`);
- ``data-response-line`` (``{toolCallId, notes: [{kind, text}]}``: a
  response's outcome, usage, cost and model, each sanitized, as
  :func:`elelem.web.html.record_notes` words them): a step that only
  called tools names its last call, whose fold the stored page puts the
  line in, and is sent once that call's part was; any other response (the
  answer, a stopped or failed one) has ``toolCallId`` null and is sent as
  soon as it is stored, the line under the answer.

Only the ``at`` and ``event`` added to ``data-hosted-activity`` change a
part a ``useChat`` message keeps; ``hosted=False`` leaves them out, so a
stock page (``/api/ui-chat``) keeps exactly what it kept without the log.

:class:`LogDates` is the sans-IO part; :func:`dated` reads the
conversation's new events as the chunks go by.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

from elelem.conversation import Conversation, Event, HostedBody, MessageBody, ResponseRecord
from elelem.render.event_lines import message_speaker
from elelem.vocabulary import ToolCallBlock, ToolResultBlock
from elelem.web.html import folded_record, record_notes
from elelem.web.ui_chunks import UIChunk

RESULTS = frozenset({"tool-output-available", "tool-output-error", "tool-output-denied"})
"""The chunks of a tool call's result."""

DELTAS = frozenset({"text-delta", "reasoning-delta", "tool-input-delta"})
"""The chunks that never follow a new stored event of their own."""


class LogDates:
    """What the log recorded of a run, added to its UI chunks.

    ``earlier`` are the conversation's events before the run (a resumed run
    answers calls stored in them); :meth:`note` is given each event stored
    since, before the chunks relaying it go through :meth:`chunk`;
    ``hosted``: whether hosted activity parts get their stored ``at`` and
    ``event`` (the only addition to a part a message keeps).
    """

    def __init__(self, earlier: Iterable[Event] = (), *, hosted: bool = True) -> None:
        self._dates_hosted = hosted
        self._called: dict[str, str] = {}
        self._answered: dict[str, str | None] = {}
        self._hosted: dict[tuple[str, str], deque[Event]] = {}
        self._step: list[str] = []
        self._lines: list[tuple[str | None, list[tuple[str, str]]]] = []
        """Usage lines not sent yet: the call whose fold holds each (None:
        under the answer) and its notes."""
        self._sent: set[str] = set()
        self.note(earlier, shown=True)

    def note(self, events: Iterable[Event], *, shown: bool = False) -> None:
        """Take in newly stored ``events`` (``shown``: ones the page shows
        already, whose times only are wanted)."""
        for event in events:
            body = event.body
            if isinstance(body, HostedBody) and not shown and self._dates_hosted:
                key = (body.activity.id, body.activity.state)
                self._hosted.setdefault(key, deque()).append(event)
            elif isinstance(body, ResponseRecord):
                notes = [] if shown else record_notes(body, event.at)
                if notes:
                    # The stored page's rule (html._Answer.record).
                    folded = folded_record(body) and self._step
                    self._lines.append((self._step[-1] if folded else None, notes))
                self._step = []
            elif isinstance(body, MessageBody):
                self._message(body, event.at)

    def _message(self, body: MessageBody, at: str) -> None:
        speaker, _ = message_speaker(body)
        if speaker == "assistant":
            for part in body.content:
                if isinstance(part, ToolCallBlock):
                    self._called[part.id] = at
                    self._step.append(part.id)
            return
        results = [p for p in body.content if isinstance(p, ToolResultBlock)]
        # A step's results are stored together: a call's own time is known
        # only when its result was stored alone (as the stored page says).
        alone = speaker != "tool" or len(results) <= 1
        for result in results:
            self._answered[result.call_id] = at if alone else None

    def chunk(self, chunk: UIChunk) -> list[UIChunk]:
        """``chunk`` with what the log adds to it, and after it."""
        kind = chunk.get("type")
        out = [chunk]
        if kind == "data-hosted-activity":
            data = chunk["data"]
            stored = self._hosted.get((data["id"], data["state"]))
            if stored:
                event = stored.popleft()
                out = [{**chunk, "data": {**data, "at": event.at, "event": event.id}}]
        elif kind in ("tool-input-available", "tool-input-error"):
            self._sent.add(chunk["toolCallId"])
        elif kind in RESULTS and chunk["toolCallId"] in self._answered:
            call = chunk["toolCallId"]
            times = {
                "toolCallId": call,
                "calledAt": self._called.get(call),
                "answeredAt": self._answered[call],
            }
            out.append({"type": "data-tool-time", "data": times, "transient": True})
        # A step's line once its call's fold is on the page, the answer's
        # at once (its response ended: it follows all its parts); any left
        # before the end (a call this stream did not send) goes anyway.
        ready = [
            line
            for line in self._lines
            if kind == "finish" or line[0] is None or line[0] in self._sent
        ]
        if ready:
            self._lines = [line for line in self._lines if line not in ready]
            lines = [_line(call, notes) for call, notes in ready]
            out = [*lines, chunk] if kind == "finish" else [*out, *lines]
        return out


def _line(call: str | None, notes: list[tuple[str, str]]) -> UIChunk:
    data: dict[str, Any] = {
        "toolCallId": call,
        "notes": [{"kind": kind, "text": text} for kind, text in notes],
    }
    return {"type": "data-response-line", "data": data, "transient": True}


async def dated(
    chunks: AsyncIterable[UIChunk], conversation: Conversation, *, hosted: bool = True
) -> AsyncIterator[UIChunk]:
    """``chunks`` of a run of ``conversation``, with what its log recorded
    (:class:`LogDates`, ``hosted`` as there): the events it stored are read
    as the chunks go."""
    earlier = conversation.events
    dates = LogDates(earlier, hosted=hosted)
    read = len(earlier)
    async for chunk in chunks:
        if chunk.get("type") not in DELTAS:
            events = conversation.events
            if len(events) > read:
                dates.note(events[read:])
                read = len(events)
        for out in dates.chunk(chunk):
            yield out


__all__ = ["DELTAS", "RESULTS", "LogDates", "dated"]
