"""Retries: the client's visible retry policy and the opt-in :func:`retry` helper.

The client (through the driver's :class:`~elelem.transport.ResponseStream`)
retries by :class:`RetryPolicy` (:data:`CLIENT_RETRY_POLICY` by default:
two retries) only an attempt that failed *before any chunk arrived*
(:func:`retries_before_content`: connect errors, 408/409/429/5xx/529, a
connection reset or an end before the first event), and tells every retry
with a :class:`~elelem.stream.Retry` notice on the stream.  Content that has
started streaming is never retried: that is the caller's decision.


:func:`retry` calls an async operation with a request and, when it fails
with a :class:`~elelem.errors.StreamError` marked ``retryable``, waits and
calls it again:

- exponential backoff with jitter: the n-th wait is drawn uniformly from
  ``[cap/2, cap]`` with ``cap = min(max_delay, base_delay * multiplier**(n-1))``;
- a server's ``retry_after`` is honoured (the wait is at least that long); a
  hint longer than ``max_retry_after`` ends the retries at once;
- a bounded budget: at most ``max_attempts`` calls and ``budget`` seconds of
  waiting in total;
- a :class:`~elelem.errors.RecoverableError` is retried at once after its
  patches were applied to the request by the caller's ``apply_patches``;
  each patch is applied at most once, so a recoverable error whose patches
  were all applied already is raised, not retried.

When it stops, the last error is raised unchanged, with a note saying why
the helper gave up.  Retry a whole attempt only: wrap ``final()`` or
``complete()``, or a stream of which no chunk was consumed yet, since the
chunks of a failed attempt are not taken back.
"""

from __future__ import annotations

import random as _random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import anyio

from elelem.errors import MalformedStreamError, Patch, RecoverableError, StreamError

RETRY_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses (beside every 5xx) worth sending the same request again for:
request timeout, conflict (a lock held by a concurrent request), rate limit."""

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How long and how often :func:`retry` may try (seconds; attempts include the first)."""

    max_attempts: int = 4
    base_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 30.0
    budget: float = 120.0
    max_retry_after: float = 60.0

    def backoff(self, retry_number: int, draw: float) -> float:
        """The wait before retry ``retry_number`` (1-based) for a uniform ``draw`` in [0, 1)."""
        cap = min(self.max_delay, self.base_delay * self.multiplier ** (retry_number - 1))
        return cap / 2 + cap / 2 * draw

    def delay(self, retry_number: int, error: StreamError, draw: float) -> float | None:
        """The wait before retry ``retry_number`` after ``error``: the backoff,
        at least the server's ``retry_after``; None (with a note on the error)
        when that hint is longer than ``max_retry_after``."""
        delay = self.backoff(retry_number, draw)
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                error.add_note(
                    f"retry: the server asked to wait {error.retry_after:g}s, "
                    f"more than max_retry_after={self.max_retry_after:g}s"
                )
                return None
            delay = max(delay, error.retry_after)
        return delay


CLIENT_RETRY_POLICY = RetryPolicy(max_attempts=3, base_delay=0.5, max_delay=8.0, budget=60.0)
"""The client's default: two retries, waits from 0.25-0.5 s then 0.5-1 s (or
what ``retry-after`` asks, up to a minute)."""


def retries_before_content(error: StreamError) -> bool:
    """Whether the client's policy retries ``error`` when no chunk had arrived.

    Yes for a status of :data:`RETRY_STATUSES` or any 5xx (529 included),
    and for the errors marked ``retryable`` (connect and transport failures,
    a stream that ended or broke before its first event, rate limits,
    overloads); never for a :class:`~elelem.errors.RecoverableError`, whose
    repair is the turn's to record, for a malformed response (the same
    server would as a rule answer the same way), nor for an error the
    request itself caused (4xx).
    """
    if isinstance(error, RecoverableError | MalformedStreamError):
        return False
    status = error.status
    if status is not None and (status in RETRY_STATUSES or status >= 500):
        return True
    return error.retryable and (status is None or status < 400)


_REASONS = {
    "rate-limit": "rate limit",
    "overloaded": "overloaded",
    "server": "server error",
    "transport": "connection failed",
    "connect-timeout": "no connection",
    "pool-timeout": "no free connection",
    "idle-timeout": "no response",
    "incomplete-stream": "the stream ended early",
}


def retry_reason(error: StreamError) -> str:
    """A short phrase saying why a request is sent again (``rate limit``)."""
    reason = _REASONS.get(error.kind)
    if reason is None:
        reason = error.kind.replace("-", " ")
        if error.status is not None:
            reason += f" (HTTP {error.status})"
    elif error.kind == "server" and error.status is not None:
        reason += f" (HTTP {error.status})"
    return reason


@dataclass(frozen=True)
class RetryAttempt:
    """What :func:`retry` reports to ``on_retry`` before each wait."""

    attempt: int
    """The number of the attempt that failed (1 = the first call)."""
    error: StreamError
    delay: float
    patches: tuple[Patch, ...] = ()


def _patch_key(patch: Patch) -> tuple[str, str]:
    return patch.action, repr(sorted(patch.target.items()))


async def retry(
    call: Callable[[R], Awaitable[T]],
    request: R,
    *,
    policy: RetryPolicy | None = None,
    apply_patches: Callable[[R, Sequence[Patch]], R] | None = None,
    on_retry: Callable[[RetryAttempt], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    random: Callable[[], float] = _random.random,
) -> T:
    """``await call(request)``, retrying retryable stream errors per ``policy``.

    ``apply_patches(request, patches)`` returns the request to send after a
    recoverable error (e.g. messages with a stale signature stripped, as an
    overlay); without it a recoverable error is raised.  ``sleep`` and
    ``random`` are injectable for tests.
    """
    policy = policy or RetryPolicy()
    applied: set[tuple[str, str]] = set()
    waited = 0.0
    attempt = 1
    while True:
        try:
            return await call(request)
        except StreamError as error:
            if not error.retryable:
                raise
            if attempt >= policy.max_attempts:
                error.add_note(f"retry: gave up after {attempt} attempts")
                raise
            patches: tuple[Patch, ...] = ()
            if isinstance(error, RecoverableError):
                patches = tuple(p for p in error.patches if _patch_key(p) not in applied)
                if apply_patches is None:
                    error.add_note("retry: no apply_patches given for a recoverable error")
                    raise
                if not patches:
                    error.add_note("retry: its patches were already applied once")
                    raise
                request = apply_patches(request, patches)
                applied.update(_patch_key(p) for p in patches)
                delay = 0.0  # the request changed; the server is not asking us to wait
            else:
                wait = policy.delay(attempt, error, random())
                if wait is None:
                    raise
                delay = wait
            if waited + delay > policy.budget:
                error.add_note(
                    f"retry: waiting {delay:g}s more would pass the {policy.budget:g}s budget"
                )
                raise
            if on_retry is not None:
                on_retry(RetryAttempt(attempt, error, delay, patches))
            await sleep(delay)
            waited += delay
            attempt += 1


__all__ = [
    "CLIENT_RETRY_POLICY",
    "RETRY_STATUSES",
    "RetryAttempt",
    "RetryPolicy",
    "retries_before_content",
    "retry",
    "retry_reason",
]
