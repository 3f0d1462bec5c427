"""Value mappings of the Anthropic Messages wire: finish reasons, usage,
hosted-tool names, versions and result summaries.  Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from elelem.shapes.common import wire_int
from elelem.vocabulary import (
    CodeExecution,
    Usage,
    WebFetch,
    WebSearch,
    hosted_counts,
    neutral_activity_name,
)
from elelem.vocabulary import hosted_counter_name as _neutral_counter
from elelem.vocabulary.json import JSONValue
from elelem.wire import ModelRequest

PROVIDER_NAME = "anthropic"

FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
    "model_context_window_exceeded": "max-tokens",
    "pause_turn": "paused",
    "refusal": "refused",
}
"""Anthropic ``stop_reason`` -> neutral finish reason; any other value is kept as-is."""

DEFAULT_TOOL_VERSIONS: dict[str, str] = {
    "web_search": "web_search_20250305",
    "web_fetch": "web_fetch_20250910",
    "code_execution": "code_execution_20250825",
    "memory": "memory_20250818",
    "computer_use": "computer_20250124",
}
"""The wire version the encoder picks for a hosted tool when the caller pins none."""

TOOL_BETAS: dict[str, str] = {
    "web_fetch_20250910": "web-fetch-2025-09-10",
    "code_execution_20250522": "code-execution-2025-05-22",
    "code_execution_20250825": "code-execution-2025-08-25",
    "memory_20250818": "context-management-2025-06-27",
    "computer_20241022": "computer-use-2024-10-22",
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
    "tool_search_tool_regex_20251119": "advanced-tool-use-2025-11-20",
    "tool_search_tool_bm25_20251119": "advanced-tool-use-2025-11-20",
}
"""``anthropic-beta`` flags a hosted tool version needs."""


def finish_reason(stop_reason: str) -> str:
    """The neutral finish reason for an Anthropic ``stop_reason`` (unknown ones kept)."""
    return FINISH_REASONS.get(stop_reason, stop_reason)


def hosted_counter_name(wire: str) -> str:
    """``web_search_requests`` -> ``web_search``: the neutral name of a server-tool counter
    (the one table of :func:`elelem.vocabulary.hosted_counter_name`)."""
    return _neutral_counter(wire)


def map_usage(raw: Mapping[str, Any]) -> Usage:
    """A full :class:`Usage` from an Anthropic usage object (cumulative values).

    ``output_tokens`` includes the thinking tokens that
    ``output_tokens_details.thinking_tokens`` counts: they are ``reasoning``,
    and ``output`` the rest.
    """
    server = raw.get("server_tool_use")
    hosted = hosted_counts(server, "_requests") if isinstance(server, Mapping) else {}
    output = wire_int(raw.get("output_tokens"))
    details = raw.get("output_tokens_details")
    thinking = wire_int(details.get("thinking_tokens")) if isinstance(details, Mapping) else 0
    reasoning = min(thinking, output)
    return Usage(
        input=wire_int(raw.get("input_tokens")),
        output=output - reasoning,
        cache_read=wire_int(raw.get("cache_read_input_tokens")),
        cache_write=wire_int(raw.get("cache_creation_input_tokens")),
        reasoning=reasoning,
        hosted=hosted,
        raw=dict(raw),
    )


def result_tool_name(result_type: str) -> str:
    """The server tool a ``*_tool_result`` block answers (``web_search_tool_result`` -> ``web_search``)."""
    return (
        result_type[: -len("_tool_result")] if result_type.endswith("_tool_result") else result_type
    )


HOSTED_CALLS: frozenset[str] = frozenset({"server_tool_use", "mcp_tool_use"})
"""Block types of a call the provider runs itself: a server tool, or a tool of
an MCP server the MCP connector calls (``mcp_servers``)."""


def is_hosted_result(block_type: str) -> bool:
    """True for the result blocks of Anthropic server tools, ``mcp_tool_result``
    (which answers an ``mcp_tool_use``) included; the bare ``tool_result`` is a
    client tool result."""
    return block_type.endswith("_tool_result") and block_type != "tool_result"


def mcp_input(block: Mapping[str, Any]) -> JSONValue:
    """The neutral input of an ``mcp_tool_use`` block: which server, which tool,
    with what arguments (the same keys as an OpenAI ``mcp_call``)."""
    return {
        "server_label": block.get("server_name"),
        "name": block.get("name"),
        "arguments": block.get("input"),
    }


def mcp_outcome(block: Mapping[str, Any], tool: object) -> tuple[bool, str]:
    """Whether an ``mcp_tool_result`` failed (its ``is_error``), and its summary."""
    if block.get("is_error") is True:
        return True, f"error from {tool or 'tool'}"
    return False, f"called {tool or 'tool'}"


def tool_versions_from_wire(tools: object) -> dict[str, str]:
    """Map tool name -> versioned tool type from a wire request's ``tools`` list."""
    out: dict[str, str] = {}
    if not isinstance(tools, list):
        return out
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        name, typ = tool.get("name"), tool.get("type")
        if isinstance(name, str) and isinstance(typ, str) and typ not in ("custom", ""):
            out[name] = typ
    return out


def tool_versions_from_request(request: ModelRequest) -> dict[str, str]:
    """Map tool name -> versioned tool type for the hosted tools of a neutral request."""
    out: dict[str, str] = {}
    for tool in request.hosted_tools:
        if isinstance(tool, (WebSearch, WebFetch, CodeExecution)):
            name = hosted_tool_name(tool)
            out[name] = tool.version or DEFAULT_TOOL_VERSIONS[name]
    return out


def hosted_tool_name(tool: WebSearch | WebFetch | CodeExecution) -> str:
    """The Anthropic tool name of a neutral hosted tool."""
    if isinstance(tool, WebSearch):
        return "web_search"
    if isinstance(tool, WebFetch):
        return "web_fetch"
    return "code_execution"


def version_for(name: str, versions: Mapping[str, str]) -> str | None:
    """The tool version selected for server tool ``name`` (the wire name, e.g.
    ``bash_code_execution``, which runs under the ``code_execution`` tool), or
    None where unknown."""
    if name in versions:
        return versions[name]
    family = neutral_activity_name(name)
    if family in versions:
        return versions[family]
    for tool, version in versions.items():
        # tool_search_tool_regex answers as tool_search_tool_result
        if tool.startswith(name + "_") or name.startswith(tool + "_"):
            return version
    return None


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def result_outcome(block: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a server-tool result block failed, and its short summary.

    Error objects (content ``type`` ending in ``_error``, or an ``error_code``)
    fail with the error code as summary; search results count their hits, a
    fetch names the host, code execution gives its exit status.
    """
    content: JSONValue = block.get("content")
    if isinstance(content, list):
        kinds = {c.get("type") for c in content if isinstance(c, Mapping)}
        if kinds <= {"web_search_result"}:
            return False, _plural(len(content), "result", "results")
        return False, _plural(len(content), "item", "items")
    if not isinstance(content, Mapping):
        return False, ""
    ctype = str(content.get("type", ""))
    code = content.get("error_code")
    if ctype.endswith("_error") or code is not None:
        return True, str(code) if code is not None else ctype
    if "return_code" in content:
        return False, f"exit {content.get('return_code')}"
    if ctype == "web_fetch_result":
        url = content.get("url")
        host = urlsplit(url).hostname if isinstance(url, str) else None
        return False, f"fetched {host or url or 'a page'}"
    if ctype.endswith("tool_search_result"):
        refs = content.get("tool_references")
        n = len(refs) if isinstance(refs, list) else 0
        return False, _plural(n, "tool found", "tools found")
    if ctype.startswith("text_editor_code_execution_"):
        return False, _editor_summary(ctype, content)
    if ctype == "advisor_result":
        return False, "advice given"
    return False, ctype


def _editor_summary(ctype: str, content: Mapping[str, Any]) -> str:
    action = ctype.removeprefix("text_editor_code_execution_").removesuffix("_result")
    if action == "create":
        return "updated file" if content.get("is_file_update") else "created file"
    if action == "view":
        lines = content.get("num_lines") or content.get("total_lines")
        return f"viewed {lines} lines" if isinstance(lines, int) else "viewed file"
    if action == "str_replace":
        return "edited file"
    return action


__all__ = [
    "DEFAULT_TOOL_VERSIONS",
    "FINISH_REASONS",
    "HOSTED_CALLS",
    "PROVIDER_NAME",
    "TOOL_BETAS",
    "finish_reason",
    "hosted_counter_name",
    "hosted_tool_name",
    "is_hosted_result",
    "map_usage",
    "mcp_input",
    "mcp_outcome",
    "result_outcome",
    "result_tool_name",
    "tool_versions_from_request",
    "tool_versions_from_wire",
    "version_for",
]
