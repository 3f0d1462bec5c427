"""Where a request goes and how it authenticates, with the key kept secret."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Protocol

from elelem.redaction import REDACTED, Redactor, check_secret, hold
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest

Route = Callable[[EncodedRequest], EncodedRequest]
"""Rewrites a shape's request for where it is served (a cloud's path and
body conventions, e.g. Vertex AI's ``publishers/{p}/models/{m}:method``)."""

SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|session|passw|credential", re.IGNORECASE)
"""Header names whose values are treated as secrets (redacted like the key)."""


class RequestSigner(Protocol):
    """Signs a request at send time (e.g. :class:`~elelem.transport.sigv4.SigV4Signer`).

    ``sign`` gets the request as it will go out (``path`` and ``query`` as
    on the wire) and the time to stamp it with, and returns headers to add.
    ``secrets`` lists what must be redacted from any text shown.
    """

    def sign(
        self,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
        now: datetime,
    ) -> Mapping[str, str]:
        """Headers that sign this request."""
        ...

    def secrets(self) -> tuple[str, ...]:
        """Values never to show."""
        ...


class RefreshingSigner(RequestSigner, Protocol):
    """A signer whose credential expires (:class:`~elelem.transport.bearer.BearerSigner`):
    ``due`` says whether a request at ``now`` needs a fresh one, ``refresh``
    fetches it (blocking: the async driver runs it in a worker thread)."""

    def due(self, now: datetime) -> bool:
        """Whether :meth:`refresh` must run before a request at ``now``."""
        ...

    def refresh(self, now: datetime, deadline: float | None = None) -> None:
        """Fetch a fresh credential if one is due (may block), by
        ``deadline`` (a ``time.monotonic()`` value; None: unbounded)."""
        ...


@dataclass(frozen=True, repr=False, eq=False)
class Endpoint:
    """A provider endpoint: base URL, plain headers and the secret API key.

    The key goes only into the ``auth_header`` request header (prefixed with
    ``auth_scheme`` when one is set, e.g. ``Bearer``).  It never appears in
    this object's repr, in an error message or in a log line: error bodies
    and transport messages pass through :meth:`redact` first.

    ``signer``, when set, signs each request at send time with its final URL,
    headers and body (AWS SigV4); its secrets are redacted like the key, as
    are the values of headers whose names say they hold one
    (:data:`SECRET_HEADER`) and any ``secrets`` given (an MCP token, …).
    A signer whose secrets change (a refreshed token) is asked for them
    again each time text is redacted.

    ``route``, when set, rewrites each encoded request before it is built
    (a cloud serving a shape under its own paths: Vertex AI).

    A key, header name or header value holding CR, LF, another control or a
    non-ASCII character is a :class:`~elelem.errors.ConfigError` when the
    endpoint is made, before any request.
    """

    provider: ProviderId
    base_url: str
    api_key: str | None = None
    auth_header: str = "authorization"
    auth_scheme: str = "Bearer"
    headers: Mapping[str, str] = field(default_factory=dict)
    signer: RequestSigner | None = None
    secrets: tuple[str, ...] = ()
    route: Route | None = None

    def __post_init__(self) -> None:
        where = f"provider {self.provider}"
        if self.api_key is not None:
            check_secret(self.api_key, f"{where}: the API key")
        check_secret(self.auth_header, f"{where}: the auth header name")
        check_secret(self.auth_scheme, f"{where}: the auth scheme")
        for name, value in self.headers.items():
            check_secret(name, f"{where}: a header name")
            check_secret(value, f"{where}: header {name!r}")
        if self.signer is not None:
            for secret in self.signer.secrets():
                check_secret(secret, f"{where}: an AWS credential")
        for secret in self.secrets:
            check_secret(secret, f"{where}: a secret")
        # Its secrets (a refreshed token included) are the whole process's
        # while it lives: the command line's outputs, the store, ``serve``
        # and the tracer redact them as they do the keys in force.
        hold(self, _endpoint_secrets)

    def url(self, path: str) -> str:
        """``path`` (relative to the base URL, query allowed) joined to the base URL."""
        if path.startswith(("http://", "https://")):
            return path
        if not path:
            return self.base_url
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")

    def request_headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        """Headers for one request: ours, then the shape's ``extra``, then auth.

        Auth comes last so that no shape header can replace or leak it.
        """
        out = {k.lower(): v for k, v in self.headers.items()}
        out.update({k.lower(): v for k, v in extra.items()})
        if self.api_key:
            value = f"{self.auth_scheme} {self.api_key}" if self.auth_scheme else self.api_key
            out[self.auth_header.lower()] = value
        return out

    @cached_property
    def _fixed_redactor(self) -> Redactor:
        found = [self.api_key, *self.secrets]
        found.extend(v for k, v in self.headers.items() if SECRET_HEADER.search(k))
        return Redactor(found)

    @property
    def redactor(self) -> Redactor:
        """The redactor of every secret this endpoint sends (its signer's
        as they are now: a refreshed token included)."""
        if self.signer is None:
            return self._fixed_redactor
        current = self.signer.secrets()
        cached = self.__dict__.get("_signed_redactor")
        if cached is None or cached[0] != current:
            cached = (current, self._fixed_redactor.extend(current))
            object.__setattr__(self, "_signed_redactor", cached)
        redactor: Redactor = cached[1]
        return redactor

    def redact(self, text: str) -> str:
        """``text`` with every secret of this endpoint (in any echo encoding) replaced."""
        return self.redactor.redact(text)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with every secret of this endpoint (in any echo encoding) replaced."""
        return self.redactor.redact_bytes(data)

    def __repr__(self) -> str:
        key = REDACTED if self.api_key else None
        return (
            f"Endpoint(provider={self.provider!r}, base_url={self.base_url!r}, "
            f"api_key={key!r}, auth_header={self.auth_header!r}, "
            f"headers={sorted(self.headers)!r}"
            + (f", signer={self.signer!r})" if self.signer is not None else ")")
        )

    __str__ = __repr__


def _endpoint_secrets(endpoint: Endpoint) -> tuple[str, ...]:
    return endpoint.redactor.secrets


__all__ = ["REDACTED", "Endpoint", "RefreshingSigner", "RequestSigner", "Route"]
