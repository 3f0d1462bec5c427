"""The client's visible retry policy, against the loopback fault server.

Only an attempt that failed before any chunk arrived is sent again; every
retry is a ``Retry`` chunk on the stream, in ``stream.retries`` and in the
assembled response; content that began streaming is never retried.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from elelem import Client, SyncClient
from elelem.errors import (
    ConfigError,
    InvalidRequestError,
    OverloadedError,
    RateLimitError,
    ServerError,
    StreamError,
    TransportError,
)
from elelem.stream import Assembler, ResponseStart, Retry, TextDelta
from elelem.testing.servers import (
    LoopbackServer,
    Reply,
    Reset,
    replay,
    reset_after,
    sse_body,
    status,
)
from elelem.transport import CLIENT_RETRY_POLICY, RetryPolicy, retries_before_content, retry_reason

MODEL = "anthropic:claude-x"

BODY = sse_body(
    [
        (
            "message_start",
            '{"type":"message_start","message":{"id":"msg_1","model":"claude-x",'
            '"usage":{"input_tokens":3,"output_tokens":1}}}',
        ),
        (
            "content_block_start",
            '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}',
        ),
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        (
            "message_delta",
            '{"type":"message_delta","delta":{"stop_reason":"end_turn"},'
            '"usage":{"output_tokens":2}}',
        ),
        ("message_stop", '{"type":"message_stop"}'),
    ]
)
RATE_LIMITED = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
FAST = RetryPolicy(max_attempts=3, base_delay=0.02, max_delay=0.05)


def env_for(url: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-loopback-1",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


async def chunks_and_result(client: Client) -> tuple[list[object], object, float]:
    started = time.monotonic()
    async with client.stream(MODEL, "hi") as stream:
        chunks = [chunk async for chunk in stream]
        result = await stream.final()
    return chunks, result, time.monotonic() - started


def test_a_429_then_200_succeeds_with_one_visible_retry_honouring_retry_after() -> None:
    replies = [status(429, RATE_LIMITED, headers={"retry-after": "1"}), replay(BODY)]

    async def main() -> tuple[list[object], object, float, int]:
        with LoopbackServer(replies) as server:
            async with Client(env=env_for(server.url)) as client:
                chunks, result, took = await chunks_and_result(client)
            return chunks, result, took, len(server.requests)

    chunks, result, took, requests = asyncio.run(main())
    notice = Retry(
        attempt=1,
        delay=1.0,
        reason="rate limit",
        kind="rate-limit",
        status=429,
        message="anthropic 429 rate_limit_error: slow down",
    )
    assert chunks[0] == notice
    assert isinstance(chunks[1], ResponseStart)
    assert [c for c in chunks if isinstance(c, Retry)] == [notice]
    assert requests == 2 and took >= 1.0
    assert result.text == "Hello" and result.retries == (notice,)  # type: ignore[attr-defined]


def test_retry_after_longer_than_the_backoff_sets_the_wait_exactly() -> None:
    replies = [status(429, RATE_LIMITED, headers={"retry-after-ms": "300"}), replay(BODY)]

    async def main() -> tuple[list[Retry], float]:
        with LoopbackServer(replies) as server:
            async with Client(env=env_for(server.url), retry=FAST) as client:
                started = time.monotonic()
                stream = client.stream(MODEL, "hi")
                result = await stream.final()  # the draining path records it too
                took = time.monotonic() - started
        assert result.text == "Hello"
        return list(result.retries), took

    retries, took = asyncio.run(main())
    assert [(r.attempt, r.delay, r.status) for r in retries] == [(1, 0.3, 429)]
    assert took >= 0.3


def test_a_reset_after_the_first_delta_is_not_retried_and_keeps_the_partial() -> None:
    cut = BODY.index(b'"text":"lo"')  # after the first text delta, before the second

    async def main() -> None:
        with LoopbackServer([reset_after(BODY, cut), replay(BODY)]) as server:
            async with Client(env=env_for(server.url), retry=FAST) as client:
                stream = client.stream(MODEL, "hi")
                seen: list[object] = []
                with pytest.raises(TransportError):
                    async with stream:
                        async for chunk in stream:
                            seen.append(chunk)
                assert stream.retries == []
                assert [c.text for c in seen if isinstance(c, TextDelta)] == ["Hel"]
                assert stream.partial().text == "Hel"
            assert len(server.requests) == 1

    asyncio.run(main())


def test_a_reset_before_the_first_event_is_retried() -> None:
    replies = [Reply(200, {"content-type": "text/event-stream"}, (Reset(),)), replay(BODY)]

    async def main() -> None:
        with LoopbackServer(replies) as server:
            async with Client(env=env_for(server.url), retry=FAST) as client:
                chunks, result, _ = await chunks_and_result(client)
            assert len(server.requests) == 2
        (notice,) = [c for c in chunks if isinstance(c, Retry)]
        assert (notice.attempt, notice.kind, notice.status) in {
            (1, "transport", None),
            (1, "transport", 200),
        }
        assert notice.reason == "connection failed" and 0.01 <= notice.delay <= 0.02
        assert result.text == "Hello"  # type: ignore[attr-defined]

    asyncio.run(main())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connect_errors_are_retried_twice_then_raised_with_a_note() -> None:
    url = f"http://127.0.0.1:{closed_port()}"

    async def main() -> None:
        async with Client(env=env_for(url), retry=FAST) as client:
            stream = client.stream(MODEL, "hi")
            seen: list[object] = []
            with pytest.raises(TransportError) as info:
                async for chunk in stream:
                    seen.append(chunk)
            assert [(r.attempt, r.kind) for r in seen] == [(1, "transport"), (2, "transport")]  # type: ignore[attr-defined]
            assert stream.retries == seen
            assert "retry: gave up after 3 attempts" in info.value.__notes__

    asyncio.run(main())


def test_max_retries_zero_turns_it_off() -> None:
    async def main() -> None:
        with LoopbackServer([status(429, RATE_LIMITED), replay(BODY)]) as server:
            async with Client(env=env_for(server.url), max_retries=0) as client:
                assert client.retry_policy is None
                with pytest.raises(RateLimitError):
                    await client.stream(MODEL, "hi").final()
            assert len(server.requests) == 1

    asyncio.run(main())


def test_max_retries_sets_the_number_of_retries() -> None:
    replies = [status(503, b"{}"), status(503, b"{}"), status(503, b"{}"), replay(BODY)]

    async def main() -> None:
        with LoopbackServer(replies) as server:
            async with Client(env=env_for(server.url), retry=FAST, max_retries=3) as client:
                result = await client.stream(MODEL, "hi").final()
            assert len(server.requests) == 4
        assert [(r.attempt, r.status, r.reason) for r in result.retries] == [
            (1, 503, "server error (HTTP 503)"),
            (2, 503, "server error (HTTP 503)"),
            (3, 503, "server error (HTTP 503)"),
        ]

    asyncio.run(main())
    with pytest.raises(ValueError, match="max_retries must be 0 or more"):
        Client(env=env_for("http://127.0.0.1:1"), max_retries=-1)


def test_a_bad_request_is_not_retried() -> None:
    body = b'{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}'

    async def main() -> None:
        with LoopbackServer([status(400, body), replay(BODY)]) as server:
            async with Client(env=env_for(server.url), retry=FAST) as client:
                with pytest.raises(InvalidRequestError):
                    await client.stream(MODEL, "hi").final()
            assert len(server.requests) == 1

    asyncio.run(main())


def test_a_retry_after_past_the_limit_is_raised_at_once_saying_why() -> None:
    replies = [status(429, RATE_LIMITED, headers={"retry-after": "3600"}), replay(BODY)]

    async def main() -> None:
        with LoopbackServer(replies) as server:
            async with Client(env=env_for(server.url)) as client:
                with pytest.raises(RateLimitError) as info:
                    await client.stream(MODEL, "hi").final()
            assert len(server.requests) == 1
        assert info.value.__notes__ == [
            "retry: the server asked to wait 3600s, more than max_retry_after=60s"
        ]

    asyncio.run(main())


def test_the_sync_client_shares_the_policy_and_streams_text() -> None:
    replies = [status(529, b'{"type":"error","error":{"type":"overloaded_error"}}'), replay(BODY)]
    with (
        LoopbackServer(replies) as server,
        SyncClient(env=env_for(server.url), retry=FAST) as client,
        client.stream(MODEL, "hi") as stream,
    ):
        texts = list(stream.text())
        assert [(r.attempt, r.kind, r.status) for r in stream.retries] == [(1, "overloaded", 529)]
        assert stream.final().retries == tuple(stream.retries)
    assert texts == ["Hel", "lo"]


def test_which_errors_the_policy_retries() -> None:
    assert retries_before_content(StreamError("x", status=408))
    assert retries_before_content(InvalidRequestError("conflict", status=409))
    assert retries_before_content(ServerError("x", status=500))
    assert retries_before_content(OverloadedError("x"))  # an error event, no status
    assert retries_before_content(TransportError("reset"))
    assert not retries_before_content(InvalidRequestError("x", status=400))
    assert not retries_before_content(RateLimitError("quota", status=403))
    assert [
        retry_reason(e) for e in (RateLimitError("x", status=429), StreamError("x", status=409))
    ] == [
        "rate limit",
        "stream (HTTP 409)",
    ]
    assert CLIENT_RETRY_POLICY.max_attempts == 3


def test_the_assembler_passes_retry_notices_over_only_before_the_response() -> None:
    notice = Retry(attempt=1, delay=0.5, reason="rate limit", kind="rate-limit", status=429)
    assembler = Assembler()
    assert assembler.feed(notice) == ()
    assert assembler.feed(notice) == ()
    assert assembler.feed(ResponseStart("r1", "m")) == ()  # still the first chunk
    from elelem.errors import ProtocolViolation

    with pytest.raises(ProtocolViolation) as info:
        assembler.feed(notice)
    assert info.value.rule == "retry-after-start"


def test_config_errors_are_never_retried() -> None:
    async def main() -> None:
        async with Client(env={"ELELEM_CONFIG": "/nonexistent/elelem.toml"}) as client:
            with pytest.raises(ConfigError):
                client.stream(MODEL, "hi")

    asyncio.run(main())


def test_a_turn_records_its_retries_in_the_response_record(tmp_path: Path) -> None:
    from elelem import send
    from elelem.conversation import Conversation, SQLiteStore

    replies = [status(429, RATE_LIMITED, headers={"retry-after-ms": "100"}), replay(BODY)]
    store = SQLiteStore(tmp_path / "turns.db")
    try:

        async def main() -> Conversation:
            with LoopbackServer(replies) as server:
                async with Client(env=env_for(server.url), retry=FAST) as client:
                    conv = Conversation.create(store)
                    seen: list[object] = []
                    result = await send(
                        conv, client, MODEL, "hi", on_chunk=lambda c, _: seen.append(c)
                    )
            assert result.text == "Hello"
            assert isinstance(seen[0], Retry)
            return conv

        conv = asyncio.run(main())
        (record,) = [e.body for e in conv.events if e.kind == "response"]
        assert [(r.attempt, r.delay, r.kind, r.status) for r in record.retries] == [
            (1, 0.1, "rate-limit", 429)
        ]
        reopened = Conversation.open(store, conv.id)
        (again,) = [e.body for e in reopened.events if e.kind == "response"]
        assert again.retries == record.retries
    finally:
        store.close()
