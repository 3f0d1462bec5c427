"""elelem.Client and elelem.SyncClient against loopback servers, through real shapes."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

import elelem
from elelem import Client, SyncClient
from elelem.errors import ConfigError, IncompleteStreamError, RateLimitError, UnsupportedError
from elelem.providers import ProviderSpec
from elelem.stream import Finish
from elelem.testing.servers import LoopbackServer, frame_ends, replay, sse_body, status, truncate
from elelem.vocabulary import Message, TextBlock

FRAMES = [
    (
        "message_start",
        '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
        '"model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ),
    ("ping", '{"type":"ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi "}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there"}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"again"}}',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":1}'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}',
    ),
    ("message_stop", '{"type":"message_stop"}'),
]
BODY = sse_body(FRAMES)
KEY = "sk-ant-test-000111222"


def env_for(server: LoopbackServer) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": KEY,
        "ELELEM_CONFIG": "/nonexistent/x.toml",
    }


def test_exports() -> None:
    assert elelem.Client is Client and elelem.SyncClient is SyncClient
    assert "Client" in elelem.__all__ and "SyncClient" in elelem.__all__


def test_async_stream_commits_each_block_and_final_assembles() -> None:
    async def main() -> None:
        with LoopbackServer([replay(BODY, chunk_size=7)]) as server:
            async with (
                Client(env=env_for(server)) as client,
                client.stream("anthropic:claude-x", "hello", system="be brief") as stream,
            ):
                commits = [c async for _, c in stream.with_commits() if c]
                response = await stream.final()
        assert commits == [(TextBlock("Hi there"),), (TextBlock("again"),)]
        assert response.content == (TextBlock("Hi there"), TextBlock("again"))
        assert (response.response_id, response.model, response.provider) == (
            "msg_1",
            "claude-x",
            "anthropic",
        )
        assert response.finish_reason == "stop" and response.usage is not None
        assert (response.usage.input, response.usage.output) == (5, 3)
        (request,) = server.requests
        assert request.path == "/v1/messages" and request.headers["x-api-key"] == KEY
        body = msgspec.json.decode(request.body)
        assert body["model"] == "claude-x" and body["stream"] is True
        assert body["messages"][0]["role"] == "user"

    asyncio.run(main())


def test_async_stream_iterates_chunks() -> None:
    async def main() -> None:
        with LoopbackServer([replay(BODY)]) as server:
            async with Client(env=env_for(server)) as client:
                stream = client.stream("anthropic:claude-x", [Message.user("hello")])
                async with stream:
                    chunks = [c async for c in stream]
        assert type(chunks[-1]) is Finish and chunks[-1].reason == "stop"
        assert stream.finished is True

    asyncio.run(main())


def test_truncated_stream_raises_incomplete_and_partial_keeps_open_text() -> None:
    ends = frame_ends(BODY)

    async def main() -> None:
        with LoopbackServer([truncate(BODY, ends[7])]) as server:
            async with Client(env=env_for(server)) as client:
                stream = client.stream("anthropic:claude-x", "hello")
                with pytest.raises(IncompleteStreamError) as info:
                    await stream.final()
        assert info.value.retryable is True
        assert stream.partial().content == (
            TextBlock("Hi there"),
            TextBlock("again", complete=False),
        )

    asyncio.run(main())


def test_http_error_is_classified_by_the_shape() -> None:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'

    async def main() -> None:
        with LoopbackServer([status(429, body, headers={"retry-after": "3"})]) as server:
            async with Client(env=env_for(server), max_retries=0) as client:
                with pytest.raises(RateLimitError) as info:
                    await client.stream("anthropic:claude-x", "hello").final()
        assert info.value.status == 429 and info.value.retry_after == 3.0 and info.value.retryable
        assert info.value.body == body

    asyncio.run(main())


def test_complete_is_non_streaming() -> None:
    body = (
        b'{"id":"msg_2","type":"message","role":"assistant","model":"claude-x",'
        b'"content":[{"type":"text","text":"whole"}],"stop_reason":"end_turn",'
        b'"usage":{"input_tokens":1,"output_tokens":1}}'
    )

    async def main() -> None:
        with LoopbackServer([status(200, body)]) as server:
            async with Client(env=env_for(server)) as client:
                response = await client.complete("anthropic:claude-x", "hello")
        assert response.content == (TextBlock("whole"),) and response.response_id == "msg_2"
        assert "stream" not in msgspec.json.decode(server.requests[0].body) or (
            msgspec.json.decode(server.requests[0].body)["stream"] is False
        )

    asyncio.run(main())


def test_config_and_shape_errors_raise_at_call_time() -> None:
    client = Client(env={"ELELEM_CONFIG": "/nonexistent/x.toml"})
    with pytest.raises(ConfigError) as info:
        client.stream("anthropic:claude-x", "hi")
    assert (
        str(info.value)
        == "provider anthropic needs an API key: run 'elelem keys set anthropic' or set ANTHROPIC_API_KEY"
    )
    client.catalog.add(
        ProviderSpec("future", "not_built_yet", "http://127.0.0.1:9", key_required=False)
    )
    with pytest.raises(UnsupportedError) as unsupported:
        client.stream("future:m1", "hi")
    assert str(unsupported.value) == "shape not_built_yet is not supported yet"
    assert "sk-" not in repr(Client(env={}, api_keys={"anthropic": "sk-secret"}))


def test_sync_client_streams_and_completes_with_the_same_core() -> None:
    with (
        LoopbackServer([replay(BODY), replay(BODY)]) as server,
        SyncClient(env=env_for(server)) as client,
    ):
        with client.stream("anthropic:claude-x", "hello") as stream:
            pairs = list(stream.with_commits())
            response = stream.final()
        assert [c for _, c in pairs if c] == [(TextBlock("Hi there"),), (TextBlock("again"),)]
        assert response.text == "Hi thereagain"
        with client.stream("anthropic:claude-x", "hello") as again:
            chunks = list(again)
        assert type(chunks[-1]) is Finish
        assert len(server.requests) == 2


def test_sync_client_reads_in_the_calling_thread_with_no_loop_or_thread() -> None:
    import threading

    import httpx2

    seen: list[str] = []
    with (
        LoopbackServer([replay(BODY, chunk_size=40), replay(BODY)]) as server,
        httpx2.Client() as http,
    ):
        client = SyncClient(env=env_for(server), http=http)
        with client.stream("anthropic:claude-x", "hello") as stream:
            for chunk in stream:
                seen.append(type(chunk).__name__)
                # Nothing of elelem's runs beside the caller while it reads.
                assert [t.name for t in threading.enumerate() if "elelem" in t.name] == []
                assert threading.current_thread() is threading.main_thread()
            assert stream.stream is stream
            assert (stream.status, stream.request_id, stream.tail) == (200, None, None)
        assert seen[-1] == "Finish" and seen.count("TextDelta") == 3
        client.close()  # the caller's client stays open: it is the caller's to close
        assert client.stream("anthropic:claude-x", "hello").final().text == "Hi thereagain"
    assert http.is_closed
    assert len(server.requests) == 2


def test_sync_client_surfaces_typed_errors() -> None:
    ends = frame_ends(BODY)
    with (
        LoopbackServer([truncate(BODY, ends[3])]) as server,
        SyncClient(env=env_for(server)) as client,
    ):
        stream = client.stream("anthropic:claude-x", "hello")
        with pytest.raises(IncompleteStreamError):
            stream.final()
        assert stream.partial().content == (TextBlock("Hi ", complete=False),)


def test_sync_ctrl_c_closes_the_connection_and_keeps_the_partial() -> None:
    import os
    import signal
    import threading
    import time

    from elelem.testing.servers import stall

    ends = frame_ends(BODY)
    with (
        LoopbackServer([stall(BODY, ends[5], 10)]) as server,
        SyncClient(env=env_for(server)) as client,
    ):
        stream = client.stream("anthropic:claude-x", "hello")
        timer = threading.Timer(0.4, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
        started = time.monotonic()
        timer.start()
        seen = []
        with pytest.raises(KeyboardInterrupt):
            for chunk in stream:
                seen.append(chunk)
        assert time.monotonic() - started < 3
        assert stream.partial().content == (TextBlock("Hi there"),)
        assert stream.stream._response is None
        with pytest.raises(IncompleteStreamError):
            stream.final()


def test_asyncio_task_cancel_closes_the_connection() -> None:
    from elelem.testing.servers import stall

    ends = frame_ends(BODY)

    async def main() -> None:
        with LoopbackServer([stall(BODY, ends[5], 10)]) as server:
            async with Client(env=env_for(server)) as client:
                stream = client.stream("anthropic:claude-x", "hello")
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(stream.final(), 0.4)
                assert stream._response is None
                assert stream.partial().content == (TextBlock("Hi there"),)
                with pytest.raises(IncompleteStreamError) as info:
                    await stream.final()
                assert info.value.message == "the stream was cancelled before it finished"

    asyncio.run(main())


def test_a_program_that_forgets_to_close_a_sync_client_still_exits(tmp_path: object) -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(str(tmp_path)) / "forget.py"
    script.write_text(
        "from elelem import SyncClient\n"
        "from elelem.testing.servers import LoopbackServer, replay\n"
        f"server = LoopbackServer([replay({BODY!r})]).start()\n"
        "env = {'ANTHROPIC_BASE_URL': server.url, 'ANTHROPIC_API_KEY': 'k-0000',"
        " 'ELELEM_CONFIG': '/nonexistent/x.toml'}\n"
        "print(SyncClient(env=env).stream('anthropic:claude-x', 'hi').final().text)\n"
        "server.stop()\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=30, check=False
    )
    assert (done.returncode, done.stdout) == (0, "Hi thereagain\n"), done.stderr
