"""One-shot requests: a provider exchange of several of them, written once,
run async or blocking.

An :data:`Exchange` is a generator that yields :class:`Call` values (one
request each, sans-IO) and is sent back what each call parsed from its
answer; it returns the exchange's result.  :func:`exchanged` carries it
over the one driver as a generator of exchanges, awaited or blocking (the
effect drivers of :mod:`elelem.transport.faces`; as httpx drives one
``auth_flow`` from a sync and an async loop), so a batch submission — an
upload, then the batch — is written once.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar

from elelem.errors import MalformedStreamError, StreamError, UnsupportedError
from elelem.stream import Chunk, Finish, ResponseStart
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.transport.faces import Effects, Io
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape

T = TypeVar("T")


class Call:
    """One request of an exchange as a :class:`~elelem.wire.Shape`: its wire
    request is ``encoded``; its answer's bytes go through ``parse`` into
    :attr:`value`; errors are classified by ``shape`` (the provider's chat
    shape: same service, same error bodies)."""

    def __init__(
        self, shape: Shape, encoded: EncodedRequest, parse: Callable[[bytes], Any], what: str
    ) -> None:
        self.name = shape.name
        self.framing = shape.framing
        self.what = what
        """What the call does, for messages (``create the batch``)."""
        self.value: Any = None
        self.headers: Mapping[str, str] = {}
        self._shape = shape
        self._encoded = encoded
        self._parse = parse

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The call's own wire request, whatever the neutral one (a flow holds no chat)."""
        return self._encoded

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        """Refused: a call has one JSON answer, never a stream."""
        raise UnsupportedError(f"{self.what}: one answer, not a stream")

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        """Parse the answer into :attr:`value`; an answer the parse refuses is a
        :class:`~elelem.errors.MalformedStreamError` naming the call, not retried."""
        try:
            self.value = self._parse(body)
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedStreamError(
                f"the answer to {self.what} is not what the API documents: {exc}",
                body=body[:2048],
                retryable=False,
            ) from None
        return [ResponseStart(provider=provider), Finish("stop")]

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error, classified by the provider's chat shape."""
        return self._shape.classify_error(status, headers, body)


Exchange = Generator[Call, Any, T]
"""An exchange of one-shot calls: yields calls, is sent each call's parsed
value, returns ``T``.  (What runs a conversation's turns is another thing:
:data:`elelem.turns.actions.Flow`, a generator of turn actions.)"""


def _request(model: str) -> ModelRequest:
    return ModelRequest(model=model, messages=())


def exchanged(
    driver: Driver,
    endpoint: Endpoint,
    flow: Exchange[T],
    model: str,
    timeouts: Timeouts | None,
    *,
    operation: str,
) -> Effects[T]:
    """``flow`` run over ``driver``: each call one request to ``endpoint``
    (the driver's ``sync_exchange``, or ``exchange`` async) that the hooks
    are told is an ``operation`` (``batch``, ``speak``, …: a trace names
    its span after it), its parsed value sent back into the flow; run it
    with :func:`~elelem.transport.faces.awaiting` or
    :func:`~elelem.transport.faces.blocking`."""
    request = _request(model)
    options = {"timeouts": timeouts, "operation": operation}
    try:
        call = next(flow)
        while True:
            yield Io(driver, "sync_exchange", (endpoint, call, request), options, "exchange")
            call = flow.send(call.value)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


__all__ = ["Call", "Exchange", "exchanged"]
