"""A conversation: its store, its events, and the operations that append to it.

:class:`Conversation` keeps the loaded events in memory and appends through
its store; every projection is a pure function of :attr:`Conversation.events`.
The log knows nothing of turns: the turn engine
(:mod:`elelem.turns.engine`) sits above it and appends through it,
driven by :func:`elelem.turns.drive.send` / ``send_sync``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from elelem.conversation.blobs import resolve_messages
from elelem.conversation.errors import EventError
from elelem.conversation.events import (
    OVERLAY_KINDS,
    Draft,
    Event,
    HostedBody,
    MessageBody,
    Rewind,
    TurnStart,
    kind_of,
)
from elelem.conversation.projections import (
    Diagnostics,
    Projection,
    TurnView,
    diagnose,
    overlay_for_patch,
    portable_history,
    project,
    response_payloads,
    turn_views,
)
from elelem.conversation.store import ConversationInfo, Store
from elelem.errors import Patch
from elelem.vocabulary import (
    Blob,
    ConversationId,
    EventId,
    HostedActivity,
    Message,
    ProviderPayload,
    TextBlock,
    ToolResultBlock,
)


class Conversation:
    """One conversation log, open on a store.

    Not safe to append to from two places at once through two ``Conversation``
    objects (each keeps its own view of the turn and response counters); the
    store itself stays consistent regardless.
    """

    def __init__(self, store: Store, id: ConversationId, events: Sequence[Event] = ()) -> None:
        self.store = store
        self.id = id
        self._events: list[Event] = list(events)
        self._turn = max((e.turn for e in self._events), default=0)
        self._response = max(
            (e.response for e in self._events if e.response is not None), default=0
        )
        # Blobs resolved for projections, by hash: each is read from the store once.
        self._blobs: dict[str, Blob] = {}

    # -- opening ---------------------------------------------------------------

    @classmethod
    def create(cls, store: Store, *, title: str | None = None) -> Conversation:
        """A new, empty conversation in ``store``."""
        info = store.create(title=title)
        return cls(store, info.id)

    @classmethod
    def open(cls, store: Store, id: ConversationId | str) -> Conversation:
        """Load an existing conversation."""
        cid = ConversationId(id)
        return cls(store, cid, store.load(cid))

    def refresh(self) -> tuple[Event, ...]:
        """Load events others appended since; return them."""
        last = self._events[-1].seq if self._events else 0
        new = self.store.load(self.id, after=last)
        self._note(new)
        return new

    def fork(self, at: EventId | None = None, *, title: str | None = None) -> Conversation:
        """A new conversation holding this one's events up to and including
        ``at`` (the latest event by default), to continue differently."""
        if at is None:
            if not self._events:
                raise EventError("an empty conversation has no event to fork at")
            at = self._events[-1].id
        info = self.store.fork(self.id, at, title=title)
        return Conversation.open(self.store, info.id)

    @property
    def info(self) -> ConversationInfo:
        """The store's listing entry for this conversation."""
        return self.store.info(self.id)

    # -- state -----------------------------------------------------------------

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event, in order."""
        return tuple(self._events)

    @property
    def turn(self) -> int:
        """The number of the latest turn (0 before the first)."""
        return self._turn

    @property
    def system(self) -> str | None:
        """The system prompt of the latest turn that recorded one."""
        for e in reversed(self._events):
            if isinstance(e.body, TurnStart) and e.body.system is not None:
                return e.body.system
        return None

    def next_response(self) -> int:
        """Reserve the number of a new provider response."""
        self._response += 1
        return self._response

    def _note(self, events: Iterable[Event]) -> None:
        for e in events:
            self._events.append(e)
            if e.turn > self._turn:
                self._turn = e.turn
            if e.response is not None and e.response > self._response:
                self._response = e.response

    # -- appending ---------------------------------------------------------------

    def append(self, *drafts: Draft) -> tuple[Event, ...]:
        """Append drafts as one commit; return the stored events."""
        events = self.store.append(self.id, drafts)
        self._note(events)
        return events

    def start_turn(
        self, trigger: str = "user", model: str | None = None, system: str | None = None
    ) -> int:
        """Open a new turn; return its number."""
        turn = self._turn + 1
        self.append(Draft.of(TurnStart(trigger, model, system), turn=turn))
        return turn

    def message_drafts(self, message: Message, *, response: int | None = None) -> list[Draft]:
        """Drafts for ``message`` in the current turn.

        User, system and context messages are one event; assistant content is
        one event per block or hosted transition, sharing a response number
        (a new one unless ``response`` is given) so projections regroup it.
        """
        turn = self._turn
        if message.role != "assistant":
            if any(isinstance(p, HostedActivity) for p in message.content):
                raise EventError("hosted activity belongs to assistant messages only")
            body = MessageBody(message.role, message.content, message.source)  # type: ignore[arg-type]
            return [Draft("message", body, turn)]
        if response is None:
            response = self.next_response()
        drafts = []
        for part in message.content:
            if isinstance(part, HostedActivity):
                drafts.append(
                    Draft(
                        "hosted", HostedBody(part, message.provider, message.model), turn, response
                    )
                )
            else:
                body = MessageBody(
                    "assistant",
                    (part,),
                    message.source or "assistant",
                    message.provider,
                    message.model,
                )
                drafts.append(Draft("message", body, turn, response))
        return drafts

    def add_message(self, message: Message) -> tuple[Event, ...]:
        """Append a whole message (see :meth:`message_drafts`)."""
        return self.append(*self.message_drafts(message))

    def add_user(self, text: str) -> Event:
        """Append user text."""
        return self.add_message(Message.user(text))[0]

    def add_context(self, text: str, tag: str = "context") -> Event:
        """Append injected context: a user-role message of source ``context:<tag>``."""
        return self.add_message(Message.context(text, tag))[0]

    def add_system(self, text: str) -> Event:
        """Append a system message."""
        return self.add_message(Message.system(text))[0]

    def add_tool_results(self, results: Sequence[ToolResultBlock]) -> Event:
        """Append the results of client tool calls as one user message."""
        if not results:
            raise EventError("no tool results to add")
        return self.add_message(Message("user", tuple(results), "tool"))[0]

    def add_overlay(self, body: msgspec.Struct) -> Event:
        """Append an overlay; it changes projections, never stored events."""
        kind = kind_of(body)
        if kind not in OVERLAY_KINDS:
            raise EventError(f"{type(body).__name__} is not an overlay")
        return self.append(Draft(kind, body, self._turn))[0]

    def asked(self) -> dict[int, MessageBody]:
        """The user's own message of each turn that still counts (not
        rewound), by turn number."""
        asked: dict[int, MessageBody] = {}
        for view in turn_views(self._events):
            if view.rewound is not None:
                continue
            for event in view.events:
                body = event.body
                if isinstance(body, MessageBody) and body.role == "user" and body.source == "user":
                    asked[view.turn] = body
                    break
        return asked

    def rewind_last_asked(self, reason: str = "retry") -> Message | None:
        """Leave the latest turn the user asked (and any after it) out of
        projections with a :class:`Rewind` overlay, and return its message
        to send again, attachments included: a retry regenerates the answer
        instead of asking twice.  The old turn stays in the log, shown as
        replaced.  None (and nothing written) when nothing was asked yet."""
        asked = self.asked()
        if not asked:
            return None
        turn = max(asked)
        self.add_overlay(Rewind(turn, reason))
        return Message(role="user", content=asked[turn].content, source="user")

    def apply_patch(self, patch: Patch, projection: Projection | None = None) -> Event:
        """Record a recoverable error's patch as an overlay.

        ``projection`` is the projection the failed request was built from
        (the current one by default); patch positions refer to it.
        """
        return self.add_overlay(overlay_for_patch(projection or self.project(), patch))

    # -- projections -------------------------------------------------------------

    def project(self) -> Projection:
        """The native projection with the origin of every part (every image's
        and document's bytes loaded from the store's blobs)."""
        return self._with_blobs(project(self._events))

    def _with_blobs(self, projection: Projection) -> Projection:
        messages = resolve_messages(projection.messages, self.store.get_blob, self._blobs)
        if messages is projection.messages:
            return projection
        return msgspec.structs.replace(projection, messages=messages)

    def history(self) -> tuple[Message, ...]:
        """The native history (what a shape encoder receives)."""
        return self.project().messages

    def portable(self) -> Projection:
        """The portable history (no provider payloads) and what it dropped."""
        return self._with_blobs(portable_history(self._events))

    def response_payloads(self, provider: str | None) -> tuple[ProviderPayload, ...]:
        """The response-level native data ``provider``'s responses returned
        (every provider's for None), oldest first (see :func:`~elelem.conversation.projections.response_payloads`);
        the turn API sends it with each request to that provider."""
        return response_payloads(self._events, provider)

    def turns(self) -> tuple[TurnView, ...]:
        """The log grouped by turn."""
        return turn_views(self._events)

    def diagnostics(self) -> Diagnostics:
        """Orphan tool calls, unfinished hosted activity, incomplete blocks."""
        return diagnose(self._events)

    @property
    def text(self) -> str:
        """All message text, one line per message (for quick looks)."""
        return "\n".join(
            "".join(p.text for p in m.content if isinstance(p, TextBlock)) for m in self.history()
        )

    def __repr__(self) -> str:
        return f"Conversation({self.id!r}, events={len(self._events)}, turn={self._turn})"


__all__ = ["Conversation"]
