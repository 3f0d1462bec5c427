"""Bedrock end to end: ``Client.stream("bedrock:…")`` against a loopback server
speaking ``application/vnd.amazon.eventstream``, with the Bedrock API key."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from elelem import Client
from elelem.errors import (
    ConfigError,
    IncompleteStreamError,
    MalformedStreamError,
    ProviderStreamError,
    RateLimitError,
    StreamError,
)
from elelem.providers.catalog import BUILTIN, Catalog
from elelem.providers.config import apply_config
from elelem.recordings import cassettes
from elelem.shapes.bedrock_converse import SHAPE
from elelem.stream import AssembledResponse, Chunk, assemble
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, replay, status
from elelem.vocabulary import ProviderId, TextBlock, Usage
from test_eventstream_framing import encode_message, event, exception, string

RECORDING = (
    "vercel__ai/packages__amazon-bedrock__src____fixtures____amazon-bedrock-reasoning.chunks.txt"
)
KEY = "bedrock-api-key-loopback-1"
MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
EVENTSTREAM = "application/vnd.amazon.eventstream"
BEDROCK = ProviderId("bedrock")


def env_for(server: LoopbackServer) -> dict[str, str]:
    return {
        "ELELEM_BEDROCK_BASE_URL": server.url,
        "AWS_BEARER_TOKEN_BEDROCK": KEY,
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


def stream_final(reply: Reply) -> tuple[AssembledResponse, RecordedRequest]:
    async def main() -> AssembledResponse:
        prompt = "How many r's in strawberry?"
        async with (
            Client(env=env_for(server)) as client,
            client.stream(f"bedrock:{MODEL}", prompt) as s,
        ):
            return await s.final()

    with LoopbackServer([reply]) as server:
        result = asyncio.run(main())
    (request,) = server.requests
    return result, request


def stream_error(reply: Reply) -> tuple[StreamError, AssembledResponse]:
    async def main() -> tuple[StreamError, AssembledResponse]:
        async with Client(env=env_for(server)) as client:
            stream = client.stream(f"bedrock:{MODEL}", "q")
            async with stream:
                with pytest.raises(StreamError) as info:
                    await stream.final()
                return info.value, stream.partial()

    with LoopbackServer([reply]) as server:
        return asyncio.run(main())


def recorded_events(corpus: Path) -> tuple[list[tuple[str, dict[str, object]]], AssembledResponse]:
    """The recording's decoded events as (type, body), and what the SSE path
    (the way ``elelem inspect`` reads it) assembles from them."""
    path = corpus / RECORDING
    if not path.exists():
        pytest.skip("the Bedrock recording is not in this corpus")
    (interaction,) = cassettes.load(path).interactions
    parser = SHAPE.new_parser(BEDROCK)
    chunks: list[Chunk] = []
    events: list[tuple[str, dict[str, object]]] = []
    for frame in cassettes.sse_frames(interaction.response.body):
        ((name, body),) = json.loads(frame.data).items()
        events.append((name, body))
        chunks.extend(parser.message(frame.event, frame.data))
    chunks.extend(parser.eof())
    return events, assemble(chunks, BEDROCK)


def wire(events: list[tuple[str, dict[str, object]]]) -> bytes:
    """The events as Bedrock sends them: the type in ``:event-type``, the body alone."""
    return b"".join(event(name, json.dumps(body)) for name, body in events)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_recorded_stream_over_eventstream_equals_the_sse_path(
    corpus: Path, chunk_size: int | None
) -> None:
    events, expected = recorded_events(corpus)
    result, request = stream_final(
        replay(wire(events), content_type=EVENTSTREAM, chunk_size=chunk_size)
    )
    assert result == expected
    assert result.complete is True
    answer = result.blocks[1]
    assert isinstance(answer, TextBlock)
    assert answer.text == 'There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y'
    assert result.usage == Usage(
        input=51,
        output=94,
        raw={"inputTokens": 51, "outputTokens": 94, "serverToolUsage": {}, "totalTokens": 145},
    )
    assert result.finish is not None and result.finish.reason == "stop"
    # The model id is one path segment: its ':' percent-encoded, its '.' kept.
    assert (request.method, request.path) == (
        "POST",
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
    )
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == EVENTSTREAM
    body = json.loads(request.body)
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "How many r's in strawberry?"}]}
    ]


def test_the_decoded_events_served_as_sse_still_parse(corpus: Path) -> None:
    # A proxy (or a replayed recording) serving decoded events as SSE.
    events, expected = recorded_events(corpus)
    body = b"".join(
        b"data: " + json.dumps({name: value}).encode() + b"\n\n" for name, value in events
    )
    result, _ = stream_final(replay(body, content_type="text/event-stream"))
    assert result == expected


START = [
    event("messageStart", '{"role":"assistant"}'),
    event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"Hel"}}'),
]


def test_an_exception_message_is_the_shapes_typed_error() -> None:
    body = b"".join(START) + exception("throttlingException", '{"message":"Too many requests"}')
    error, partial = stream_error(replay(body, content_type=EVENTSTREAM))
    assert isinstance(error, RateLimitError)
    assert (error.message, error.provider_type, error.provider_message, error.retryable) == (
        "bedrock stream ThrottlingException: Too many requests",
        "ThrottlingException",
        "Too many requests",
        True,
    )
    assert partial.blocks == (TextBlock(text="Hel", complete=False),)


def test_an_exception_nobody_modelled_is_still_an_error() -> None:
    body = b"".join(START) + exception("quotaPondException", '{"message":"new"}')
    error, _ = stream_error(replay(body, content_type=EVENTSTREAM))
    assert type(error) is ProviderStreamError
    assert error.message == "bedrock stream QuotaPondException: new"


def test_an_error_message_is_a_provider_error() -> None:
    error_message = encode_message(
        [
            string(":message-type", "error"),
            string(":error-code", "InternalFailure"),
            string(":error-message", "boom"),
        ],
        b"",
    )
    error, partial = stream_error(replay(b"".join(START) + error_message, content_type=EVENTSTREAM))
    assert type(error) is ProviderStreamError
    assert error.message == "event-stream error InternalFailure: boom"
    assert partial.blocks == (TextBlock(text="Hel", complete=False),)


def test_a_corrupt_message_is_a_malformed_stream() -> None:
    bad = bytearray(START[1])
    bad[-1] ^= 0xFF
    error, partial = stream_error(replay(START[0] + bytes(bad), content_type=EVENTSTREAM))
    assert isinstance(error, MalformedStreamError) and error.retryable is True
    assert error.message.startswith(
        f"event-stream message 2 (at byte {len(START[0])}): message CRC mismatch"
    )
    assert partial.blocks == ()


def test_a_cut_off_message_is_an_unterminated_frame() -> None:
    body = b"".join(START)
    error, _ = stream_error(replay(body[:-10], content_type=EVENTSTREAM))
    assert isinstance(error, IncompleteStreamError)
    assert error.message == (
        f"the stream ended after {len(body) - 10} bytes without a terminal event; "
        f"the last {len(START[1]) - 10} bytes were an unterminated frame"
    )


# -- the catalog entry -----------------------------------------------------------


def test_bedrock_provider_region_and_key() -> None:
    spec, model = Catalog().resolve(f"bedrock:{MODEL}")
    assert (spec.shape, model) == ("bedrock_converse", MODEL)
    assert spec.resolve_base_url({}) == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert (
        spec.resolve_base_url({"AWS_DEFAULT_REGION": "eu-west-1"})
        == "https://bedrock-runtime.eu-west-1.amazonaws.com"
    )
    assert (
        spec.resolve_base_url({"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "eu-west-1"})
        == "https://bedrock-runtime.us-west-2.amazonaws.com"
    )
    endpoint = spec.endpoint({"AWS_BEARER_TOKEN_BEDROCK": KEY})
    assert endpoint.request_headers({}) == {"authorization": f"Bearer {KEY}"}
    assert KEY not in repr(endpoint)
    with pytest.raises(ConfigError) as info:
        spec.resolve_base_url({"AWS_REGION": "evil.example/x"})
    assert str(info.value) == (
        "AWS_REGION must be a region name such as us-east-1 (lower-case letters, digits and '-')"
    )
    with pytest.raises(ConfigError) as info:
        spec.endpoint({})
    assert str(info.value) == (
        "provider bedrock needs an API key: run 'elelem keys set bedrock' or set AWS_BEARER_TOKEN_BEDROCK, or "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (optionally AWS_SESSION_TOKEN)"
    )
    assert "bedrock" in [s.name for s in BUILTIN]


def test_config_file_sets_the_default_region() -> None:
    catalog = Catalog()
    apply_config(catalog, {"providers": {"bedrock": {"region": "eu-central-1"}}}, origin="c.toml")
    spec = catalog.get("bedrock")
    assert spec.resolve_base_url({}) == "https://bedrock-runtime.eu-central-1.amazonaws.com"
    assert (
        spec.resolve_base_url({"AWS_REGION": "ap-south-1"})
        == "https://bedrock-runtime.ap-south-1.amazonaws.com"
    )
    with pytest.raises(ConfigError) as info:
        apply_config(catalog, {"providers": {"bedrock": {"region": 1}}}, origin="c.toml")
    assert str(info.value) == "c.toml: [providers.bedrock]: region must be a string"


def complete(reply: Reply) -> tuple[AssembledResponse, RecordedRequest]:
    async def main() -> AssembledResponse:
        async with Client(env=env_for(server)) as client:
            return await client.complete(f"bedrock:{MODEL}", "q")

    with LoopbackServer([reply]) as server:
        result = asyncio.run(main())
    (request,) = server.requests
    return result, request


CONVERSE_BODY = {
    "output": {"message": {"role": "assistant", "content": [{"text": "Hello"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4},
}


def test_complete_posts_to_converse_and_maps_the_json_body() -> None:
    result, request = complete(status(200, json.dumps(CONVERSE_BODY).encode()))
    assert request.path == "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    assert (request.headers["authorization"], request.headers["accept"]) == (
        f"Bearer {KEY}",
        "application/json",
    )
    assert result.blocks == (TextBlock(text="Hello"),)
    assert result.usage == Usage(
        input=3, output=1, raw={"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}
    )
    assert result.finish_reason == "stop"


def test_a_body_that_is_not_utf8_is_malformed_not_replaced() -> None:
    body = json.dumps(CONVERSE_BODY).encode().replace(b"Hello", b"Hel\xfflo")

    async def main() -> None:
        async with Client(env=env_for(server)) as client:
            await client.complete(f"bedrock:{MODEL}", "q")

    with LoopbackServer([status(200, body)]) as server, pytest.raises(MalformedStreamError) as info:
        asyncio.run(main())
    at = body.index(b"\xff")
    assert info.value.message == (
        f"bedrock response body is not valid UTF-8 (byte 0xff at offset {at})"
    )
    assert info.value.retryable is True


def test_an_http_error_is_classified_before_any_framing() -> None:
    reply = status(
        429,
        b'{"message":"Too many tokens, please wait."}',
        headers={"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/"},
    )

    async def main() -> None:
        async with (
            Client(env=env_for(server), max_retries=0) as client,
            client.stream(f"bedrock:{MODEL}", "q") as stream,
        ):
            await stream.final()

    with LoopbackServer([reply]) as server, pytest.raises(RateLimitError) as info:
        asyncio.run(main())
    error = info.value
    assert (error.status, error.provider_type, error.message, error.retryable) == (
        429,
        "ThrottlingException",
        "bedrock 429 ThrottlingException: Too many tokens, please wait.",
        True,
    )
