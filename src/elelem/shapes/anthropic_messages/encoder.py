"""The Anthropic Messages request encoder: a neutral request -> wire JSON.

Messages the target provider produced are replayed *natively*: every
assistant content block is rebuilt from the stored blocks, hosted transitions
and their payloads, in original order (server tool blocks with
``encrypted_content``, text with its citations, thinking with its signature,
redacted thinking, tool use, unknown blocks verbatim).  Everything else is
encoded *portably*: text, tool calls and results, hosted activity as a text
summary; foreign payloads and reasoning are never sent, and each dropped item
is reported.

Response-level data replays too: the request names the code-execution
``container`` of the latest response envelope that has one
(:attr:`ModelRequest.response_payloads`), unless it expired by
:attr:`ModelRequest.now`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from elelem.errors import PayloadError
from elelem.shapes.anthropic_messages.mapping import (
    DEFAULT_TOOL_VERSIONS,
    TOOL_BETAS,
    hosted_tool_name,
)
from elelem.shapes.anthropic_messages.media import LIMITS, encode_media
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    context_text,
    find_payload,
    hosted_activity_line,
    mapped_part,
    merge_extra,
    own_block,
    part_type,
    stream_event,
    stream_event_drop,
    system_text,
)
from elelem.shapes.media import check_request, line_report
from elelem.shapes.options import (
    NotTaken,
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.shapes.prompt_cache import top_level_marker
from elelem.shapes.structured_output import no_json_mode, unlabelled
from elelem.vocabulary import (
    CodeExecution,
    DocumentBlock,
    Drop,
    FileSearch,
    GenerationOptions,
    HostedActivity,
    ImageBlock,
    ImageGeneration,
    JsonSchemaOutput,
    Message,
    Part,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    RemoteMCP,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.drop import (
    EMPTY,
    EXPIRED,
    FOREIGN_PAYLOAD,
    UNREPLAYABLE,
    UNSUPPORTED,
)
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.wire import EncodedRequest, ModelRequest

EVENT_TYPE = "anthropic.event"
"""``type`` of the unknown block the parser keeps an unknown stream event in."""

UNKNOWN_DELTAS = "unknown_deltas"
"""Payload format on a text, reasoning or tool-call block: every delta of a
type nobody modelled that arrived for it, whole (its ``type`` included), in
arrival order.  Native replay leaves them out and says so."""

API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header value the encoder sends."""

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` is required by the Messages API; used when the caller sets none."""

MESSAGES_PATH = "/v1/messages"

SHAPE_NAME = "anthropic_messages"
"""The key of this shape's entry in :attr:`ToolSpec.native`."""


def _checked(payload: ProviderPayload, kind: type, at: str) -> Any:
    # A present but undecodable payload is an error, never a silent downgrade.
    value = payload.value
    if not isinstance(value, kind) or (
        isinstance(value, dict) and payload.format != "block_fields" and "type" not in value
    ):
        raise PayloadError(
            f"{at}: {payload.provider} {payload.format} payload is not a "
            f"{'block object' if kind is dict else kind.__name__}",
            "$.value",
        )
    return value


def _fields(payloads: Iterable[ProviderPayload], provider: str, at: str) -> dict[str, Any]:
    extra = find_payload(payloads, provider, "block_fields")
    return dict(_checked(extra, dict, at)) if extra is not None else {}


# --------------------------------------------------------------------------
# native replay
# --------------------------------------------------------------------------


def _native_content(
    content: Iterable[Part], provider: str, dropped: Dropped, where: str
) -> list[dict[str, Any]]:
    """Rebuild the wire content blocks of an assistant message ``provider`` produced."""
    out: list[dict[str, Any]] = []
    for i, part in enumerate(content):
        at = f"{where}content[{i}]"
        kept = find_payload(getattr(part, "payloads", ()), provider, UNKNOWN_DELTAS)
        if kept is not None:
            # What a delta of an unknown type did to its block is not known:
            # the block replays as its known deltas built it, and says so.
            count = len(kept.value) if isinstance(kept.value, list) else 1
            detail = f"{count} delta(s) of a type nobody modelled"
            dropped.add(at, UNKNOWN_DELTAS, UNREPLAYABLE, detail)
        if isinstance(part, HostedActivity):
            block = _native_hosted(part, provider, at)
            if block is None:
                out.append(_portable_hosted(part))
                dropped.add(
                    at,
                    "hosted",
                    UNREPLAYABLE,
                    f"{part.name} {part.state} has no {provider} payload; sent as text",
                )
            else:
                out.append(block)
        elif isinstance(part, TextBlock):
            out.append(_native_text(part, provider, dropped, at))
        elif isinstance(part, ReasoningBlock):
            block = _native_reasoning(part, provider, at)
            if block is None:
                dropped.add(
                    at,
                    "reasoning",
                    UNREPLAYABLE,
                    "unsigned: no thinking block without its signature",
                )
            else:
                out.append(block)
        elif isinstance(part, ToolCallBlock):
            out.append(_native_tool_call(part, provider, dropped, at))
        elif isinstance(part, ToolResultBlock):
            out.append(_tool_result(part, provider, dropped, at))
        elif isinstance(part, (ImageBlock, DocumentBlock)):
            kind = "image" if isinstance(part, ImageBlock) else "document"
            dropped.add(at, kind, UNSUPPORTED, "an assistant message takes none")
        elif isinstance(part, UnknownBlock) and stream_event(part):
            dropped.items.append(stream_event_drop(at, part))
        elif isinstance(part, UnknownBlock):
            out.append(dict(part.raw))
        elif (wire := own_block(part, ACCEPTS.shape, provider)) is not None:
            out.append(wire)  # a plugin block type's own Anthropic form, or the block as it came
        else:  # a registered block type this shape has no mapping for
            dropped.add(at, part_type(part), UNSUPPORTED, "no Anthropic mapping")
    return out


def _native_hosted(part: HostedActivity, provider: str, at: str) -> dict[str, Any] | None:
    payload = part.payload
    if payload is None or payload.provider != provider:
        return None
    return dict(_checked(payload, dict, at))


def _native_text(part: TextBlock, provider: str, dropped: Dropped, at: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": part.text}
    citations = []
    for j, attribution in enumerate(part.attributions):
        replay = attribution.replay
        if replay is not None and replay.provider == provider and replay.format == "citation":
            citations.append(_checked(replay, dict, at))
        else:
            dropped.add(
                f"{at}.attributions[{j}]",
                "citation",
                UNREPLAYABLE,
                f"no {provider} citation payload",
            )
    if citations:
        block["citations"] = citations
    block.update(_fields(part.payloads, provider, at))
    return block


def _native_reasoning(part: ReasoningBlock, provider: str, at: str) -> dict[str, Any] | None:
    redacted = find_payload(part.payloads, provider, "redacted_thinking")
    if redacted is not None:
        block: dict[str, Any] = {"type": "redacted_thinking", "data": _checked(redacted, str, at)}
    else:
        signature = find_payload(part.payloads, provider, "signature")
        if signature is None:
            return None
        block = {
            "type": "thinking",
            "thinking": part.text,
            "signature": _checked(signature, str, at),
        }
    block.update(_fields(part.payloads, provider, at))
    return block


def _native_tool_call(
    part: ToolCallBlock, provider: str, dropped: Dropped, at: str
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_use",
        "id": part.id,
        "name": part.name,
        "input": arguments_object(part.arguments, part.id, at, dropped),
    }
    block.update(_fields(part.payloads, provider, at))
    return block


def _media(block: ImageBlock | DocumentBlock, provider: str, dropped: Dropped, at: str) -> Any:
    return encode_media(block, provider, at, line_report(dropped.items, at))


FILES_BETA = "files-api-2025-04-14"
"""The beta an image or document given by Files API id needs."""


def _names_file(block: dict[str, Any]) -> bool:
    """True when a wire content block (or a tool result's content) names a file id."""
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "file":
        return True
    inner = block.get("content")
    return isinstance(inner, list) and any(isinstance(b, dict) and _names_file(b) for b in inner)


def _tool_result(part: ToolResultBlock, provider: str, dropped: Dropped, at: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id}
    block["content"] = part.content
    if part.attachments:
        # Images and documents a tool returned go inside its result.
        content: list[dict[str, Any]] = [{"type": "text", "text": part.content}]
        for k, attachment in enumerate(part.attachments):
            wire = _media(attachment, provider, dropped, f"{at}.attachments[{k}]")
            if wire is not None:
                content.append(wire)
        block["content"] = content
    if part.is_error:
        block["is_error"] = True
    return block


# --------------------------------------------------------------------------
# portable encoding
# --------------------------------------------------------------------------


def _portable_hosted(part: HostedActivity) -> dict[str, Any]:
    return {"type": "text", "text": hosted_activity_line(part)}


ACCEPTS = Accepts("Anthropic", shape="anthropic_messages").with_blocks("image", "document")
"""What Anthropic carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): no foreign citations,
since a citation must point at a block of Anthropic's own."""


def _portable_content(
    message: Message, provider: str, dropped: Dropped, where: str
) -> list[dict[str, Any]]:
    """Spell for Anthropic what a message from another provider (or a user) keeps."""
    portable = portable_message(message, ACCEPTS, provider)
    dropped.extend(portable.dropped, under=where.rstrip("."))
    out: list[dict[str, Any]] = []
    for i, part in portable.parts():
        if isinstance(part, HostedActivity):
            out.append(_portable_hosted(part))
        elif isinstance(part, TextBlock):
            out.append({"type": "text", "text": context_text(message.source, part.text)})
        elif isinstance(part, ToolCallBlock):
            given = arguments_object(part.arguments, part.id, f"{where}content[{i}]", dropped)
            out.append({"type": "tool_use", "id": part.id, "name": part.name, "input": given})
        elif isinstance(part, ToolResultBlock):
            out.append(_tool_result(part, provider, dropped, f"{where}content[{i}]"))
        elif isinstance(part, (ImageBlock, DocumentBlock)):
            wire = _media(part, provider, dropped, f"{where}content[{i}]")
            if wire is not None:
                out.append(wire)
        elif (wire := mapped_part(part, ACCEPTS.shape, provider)) is not None:
            out.append(wire)
        else:
            dropped.add(
                f"{where}content[{i}]", part_type(part), UNSUPPORTED, "no Anthropic mapping"
            )
    return out


# --------------------------------------------------------------------------
# response-level data of the history
# --------------------------------------------------------------------------

RESPONSE_DATA = "response_payloads"
"""Where drops about :attr:`ModelRequest.response_payloads` point."""


def _expiry(value: object, container: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            # A time without a zone is the API's UTC.
            return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    raise PayloadError(
        f"{RESPONSE_DATA}: container {container!r} expires_at {value!r} is not an ISO 8601 time",
        "$.value.container.expires_at",
    )


def container_id(
    payloads: Iterable[ProviderPayload], provider: str, now: datetime | None, dropped: Dropped
) -> str | None:
    """The code-execution container the next request to ``provider`` names.

    The container of the latest ``message`` envelope of ``provider`` that
    names one (a response that ran no code names none, and the container
    lives on); None when there is none, or when it expired by ``now`` (then
    reported in ``dropped``: the API would refuse it, and the next request
    starts a fresh container).  Payloads of another provider are reported in
    ``dropped`` (one line) and never sent.
    """
    found: dict[str, Any] | None = None
    foreign: dict[str, int] = {}
    for payload in payloads:
        if payload.provider != provider:
            foreign[payload.provider] = foreign.get(payload.provider, 0) + 1
            continue
        if payload.format != "message":
            continue  # response data with no request counterpart
        envelope = payload.value
        if not isinstance(envelope, dict):
            raise PayloadError(
                f"{RESPONSE_DATA}: {provider} message payload is not an object", "$.value"
            )
        container = envelope.get("container")
        if container is None:
            continue
        if not isinstance(container, dict) or not isinstance(container.get("id"), str):
            raise PayloadError(
                f"{RESPONSE_DATA}: {provider} message container is not an object with a string id",
                "$.value.container",
            )
        found = container
    if foreign:
        names = ", ".join(sorted(foreign))
        dropped.add(
            RESPONSE_DATA,
            "payload",
            FOREIGN_PAYLOAD,
            f"{sum(foreign.values())} of another provider ({names})",
        )
    if found is None:
        return None
    cid: str = found["id"]
    expires = _expiry(found.get("expires_at"), cid)
    if now is not None and expires is not None:
        current = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
        if expires <= current:
            # repr: the values are the provider's, and these lines may be shown.
            dropped.add(
                RESPONSE_DATA,
                "container",
                EXPIRED,
                f"{cid!r} expired at {found['expires_at']!r}",
            )
            return None
    return cid


# --------------------------------------------------------------------------
# the request
# --------------------------------------------------------------------------


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, Any], tuple[Drop, ...]]:
    """The wire message object for one assistant message, and what was dropped
    (``where`` relative to the message: ``content[2]``).

    Native replay when ``message.provider == provider``, portable otherwise.
    """
    dropped = Dropped()
    return _wire_message(message, provider, dropped, ""), tuple(dropped.items)


def _wire_message(message: Message, provider: str, dropped: Dropped, where: str) -> dict[str, Any]:
    if message.role == "assistant" and message.provider == provider:
        content = _native_content(message.content, provider, dropped, where)
    else:
        content = _portable_content(message, provider, dropped, where)
    return {"role": "assistant" if message.role == "assistant" else "user", "content": content}


def hosted_tool_definition(tool: WebSearch | WebFetch | CodeExecution) -> dict[str, Any]:
    """The versioned Anthropic tool definition of a neutral hosted tool."""
    name = hosted_tool_name(tool)
    out: dict[str, Any] = {"type": tool.version or DEFAULT_TOOL_VERSIONS[name], "name": name}
    if isinstance(tool, (WebSearch, WebFetch)):
        if tool.max_uses is not None:
            out["max_uses"] = tool.max_uses
        if tool.allowed_domains:
            out["allowed_domains"] = list(tool.allowed_domains)
        if tool.blocked_domains:
            out["blocked_domains"] = list(tool.blocked_domains)
    if isinstance(tool, WebSearch) and tool.user_location is not None:
        loc = tool.user_location
        location: dict[str, Any] = {"type": "approximate"}
        for key in ("city", "region", "country", "timezone"):
            value = getattr(loc, key)
            if value is not None:
                location[key] = value
        out["user_location"] = location
    if isinstance(tool, WebFetch):
        if tool.citations:
            out["citations"] = {"enabled": True}
        if tool.max_content_tokens is not None:
            out["max_content_tokens"] = tool.max_content_tokens
    return out


MCP_BETA = "mcp-client-2025-04-04"
"""The ``anthropic-beta`` flag of the MCP connector (``mcp_servers``)."""


def mcp_server_definition(
    server: RemoteMCP, dropped: Dropped, where: str = "hosted_tools"
) -> dict[str, Any]:
    """The ``mcp_servers`` entry of a provider-hosted MCP server.  The
    authorization token goes into this body only (it is a secret)."""
    out: dict[str, Any] = {"type": "url", "url": server.url, "name": server.name}
    if server.authorization:
        out["authorization_token"] = server.authorization
    if server.allowed_tools is not None:
        out["tool_configuration"] = {"enabled": True, "allowed_tools": list(server.allowed_tools)}
    if server.require_approval == "always":
        dropped.add(
            f"{where}.require_approval",
            "require_approval",
            UNSUPPORTED,
            f"{server.name!r}: Anthropic's MCP connector calls tools without asking",
        )
    if server.description:
        dropped.add(
            f"{where}.description",
            "description",
            UNSUPPORTED,
            f"{server.name!r}: Anthropic takes none",
        )
    return out


TOOL_FIELDS = frozenset({"name", "description", "input_schema", "type"})
"""The tool-object fields elelem writes; ``ToolSpec.native`` may not set them
(``type`` would turn a client tool into an Anthropic-defined one)."""


def _client_tool(tool: ToolSpec, where: str, dropped: Dropped) -> dict[str, Any]:
    """The tool object of a client tool, its ``anthropic_messages`` native fields
    (``cache_control``, ``allowed_callers``, ``defer_loading``...) merged last."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters
    dropped.extend(tool.merge_native(SHAPE_NAME, out, TOOL_FIELDS), under=where)
    return out


OPTION_KEYS = check_table(
    "Anthropic",
    {
        "max_tokens": ("max_tokens",),
        "temperature": ("temperature",),
        "top_p": ("top_p",),
        "stop": ("stop_sequences",),
        "seed": NotTaken("Anthropic Messages takes no sampling seed"),
    },
)
"""Where the Messages API takes each sampling option."""

TOOL_CHOICE = ToolChoiceSpelling(
    ("tool_choice",),
    {
        "auto": {"type": "auto"},
        "none": {"type": "none"},
        "any": {"type": "any"},
        "required": {"type": "any"},
    },
    lambda name: {"type": "tool", "name": name},
)
"""How the Messages API spells ``tool_choice``."""


def _breakpoints(body: dict[str, Any]) -> int:
    """Block-level ``cache_control`` markers already in ``body`` (tools given
    one through :attr:`ToolSpec.native`, replayed blocks that carry one)."""
    blocks = [*body.get("tools", ())]
    for message in body["messages"]:
        blocks.extend(message["content"])
    return sum(1 for block in blocks if "cache_control" in block)


def _reasoning_and_output(opts: GenerationOptions, body: dict[str, Any], dropped: Dropped) -> None:
    """Spell ``opts.reasoning`` (``thinking`` budget, ``output_config.effort``)
    and ``opts.output`` (``output_config.format``; a schema only)."""
    if opts.reasoning is not None:
        if opts.reasoning.budget_tokens is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": opts.reasoning.budget_tokens}
        if opts.reasoning.effort is not None:
            body["output_config"] = {"effort": opts.reasoning.effort}
    output = opts.output
    if isinstance(output, JsonSchemaOutput):
        # Generally available as output_config.format (the older beta spelled it
        # output_format behind a header); the schema is always enforced.
        body.setdefault("output_config", {})["format"] = {
            "type": "json_schema",
            "schema": output.schema,
        }
        unlabelled(output, "Anthropic", dropped.items)
    elif output is not None:
        no_json_mode("Anthropic", dropped.items)


def _tools(
    request: ModelRequest, dropped: Dropped
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The client and hosted tool definitions, the MCP servers, and the
    betas the hosted tools need."""
    tools: list[dict[str, Any]] = [
        _client_tool(t, f"tools[{k}]", dropped) for k, t in enumerate(request.tools)
    ]
    betas: list[str] = []
    servers: list[dict[str, Any]] = []
    for k, hosted in enumerate(request.hosted_tools):
        if isinstance(hosted, RemoteMCP):
            servers.append(mcp_server_definition(hosted, dropped, f"hosted_tools[{k}]"))
            continue
        if isinstance(hosted, (FileSearch, ImageGeneration)):
            what = "file_search" if isinstance(hosted, FileSearch) else "image_generation"
            dropped.add(
                f"hosted_tools[{k}]", what, UNSUPPORTED, "Anthropic has no such hosted tool"
            )
            continue
        definition = hosted_tool_definition(hosted)
        tools.append(definition)
        beta = TOOL_BETAS.get(definition["type"])
        if beta is not None and beta not in betas:
            betas.append(beta)
    return tools, servers, betas


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The Messages API request for ``request``, to ``provider``."""
    check_request(request.messages, LIMITS)
    dropped = Dropped()
    system_parts = [request.system] if request.system else []
    messages: list[dict[str, Any]] = []
    for i, message in enumerate(request.messages):
        if message.role == "system":
            system_parts.append(
                "".join(p.text for p in system_text(message, f"messages[{i}].", dropped))
            )
            continue
        wire = _wire_message(message, provider, dropped, f"messages[{i}].")
        if not wire["content"]:
            # The API rejects an empty content list; say so rather than send it.
            dropped.add(f"messages[{i}]", "message", EMPTY, "nothing left to send")
            continue
        messages.append(wire)
    opts = request.options
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": DEFAULT_MAX_TOKENS,  # required; options.max_tokens replaces it
        "messages": messages,
    }
    if system_parts:
        body["system"] = "\n\n".join(system_parts)
    tools, servers, betas = _tools(request, dropped)
    if tools:
        body["tools"] = tools
    if servers:
        body["mcp_servers"] = servers
        betas.append(MCP_BETA)
    if any(_names_file(block) for wire in messages for block in wire["content"]):
        betas.append(FILES_BETA)
    sampling_options(opts, OPTION_KEYS, body, dropped)
    tool_choice(opts, TOOL_CHOICE, body, dropped)
    _reasoning_and_output(opts, body, dropped)
    container = container_id(request.response_payloads, provider, request.now, dropped)
    if container is not None:
        # The API's `container` takes the id string (or an object with it);
        # a caller's own `container` in options.extra still wins below.
        body["container"] = container
    if opts.cache is not None:
        top_level_marker(
            opts.cache, opts.extra, "Anthropic", body, dropped.items, explicit=_breakpoints(body)
        )
    if stream:
        body["stream"] = True
    merge_extra(body, opts.extra)
    headers = {"anthropic-version": API_VERSION}
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    return EncodedRequest(
        path=MESSAGES_PATH, body=body, headers=headers, stream=stream, dropped=tuple(dropped.items)
    )


__all__ = [
    "API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "FILES_BETA",
    "MCP_BETA",
    "MESSAGES_PATH",
    "RESPONSE_DATA",
    "SHAPE_NAME",
    "TOOL_FIELDS",
    "UNKNOWN_DELTAS",
    "assistant_wire",
    "container_id",
    "encode_request",
    "hosted_tool_definition",
    "mcp_server_definition",
]
