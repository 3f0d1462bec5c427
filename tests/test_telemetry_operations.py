"""The GenAI span of each kind of request that is not a chat: embeddings,
batch calls and the speech endpoints, checked with the OpenTelemetry SDK's
in-memory exporter against loopback stand-ins (wire bodies from the
providers' documented examples, as in test_embeddings, test_batches and
test_audio)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from elelem import Client, SyncClient
from elelem.errors import RateLimitError
from elelem.telemetry import GenAITracer
from elelem.testing.servers import LoopbackServer, Reply, status
from test_audio import VOICE, wav
from test_batches import RESPONSE, jsonl, openai_batch
from test_embeddings import b64

CONFIG = "/nonexistent/elelem.toml"


def answer(data: Any) -> Reply:
    return status(200, json.dumps(data).encode())


def embedding(count: int, tokens: int) -> Reply:
    data = [{"object": "embedding", "index": i, "embedding": b64([0.5, 1.0])} for i in range(count)]
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return answer(
        {"object": "list", "data": data, "model": "text-embedding-3-small", "usage": usage}
    )


UPLOADED = {"id": "file-abc123", "object": "file", "bytes": 120, "created_at": 1677610602,
            "filename": "batch.jsonl", "purpose": "batch"}  # fmt: skip
LINE = {"id": "batch_req_123", "custom_id": "r1",
        "response": {"status_code": 200, "request_id": "req_123", "body": RESPONSE},
        "error": None}  # fmt: skip


def exporter_and_tracer() -> tuple[InMemorySpanExporter, GenAITracer]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # capture_content on: the non-chat spans still record no content.
    return exporter, GenAITracer(provider, capture_content=True)


def env_for(server: LoopbackServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "sk-o",
        "ELELEM_CONFIG": CONFIG,
    }


def named(spans: tuple[ReadableSpan, ...]) -> list[tuple[str, str]]:
    return [(s.name, (s.attributes or {})["gen_ai.operation.name"]) for s in spans]  # type: ignore[misc]


def test_each_blocking_call_is_a_span_named_by_its_operation() -> None:
    exporter, tracer = exporter_and_tracer()
    replies = [
        embedding(2, 8),
        answer(UPLOADED),
        answer(openai_batch("validating")),
        answer(openai_batch("completed", "file-cvaTdG")),
        jsonl(LINE),
        status(200, wav(0.25), content_type="audio/wav"),
        answer({"text": "Hello there."}),
    ]
    with LoopbackServer(replies) as server:
        with SyncClient(env=env_for(server), hooks=[tracer], max_retries=0) as client:
            client.embed("openai:text-embedding-3-small", ["hello", "world"])
            record = client.batch("openai:gpt-4o-mini", ["Capital of France?"])
            client.batch_results(client.batch_status(record))
            client.speak("openai:gpt-4o-mini-tts", "Hello there.", format="wav")
            client.transcribe("openai:gpt-4o-transcribe", VOICE)
        port = int(server.url.rsplit(":", 1)[1])
    spans = exporter.get_finished_spans()
    assert named(spans) == [
        ("embeddings text-embedding-3-small", "embeddings"),
        # the upload and the batch: two requests of one submission
        ("batch gpt-4o-mini", "batch"),
        ("batch gpt-4o-mini", "batch"),
        ("batch_status gpt-4o-mini", "batch_status"),
        ("batch_results gpt-4o-mini", "batch_results"),
        ("speak gpt-4o-mini-tts", "speak"),
        ("transcribe gpt-4o-transcribe", "transcribe"),
    ]
    assert all(s.kind is SpanKind.CLIENT for s in spans)
    assert dict(spans[0].attributes or {}) == {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "text-embedding-3-small",
        "server.address": "127.0.0.1",
        "server.port": port,
        "gen_ai.response.model": "text-embedding-3-small",
        "gen_ai.usage.input_tokens": 8,
        "elelem.retries": 0,
    }
    assert dict(spans[5].attributes or {}) == {
        "gen_ai.operation.name": "speak",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini-tts",
        "server.address": "127.0.0.1",
        "server.port": port,
        "elelem.retries": 0,
    }


def test_async_embeddings_span_per_request_and_a_failed_one_is_marked() -> None:
    exporter, tracer = exporter_and_tracer()
    limited = status(429, b'{"error":{"message":"slow down","type":"rate_limit"}}')

    async def main(server: LoopbackServer) -> None:
        async with Client(env=env_for(server), hooks=[tracer], max_retries=0) as client:
            await client.embed("openai:text-embedding-3-small", "one")
            with pytest.raises(RateLimitError):
                await client.embed("openai:text-embedding-3-small", "two")

    with LoopbackServer([embedding(1, 3), limited]) as server:
        anyio.run(main, server)
    done, failed = exporter.get_finished_spans()
    assert named((done, failed)) == [("embeddings text-embedding-3-small", "embeddings")] * 2
    assert (done.attributes or {})["gen_ai.usage.input_tokens"] == 3
    assert (failed.status.status_code, (failed.attributes or {})["error.type"]) == (
        StatusCode.ERROR,
        "rate-limit",
    )


def test_streamed_speech_is_a_speak_span_async_and_blocking() -> None:
    from test_speech_stream import DONE, PIECES, delta

    exporter, tracer = exporter_and_tracer()
    body = delta(PIECES[0]) + DONE
    replies = [status(200, body, content_type="text/event-stream")] * 2

    async def main(server: LoopbackServer) -> None:
        async with Client(env=env_for(server), hooks=[tracer], max_retries=0) as client:
            speech = client.speak_stream("openai:gpt-4o-mini-tts", "Hi.", stream_format="sse")
            async with speech:
                await speech.final()

    with LoopbackServer(replies) as server:
        anyio.run(main, server)
        with SyncClient(env=env_for(server), hooks=[tracer], max_retries=0) as client:
            speech = client.speak_stream("openai:gpt-4o-mini-tts", "Hi.", stream_format="sse")
            with speech:
                speech.final()
    spans = exporter.get_finished_spans()
    assert named(spans) == [("speak gpt-4o-mini-tts", "speak")] * 2
    assert [(s.attributes or {})["gen_ai.usage.input_tokens"] for s in spans] == [14, 14]
