"""Neutral request -> Bedrock Converse request body (``/model/{id}/converse[-stream]``).

Assistant messages Bedrock produced are replayed *natively*: content blocks
in order, reasoning as ``reasoningContent.reasoningText`` with its signature
(or ``redactedContent``), tool calls as ``toolUse`` with their JSON input.
Every other message is encoded *portably* (text, tool calls, hosted
summaries as text), each thing left out reported in ``dropped``.  Converse
wants user and assistant turns to alternate, so consecutive user-side
messages (text, tool results) are merged into one.
"""

from __future__ import annotations

from urllib.parse import quote

from elelem.errors import UnsupportedError
from elelem.shapes.base import EncodedRequest, ModelRequest
from elelem.shapes.bedrock_converse.parser import REDACTED_FORMAT, SIGNATURE_FORMAT
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    find_payload,
    hosted_activity_line,
    merge_extra,
    without_remote_mcp,
)
from elelem.shapes.media import bedrock_media, line_report
from elelem.shapes.prompt_cache import breakpoint_ttl, key_not_sent
from elelem.shapes.structured_output import no_json_mode, schema_string
from elelem.vocabulary import (
    DocumentBlock,
    GenerationOptions,
    HostedActivity,
    ImageBlock,
    JsonSchemaOutput,
    Message,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
)
from elelem.vocabulary.json import JSONValue


def request_path(model: str, *, stream: bool) -> str:
    """``/model/{model id, URL-quoted}/converse-stream`` (or ``/converse``)."""
    return f"/model/{quote(model, safe='')}/{'converse-stream' if stream else 'converse'}"


def _tool_use(call: ToolCallBlock, where: str, dropped: Dropped) -> dict[str, JSONValue]:
    return {
        "toolUse": {
            "toolUseId": call.id,
            "name": call.name,
            "input": arguments_object(call.arguments, call.id, where, dropped),
        }
    }


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[str]]:
    """The Converse assistant message for ``message``: native if ``provider``
    produced it, else portable; and what had to be dropped."""
    native = message.provider == provider
    who = message.provider or "another provider"
    dropped = Dropped()
    content: list[JSONValue] = []
    for i, part in enumerate(message.content):
        where = f"message part {i}"
        if isinstance(part, TextBlock):
            content.append({"text": part.text})
        elif isinstance(part, ToolCallBlock):
            content.append(_tool_use(part, where, dropped))
        elif isinstance(part, ReasoningBlock) and native:
            redacted = find_payload(part.payloads, provider, REDACTED_FORMAT)
            signature = find_payload(part.payloads, provider, SIGNATURE_FORMAT)
            if redacted is not None:
                content.append({"reasoningContent": {"redactedContent": redacted.value}})
            else:
                text: dict[str, JSONValue] = {"text": part.text}
                if signature is not None:
                    text["signature"] = signature.value
                content.append({"reasoningContent": {"reasoningText": text}})
        elif isinstance(part, ReasoningBlock):
            dropped.add(where, f"reasoning from {who}")
        elif isinstance(part, HostedActivity):
            payload = part.payload
            if native and payload is not None and payload.provider == provider:
                # The server tool's own toolUse/toolResult block, as it came.
                content.append(payload.value)
            else:
                content.append({"text": hosted_activity_line(part)})
        elif isinstance(part, UnknownBlock):
            dropped.add(where, f"unknown block {part.type!r} (no Converse form)")
        elif isinstance(part, (ImageBlock, DocumentBlock)):
            wire = bedrock_media(part, provider, where, line_report(dropped.items, where), i)
            if wire is not None:
                content.append(wire)
        else:
            dropped.add(where, f"{type(part).__name__} in an assistant message")
    return {"role": "assistant", "content": content}, dropped.items


def _user_content(message: Message, dropped: Dropped) -> list[JSONValue]:
    content: list[JSONValue] = []
    for i, part in enumerate(message.content):
        if isinstance(part, TextBlock):
            content.append({"text": part.text})
        elif isinstance(part, ToolResultBlock):
            inner: list[JSONValue] = [{"text": part.content}]
            for k, attachment in enumerate(part.attachments or ()):
                at = f"part {i} attachment {k}"
                wire = bedrock_media(attachment, "bedrock", at, line_report(dropped.items, at), k)
                if wire is not None:
                    inner.append(wire)
            result: dict[str, JSONValue] = {
                "toolUseId": part.call_id,
                "content": inner,
                "status": "error" if part.is_error else "success",
            }
            content.append({"toolResult": result})
        elif isinstance(part, (ImageBlock, DocumentBlock)):
            at = f"part {i}"
            wire = bedrock_media(part, "bedrock", at, line_report(dropped.items, at), i)
            if wire is not None:
                content.append(wire)
        else:
            dropped.add(f"part {i}", f"{type(part).__name__} in a {message.role} message")
    return content


SHAPE_NAME = "bedrock_converse"
"""The key of this shape's entry in :attr:`ToolSpec.native`."""

TOOL_FIELDS = frozenset({"name", "description", "inputSchema"})
"""The ``toolSpec`` fields elelem writes; ``ToolSpec.native`` may not set them."""


def _tool_spec(spec: ToolSpec, dropped: Dropped) -> dict[str, JSONValue]:
    """The ``toolSpec`` object for ``spec``, its native fields merged at that level."""
    tool: dict[str, JSONValue] = {
        "name": spec.name,
        # Converse requires a description; the name stands in for a missing one.
        "description": spec.description or spec.name,
        "inputSchema": {"json": spec.parameters},
    }
    dropped.items.extend(spec.merge_native(SHAPE_NAME, tool, TOOL_FIELDS))
    return tool


def _cache_points(
    opts: GenerationOptions,
    system: list[JSONValue],
    messages: list[dict[str, JSONValue]],
    dropped: Dropped,
) -> None:
    """Mark the prompt prefix for caching: a ``cachePoint`` after the system
    prompt (tools come before it, so they are covered too, and a new
    conversation with the same system prompt still hits) and one after the last
    message (the whole conversation so far).  Two of the four points a request
    may carry; Converse has no request-level marker."""
    assert opts.cache is not None
    ttl = breakpoint_ttl(opts.cache, "Bedrock", dropped.items)
    point: dict[str, JSONValue] = {"type": "default"}
    if ttl is not None:
        point["ttl"] = ttl
    if system:
        system.append({"cachePoint": dict(point)})
    if messages:
        content = messages[-1]["content"]
        assert isinstance(content, list)
        content.append({"cachePoint": dict(point)})
    key_not_sent(opts.cache, "Bedrock", dropped.items)


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The Converse request for ``request``.  Hosted tools raise
    :class:`~elelem.errors.UnsupportedError` (Converse runs none), except a
    provider-hosted MCP server, which is reported as dropped."""
    dropped = Dropped()
    if without_remote_mcp(request.hosted_tools, "Bedrock Converse", dropped.items):
        raise UnsupportedError(f"{provider}: Bedrock Converse has no hosted tools")
    system: list[JSONValue] = [{"text": request.system}] if request.system else []
    messages: list[dict[str, JSONValue]] = []
    for n, message in enumerate(request.messages):
        if message.role == "system":
            system.extend({"text": p.text} for p in message.content if isinstance(p, TextBlock))
            continue
        if message.role == "assistant":
            wire, lost = assistant_wire(message, provider)
            dropped.items.extend(f"message {n}: {line}" for line in lost)
            messages.append(wire)
            continue
        lost_here = Dropped()
        content = _user_content(message, lost_here)
        dropped.items.extend(f"message {n}: {line}" for line in lost_here.items)
        if messages and messages[-1]["role"] == "user":
            previous = messages[-1]["content"]
            assert isinstance(previous, list)
            previous.extend(content)
        else:
            messages.append({"role": "user", "content": content})
    opts = request.options
    if opts.cache is not None:
        _cache_points(opts, system, messages, dropped)
    body: dict[str, JSONValue] = {"messages": list(messages)}
    if system:
        body["system"] = system
    config: dict[str, JSONValue] = {}
    if opts.max_tokens is not None:
        config["maxTokens"] = opts.max_tokens
    if opts.temperature is not None:
        config["temperature"] = opts.temperature
    if opts.top_p is not None:
        config["topP"] = opts.top_p
    if opts.stop:
        config["stopSequences"] = list(opts.stop)
    if opts.seed is not None:
        dropped.add("options", "seed (Converse takes no sampling seed)")
    if config:
        body["inferenceConfig"] = config
    if request.tools:
        tools: list[JSONValue] = [{"toolSpec": _tool_spec(t, dropped)} for t in request.tools]
        tool_config: dict[str, JSONValue] = {"tools": tools}
        choice = opts.tool_choice
        if choice in ("any", "required"):
            tool_config["toolChoice"] = {"any": {}}
        elif choice == "auto":
            tool_config["toolChoice"] = {"auto": {}}
        elif choice not in (None, "none"):
            tool_config["toolChoice"] = {"tool": {"name": choice}}
        elif choice == "none":
            dropped.add("options", "tool_choice 'none' (Converse has no such choice)")
        body["toolConfig"] = tool_config
    reasoning = opts.reasoning
    if reasoning is not None:
        if reasoning.budget_tokens is not None:
            # The Anthropic models' field; Converse passes it to the model as is.
            body["additionalModelRequestFields"] = {
                "thinking": {"type": "enabled", "budget_tokens": reasoning.budget_tokens}
            }
        else:
            dropped.add("options", "reasoning effort (Converse takes a model-specific budget)")
    output = opts.output
    if isinstance(output, JsonSchemaOutput):
        definition: dict[str, JSONValue] = {"schema": schema_string(output), "name": output.name}
        if output.description:
            definition["description"] = output.description
        body["outputConfig"] = {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}
        }
    elif output is not None:
        no_json_mode("Bedrock", dropped.items)
    merge_extra(body, opts.extra)
    return EncodedRequest(
        path=request_path(request.model, stream=stream),
        body=body,
        stream=stream,
        dropped=tuple(dropped.items),
    )


__all__ = ["SHAPE_NAME", "TOOL_FIELDS", "assistant_wire", "encode_request", "request_path"]
