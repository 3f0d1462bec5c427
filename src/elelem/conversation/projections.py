"""Projections: pure functions of the event list.

- :func:`native_history` — the messages a shape encoder receives.  Each
  assistant message holds its blocks and hosted transitions in stored order
  and names its provider, so the encoder replays it natively to that provider
  and portably to any other; this module knows no shape.
- :func:`portable_history` — the same messages through the one portable rule
  every encoder applies (no provider payload, no reasoning, no unknown block),
  what it left out reported.
- :func:`response_payloads` — what one provider's responses returned beside
  their messages (response-level native data), for its native encoder.
- :func:`turn_views` — the log grouped by turn, with each turn's responses,
  summed usage and how it ended.
- :func:`diagnose` — orphan tool calls (which projections answer with a
  synthetic error result), unfinished hosted activity, incomplete blocks and
  events of unknown kinds.

Overlays (compaction, strip reasoning, strip signature, repair) apply here;
stored events are never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from elelem.conversation.events import (
    Compaction,
    Event,
    HostedBody,
    MessageBody,
    Repair,
    ResponseRecord,
    Rewind,
    StripReasoning,
    StripSignature,
    TurnStart,
)
from elelem.errors import Patch
from elelem.vocabulary import (
    CallId,
    Drop,
    EventId,
    HostedActivity,
    Message,
    Part,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from elelem.vocabulary.portable import ANYWHERE, CORE_TYPES, portable_message
from elelem.vocabulary.registry import block_tags

ORPHAN_RESULT = "error: this tool call was never answered (no result was recorded)"
"""The content of the synthetic result projections give an unanswered tool call."""


class OrphanCall(msgspec.Struct, frozen=True):
    """A client tool call that no tool result answered."""

    call_id: CallId
    name: str
    event: EventId
    answered_synthetically: bool


class Diagnostics(msgspec.Struct, frozen=True):
    """What is unusual about a log.

    ``orphan_calls``: tool calls with no result (``answered_synthetically``
    when a later message exists, so projections carry a synthetic error
    result).  ``unfinished``: the last transition of each hosted activity that
    started and never reached a terminal state.  ``incomplete``: events
    holding blocks cut off by an interruption.  ``unknown``: events of kinds
    nobody registered.
    """

    orphan_calls: tuple[OrphanCall, ...] = ()
    unfinished: tuple[HostedActivity, ...] = ()
    incomplete: tuple[EventId, ...] = ()
    unknown: tuple[EventId, ...] = ()


class Projection(msgspec.Struct, frozen=True):
    """A projected history.

    ``origins[i][j]`` is the event that part ``j`` of message ``i`` came from
    (None for parts a projection made up: compaction summaries, synthetic
    tool results).  ``dropped`` says what a portable projection left out.
    """

    messages: tuple[Message, ...]
    origins: tuple[tuple[EventId | None, ...], ...]
    dropped: tuple[Drop, ...] = ()

    def locate(self, message: int, block: int) -> EventId | None:
        """The event behind part ``block`` of message ``message``."""
        try:
            return self.origins[message][block]
        except IndexError:
            return None


# -- overlays ---------------------------------------------------------------


@dataclass
class _Overlays:
    compactions: list[tuple[int, Compaction]] = field(default_factory=list)
    strip_reasoning: list[StripReasoning] = field(default_factory=list)
    strip_signature: dict[str, list[StripSignature]] = field(default_factory=dict)
    repairs: dict[str, Repair] = field(default_factory=dict)
    rewinds: list[tuple[int, Rewind]] = field(default_factory=list)

    def rewound(self, e: Event) -> Rewind | None:
        """The rewind that leaves ``e`` out: one written after it, from its
        turn or an earlier one."""
        for seq, r in self.rewinds:
            if e.seq < seq and e.turn >= r.first_turn:
                return r
        return None

    def compaction_for(self, turn: int) -> Compaction | None:
        # The latest compaction covering a turn governs it.
        for _, c in reversed(self.compactions):
            if c.first_turn <= turn <= c.last_turn:
                return c
        return None

    def strips_reasoning(self, turn: int, provider: str | None) -> bool:
        for s in self.strip_reasoning:
            in_range = s.first_turn <= turn and (s.last_turn is None or turn <= s.last_turn)
            if in_range and (s.provider is None or s.provider == provider):
                return True
        return False


def _overlays(events: Sequence[Event]) -> _Overlays:
    out = _Overlays()
    for e in events:
        body = e.body
        if isinstance(body, Compaction):
            out.compactions.append((e.seq, body))
        elif isinstance(body, StripReasoning):
            out.strip_reasoning.append(body)
        elif isinstance(body, StripSignature):
            out.strip_signature.setdefault(body.event, []).append(body)
        elif isinstance(body, Repair):
            out.repairs[body.event] = body
        elif isinstance(body, Rewind):
            out.rewinds.append((e.seq, body))
    return out


def _strip_payloads(block: Part, fmt: str) -> Part:
    payloads = getattr(block, "payloads", None)
    if not payloads:
        return block
    kept = tuple(p for p in payloads if p.format != fmt)
    if len(kept) == len(payloads):
        return block
    return msgspec.structs.replace(block, payloads=kept)  # type: ignore[type-var]


# -- native projection -------------------------------------------------------


class _Builder:
    """Messages built from events; the events of one group (the assistant
    blocks of one provider response, one event each) are gathered and their
    message built once, at :meth:`done`: growing it event by event would
    copy the whole message per block (quadratic in the blocks)."""

    __slots__ = ("group", "heads", "origins", "parts")

    def __init__(self) -> None:
        self.heads: list[Message] = []
        self.parts: list[list[Part] | None] = []  # None: the head alone
        self.origins: list[list[EventId | None]] = []
        self.group: object = None

    def add(self, message: Message, origins: tuple[EventId | None, ...], group: object) -> None:
        if group is not None and group == self.group and self.heads:
            prev = self.heads[-1]
            gathered = self.parts[-1]
            if gathered is None:
                gathered = self.parts[-1] = list(prev.content)
            gathered.extend(message.content)
            self.origins[-1].extend(origins)
            if prev.provider is None and message.provider is not None:
                self.heads[-1] = Message(
                    prev.role, (), prev.source, message.provider, message.model
                )
            return
        self.heads.append(message)
        self.parts.append(None)
        self.origins.append(list(origins))
        self.group = group

    def done(self) -> tuple[list[Message], list[tuple[EventId | None, ...]]]:
        """Every message, built once, and the event each part came from."""
        messages = [
            head if parts is None else msgspec.structs.replace(head, content=tuple(parts))
            for head, parts in zip(self.heads, self.parts, strict=True)
        ]
        return messages, [tuple(o) for o in self.origins]


def _content_of(e: Event, ov: _Overlays) -> tuple[Part, ...] | None:
    """The event's parts after repair, signature and reasoning overlays."""
    body = e.body
    if isinstance(body, HostedBody):
        return (body.activity,)
    assert isinstance(body, MessageBody)
    repair = ov.repairs.get(e.id)
    content: tuple[Part, ...] = repair.content if repair is not None else body.content
    strips = ov.strip_signature.get(e.id)
    if strips:
        parts = list(content)
        for s in strips:
            if 0 <= s.block < len(parts):
                parts[s.block] = _strip_payloads(parts[s.block], s.format)
        content = tuple(parts)
    if (
        ov.strip_reasoning
        and body.role == "assistant"
        and ov.strips_reasoning(e.turn, body.provider)
    ):
        content = tuple(p for p in content if not isinstance(p, ReasoningBlock))
    return content


def project(events: Sequence[Event]) -> Projection:
    """The native projection with its origins (see :func:`native_history`)."""
    ov = _overlays(events)
    out = _Builder()
    emitted: set[int] = set()
    for e in events:
        body = e.body
        if not isinstance(body, (MessageBody, HostedBody)):
            continue
        if ov.rewinds and ov.rewound(e) is not None:
            continue
        if ov.compactions:
            compaction = ov.compaction_for(e.turn)
            if compaction is not None:
                if id(compaction) not in emitted:
                    emitted.add(id(compaction))
                    summary = Message(
                        role="user",
                        content=(TextBlock(compaction.summary),),
                        source="context:compaction",
                    )
                    out.add(summary, (None,), None)
                continue
        content = _content_of(e, ov)
        if not content:
            continue
        if isinstance(body, HostedBody):
            role = "assistant"
            message = Message("assistant", content, "assistant", body.provider, body.model)
        else:
            role = body.role
            message = Message(role, content, body.source, body.provider, body.model)
        # Assistant events of one provider response form one message.
        group = ("r", e.response) if role == "assistant" and e.response is not None else None
        out.add(message, (e.id,) * len(content), group)
    messages, origins = _answer_orphans(*out.done())
    return Projection(tuple(messages), tuple(origins))


def _answer_orphans(
    messages: list[Message], origins: list[tuple[EventId | None, ...]]
) -> tuple[list[Message], list[tuple[EventId | None, ...]]]:
    msgs = list(messages)
    origs = list(origins)
    i = 0
    while i < len(msgs):
        m = msgs[i]
        if m.role != "assistant":
            i += 1
            continue
        calls = [p for p in m.content if isinstance(p, ToolCallBlock)]
        if not calls or i + 1 >= len(msgs):
            i += 1
            continue
        answered: set[str] = set()
        j = i + 1
        while j < len(msgs) and msgs[j].role != "assistant":
            answered.update(p.call_id for p in msgs[j].content if isinstance(p, ToolResultBlock))
            j += 1
        synthetic = tuple(
            ToolResultBlock(c.id, ORPHAN_RESULT, is_error=True, name=c.name)
            for c in calls
            if c.id not in answered
        )
        if synthetic:
            nxt = msgs[i + 1]
            if nxt.role == "user" and any(isinstance(p, ToolResultBlock) for p in nxt.content):
                msgs[i + 1] = msgspec.structs.replace(nxt, content=nxt.content + synthetic)
                origs[i + 1] = origs[i + 1] + (None,) * len(synthetic)
            else:
                msgs.insert(i + 1, Message("user", synthetic, "tool"))
                origs.insert(i + 1, (None,) * len(synthetic))
        i += 1
    return msgs, origs


def native_history(events: Sequence[Event]) -> tuple[Message, ...]:
    """The history a shape encoder receives, overlays applied.

    Assistant content of one provider response is one message, in stored
    order, blocks and hosted transitions interleaved, carrying the provider
    and model that produced it.  A tool call with no result, followed by more
    conversation, is answered by a synthetic error result (never a hosted
    activity).
    """
    return project(events).messages


def response_payloads(events: Sequence[Event], provider: str | None) -> tuple[ProviderPayload, ...]:
    """The response-level native data ``provider`` returned over the log,
    oldest first: the payloads of its response records (an Anthropic message
    envelope with its code-execution ``container``), for
    :attr:`ModelRequest.response_payloads <elelem.wire.ModelRequest>`.

    Only ``provider``'s own (every provider's for None, for a caller that
    sorts them per target): no other provider can use them.  Overlays do not
    touch them; a compaction summarizes messages, and the provider-side state
    these name (a container's files) lives on regardless.  Whether a payload
    is still current (a container's expiry) is the shape's judgement, against
    the request's ``now``.
    """
    out: list[ProviderPayload] = []
    for e in events:
        body = e.body
        if isinstance(body, ResponseRecord) and body.payloads:
            out.extend(p for p in body.payloads if provider is None or p.provider == provider)
    return tuple(out)


# -- portable projection -----------------------------------------------------


def portable_history(events: Sequence[Event]) -> Projection:
    """The history as any provider may receive it: every message through the
    one portable rule (:func:`~elelem.vocabulary.portable.portable_message`,
    the rule every encoder applies to a message another provider produced),
    with citations kept and every registered block type carried.

    No provider payload is left anywhere, reasoning and unknown blocks are
    left out, and each thing left out is reported in ``dropped`` (``where``
    the part's place in the native projection: ``messages[1].content[4]``).
    Messages lose their ``provider`` (so no encoder mistakes them for its
    own); a message with nothing left is left out.
    """
    native = project(events)
    accepts = ANYWHERE.with_blocks(*(t for t in block_tags() if t not in CORE_TYPES))
    dropped: list[Drop] = []
    messages: list[Message] = []
    origins: list[tuple[EventId | None, ...]] = []
    for i, (m, orig) in enumerate(zip(native.messages, native.origins, strict=True)):
        kept = portable_message(m, accepts)
        dropped.extend(d.under(f"messages[{i}]") for d in kept.dropped)
        if not kept.message.content:
            continue
        messages.append(msgspec.structs.replace(kept.message, provider=None))
        origins.append(tuple(orig[j] for j in kept.positions))
    return Projection(tuple(messages), tuple(origins), tuple(dropped))


# -- patches -----------------------------------------------------------------


def overlay_for_patch(projection: Projection, patch: Patch) -> StripSignature | StripReasoning:
    """The overlay that applies a recoverable error's patch to the log.

    ``strip-signature`` targets ``{"message": i, "block": j}`` positions of the
    request built from ``projection``; ``strip-reasoning`` may name a
    ``provider``.  Any other action is a :class:`ValueError`.
    """
    if patch.action == "strip-signature":
        mi, bi = patch.target.get("message"), patch.target.get("block")
        if not isinstance(mi, int) or not isinstance(bi, int):
            raise ValueError(f"patch target {dict(patch.target)!r} lacks message/block positions")
        event = projection.locate(mi, bi)
        if event is None:
            raise ValueError(f"patch target message {mi} block {bi} is not a stored block")
        fmt = str(patch.target.get("format", "signature"))
        part = projection.messages[mi].content[bi]
        if not any(p.format == fmt for p in getattr(part, "payloads", ())):
            # Positions are the request's; a part without the payload means
            # they do not line up with this projection: guessing would strip
            # the wrong block.
            raise ValueError(f"message {mi} block {bi} holds no {fmt} payload")
        # The block's position inside its event: count earlier parts of the
        # same event within the message.
        position = sum(1 for o in projection.origins[mi][:bi] if o == event)
        return StripSignature(event, position, fmt, patch.reason)
    if patch.action == "strip-reasoning":
        provider = patch.target.get("provider")
        return StripReasoning(
            provider=None if provider is None else str(provider),  # type: ignore[arg-type]
            reason=patch.reason,
        )
    raise ValueError(f"no overlay applies patch action {patch.action!r}")


# -- turn view ---------------------------------------------------------------


class TurnView(msgspec.Struct, frozen=True):
    """One turn: its events, the responses it took, their summed usage and
    how it ended (``completed``, ``paused``, ``interrupted``, ``error``, or
    None while no response was recorded)."""

    turn: int
    trigger: str | None
    model: str | None
    started_at: str
    events: tuple[Event, ...]
    responses: tuple[ResponseRecord, ...]
    usage: Usage
    end: str | None
    rewound: str | None = None
    """Why a :class:`Rewind` left this turn out of projections (``retry``,
    ``edit``), or None for a turn that counts."""


def add_usage(a: Usage, b: Usage) -> Usage:
    """The sum of two usages (``raw`` is not summed: the result has none)."""
    hosted = dict(a.hosted)
    for k, v in b.hosted.items():
        hosted[k] = hosted.get(k, 0) + v
    return Usage(
        a.input + b.input,
        a.output + b.output,
        a.cache_read + b.cache_read,
        a.cache_write + b.cache_write,
        a.reasoning + b.reasoning,
        hosted,
    )


def turn_end(record: ResponseRecord | None) -> str | None:
    """How a turn whose last response is ``record`` ended."""
    if record is None:
        return None
    if not record.complete:
        return "interrupted"
    if record.finish == "paused":
        return "paused"
    if record.finish == "error" or record.error is not None:
        return "error"
    return "completed"


def turn_views(events: Sequence[Event]) -> tuple[TurnView, ...]:
    """The log grouped by turn, in order (turn 0 holds events before any turn)."""
    grouped: dict[int, list[Event]] = {}
    for e in events:
        grouped.setdefault(e.turn, []).append(e)
    ov = _overlays(events)
    views = []
    for turn, evs in grouped.items():
        start = next((e.body for e in evs if isinstance(e.body, TurnStart)), None)
        records = tuple(e.body for e in evs if isinstance(e.body, ResponseRecord))
        usage = Usage()
        for r in records:
            if r.usage is not None:
                usage = add_usage(usage, r.usage)
        views.append(
            TurnView(
                turn=turn,
                trigger=start.trigger if start is not None else None,
                model=start.model if start is not None else None,
                started_at=evs[0].at,
                events=tuple(evs),
                responses=records,
                usage=usage,
                end=turn_end(records[-1] if records else None),
                rewound=_rewound(evs, ov),
            )
        )
    return tuple(views)


def _rewound(events: Sequence[Event], ov: _Overlays) -> str | None:
    if not ov.rewinds:
        return None
    for e in events:
        if isinstance(e.body, TurnStart | MessageBody):
            found = ov.rewound(e)
            return None if found is None else found.reason or "rewind"
    return None


# -- diagnostics -------------------------------------------------------------


def diagnose(events: Sequence[Event]) -> Diagnostics:
    """Orphan tool calls, unfinished hosted activity, incomplete blocks and
    unknown events of the log."""
    calls: dict[str, tuple[ToolCallBlock, EventId, int]] = {}
    answered: set[str] = set()
    last: dict[str, HostedActivity] = {}
    incomplete: list[EventId] = []
    unknown: list[EventId] = []
    # Where each message-like event sits and which assistant message it joins.
    content_at: list[tuple[int, object]] = []
    for i, e in enumerate(events):
        body = e.body
        if isinstance(body, MessageBody):
            group = e.response if body.role == "assistant" and e.response is not None else e.id
            content_at.append((i, group))
            for p in body.content:
                if isinstance(p, ToolCallBlock):
                    calls[p.id] = (p, e.id, i)
                elif isinstance(p, ToolResultBlock):
                    answered.add(p.call_id)
                if getattr(p, "complete", True) is False:
                    incomplete.append(e.id)
        elif isinstance(body, HostedBody):
            content_at.append((i, e.response if e.response is not None else e.id))
            last[body.activity.id] = body.activity
        elif isinstance(body, msgspec.Raw):
            unknown.append(e.id)
    group_at = dict(content_at)

    def followed(i: int) -> bool:
        return any(j > i and g != group_at[i] for j, g in content_at)

    orphans = tuple(
        OrphanCall(call.id, call.name, ev, followed(at))
        for cid, (call, ev, at) in calls.items()
        if cid not in answered
    )
    unfinished = tuple(a for a in last.values() if not a.terminal)
    return Diagnostics(orphans, unfinished, tuple(dict.fromkeys(incomplete)), tuple(unknown))


__all__ = [
    "ORPHAN_RESULT",
    "Diagnostics",
    "OrphanCall",
    "Projection",
    "TurnView",
    "add_usage",
    "diagnose",
    "native_history",
    "overlay_for_patch",
    "portable_history",
    "project",
    "response_payloads",
    "turn_end",
    "turn_views",
]
