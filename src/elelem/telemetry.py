"""OpenTelemetry traces in the GenAI semantic conventions (the ``elelem[otel]`` extra).

:class:`GenAITracer` is a :class:`~elelem.transport.RequestHook`: give it to
a client (``Client(hooks=[GenAITracer()])``) and every provider request is
one CLIENT span named ``{operation} {model}``: ``chat {model}`` for a model
response, ``embeddings {model}`` for each request of
:meth:`~elelem.Client.embed` (the conventions' names), and elelem's own
where the conventions have none: ``batch``, ``batch_status`` and
``batch_results`` for each request of the batch calls (an upload, the
batch), ``speak`` and ``transcribe`` for the speech endpoints.  Each has

- ``gen_ai.operation.name`` (that operation), ``gen_ai.provider.name`` (the
  conventions' well-known names: ``anthropic``, ``openai``, ``gcp.gemini``,
  ``aws.bedrock``, …, else elelem's provider name), ``gen_ai.request.model``,
  ``gen_ai.request.max_tokens`` / ``temperature`` / ``top_p`` when set,
  ``server.address`` and ``server.port``;
- ``gen_ai.response.id``, ``gen_ai.response.model``,
  ``gen_ai.response.finish_reasons`` (elelem's neutral reason; a chat span's
  only, as are the output, cache and reasoning token counts below: the other
  operations have input tokens at most);
- ``gen_ai.usage.input_tokens`` (cache reads and writes included, as the
  conventions count them) and ``gen_ai.usage.output_tokens`` (reasoning
  included), ``gen_ai.usage.cache_read.input_tokens``,
  ``gen_ai.usage.cache_creation.input_tokens``,
  ``gen_ai.usage.reasoning.output_tokens``;
- ``elelem.hosted.<name>`` for each hosted-tool counter of the usage
  (``elelem.hosted.web_search``: 1) and ``elelem.retries``;
- on failure, ``error.type`` (the typed error's ``kind``) and an ERROR status.

No prompt or completion content is recorded unless ``capture_content`` is
True: then ``gen_ai.system_instructions``, ``gen_ai.input.messages`` and
``gen_ai.output.messages`` hold the text parts as the conventions' JSON,
with every secret the process holds (a key, a fetched token: see
:data:`~elelem.redaction.PROCESS_SECRETS`) removed, as from a tool call's
arguments and result.

The tool loop's calls are spans too: pass :meth:`GenAITracer.tool_call` as
``on_call`` to :func:`elelem.run` (an ``execute_tool {name}`` span per call,
child of the current span; the loop reports a call once it finished, so the
span marks its result, not its duration).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from elelem.errors import StreamError
from elelem.redaction import PROCESS_SECRETS
from elelem.stream import AssembledResponse
from elelem.transport.config import CHAT, StartedRequest
from elelem.vocabulary import Message, TextBlock, ToolCallBlock, ToolResultBlock
from elelem.vocabulary.registry import RecordTable

PROVIDER_NAMES: Mapping[str, str] = RecordTable(lambda r: r.telemetry_name or None)
"""elelem's provider names and the GenAI conventions' well-known
``gen_ai.provider.name`` (each record's ``telemetry_name``)."""

TRACER_NAME = "elelem"


def _messages(messages: tuple[Message, ...]) -> str:
    """Messages as the conventions' JSON: role and text parts."""
    out = []
    for message in messages:
        parts = [
            {"type": "text", "content": b.text} for b in message.content if isinstance(b, TextBlock)
        ]
        out.append({"role": message.role, "parts": parts})
    return _captured(json.dumps(out))


def _captured(text: str) -> str:
    # Content leaves the process in a span: no secret it holds goes with it.
    return PROCESS_SECRETS.redact(text)


class _RequestSpan:
    def __init__(self, span: Span, capture: bool, operation: str) -> None:
        self.span = span
        self.capture = capture
        self.operation = operation

    def end(self, result: AssembledResponse, error: BaseException | None) -> None:
        span = self.span
        attrs: dict[str, Any] = {}
        if result.response_id:
            attrs["gen_ai.response.id"] = result.response_id
        if result.model:
            attrs["gen_ai.response.model"] = result.model
        chat = self.operation == CHAT
        # Only a model response has a finish reason and output tokens; the
        # one-shot calls (an embedding, a batch read) end as a formality.
        if chat and result.finish is not None:
            attrs["gen_ai.response.finish_reasons"] = (result.finish.reason,)
        usage = result.usage
        if usage is not None:
            attrs["gen_ai.usage.input_tokens"] = usage.input + usage.cache_read + usage.cache_write
        if usage is not None and chat:
            attrs["gen_ai.usage.output_tokens"] = usage.output + usage.reasoning
            attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read
            attrs["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write
            attrs["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning
            for name, count in usage.hosted.items():
                attrs[f"elelem.hosted.{name}"] = count
        attrs["elelem.retries"] = len(result.retries)
        if self.capture and chat:
            attrs["gen_ai.output.messages"] = _captured(
                json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": result.text}]}]
                )
            )
        span.set_attributes(attrs)
        if error is not None:
            kind = error.kind if isinstance(error, StreamError) else type(error).__name__
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, kind))
        span.end()


class GenAITracer:
    """A request hook emitting one GenAI span per provider request (see the
    module docs).  ``tracer_provider`` defaults to the global one;
    ``capture_content`` records prompts and answers (off by default: they
    may hold what must not leave the process)."""

    def __init__(
        self, tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
    ) -> None:
        self.tracer = trace.get_tracer(TRACER_NAME, tracer_provider=tracer_provider)
        self.capture_content = capture_content

    def start(self, stream: StartedRequest) -> _RequestSpan:
        """Open the span of ``stream``'s request."""
        request, endpoint, operation = stream.request, stream.endpoint, stream.operation
        provider = str(endpoint.provider)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": PROVIDER_NAMES.get(provider, provider),
            "gen_ai.request.model": request.model,
        }
        url = urlsplit(endpoint.base_url)
        if url.hostname:
            attrs["server.address"] = url.hostname
            attrs["server.port"] = url.port or (443 if url.scheme == "https" else 80)
        options = request.options
        for key, value in (
            ("gen_ai.request.max_tokens", options.max_tokens),
            ("gen_ai.request.temperature", options.temperature),
            ("gen_ai.request.top_p", options.top_p),
        ):
            if value is not None:
                attrs[key] = value
        if self.capture_content and operation == CHAT:
            attrs["gen_ai.input.messages"] = _messages(request.messages)
            if request.system:
                attrs["gen_ai.system_instructions"] = _captured(
                    json.dumps([{"type": "text", "content": request.system}])
                )
        span = self.tracer.start_span(
            f"{operation} {request.model}", kind=SpanKind.CLIENT, attributes=attrs
        )
        return _RequestSpan(span, self.capture_content, operation)

    def tool_call(self, call: ToolCallBlock, result: ToolResultBlock) -> None:
        """An ``execute_tool {name}`` span for one call of the tool loop (use
        as ``on_call``); arguments and result only with ``capture_content``."""
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if self.capture_content:
            attrs["gen_ai.tool.call.arguments"] = _captured(call.arguments)
            attrs["gen_ai.tool.call.result"] = _captured(result.content)
        span = self.tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attrs
        )
        if result.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, "the tool reported an error"))
        span.end()


__all__ = ["PROVIDER_NAMES", "GenAITracer"]
