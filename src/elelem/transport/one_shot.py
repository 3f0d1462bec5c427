"""A provider exchange of several requests, written once, run async or blocking.

A *flow* is a generator that yields :class:`Call` values (one request each,
sans-IO) and is sent back what each call parsed from its answer; it returns
the exchange's result.  :func:`run_async` and :func:`run_sync` drive the same
flow over the one driver (as httpx drives one ``auth_flow`` from a sync and
an async loop), so a batch submission — an upload, then the batch — is
written once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeVar

from elelem.errors import ConfigError, MalformedStreamError, StreamError, UnsupportedError
from elelem.stream import Chunk, Finish, ResponseStart
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest, FrameParser, ModelRequest, Shape

T = TypeVar("T")


class Call:
    """One request of a flow as a :class:`~elelem.wire.Shape`: its wire
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
        return self._encoded

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> FrameParser:
        raise UnsupportedError(f"{self.what}: one answer, not a stream")

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
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
        return self._shape.classify_error(status, headers, body)


Flow = Generator[Call, Any, T]
"""A flow: yields calls, is sent each call's parsed value, returns ``T``."""


def _request(model: str) -> ModelRequest:
    return ModelRequest(model=model, messages=())


async def run_async(
    driver: Driver,
    endpoint: Endpoint,
    flow: Flow[T],
    model: str,
    timeouts: Timeouts | None,
    *,
    operation: str,
) -> T:
    """Run ``flow`` over ``driver`` (async), each call one request to
    ``endpoint`` that the hooks are told is an ``operation`` (``batch``,
    ``speak``, …: a trace names its span after it)."""
    request = _request(model)
    try:
        call = next(flow)
        while True:
            await driver.exchange(endpoint, call, request, timeouts=timeouts, operation=operation)
            call = flow.send(call.value)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def run_sync(
    driver: Driver,
    endpoint: Endpoint,
    flow: Flow[T],
    model: str,
    timeouts: Timeouts | None,
    *,
    operation: str,
) -> T:
    """Run ``flow`` over ``driver``, blocking."""
    request = _request(model)
    try:
        call = next(flow)
        while True:
            driver.sync_exchange(endpoint, call, request, timeouts=timeouts, operation=operation)
            call = flow.send(call.value)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


_QUOTED = {'"': "%22", "\r": "%0D", "\n": "%0A"}
"""What a quoted header value may not hold, escaped as browsers do."""


def _text(key: str, value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"the {key} is not valid UTF-8 text (at character {exc.start + 1})"
        ) from None


def multipart(
    fields: Mapping[str, str], name: str, filename: str, content: bytes, content_type: str
) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body of text ``fields`` and one file; and its
    content type.  A field that is not UTF-8 text is a
    :class:`~elelem.errors.ConfigError` naming it; the file's name has its
    quotes and line breaks escaped (a name could otherwise end the header
    and forge another) and is sent as UTF-8, undecodable bytes replaced."""
    boundary = "elelem-" + secrets.token_hex(16)
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode()
        + _text(key, value)
        + b"\r\n"
        for key, value in fields.items()
    ]
    safe = "".join(_QUOTED.get(c, c) for c in filename)
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"'
        f"\r\nContent-Type: {content_type}\r\n\r\n".encode("utf-8", "replace")
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


__all__ = ["Call", "Flow", "multipart", "run_async", "run_sync"]
