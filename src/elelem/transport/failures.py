"""How the transport reads what a failed exchange tells: the request id and
retry hint of an error response, and an exception as a message says it."""

from __future__ import annotations

import time
from collections.abc import Mapping

import httpx2

from elelem import errors
from elelem.errors import StreamError

_REQUEST_ID_HEADERS = (
    "request-id",
    "x-request-id",
    "x-amzn-requestid",
    "x-goog-request-id",
    "cf-ray",
)


def request_id(headers: Mapping[str, str]) -> str | None:
    """The provider's request id among ``headers`` (its known header names, any case), or None."""
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in _REQUEST_ID_HEADERS:
        value = lowered.get(name)
        if value:
            return value
    return None


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an
    HTTP date, read against ``now``, default the local clock), or None when
    absent or unreadable.  The one parser lives in :mod:`elelem.errors`."""
    return errors.parse_retry_after(headers, time.time() if now is None else now)


def stamp_error(error: StreamError, status: int, headers: Mapping[str, str]) -> StreamError:
    """What the driver adds, once, to the typed error a shape made of an HTTP
    error response: the server's retry hint (``retry-after-ms`` or
    ``retry-after``; an HTTP date read against the response's own ``Date``,
    else the local clock), the response's request id and its status — each
    only where the body itself stated none.  Returns ``error``."""
    if error.retry_after is None:
        date = next((v for k, v in headers.items() if k.lower() == "date"), None)
        served = errors.http_date(date) if date is not None else None
        error.retry_after = parse_retry_after(headers, served)
    if error.request_id is None:
        error.request_id = request_id(headers)
    if error.status is None:
        error.status = status
    return error


def name_provider(error: BaseException, provider: str) -> None:
    """The message of a typed error a shape made names the provider the
    caller called (``openrouter 400 …``), not the shape (``chat 400 …``)."""
    if not isinstance(error, StreamError) or not error.named or not provider:
        return
    label = error.named + " "
    if error.named != provider and error.message.startswith(label):
        error.message = provider + " " + error.message[len(label) :]
        error.args = (error.message, *error.args[1:])
    error.named = provider


def pool_timeout(where: str, waited: float, connections: int | None) -> errors.PoolTimeoutError:
    """The typed error of a request that found no free connection within
    ``waited`` seconds (``Timeouts.pool``); ``connections`` is the pool's
    ``Limits.connections``, None when the HTTP client (and its pool) was
    the caller's."""
    if connections is None:
        return errors.PoolTimeoutError(
            f"no free connection to {where} within {waited:g}s (Timeouts.pool): "
            "every connection of the HTTP client's pool was busy",
            limit="the HTTP client's pool",
            value=None,
        )
    return errors.PoolTimeoutError(
        f"no free connection to {where} within {waited:g}s (Timeouts.pool): "
        f"all {connections} connections (Limits.connections) were busy",
        limit="Limits.connections",
        value=connections,
    )


def host(request: httpx2.Request) -> str:
    """The host and port ``request`` went to, for messages."""
    # Host and port only: a query string could carry a credential.
    url = request.url
    return f"{url.host}:{url.port}" if url.port else str(url.host)


def told(exc: BaseException) -> str:
    """``exc`` as an error message tells it: its type and the first message
    along its causes (the async transport's own is often empty where the
    socket's error says what happened; both shells then say the same).
    Not redacted: the caller redacts."""
    text, cause, depth = str(exc), exc.__cause__ or exc.__context__, 0
    while not text and cause is not None and depth < 8:
        text, cause, depth = str(cause), cause.__cause__ or cause.__context__, depth + 1
    return f"{type(exc).__name__}: {text}"


__all__ = [
    "host",
    "name_provider",
    "parse_retry_after",
    "pool_timeout",
    "request_id",
    "stamp_error",
    "told",
]
