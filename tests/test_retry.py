"""The opt-in retry helper: backoff with jitter, retry-after, budget, patches once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from elelem import Client
from elelem.errors import (
    AuthenticationError,
    OverloadedError,
    Patch,
    RateLimitError,
    RecoverableError,
    ServerError,
    StreamError,
)
from elelem.testing.servers import LoopbackServer, replay, sse_body, status
from elelem.transport import RetryAttempt, RetryPolicy, retry


class Script:
    """An operation that fails with the given errors, then returns 'ok'."""

    def __init__(self, *errors: StreamError) -> None:
        self.errors = list(errors)
        self.requests: list[object] = []

    async def __call__(self, request: object) -> str:
        self.requests.append(request)
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Clock:
    def __init__(self) -> None:
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def run(op: Script, request: object = "req", **kwargs: object) -> tuple[object, Clock]:
    clock = Clock()
    result = asyncio.run(retry(op, request, sleep=clock.sleep, random=lambda: 0.5, **kwargs))  # type: ignore[arg-type]
    return result, clock


def test_backoff_is_exponential_with_jitter_and_capped() -> None:
    policy = RetryPolicy(base_delay=1, multiplier=2, max_delay=5)
    assert [policy.backoff(n, 0.0) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 2.5]
    assert [policy.backoff(n, 0.999) for n in (1, 2, 3, 4)] == pytest.approx(
        [0.9995, 1.999, 3.998, 4.9975]
    )


def test_retryable_errors_are_retried_with_backoff() -> None:
    op = Script(ServerError("a"), OverloadedError("b"))
    seen: list[RetryAttempt] = []
    result, clock = run(op, on_retry=seen.append, policy=RetryPolicy(base_delay=1, multiplier=2))
    assert result == "ok" and op.requests == ["req", "req", "req"]
    assert clock.slept == [0.75, 1.5]
    assert [(a.attempt, a.error.kind, a.delay) for a in seen] == [
        (1, "server", 0.75),
        (2, "overloaded", 1.5),
    ]


def test_non_retryable_errors_are_raised_at_once() -> None:
    op = Script(AuthenticationError("no"))
    with pytest.raises(AuthenticationError):
        run(op)
    assert len(op.requests) == 1


def test_retry_after_is_honoured_and_too_long_a_hint_gives_up() -> None:
    result, clock = run(Script(RateLimitError("slow", retry_after=7.0)))
    assert result == "ok" and clock.slept == [7.0]
    op = Script(RateLimitError("slow", retry_after=600.0))
    with pytest.raises(RateLimitError) as info:
        run(op)
    assert info.value.__notes__ == [
        "retry: the server asked to wait 600s, more than max_retry_after=60s"
    ]
    assert len(op.requests) == 1


def test_attempts_and_budget_are_bounded() -> None:
    op = Script(*(ServerError(str(i)) for i in range(10)))
    with pytest.raises(ServerError) as info:
        run(op, policy=RetryPolicy(max_attempts=3))
    assert info.value.message == "2" and info.value.__notes__ == ["retry: gave up after 3 attempts"]
    op = Script(*(RateLimitError(str(i), retry_after=30.0) for i in range(10)))
    with pytest.raises(RateLimitError) as budget:
        run(op, policy=RetryPolicy(max_attempts=10, budget=70))
    assert len(op.requests) == 3
    assert budget.value.__notes__ == ["retry: waiting 30s more would pass the 70s budget"]


def strip(request: object, patches: Sequence[Patch]) -> object:
    return (request, tuple(p.action for p in patches))


def test_recoverable_patches_are_applied_once_each() -> None:
    p1 = Patch("strip-signature", {"message": 1, "block": 0})
    p2 = Patch("strip-reasoning", {"message": 3})
    op = Script(
        RecoverableError("stale", patches=[p1]), RecoverableError("stale", patches=[p1, p2])
    )
    seen: list[RetryAttempt] = []
    result, clock = run(op, apply_patches=strip, on_retry=seen.append)
    assert result == "ok"
    assert op.requests == [
        "req",
        ("req", ("strip-signature",)),
        (("req", ("strip-signature",)), ("strip-reasoning",)),
    ]
    assert clock.slept == [0.0, 0.0]
    assert [a.patches for a in seen] == [(p1,), (p2,)]


def test_recoverable_with_only_applied_patches_is_raised() -> None:
    p1 = Patch("strip-signature", {"message": 1, "block": 0})
    op = Script(RecoverableError("stale", patches=[p1]), RecoverableError("again", patches=[p1]))
    with pytest.raises(RecoverableError) as info:
        run(op, apply_patches=strip)
    assert info.value.message == "again" and len(op.requests) == 2
    assert info.value.__notes__ == ["retry: its patches were already applied once"]


def test_recoverable_without_a_patch_function_is_raised() -> None:
    op = Script(RecoverableError("stale", patches=[Patch("strip-signature")]))
    with pytest.raises(RecoverableError):
        run(op)
    assert len(op.requests) == 1


def test_retry_around_a_real_stream_against_loopback() -> None:
    ok = sse_body(
        [
            (
                "message_start",
                '{"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}',
            ),
            (
                "content_block_start",
                '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
            ),
            (
                "content_block_delta",
                '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}',
            ),
            ("content_block_stop", '{"type":"content_block_stop","index":0}'),
            (
                "message_delta",
                '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}',
            ),
            ("message_stop", '{"type":"message_stop"}'),
        ]
    )
    overloaded = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'

    async def main() -> None:
        clock = Clock()
        with LoopbackServer(
            [status(529, overloaded), status(429, b"{}", headers={"retry-after": "2"}), replay(ok)]
        ) as server:
            env = {
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "k-000",
                "ELELEM_CONFIG": "/nonexistent",
            }
            async with Client(env=env, max_retries=0) as client:

                async def attempt(prompt: str) -> str:
                    return (await client.stream("anthropic:c", prompt).final()).text

                text = await retry(attempt, "hi", sleep=clock.sleep, random=lambda: 0.0)
        assert text == "done" and len(server.requests) == 3
        assert clock.slept == [0.25, 2.0]

    asyncio.run(main())
