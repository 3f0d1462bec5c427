"""The UI message stream as Server-Sent Events and as an ASGI response.

:class:`UIMessageStreamResponse` is a Starlette ``StreamingResponse`` (so it
is returned as is from a Starlette or FastAPI endpoint) that relays an elelem
response stream to a page using the AI SDK's ``useChat``::

    @app.post("/api/chat")
    async def chat(request: Request) -> UIMessageStreamResponse:
        messages = messages_from_ui((await request.json())["messages"])
        return UIMessageStreamResponse(client.stream("anthropic:claude-sonnet-4-5", messages))

and a turn or a tool loop of a stored conversation through :func:`relay`.

The response opens the stream when the first byte is wanted and closes it
when the client goes away (Starlette cancels the body), so an abandoned page
does not keep a provider connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import msgspec
from starlette.responses import StreamingResponse

from elelem.conversation import Conversation
from elelem.errors import ElelemError
from elelem.redaction import ProcessRedactor, Redactor
from elelem.stream.chunks import Chunk
from elelem.turns.pending import pending
from elelem.vocabulary import HostedActivity, Part, ToolCallBlock, ToolResultBlock
from elelem.web.dated import dated
from elelem.web.parts import AIVersion
from elelem.web.ui_chunks import UI_MESSAGE_STREAM_HEADERS, UIChunk, UIMessageEncoder

DONE = b"data: [DONE]\n\n"
"""The end marker the AI SDK writes after the last chunk (readers skip it)."""

_encode = msgspec.json.Encoder().encode


class CommittingStream(Protocol):
    """What a response stream offers: ``(chunk, committed)`` pairs
    (:meth:`elelem.transport.ResponseStream.with_commits`)."""

    def with_commits(self) -> AsyncIterator[tuple[Chunk, tuple[Part, ...]]]:
        """Iterate the stream's chunks with the parts each one committed."""
        ...


Pair = tuple[Chunk | None, tuple[Part, ...]]
"""A chunk and the parts it committed; ``None`` for parts committed outside a
response (the tool results a tool loop appends between responses)."""


@dataclass(frozen=True)
class AwaitingApproval:
    """The calls a stopped run waits for the page to approve (the last item
    of :func:`with_approvals`), and the provider's requests to run its
    hosted tools: sent as ``tool-approval-request`` chunks."""

    calls: tuple[ToolCallBlock, ...]
    hosted: tuple[HostedActivity, ...] = ()


Source = CommittingStream | AsyncIterable[Pair] | AsyncIterable[Pair | AwaitingApproval]
"""A response stream, or any async iterable of pairs (what :func:`relay`
gives for a turn or a tool loop), possibly ending with the calls awaiting
approval (:func:`with_approvals`)."""

Observer = Callable[[Chunk, tuple[Part, ...]], Awaitable[None]]
CallObserver = Callable[[ToolCallBlock, ToolResultBlock], Awaitable[None]]


async def relay(
    run: Callable[[Observer, CallObserver], Awaitable[object]], *, buffer: int = 64
) -> AsyncIterator[Pair]:
    """The pairs of a turn or a tool loop as it runs, for
    :class:`UIMessageStreamResponse`.

    ``run(on_chunk, on_call)`` starts the run with those observers::

        relay(lambda on_chunk, on_call: elelem.run(
            conv, client, model, text, tools=[get_weather], on_chunk=on_chunk, on_call=on_call))

    (``elelem.send`` takes ``on_chunk`` only: ``lambda on_chunk, _: send(...,
    on_chunk=on_chunk)``.)  Each chunk is relayed once the turn engine stored
    what it committed; each tool result as the loop appends it.  An elelem
    error that ends the run is raised after the pairs that came before it
    (:func:`ui_message_chunks` turns it into an ``error`` chunk); when the
    consumer stops early (the page went away) the run is cancelled, which
    the turn engine records as an interruption.
    """
    send, receive = anyio.create_memory_object_stream[Pair | ElelemError](buffer)

    async def on_chunk(chunk: Chunk, committed: tuple[Part, ...]) -> None:
        await send.send((chunk, committed))

    async def on_call(_call: ToolCallBlock, result: ToolResultBlock) -> None:
        await send.send((None, (result,)))

    async def go() -> None:
        async with send:
            try:
                await run(on_chunk, on_call)
            except ElelemError as exc:  # told to the page as an error chunk
                await send.send(exc)

    failure: ElelemError | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(go)
        async with receive:
            async for item in receive:
                if isinstance(item, ElelemError):
                    failure = item
                    break
                yield item
    if failure is not None:
        raise failure


async def with_approvals(
    conversation: Conversation, pairs: AsyncIterable[Pair]
) -> AsyncIterator[Pair | AwaitingApproval]:
    """``pairs`` of a run of ``conversation`` (:func:`relay` of ``elelem.run``
    or ``elelem.resume`` with ``approve="defer"``), then, when the run
    stopped ``awaiting-approval``, the calls it waits for: the page gets a
    ``tool-approval-request`` for each, and ``useChat``'s
    ``addToolApprovalResponse`` answers it
    (:func:`elelem.web.messages.approvals_from_ui` reads the answers back
    for :func:`elelem.resume`)."""
    async for pair in pairs:
        yield pair
    waiting = pending(conversation)
    if waiting is not None and (waiting.approval or waiting.approvals):
        yield AwaitingApproval(waiting.approval, waiting.approvals)


def sse_event(chunk: UIChunk) -> bytes:
    """One UI message stream chunk as one SSE event (``data: {json}``)."""
    return b"data: " + _encode(chunk) + b"\n\n"


async def ui_message_chunks(
    source: Source, encoder: UIMessageEncoder | None = None
) -> AsyncIterator[UIChunk]:
    """The UI message stream chunks of ``source``, ending with ``finish``.

    An elelem error that ends the stream (a :class:`~elelem.errors.StreamError`
    from the provider or the transport, a broken grammar) becomes an
    ``error`` chunk and the run's ``finish``; any other exception propagates.
    A source with ``aclose`` is closed when the iteration ends or is
    cancelled.
    """
    encoder = encoder if encoder is not None else UIMessageEncoder()
    pairs: AsyncIterable[Pair | AwaitingApproval]
    pairs = source.with_commits() if hasattr(source, "with_commits") else source
    try:
        for chunk in encoder.start():
            yield chunk
        try:
            async for item in pairs:
                if isinstance(item, AwaitingApproval):
                    out = encoder.awaiting(item.calls, item.hosted)
                else:
                    out = encoder.feed(*item)
                for chunk in out:
                    yield chunk
        except ElelemError as exc:
            for chunk in encoder.error(exc):
                yield chunk
        for chunk in encoder.close():
            yield chunk
    finally:
        await _close(pairs)
        if pairs is not source:
            await _close(source)


async def _close(thing: object) -> None:
    close: Any = getattr(thing, "aclose", None)
    if close is not None:
        await close()


class _Redacting:
    """Removes secrets from every text a stream carries.  A secret may arrive
    split over deltas, so each part's newest characters are held back (from
    the last white space at least twice the longest secret's length from the
    end) until more text, the part's end, an error or the finish comes."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._redact = redactor.redact
        self._pending: dict[str, tuple[str, str]] = {}  # part id -> (delta type, text)

    def __call__(self, chunk: UIChunk) -> list[UIChunk]:
        kind = chunk.get("type")
        if kind in ("text-delta", "reasoning-delta"):
            raw = self._pending.get(chunk["id"], (kind, ""))[1] + chunk["delta"]
            # A plain echo spans at most the secret; twice that leaves room
            # for some escaping without making the page lag far behind the
            # stream.  Asked each time: a token fetched mid-stream counts.
            hold = 2 * max((len(secret) for secret in self._redactor.secrets), default=0)
            cut = len(raw) - hold
            # Cut after white space (no secret holds any), so no echo is
            # split between what is sent and what is held; with no secret
            # in force (yet) nothing is held.
            while hold and cut > 0 and not raw[cut - 1].isspace():
                cut -= 1
            self._pending[chunk["id"]] = (kind, raw[max(cut, 0) :])
            return [{**chunk, "delta": self._redact(raw[:cut])}] if cut > 0 else []
        if kind in ("text-end", "reasoning-end"):
            return [*self._flush(chunk.get("id")), self._clean(chunk)]
        if kind in ("error", "finish"):
            return [*self._flush(None), self._clean(chunk)]
        return [self._clean(chunk)]

    def _flush(self, part: object) -> list[UIChunk]:
        ids = [part] if part is not None else list(self._pending)
        out: list[UIChunk] = []
        for key in ids:
            kind, text = self._pending.pop(str(key), ("", ""))
            if text:
                out.append({"type": kind, "id": key, "delta": self._redact(text)})
        return out

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._redact(value)
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return value


async def redacted(chunks: AsyncIterable[UIChunk], redactor: Redactor) -> AsyncIterator[UIChunk]:
    """``chunks`` with every secret ``redactor`` knows removed from their text
    (a secret split over deltas included).  A
    :class:`~elelem.redaction.ProcessRedactor` is asked as the stream goes:
    a token fetched for its request is removed too."""
    if not redactor and not isinstance(redactor, ProcessRedactor):
        async for chunk in chunks:
            yield chunk
        return
    clean = _Redacting(redactor)
    async for chunk in chunks:
        for out in clean(chunk):
            yield out


async def sse_body(chunks: AsyncIterable[UIChunk]) -> AsyncIterator[bytes]:
    """``chunks`` as the SSE body of a UI message stream, ending in ``[DONE]``."""
    async for chunk in chunks:
        yield sse_event(chunk)
    yield DONE


class UIMessageStreamResponse(StreamingResponse):
    """An ASGI response streaming ``source`` as the AI SDK UI message stream
    (SSE with ``x-vercel-ai-ui-message-stream: v1``).

    The keyword arguments configure the :class:`UIMessageEncoder`; ``headers``
    are added to the protocol's own; a ``redactor`` removes the secrets it
    knows from every text sent (:func:`redacted`); with ``log``, the
    conversation the run is stored in, the stream also carries what its log
    recorded (times, usage lines: :mod:`elelem.web.dated`), transient
    parts a ``useChat`` page's ``onData`` sees and no message keeps, and,
    unless ``log_in_kept_parts`` is false, the stored ``at`` and ``event``
    in each ``data-hosted-activity`` part, which a message keeps.
    """

    def __init__(
        self,
        source: Source,
        *,
        message_id: str | None = None,
        dynamic_tools: bool = False,
        search_entry_point: bool = True,
        ai_version: AIVersion = 7,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        redactor: Redactor | None = None,
        log: Conversation | None = None,
        log_in_kept_parts: bool = True,
    ) -> None:
        encoder = UIMessageEncoder(
            message_id=message_id,
            dynamic_tools=dynamic_tools,
            search_entry_point=search_entry_point,
            ai_version=ai_version,
        )
        chunks = ui_message_chunks(source, encoder)
        if log is not None:
            chunks = dated(chunks, log, hosted=log_in_kept_parts)
        if redactor is not None:
            chunks = redacted(chunks, redactor)
        super().__init__(
            sse_body(chunks),
            status_code=status_code,
            headers={**UI_MESSAGE_STREAM_HEADERS, **(headers or {})},
            media_type="text/event-stream",
        )


__all__ = [
    "DONE",
    "AwaitingApproval",
    "CommittingStream",
    "Pair",
    "Source",
    "UIMessageStreamResponse",
    "redacted",
    "relay",
    "sse_body",
    "sse_event",
    "ui_message_chunks",
    "with_approvals",
]
