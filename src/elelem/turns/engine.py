"""The turn engine, written once: a generator that says what to do next.

A turn (send → record → continue on ``paused`` → recover a stale signature
once) is one state machine that does no I/O.  It *yields actions* and is
resumed with their results, in the style of httpx's ``auth_flow``:

=================  =====================================  ======================
action             the driver does                        and sends back
=================  =====================================  ======================
:class:`Send`      make the response stream (no I/O yet)  the stream (a
                                                          :class:`StreamView`)
:class:`Read`      read the next ``(chunk, committed)``   the pair, or None at
                   pair from that stream                  the end of the stream
:class:`Append`    append the drafts to the log           the stored events
:class:`Call`      call a function (the caller's          its result
                   observer, a tool)
:class:`Wait`      sleep                                  None
=================  =====================================  ======================

An exception the driver meets doing an action is thrown into the generator at
that ``yield``, so the engine alone decides what an error means (record the
partial response, repair and resend, or propagate).  The drivers
(:func:`elelem.turns.drive.send` and
:func:`~elelem.turns.drive.send_sync`) only map actions to I/O: the
async one runs :class:`Append` in a worker thread (store commits never block
the event loop) and awaits an awaitable :class:`Call` result; the sync one
does everything in the calling thread.  A driver closes the stream of a
:class:`Send` when the next one is sent and when the flow ends.

Flows compose with ``yield from``: :meth:`TurnEngine.run` is
:meth:`~TurnEngine.begin`, then :meth:`~TurnEngine.respond` until the turn
ends.  A caller building a longer loop on the same engine (executing client
tool calls and resending) writes its own flow out of the same pieces and
yields its own :class:`Call`\\ s for the work the driver must do.

What is committed, and when:

1. the turn start and the user message, in one commit;
2. each block and hosted transition as the stream flushes it, one commit
   each, so a crash or an interruption never loses what already arrived;
   the observer (if any) is called with each chunk *after* what it
   committed is stored;
3. the response record (provider, model, response id, request id, finish,
   usage, the response-level payloads no block owns) once the response ends;
4. on ``paused``, a continuation request with the paused assistant message
   last, up to ``max_continuations`` times;
5. on a recoverable error (a stale signature), the repairs it names as
   overlays, and the request again (each repair at most once).

An interruption (a transport error, a cancellation, Ctrl-C, an observer's
exception) commits what :meth:`~elelem.stream.Assembler.partial` keeps and a
response record with finish ``aborted`` and ``complete`` False, then the
exception propagates unchanged.  A :class:`~elelem.conversation.StoreError`
propagates at once: the log itself failed, there is nowhere to record.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

import msgspec

from elelem.conversation.errors import StoreError
from elelem.conversation.events import (
    Decision,
    Draft,
    Event,
    ResponseRecord,
    Rewind,
    ServerRequest,
    TurnStart,
    kind_of,
)
from elelem.conversation.log import Conversation
from elelem.conversation.projections import Projection, add_usage, native_history, overlay_for_patch
from elelem.errors import (
    FULL_REPLAY,
    STATE_LOST,
    ArgumentTypeError,
    ElelemError,
    RecoverableError,
    StreamError,
)
from elelem.providers import Target
from elelem.providers.files import FileUploader
from elelem.providers.protocol import Model, resolved_address
from elelem.stream import Chunk, ResponseStart
from elelem.tokens import generated_tokens
from elelem.turns.actions import (
    READ,
    Action,
    Append,
    Call,
    Flow,
    Read,
    Send,
    StreamView,
    Wait,
)
from elelem.turns.history import HistoryProcessor, processed
from elelem.turns.limits import (
    USAGE_LIMIT_END,
    UsageLimitExceeded,
    UsageLimits,
    Used,
    check_request,
    used_by,
)
from elelem.turns.results import ResponseDrafts, TurnResult
from elelem.vocabulary import (
    GenerationOptions,
    HostedTool,
    Message,
    Part,
    ProviderPayload,
    ToolSpec,
    Usage,
)

MAX_CONTINUATIONS = 8
"""Default bound on automatic continuations of a paused turn."""

ERROR_TEXT_LIMIT = 500

ChunkObserver = Callable[[Chunk, tuple[Part, ...]], object]
"""An ``on_chunk`` observer of a turn: called with each chunk and the blocks and
hosted transitions it committed (usually none), once they are stored.  Its
result is ignored, except that the async driver awaits an awaitable one."""


class TurnSettings(TypedDict, total=False):
    """The options of one turn but its ``tools`` (all optional), which a
    turn (:class:`TurnOptions`) and a tool loop
    (:class:`~elelem.turns.toolloop.LoopOptions`) each type their own way.

    ``system``: the system prompt; None (the default) keeps the one the
    conversation last recorded, ``""`` clears it.  ``hosted_tools``,
    ``options``: what every request of the turn carries.  ``trigger``: the
    turn start's trigger (``user`` with input, else ``continuation``).
    ``max_continuations``: how often a paused response is continued
    (default :data:`MAX_CONTINUATIONS`).  ``recover``: repair what a
    recoverable error names and resend (default True).  ``on_chunk``: the
    observer of every chunk, called once what it committed is stored.
    ``streamed``: False sends every request of the turn non-streamed (the
    log holds the same events either way).
    ``limits``: the run's
    :class:`~elelem.turns.limits.UsageLimits`.  ``history``: the
    :mod:`~elelem.turns.history` processors applied before each request.
    ``files``: a :class:`~elelem.providers.files.FileUploader` that sends
    images and PDFs by the provider's file id, uploading each blob once
    (opt-in; None, the default, sends their bytes).
    """

    system: str | None
    hosted_tools: Sequence[HostedTool]
    options: GenerationOptions | None
    trigger: str | None
    max_continuations: int
    recover: bool
    on_chunk: ChunkObserver | None
    streamed: bool
    limits: UsageLimits | None
    history: Sequence[HistoryProcessor]
    files: FileUploader | None


class TurnOptions(TurnSettings, total=False):
    """The options of one turn (all optional): :class:`TurnSettings` and
    ``tools``, the client tools every request of the turn offers."""

    tools: Sequence[ToolSpec]


def check_conversation(conversation: object) -> None:
    """Refuse what is not a :class:`Conversation` by name (send, run,
    resume and their sync twins pass theirs here first), rather than an
    AttributeError deep inside."""
    if not isinstance(conversation, Conversation):
        raise ArgumentTypeError(
            "the conversation must be an elelem Conversation (Conversation.create(store) "
            f"or Conversation.open(store, id)), not {type(conversation).__name__}"
        )


def describe(exc: BaseException) -> str:
    """The error text a response record keeps for an interruption."""
    if isinstance(exc, StreamError):
        text = f"{exc.kind}: {exc.message}"
    elif isinstance(exc, KeyboardInterrupt):
        text = "interrupted"
    elif type(exc).__name__ == "CancelledError":
        text = "cancelled"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text[:ERROR_TEXT_LIMIT]


class ObserverError(ElelemError):
    """Internal marker: never raised to a caller (the observer's own exception is)."""


def run_events(conversation: Conversation, turn: int) -> list[Event]:
    """The events of the run going on in ``turn`` of ``conversation``: the
    turn's events since its last :class:`Decision` (a resumed run starts by
    appending one: :mod:`elelem.turns.deferred`), else all of the turn's.
    What a run's usage limits count (its own responses and the sampling
    served during it), so a resumed run is bounded by what it does, not by
    what the run did before it stopped."""
    events: list[Event] = []
    for event in reversed(conversation.events):
        if event.turn < turn:
            break  # the log is in turn order: the turn's events are its last
        if event.turn == turn:
            events.append(event)
            if isinstance(event.body, Decision):
                break
    events.reverse()
    return events


def run_served(conversation: Conversation, turn: int) -> list[ServerRequest]:
    """The requests MCP servers made during the run going on in ``turn``
    (:func:`run_events`): what the run's usage limits count of the sampling
    they had served."""
    return [e.body for e in run_events(conversation, turn) if isinstance(e.body, ServerRequest)]


# -- the engine ----------------------------------------------------------------------


@dataclass
class TurnEngine:
    """One turn of ``conversation`` to ``target``, as flows of actions.

    ``request`` holds the request options every response of the turn
    carries (``system``, ``tools``, ``hosted_tools``, ``options``).  Build
    it with :meth:`create`; drive :meth:`run` with a driver.
    """

    conversation: Conversation
    target: Target | Model
    user_input: str | Message | None
    request: dict[str, Any]
    trigger: str | None = None
    max_continuations: int = MAX_CONTINUATIONS
    recover: bool = True
    on_chunk: ChunkObserver | None = None
    streamed: bool = True
    limits: UsageLimits | None = None
    """The run's usage limits (see :mod:`elelem.turns.limits`)."""
    history: Sequence[HistoryProcessor] = ()
    """What each request carries of the history (see :mod:`elelem.turns.history`)."""
    files: FileUploader | None = None
    """Uploads images and PDFs once and sends their ids (see :mod:`elelem.providers.files`)."""
    files_renewed: bool = False
    """Whether this turn uploaded again files the provider lost (done once)."""
    tool_calls: int = 0
    """The tool calls run so far (the tool loop counts them)."""
    turn: int = 0
    records: list[ResponseRecord] = field(default_factory=list)
    received: list[int] = field(default_factory=list)
    """The output tokens each of ``records`` was seen to generate."""
    stream: StreamView | None = None
    """The stream of the response in progress (of the latest one once the
    turn ended): what a live display reads the blocks in progress from."""
    repaired: set[str] = field(default_factory=set)
    # States the provider said it no longer holds (a FULL_REPLAY patch): sent
    # among the response payloads, so this turn replays the whole history.
    lost_state: list[ProviderPayload] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        conversation: Conversation,
        target: Target | Model,
        user_input: str | Message | None,
        **options: Unpack[TurnOptions],
    ) -> TurnEngine:
        """An engine for one turn (see :class:`TurnOptions`)."""
        check_conversation(conversation)
        system = options.get("system")
        if system is None:
            system = conversation.system
        request = {
            "system": system or None,
            "tools": tuple(options.get("tools", ())),
            "hosted_tools": tuple(options.get("hosted_tools", ())),
            "options": options.get("options"),
        }
        return cls(
            conversation,
            target,
            user_input,
            request,
            options.get("trigger"),
            options.get("max_continuations", MAX_CONTINUATIONS),
            options.get("recover", True),
            options.get("on_chunk"),
            options.get("streamed", True),
            options.get("limits"),
            tuple(options.get("history", ())),
            options.get("files"),
        )

    # -- flows ---------------------------------------------------------------------

    def run(self) -> Flow[TurnResult]:
        """The whole turn: :meth:`begin`, then :meth:`respond` until a
        response does not pause (or the continuation bound is reached)."""
        yield from self.begin()
        while True:
            record = yield from self.respond()
            end = self.end_of(record)
            if end is not None:
                return self.result(end)

    def begin(self) -> Flow[tuple[Event, ...]]:
        """Open the turn: its start and the user input, in one commit."""
        conv = self.conversation
        self.turn = conv.turn + 1
        start = TurnStart(
            self.trigger or ("user" if self.user_input is not None else "continuation"),
            resolved_address(self.target),
            self.request["system"],
        )
        drafts = [Draft.of(start, turn=self.turn)]
        if self.user_input is not None:
            text = self.user_input
            message = Message.user(text) if isinstance(text, str) else text
            drafts.extend(
                Draft("message", d.body, self.turn, d.response)
                for d in conv.message_drafts(message)
            )
        events: tuple[Event, ...] = yield Append(tuple(drafts))
        return events

    def respond(self) -> Flow[ResponseRecord]:
        """One provider response, committed as it streams; after a
        recoverable error, its repairs and the request again.  Returns the
        record of the response that ended."""
        while True:
            projection = self.conversation.project()
            if self.history:
                projection = yield from processed(
                    self.conversation, self.history, self.target, self.request, self.turn
                )
            drafts = self.drafts_for_next()
            arguments = self.arguments(projection)
            if self.files is not None:
                arguments["messages"] = yield Call(
                    self.files.refer,
                    (arguments["messages"], self.target),
                    blocking=True,
                    name="upload files",
                )
            if self.limits is not None:
                self.check(functools.partial(self.request_rule, arguments))
            try:
                stream: StreamView = yield Send(self.target, arguments, self.streamed)
            except (StoreError, GeneratorExit):
                raise
            except Exception as exc:
                if not self.records:
                    yield self.refused(drafts, exc)
                raise
            self.stream = stream
            try:
                yield from self.read(stream, drafts)
            except StoreError:
                raise  # the log itself failed: there is nowhere to record anything
            except GeneratorExit:
                raise
            except ObserverError as marker:
                cause = marker.__cause__
                assert cause is not None
                yield self.interrupted(stream, drafts, cause)
                raise cause from None
            except BaseException as exc:
                yield self.interrupted(stream, drafts, exc)
                if self.files is not None and not self.files_renewed:
                    lost = yield Call(self.files.lost, (exc, self.target), blocking=True)
                    if lost:
                        # The provider deleted (or expired) a file it was
                        # sent by id: upload it again, once, and resend.
                        self.files_renewed = True
                        continue
                repairs = self.repairs(exc, projection)
                if repairs is None:
                    raise
                if repairs:  # a full replay needs no overlay
                    yield Append(repairs)
                continue
            result = stream.result()
            record = drafts.record(result, stream)
            yield drafts.closing(result, record)
            self.records.append(record)
            self.received.append(generated_tokens(result.content))
            if self.limits is not None:
                self.check(self.limits.after_response)
            return record

    def read(self, stream: StreamView, drafts: ResponseDrafts) -> Flow[None]:
        """Read the stream to its end, committing each flushed part and then
        showing the chunk to the observer."""
        observe = self.on_chunk
        while True:
            pair: tuple[Chunk, tuple[Part, ...]] | None = yield READ
            if pair is None:
                return
            chunk, committed = pair
            if type(chunk) is ResponseStart:
                # A model standing for others (a fallback) names the one
                # that answered.
                if chunk.model:
                    drafts.model = chunk.model
                if chunk.provider:
                    drafts.provider = chunk.provider
            if committed:
                yield Append(drafts.parts(committed))
                drafts.committed += len(committed)
            if observe is not None:
                try:
                    yield Call(observe, pair, name="on_chunk")
                except GeneratorExit:
                    raise
                except BaseException as exc:
                    # The observer's own failure: an interruption, never a
                    # provider error to recover from.
                    raise ObserverError from exc

    # -- pieces ----------------------------------------------------------------------

    def drafts_for_next(self) -> ResponseDrafts:
        """The draft maker of the next response (numbered now, before any of
        its events exist: the request's history ends at the last event)."""
        conv = self.conversation
        events = conv.events
        return ResponseDrafts(
            self.target.provider,
            self.target.model,
            self.turn,
            conv.next_response(),
            len(self.records),
            events[-1].id if events else None,
        )

    def arguments(self, projection: Projection) -> dict[str, Any]:
        """The stream arguments of the next request over ``projection``."""
        return {
            "messages": projection.messages,
            # What this provider's earlier responses returned beside their
            # messages (an Anthropic container) travels with the history.
            # A model standing for several (a fallback) gets every
            # provider's and hands each target its own.
            "response_payloads": (
                *self.conversation.response_payloads(self.payloads_provider()),
                *self.lost_state,
            ),
            **self.request,
        }

    def payloads_provider(self) -> str | None:
        """Whose earlier response payloads travel with each request: a
        catalog target's provider's; None (every provider's) for a model
        standing for several.  A durable driver, whose workflow holds only
        the target's name, answers from what its worker resolved."""
        return self.target.provider if isinstance(self.target, Target) else None

    def interrupted(self, stream: StreamView, drafts: ResponseDrafts, exc: BaseException) -> Append:
        """What an interrupted response commits: its partial parts and an
        ``aborted`` record naming the error."""
        partial = stream.partial()
        record = msgspec.structs.replace(
            drafts.record(partial, stream), finish="aborted", complete=False, error=describe(exc)
        )
        return drafts.closing(partial, record)

    def refused(self, drafts: ResponseDrafts, exc: BaseException) -> Append:
        """What a turn whose first request was refused before it was sent
        (a middleware's guardrail, a request the wire cannot carry) commits:
        a failed record naming the error, so the turn shows as failed, and
        a :class:`Rewind` of the turn (``refused``), so later requests do
        not carry the refused input and get refused again."""
        record = ResponseRecord(
            provider=drafts.provider,
            model=drafts.model,
            finish="aborted",
            complete=False,
            continuation=drafts.continuation,
            request=drafts.request,
            error=describe(exc),
        )
        return Append(
            (
                Draft.of(record, turn=self.turn, response=drafts.response),
                Draft.of(Rewind(self.turn, "refused"), turn=self.turn),
            )
        )

    def repairs(self, exc: BaseException, projection: Projection) -> tuple[Draft, ...] | None:
        """The overlays that repair what a recoverable error names, or None
        when the error is not to be recovered from (then it propagates)."""
        if not (self.recover and isinstance(exc, RecoverableError) and exc.patches):
            return None
        overlays = []
        for patch in exc.patches:
            key = repr((patch.action, sorted(patch.target.items())))
            if key in self.repaired:
                return None  # this very repair was made and did not help
            if patch.action == FULL_REPLAY:
                # The provider lost the state the request continued: the
                # next request of this turn sends the whole history (no
                # overlay: the log is right, the provider forgot).
                lost = ProviderPayload(self.target.provider, STATE_LOST, None, dict(patch.target))
                self.lost_state.append(lost)
                self.repaired.add(key)
                continue
            try:
                overlays.append((key, overlay_for_patch(projection, patch)))
            except ValueError:
                return None  # the patch names nothing this log holds: not ours to guess
        self.repaired.update(key for key, _ in overlays)
        return tuple(Draft(kind_of(o), o, self.turn) for _, o in overlays)

    def request_rule(self, arguments: dict[str, Any], used: Used) -> None:
        """The usage limits' check before a request of ``arguments``."""
        assert self.limits is not None
        check_request(self.limits, used, arguments, self.target.provider, self.target.model)

    def check(self, rule: Callable[[Used], None]) -> None:
        """Apply a usage-limit ``rule`` to what the run used; an exceeded
        limit leaves with the run's result so far."""
        if self.limits is None:
            return
        try:
            served = run_served(self.conversation, self.turn)
            rule(used_by(self.records, self.tool_calls, self.limits, self.received, served))
        except UsageLimitExceeded as exc:
            exc.result = self.result(USAGE_LIMIT_END)
            raise

    def end_of(self, record: ResponseRecord) -> str | None:
        """How the turn ends after ``record``, or None to continue it."""
        if record.finish != "paused":
            return "completed"
        if len(self.records) > self.max_continuations:
            return "max-continuations" if self.max_continuations > 0 else "paused"
        return None

    def result(self, end: str) -> TurnResult:
        """The turn's result, read back from the log."""
        events = [e for e in self.conversation.events if e.turn == self.turn]
        messages = tuple(m for m in native_history(events) if m.role == "assistant")
        usage = Usage()
        for r in self.records:
            if r.usage is not None:
                usage = add_usage(usage, r.usage)
        return TurnResult(self.turn, messages, tuple(self.records), usage, end)


__all__ = [
    "MAX_CONTINUATIONS",
    "READ",
    "Action",
    "Append",
    "Call",
    "ChunkObserver",
    "Flow",
    "Read",
    "ResponseDrafts",
    "Send",
    "StreamView",
    "TurnEngine",
    "TurnOptions",
    "TurnResult",
    "Wait",
    "check_conversation",
    "describe",
    "run_events",
    "run_served",
]
