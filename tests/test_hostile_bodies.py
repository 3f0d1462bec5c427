"""Hostile response bodies and servers: every one bounded, with a typed error
naming the limit, or finished as it should (issue #13).  Servers run on
127.0.0.1; bombs are built small (a few MiB of compressed zeros) since the
guards trip within their first megabytes."""

from __future__ import annotations

import asyncio
import gzip
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import base_env, run
from elelem.errors import (
    DeadlineExceededError,
    IncompleteStreamError,
    LimitExceededError,
    MalformedStreamError,
    OverloadedError,
    StreamError,
)
from elelem.providers import load_shape
from elelem.stream import AssembledResponse
from elelem.testing.servers import LoopbackServer, Pause, Reply, Send
from elelem.transport import Driver, Endpoint, ResponseStream, SyncResponseStream, Timeouts
from elelem.transport.framing import SSEDecoder
from elelem.transport.limits import Limits
from elelem.transport.stream_core import StreamCore
from elelem.vocabulary import ProviderId, TextBlock
from test_contract_stream import REQUEST, SAMPLES, encode, first_block_cut

FAST = Timeouts(connect=2, idle=2)
MiB = 1024 * 1024
BLOCKING = pytest.mark.parametrize("blocking", [False, True], ids=["async", "blocking"])


def _play(
    shape_name: str,
    reply: Reply,
    *,
    timeouts: Timeouts = FAST,
    limits: Limits | None = None,
    blocking: bool = False,
) -> tuple[AssembledResponse | None, Exception | None, StreamCore, float]:
    """``reply`` read to its end by the async stream, or with ``blocking`` the
    blocking one: the result or the error, the stream, and how long it took."""
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    with LoopbackServer([reply], lifetime=30) as server:
        driver = Driver(timeouts=timeouts, limits=limits)
        endpoint = Endpoint(ProviderId(sample.provider), server.url, api_key="sk-test-0123")
        started = time.monotonic()
        if blocking:
            blocking_stream = driver.sync_stream(endpoint, shape, REQUEST)
            result, error = _final_blocking(blocking_stream)
            driver.close()
            stream: StreamCore = blocking_stream
        else:
            async_stream = driver.stream(endpoint, shape, REQUEST)
            result, error = asyncio.run(_final_async(driver, async_stream))
            stream = async_stream
        return result, error, stream, time.monotonic() - started


def _final_blocking(
    stream: SyncResponseStream,
) -> tuple[AssembledResponse | None, Exception | None]:
    try:
        with stream:
            return stream.final(), None
    except StreamError as exc:
        return None, exc


async def _final_async(
    driver: Driver, stream: ResponseStream
) -> tuple[AssembledResponse | None, Exception | None]:
    try:
        async with stream:
            return await stream.final(), None
    except StreamError as exc:
        return None, exc
    finally:
        await driver.aclose()


def _gzip_reply(plain: bytes, content_type: str) -> Reply:
    body = gzip.compress(plain, compresslevel=1)
    headers = {"content-type": content_type, "content-encoding": "gzip"}
    return Reply(200, headers, (Send(body),))


@BLOCKING
def test_a_gzip_json_bomb_to_a_streaming_request_is_stopped_by_the_ratio_guard(
    blocking: bool,
) -> None:
    # A JSON content type switches to reading the whole body: the guard
    # stops it within its first megabytes.
    _, error, stream, _ = _play(
        "anthropic_messages", _gzip_reply(b" " * (16 * MiB), "application/json"), blocking=blocking
    )
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value, error.retryable) == ("Limits.decompression_ratio", 200, False)
    assert error.message.startswith("the response body decompressed to ")
    assert error.message.endswith(" (limit Limits.decompression_ratio = 200)")
    assert stream.bytes_received < 16 * MiB


@BLOCKING
def test_a_gzip_newline_bomb_stream_is_stopped_by_the_ratio_guard(blocking: bool) -> None:
    _, error, _, _ = _play(
        "gemini", _gzip_reply(b"\n" * (16 * MiB), "text/event-stream"), blocking=blocking
    )
    assert isinstance(error, LimitExceededError)
    assert error.limit == "Limits.decompression_ratio"


@BLOCKING
def test_a_plain_body_past_the_body_limit(blocking: bool) -> None:
    limits = Limits(body=1 * MiB)
    reply = Reply(200, {"content-type": "application/json"}, (Send(b" " * (2 * MiB)),))
    _, error, _, _ = _play("openai_chat", reply, limits=limits, blocking=blocking)
    assert isinstance(error, LimitExceededError)
    assert error.message == (f"the response body passed {MiB} bytes (limit Limits.body = {MiB})")


@BLOCKING
def test_a_stream_past_the_body_limit(blocking: bool) -> None:
    limits = Limits(body=64 * 1024)
    comment = b": keep-alive\n\n" * 10_000  # 140 kB of comments, no event
    reply = Reply(200, {"content-type": "text/event-stream"}, (Send(comment),))
    _, error, _, _ = _play("anthropic_messages", reply, limits=limits, blocking=blocking)
    assert isinstance(error, LimitExceededError) and error.limit == "Limits.body"


@BLOCKING
def test_a_frame_past_the_frame_limit(blocking: bool) -> None:
    limits = Limits(frame=1024)
    frame = b"data: " + b"x" * 4096 + b"\n\n"
    reply = Reply(200, {"content-type": "text/event-stream"}, (Send(frame),))
    _, error, _, _ = _play("openai_chat", reply, limits=limits, blocking=blocking)
    assert isinstance(error, LimitExceededError)
    assert (
        error.message == "an event of the response exceeds 1024 bytes (limit Limits.frame = 1024)"
    )


def test_newlines_alone_cost_one_pass() -> None:
    # 64 MiB of blank lines decode to nothing, in one C-speed pass per read.
    decoder = SSEDecoder()
    blank = b"\n" * MiB
    assert all(decoder.feed(blank) == [] for _ in range(64))
    assert decoder.feed(b"data: x\n\n")[0].data == "x"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"data: a", b"data: b", b"event: e", b": c", b"\n", b"\r", b"\r\n"]),
        max_size=40,
    )
)
def test_squeezing_blank_lines_changes_no_event(pieces: list[bytes]) -> None:
    body = b"".join(pieces)
    whole, dripped = SSEDecoder(), SSEDecoder()
    one_go = whole.feed(body) + whole.close()
    byte_by_byte = [e for i in range(len(body)) for e in dripped.feed(body[i : i + 1])]
    assert one_go == byte_by_byte + dripped.close()


# -- streams end at their terminal event ------------------------------------------------


@BLOCKING
def test_gemini_keep_open_after_the_final_chunk_finishes_complete(blocking: bool) -> None:
    sample = SAMPLES["gemini"]()
    body = encode(sample, sample.frames)
    reply = Reply(200, {"content-type": "text/event-stream"}, (Send(body), Pause(10)))
    result, error, stream, took = _play(
        "gemini", reply, timeouts=Timeouts(connect=2, idle=1), blocking=blocking
    )
    assert error is None and result is not None
    assert (result.finish_reason, took < 1) == ("stop", True)
    texts = [(b.text, b.complete) for b in result.content if isinstance(b, TextBlock)]
    assert texts == [("Hello, wörld ✓", True), ("again", True)]
    assert stream.tail == "no end of the body within 0.25 s after the terminal event"


@BLOCKING
def test_gemini_data_after_the_final_chunk_is_ignored_and_noted(blocking: bool) -> None:
    sample = SAMPLES["gemini"]()
    after = b'data: {"candidates":[{"content":{"parts":[{"text":"late"}]},"index":0}]}\n\n'
    body = encode(sample, sample.frames)
    reply = Reply(
        200, {"content-type": "text/event-stream"}, (Send(body), Pause(0.05), Send(after))
    )
    result, error, stream, _ = _play("gemini", reply, blocking=blocking)
    assert error is None and result is not None
    assert [b.text for b in result.content if isinstance(b, TextBlock)] == [
        "Hello, wörld ✓",
        "again",
    ]
    assert stream.tail == f"{len(after)} bytes after the terminal event, not read"


@BLOCKING
def test_keep_alive_comments_cannot_outlast_the_total_deadline(blocking: bool) -> None:
    ping = b": ping\n\n"
    script = tuple(a for _ in range(100) for a in (Send(ping), Pause(0.05)))
    reply = Reply(200, {"content-type": "text/event-stream"}, script)
    timeouts = Timeouts(connect=2, idle=1, total=0.6)
    _, error, _, took = _play("anthropic_messages", reply, timeouts=timeouts, blocking=blocking)
    assert isinstance(error, DeadlineExceededError)
    assert (error.kind, error.retryable) == ("deadline", False)
    assert error.message.startswith("the response did not finish within 0.6s (the total timeout)")
    assert 0.5 < took < 1.5


@BLOCKING
def test_headers_that_never_come_meet_the_total_deadline(blocking: bool) -> None:
    reply = Reply(send_headers=False, script=(Pause(5),))
    _, error, _, took = _play(
        "openai_chat", reply, timeouts=Timeouts(connect=2, idle=10, total=0.4), blocking=blocking
    )
    assert isinstance(error, DeadlineExceededError) and took < 1.5
    assert error.message == "the response did not finish within 0.4s (the total timeout)"


# -- inspect reads a bounded amount ------------------------------------------------------


def test_inspect_reads_at_most_its_limit(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    zero = run(env, "inspect", "--json", "--max-bytes", "4096", "/dev/zero")
    assert (zero.returncode, zero.stdout, zero.stderr) == (
        2,
        "",
        "elelem: /dev/zero: cannot read: not a regular file (a character device)\n",
    )
    big = tmp_path / "big.json"
    big.write_bytes(b"{}" + b" " * 4095)
    refused = run(env, "inspect", "--max-bytes", "4096", str(big))
    assert (refused.returncode, refused.stderr) == (
        2,
        f"elelem: {big}: larger than the read limit of 4096 bytes (--max-bytes)\n",
    )


@pytest.mark.parametrize("suffix", [".json", ".chunks.txt"])
def test_inspect_of_deeply_nested_json_is_one_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = run(base_env(tmp_path), "inspect", "--json", str(path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"elelem: {path}: ")
    assert "Traceback" not in result.stderr


# -- the unified rules (the skeleton's; checked here across every shape) ---------------


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
@BLOCKING
def test_a_frame_cut_short_is_the_same_incomplete_stream_everywhere(
    shape_name: str, blocking: bool
) -> None:
    # Ollama's cut last NDJSON line was a malformed stream, elsewhere incomplete.
    sample = SAMPLES[shape_name]()
    body = encode(sample, sample.frames)
    cut = first_block_cut(sample) - 3  # inside the frame that ends the first block
    kind = "application/x-ndjson" if sample.framing == "ndjson" else "text/event-stream"
    reply = Reply(200, {"content-type": kind}, (Send(body[:cut]),))
    _, error, _, _ = _play(shape_name, reply, blocking=blocking)
    assert type(error) is IncompleteStreamError and error.retryable, (shape_name, error)


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
def test_529_and_a_truncated_json_body_classify_alike_everywhere(shape_name: str) -> None:
    sample = SAMPLES[shape_name]()
    shape = load_shape(shape_name)
    overloaded = shape.classify_error(529, {}, b'{"error":{"message":"busy"}}')
    assert isinstance(overloaded, OverloadedError) and overloaded.retryable
    with pytest.raises(MalformedStreamError) as caught:
        shape.parse_response(b'{"id":"x","cho', ProviderId(sample.provider), REQUEST)
    assert caught.value.retryable is True
