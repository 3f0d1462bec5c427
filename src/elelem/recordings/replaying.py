"""Recorded responses replayed through the real transport driver.

A recorded response is served on a :class:`~elelem.recordings.loopback.LoopbackServer`
with its recorded status and headers and read by :class:`~elelem.transport.Driver`,
exactly as users' code reads a live one (framing, content types, HTTP errors,
the stream's end), so what ``elelem inspect`` prints is what the driver gives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from elelem.errors import MalformedStreamError, StreamError, TransportError
from elelem.recordings.cassettes import Interaction, RecordedResponse
from elelem.recordings.containers import is_eventstream
from elelem.recordings.loopback import LoopbackServer, Reply, Send
from elelem.stream import AssembledResponse, Chunk
from elelem.transport import Driver, Endpoint, ResponseStream
from elelem.transport.framing import EVENTSTREAM_TYPE, NDJSON_TYPES
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape

_SSE_START = (b"data:", b"event:", b":", b"id:", b"retry:")
# How the loopback server frames the body is its own (close-delimited), and
# the recorded body is already decoded: these recorded headers would lie.
_FRAMING_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "content-encoding", "connection"}
)


class RecordedRequestShape:
    """A shape that sends the recorded request again and whose parsers get
    the recorded wire request (as a raw-request shape's parser reads it), so
    hosted tool versions come out as recorded.  Nothing is encoded: a
    recording replays whatever its request was, in a shape whose encoder is
    not built too."""

    def __init__(self, shape: Shape, wire: Any, recorded: Interaction | None = None) -> None:
        self._shape = shape
        self._wire = wire
        request = recorded.request if recorded is not None else None
        self._path = request.path if request is not None and request.path else "/"
        body = request.json if request is not None else None
        self._body: dict[str, Any] = body if isinstance(body, dict) else {}
        self.name = shape.name
        self.framing = shape.framing

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The recorded request (its path and JSON body), as recorded."""
        return EncodedRequest(path=self._path, body=self._body, stream=stream)

    def new_parser(self, provider: ProviderId, request: Any = None) -> FrameParser:
        """The shape's parser, reading the recorded wire request."""
        return self._shape.new_parser(provider, self._wire)

    def parse_response(self, body: bytes, provider: ProviderId, request: Any = None) -> list[Chunk]:
        """The shape's whole-body mapping, reading the recorded wire request."""
        return self._shape.parse_response(body, provider, self._wire)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> Any:
        """The shape's HTTP error classification."""
        return self._shape.classify_error(status, headers, body)


def served_content_type(response: RecordedResponse) -> str:
    """The content type to serve ``response`` with: the recorded one, unless
    the bytes say otherwise (an AWS binary event stream, or server-sent
    events a recording kept of an event-stream shape's decoded events)."""
    body = response.body
    recorded = response.content_type
    if is_eventstream(body):
        return EVENTSTREAM_TYPE
    if recorded not in NDJSON_TYPES and response.streamed and body.lstrip().startswith(_SSE_START):
        return "text/event-stream"
    return response.headers.get("content-type") or (
        "text/event-stream" if response.streamed else "application/json"
    )


def recorded_reply(response: RecordedResponse) -> Reply:
    """The loopback reply that serves ``response``: its status, its headers
    (content type corrected by :func:`served_content_type`), its body."""
    headers = {
        k: v
        for k, v in response.headers.items()
        if k.lower() not in _FRAMING_HEADERS and k.lower() != "content-type"
    }
    headers["content-type"] = served_content_type(response)
    return Reply(response.status, headers, (Send(response.body),))


Replayed = tuple[AssembledResponse, StreamError | None]


def through_driver(
    cases: Sequence[tuple[Interaction, Shape, ProviderId]],
) -> list[Replayed | MalformedStreamError | TransportError]:
    """Each ``(interaction, shape, provider)``'s recorded response served on
    one loopback server and read by the driver, in order: the result, or the
    partial result and the provider error it ended in, or the framing or
    transport fault that made it unreadable."""
    replies = [recorded_reply(interaction.response) for interaction, _, _ in cases]
    request = ModelRequest(model="recorded", messages=())

    async def main(
        server: LoopbackServer,
    ) -> list[Replayed | MalformedStreamError | TransportError]:
        driver = Driver()
        out: list[Replayed | MalformedStreamError | TransportError] = []
        try:
            for interaction, shape, provider in cases:
                endpoint = Endpoint(provider, server.url, api_key="sk-loopback-1")
                stream = ResponseStream(
                    driver,
                    endpoint,
                    shape,
                    request,
                    timeouts=driver.timeouts,
                    stream=interaction.response.streamed,
                )
                try:
                    async with stream:
                        out.append((await stream.final(), None))
                except (MalformedStreamError, TransportError) as exc:
                    out.append(exc)
                except StreamError as exc:  # a provider error the recording holds
                    out.append((stream.partial(), exc))
        finally:
            await driver.aclose()
        return out

    with LoopbackServer(replies) as server:
        return asyncio.run(main(server))


__all__ = [
    "RecordedRequestShape",
    "Replayed",
    "recorded_reply",
    "served_content_type",
    "through_driver",
]
