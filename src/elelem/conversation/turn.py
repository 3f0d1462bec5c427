"""The turn API: one user input in, the model's answer committed block by block.

:func:`send` (async, over :class:`elelem.Client`) and :func:`send_sync` (over
:class:`elelem.SyncClient`) share one recorder, so both commit the same
events:

1. the turn start and the user message, in one commit;
2. each block and hosted transition as the stream flushes it, one commit
   each, so a crash or an interruption never loses what already arrived;
3. the response record (provider, model, response id, request id, finish,
   usage, and the response-level payloads no block owns) once the response
   ends; each request carries the provider's earlier response payloads
   (``ModelRequest.response_payloads``), so its native encoder can name an
   Anthropic code-execution container again;
4. when the response finished ``paused``, a continuation request with the
   paused assistant message last, as its own response record, up to
   ``max_continuations`` times;
5. when the provider answers with a recoverable error (a stale signature),
   the repairs it names as overlays, and the request again (each repair at
   most once).

An ``on_chunk`` observer sees every chunk of every response of the turn
(continuations and recovery retries included) with the parts that chunk
committed, *after* those parts are in the log: what it is shown is stored
(the response record follows the last chunk).  It is how a caller renders
the answer live.  :func:`send` also accepts an async observer (one returning
an awaitable, awaited before the next chunk is read); :func:`send_sync` takes
synchronous observers only.  An exception an observer raises is an
interruption like any other (below): it propagates unchanged and is never
taken for a recoverable provider error.

An interruption (a transport error, a cancellation, Ctrl-C, an observer's
exception) commits what :meth:`~elelem.stream.Assembler.partial` keeps —
open text and reasoning marked incomplete, citations received so far, and
anything already read from the network that an observer was not shown yet —
and a response record with finish ``aborted`` and ``complete`` False, then
re-raises: nothing is swallowed.  The turn's state stays readable from the
log (:meth:`Conversation.turns`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from elelem.conversation.errors import StoreError
from elelem.conversation.events import Draft, HostedBody, MessageBody, ResponseRecord, TurnStart
from elelem.conversation.projections import Projection, add_usage, native_history, overlay_for_patch
from elelem.errors import RecoverableError, StreamError
from elelem.stream import AssembledResponse, Chunk, ResponseStart
from elelem.vocabulary import (
    GenerationOptions,
    HostedActivity,
    HostedTool,
    Message,
    Part,
    ProviderId,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from elelem.client import Client, SyncClient
    from elelem.conversation.log import Conversation

MAX_CONTINUATIONS = 8
"""Default bound on automatic continuations of a paused turn."""

ERROR_TEXT_LIMIT = 500

ChunkObserver = Callable[[Chunk, tuple[Part, ...]], object]
"""An ``on_chunk`` observer of a turn: called with each chunk and the blocks and
hosted transitions it committed (usually none), once they are stored.  Its
result is ignored, except that :func:`send` awaits an awaitable one."""


class TurnResult(msgspec.Struct, frozen=True):
    """What one turn produced.

    ``messages`` are the assistant messages of the turn (one per provider
    response, in order); ``responses`` their records; ``usage`` their sum;
    ``end`` is ``completed``, ``paused`` (the provider paused and the
    continuation bound was 0), or ``max-continuations``.
    """

    turn: int
    messages: tuple[Message, ...]
    responses: tuple[ResponseRecord, ...]
    usage: Usage
    end: str

    @property
    def text(self) -> str:
        """The turn's assistant text, all responses joined."""
        return "".join(m.text for m in self.messages)

    @property
    def finish(self) -> str | None:
        """The finish reason of the last response."""
        return self.responses[-1].finish if self.responses else None


class _Recorder:
    """Commits one provider response's parts as they flush."""

    def __init__(
        self,
        conv: Conversation,
        provider: ProviderId,
        model: str,
        turn: int,
        continuation: int,
    ) -> None:
        self.conv = conv
        self.provider = provider
        self.model = model
        self.turn = turn
        self.continuation = continuation
        self.response = conv.next_response()
        self.committed = 0
        # Built before any of this response's events exist: the request's
        # history ends at the conversation's last event.
        self.request = conv.events[-1].id if conv.events else None

    def drafts(self, parts: Sequence[Part]) -> list[Draft]:
        out = []
        for part in parts:
            if isinstance(part, HostedActivity):
                body: Any = HostedBody(part, self.provider, self.model)
                out.append(Draft("hosted", body, self.turn, self.response))
            else:
                body = MessageBody("assistant", (part,), "assistant", self.provider, self.model)
                out.append(Draft("message", body, self.turn, self.response))
        return out

    def on_chunk(self, chunk: Chunk, committed: tuple[Part, ...]) -> None:
        if isinstance(chunk, ResponseStart) and chunk.model:
            self.model = chunk.model
        if committed:
            self.conv.append(*self.drafts(committed))
            self.committed += len(committed)

    def record(
        self, result: AssembledResponse, request_id: str | None, request_dropped: Sequence[str]
    ) -> ResponseRecord:
        finish = result.finish
        record = ResponseRecord(
            provider=result.provider or self.provider,
            model=result.model or self.model,
            response_id=result.response_id,  # type: ignore[arg-type]
            request_id=request_id,
            finish=finish.reason if finish is not None else None,
            finish_raw=finish.raw if finish is not None else None,
            failure=finish.failure if finish is not None else None,
            usage=result.usage,
            complete=result.complete,
            dropped=tuple(f"request: {d}" for d in request_dropped) + result.dropped,
            continuation=self.continuation,
            request=self.request,
            payloads=finish.payloads if finish is not None else (),
        )
        return record

    def finish(
        self, result: AssembledResponse, request_id: str | None, request_dropped: Sequence[str]
    ) -> ResponseRecord:
        # Every part already committed as it flushed; only the record is new.
        tail = result.content[self.committed :]
        record = self.record(result, request_id, request_dropped)
        self.conv.append(
            *self.drafts(tail), Draft.of(record, turn=self.turn, response=self.response)
        )
        return record

    def interrupt(
        self,
        partial: AssembledResponse,
        exc: BaseException,
        request_id: str | None,
        request_dropped: Sequence[str],
    ) -> None:
        tail = partial.content[self.committed :]
        record = msgspec.structs.replace(
            self.record(partial, request_id, request_dropped),
            finish="aborted",
            complete=False,
            error=_describe(exc),
        )
        self.conv.append(
            *self.drafts(tail), Draft.of(record, turn=self.turn, response=self.response)
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, StreamError):
        text = f"{exc.kind}: {exc.message}"
    elif isinstance(exc, KeyboardInterrupt):
        text = "interrupted"
    elif type(exc).__name__ == "CancelledError":
        text = "cancelled"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text[:ERROR_TEXT_LIMIT]


class _Turn:
    """The I/O-free part of one turn, shared by :func:`send` and :func:`send_sync`."""

    def __init__(
        self,
        conv: Conversation,
        catalog: Any,
        model: str,
        user_input: str | Message | None,
        trigger: str | None,
        max_continuations: int,
        request: dict[str, Any],
        prepare: Callable[..., Any] | None,
        recover: bool,
    ) -> None:
        spec, name = catalog.resolve(model)
        if prepare is not None:
            # A missing key or an unbuilt shape fails here, before the log
            # holds a turn that could never be sent.
            options = {k: v for k, v in request.items() if k != "timeouts"}
            prepare(model, (), **options)
        self.conv = conv
        self.provider = ProviderId(spec.name)
        self.name: str = name
        self.model = model
        self.max_continuations = max_continuations
        self.request = request
        self.records: list[ResponseRecord] = []
        self.recover = recover
        self.repaired: set[str] = set()
        self.projection: Projection | None = None
        # True while the caller's observer runs: an exception then is the
        # observer's, never a provider error to recover from.
        self.observing = False
        turn = conv.turn + 1
        self.turn = turn
        # A conversation keeps its system prompt: None means the latest one
        # recorded ("" clears it).
        system = request["system"]
        if system is None:
            system = conv.system
        request["system"] = system or None
        start = TurnStart(
            trigger or ("user" if user_input is not None else "continuation"),
            model,
            request["system"],
        )
        drafts = [Draft.of(start, turn=turn)]
        if user_input is not None:
            message = Message.user(user_input) if isinstance(user_input, str) else user_input
            drafts.extend(
                Draft("message", d.body, turn, d.response) for d in conv.message_drafts(message)
            )
        conv.append(*drafts)

    def next_request(self) -> tuple[_Recorder, dict[str, Any]]:
        """A recorder for the next response and the client's stream arguments."""
        recorder = _Recorder(self.conv, self.provider, self.name, self.turn, len(self.records))
        self.projection = self.conv.project()
        return recorder, {
            "messages": self.projection.messages,
            # What this provider's earlier responses returned beside their
            # messages (an Anthropic container) travels with the history.
            "response_payloads": self.conv.response_payloads(self.provider),
            **self.request,
        }

    def failed(
        self,
        recorder: _Recorder,
        exc: BaseException,
        partial: AssembledResponse,
        request_id: str | None,
        request_dropped: Sequence[str],
    ) -> bool:
        """Record an interrupted response; True when the error is recoverable
        and its repairs went into the log as overlays (then retry)."""
        recorder.interrupt(partial, exc, request_id, request_dropped)
        if self.observing:
            return False
        if not (self.recover and isinstance(exc, RecoverableError) and exc.patches):
            return False
        assert self.projection is not None
        overlays = []
        for patch in exc.patches:
            key = repr((patch.action, sorted(patch.target.items())))
            if key in self.repaired:
                return False  # this very repair was made and did not help
            try:
                overlays.append((key, overlay_for_patch(self.projection, patch)))
            except ValueError:
                return False  # the patch names nothing this log holds: not ours to guess
        for key, overlay in overlays:
            self.conv.add_overlay(overlay)
            self.repaired.add(key)
        return True

    def done(self, record: ResponseRecord) -> TurnResult | None:
        """Note a finished response; the turn's result, or None to continue."""
        self.records.append(record)
        if record.finish != "paused":
            end = "completed"
        elif len(self.records) > self.max_continuations:
            end = "max-continuations" if self.max_continuations > 0 else "paused"
        else:
            return None
        events = [e for e in self.conv.events if e.turn == self.turn]
        messages = tuple(m for m in native_history(events) if m.role == "assistant")
        usage = Usage()
        for r in self.records:
            if r.usage is not None:
                usage = add_usage(usage, r.usage)
        return TurnResult(self.turn, messages, tuple(self.records), usage, end)


async def send(
    conv: Conversation,
    client: Client,
    model: str,
    user_input: str | Message | None,
    *,
    system: str | None = None,
    tools: Sequence[ToolSpec] = (),
    hosted_tools: Sequence[HostedTool] = (),
    options: GenerationOptions | None = None,
    timeouts: Any = None,
    trigger: str | None = None,
    max_continuations: int = MAX_CONTINUATIONS,
    recover: bool = True,
    on_chunk: ChunkObserver | None = None,
) -> TurnResult:
    """Run one turn: append the user input (None continues without one),
    stream the answer into the log block by block, continue a paused
    response automatically, and return the turn's result.

    ``system`` defaults to the system prompt the conversation last recorded
    (pass ``""`` for none); it is recorded on the turn's start.

    With ``recover`` (the default), a :class:`~elelem.errors.RecoverableError`
    (a stale signature, say) has its patches recorded as overlays and the
    request is sent again; each repair is made at most once, and a patch that
    names nothing in the log is not guessed at: the error propagates.

    ``on_chunk`` (sync or async) sees each chunk of each response once what
    it committed is stored; an exception from it ends the turn as an
    interruption does and propagates.

    Errors propagate (typed :class:`~elelem.errors.StreamError`\\ s from the
    client, or the observer's own) after what arrived is committed, marked
    incomplete.
    """
    request = {"system": system, "tools": tools, "hosted_tools": hosted_tools,
               "options": options, "timeouts": timeouts}  # fmt: skip
    prepare = getattr(client, "prepare", None)
    turn = _Turn(
        conv,
        client.catalog,
        model,
        user_input,
        trigger,
        max_continuations,
        request,
        prepare,
        recover,
    )
    while True:
        recorder, kwargs = turn.next_request()
        stream = client.stream(model, **kwargs)
        try:
            async with stream:
                async for chunk, committed in stream.with_commits():
                    recorder.on_chunk(chunk, committed)
                    if on_chunk is not None:
                        turn.observing = True
                        seen = on_chunk(chunk, committed)
                        if inspect.isawaitable(seen):
                            await seen
                        turn.observing = False
            result = stream.assembler.result()
        except StoreError:
            raise  # the log itself failed: there is nowhere to record anything
        except BaseException as exc:
            if turn.failed(recorder, exc, stream.partial(), stream.request_id, stream.dropped):
                continue
            raise
        outcome = turn.done(recorder.finish(result, stream.request_id, stream.dropped))
        if outcome is not None:
            return outcome


def send_sync(
    conv: Conversation,
    client: SyncClient,
    model: str,
    user_input: str | Message | None,
    *,
    system: str | None = None,
    tools: Sequence[ToolSpec] = (),
    hosted_tools: Sequence[HostedTool] = (),
    options: GenerationOptions | None = None,
    timeouts: Any = None,
    trigger: str | None = None,
    max_continuations: int = MAX_CONTINUATIONS,
    recover: bool = True,
    on_chunk: ChunkObserver | None = None,
) -> TurnResult:
    """The blocking twin of :func:`send`, over a :class:`elelem.SyncClient`.

    ``on_chunk`` must be synchronous: it runs in the calling thread, where
    there is no event loop to await on.  An ``async def`` observer is refused
    with :class:`TypeError` before anything is stored; an observer that
    returns an awaitable anyway ends the turn with that :class:`TypeError`.
    """
    if on_chunk is not None and inspect.iscoroutinefunction(on_chunk):
        raise TypeError("send_sync needs a synchronous on_chunk; use send for an async one")
    request = {"system": system, "tools": tools, "hosted_tools": hosted_tools,
               "options": options, "timeouts": timeouts}  # fmt: skip
    under = client.client
    turn = _Turn(
        conv,
        under.catalog,
        model,
        user_input,
        trigger,
        max_continuations,
        request,
        under.prepare,
        recover,
    )
    while True:
        recorder, kwargs = turn.next_request()
        stream = client.stream(model, **kwargs)
        inner = stream.stream
        try:
            with stream:
                for chunk, committed in stream.with_commits():
                    recorder.on_chunk(chunk, committed)
                    if on_chunk is not None:
                        turn.observing = True
                        _not_awaitable(on_chunk(chunk, committed))
                        turn.observing = False
            result = inner.assembler.result()
        except StoreError:
            raise  # the log itself failed: there is nowhere to record anything
        except BaseException as exc:
            if turn.failed(recorder, exc, stream.partial(), inner.request_id, inner.dropped):
                continue
            raise
        outcome = turn.done(recorder.finish(result, inner.request_id, inner.dropped))
        if outcome is not None:
            return outcome


def _not_awaitable(seen: object) -> None:
    if inspect.isawaitable(seen):
        if inspect.iscoroutine(seen):
            seen.close()  # never awaited: close it rather than leak a warning
        raise TypeError("send_sync needs a synchronous on_chunk; it returned an awaitable")


__all__ = ["MAX_CONTINUATIONS", "ChunkObserver", "TurnResult", "send", "send_sync"]
