"""OpenTelemetry GenAI spans, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from elelem import SyncClient, run_sync
from elelem.conversation import Conversation, SQLiteStore
from elelem.errors import InvalidRequestError
from elelem.recordings.cassettes import load
from elelem.telemetry import GenAITracer
from elelem.testing.servers import LoopbackServer, anthropic_text_body, replay, status
from elelem.vocabulary import GenerationOptions, WebSearch
from toolloop_wires import anthropic_calls, anthropic_text

WEB_SEARCH = (
    "vercel__ai/packages__anthropic__src____fixtures____anthropic-web-search-tool.1.chunks.txt"
)


@pytest.fixture
def spans() -> tuple[InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider


def env_for(server: LoopbackServer) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-loopback",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


def test_one_span_per_request_with_exact_attributes(
    corpus: Path, spans: tuple[InMemorySpanExporter, TracerProvider]
) -> None:
    exporter, provider = spans
    body = load(corpus / WEB_SEARCH).interactions[0].response.body
    rate_limited = status(429, b"{}", headers={"retry-after-ms": "10"})
    with LoopbackServer([rate_limited, replay(body)]) as server:
        tracer = GenAITracer(provider)
        with SyncClient(env=env_for(server), hooks=[tracer]) as client:
            options = GenerationOptions(max_tokens=1024, temperature=0.5)
            with client.stream(
                "anthropic:claude-sonnet-4-5", "Tech news?", options=options,
                hosted_tools=[WebSearch()],
            ) as stream:  # fmt: skip
                result = stream.final()
        port = int(server.url.rsplit(":", 1)[1])
    (span,) = exporter.get_finished_spans()
    assert (span.name, span.kind, span.status.status_code) == (
        "chat claude-sonnet-4-5",
        SpanKind.CLIENT,
        StatusCode.UNSET,
    )
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.request.max_tokens": 1024,
        "gen_ai.request.temperature": 0.5,
        "server.address": "127.0.0.1",
        "server.port": port,
        "gen_ai.response.id": result.response_id,
        "gen_ai.response.model": "claude-sonnet-4-20250514",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 15665,
        "gen_ai.usage.output_tokens": 795,
        "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.cache_creation.input_tokens": 0,
        "gen_ai.usage.reasoning.output_tokens": 0,
        "elelem.hosted.web_search": 1,
        "elelem.hosted.web_fetch": 0,
        "elelem.retries": 1,
    }
    assert result.response_id is not None and result.response_id.startswith("msg_")


def test_no_content_unless_opted_in_and_errors_are_marked(
    spans: tuple[InMemorySpanExporter, TracerProvider],
) -> None:
    exporter, provider = spans
    bad = b'{"type":"error","error":{"type":"invalid_request_error","message":"no"}}'
    replies = [
        replay(anthropic_text_body("Hi there.")),
        status(400, bad),
        replay(anthropic_text_body("Yes.")),
    ]
    with LoopbackServer(replies) as server:
        plain, keen = GenAITracer(provider), GenAITracer(provider, capture_content=True)
        with SyncClient(env=env_for(server), hooks=[plain], max_retries=0) as client:
            client.stream("anthropic:claude-x", "Hello?", system="Be kind.").final()
            with pytest.raises(InvalidRequestError):
                client.stream("anthropic:claude-x", "Again?").final()
        with SyncClient(env=env_for(server), hooks=[keen]) as client:
            client.stream("anthropic:claude-x", "Sure?", system="Be kind.").final()
    first, failed, captured = exporter.get_finished_spans()
    assert not any("messages" in k or "instructions" in k for k in first.attributes or {})
    assert (failed.status.status_code, failed.attributes["error.type"]) == (  # type: ignore[index]
        StatusCode.ERROR,
        "invalid-request",
    )
    attrs: Any = captured.attributes
    assert json.loads(attrs["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Sure?"}]}
    ]
    assert json.loads(attrs["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be kind."}
    ]
    assert json.loads(attrs["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Yes."}]}
    ]


def get_weather(city: str) -> str:
    """The weather in a city."""
    return "18°C" if city == "Paris" else "unknown"


def test_a_child_span_per_tool_call_of_the_loop(
    tmp_path: Path, spans: tuple[InMemorySpanExporter, TracerProvider]
) -> None:
    exporter, provider = spans
    tracer = GenAITracer(provider)
    replies = [
        anthropic_calls([("call_1", "get_weather", {"city": "Paris"})]),
        anthropic_text("18°C"),
    ]
    with (
        LoopbackServer(replies) as server,
        SyncClient(env=env_for(server), hooks=[tracer]) as client,
    ):
        conv = Conversation.create(SQLiteStore(tmp_path / "t.db"))
        parent = provider.get_tracer("test").start_as_current_span("invoke_agent weather")
        with parent as agent:
            result = run_sync(
                conv, client, "anthropic:claude-test", "Paris?", tools=[get_weather],
                on_call=tracer.tool_call,
            )  # fmt: skip
    assert result.text == "18°C"
    names = [s.name for s in exporter.get_finished_spans()]
    assert names == [
        "chat claude-test",
        "execute_tool get_weather",
        "chat claude-test",
        "invoke_agent weather",
    ]
    tool = exporter.get_finished_spans()[1]
    assert dict(tool.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
    }
    ids = {s.context.span_id for s in exporter.get_finished_spans()}
    assert all(s.parent is not None and s.parent.span_id == agent.get_span_context().span_id
               for s in exporter.get_finished_spans()[:3]) and len(ids) == 4  # fmt: skip
