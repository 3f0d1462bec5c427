"""The seam between shapes and everything else: types only (docs/architecture.md §1, §2).

What a wire shape takes and gives, as types and protocols with no code of a
shape behind them: the neutral :class:`ModelRequest`, the
:class:`EncodedRequest` an encoder returns, the :data:`Framing` of a streamed
body, and the :class:`FrameParser` and :class:`Shape` protocols.  The
transport, the client, the log and the CLI import these from here and so load
no module of :mod:`elelem.shapes`; the shapes implement them (each package's
``SHAPE`` is a :class:`~elelem.shapes.base.ShapeSpec`, which structurally is a
:class:`Shape`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol

import msgspec

from elelem.errors import StreamError
from elelem.stream import Chunk
from elelem.vocabulary import Drop, Message, ProviderId, ProviderPayload
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.request import GenerationOptions, HostedTool, ToolSpec

Framing = Literal["sse", "ndjson", "eventstream", "raw"]
"""How a streamed body is framed: server-sent events, newline-delimited JSON,
AWS's binary ``application/vnd.amazon.eventstream`` (whose messages reach
the parser as ``message(event_type, payload)``, exactly as SSE frames do),
or not at all (``raw``: a streamed file, each read reaching the parser as
``message("", data)`` with ``data`` its bytes)."""


class ModelRequest(msgspec.Struct, frozen=True):
    """One neutral request: the conversation so far and what the model may use.

    ``system`` is the system prompt (shapes that take it in-band prepend it);
    ``messages`` may also hold ``system`` messages.

    ``response_payloads`` is the response-level native data of earlier
    responses of the history, oldest first: the
    :attr:`~elelem.stream.Finish.payloads` each one ended with, which no
    message holds (the log keeps them as ``ResponseRecord.payloads``).  A
    native encoder replays from its own provider's payloads what the next
    request needs — the Anthropic encoder sends the code-execution
    ``container`` the latest envelope names, so files and state carry over
    and a programmatic tool call's results reach the container that waits
    for them.  Another provider's payloads are never sent; an encoder that
    reads this field reports them in ``dropped``.  The conversation layer
    fills it from the log; a :class:`~elelem.Client` caller holding an
    :class:`~elelem.stream.AssembledResponse` passes
    ``response_payloads=response.finish.payloads`` (the payloads of every
    earlier response, in order, over a multi-step run).

    ``now`` is when the request is made (timezone-aware).  Shapes read no
    clock, so replayed state that expires (an Anthropic container's
    ``expires_at``) is judged against it: expired state is left out and
    reported.  :class:`~elelem.Client` sets it; None judges nothing expired.
    """

    model: str
    messages: tuple[Message, ...]
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    hosted_tools: tuple[HostedTool, ...] = ()
    options: GenerationOptions = msgspec.field(default_factory=GenerationOptions)
    response_payloads: tuple[ProviderPayload, ...] = ()
    now: datetime | None = None


class EncodedRequest(msgspec.Struct, frozen=True):
    """A request ready for the wire: path (relative to the base URL), JSON body,
    extra headers, and what the encoding left out (one
    :class:`~elelem.vocabulary.Drop` each, ``where`` a path in the
    :class:`ModelRequest`).  ``content``, when set, is sent as the body
    instead of ``body``'s JSON (a multipart file upload, with its
    ``content-type`` in ``headers``)."""

    path: str
    body: dict[str, JSONValue]
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    method: str = "POST"
    stream: bool = True
    dropped: tuple[Drop, ...] = ()
    content: bytes | None = None


class FrameParser(Protocol):
    """Sans-IO parser of one response: frames in, chunks out.

    For SSE framing ``message`` receives each event's name (``""`` when the
    frame had none) and its joined data; for NDJSON framing each line arrives
    as ``message("", line)``; for event-stream framing each message arrives
    as ``message(event_type, payload)`` (an exception message's type in place
    of the event type); for raw framing each read arrives as
    ``message("", data)``, ``data`` its bytes.  A provider error event raises a typed
    :class:`~elelem.errors.StreamError`; a frame that cannot be parsed raises
    :class:`~elelem.errors.MalformedStreamError`.

    A parser may also offer ``messages(frames, out)``, one call per read
    (the skeleton's :meth:`~elelem.shapes.skeleton.ParserSkeleton.messages`);
    one whose ``takes_runs`` is true is handed each read's runs of events as
    :class:`~elelem.stream.frames.DataRun` items among the frames.
    """

    def open(self, status: int, headers: Mapping[str, str]) -> Sequence[Chunk]:
        """The response headers arrived (status 2xx)."""
        ...

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        """One frame."""
        ...

    def eof(self) -> Sequence[Chunk]:
        """The body ended; return any chunks still buffered."""
        ...


class Shape(Protocol):
    """One wire shape: Anthropic Messages, OpenAI Responses, Chat Completions,
    Gemini, Bedrock Converse or Ollama's native chat (six, each a package of
    :mod:`elelem.shapes`; a plugin may register more)."""

    name: str
    framing: Framing

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The wire request for ``request``: native replay of ``provider``'s own
        messages, portable encoding of every other message."""
        ...

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        """A parser for one streamed response to ``request``."""
        ...

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """Map a non-streaming JSON response body to the same chunks a stream gives."""
        ...

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """Turn an HTTP error response into a typed error (body kept, size-bounded)."""
        ...


__all__ = ["EncodedRequest", "FrameParser", "Framing", "ModelRequest", "Shape"]
