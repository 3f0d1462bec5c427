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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from elelem.errors import PayloadError
from elelem.shapes.anthropic_messages.content import (
    ACCEPTS,
    BLOCK_TABLES,
    FILES_BETA,
    UNKNOWN_DELTAS,
    names_file,
    native_content,
    portable_content,
)
from elelem.shapes.anthropic_messages.mapping import (
    DEFAULT_TOOL_VERSIONS,
    TOOL_BETAS,
    hosted_tool_name,
)
from elelem.shapes.anthropic_messages.media import LIMITS
from elelem.shapes.anthropic_messages.skills import (
    NO_SKILLS,
    SKILLS_BETA,
    container_value,
    skill_entry,
)
from elelem.shapes.common import (
    Dropped,
    malformed_drops,
    merge_extra,
    system_text,
    tool_definition,
)
from elelem.shapes.context_editing import CONTEXT_MANAGEMENT_BETA, anthropic_context_management
from elelem.shapes.hosted_tools import (
    OPERATING_SYSTEMS,
    ComputerScreens,
    HostedSite,
    HostedTools,
    domain_lists,
    no_excluded_actions,
)
from elelem.shapes.media import check_request
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
    ComputerUse,
    Drop,
    GenerationOptions,
    JsonSchemaOutput,
    Memory,
    Message,
    ProviderId,
    ProviderPayload,
    RemoteMCP,
    ToolSearch,
    ToolSpec,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.drop import (
    EMPTY,
    EXPIRED,
    FOREIGN_PAYLOAD,
    UNSUPPORTED,
)
from elelem.wire import EncodedRequest, ModelRequest

EVENT_TYPE = "anthropic.event"
"""``type`` of the unknown block the parser keeps an unknown stream event in."""


API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header value the encoder sends."""

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` is required by the Messages API; used when the caller sets none."""

MESSAGES_PATH = "/v1/messages"

SHAPE_NAME = "anthropic_messages"
"""The key of this shape's entry in :attr:`ToolSpec.native`."""


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
        malformed_drops(message, dropped, where)
        content = native_content(message.content, provider, dropped, where)
    else:
        content = portable_content(message, provider, dropped, where)
    return {"role": "assistant" if message.role == "assistant" else "user", "content": content}


def hosted_tool_definition(tool: WebSearch | WebFetch | CodeExecution) -> dict[str, Any]:
    """The versioned Anthropic tool definition of a neutral hosted tool."""
    name = hosted_tool_name(tool)
    out: dict[str, Any] = {"type": tool.version or DEFAULT_TOOL_VERSIONS[name], "name": name}
    if isinstance(tool, (WebSearch, WebFetch)):
        if tool.max_uses is not None:
            out["max_uses"] = tool.max_uses
        domain_lists(out, tool, "blocked_domains")
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


def _client_tool(tool: ToolSpec) -> dict[str, Any]:
    """The tool object of a client tool, its ``anthropic_messages`` native fields
    (``cache_control``, ``allowed_callers``, ``defer_loading``...) merged last."""
    return tool_definition(tool, SHAPE_NAME, TOOL_FIELDS, schema="input_schema")


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


@dataclass
class _ToolExtras:
    # What the hosted tools of one request add beside the tool list.
    betas: list[str] = field(default_factory=list)
    servers: list[dict[str, Any]] = field(default_factory=list)
    skills: list[dict[str, Any]] = field(default_factory=list)


def _versioned(tool: WebSearch | WebFetch | CodeExecution, site: HostedSite) -> None:
    definition = hosted_tool_definition(tool)
    site.tools.append(definition)
    beta = TOOL_BETAS.get(definition["type"])
    extras: _ToolExtras = site.context
    if beta is not None and beta not in extras.betas:
        extras.betas.append(beta)


def _code_execution(tool: CodeExecution, site: HostedSite) -> None:
    _versioned(tool, site)
    if not tool.skills:
        return
    version = site.tools[-1]["type"]
    if version in NO_SKILLS:
        site.drop("skills", f"{version} loads no skills", field="skills")
        return
    extras: _ToolExtras = site.context
    extras.skills.extend(skill_entry(skill) for skill in tool.skills)
    if SKILLS_BETA not in extras.betas:
        extras.betas.append(SKILLS_BETA)


def _mcp_server(server: RemoteMCP, site: HostedSite) -> None:
    extras: _ToolExtras = site.context
    extras.servers.append(mcp_server_definition(server, site.dropped, site.where))


def _client_executed(definition: dict[str, Any], site: HostedSite) -> None:
    # A versioned tool definition (the memory and computer tools the client
    # executes, tool search), with the beta flag its documentation page names.
    site.tools.append(definition)
    extras: _ToolExtras = site.context
    beta = TOOL_BETAS.get(definition["type"])
    if beta is not None and beta not in extras.betas:
        extras.betas.append(beta)


def _memory(tool: Memory, site: HostedSite) -> None:
    version = tool.version or DEFAULT_TOOL_VERSIONS["memory"]
    _client_executed({"type": version, "name": tool.name}, site)


COMPUTER_SCREENS = ComputerScreens(
    "Anthropic computer use",
    "a desktop",
    {"desktop": "desktop", "browser": "desktop", **dict.fromkeys(OPERATING_SYSTEMS, "desktop")},
)
"""The tool has no environment field: the computer use tool page says it
interacts with desktop environments (its display_number is an X11 display),
so ``desktop`` is what it says; a named system goes as that desktop, the
name reported adjusted; a browser goes as the desktop it is shown on (its
mouse, keyboard and screenshot actions work on any screen), reported
adjusted; a mobile device has no place in the page's actions (no touch, no
apps) and is left out, reported (:class:`ComputerScreens`)."""


def _computer(tool: ComputerUse, site: HostedSite) -> None:
    version = tool.version or DEFAULT_TOOL_VERSIONS["computer_use"]
    if COMPUTER_SCREENS.screen(tool, site, {"desktop": version}) is None:
        return
    definition: dict[str, Any] = {
        "type": version,
        "name": "computer",
        "display_width_px": tool.display_width,
        "display_height_px": tool.display_height,
    }
    if tool.display_number is not None:
        definition["display_number"] = tool.display_number
    no_excluded_actions(tool, site, "Anthropic")
    _client_executed(definition, site)


def _tool_search(tool: ToolSearch, site: HostedSite) -> None:
    # The server searches the tools marked defer_loading (ToolSpec.native).
    name = f"tool_search_tool_{tool.mode}"
    _client_executed({"type": tool.version or f"{name}_20251119", "name": name}, site)


HOSTED_TOOLS = HostedTools(
    "Anthropic",
    {
        "web_search": _versioned,
        "web_fetch": _versioned,
        "code_execution": _code_execution,
        "remote_mcp": _mcp_server,
        "memory": _memory,
        "computer_use": _computer,
        "tool_search": _tool_search,
    },
)
"""The hosted tools Messages spells (versioned server tools, MCP servers
through the connector); every other is reported dropped
(:mod:`elelem.shapes.hosted_tools`)."""


def _tools(request: ModelRequest, dropped: Dropped) -> tuple[list[dict[str, Any]], _ToolExtras]:
    """The client and hosted tool definitions, the MCP servers, the betas
    the hosted tools need, and the skills their container loads."""
    tools: list[dict[str, Any]] = [_client_tool(t) for t in request.tools]
    extras = _ToolExtras()
    HOSTED_TOOLS.spell(request.hosted_tools, HostedSite("", {}, tools, dropped, extras))
    return tools, extras


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
    tools, extras = _tools(request, dropped)
    servers, betas = extras.servers, extras.betas
    if tools:
        body["tools"] = tools
    if servers:
        body["mcp_servers"] = servers
        betas.append(MCP_BETA)
    if any(names_file(block) for wire in messages for block in wire["content"]):
        betas.append(FILES_BETA)
    sampling_options(opts, OPTION_KEYS, body, dropped)
    tool_choice(opts, TOOL_CHOICE, body, dropped)
    _reasoning_and_output(opts, body, dropped)
    container = container_value(
        container_id(request.response_payloads, provider, request.now, dropped), extras.skills
    )
    if container is not None:
        # The API's `container` takes the id string (or an object with it and
        # the skills); a caller's own `container` in options.extra still wins below.
        body["container"] = container
    if opts.context_editing is not None:
        body["context_management"] = anthropic_context_management(opts.context_editing)
        betas.append(CONTEXT_MANAGEMENT_BETA)
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
    "ACCEPTS",
    "API_VERSION",
    "BLOCK_TABLES",
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
