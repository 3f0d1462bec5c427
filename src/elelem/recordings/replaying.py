"""Recorded responses replayed through the real transport driver.

A recorded response is served on a :class:`~elelem.recordings.loopback.LoopbackServer`
with its recorded status and headers and read by :class:`~elelem.transport.Driver`,
exactly as users' code reads a live one (framing, content types, HTTP errors,
the stream's end), so what ``elelem inspect`` prints is what the driver gives.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from elelem.errors import MalformedStreamError, StreamError, TransportError
from elelem.recordings.bodies import SSE_START, head, is_eventstream
from elelem.recordings.cassettes import Interaction, RecordedResponse
from elelem.recordings.loopback import LoopbackServer, Reply, Send
from elelem.recordings.loopback import RecordedRequest as LoopbackRequest
from elelem.stream import AssembledResponse, Chunk
from elelem.transport import Driver, Endpoint, ResponseStream
from elelem.transport.framing import EVENTSTREAM_TYPE, NDJSON_TYPES
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape

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
    if recorded not in NDJSON_TYPES and response.streamed and head(body, 6).startswith(SSE_START):
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
Outcome = Replayed | MalformedStreamError | TransportError
"""What a replay gave: the result (and the provider error it ended in), or
the framing or transport fault that made the response unreadable."""


class Replayer:
    """Recorded responses replayed one after another through one loopback
    server, one event loop and one driver (a ``with`` block holds them).

    A recording of thousands of interactions costs one server, loop and
    connection pool, not one each: the per-interaction work is the
    response's own.  Only the reply of the interaction being replayed is
    held; a request beyond it gets a 500 saying so, as a one-reply server
    would give.
    """

    def __init__(self, *, lifetime: float = 24 * 3600.0) -> None:
        self._reply: Reply | None = None
        self._server = LoopbackServer(self._next_reply, lifetime=lifetime)
        self._runner = asyncio.Runner()
        self._driver: Driver | None = None
        self._outcome: Outcome | None = None

    def _next_reply(self, request: LoopbackRequest) -> Reply:
        reply, self._reply = self._reply, None
        if reply is None:
            message = b"loopback server: no reply scripted for this request"
            return Reply(500, {"content-type": "text/plain"}, (Send(message),))
        return reply

    def __enter__(self) -> Replayer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._driver is not None:
                self._runner.run(self._driver.aclose())
        finally:
            self._runner.close()
            self._server.stop()

    def replay(
        self,
        interaction: Interaction,
        shape: Shape,
        provider: ProviderId,
        reply: Reply | None = None,
    ) -> Outcome:
        """``interaction``'s recorded response (or ``reply``, serving it
        another way) served and read by the driver as ``shape`` from
        ``provider``."""
        served = reply if reply is not None else recorded_reply(interaction.response)
        # One kept-alive connection carries every replay, as one to a provider would.
        self._reply = dataclasses.replace(served, keep_alive=True)
        # The outcome is handed over beside the task, not as its result: on
        # the main thread asyncio.Runner.run ends by asking signal.getsignal,
        # which formats the repr of its SIGINT handler, whose task's repr
        # holds the repr of its result (the whole assembled text, once more).
        self._runner.run(self._read(interaction, shape, provider))
        outcome, self._outcome = self._outcome, None
        assert outcome is not None
        return outcome

    async def _read(self, interaction: Interaction, shape: Shape, provider: ProviderId) -> None:
        if self._driver is None:
            self._driver = Driver()  # made inside the loop that will run it
        endpoint = Endpoint(provider, self._server.url, api_key="sk-loopback-1")
        stream = ResponseStream(
            self._driver,
            endpoint,
            shape,
            _REQUEST,
            timeouts=self._driver.timeouts,
            stream=interaction.response.streamed,
        )
        try:
            async with stream:
                self._outcome = (await stream.final(), None)
        except (MalformedStreamError, TransportError) as exc:
            self._outcome = exc
        except StreamError as exc:  # a provider error the recording holds
            self._outcome = (stream.partial(), exc)


_REQUEST = ModelRequest(model="recorded", messages=())


def through_driver(
    cases: Sequence[tuple[Interaction, Shape, ProviderId]],
) -> list[Outcome]:
    """Each ``(interaction, shape, provider)``'s recorded response served on
    one loopback server and read by the driver, in order: the result, or the
    partial result and the provider error it ended in, or the framing or
    transport fault that made it unreadable."""
    with Replayer() as replayer:
        return [replayer.replay(*case) for case in cases]


__all__ = [
    "Outcome",
    "RecordedRequestShape",
    "Replayed",
    "Replayer",
    "recorded_reply",
    "served_content_type",
    "through_driver",
]
