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
from typing import Any, Protocol

import anyio
import msgspec
from starlette.responses import StreamingResponse

from elelem.errors import ElelemError
from elelem.stream.chunks import Chunk
from elelem.vocabulary import Part, ToolCallBlock, ToolResultBlock
from elelem.web.stream import UI_MESSAGE_STREAM_HEADERS, UIChunk, UIMessageEncoder

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

Source = CommittingStream | AsyncIterable[Pair]
"""A response stream, or any async iterable of pairs (what :func:`relay`
gives for a turn or a tool loop)."""

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
    pairs: AsyncIterable[Pair]
    pairs = source.with_commits() if hasattr(source, "with_commits") else source
    try:
        for chunk in encoder.start():
            yield chunk
        try:
            async for stream_chunk, committed in pairs:
                for chunk in encoder.feed(stream_chunk, committed):
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


async def sse_body(chunks: AsyncIterable[UIChunk]) -> AsyncIterator[bytes]:
    """``chunks`` as the SSE body of a UI message stream, ending in ``[DONE]``."""
    async for chunk in chunks:
        yield sse_event(chunk)
    yield DONE


class UIMessageStreamResponse(StreamingResponse):
    """An ASGI response streaming ``source`` as the AI SDK UI message stream
    (SSE with ``x-vercel-ai-ui-message-stream: v1``).

    The keyword arguments configure the :class:`UIMessageEncoder`; ``headers``
    are added to the protocol's own.
    """

    def __init__(
        self,
        source: Source,
        *,
        message_id: str | None = None,
        dynamic_tools: bool = False,
        search_entry_point: bool = True,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        encoder = UIMessageEncoder(
            message_id=message_id,
            dynamic_tools=dynamic_tools,
            search_entry_point=search_entry_point,
        )
        super().__init__(
            sse_body(ui_message_chunks(source, encoder)),
            status_code=status_code,
            headers={**UI_MESSAGE_STREAM_HEADERS, **(headers or {})},
            media_type="text/event-stream",
        )


__all__ = [
    "DONE",
    "CommittingStream",
    "Pair",
    "Source",
    "UIMessageStreamResponse",
    "relay",
    "sse_body",
    "sse_event",
    "ui_message_chunks",
]
