"""The faces of a live session: :func:`live` (async) and :func:`live_sync`.

::

    async with elelem.live(client, "openai:gpt-realtime", tools=[...],
                           conversation=conv) as session:
        await session.send_audio(pcm)          # PCM16 mono at session.input_rate
        async for output in session:           # chunks and session events
            ...

Both faces drive the one sans-IO :class:`~elelem.turns.live.LiveCore` over
the one WebSocket driver (:mod:`elelem.transport.live`); every step of the
session is written once, as a generator of calls, and a face only runs it
(:func:`~elelem.transport.faces.awaiting` or
:func:`~elelem.transport.faces.blocking`): a store append in a worker
thread, shielded, or in the calling thread; a tool step awaited, or run on
its own event loop.
The session is a face beside :func:`elelem.send` and :func:`elelem.run`
rather than a method of the client: it writes the log and runs the tool
loop, which sit above the client.

Iteration yields every :data:`~elelem.wire.live.LiveOutput` (audio for
playback, transcript pieces, chunks, notes' events) after its actions are
done: what was yielded is in the log.  Leaving the ``with`` block (Ctrl-C
included) keeps the response in progress as far as it came and notes the
end.  A dropped connection of a wire that resumes (Gemini, once it sent a
resumable handle) reconnects with the last handle and goes on in the same
conversation; otherwise the drop is noted as ``lost`` and raised.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import anyio
import msgspec

from elelem.conversation.log import Conversation
from elelem.errors import StreamError, TransportError
from elelem.providers import Target
from elelem.providers.live import live_protocol
from elelem.transport.faces import Effects, Io, awaiting, blocking
from elelem.transport.live import LiveConnection
from elelem.turns.actions import Append
from elelem.turns.live import LiveAction, LiveCore, RunTools, SendCommand
from elelem.turns.toolloop import MAX_STEPS, Approver, ToolLoop, _Work
from elelem.wire.live import LiveOutput, LiveSettings

MAX_RESUMES = 5
"""How many times one session reconnects with a resumption handle."""


def _settings(target: Target, loop: ToolLoop, options: dict[str, Any]) -> LiveSettings:
    return LiveSettings(
        model=target.model,
        instructions=options.get("instructions"),
        tools=loop.specs,
        output=options.get("output", "audio"),
        voice=options.get("voice"),
        transcribe=options.get("transcribe", True),
        vad=options.get("vad", True),
    )


class _Face:
    """The session written once: the core, the tool loop, the settings,
    the connection, and each step as a generator of calls
    (:class:`~elelem.transport.faces.Io`) that a face runs async or
    blocking."""

    def __init__(
        self,
        target: Target,
        conversation: Conversation,
        tools: Sequence[Any],
        approve: Approver | None,
        options: dict[str, Any],
        *,
        blocking: bool,
    ) -> None:
        self.target = target
        self.protocol = live_protocol(target)
        self.loop = ToolLoop(tools, approve=approve)
        self.settings = _settings(target, self.loop, options)
        self.core = LiveCore(
            conversation,
            target.resolved,
            target.provider,
            target.model,
            self.protocol.input_rate,
            self.protocol.output_rate,
            self.settings.instructions,
            target.endpoint.redact,
            options.get("max_steps", MAX_STEPS),
        )
        self.blocking = blocking
        self.connection = self._connection()
        self.resumes = 0
        self.closed = False

    def _connection(self) -> LiveConnection:
        target = self.target
        return LiveConnection(self.protocol, target.endpoint, target.model, blocking=self.blocking)

    @property
    def input_rate(self) -> int:
        """The rate of the PCM16 audio the session takes."""
        return self.protocol.input_rate

    @property
    def output_rate(self) -> int:
        """The rate of the PCM16 audio the model speaks."""
        return self.protocol.output_rate

    @property
    def conversation(self) -> Conversation:
        """The log the session writes."""
        return self.core.conversation

    def _dropped(self, exc: StreamError) -> tuple[list[LiveAction], LiveSettings | None]:
        """What a dropped connection asks for: the actions that keep what was
        in progress and note the drop, and the settings to reconnect with
        (the last resumption handle), or None when the session is lost."""
        resumable = (
            isinstance(exc, TransportError)
            and self.core.resumable
            and self.core.resume_handle is not None
            and self.resumes < MAX_RESUMES
        )
        if not resumable:
            self.closed = True
            return self.core.stop("lost", exc), None
        self.resumes += 1
        settings = msgspec.structs.replace(self.settings, resume=self.core.resume_handle)
        return self.core.stop("dropped", exc), settings

    def _receiving(self) -> Effects[Sequence[LiveOutput] | None]:
        """What the next server frame means (None at the session's end),
        a dropped connection noted and, where the wire resumes, reconnected."""
        while True:
            try:
                return (yield from self.connection.receiving())
            except StreamError as exc:
                actions, settings = self._dropped(exc)
                yield from self._doing(actions)
                if settings is None:
                    raise
                self.connection = self._connection()
                yield from self.connection.connecting(settings)

    def _doing(self, actions: list[LiveAction]) -> Effects[None]:
        for action in actions:
            if isinstance(action, Append):
                # Async, the commit runs in a worker thread, shielded: a
                # slow store never stalls the loop, and the log must know
                # what it holds.
                yield Io(self, "_append", (action,), async_method="_append_off_loop")
            elif isinstance(action, SendCommand):
                yield from self.connection.sending(action.command)
            elif isinstance(action, RunTools):
                work = _Work(action.calls)
                results, _ = yield Io(self.loop, "step_sync", (work,), async_method="step")
                yield from self._doing(self.core.results(results))

    def _append(self, action: Append) -> None:
        self.core.conversation.append(*action.drafts)

    async def _append_off_loop(self, action: Append) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._append, action)

    def _closing(self, exc: BaseException | None) -> Effects[None]:
        if self.closed:
            return
        self.closed = True
        try:
            yield from self._doing(self.core.stop("closed", exc))
        finally:
            yield from self.connection.closing()

    def _commit(self) -> Effects[None]:
        from elelem.wire.live import CommitAudio

        yield from self.connection.sending(CommitAudio())


class LiveSession(_Face):
    """An async live session (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs, blocking=False)

    async def __aenter__(self) -> LiveSession:
        await awaiting(self.connection.connecting(self.settings))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close(exc[1] if isinstance(exc[1], BaseException) else None)

    async def send_audio(self, pcm: bytes) -> None:
        """Send PCM16 mono audio at :attr:`input_rate`."""
        await awaiting(self._doing(self.core.audio(pcm)))

    async def commit(self) -> None:
        """End the user's turn of audio (without server VAD) and ask for an answer."""
        await awaiting(self._commit())

    async def send_text(self, text: str) -> None:
        """Send a user message of text."""
        await awaiting(self._doing(self.core.text(text)))

    async def interrupt(self, audio_end_ms: int | None = None) -> None:
        """Cut the assistant off where the user heard it to (``audio_end_ms``
        into its audio item; all of it received so far by default)."""
        await awaiting(self._doing(self.core.interrupt(audio_end_ms)))

    async def __aiter__(self) -> AsyncIterator[LiveOutput]:
        feed = self.core.feed
        while (outputs := await awaiting(self._receiving())) is not None:
            for output in outputs:
                actions = feed(output)
                if actions:
                    await awaiting(self._doing(actions))
                yield output

    async def close(self, exc: BaseException | None = None) -> None:
        """End the session: what arrived is kept, the end noted."""
        await awaiting(self._closing(exc))


class SyncLiveSession(_Face):
    """A blocking live session, in the calling thread (see the module
    docstring): :class:`LiveSession`'s steps, each run blocking."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs, blocking=True)

    def __enter__(self) -> SyncLiveSession:
        blocking(self.connection.connecting(self.settings))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(exc[1] if isinstance(exc[1], BaseException) else None)

    def send_audio(self, pcm: bytes) -> None:
        """Send PCM16 mono audio at :attr:`input_rate`."""
        blocking(self._doing(self.core.audio(pcm)))

    def commit(self) -> None:
        """End the user's turn of audio (without server VAD) and ask for an answer."""
        blocking(self._commit())

    def send_text(self, text: str) -> None:
        """Send a user message of text."""
        blocking(self._doing(self.core.text(text)))

    def interrupt(self, audio_end_ms: int | None = None) -> None:
        """Cut the assistant off (see :meth:`LiveSession.interrupt`)."""
        blocking(self._doing(self.core.interrupt(audio_end_ms)))

    def __iter__(self) -> Iterator[LiveOutput]:
        feed = self.core.feed
        while (outputs := blocking(self._receiving())) is not None:
            for output in outputs:
                actions = feed(output)
                if actions:
                    blocking(self._doing(actions))
                yield output

    def close(self, exc: BaseException | None = None) -> None:
        """End the session: what arrived is kept, the end noted."""
        blocking(self._closing(exc))


def live(
    client: Any,
    model: str | Target,
    *,
    conversation: Conversation,
    tools: Sequence[Any] = (),
    approve: Approver | None = None,
    **options: Any,
) -> LiveSession:
    """An async live session with ``model`` (``openai:gpt-realtime``,
    ``azure:…``, ``google:gemini-live-…``) writing to ``conversation``.

    ``tools`` are what :func:`elelem.run` takes (functions, tools, MCP
    servers), ``approve`` its approval callback; ``options``:
    ``instructions``, ``output`` (``audio`` or ``text``), ``voice``,
    ``transcribe``, ``vad`` (see :class:`~elelem.wire.live.LiveSettings`),
    ``max_steps`` (tool steps per user turn, as :func:`elelem.run`'s).
    Use it as ``async with``.
    """
    target = client.target(model)
    return LiveSession(target, conversation, tools, approve, options)


def live_sync(
    client: Any,
    model: str | Target,
    *,
    conversation: Conversation,
    tools: Sequence[Any] = (),
    approve: Approver | None = None,
    **options: Any,
) -> SyncLiveSession:
    """:func:`live`, blocking, in the calling thread; use it as ``with``."""
    target = client.target(model)
    return SyncLiveSession(target, conversation, tools, approve, options)


__all__ = ["LiveSession", "SyncLiveSession", "live", "live_sync"]
