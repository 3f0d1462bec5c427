"""The turn API: the turn engine's two thin drivers.

:func:`send` (async, over :class:`elelem.Client`) and :func:`send_sync` (over
:class:`elelem.SyncClient`) run the same :class:`~elelem.turns.engine.TurnEngine`
flow, so both commit the same events (see :mod:`elelem.turns.engine`
for what is committed when, and what an interruption keeps).  The drivers
only do the I/O the engine's actions ask for; :func:`drive` and
:func:`drive_sync` run any flow made of those actions (a tool loop built on
the engine, say).

The async driver appends to the store in a worker thread, so a slow commit
(``synchronous=FULL``, a remote PostgreSQL) never stalls the event loop;
the commit is shielded from cancellation, since the thread could not be
stopped anyway and the log must know what it holds.

``on_chunk`` sees every chunk of every response of the turn (continuations
and recovery retries included) with the parts that chunk committed, *after*
those parts are in the log.  :func:`send` also accepts an async observer
(awaited before the next chunk is read); :func:`send_sync` takes synchronous
observers only.  An exception an observer raises is an interruption like
any other: it propagates unchanged and is never taken for a recoverable
provider error.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import anyio
import anyio.to_thread

from elelem.conversation.events import Draft, Event
from elelem.conversation.log import Conversation
from elelem.providers import Target
from elelem.providers.protocol import Model
from elelem.turns.engine import (
    MAX_CONTINUATIONS,
    Action,
    Append,
    Call,
    ChunkObserver,
    Flow,
    Read,
    Send,
    TurnEngine,
    TurnOptions,
    TurnResult,
    Wait,
    check_conversation,
)
from elelem.turns.pending import AwaitingError, pending
from elelem.vocabulary import Message

if TYPE_CHECKING:
    from elelem.client import Client, SyncClient
    from elelem.transport import Timeouts

T = TypeVar("T")


class _Run:
    """A flow being driven: the last action's result or error, the stream
    of the last :class:`Send`, and the flow's value once it is done."""

    def __init__(self, flow: Flow[Any]) -> None:
        self.flow = flow
        self.reply: Any = None
        self.error: BaseException | None = None
        self.value: Any = None
        self.stream: Any = None

    def next(self) -> Action | None:
        """The flow's next action, given the last one's outcome; None once done."""
        reply, error = self.reply, self.error
        self.reply = self.error = None
        try:
            return self.flow.send(reply) if error is None else self.flow.throw(error)
        except StopIteration as stop:
            self.value = stop.value
            return None


def _unknown(action: object) -> TypeError:
    return TypeError(f"a turn driver cannot do {action!r}")


async def drive(
    flow: Flow[T], client: Client, conversation: Conversation, *, timeouts: Timeouts | None = None
) -> T:
    """Run ``flow`` with ``client``'s streams and ``conversation``'s store,
    as the conversation's one writer (a second process continuing the same conversation waits for this
    turn to end, then sees its events)."""
    writer = conversation.store.writer(conversation.id)
    # In a worker thread: waiting for another process's turn must not stall
    # the event loop.  Not cancellable midway, so a lock taken is released.
    await anyio.to_thread.run_sync(writer.acquire)
    try:
        conversation.refresh()
        run = _Run(flow)
        try:
            while (action := run.next()) is not None:
                try:
                    run.reply = await _do(run, action, client, conversation, timeouts)
                except BaseException as exc:  # noqa: BLE001 - thrown into the flow, which decides
                    run.error = exc
            return run.value  # type: ignore[no-any-return]
        finally:
            if run.stream is not None:
                with anyio.CancelScope(shield=True):
                    await run.stream.aclose()
    finally:
        writer.release()


async def _do(
    run: _Run,
    action: Action,
    client: Client,
    conversation: Conversation,
    timeouts: Timeouts | None,
) -> Any:
    if isinstance(action, Read):
        return await run.stream.step()
    if isinstance(action, Append):
        return await _append(conversation, action.drafts)
    if isinstance(action, Call):
        return await _call(action)
    if isinstance(action, Send):
        if run.stream is not None:
            await run.stream.aclose()
        run.stream = client.stream(
            action.target, timeouts=timeouts, streamed=action.streamed, **action.arguments
        )
        return run.stream
    if isinstance(action, Wait):
        return await anyio.sleep(action.seconds)
    raise _unknown(action)


async def _append(conversation: Conversation, drafts: Sequence[Draft]) -> tuple[Event, ...]:
    events: tuple[Event, ...] = ()
    with anyio.CancelScope(shield=True):
        events = await anyio.to_thread.run_sync(functools.partial(conversation.append, *drafts))
    return events


async def _call(action: Call) -> object:
    if action.blocking:
        result = await anyio.to_thread.run_sync(functools.partial(action.function, *action.args))
    else:
        result = action.function(*action.args)
    if inspect.isawaitable(result):
        result = await result
    return result


def drive_sync(
    flow: Flow[T],
    client: SyncClient,
    conversation: Conversation,
    *,
    timeouts: Timeouts | None = None,
) -> T:
    """Run ``flow`` in the calling thread with ``client``'s streams, as the
    conversation's one writer (see :func:`drive`)."""
    with conversation.store.writer(conversation.id):
        conversation.refresh()
        run = _Run(flow)
        try:
            while (action := run.next()) is not None:
                try:
                    run.reply = _do_sync(run, action, client, conversation, timeouts)
                except BaseException as exc:  # noqa: BLE001 - thrown into the flow, which decides
                    run.error = exc
            return run.value  # type: ignore[no-any-return]
        finally:
            if run.stream is not None:
                run.stream.close()


def _do_sync(
    run: _Run,
    action: Action,
    client: SyncClient,
    conversation: Conversation,
    timeouts: Timeouts | None,
) -> Any:
    if isinstance(action, Read):
        return run.stream.step()
    if isinstance(action, Append):
        return conversation.append(*action.drafts)
    if isinstance(action, Call):
        return _call_sync(action)
    if isinstance(action, Send):
        if run.stream is not None:
            run.stream.close()
        run.stream = client.stream(
            action.target, timeouts=timeouts, streamed=action.streamed, **action.arguments
        )
        return run.stream  # its state is what the flow reads
    if isinstance(action, Wait):
        return time.sleep(action.seconds)
    raise _unknown(action)


def _call_sync(action: Call) -> object:
    result = action.function(*action.args)
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited: close it rather than leak a warning
        raise TypeError(
            f"send_sync needs a synchronous {action.describe()}; it returned an awaitable"
        )
    return result


async def send(
    conv: Conversation,
    client: Client,
    model: str | Target | Model,
    user_input: str | Message | None,
    *,
    timeouts: Timeouts | None = None,
    **options: Unpack[TurnOptions],
) -> TurnResult:
    """Run one turn of ``conv``: append the user input (None continues
    without one), stream the answer into the log block by block, continue a
    paused response automatically, and return the turn's result.

    ``model`` is a ``provider:model`` address or a
    :class:`~elelem.providers.Target` resolved already; it is resolved once
    for the whole turn, before anything is stored (an unknown provider or a
    missing key fails here).  ``options`` are a
    :class:`~elelem.turns.engine.TurnOptions`' (``system``, ``tools``,
    ``hosted_tools``, ``options``, ``trigger``, ``max_continuations``,
    ``recover``, ``on_chunk``).

    With ``recover`` (the default), a :class:`~elelem.errors.RecoverableError`
    (a stale signature, say) has its patches recorded as overlays and the
    request is sent again; each repair is made at most once, and a patch that
    names nothing in the log is not guessed at: the error propagates.

    Errors propagate (typed :class:`~elelem.errors.StreamError`\\ s from the
    client, or the observer's own) after what arrived is committed, marked
    incomplete.

    A conversation whose last run waits for approvals or results is refused
    with :class:`~elelem.turns.pending.AwaitingError` before anything is
    stored: a new turn would leave the waiting calls answered by no one.
    Resume it, or rewind its turn.
    """
    _refuse_awaiting(conv)
    engine = TurnEngine.create(conv, client.target(model), user_input, **options)
    return await drive(engine.run(), client, conv, timeouts=timeouts)


def _refuse_awaiting(conv: Conversation) -> None:
    check_conversation(conv)
    waiting = pending(conv)
    if waiting is not None:
        raise AwaitingError(waiting)


def send_sync(
    conv: Conversation,
    client: SyncClient,
    model: str | Target | Model,
    user_input: str | Message | None,
    *,
    timeouts: Timeouts | None = None,
    **options: Unpack[TurnOptions],
) -> TurnResult:
    """The blocking :func:`send`, over a :class:`elelem.SyncClient`.

    ``on_chunk`` must be synchronous: it runs in the calling thread, where
    there is no event loop to await on.  An ``async def`` observer is refused
    with :class:`TypeError` before anything is stored; an observer that
    returns an awaitable anyway ends the turn with that :class:`TypeError`.
    """
    on_chunk = options.get("on_chunk")
    if on_chunk is not None and inspect.iscoroutinefunction(on_chunk):
        raise TypeError("send_sync needs a synchronous on_chunk; use send for an async one")
    _refuse_awaiting(conv)
    engine = TurnEngine.create(conv, client.target(model), user_input, **options)
    return drive_sync(engine.run(), client, conv, timeouts=timeouts)


__all__ = [
    "MAX_CONTINUATIONS",
    "ChunkObserver",
    "TurnOptions",
    "TurnResult",
    "drive",
    "drive_sync",
    "send",
    "send_sync",
]
