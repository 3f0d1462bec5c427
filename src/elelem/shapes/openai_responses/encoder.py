"""The Responses request encoder: a neutral request -> ``POST responses`` body.

Assistant messages the target provider produced replay *natively*: every
block that carries this provider's payload becomes the raw output item it came
from (reasoning with ``encrypted_content``, function calls with their item id,
hosted items, unknown items), and text parts regroup into their original
message items, in original order.  Everything else is encoded *portably* (text,
tool calls and results, hosted activity as a status line); what cannot be
carried (foreign reasoning, foreign unknown blocks, unsupported options) is
listed in ``EncodedRequest.dropped``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from elelem.errors import UnsupportedError
from elelem.shapes.common import (
    finished_request,
    tool_definition,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.hosted_tools import HostedSite, HostedTools, no_skills
from elelem.shapes.media import check_request
from elelem.shapes.openai_responses._items import is_xai
from elelem.shapes.openai_responses.client_tools import computer_row, shell_tool
from elelem.shapes.openai_responses.content import (
    ACCEPTS,
    BLOCK_TABLES,
    SHAPE_NAME,
    InputItems,
)
from elelem.shapes.openai_responses.media import LIMITS
from elelem.shapes.openai_responses.state import RESPONSE_FORMAT, held_state
from elelem.shapes.openai_responses.xai_tools import x_search, xai_web_search
from elelem.shapes.options import (
    NotTaken,
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.shapes.prompt_cache import openai_cache_fields
from elelem.shapes.provider_state import continues
from elelem.shapes.structured_output import responses_format
from elelem.vocabulary import (
    CodeExecution,
    Drop,
    FileSearch,
    ImageGeneration,
    Message,
    ProviderId,
    RemoteMCP,
    WebSearch,
)
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.json import JSONValue
from elelem.wire import EncodedRequest, ModelRequest

RESPONSES_PATH = "responses"
"""Path of the endpoint, relative to an OpenAI-style base URL ending in ``/v1``."""

TOOL_FIELDS = frozenset({"type", "name", "description", "parameters"})
"""The function-tool fields elelem writes; ``ToolSpec.native`` may not set them."""


def _web_search(tool: WebSearch, site: HostedSite) -> None:
    if is_xai(site.provider):
        xai_web_search(tool, site)
        return
    spec: dict[str, JSONValue] = {"type": tool.version or "web_search"}
    if tool.allowed_domains:
        spec["filters"] = {"allowed_domains": list(tool.allowed_domains)}
    if tool.user_location is not None:
        loc: dict[str, JSONValue] = {"type": "approximate"}
        for field in ("city", "region", "country", "timezone"):
            value = getattr(tool.user_location, field)
            if value is not None:
                loc[field] = value
        spec["user_location"] = loc
    if tool.max_uses is not None:
        site.drop("max_uses", "Responses has no per-tool use limit", field="max_uses")
    if tool.blocked_domains:
        site.drop(
            "blocked_domains", "Responses web search has no blocklist", field="blocked_domains"
        )
    site.tools.append(spec)


def _code_execution(tool: CodeExecution, site: HostedSite) -> None:
    # Skills go into a hosted shell's container on this wire, not the code interpreter's.
    no_skills(tool, site, "OpenAI's code interpreter")
    site.tools.append({"type": tool.version or "code_interpreter", "container": {"type": "auto"}})


def _file_search(tool: FileSearch, site: HostedSite) -> None:
    search: dict[str, JSONValue] = {
        "type": tool.version or "file_search",
        "vector_store_ids": list(tool.stores),
    }
    if tool.max_results is not None:
        search["max_num_results"] = tool.max_results
    if tool.filters is not None:
        search["filters"] = tool.filters
    site.tools.append(search)


IMAGE_FIELDS = ("model", "size", "quality", "output_format", "background", "partial_images")


def _image_generation(tool: ImageGeneration) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {"type": tool.version or "image_generation"}
    for field in IMAGE_FIELDS:
        value = getattr(tool, field)
        if value is not None:
            out[field] = value
    for key, value in tool.options.items():
        if key in out or key in IMAGE_FIELDS or key == "type":
            raise UnsupportedError(
                f"ImageGeneration.options[{key!r}] names a field elelem writes itself"
            )
        out[key] = value
    return out


def _mcp_tool(server: RemoteMCP) -> dict[str, JSONValue]:
    """The ``mcp`` tool of a provider-hosted MCP server; the authorization
    token goes into this body only (it is a secret)."""
    out: dict[str, JSONValue] = {
        "type": "mcp",
        "server_label": server.name,
        "server_url": server.url,
    }
    if server.description:
        out["server_description"] = server.description
    if server.allowed_tools is not None:
        out["allowed_tools"] = list(server.allowed_tools)
    if server.authorization:
        out["authorization"] = server.authorization
    if server.require_approval is not None:
        out["require_approval"] = server.require_approval
    return out


HOSTED_TOOLS = HostedTools(
    "OpenAI Responses",
    {
        "web_search": _web_search,
        "code_execution": _code_execution,
        "file_search": _file_search,
        "image_generation": lambda tool, site: site.tools.append(_image_generation(tool)),
        "remote_mcp": lambda tool, site: site.tools.append(_mcp_tool(tool)),
        # Client-executed: their call items are tool calls the loop runs.
        "shell": lambda tool, site: site.tools.append(shell_tool(tool)),
        "apply_patch": lambda tool, site: site.tools.append({"type": "apply_patch"}),
        "computer_use": computer_row,
        "tool_search": lambda tool, site: site.tools.append({"type": "tool_search"}),
        "x_search": x_search,
    },
)
"""The hosted tools Responses spells (xAI's search its own way,
:mod:`.xai_tools`); every other (web fetch) is reported dropped (:mod:`elelem.shapes.hosted_tools`)."""


OPTION_KEYS = check_table(
    "OpenAI Responses",
    {
        "max_tokens": ("max_output_tokens",),
        "temperature": ("temperature",),
        "top_p": ("top_p",),
        "stop": NotTaken("OpenAI Responses has no stop parameter"),
        "seed": NotTaken("OpenAI Responses has no seed parameter"),
    },
)
"""Where the Responses API takes each sampling option."""

TOOL_CHOICE = ToolChoiceSpelling(
    ("tool_choice",),
    {"auto": "auto", "none": "none", "any": "required", "required": "required"},
    lambda name: {"type": "function", "name": name},
)
"""How the Responses API spells ``tool_choice``."""


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The Responses request for ``request`` sent to ``provider``: native replay
    of ``provider``'s own items, portable encoding of the rest."""
    check_request(request.messages, LIMITS)
    builder = InputItems(provider, stored=request.options.extra.get("store") is True)
    builder.revise(request.response_payloads)
    state, lost = continues(
        request.messages,
        request.response_payloads,
        provider,
        request.options.extra,
        RESPONSE_FORMAT,
        held_state,
    )
    for index, message in enumerate(request.messages):
        if state is None or index >= state.start:
            # Continuing the provider's state: only the new input is sent.
            builder.message(index, message)
    dropped = builder.dropped
    dropped.extend(lost)
    body: dict[str, JSONValue] = {"model": request.model}
    if request.system:
        body["instructions"] = request.system
    body["input"] = msgspec.to_builtins(builder.items)
    # Native fields (``strict``, ``defer_loading``...) sit on the tool object.
    tools: list[JSONValue] = [
        tool_definition(spec, SHAPE_NAME, TOOL_FIELDS, kind="function") for spec in request.tools
    ]
    HOSTED_TOOLS.spell_tools(request.hosted_tools, HostedSite(str(provider), body, tools, dropped))
    options = request.options
    sampling_options(options, OPTION_KEYS, body, dropped)
    not_taken(options.context_editing, "OpenAI Responses", dropped)
    if options.reasoning is not None:
        # Reasoning options at all mean the caller wants to see the reasoning:
        # summaries are sent only when asked for.
        body["reasoning"] = {"summary": "auto"}
        if options.reasoning.effort is not None:
            body["reasoning"] = {"effort": options.reasoning.effort, "summary": "auto"}
        if options.reasoning.budget_tokens is not None:
            dropped.add(
                "options.reasoning.budget_tokens",
                "budget_tokens",
                UNSUPPORTED,
                "Responses takes an effort level, not a budget",
            )
    tool_choice(options, TOOL_CHOICE, body, dropped)
    if options.cache is not None:
        openai_cache_fields(options.cache, body)
    if options.output is not None:
        body["text"] = {"format": responses_format(options.output)}
    # Stateless by default: every item is replayed in full, so reasoning must
    # come back encrypted rather than stored server-side; a conversation the
    # provider stores stays stored (its items replay by id).
    body["store"] = builder.conversation_stored or state is not None
    if state is not None:
        body.update(state.fields)
    body["include"] = ["reasoning.encrypted_content"]
    body["stream"] = stream
    return finished_request(RESPONSES_PATH, body, options, dropped, stream)


def native_items(
    message: Message, provider: ProviderId, *, stored: bool = False
) -> list[dict[str, Any]]:
    """The input items native replay rebuilds from one assistant message.

    ``stored`` says the request sets ``store: true``; otherwise reasoning items
    without ``encrypted_content`` are left out (the provider could not resolve them).
    """
    return assistant_wire(message, provider, stored=stored)[0]


def assistant_wire(
    message: Message, provider: ProviderId, *, stored: bool = False
) -> tuple[list[dict[str, Any]], list[Drop]]:
    """The input items native replay sends back for ``message``, and what it dropped.

    The hook ``elelem inspect --wire-replay`` calls.
    """
    builder = InputItems(provider, stored=stored)
    builder.assistant(0, message)
    return builder.items, [
        msgspec.structs.replace(d, where=d.where.removeprefix("messages[0]."))
        for d in builder.dropped.items
    ]


__all__ = [
    "ACCEPTS",
    "BLOCK_TABLES",
    "HOSTED_TOOLS",
    "OPTION_KEYS",
    "RESPONSES_PATH",
    "SHAPE_NAME",
    "TOOL_CHOICE",
    "TOOL_FIELDS",
    "assistant_wire",
    "encode_request",
    "native_items",
]
