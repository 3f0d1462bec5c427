"""What each Responses output item becomes.

Every rule that decides how an output item or annotation maps to the neutral
vocabulary lives here, so the streaming parser, the non-streaming mapping and
the encoder agree by construction (finish reasons and usage are
:mod:`~elelem.shapes.openai_responses.mapping`'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from elelem.shapes.common import checked_payload
from elelem.vocabulary import (
    APPROVAL,
    APPROVAL_REQUESTED,
    ActivityId,
    Attribution,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    Source,
    neutral_activity_name,
)
from elelem.vocabulary.json import JSONValue, decode_json

ITEM = "item"
"""Payload format: one raw output item, replayed verbatim as an input item."""

MESSAGE_PART = "message-part"
"""Payload format of a text block: ``{"item": message item without its parts,
"part": the raw content part, "output_index": the item's place in its
response}``; native replay regroups consecutive parts of one item (same id and
place: an id alone is not unique).  A part whose text is the block's own
is kept without it (its :data:`TEXT_PARTS` field), and replay puts the
block's text back."""

TEXT_PARTS = {"output_text": "text", "refusal": "refusal"}
"""The content parts that hold text, and the field that holds it."""


def with_text(part: Mapping[str, Any], text: str) -> dict[str, Any]:
    """A text ``part`` kept without its text (:data:`MESSAGE_PART`) with
    ``text``, its block's, put back; any other part as it is."""
    whole = dict(part)
    field = TEXT_PARTS.get(str(whole.get("type")))
    if field is not None and field not in whole:
        whole[field] = text
    return whole


STORED = "stored"
"""Payload format on a reasoning block whose response was stored server-side
(``store: true``): the provider keeps the item, so replay sends it by its id
even without ``encrypted_content``, and the follow-up is stored too."""

REVISED = "revised-items"
"""Finish payload: the items the final response object restated otherwise
than their ``output_item.done`` (another ``encrypted_content``), each
``{"output_index", "item": the final snapshot, "streamed": the done one}``.
The block keeps the streamed one; native replay sends the final one."""

ANNOTATION = "annotation"
"""Payload format of an attribution's ``replay``: the raw annotation."""

HOSTED_TOOLS: dict[str, str] = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "mcp_call": "mcp",
    "mcp_list_tools": "mcp",
    "mcp_approval_request": "mcp",
    "shell_call": "shell",
    "shell_call_output": "shell",
    "tool_search_call": "tool_search",
    "tool_search_output": "tool_search",
}
"""Item types the provider runs itself -> the tool type (its prefix: a versioned
type such as ``web_search_preview`` starts with it) whose item it is."""

HOSTED_NAMES: dict[str, str] = {
    kind: neutral_activity_name(tool) for kind, tool in HOSTED_TOOLS.items()
}
"""Item types the provider runs itself, and their neutral activity names (the
tool type through the one table of :func:`elelem.vocabulary.neutral_activity_name`)."""

CLIENT_CALL_NAMES: dict[str, str] = {
    "local_shell_call": "local_shell",
    "apply_patch_call": "apply_patch",
    "shell_call": "shell",
    "tool_search_call": "tool_search",
    "computer_call": "computer",
}
"""Item types the caller executes whose arguments elelem synthesizes (the tool
name and the JSON of the item's action), besides function and custom calls."""

OUTPUT_TYPES: dict[str, str] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "local_shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "shell_call": "shell_call_output",
    "tool_search_call": "tool_search_output",
    "computer_call": "computer_call_output",
}
"""The input item type that answers each client call item type."""


def shell_output(content: str, is_error: bool) -> list[Any]:
    """A ``shell_call_output``'s ``output`` list for a tool result's text: the
    list itself when the handler wrote one (:class:`elelem.tools.ShellTool`
    does: one ``{stdout, stderr, outcome}`` per command), else the text as
    the stderr (an error: a refusal, a timeout) or stdout of one command."""
    try:
        value = msgspec.json.decode(content)
    except msgspec.DecodeError:
        value = None
    if isinstance(value, list) and all(isinstance(v, dict) and "outcome" in v for v in value):
        return value
    code = 1 if is_error else 0
    out, err = ("", content) if is_error else (content, "")
    return [{"stdout": out, "stderr": err, "outcome": {"type": "exit", "exit_code": code}}]


def checked_reasoning(
    raw: dict[str, Any], provider: ProviderId, where: str
) -> tuple[dict[str, Any], ProviderPayload | None]:
    """A reasoning item as it replays, and the record of its malformed
    ``encrypted_content`` (a string, or null when not included, by the
    reasoning item's documented form) if it came as anything else: the item
    then replays without it, as one that held none would."""
    encrypted = raw.get("encrypted_content")
    if encrypted is None or isinstance(encrypted, str):
        return raw, None
    bad = checked_payload(provider, "encrypted_content", encrypted, str, where)
    return {k: v for k, v in raw.items() if k != "encrypted_content"}, bad


def is_xai(provider: str) -> bool:
    """True for xAI, whose server-side tools arrive as ``custom_tool_call``
    items (the last resort of :func:`classify`: the wire decides first)."""
    return provider == "xai" or provider.startswith("xai-") or provider.startswith("xai:")


def declared_client_tools(tools: Any) -> frozenset[str] | None:
    """The names of the client tools (``function``, ``custom``) a response's
    ``tools`` list declares; None where the response showed no list."""
    if not isinstance(tools, list) or not tools:
        return None
    return frozenset(
        str(t.get("name"))
        for t in tools
        if isinstance(t, dict) and t.get("type") in ("function", "custom") and t.get("name")
    )


def classify(
    item: Mapping[str, Any],
    provider: str,
    client_tools: frozenset[str] | None,
    declared: frozenset[str] | None = None,
) -> str:
    """The role of an output item: ``message``, ``reasoning``, ``call`` (a client
    tool call), ``hosted`` (the provider ran it) or ``unknown`` (kept raw).

    A ``custom_tool_call`` is the caller's only when the caller declared a
    tool of its name; the wire shows which: the request's client tools, else
    the ``tools`` the response echoes (``declared``).  A name neither
    declares is a tool the provider ran (xAI's ``x_keyword_search``…), on any
    provider name; a known server-side function name is one too.  Only where
    nothing shows does the provider name decide."""
    kind = item.get("type")
    if kind in ("message", "reasoning", "function_call"):
        return str(kind)
    if kind == "custom_tool_call":
        name = str(item.get("name") or "")
        for names in (client_tools, declared):
            if names is not None:
                return "call" if name in names else "hosted"
        if neutral_activity_name(name) != name:
            return "hosted"
        return "hosted" if is_xai(provider) else "call"
    if kind == "shell_call":
        env = item.get("environment")
        hosted_env = isinstance(env, dict) and env.get("type") not in (None, "local")
        return "hosted" if hosted_env else "call"
    if kind == "shell_call_output":
        return "hosted"
    if kind in ("tool_search_call", "tool_search_output"):
        return "call" if item.get("execution") == "client" else "hosted"
    if kind in ("local_shell_call", "apply_patch_call", "computer_call"):
        return "call"
    if kind in HOSTED_NAMES:
        return "hosted"
    return "unknown"


def call_identity(item: Mapping[str, Any]) -> tuple[str, str]:
    """The (call id, tool name) of a client call item."""
    kind = str(item.get("type"))
    call_id = item.get("call_id") or item.get("id") or ""
    if kind in ("function_call", "custom_tool_call"):
        name = item.get("name") or ""
    else:
        name = CLIENT_CALL_NAMES.get(kind, kind)
    return str(call_id), str(name)


def synthesized_arguments(item: Mapping[str, Any]) -> str:
    """The argument JSON of a client call whose item has no ``arguments`` text."""
    kind = item.get("type")
    if kind == "custom_tool_call":
        return json_text(str(item.get("input") or ""))
    if kind == "apply_patch_call":
        return json_text(item.get("operation"))
    if kind == "tool_search_call":
        return json_text(item.get("arguments"))
    if kind == "computer_call":
        # The action (or the batch of them) and the safety checks the
        # provider attached: what the approval callback is shown.
        keys = ("action", "actions", "pending_safety_checks")
        return json_text({k: item[k] for k in keys if item.get(k)})
    return json_text(item.get("action"))


def json_text(value: Any) -> str:
    """Compact JSON text of ``value``."""
    return msgspec.json.encode(value).decode()


def _parse_json_object(text: Any) -> JSONValue:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value: JSONValue = decode_json(text)
    except msgspec.DecodeError:
        return {"arguments": text}
    return value


def _without(obj: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in keys}


def hosted_name(item: Mapping[str, Any]) -> str:
    """The neutral activity name of a hosted item (xAI names its server-side
    function in ``custom_tool_call.name``: ``x_keyword_search`` -> ``x_search``)."""
    kind = str(item.get("type"))
    if kind == "custom_tool_call":
        return neutral_activity_name(str(item.get("name") or kind))
    return HOSTED_NAMES.get(kind, kind)


def hosted_input(item: Mapping[str, Any]) -> JSONValue:
    """The normalized invocation input of a hosted item (query, code, command…)."""
    kind = item.get("type")
    if "arguments" in item and kind not in ("mcp_call", "mcp_approval_request", "tool_search_call"):
        # xAI reports its server tools function-style, with JSON arguments.
        return _parse_json_object(item.get("arguments"))
    if kind == "web_search_call":
        action = item.get("action")
        return _without(action, "sources") if isinstance(action, dict) else None
    if kind == "file_search_call":
        return {"queries": item.get("queries") or []}
    if kind == "code_interpreter_call":
        return {"code": item.get("code"), "container_id": item.get("container_id")}
    if kind in ("mcp_call", "mcp_approval_request"):
        given: dict[str, JSONValue] = {
            "server_label": item.get("server_label"),
            "name": item.get("name"),
            "arguments": item.get("arguments"),
        }
        if kind == "mcp_approval_request":
            # The caller must answer before the provider calls the tool.
            given[APPROVAL] = APPROVAL_REQUESTED
        elif item.get("approval_request_id"):
            given["approval_request_id"] = item.get("approval_request_id")
        return given
    if kind == "mcp_list_tools":
        return {"server_label": item.get("server_label")}
    if kind == "shell_call":
        action = item.get("action")
        commands = action.get("commands") if isinstance(action, dict) else None
        return {"commands": commands or []}
    if kind in ("shell_call_output", "tool_search_output"):
        return {"call_id": item.get("call_id")} if item.get("call_id") else None
    if kind == "tool_search_call":
        return item.get("arguments") if isinstance(item.get("arguments"), dict) else None
    if kind == "custom_tool_call":
        return _parse_json_object(item.get("input"))
    return None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def hosted_summary(item: Mapping[str, Any]) -> str:
    """A short human-readable outcome of a finished hosted item (untrusted text)."""
    kind = item.get("type")
    if kind == "web_search_call":
        action = item.get("action")
        if isinstance(action, dict):
            atype = action.get("type")
            if atype == "open_page":
                return f"opened {action.get('url') or 'a page'}"
            if atype in ("find", "find_in_page"):
                return f'found "{action.get("pattern", "")}" in {action.get("url") or "a page"}'
            sources = action.get("sources")
            query = action.get("query") or ""
            text = f'searched "{query}"' if query else "searched"
            if isinstance(sources, list):
                text += f" → {_plural(len(sources), 'source')}"
            return text
        query = hosted_input(item)
        if isinstance(query, dict) and query.get("query"):
            return f'searched "{query["query"]}"'
        return "searched"
    if kind == "file_search_call":
        results = item.get("results")
        if isinstance(results, list):
            return _plural(len(results), "result")
        return _plural(len(item.get("queries") or []), "query")
    if kind == "code_interpreter_call":
        outputs = item.get("outputs")
        if isinstance(outputs, list):
            return _plural(len(outputs), "output")
        return "ran code"
    if kind == "image_generation_call":
        fmt = item.get("output_format")
        return f"generated {fmt} image" if fmt else "generated image"
    if kind == "mcp_call":
        error = item.get("error")
        return f"error: {error}" if error else f"called {item.get('name') or 'tool'}"
    if kind == "mcp_list_tools":
        return _plural(len(item.get("tools") or []), "tool")
    if kind == "mcp_approval_request":
        return f"approval requested for {item.get('name') or 'tool'}"
    if kind == "shell_call":
        action = item.get("action")
        commands = action.get("commands") if isinstance(action, dict) else None
        return _plural(len(commands) if isinstance(commands, list) else 0, "command")
    if kind == "shell_call_output":
        codes = []
        for out in item.get("output") or []:
            outcome = out.get("outcome") if isinstance(out, dict) else None
            if isinstance(outcome, dict) and outcome.get("type") == "exit":
                codes.append(str(outcome.get("exit_code")))
            elif isinstance(outcome, dict):
                codes.append(str(outcome.get("type")))
        return "exit " + ", ".join(codes) if codes else "no output"
    if kind == "tool_search_output":
        return _plural(len(item.get("tools") or []), "tool")
    status = item.get("status")
    return str(status) if status else ""


def hosted_state(item: Mapping[str, Any]) -> str:
    """``completed`` or ``failed`` for a finished hosted item."""
    status = item.get("status")
    if status in ("failed", "incomplete", "cancelled") or item.get("error"):
        return "failed"
    return "completed"


def tool_version(item_type: str, tools: list[Any]) -> str | None:
    """The tool type the response declared for a hosted item (its wire version)."""
    prefix = HOSTED_TOOLS.get(item_type)
    if prefix is None:
        return None
    for tool in tools:
        if isinstance(tool, dict) and str(tool.get("type", "")).startswith(prefix):
            return str(tool["type"])
    return None


def started(item: Mapping[str, Any]) -> HostedActivity:
    """The ``started`` transition of a hosted item."""
    return HostedActivity(
        id=ActivityId(str(item.get("id") or item.get("call_id") or "")),
        name=hosted_name(item),
        state="started",
        input=hosted_input(item),
    )


def finished(item: dict[str, Any], provider: ProviderId, version: str | None) -> HostedActivity:
    """The terminal transition of a hosted item, carrying the raw item for replay."""
    return HostedActivity(
        id=ActivityId(str(item.get("id") or item.get("call_id") or "")),
        name=hosted_name(item),
        state="failed" if hosted_state(item) == "failed" else "completed",
        input=hosted_input(item),
        summary=hosted_summary(item),
        payload=ProviderPayload(provider, ITEM, version, item),
    )


# -- annotations ---------------------------------------------------------------


def _utf16_to_code_points(text: str, unit: int) -> int | None:
    encoded = text.encode("utf-16-le")
    if unit * 2 > len(encoded):
        return None
    try:
        return len(encoded[: unit * 2].decode("utf-16-le"))
    except UnicodeDecodeError:
        return None


def _anchor(annotation: Mapping[str, Any]) -> str | None:
    kind = annotation.get("type")
    if kind == "url_citation":
        url = annotation.get("url")
        return url if isinstance(url, str) and url else None
    if kind == "container_file_citation":
        name = annotation.get("filename")
        return name if isinstance(name, str) and name else None
    return None


def verified_range(annotation: Mapping[str, Any], text: str) -> tuple[int, int] | None:
    """The annotation's span of ``text`` in code points, or None.

    The wire gives character offsets; a span is kept only when slicing the
    text there shows what the annotation points at (its URL, or its file
    name).  UTF-16 offsets that match are converted; anything else is dropped
    rather than stored stale.
    """
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        return None
    anchor = _anchor(annotation)
    if anchor is None:
        return None
    if 0 <= start <= end <= len(text) and anchor in text[start:end]:
        return (start, end)
    s16, e16 = _utf16_to_code_points(text, start), _utf16_to_code_points(text, end)
    if s16 is not None and e16 is not None and s16 <= e16 and anchor in text[s16:e16]:
        return (s16, e16)
    return None


def attribution(annotation: dict[str, Any], text: str, provider: ProviderId) -> Attribution:
    """An annotation as an :class:`Attribution`, its raw form kept for replay."""
    kind = annotation.get("type")
    title = annotation.get("title")
    url = annotation.get("url") if kind == "url_citation" else None
    if kind in ("file_citation", "container_file_citation", "file_path"):
        title = annotation.get("filename") or annotation.get("file_id") or title
    return Attribution(
        source=Source(
            url=url if isinstance(url, str) else None,
            title=title if isinstance(title, str) else None,
        ),
        range=verified_range(annotation, text),
        replay=ProviderPayload(provider, ANNOTATION, None, annotation),
    )
