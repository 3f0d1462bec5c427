"""The stream-contract suite: every shape that exists × every fault, through the
real driver and the real parser, against the loopback fault-injection server.

Each shape contributes a small hand-written sample (its own wire format, two
text blocks, an error event, an HTTP error body).  Expected contents are
exact: texts are spelled out, and whole blocks (payloads included) must equal
what the shape's sans-IO parser gives when fed the same frames directly, so
the driver is proven to add, drop and reorder nothing.  A new shape module
with a ``SHAPE`` fails the suite until it adds a sample here.
"""

from __future__ import annotations

import asyncio
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

import elelem.shapes
from elelem.errors import (
    IdleTimeoutError,
    IncompleteStreamError,
    MalformedStreamError,
    OverloadedError,
    ProviderStreamError,
    RateLimitError,
    ServerError,
    StreamError,
    TransportError,
    UnsupportedError,
)
from elelem.providers import load_shape
from elelem.stream import AssembledResponse, Assembler, Chunk, Finish
from elelem.testing.servers import (
    LoopbackServer,
    Reply,
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
from elelem.transport import Driver, Endpoint, ResponseStream, SyncResponseStream, Timeouts
from elelem.transport.stream_core import StreamCore
from elelem.vocabulary import Message, ProviderId, TextBlock
from elelem.wire import ModelRequest, Shape

KEY = "sk-contract-0123456789"
REQUEST = ModelRequest(model="m-1", messages=(Message.user("hi"),))
FAST = Timeouts(connect=2, idle=0.4)


@dataclass(frozen=True)
class Sample:
    """One shape's wire sample for the contract."""

    provider: str
    frames: list[tuple[str | None, str]]
    texts: tuple[str, str]
    first_done: int
    """How many frames commit the first text block (no other text block open)."""
    second_open: int
    """How many frames leave the second text block open holding its whole text."""
    error_frame: tuple[str | None, str]
    error_type: type[StreamError]
    error_retryable: bool
    error_bodies: dict[int, bytes]
    """HTTP error bodies in the shape's format, by status."""
    status_types: dict[int, type[StreamError]]
    malformed_retryable: bool
    """The shape's own message for a body cut before its terminal event
    (None: the parser leaves it to the driver)."""
    framing: str = "sse"
    """How the frames travel: SSE events, or NDJSON lines (each frame's data
    one line, its event name unused)."""


def _anthropic() -> Sample:
    def delta(i: int, text: str) -> tuple[str, str]:
        return (
            "content_block_delta",
            f'{{"type":"content_block_delta","index":{i},"delta":{{"type":"text_delta","text":"{text}"}}}}',
        )

    def block(i: int, kind: str) -> tuple[str, str]:
        if kind == "start":
            return (
                "content_block_start",
                f'{{"type":"content_block_start","index":{i},"content_block":{{"type":"text","text":""}}}}',
            )
        return ("content_block_stop", f'{{"type":"content_block_stop","index":{i}}}')

    frames = [
        (
            "message_start",
            '{"type":"message_start","message":{"id":"msg_c1","type":"message","role":"assistant",'
            '"model":"m-1","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}',
        ),
        block(0, "start"),
        delta(0, "Hello, "),
        delta(0, "wörld ✓"),
        block(0, "stop"),
        ("ping", '{"type":"ping"}'),
        block(1, "start"),
        delta(1, "again"),
        block(1, "stop"),
        (
            "message_delta",
            '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}',
        ),
        ("message_stop", '{"type":"message_stop"}'),
    ]
    return Sample(
        provider="anthropic",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=5,
        second_open=8,
        error_frame=(
            "error",
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        ),
        error_type=OverloadedError,
        error_retryable=True,
        error_bodies={
            429: b'{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}',
            500: b'{"type":"error","error":{"type":"api_error","message":"nope"}}',
            529: b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}',
        },
        status_types={429: RateLimitError, 500: ServerError, 529: OverloadedError},
        malformed_retryable=True,
    )


OPENAI_ERROR_BODIES = {
    429: b'{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}',
    500: b'{"error":{"message":"nope","type":"server_error","code":null}}',
    529: b'{"error":{"message":"busy","type":"server_error","code":null}}',
}


def _openai_responses() -> Sample:
    def item(i: int, text: str) -> list[tuple[str, str]]:
        iid = f"msg_{i}"
        part = f'{{"type":"output_text","text":"{text}","annotations":[]}}'
        return [
            (
                "response.output_item.added",
                f'{{"type":"response.output_item.added","output_index":{i},"item":{{"id":"{iid}",'
                f'"type":"message","role":"assistant","status":"in_progress","content":[]}}}}',
            ),
            (
                "response.content_part.added",
                f'{{"type":"response.content_part.added","item_id":"{iid}","output_index":{i},'
                f'"content_index":0,"part":{{"type":"output_text","text":"","annotations":[]}}}}',
            ),
            (
                "response.output_text.delta",
                f'{{"type":"response.output_text.delta","item_id":"{iid}","output_index":{i},'
                f'"content_index":0,"delta":"{text}"}}',
            ),
            (
                "response.output_item.done",
                f'{{"type":"response.output_item.done","output_index":{i},"item":{{"id":"{iid}",'
                f'"type":"message","role":"assistant","status":"completed","content":[{part}]}}}}',
            ),
        ]

    frames = [
        (
            "response.created",
            '{"type":"response.created","response":{"id":"resp_c1","model":"m-1",'
            '"status":"in_progress","output":[]}}',
        ),
        *item(0, "Hello, wörld ✓"),
        *item(1, "again"),
        (
            "response.completed",
            '{"type":"response.completed","response":{"id":"resp_c1","model":"m-1",'
            '"status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":4,'
            '"total_tokens":7}}}',
        ),
    ]
    return Sample(
        provider="openai",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=5,
        second_open=8,
        error_frame=(
            "error",
            '{"type":"error","code":"server_overloaded","message":"busy","param":null}',
        ),
        error_type=OverloadedError,
        error_retryable=True,
        error_bodies=OPENAI_ERROR_BODIES,
        # 529 is overloaded on every shape; any other 5xx is a server error.
        status_types={429: RateLimitError, 500: ServerError, 529: OverloadedError},
        malformed_retryable=True,
    )


def _openai_chat() -> Sample:
    def chunk(content: str, finish: str | None = None) -> tuple[None, str]:
        reason = f'"{finish}"' if finish else "null"
        delta = f'{{"content":"{content}"}}' if content else "{}"
        return (
            None,
            '{"id":"chatcmpl-c1","object":"chat.completion.chunk","created":1,"model":"m-1",'
            f'"choices":[{{"index":0,"delta":{delta},"finish_reason":{reason}}}]}}',
        )

    frames = [
        chunk("Hello, "),
        chunk("wörld ✓"),
        (
            None,
            '{"id":"chatcmpl-c1","object":"chat.completion.chunk","created":1,"model":"m-1",'
            '"choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}',
        ),
        chunk("again"),
        chunk("", "stop"),
        (
            None,
            '{"id":"chatcmpl-c1","object":"chat.completion.chunk","created":1,"model":"m-1",'
            '"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}',
        ),
        (None, "[DONE]"),
    ]
    return Sample(
        provider="deepseek",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=3,
        second_open=4,
        error_frame=(
            None,
            '{"error":{"message":"Overloaded","type":"overloaded_error","code":529}}',
        ),
        error_type=OverloadedError,
        error_retryable=True,
        error_bodies=OPENAI_ERROR_BODIES,
        # Compatible servers (and proxies) do send 529 for overload.
        status_types={429: RateLimitError, 500: ServerError, 529: OverloadedError},
        malformed_retryable=True,
    )


def _gemini() -> Sample:
    def chunk(parts: str, extra: str = "") -> tuple[None, str]:
        return (
            None,
            f'{{"candidates":[{{"content":{{"parts":[{parts}],"role":"model"}},"index":0{extra}}}],'
            '"modelVersion":"m-1","responseId":"g-c1"}',
        )

    frames = [
        chunk('{"text":"Hello, "}'),
        chunk('{"text":"wörld ✓"}'),
        chunk('{"text":"hmm","thought":true}'),
        chunk('{"text":"again"}'),
        (
            None,
            '{"candidates":[{"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,'
            '"candidatesTokenCount":4,"totalTokenCount":7},"modelVersion":"m-1","responseId":"g-c1"}',
        ),
    ]
    return Sample(
        provider="google",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=3,
        second_open=4,
        error_frame=(
            None,
            '{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}',
        ),
        error_type=OverloadedError,
        error_retryable=True,
        error_bodies={
            429: b'{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}',
            500: b'{"error":{"code":500,"message":"nope","status":"INTERNAL"}}',
            529: b'{"error":{"code":529,"message":"busy","status":"INTERNAL"}}',
        },
        # Google never sends 529; any other 5xx is a server error.
        status_types={429: RateLimitError, 500: ServerError, 529: ServerError},
        malformed_retryable=True,
    )


def _ollama_native() -> Sample:
    def line(message: str, extra: str = ',"done":false') -> tuple[None, str]:
        return (
            None,
            f'{{"model":"m-1","created_at":"2026-01-01T00:00:00Z","message":{{"role":"assistant",'
            f"{message}}}{extra}}}",
        )

    frames = [
        line('"content":"Hello, "'),
        line('"content":"wörld ✓"'),
        line('"content":"","thinking":"hmm"'),
        line('"content":"again"'),
        line(
            '"content":""',
            ',"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4',
        ),
    ]
    return Sample(
        provider="ollama-native",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=3,
        second_open=4,
        error_frame=(None, '{"error":"model runner has unexpectedly stopped"}'),
        error_type=ProviderStreamError,
        error_retryable=False,
        error_bodies={429: b'{"error":"slow"}', 500: b'{"error":"nope"}', 529: b'{"error":"busy"}'},
        status_types={429: RateLimitError, 500: ServerError, 529: OverloadedError},
        malformed_retryable=True,
        framing="ndjson",
    )


def _bedrock_converse() -> Sample:
    # Decoded Converse events as SSE data frames, as recordings hold them: the
    # transport does not speak Bedrock's binary event-stream (see the shape).
    def delta(i: int, text: str) -> tuple[None, str]:
        return (
            None,
            f'{{"contentBlockDelta":{{"contentBlockIndex":{i},"delta":{{"text":"{text}"}}}}}}',
        )

    def stop(i: int) -> tuple[None, str]:
        return (None, f'{{"contentBlockStop":{{"contentBlockIndex":{i}}}}}')

    frames = [
        (None, '{"messageStart":{"role":"assistant"}}'),
        delta(0, "Hello, "),
        delta(0, "wörld ✓"),
        stop(0),
        delta(1, "again"),
        stop(1),
        (None, '{"messageStop":{"stopReason":"end_turn"}}'),
        (None, '{"metadata":{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7}}}'),
    ]
    return Sample(
        provider="bedrock",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=4,
        second_open=5,
        error_frame=(None, '{"serviceUnavailableException":{"message":"busy"}}'),
        error_type=OverloadedError,
        error_retryable=True,
        error_bodies={
            429: b'{"message":"slow"}',
            500: b'{"message":"nope"}',
            529: b'{"message":"busy"}',
        },
        # With no x-amzn-ErrorType header the status decides; 529 is no AWS status.
        status_types={429: RateLimitError, 500: ServerError, 529: OverloadedError},
        malformed_retryable=True,
    )


def _gemini_interactions() -> Sample:
    # The Interactions API's stream (https://ai.google.dev/api/interactions,
    # "Streaming"): each SSE data frame names its event_type; text arrives as
    # model_output steps, as in the corpus's recorded chunks.
    iid = "v1_contract"

    def step(i: int, pieces: list[str]) -> list[tuple[None, str]]:
        return [
            (None, f'{{"index":{i},"step":{{"type":"model_output"}},"event_type":"step.start"}}'),
            *[
                (
                    None,
                    f'{{"index":{i},"delta":{{"text":"{piece}","type":"text"}},"event_type":"step.delta"}}',
                )
                for piece in pieces
            ],
            (None, f'{{"index":{i},"event_type":"step.stop"}}'),
        ]

    frames = [
        (
            None,
            f'{{"interaction":{{"id":"{iid}","status":"in_progress","object":"interaction",'
            '"model":"m-1"},"event_type":"interaction.created"}',
        ),
        *step(0, ["Hello, ", "wörld ✓"]),
        *step(1, ["again"]),
        (
            None,
            f'{{"interaction":{{"id":"{iid}","status":"completed","usage":{{"total_tokens":7,'
            '"total_input_tokens":3,"total_output_tokens":4},"object":"interaction","model":"m-1"},'
            '"event_type":"interaction.completed"}',
        ),
    ]
    return Sample(
        provider="google-interactions",
        frames=frames,
        texts=("Hello, wörld ✓", "again"),
        first_done=5,
        second_open=7,
        error_frame=(
            None,
            '{"event_type":"error","error":{"code":"UNAVAILABLE","message":"The model is overloaded."}}',
        ),
        error_type=OverloadedError,
        error_retryable=True,
        error_bodies={
            429: b'{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}',
            500: b'{"error":{"code":500,"message":"nope","status":"INTERNAL"}}',
            529: b'{"error":{"code":529,"message":"busy","status":"INTERNAL"}}',
        },
        status_types={429: RateLimitError, 500: ServerError, 529: ServerError},
        malformed_retryable=True,
    )


SAMPLES = {
    "gemini": _gemini,
    "gemini_interactions": _gemini_interactions,
    "ollama_native": _ollama_native,
    "bedrock_converse": _bedrock_converse,
    "anthropic_messages": _anthropic,
    "openai_responses": _openai_responses,
    "openai_chat": _openai_chat,
}


def existing_shapes() -> list[str]:
    """Every shape module under elelem.shapes that exposes a SHAPE today."""
    names = []
    for info in pkgutil.iter_modules(elelem.shapes.__path__):
        if info.name == "base" or info.name.startswith("_"):
            continue
        try:
            load_shape(info.name)
        except UnsupportedError:
            continue  # a shape still being built, without its SHAPE yet
        names.append(info.name)
    return sorted(names)


SHAPES = existing_shapes()


def test_every_existing_shape_has_a_contract_sample() -> None:
    assert "anthropic_messages" in SHAPES
    missing = [name for name in SHAPES if name not in SAMPLES]
    assert missing == [], f"add a contract sample for shape(s) {missing}"


# -- helpers ------------------------------------------------------------------------


def direct(shape: Shape, sample: Sample, frames: Sequence[tuple[str | None, str]]) -> Assembler:
    """The shape's own sans-IO parse of ``frames``, assembled (no driver)."""
    parser = shape.new_parser(ProviderId(sample.provider), REQUEST)
    assembler = Assembler(ProviderId(sample.provider))
    parser.open(200, {"content-type": "text/event-stream"})
    for event, data in frames:
        for chunk in parser.message(event or "", data):
            assembler.feed(chunk)
    if len(frames) == len(sample.frames) and not assembler.finished:
        for chunk in parser.eof():
            assembler.feed(chunk)
    return assembler


@dataclass
class Outcome:
    chunks: list[Chunk]
    result: AssembledResponse | None
    error: Exception | None
    partial: AssembledResponse
    requests: int


def play(shape_name: str, reply: Reply, timeouts: Timeouts = FAST, *, blocking: bool) -> Outcome:
    """``reply`` iterated then drained through the async stream or, with
    ``blocking``, the blocking one: the two shells over the one core."""
    shape = load_shape(shape_name)
    sample = SAMPLES[shape_name]()
    chunks: list[Chunk] = []
    with LoopbackServer([reply], lifetime=20) as server:
        driver = Driver(timeouts=timeouts)
        endpoint = Endpoint(ProviderId(sample.provider), server.url, api_key=KEY)
        if blocking:
            blocking_stream = driver.sync_stream(endpoint, shape, REQUEST)
            result, error = _read_blocking(blocking_stream, chunks)
            driver.close()
            stream: StreamCore = blocking_stream
        else:
            async_stream = driver.stream(endpoint, shape, REQUEST)
            result, error = asyncio.run(_read_async(driver, async_stream, chunks))
            stream = async_stream
        return Outcome(chunks, result, error, stream.partial(), len(server.requests))


def _read_blocking(
    stream: SyncResponseStream, chunks: list[Chunk]
) -> tuple[AssembledResponse | None, StreamError | None]:
    try:
        with stream:
            chunks.extend(stream)
            return stream.final(), None
    except StreamError as exc:
        return None, exc


async def _read_async(
    driver: Driver, stream: ResponseStream, chunks: list[Chunk]
) -> tuple[AssembledResponse | None, StreamError | None]:
    try:
        async with stream:
            chunks.extend([chunk async for chunk in stream])
            return await stream.final(), None
    except StreamError as exc:
        return None, exc
    finally:
        await driver.aclose()


def texts_of(response: AssembledResponse) -> list[tuple[str, bool]]:
    return [(b.text, b.complete) for b in response.content if isinstance(b, TextBlock)]


def encode(sample: Sample, frames: Sequence[tuple[str | None, str]]) -> bytes:
    """``frames`` in the sample's framing."""
    if sample.framing == "ndjson":
        return "".join(f"{data}\n" for _, data in frames).encode("utf-8")
    return sse_body(frames)


def body_of(sample: Sample) -> bytes:
    return encode(sample, sample.frames)


def ends_of(sample: Sample) -> list[int]:
    """Byte offsets just past each frame of the sample's body."""
    body = body_of(sample)
    if sample.framing == "ndjson":
        ends = [i + 1 for i, byte in enumerate(body) if byte == ord("\n")]
    else:
        ends = frame_ends(body)
    assert len(ends) == len(sample.frames)
    return ends


def first_block_cut(sample: Sample) -> int:
    """Byte offset just past the frames that commit the first block."""
    return ends_of(sample)[sample.first_done - 1]


def finishes(shape: Shape, sample: Sample, count: int) -> bool:
    """Whether the first ``count`` frames, then the end of the body, give finish."""
    parser = shape.new_parser(ProviderId(sample.provider), REQUEST)
    chunks: list[Chunk] = []
    for event, data in sample.frames[:count]:
        chunks.extend(parser.message(event or "", data))
    try:
        chunks.extend(parser.eof())
    except IncompleteStreamError:
        return False
    return any(type(c) is Finish for c in chunks)


def terminal_cut(shape: Shape, sample: Sample) -> int:
    """Byte offset of the frame that makes the stream complete (its terminal event:
    for some shapes the end of the body after a finish reason is enough)."""
    ends = [0, *ends_of(sample)]
    for count in range(1, len(sample.frames) + 1):
        if finishes(shape, sample, count):
            return ends[count - 1]
    raise AssertionError("the sample never finishes")


def assert_keeps_first_block(shape: Shape, sample: Sample, outcome: Outcome) -> None:
    assert texts_of(outcome.partial) == [(sample.texts[0], True)]
    assert outcome.partial.complete is False
    expected = direct(shape, sample, sample.frames[: sample.first_done]).partial()
    assert outcome.partial.content == expected.content


# -- the contract ---------------------------------------------------------------------

per_shape = pytest.mark.parametrize("shape_name", SHAPES)
both_shells = pytest.mark.parametrize("blocking", [False, True], ids=["async", "blocking"])


@per_shape
@both_shells
def test_replay_in_small_pieces_equals_the_direct_parse(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    outcome = play(shape_name, replay(body_of(sample), chunk_size=13), blocking=blocking)
    assert outcome.error is None and outcome.result is not None
    assert texts_of(outcome.result) == [(sample.texts[0], True), (sample.texts[1], True)]
    assert outcome.result == direct(shape, sample, sample.frames).result()
    assert type(outcome.chunks[-1]) is Finish


@per_shape
@both_shells
def test_slow_drip_one_byte_per_write(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    outcome = play(shape_name, slow_drip(body_of(sample)), blocking=blocking)
    assert outcome.result == direct(shape, sample, sample.frames).result()


@per_shape
@both_shells
def test_reset_after_n_bytes(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    cut = first_block_cut(sample)
    outcome = play(shape_name, reset_after(body_of(sample), cut), blocking=blocking)
    assert type(outcome.error) is TransportError and outcome.error.retryable is True
    assert outcome.error.message.startswith(f"the connection broke after {cut} bytes: ")
    assert_keeps_first_block(shape, sample, outcome)


@per_shape
@both_shells
def test_reset_inside_an_open_block_keeps_its_text_incomplete(
    shape_name: str, blocking: bool
) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    cut = ends_of(sample)[sample.second_open - 1]
    outcome = play(shape_name, reset_after(body_of(sample), cut), blocking=blocking)
    assert type(outcome.error) is TransportError and outcome.error.retryable is True
    assert texts_of(outcome.partial) == [(sample.texts[0], True), (sample.texts[1], False)]
    expected = direct(shape, sample, sample.frames[: sample.second_open]).partial()
    assert outcome.partial == expected


@per_shape
@both_shells
def test_stall_past_the_idle_timeout(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    cut = first_block_cut(sample)
    outcome = play(shape_name, stall(body_of(sample), cut, 5), blocking=blocking)
    assert type(outcome.error) is IdleTimeoutError and outcome.error.retryable is True
    assert outcome.error.message == f"the stream sent nothing for 0.4s after {cut} bytes"
    assert_keeps_first_block(shape, sample, outcome)


@per_shape
@both_shells
def test_truncated_before_the_terminal_event(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    cut = terminal_cut(shape, sample)
    outcome = play(shape_name, truncate(body_of(sample), cut), blocking=blocking)
    assert type(outcome.error) is IncompleteStreamError and outcome.error.retryable is True
    # One rule: the driver's message, whatever the shape.
    assert outcome.error.message == f"the stream ended after {cut} bytes without a terminal event"
    assert all(type(c) is not Finish for c in outcome.chunks)
    assert [t for t, _ in texts_of(outcome.partial)] == list(sample.texts)
    assert outcome.partial.complete is False


@per_shape
@both_shells
def test_malformed_frame(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    bad = encode(sample, [(sample.frames[sample.first_done][0], '{"type": oops')])
    outcome = play(
        shape_name, insert(body_of(sample), first_block_cut(sample), bad), blocking=blocking
    )
    assert type(outcome.error) is MalformedStreamError
    assert outcome.error.retryable is sample.malformed_retryable
    assert_keeps_first_block(shape, sample, outcome)


@per_shape
@both_shells
def test_provider_error_event_mid_stream(shape_name: str, blocking: bool) -> None:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    frame = encode(sample, [sample.error_frame])
    outcome = play(
        shape_name, insert(body_of(sample), first_block_cut(sample), frame), blocking=blocking
    )
    assert type(outcome.error) is sample.error_type
    assert outcome.error.retryable is sample.error_retryable
    assert_keeps_first_block(shape, sample, outcome)


@per_shape
@pytest.mark.parametrize("code", [429, 500, 529])
@both_shells
def test_error_statuses_with_retry_after(shape_name: str, code: int, blocking: bool) -> None:
    sample = SAMPLES[shape_name]()
    headers = {"retry-after": "7"} if code == 429 else {}
    body = sample.error_bodies[code]
    outcome = play(shape_name, status(code, body, headers=headers), blocking=blocking)
    assert type(outcome.error) is sample.status_types[code]
    assert outcome.error.status == code and outcome.error.retryable is True
    assert outcome.error.body == body
    assert outcome.error.retry_after == (7.0 if code == 429 else None)
    assert outcome.chunks == [] and outcome.partial.content == ()
    assert KEY not in repr(outcome.error) and KEY not in str(outcome.error)


@per_shape
@both_shells
def test_headers_that_never_arrive(shape_name: str, blocking: bool) -> None:
    outcome = play(shape_name, no_headers(5), blocking=blocking)
    assert type(outcome.error) is IdleTimeoutError and outcome.error.retryable is True
    assert outcome.error.message.endswith(" within 0.4s")
    assert outcome.partial.content == () and outcome.requests == 1
