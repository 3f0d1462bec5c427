"""Events of the conversation log (docs/architecture.md §4).

An event is ``{id, seq, at, turn, response, kind, body}``.  ``kind`` selects
the type of ``body``; kinds form an open set (:func:`register_event_kind`).
An event whose kind nobody registered keeps its body as the raw JSON bytes it
arrived with (a :class:`msgspec.Raw`), so it loads, stays in place and
re-encodes byte-identically.

Every event encodes to one canonical JSON document through :mod:`elelem.codec`;
those bytes are what the store keeps and what export writes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias, Union

import msgspec

from elelem import codec
from elelem.conversation.errors import EventError
from elelem.conversation.upgrades import upgrade_body, upgraded
from elelem.errors import DecodeError
from elelem.stream.chunks import Retry
from elelem.vocabulary import (
    Block,
    Drop,
    EventId,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    ResponseId,
    Role,
    TextBlock,
    ToolResultBlock,
    Usage,
)
from elelem.vocabulary.json import decode_json
from elelem.vocabulary.registry import add_once, block_types_generation

# -- bodies -----------------------------------------------------------------


# Values of a log are never part of a reference cycle; untracked by the cycle
# collector, a loaded 100,000-event log costs the collector nothing.
class TurnStart(msgspec.Struct, frozen=True, gc=False):
    """A turn began.  ``trigger`` is a member of the open set of turn triggers
    (``user``, ``tool-results``, ``continuation``, ``retry``, …); ``model`` the
    model address the caller asked for (``anthropic:claude-sonnet-4-5``);
    ``system`` the system prompt the turn's requests carried."""

    trigger: str = "user"
    model: str | None = None
    system: str | None = None


class MessageBody(msgspec.Struct, frozen=True, gc=False):
    """Message content: a whole user, system, tool-result or context message,
    or ONE assistant block (assistant blocks commit one event each, as they
    flush).  ``source`` is a member of the open set of message sources
    (``context:<tag>`` for injected context).  ``provider``/``model`` name who
    produced assistant content; native replay depends on them.
    """

    role: Role
    content: tuple[Block, ...]
    source: str = ""
    provider: ProviderId | None = None
    model: str | None = None


class HostedBody(msgspec.Struct, frozen=True, gc=False):
    """One transition of a hosted activity, in stream order with the blocks of
    the same response."""

    activity: HostedActivity
    provider: ProviderId | None = None
    model: str | None = None


class ResponseRecord(msgspec.Struct, frozen=True, gc=False):
    """The identity and outcome of one provider response.

    Events with the same ``response`` number are the content it produced; this
    record is appended after them.  ``finish`` is a member of the open set of
    finish reasons (``aborted`` for an interrupted stream, whose ``complete``
    is False); ``dropped`` holds what the request left out (``where`` a path in
    the request: ``messages[3].content[1]``) and what the assembler discarded
    (``where`` starting with ``response``), one :class:`~elelem.vocabulary.Drop`
    each (a record stored when drops were free text loads with each line as a
    :data:`~elelem.vocabulary.drop.LEGACY` drop).  ``continuation``
    counts automatic continuations of a paused turn (0 for the first response);
    ``request`` is the last event the request's history held, linking the
    response to what caused it.  ``payloads`` keep the response-level native
    data no block owns (:attr:`elelem.stream.Finish.payloads`: an Anthropic
    message envelope with its stop details and code-execution ``container``),
    which native replay to the same provider may need.  ``retries`` are the
    client's visible retries before this response began (each attempt that
    failed before any chunk arrived: why, and how long it waited).  ``tier``
    names a price tier other than the standard one: ``batch`` for a response
    of a batch (:mod:`elelem.batches`), priced at the batch price.
    """

    provider: ProviderId | None = None
    model: str | None = None
    response_id: ResponseId | None = None
    request_id: str | None = None
    finish: str | None = None
    finish_raw: str | None = None
    failure: str | None = None
    usage: Usage | None = None
    complete: bool = True
    dropped: tuple[Drop, ...] = ()
    continuation: int = 0
    error: str | None = None
    request: EventId | None = None
    payloads: tuple[ProviderPayload, ...] = ()
    retries: tuple[Retry, ...] = ()
    tier: str | None = None


class Compaction(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """Overlay: the messages of turns ``first_turn..last_turn`` (inclusive) are
    replaced, in projections, by one ``context:compaction`` user message
    holding ``summary``.  A summary a model wrote keeps its provenance: the
    ``provider``, ``model``, ``response_id`` and ``usage`` of the response
    that wrote it (unset for a caller's own summary)."""

    first_turn: int
    last_turn: int
    summary: str
    provider: ProviderId | None = None
    model: str | None = None
    response_id: str | None = None
    usage: Usage | None = None


class StripReasoning(msgspec.Struct, frozen=True, gc=False):
    """Overlay: reasoning blocks of turns ``first_turn..last_turn`` (None: to
    the end) are left out of projections; ``provider`` limits it to reasoning
    one provider produced."""

    first_turn: int = 0
    last_turn: int | None = None
    provider: ProviderId | None = None
    reason: str = ""


class StripSignature(msgspec.Struct, frozen=True, gc=False):
    """Overlay: payloads of ``format`` are removed from block ``block`` of the
    message event ``event`` (the repair a recoverable invalid-signature error
    asks for)."""

    event: EventId
    block: int = 0
    format: str = "signature"
    reason: str = ""


class Rewind(msgspec.Struct, frozen=True, gc=False):
    """Overlay: the turns from ``first_turn`` on, as the log stood when the
    overlay was written, are left out of projections; the turns after it
    count.  A retry (``reason`` ``retry``) or an edited message resent
    (``edit``) writes one before its new turn, so the old answer stays in the
    log, shown as replaced, but is never sent again."""

    first_turn: int
    reason: str = ""


class Repair(msgspec.Struct, frozen=True, gc=False):
    """Overlay: the content of message event ``event`` reads as ``content`` in
    projections (empty content leaves the event out)."""

    event: EventId
    content: tuple[Block, ...] = ()
    reason: str = ""


class Awaiting(msgspec.Struct, frozen=True, gc=False):
    """A run stopped for decisions made outside it (deferred approvals,
    external tool results): the calls of its last step, by call id (a hosted
    MCP approval request by its activity id).  ``approval`` calls wait for a
    yes or no, ``results`` calls for results the caller supplies; ``ready``
    calls need neither and run when the run resumes.  Until a
    :class:`Decision` follows, none of them is run or settled."""

    approval: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    ready: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        """``awaiting-approval`` while any call waits for one, else
        ``awaiting-results``."""
        return "awaiting-approval" if self.approval else "awaiting-results"


class Decision(msgspec.Struct, frozen=True, gc=False):
    """The answers to the :class:`Awaiting` before it, stored before any call
    runs, so a process killed while resuming never runs a call twice: the
    ``approved`` and ``refused`` call ids, and the ``results`` the caller
    gave (answered as they are)."""

    approved: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    results: tuple[Block, ...] = ()


class ServerRequest(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A request an MCP server made of the client during a tool call
    (``method``: ``elicitation/create``, ``sampling/createMessage``,
    ``roots/list``) and how it was answered (``outcome``: the elicitation's
    ``accept``/``decline``/``cancel``, ``served`` or ``refused`` for
    sampling, ``listed`` for roots).  ``detail`` holds what was asked and
    answered (the server's text: untrusted); a served sampling request
    names its ``provider`` and ``model`` and what it used (``usage``),
    priced with the turn.  Changes no projection."""

    server: str
    method: str
    outcome: str
    detail: dict[str, Any] = msgspec.field(default_factory=dict)
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None


Body: TypeAlias = Any
"""An event body: one of the registered body types, or :class:`msgspec.Raw`
for a kind nobody registered."""

OVERLAY_KINDS: frozenset[str] = frozenset(
    {"compaction", "strip-reasoning", "strip-signature", "repair", "rewind", "context-edits"}
)

_lock = threading.Lock()
_kinds: dict[str, type[msgspec.Struct]] = {
    "turn-start": TurnStart,
    "message": MessageBody,
    "hosted": HostedBody,
    "response": ResponseRecord,
    "compaction": Compaction,
    "strip-reasoning": StripReasoning,
    "strip-signature": StripSignature,
    "repair": Repair,
    "rewind": Rewind,
    "awaiting": Awaiting,
    "decision": Decision,
    "server-request": ServerRequest,
}
_kind_of: dict[type, str] = {v: k for k, v in _kinds.items()}


def register_event_kind(kind: str, body: type[msgspec.Struct]) -> None:
    """Register ``body`` as the body type of events of ``kind``.

    Registering the same pair again is a no-op; another type for a taken kind
    is an :class:`EventError`.
    """
    global _kinds_generation
    if not isinstance(kind, str) or not kind:
        raise EventError("an event kind must be a non-empty string")
    if not (isinstance(body, type) and issubclass(body, msgspec.Struct)):
        raise EventError(f"the body type of event kind {kind!r} must be a msgspec.Struct")
    with _lock:
        if add_once(
            _kinds,
            kind,
            body,
            lambda old: EventError(f"event kind {kind!r} is already registered to {old.__name__}"),
        ):
            _kind_of[body] = kind
            _kinds_generation += 1


def event_kinds() -> tuple[str, ...]:
    """Every registered event kind."""
    return tuple(_kinds)


def kind_of(body: object) -> str:
    """The registered kind of a body value (an :class:`EventError` if none)."""
    kind = _kind_of.get(type(body))
    if kind is None:
        raise EventError(f"{type(body).__name__} is not a registered event body")
    return kind


# -- events -----------------------------------------------------------------


class Event(msgspec.Struct, frozen=True, gc=False):
    """One stored event.  ``seq`` counts from 1 within its conversation; ``at``
    is the UTC time it was committed (ISO 8601); ``turn`` the turn it belongs
    to (0 before the first turn); ``response`` the number of the provider
    response whose content it is, if any."""

    id: EventId
    seq: int
    at: str
    turn: int
    response: int | None
    kind: str
    body: Body

    @property
    def known(self) -> bool:
        """False when the kind is not registered (the body is raw JSON)."""
        return not isinstance(self.body, msgspec.Raw)


class Draft(msgspec.Struct, frozen=True):
    """An event not yet appended: the store gives it ``seq`` and ``at`` (and an
    id, unless ``id`` is set)."""

    kind: str
    body: Body
    turn: int = 0
    response: int | None = None
    id: EventId | None = None

    @classmethod
    def of(cls, body: msgspec.Struct, *, turn: int = 0, response: int | None = None) -> Draft:
        """A draft whose kind is the registered kind of ``body``."""
        return cls(kind_of(body), body, turn, response)


class _Envelope(msgspec.Struct, frozen=True):
    id: str
    seq: int
    at: str
    turn: int
    response: int | None
    kind: str
    body: msgspec.Raw


_envelope = msgspec.json.Decoder(_Envelope)


def raw_body(value: object) -> msgspec.Raw:
    """A raw body for an event of an unregistered kind, from JSON bytes/str or
    a JSON value.  Bytes must be one valid JSON document."""
    if isinstance(value, msgspec.Raw):
        return value
    if isinstance(value, (bytes, str)):
        data = value.encode() if isinstance(value, str) else value
        try:
            decode_json(data)
        except msgspec.DecodeError as exc:
            raise DecodeError(f"raw event body is not JSON: {exc}") from None
        return msgspec.Raw(data)
    return msgspec.Raw(codec.dumps(value))


def check_body(kind: str, body: object) -> None:
    """Raise :class:`EventError` unless ``body`` fits ``kind``."""
    expected = _kinds.get(kind)
    if expected is None:
        if not isinstance(body, msgspec.Raw):
            raise EventError(f"event kind {kind!r} is not registered; its body must be msgspec.Raw")
    elif type(body) is not expected:
        raise EventError(
            f"event kind {kind!r} needs a {expected.__name__} body, got {type(body).__name__}"
        )


def encode_event(event: Event) -> bytes:
    """The canonical bytes of ``event``."""
    return codec.dumps(event)


# -- the fast path of decoding ---------------------------------------------------
#
# Loading a long log is decoding.  Each registered kind gets an envelope struct
# tagged by ``kind`` whose body is the codec's fast form of the kind's body
# type (blocks typed as the registered block classes), and one msgspec pass
# decodes a whole event, the kind found by msgspec itself.  An event that does
# not fit (a kind or block tag nobody registered, or any error) goes through
# the general path of :func:`decode_event`, which alone decides the result and
# the errors; so the result is the same either way.


class _FastEvents:
    """The one-pass decoders of every registered kind, for one generation of
    the block and event-kind registries."""

    __slots__ = ("bodies", "generation", "one", "restores")

    def __init__(self, generation: tuple[int, int]) -> None:
        self.generation = generation
        # kind, body restore (None: the decoded body is already the body type)
        self.restores: dict[type, tuple[str, codec.Restore | None]] = {}
        # kind -> the one-pass decoder of a body alone, and its restore
        self.bodies: dict[str, tuple[msgspec.json.Decoder[Any], codec.Restore | None]] = {}
        envelopes = []
        for kind, typ in list(_kinds.items()):
            try:
                body, restore = codec.fast_type(typ)
                alone = msgspec.json.Decoder(body, dec_hook=codec.dec_hook)
                envelope = msgspec.defstruct(
                    "_FastEvent",
                    [
                        ("id", str),
                        ("seq", int),
                        ("at", str),
                        ("turn", int),
                        ("response", int | None),
                        ("body", body),
                    ],
                    module=__name__,
                    tag_field="kind",
                    tag=kind,
                    frozen=True,
                    gc=False,
                )
                msgspec.json.Decoder(envelope)
            except Exception:  # noqa: BLE001 - not lost: the general path decodes this kind
                # msgspec cannot decode some plugin's body type; its events
                # (and their errors) are decode_event's general path's alone.
                continue
            envelopes.append(envelope)
            self.restores[envelope] = (kind, restore)
            self.bodies[kind] = (alone, restore)
        self.one: msgspec.json.Decoder[Any] = msgspec.json.Decoder(
            Union[tuple(envelopes)],  # noqa: UP007
            dec_hook=codec.dec_hook,
        )


_kinds_generation = 0
_fast: _FastEvents | None = None


def _fast_events() -> _FastEvents:
    global _fast
    generation = (block_types_generation(), _kinds_generation)
    fast = _fast
    if fast is None or fast.generation != generation:
        fast = _fast = _FastEvents(generation)
    return fast


def decode_fast(data: bytes) -> Event | None:
    """The event in ``data`` when the one-pass decoder fits it, else None
    (then :func:`decode_event` decides, errors included)."""
    fast = _fast_events()
    try:
        e = fast.one.decode(data)
        kind, restore = fast.restores[type(e)]
        body = e.body if restore is None else restore(e.body)
    except Exception:  # noqa: BLE001 - not lost: decode_event's general path decides
        return None
    return Event(e.id, e.seq, e.at, e.turn, e.response, kind, body)


def decode_events(rows: Iterable[Sequence[bytes]]) -> list[Event]:
    """Decode the first column of each row (canonical event bytes) as
    :func:`decode_event` does; the store's load, so its loop is written out."""
    fast = _fast_events()
    one = fast.one.decode
    restores = fast.restores
    events: list[Event] = []
    append = events.append
    for row in rows:
        data = row[0]
        try:
            e = one(data)
            kind, restore = restores[type(e)]
            body = e.body if restore is None else restore(e.body)
        except Exception:  # noqa: BLE001 - not lost: decode_event's general path decides
            body = _MISS
        if body is _MISS:
            append(decode_event(data))
        else:
            append(Event(e.id, e.seq, e.at, e.turn, e.response, kind, body))
    return events


_MISS: Any = object()


def decode_event(data: bytes | str) -> Event:
    """Decode canonical event bytes; an unknown kind keeps its raw body.

    Raises :class:`~elelem.errors.DecodeError` naming the bad field.
    """
    if isinstance(data, (bytes, memoryview)):
        # Text takes the general path only, so the two can be compared.
        fast = decode_fast(bytes(data) if isinstance(data, memoryview) else data)
        if fast is not None:
            return fast
    try:
        env = _envelope.decode(data)
    except msgspec.ValidationError as exc:
        raise DecodeError(f"malformed event: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DecodeError(f"malformed JSON: {exc}") from None
    body = _general_body(env.kind, env.body, env.id)
    return Event(EventId(env.id), env.seq, env.at, env.turn, env.response, env.kind, body)


def decode_event_body(data: bytes) -> Body:
    """The body of the event whose canonical bytes are ``data``: what
    ``decode_event(data).body`` is (its errors too), without building the
    event."""
    fast = _fast_events()
    try:
        e = fast.one.decode(data)
        restore = fast.restores[type(e)][1]
        body = e.body if restore is None else restore(e.body)
    except Exception:  # noqa: BLE001 - not lost: decode_event's general path decides
        return decode_event(data).body
    return body


def decode_body(kind: str, data: msgspec.Raw, event: str) -> Body:
    """The body of an event of ``kind`` (whose id is ``event``) from its raw
    JSON, exactly as :func:`decode_event` decodes it within the event: the
    registered type's value, or ``data`` itself for a kind nobody registered.

    Raises :class:`~elelem.errors.DecodeError` naming the event and the bad
    field, as :func:`decode_event` does.
    """
    found = _fast_events().bodies.get(kind)
    if found is not None:
        decode, restore = found
        try:
            body = decode.decode(data)
            body = body if restore is None else restore(body)
        except Exception:  # noqa: BLE001 - not lost: the general path decides
            body = _MISS
        if body is not _MISS:
            return body
    return _general_body(kind, data, event)


def _general_body(kind: str, data: msgspec.Raw, event: str) -> Body:
    typ = _kinds.get(kind)
    if typ is None:
        return data
    try:
        return codec.loads(data, typ)
    except DecodeError as exc:
        body = upgraded(kind, data, typ)
        if body is None:
            raise DecodeError(
                f"event {event} ({kind}): {exc.detail}", "$.body" + exc.path[1:]
            ) from None
        return body


def event_text(kind: str, body: object) -> str | None:
    """The searchable text of an event (None for events without text)."""
    if kind == "message" and isinstance(body, MessageBody):
        parts = []
        for block in body.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                parts.append(block.content)
        return "\n".join(parts) if parts else None
    if kind == "compaction" and isinstance(body, Compaction):
        return body.summary
    return None


__all__ = [
    "OVERLAY_KINDS",
    "Awaiting",
    "Body",
    "Compaction",
    "Decision",
    "Draft",
    "Event",
    "HostedBody",
    "MessageBody",
    "Repair",
    "ResponseRecord",
    "Rewind",
    "ServerRequest",
    "StripReasoning",
    "StripSignature",
    "TurnStart",
    "check_body",
    "decode_body",
    "decode_event",
    "decode_event_body",
    "decode_events",
    "encode_event",
    "event_kinds",
    "event_text",
    "kind_of",
    "raw_body",
    "register_event_kind",
    "upgrade_body",
]
