"""The driver against real loopback servers, with a small test-only shape.

The toy shape below is deliberately tiny but honest: it is sans-IO, raises
typed errors for error events and malformed frames, and classifies HTTP
errors like a real shape.  The contract suite (test_contract_stream.py) runs
the real shapes through the same faults.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence

import anyio
import msgspec
import pytest

from elelem.errors import (
    AuthenticationError,
    ConnectTimeoutError,
    IdleTimeoutError,
    IncompleteStreamError,
    InvalidRequestError,
    MalformedStreamError,
    OverloadedError,
    ProtocolViolation,
    RateLimitError,
    ServerError,
    StreamError,
    TransportError,
)
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    ResponseStart,
    TextDelta,
)
from elelem.testing.servers import (
    LoopbackServer,
    Reply,
    Send,
    frame_ends,
    insert,
    no_headers,
    replay,
    reset_after,
    slow_drip,
    sse_body,
    stall,
    status,
    truncate,
)
from elelem.transport import Driver, Endpoint, Timeouts
from elelem.vocabulary import Message, ProviderId, TextBlock
from elelem.wire import EncodedRequest, Framing, ModelRequest

# -- the toy shape ---------------------------------------------------------------


class ToyParser:
    """Frames are JSON objects: start / text / end / finish / error."""

    def __init__(self) -> None:
        self.opened: set[int] = set()
        self.seen_open: tuple[int, dict[str, str]] | None = None

    def open(self, status: int, headers: Mapping[str, str]) -> Sequence[Chunk]:
        self.seen_open = (status, dict(headers))
        return ()

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        try:
            frame = msgspec.json.decode(data)
        except msgspec.DecodeError:
            raise MalformedStreamError(f"toy: frame {event!r} is not JSON") from None
        kind = frame.get("type")
        if kind == "start":
            return [ResponseStart(frame["id"], frame["model"])]
        if kind == "text":
            index = frame["index"]
            out: list[Chunk] = []
            if index not in self.opened:
                self.opened.add(index)
                out.append(BlockStart(index, "text"))
            out.append(TextDelta(index, frame["text"]))
            return out
        if kind == "end":
            self.opened.discard(frame["index"])
            return [BlockEnd(frame["index"])]
        if kind == "finish":
            return [Finish(frame["reason"])]
        if kind == "error":
            if frame["kind"] == "overloaded":
                raise OverloadedError(frame["message"], provider_type="overloaded")
            raise StreamError(frame["message"], provider_type=frame["kind"])
        raise MalformedStreamError(f"toy: unknown frame type {kind!r}")

    def eof(self) -> Sequence[Chunk]:
        return ()


class ToyShape:
    """A minimal shape over SSE (or NDJSON) used to test the driver alone."""

    name = "toy"

    def __init__(self, framing: Framing = "sse") -> None:
        self.framing: Framing = framing
        self.parsers: list[ToyParser] = []

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        return EncodedRequest(
            path="/v1/toy",
            body={
                "model": request.model,
                "messages": [m.text for m in request.messages],
                "stream": stream,
            },
            headers={"toy-version": "1"},
            dropped=("toy dropped nothing real",),
        )

    def new_parser(self, provider: ProviderId, request: ModelRequest | None = None) -> ToyParser:
        parser = ToyParser()
        self.parsers.append(parser)
        return parser

    def parse_response(
        self, body: bytes, provider: ProviderId, request: ModelRequest | None = None
    ) -> list[Chunk]:
        try:
            obj = msgspec.json.decode(body)
        except msgspec.DecodeError:
            raise MalformedStreamError("toy: response body is not JSON") from None
        return [
            ResponseStart(obj["id"], obj["model"]),
            BlockStart(0, "text"),
            TextDelta(0, obj["text"]),
            BlockEnd(0),
            Finish(obj["reason"]),
        ]

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        cls: type[StreamError]
        if status == 401:
            cls = AuthenticationError
        elif status == 429:
            cls = RateLimitError
        elif status == 529:
            cls = OverloadedError
        elif status >= 500:
            cls = ServerError
        else:
            cls = InvalidRequestError
        return cls(f"toy: HTTP {status}", status=status, body=body)


def toy_frames(*texts: str) -> list[tuple[str | None, str]]:
    frames: list[tuple[str | None, str]] = [("start", '{"type":"start","id":"r1","model":"toy-1"}')]
    for i, text in enumerate(texts):
        frames.append(
            ("delta", msgspec.json.encode({"type": "text", "index": i, "text": text}).decode())
        )
        frames.append(("delta", f'{{"type":"end","index":{i}}}'))
    frames.append(("finish", '{"type":"finish","reason":"stop"}'))
    return frames


TOY_BODY = sse_body(toy_frames("Hello, ", "wörld ✓"))
KEY = "sk-toy-SECRET-0123456789"
REQUEST = ModelRequest(model="toy-1", messages=(Message.user("hi"),))


def endpoint(server: LoopbackServer, key: str | None = KEY) -> Endpoint:
    return Endpoint(
        ProviderId("toy"), server.url, api_key=key, auth_header="x-api-key", auth_scheme=""
    )


async def run(
    reply: Reply | list[Reply],
    *,
    timeouts: Timeouts | None = None,
    shape: ToyShape | None = None,
) -> tuple[list[Chunk], object, LoopbackServer]:
    """Stream one request; return (chunks seen, final result or error, server)."""
    replies = reply if isinstance(reply, list) else [reply]
    shape = shape or ToyShape()
    with LoopbackServer(replies, lifetime=20) as server:
        driver = Driver(timeouts=timeouts or Timeouts(connect=2, idle=2))
        try:
            stream = driver.stream(endpoint(server), shape, REQUEST)
            seen: list[Chunk] = []
            outcome: object
            try:
                async with stream:
                    async for chunk in stream:
                        seen.append(chunk)
                    outcome = await stream.final()
            except Exception as exc:  # noqa: BLE001 - the test asserts on what was raised
                outcome = exc
            return seen, (outcome, stream), server
        finally:
            await driver.aclose()


def go(coro: object) -> object:
    return anyio.run(lambda: coro)  # type: ignore[arg-type,return-value]


# -- happy paths -----------------------------------------------------------------


def test_stream_assembles_and_sends_request_with_auth_only_in_headers() -> None:
    async def main() -> None:
        seen, (result, stream), server = await run(replay(TOY_BODY))
        assert [type(c).__name__ for c in seen] == [
            "ResponseStart",
            "BlockStart",
            "TextDelta",
            "BlockEnd",
            "BlockStart",
            "TextDelta",
            "BlockEnd",
            "Finish",
        ]
        assert result.content == (TextBlock("Hello, "), TextBlock("wörld ✓"))  # type: ignore[attr-defined]
        assert result.response_id == "r1" and result.finish_reason == "stop"  # type: ignore[attr-defined]
        (req,) = server.requests
        assert req.method == "POST" and req.path == "/v1/toy"
        assert req.headers["x-api-key"] == KEY
        assert req.headers["toy-version"] == "1"
        assert req.headers["content-type"] == "application/json"
        assert msgspec.json.decode(req.body) == {
            "model": "toy-1",
            "messages": ["hi"],
            "stream": True,
        }
        assert KEY not in repr(stream) and KEY not in repr(endpoint(server))
        assert stream.dropped == ("toy dropped nothing real",)  # type: ignore[attr-defined]

    asyncio.run(main())


def test_with_commits_reports_each_block_as_it_commits() -> None:
    async def main() -> None:
        with LoopbackServer([replay(TOY_BODY)], lifetime=20) as server:
            driver = Driver()
            async with driver.stream(endpoint(server), ToyShape(), REQUEST) as stream:
                pairs = [
                    (type(c).__name__, committed) async for c, committed in stream.with_commits()
                ]
            await driver.aclose()
        commits = [(name, committed) for name, committed in pairs if committed]
        assert commits == [
            ("BlockEnd", (TextBlock("Hello, "),)),
            ("BlockEnd", (TextBlock("wörld ✓"),)),
        ]
        assert stream.last_committed == ()  # the finish committed nothing

    asyncio.run(main())


def test_slow_drip_one_byte_per_write_gives_the_same_result() -> None:
    async def main() -> None:
        _, (result, _), _ = await run(slow_drip(TOY_BODY))
        assert result.text == "Hello, wörld ✓"  # type: ignore[attr-defined]

    asyncio.run(main())


def test_chunked_transfer_encoding_is_read() -> None:
    async def main() -> None:
        reply = Reply(
            200,
            {"content-type": "text/event-stream"},
            (Send(TOY_BODY[:7]), Send(TOY_BODY[7:])),
            chunked=True,
        )
        _, (result, _), _ = await run(reply)
        assert result.text == "Hello, wörld ✓"  # type: ignore[attr-defined]

    asyncio.run(main())


def test_ndjson_framing() -> None:
    lines = b"".join(data.encode() + b"\n" for _, data in toy_frames("a", "b"))

    async def main() -> None:
        _, (result, _), server = await run(
            replay(lines, content_type="application/x-ndjson", chunk_size=5),
            shape=ToyShape("ndjson"),
        )
        assert result.content == (TextBlock("a"), TextBlock("b"))  # type: ignore[attr-defined]
        assert server.requests[0].headers["accept"] == "application/x-ndjson"

    asyncio.run(main())


def test_parser_sees_status_and_headers_on_open() -> None:
    async def main() -> None:
        shape = ToyShape()
        await run(replay(TOY_BODY), shape=shape)
        status_code, headers = shape.parsers[0].seen_open  # type: ignore[misc]
        assert status_code == 200 and headers["content-type"] == "text/event-stream"

    asyncio.run(main())


def test_complete_uses_parse_response() -> None:
    async def main() -> None:
        body = b'{"id":"r9","model":"toy-1","text":"whole","reason":"stop"}'
        with LoopbackServer([status(200, body)], lifetime=20) as server:
            driver = Driver()
            result = await driver.complete(endpoint(server), ToyShape(), REQUEST)
            await driver.aclose()
        assert result.content == (TextBlock("whole"),) and result.response_id == "r9"
        assert msgspec.json.decode(server.requests[0].body)["stream"] is False
        assert server.requests[0].headers["accept"] == "application/json"

    asyncio.run(main())


def test_json_body_to_a_stream_request_goes_through_parse_response() -> None:
    async def main() -> None:
        body = b'{"id":"r9","model":"toy-1","text":"whole","reason":"stop"}'
        _, (result, _), _ = await run(status(200, body))
        assert result.content == (TextBlock("whole"),)  # type: ignore[attr-defined]

    asyncio.run(main())


# -- faults ------------------------------------------------------------------------


def test_truncated_stream_is_incomplete_and_retryable_and_partial_keeps_commits() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        # Cut after the first block ended and the second block's delta.
        _seen, (error, stream), _ = await run(truncate(TOY_BODY, ends[3]))
        assert type(error) is IncompleteStreamError
        assert error.retryable is True
        assert error.message == f"the stream ended after {ends[3]} bytes without a terminal event"
        partial = stream.partial()  # type: ignore[attr-defined]
        assert partial.complete is False
        assert partial.content == (TextBlock("Hello, "), TextBlock("wörld ✓", complete=False))

    asyncio.run(main())


def test_truncation_inside_a_frame_reports_the_unterminated_bytes() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        _, (error, _), _ = await run(truncate(TOY_BODY, ends[1] + 10))
        assert type(error) is IncompleteStreamError
        assert error.message == (
            f"the stream ended after {ends[1] + 10} bytes without a terminal event; "
            "the last 10 bytes were an unterminated frame"
        )

    asyncio.run(main())


def test_reset_mid_stream_is_a_retryable_transport_error() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        _seen, (error, stream), _ = await run(reset_after(TOY_BODY, ends[2] + 3))
        assert type(error) is TransportError and error.retryable is True
        assert error.message.startswith(f"the connection broke after {ends[2] + 3} bytes: ")
        assert stream.partial().content == (TextBlock("Hello, "),)  # type: ignore[attr-defined]
        assert KEY not in error.message

    asyncio.run(main())


def test_stall_longer_than_idle_timeout_is_idle_timeout() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        started = time.monotonic()
        _, (error, stream), _ = await run(
            stall(TOY_BODY, ends[2], 5), timeouts=Timeouts(connect=2, idle=0.3)
        )
        assert type(error) is IdleTimeoutError and error.retryable is True
        assert error.message == f"the stream sent nothing for 0.3s after {ends[2]} bytes"
        assert time.monotonic() - started < 2
        assert stream.partial().content == (TextBlock("Hello, "),)  # type: ignore[attr-defined]

    asyncio.run(main())


def test_stall_shorter_than_idle_timeout_is_fine_and_zero_disables_it() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        _, (result, _), _ = await run(
            stall(TOY_BODY, ends[3], 0.4), timeouts=Timeouts(connect=2, idle=0)
        )
        assert result.text == "Hello, wörld ✓"  # type: ignore[attr-defined]

    asyncio.run(main())


def test_headers_that_never_arrive_hit_the_idle_timeout() -> None:
    async def main() -> None:
        _, (error, _), _ = await run(no_headers(5), timeouts=Timeouts(connect=2, idle=0.3))
        assert type(error) is IdleTimeoutError
        assert error.message.startswith("no response headers from 127.0.0.1:")
        assert error.message.endswith(" within 0.3s")

    asyncio.run(main())


def test_malformed_frame_is_a_typed_error_after_earlier_chunks() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        seen, (error, stream), _ = await run(
            insert(TOY_BODY, ends[2], b"event: delta\ndata: {oops\n\n")
        )
        assert type(error) is MalformedStreamError and error.retryable is True
        assert error.message == "toy: frame 'delta' is not JSON"
        assert [type(c).__name__ for c in seen] == [
            "ResponseStart",
            "BlockStart",
            "TextDelta",
            "BlockEnd",
        ]
        assert stream.partial().content == (TextBlock("Hello, "),)  # type: ignore[attr-defined]

    asyncio.run(main())


def test_error_event_mid_stream_raises_the_parsers_typed_error() -> None:
    ends = frame_ends(TOY_BODY)
    frame = b'event: error\ndata: {"type":"error","kind":"overloaded","message":"busy"}\n\n'

    async def main() -> None:
        _, (error, _), _ = await run(insert(TOY_BODY, ends[2], frame))
        assert type(error) is OverloadedError and error.retryable is True
        assert error.message == "busy"

    asyncio.run(main())


@pytest.mark.parametrize(
    ("code", "cls", "retryable"),
    [
        (429, RateLimitError, True),
        (500, ServerError, True),
        (529, OverloadedError, True),
        (401, AuthenticationError, False),
    ],
)
def test_http_errors_go_through_the_classifier_with_body_and_retry_after(
    code: int, cls: type[StreamError], retryable: bool
) -> None:
    body = b'{"error":"no", "echo":"' + KEY.encode() + b'"}'

    async def main() -> None:
        _, (error, _), _ = await run(
            status(code, body, headers={"retry-after": "7", "request-id": "req_1"})
        )
        assert type(error) is cls
        assert error.status == code and error.retryable is retryable
        assert error.retry_after == 7.0 and error.request_id == "req_1"
        assert error.body == b'{"error":"no", "echo":"[redacted]"}'
        assert KEY not in repr(error) and KEY not in str(error)

    asyncio.run(main())


def test_error_body_is_size_bounded() -> None:
    async def main() -> None:
        _, (error, _), _ = await run(status(500, b"x" * 200_000))
        assert type(error) is ServerError and error.body == b"x" * 65536

    asyncio.run(main())


def test_connection_refused_is_a_retryable_transport_error() -> None:
    async def main() -> None:
        server = LoopbackServer([])
        port = server.port
        server.stop()  # nothing listens on the port any more
        driver = Driver(timeouts=Timeouts(connect=1, idle=1))
        ep = Endpoint(ProviderId("toy"), f"http://127.0.0.1:{port}", api_key=KEY)
        with pytest.raises(TransportError) as info:
            await driver.stream(ep, ToyShape(), REQUEST).final()
        await driver.aclose()
        assert type(info.value) is TransportError and info.value.retryable is True
        assert info.value.message.startswith(
            f"request to 127.0.0.1:{port} failed before a response: ConnectError"
        )

    asyncio.run(main())


def test_connect_timeout_is_typed() -> None:
    import socket

    # A loopback listener whose accept queue is full: further SYNs are dropped,
    # so the connection never completes (no packet leaves 127.0.0.1).
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.05)

    async def main() -> None:
        driver = Driver(timeouts=Timeouts(connect=0.2, idle=1))
        ep = Endpoint(ProviderId("toy"), f"http://127.0.0.1:{port}", api_key=KEY)
        with pytest.raises(ConnectTimeoutError) as info:
            await driver.stream(ep, ToyShape(), REQUEST).final()
        await driver.aclose()
        assert info.value.retryable is True and info.value.kind == "connect-timeout"
        assert info.value.message == f"no connection to 127.0.0.1:{port} within 0.2s"

    try:
        asyncio.run(main())
    finally:
        for sock in (*fillers, listener):
            sock.close()


def test_cancelling_closes_connection_promptly_and_partial_survives() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        with LoopbackServer([stall(TOY_BODY, ends[2], 10)], lifetime=20) as server:
            driver = Driver(timeouts=Timeouts(connect=2, idle=30))
            stream = driver.stream(endpoint(server), ToyShape(), REQUEST)
            seen: list[Chunk] = []

            async def consume() -> None:
                async for chunk in stream:
                    seen.append(chunk)

            started = time.monotonic()
            with anyio.move_on_after(0.5):
                await consume()
            assert time.monotonic() - started < 1.5
            assert len(seen) == 4
            assert stream.partial().content == (TextBlock("Hello, "),)
            assert stream._response is None  # the connection was closed at once
            with pytest.raises(IncompleteStreamError):
                await stream.final()
            await driver.aclose()

    asyncio.run(main())


def test_breaking_out_and_closing_then_final_raises_incomplete() -> None:
    async def main() -> None:
        with LoopbackServer([stall(TOY_BODY, frame_ends(TOY_BODY)[2], 10)], lifetime=20) as server:
            driver = Driver()
            async with driver.stream(endpoint(server), ToyShape(), REQUEST) as stream:
                async for _ in stream:
                    break
            with pytest.raises(IncompleteStreamError) as info:
                await stream.final()
            assert info.value.message == "the stream was closed before the response finished"
            await driver.aclose()

    asyncio.run(main())


def test_chunks_after_finish_are_never_read() -> None:
    body = TOY_BODY + b'event: delta\ndata: {"type":"text","index":5,"text":"late"}\n\n'

    async def main() -> None:
        seen, (result, _), _ = await run(replay(body))
        assert type(seen[-1]) is Finish and result.text == "Hello, wörld ✓"  # type: ignore[attr-defined]

    asyncio.run(main())


def test_finish_then_reset_is_benign() -> None:
    async def main() -> None:
        _, (result, _), _ = await run(reset_after(TOY_BODY, len(TOY_BODY)))
        assert result.finish_reason == "stop"  # type: ignore[attr-defined]

    asyncio.run(main())


def test_grammar_breach_from_the_parser_surfaces_as_protocol_violation() -> None:
    bad = sse_body(
        [("start", '{"type":"start","id":"r1","model":"m"}'), ("end", '{"type":"end","index":3}')]
    )

    async def main() -> None:
        seen, (error, _), _ = await run(replay(bad))
        assert type(error) is ProtocolViolation and error.rule == "delta-to-missing-block"
        assert [type(c).__name__ for c in seen] == ["ResponseStart"]

    asyncio.run(main())


def test_undecodable_content_encoding_is_a_malformed_stream() -> None:
    reply = Reply(
        200,
        {"content-type": "text/event-stream", "content-encoding": "gzip"},
        (Send(b"this is not gzip at all"),),
    )

    async def main() -> None:
        _, (error, _), _ = await run(reply)
        assert type(error) is MalformedStreamError
        assert error.message.startswith("the response body could not be decoded after 0 bytes: ")

    asyncio.run(main())


def test_gzip_encoded_stream_is_decoded() -> None:
    import gzip

    reply = Reply(
        200,
        {"content-type": "text/event-stream", "content-encoding": "gzip"},
        (Send(gzip.compress(TOY_BODY)),),
    )

    async def main() -> None:
        _, (result, _), _ = await run(reply)
        assert result.text == "Hello, wörld ✓"  # type: ignore[attr-defined]

    asyncio.run(main())


def test_invalid_url_is_a_config_error() -> None:
    from elelem.errors import ConfigError

    async def main() -> None:
        driver = Driver()
        ep = Endpoint(ProviderId("toy"), "http://127.0.0.1:abc", api_key=KEY)
        with pytest.raises(ConfigError) as info:
            await driver.stream(ep, ToyShape(), REQUEST).final()
        await driver.aclose()
        assert info.value.args[0].startswith("provider toy: the request URL is invalid: ")
        assert KEY not in str(info.value)

    asyncio.run(main())


def test_a_framing_fault_hands_out_the_frames_before_it() -> None:
    ends = frame_ends(TOY_BODY)
    body = TOY_BODY[: ends[2]] + b"data: \xff\n\n" + TOY_BODY[ends[2] :]

    async def main() -> None:
        seen, (error, stream), _ = await run(replay(body))  # one write: one piece
        assert type(error) is MalformedStreamError
        assert error.message.startswith("response body is not valid UTF-8 (byte 0xff")
        assert [type(c).__name__ for c in seen] == [
            "ResponseStart",
            "BlockStart",
            "TextDelta",
            "BlockEnd",
        ]
        assert stream.partial().content == (TextBlock("Hello, "),)  # type: ignore[attr-defined]

    asyncio.run(main())


def test_complete_faults_are_typed_too() -> None:
    body = b'{"id":"r9","model":"toy-1","text":"whole","reason":"stop"}'
    json_type = "application/json"

    async def one(reply: Reply, timeouts: Timeouts | None = None) -> Exception:
        with LoopbackServer([reply], lifetime=20) as server:
            driver = Driver(timeouts=timeouts or Timeouts(connect=2, idle=0.3))
            try:
                await driver.complete(endpoint(server), ToyShape(), REQUEST)
            except Exception as exc:  # noqa: BLE001 - the test asserts on what was raised
                return exc
            finally:
                await driver.aclose()
        raise AssertionError("complete() did not fail")

    async def main() -> None:
        reset = await one(reset_after(body, 10, content_type=json_type))
        assert type(reset) is TransportError and reset.retryable is True
        assert reset.message.startswith("the connection broke while reading the response body: ")
        stalled = await one(stall(body, 10, 5, content_type=json_type))
        assert type(stalled) is IdleTimeoutError
        assert stalled.message == "the stream sent nothing for 0.3s while reading the response body"
        cut = await one(truncate(body, 10, content_type=json_type))
        assert type(cut) is MalformedStreamError and cut.message == "toy: response body is not JSON"

    asyncio.run(main())


# -- final() drains without the queue of pairs ------------------------------------


async def drain(reply: Reply, *, iterate: bool) -> tuple[object, object, object, int]:
    """One request consumed either chunk by chunk then ``final()``, or by
    ``final()`` alone; returns (result or (error type, message), partial
    content, last_committed, pairs left queued)."""
    with LoopbackServer([reply], lifetime=20) as server:
        driver = Driver(timeouts=Timeouts(connect=2, idle=2))
        stream = driver.stream(endpoint(server), ToyShape(), REQUEST)
        outcome: object
        try:
            async with stream:
                if iterate:
                    async for _ in stream:
                        pass
                outcome = await stream.final()
        except Exception as exc:  # noqa: BLE001 - compared between the two ways
            outcome = (type(exc), str(exc))
        finally:
            await driver.aclose()
        return outcome, stream.partial().content, stream.last_committed, len(stream._pending)


def _faults() -> list[Reply]:
    ends = frame_ends(TOY_BODY)
    breach = b'event: end\ndata: {"type":"end","index":7}\n\n'
    return [
        replay(TOY_BODY),
        replay(TOY_BODY + b'event: delta\ndata: {"type":"text","index":5,"text":"x"}\n\n'),
        reset_after(TOY_BODY, len(TOY_BODY)),
        slow_drip(TOY_BODY),
        truncate(TOY_BODY, ends[3]),
        truncate(TOY_BODY, ends[1] + 10),
        reset_after(TOY_BODY, ends[2] + 3),
        insert(TOY_BODY, ends[2], b"event: delta\ndata: {oops\n\n"),
        insert(TOY_BODY, ends[2], breach),
        insert(TOY_BODY, ends[2], b"data: \xff\n\n"),
        replay(TOY_BODY[: ends[0]]),
    ]


@pytest.mark.parametrize("index", range(len(_faults())))
def test_final_alone_ends_exactly_as_iterating_then_final(index: int) -> None:
    async def main() -> None:
        iterated = await drain(_faults()[index], iterate=True)
        drained = await drain(_faults()[index], iterate=False)
        assert drained == iterated
        assert drained[3] == 0  # nothing was queued while draining

    asyncio.run(main())


def test_final_alone_result_and_last_committed() -> None:
    async def main() -> None:
        outcome, partial, last, queued = await drain(replay(TOY_BODY), iterate=False)
        assert outcome.content == (TextBlock("Hello, "), TextBlock("wörld ✓"))  # type: ignore[attr-defined]
        assert partial == (TextBlock("Hello, "), TextBlock("wörld ✓"))
        assert last == () and queued == 0  # the finish committed nothing
        ends = frame_ends(TOY_BODY)
        outcome, partial, last, _ = await drain(truncate(TOY_BODY, ends[3]), iterate=False)
        assert outcome == (
            IncompleteStreamError,
            f"the stream ended after {ends[3]} bytes without a terminal event",
        )
        assert partial == (TextBlock("Hello, "), TextBlock("wörld ✓", complete=False))
        assert last == ()  # the last chunk fed was a delta

    asyncio.run(main())


def test_final_after_some_pairs_keeps_the_last_queued_commit() -> None:
    async def main() -> None:
        with LoopbackServer([replay(TOY_BODY)], lifetime=20) as server:
            driver = Driver()
            async with driver.stream(endpoint(server), ToyShape(), REQUEST) as stream:
                first = await stream.step()
                assert first is not None and type(first[0]) is ResponseStart
                # Whatever was queued but never taken was already fed: final()
                # drops the pairs and leaves last_committed as draining would.
                result = await stream.final()
            await driver.aclose()
        assert result.text == "Hello, wörld ✓"
        assert stream.last_committed == () and len(stream._pending) == 0
        assert await stream.step() is None

    asyncio.run(main())


def test_cancelling_final_closes_the_connection_and_partial_survives() -> None:
    ends = frame_ends(TOY_BODY)

    async def main() -> None:
        with LoopbackServer([stall(TOY_BODY, ends[2], 10)], lifetime=20) as server:
            driver = Driver(timeouts=Timeouts(connect=2, idle=30))
            stream = driver.stream(endpoint(server), ToyShape(), REQUEST)
            started = time.monotonic()
            with anyio.move_on_after(0.5):
                await stream.final()
            assert time.monotonic() - started < 1.5
            assert stream._response is None  # closed at once
            assert stream.partial().content == (TextBlock("Hello, "),)
            assert stream.last_committed == (TextBlock("Hello, "),)
            with pytest.raises(IncompleteStreamError) as info:
                await stream.final()
            assert info.value.message == "the stream was cancelled before it finished"
            await driver.aclose()

    asyncio.run(main())
