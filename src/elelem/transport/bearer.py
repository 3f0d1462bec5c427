"""Bearer tokens that expire: fetched from a credential, refreshed before expiry.

Cloud providers (Google Vertex AI, Microsoft Azure) authenticate with
short-lived OAuth access tokens rather than a fixed key.  A
:class:`BearerSigner` is the endpoint's :class:`~elelem.transport.endpoint.RequestSigner`
for them:

- the token comes from a :class:`TokenSource` (Google's Application Default
  Credentials, Azure's ``DefaultAzureCredential``, or any object with the
  same two methods), whose ``fetch`` may block on the network;
- it is fetched on first use and again once the driver's clock comes within
  :data:`REFRESH_MARGIN` of its expiry, so a conversation that outlives a
  token keeps working;
- the async driver runs a due refresh in a worker thread
  (:meth:`BearerSigner.refresh`), so the event loop never blocks on it; the
  blocking driver refreshes in the calling thread; ``sign`` itself only
  fetches when nothing did before it;
- every token it ever held (and the source's own secrets: a refresh token,
  a client secret) is listed by :meth:`BearerSigner.secrets`, so the
  endpoint's redactor removes them from any error, record or log line,
  including an old token a server echoes after a refresh; they are the
  process's secrets (:func:`~elelem.redaction.hold`) from the moment they
  are held, so every output the process redactor guards removes them too.

A fetch is bounded by the request's deadline: the driver hands
:meth:`BearerSigner.refresh` a ``time.monotonic()`` deadline (its total
timeout), which a source reads with :func:`fetch_deadline` while it runs
(the cloud sources bound their token requests by it, in time and size),
and a fetch that ends past it fails authentication all the same.  A token
that is not a non-empty string fails authentication too.

Sans-IO in the sense that matters here: nothing reads the wall clock; the
time is handed in by the driver.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Protocol

from elelem.errors import AuthenticationError
from elelem.redaction import REDACTED, check_secret, hold, hold_secrets

REFRESH_MARGIN = timedelta(minutes=5)
"""A token this close to its expiry is refreshed before the next request."""

MAX_REMEMBERED = 32
"""How many past tokens stay known to the redactor (the oldest go first)."""


_fetching = threading.local()


def fetch_deadline() -> float | None:
    """The ``time.monotonic()`` by which the token fetch running in this
    thread must end (None: no fetch is running, or it has no deadline)."""
    deadline: float | None = getattr(_fetching, "deadline", None)
    return deadline


class TokenSource(Protocol):
    """Where a bearer token comes from.

    ``fetch`` returns a fresh token and its expiry (timezone-aware, or None
    when the credential does not say); it may block, and raises a typed
    :class:`~elelem.errors.StreamError` (an authentication error, or a
    retryable transport error) when it cannot.  ``secrets`` lists the values
    the source itself holds that must never be shown.
    """

    def fetch(self) -> tuple[str, datetime | None]:
        """A fresh token and when it expires."""
        ...

    def secrets(self) -> tuple[str, ...]:
        """Values never to show (a refresh token, a client secret)."""
        ...


class BearerSigner:
    """Adds ``authorization: Bearer <token>`` to each request, the token from
    ``source`` and refreshed before it expires (see the module docstring).

    ``where`` names the credential in errors (``provider vertex: Google
    credentials``); ``header`` and ``scheme`` set how the token is sent.
    """

    def __init__(
        self,
        source: TokenSource,
        *,
        where: str,
        header: str = "authorization",
        scheme: str = "Bearer",
        margin: timedelta = REFRESH_MARGIN,
    ) -> None:
        self._source = source
        self._where = where
        self.header = header
        self.scheme = scheme
        self.margin = margin
        self._token: str | None = None
        self._expiry: datetime | None = None
        self._issued: list[str] = []
        self._lock = threading.Lock()
        self.refreshes = 0
        """How many tokens were fetched (the first one included)."""
        hold(self, BearerSigner.secrets)  # the process's secrets while it lives

    @property
    def expiry(self) -> datetime | None:
        """When the token in hand expires (None: unknown, or no token yet)."""
        return self._expiry

    def due(self, now: datetime) -> bool:
        """Whether a token must be fetched before a request made at ``now``."""
        if self._token is None:
            return True
        return self._expiry is not None and self._expiry - self.margin <= _aware(now)

    def refresh(self, now: datetime, deadline: float | None = None) -> None:
        """Fetch a new token when one is :meth:`due` at ``now`` (blocking),
        by ``deadline`` (a ``time.monotonic()`` value; None: unbounded).

        Two callers racing here fetch once: the second finds the token fresh.
        """
        with self._lock:
            if not self.due(now):
                return
            before = fetch_deadline()
            _fetching.deadline = deadline
            try:
                token, expiry = self._source.fetch()
            finally:
                _fetching.deadline = before
            if deadline is not None and time.monotonic() > deadline:
                raise AuthenticationError(f"{self._where}: no token within the request's deadline")
            if not isinstance(token, str):
                raise AuthenticationError(
                    f"{self._where}: the credential gave a token that is not a string "
                    f"({type(token).__name__})"
                )
            if not token:
                raise AuthenticationError(f"{self._where}: the credential gave no token")
            check_secret(token, f"{self._where}: the access token")
            # Kept by the process past this signer: a page or an export made
            # after its client is gone still shows no echo of it.
            hold_secrets(token, *self._source.secrets())
            self._token = token
            self._expiry = _aware(expiry) if expiry is not None else None
            self._issued.append(token)
            del self._issued[:-MAX_REMEMBERED]
            self.refreshes += 1

    def sign(
        self,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
        now: datetime,
    ) -> dict[str, str]:
        """The authorization header for a request made at ``now`` (the token
        the driver's :meth:`refresh` left; fetched here only if none was)."""
        if self._token is None:
            self.refresh(now)
        assert self._token is not None  # refresh set it or raised
        value = f"{self.scheme} {self._token}" if self.scheme else self._token
        return {self.header: value}

    def secrets(self) -> tuple[str, ...]:
        """Every token held so far, and the source's own secrets."""
        return (*self._issued, *self._source.secrets())

    def __repr__(self) -> str:
        token = REDACTED if self._token else None
        return f"BearerSigner(where={self._where!r}, token={token!r}, expiry={self._expiry!r})"

    __str__ = __repr__


def _aware(moment: datetime) -> datetime:
    # google-auth reports expiry as a naive UTC datetime.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


__all__ = ["MAX_REMEMBERED", "REFRESH_MARGIN", "BearerSigner", "TokenSource", "fetch_deadline"]
