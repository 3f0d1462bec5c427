"""The faces of a live session: :func:`live` (async) and :func:`live_sync`.

::

    async with elelem.live(client, "openai:gpt-realtime", tools=[...],
                           conversation=conv) as session:
        await session.send_audio(pcm)          # PCM16 mono at session.input_rate
        async for output in session:           # chunks and session events
            ...

Both faces drive the one sans-IO :class:`~elelem.turns.live.LiveCore` over
the one WebSocket driver (:mod:`elelem.transport.live`); they differ only
in how an action is done (a store append in a worker thread, shielded, or
in the calling thread; a tool step awaited, or run on its own event loop).
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
from elelem.transport.live import LiveConnection, SyncLiveConnection
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
    """What both faces hold: the core, the tool loop, the settings."""

    def __init__(
        self,
        target: Target,
        conversation: Conversation,
        tools: Sequence[Any],
        approve: Approver | None,
        options: dict[str, Any],
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
        self.resumes = 0
        self.closed = False

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


class LiveSession(_Face):
    """An async live session (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connection = LiveConnection(self.protocol, self.target.endpoint, self.target.model)

    async def __aenter__(self) -> LiveSession:
        await self.connection.connect(self.settings)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close(exc[1] if isinstance(exc[1], BaseException) else None)

    async def send_audio(self, pcm: bytes) -> None:
        """Send PCM16 mono audio at :attr:`input_rate`."""
        await self._do(self.core.audio(pcm))

    async def commit(self) -> None:
        """End the user's turn of audio (without server VAD) and ask for an answer."""
        from elelem.wire.live import CommitAudio

        await self.connection.send(CommitAudio())

    async def send_text(self, text: str) -> None:
        """Send a user message of text."""
        await self._do(self.core.text(text))

    async def interrupt(self, audio_end_ms: int | None = None) -> None:
        """Cut the assistant off where the user heard it to (``audio_end_ms``
        into its audio item; all of it received so far by default)."""
        await self._do(self.core.interrupt(audio_end_ms))

    async def __aiter__(self) -> AsyncIterator[LiveOutput]:
        while True:
            try:
                outputs = await self.connection.receive()
            except StreamError as exc:
                actions, settings = self._dropped(exc)
                await self._do(actions)
                if settings is None:
                    raise
                endpoint, model = self.target.endpoint, self.target.model
                self.connection = LiveConnection(self.protocol, endpoint, model)
                await self.connection.connect(settings)
                continue
            if outputs is None:
                return
            feed = self.core.feed
            for output in outputs:
                actions = feed(output)
                if actions:
                    await self._do(actions)
                yield output

    async def _do(self, actions: list[LiveAction]) -> None:
        for action in actions:
            if isinstance(action, Append):
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self._append, action)
            elif isinstance(action, SendCommand):
                await self.connection.send(action.command)
            elif isinstance(action, RunTools):
                results, _ = await self.loop.step(_Work(action.calls))
                await self._do(self.core.results(results))

    def _append(self, action: Append) -> None:
        self.core.conversation.append(*action.drafts)

    async def close(self, exc: BaseException | None = None) -> None:
        """End the session: what arrived is kept, the end noted."""
        if self.closed:
            return
        self.closed = True
        try:
            await self._do(self.core.stop("closed", exc))
        finally:
            await self.connection.close()


class SyncLiveSession(_Face):
    """A blocking live session, in the calling thread (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connection = SyncLiveConnection(self.protocol, self.target.endpoint, self.target.model)

    def __enter__(self) -> SyncLiveSession:
        self.connection.connect(self.settings)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(exc[1] if isinstance(exc[1], BaseException) else None)

    def send_audio(self, pcm: bytes) -> None:
        """Send PCM16 mono audio at :attr:`input_rate`."""
        self._do(self.core.audio(pcm))

    def commit(self) -> None:
        """End the user's turn of audio (without server VAD) and ask for an answer."""
        from elelem.wire.live import CommitAudio

        self.connection.send(CommitAudio())

    def send_text(self, text: str) -> None:
        """Send a user message of text."""
        self._do(self.core.text(text))

    def interrupt(self, audio_end_ms: int | None = None) -> None:
        """Cut the assistant off (see :meth:`LiveSession.interrupt`)."""
        self._do(self.core.interrupt(audio_end_ms))

    def __iter__(self) -> Iterator[LiveOutput]:
        while True:
            try:
                outputs = self.connection.receive()
            except StreamError as exc:
                actions, settings = self._dropped(exc)
                self._do(actions)
                if settings is None:
                    raise
                endpoint, model = self.target.endpoint, self.target.model
                self.connection = SyncLiveConnection(self.protocol, endpoint, model)
                self.connection.connect(settings)
                continue
            if outputs is None:
                return
            feed = self.core.feed
            for output in outputs:
                actions = feed(output)
                if actions:
                    self._do(actions)
                yield output

    def _do(self, actions: list[LiveAction]) -> None:
        for action in actions:
            if isinstance(action, Append):
                self.core.conversation.append(*action.drafts)
            elif isinstance(action, SendCommand):
                self.connection.send(action.command)
            elif isinstance(action, RunTools):
                results, _ = self.loop.step_sync(_Work(action.calls))
                self._do(self.core.results(results))

    def close(self, exc: BaseException | None = None) -> None:
        """End the session: what arrived is kept, the end noted."""
        if self.closed:
            return
        self.closed = True
        try:
            self._do(self.core.stop("closed", exc))
        finally:
            self.connection.close()


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
