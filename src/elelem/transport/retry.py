"""The opt-in retry helper, separate from the driver (which never retries).

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

from elelem.errors import Patch, RecoverableError, StreamError

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
                delay = policy.backoff(attempt, random())
                if error.retry_after is not None:
                    if error.retry_after > policy.max_retry_after:
                        error.add_note(
                            f"retry: the server asked to wait {error.retry_after:g}s, "
                            f"more than max_retry_after={policy.max_retry_after:g}s"
                        )
                        raise
                    delay = max(delay, error.retry_after)
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


__all__ = ["RetryAttempt", "RetryPolicy", "retry"]
