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

import copy
from collections.abc import Iterable
from typing import Any

import msgspec

from elelem.errors import UnsupportedError
from elelem.shapes.common import (
    Dropped,
    context_text,
    find_payload,
    hosted_activity_line,
    malformed_drops,
    merge_extra,
    own_block,
    part_type,
    registered_part,
    stream_event,
    stream_event_drop,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.hosted_tools import HostedSite, HostedTools, no_skills
from elelem.shapes.media import check_request, generated_by, line_report
from elelem.shapes.openai_responses import _items
from elelem.shapes.openai_responses.client_tools import computer_output, computer_row, shell_tool
from elelem.shapes.openai_responses.media import LIMITS, encode_media, restore_generated
from elelem.shapes.openai_responses.state import continuation
from elelem.shapes.openai_responses.xai_tools import x_search, xai_web_search
from elelem.shapes.options import (
    NotTaken,
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.shapes.prompt_cache import openai_cache_fields
from elelem.shapes.structured_output import responses_format
from elelem.vocabulary import (
    APPROVAL_RESPONSE,
    BytesSource,
    CodeExecution,
    DocumentBlock,
    Drop,
    FileSearch,
    HostedActivity,
    ImageBlock,
    ImageGeneration,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    RemoteMCP,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    WebSearch,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED, BlockSite
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.vocabulary.registry import register_block_mapping
from elelem.wire import EncodedRequest, ModelRequest

RESPONSES_PATH = "responses"
"""Path of the endpoint, relative to an OpenAI-style base URL ending in ``/v1``."""

SHAPE_NAME = "openai_responses"
"""The key of this shape's entry in :attr:`ToolSpec.native` and block mappings."""

TOOL_FIELDS = frozenset({"type", "name", "description", "parameters"})
"""The function-tool fields elelem writes; ``ToolSpec.native`` may not set them."""


def _portable_text(block: TextBlock) -> str:
    if not block.attributions:
        return block.text
    lines = []
    for n, a in enumerate(block.attributions, 1):
        title = a.source.title or a.source.url or "source"
        lines.append(f"[{n}] {title} <{a.source.url}>" if a.source.url else f"[{n}] {title}")
    return block.text + "\n\nSources:\n" + "\n".join(lines)


ACCEPTS = Accepts("OpenAI Responses", citations=True, shape="openai_responses").with_blocks(
    "image", "document"
)
"""What Responses carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): citations, as a list of
sources after the text."""


def _media(block: ImageBlock | DocumentBlock, site: str) -> dict[str, Any] | None:
    # The built-in image and document blocks' mapping (registered below).
    if not isinstance(site, BlockSite):
        return None
    return encode_media(block, site, site.where, line_report(site.dropped, site.where))


# The built-in media blocks arrive through the registry, as a plugin's do.
register_block_mapping("image", encoders={SHAPE_NAME: _media})
register_block_mapping("document", encoders={SHAPE_NAME: _media})


class _Input:
    """Builds the ``input`` list, one message at a time."""

    def __init__(self, provider: ProviderId, stored: bool = False) -> None:
        self.provider = provider
        self.stored = stored
        # The history holds items of a response stored server-side: the
        # conversation is in stored mode, so the follow-up is stored too.
        self.conversation_stored = False
        # Streamed item (its JSON) -> the final snapshot its response restated.
        self.revised: dict[bytes, dict[str, Any]] = {}
        self.items: list[dict[str, Any]] = []
        self.dropped = Dropped()
        self.call_types: dict[str, str] = {}
        # The pending safety checks of each computer call, acknowledged in its output.
        self.safety_checks: dict[str, list[Any]] = {}
        self._open: dict[str, Any] | None = None
        self._open_place: Any = None  # the open item's output_index, where recorded
        # Images the provider generated in the message being replayed, by the
        # id of the image_generation_call that made each: its item gets the bytes.
        self._generated: dict[str, ImageBlock] = {}

    def media(self, block: object, where: str) -> dict[str, Any] | None:
        """A registered block's input part (an image, a document, a plugin's
        block), through its mapping; reported where there is none."""
        site = BlockSite(self.provider, where, self.dropped.items)
        return registered_part(block, SHAPE_NAME, site, "OpenAI Responses")

    def flush(self) -> None:
        self._open = None

    def add(self, item: dict[str, Any]) -> None:
        self.flush()
        if self.revised:
            item = self.revised.get(msgspec.json.encode(item), item)
        self.items.append(item)

    def revise(self, payloads: Iterable[ProviderPayload]) -> None:
        """Take the final snapshots of items a response restated (its
        :data:`~elelem.shapes.openai_responses._items.REVISED` finish payload)."""
        for payload in payloads:
            if payload.provider != self.provider or payload.format != _items.REVISED:
                continue
            for entry in payload.value if isinstance(payload.value, list) else ():
                if isinstance(entry, dict) and isinstance(entry.get("item"), dict):
                    self.revised[msgspec.json.encode(entry.get("streamed"))] = dict(entry["item"])

    def _native_part(self, shell: dict[str, Any], part: dict[str, Any], place: Any = None) -> None:
        item_id = shell.get("id")
        if (
            self._open is not None
            and item_id is not None
            and self._open.get("id") == item_id
            and place == self._open_place
        ):
            self._open["content"].append(part)
            return
        item = copy.deepcopy(shell)
        item["content"] = [part]
        self.items.append(item)
        self._open = item
        self._open_place = place

    # -- messages -----------------------------------------------------------------------

    def message(self, index: int, message: Message) -> None:
        if message.role == "assistant":
            self.assistant(index, message)
        else:
            self.user_or_system(index, message)
        self.flush()

    def user_or_system(self, index: int, message: Message) -> None:
        role = message.role
        parts: list[dict[str, Any]] = []

        def close() -> None:
            if parts:
                content: Any = [dict(p) for p in parts]
                self.add({"type": "message", "role": role, "content": content})
                parts.clear()

        portable = portable_message(message, ACCEPTS, self.provider)
        self.dropped.extend(portable.dropped, under=f"messages[{index}]")
        for j, part in portable.parts():
            if isinstance(part, TextBlock):
                parts.append(
                    {"type": "input_text", "text": context_text(message.source, part.text)}
                )
            elif isinstance(part, ToolResultBlock):
                close()
                self.add(self.tool_result(part, f"messages[{index}].content[{j}]"))
            elif isinstance(part, UnknownBlock) and part.type == APPROVAL_RESPONSE:
                # The caller's answer to an mcp_approval_request: an input item as it is.
                close()
                self.add(dict(part.raw))
            elif (wire := self.media(part, f"messages[{index}].content[{j}]")) is not None:
                parts.append(wire)  # an image, document or plugin block's input part
        close()

    def tool_result(self, block: ToolResultBlock, where: str) -> dict[str, Any]:
        native = find_payload(block.payloads, self.provider, _items.ITEM)
        if native is not None and isinstance(native.value, dict):
            return dict(native.value)
        call_type = self.call_types.get(block.call_id, "function_call")
        out_type = _items.OUTPUT_TYPES.get(call_type, "function_call_output")
        item: dict[str, Any] = {"type": out_type, "call_id": block.call_id}
        if out_type == "apply_patch_call_output":
            item["status"] = "failed" if block.is_error else "completed"
        item["output"] = block.content
        if out_type == "shell_call_output":
            item["output"] = _items.shell_output(block.content, block.is_error)
        if out_type == "computer_call_output":
            checks = self.safety_checks.get(block.call_id)
            return computer_output(block, item, self.media, checks, self.dropped, where)
        if block.attachments and out_type == "function_call_output":
            # Images and files a tool returned go inside its output.
            output: list[dict[str, Any]] = [{"type": "input_text", "text": block.content}]
            for k, attachment in enumerate(block.attachments):
                wire = self.media(attachment, f"{where}.attachments[{k}]")
                if wire is not None:
                    output.append(wire)
            item["output"] = output
        elif block.attachments:
            detail = f"{len(block.attachments)} of tool result {block.call_id}: {out_type} takes text only"
            self.dropped.add(f"{where}.attachments", "attachments", UNSUPPORTED, detail)
        return item

    def assistant(self, index: int, message: Message) -> None:
        self._generated = {}
        if message.provider != self.provider:
            self.portable(index, message)
            return
        malformed_drops(message, self.dropped, f"messages[{index}]")
        for part in message.content:
            if isinstance(part, ImageBlock) and isinstance(part.source, BytesSource):
                made_by = generated_by(part, self.provider)
                if made_by is not None:
                    self._generated[made_by] = part
        for j, part in enumerate(message.content):
            where = f"messages[{index}].content[{j}]"
            if isinstance(part, TextBlock):
                self.text(part, True, where)
            elif isinstance(part, ReasoningBlock):
                raw = find_payload(part.payloads, self.provider, _items.ITEM)
                kept = find_payload(part.payloads, self.provider, _items.STORED) is not None
                self.conversation_stored |= kept
                if raw is not None and isinstance(raw.value, dict):
                    if self.stored or kept or raw.value.get("encrypted_content"):
                        self.add(dict(raw.value))
                    else:
                        # Without store the provider kept no copy to refer to,
                        # and without encrypted content there is nothing to send.
                        self.dropped.add(
                            where,
                            "reasoning",
                            UNREPLAYABLE,
                            f"item {raw.value.get('id')} has no encrypted_content and the"
                            " request is not stored",
                        )
                else:
                    self.dropped.add(
                        where, "reasoning", UNREPLAYABLE, f"no {self.provider} reasoning item"
                    )
            elif isinstance(part, ToolCallBlock):
                self.tool_call(part, True)
            elif isinstance(part, HostedActivity):
                self.hosted(part, message, where)
            elif isinstance(part, UnknownBlock):
                self.unknown(part, where)
            elif isinstance(part, ToolResultBlock):
                self.add(self.tool_result(part, where))
            elif isinstance(part, ImageBlock) and generated_by(part, self.provider):
                continue  # its image_generation_call item carries it
            elif isinstance(part, (ImageBlock, DocumentBlock)):
                kind = "image" if isinstance(part, ImageBlock) else "document"
                detail = "Responses takes none in an assistant message"
                self.dropped.add(where, kind, UNSUPPORTED, detail)
            elif (own := own_block(part, ACCEPTS.shape, self.provider)) is not None:
                self.add(own)  # a plugin's type for an item the provider sent
            else:
                self.dropped.add(where, part_type(part), UNSUPPORTED, "no Responses form")

    def portable(self, index: int, message: Message) -> None:
        """Spell what an assistant message of another provider keeps."""
        portable = portable_message(message, ACCEPTS, self.provider)
        self.dropped.extend(portable.dropped, under=f"messages[{index}]")
        for j, part in portable.parts():
            if isinstance(part, TextBlock):
                self.text(part, False)
            elif isinstance(part, ToolCallBlock):
                self.tool_call(part, False)
            elif isinstance(part, HostedActivity):
                line = hosted_activity_line(part)
                self.add({"type": "message", "role": "assistant", "content": line})
            elif isinstance(part, ToolResultBlock):
                self.add(self.tool_result(part, f"messages[{index}].content[{j}]"))
            else:
                where = f"messages[{index}].content[{j}]"
                self.dropped.add(where, part_type(part), UNSUPPORTED, "no Responses form")

    def text(self, block: TextBlock, native: bool, where: str = "") -> None:
        p = find_payload(block.payloads, self.provider, _items.MESSAGE_PART) if native else None
        if p is not None and isinstance(p.value, dict):
            shell, part = p.value.get("item"), p.value.get("part")
            if isinstance(shell, dict) and isinstance(part, dict):
                # The provider's own final part replays, even where the stream's
                # deltas contradicted it (the block then holds what was shown).
                self._native_part(shell, dict(part), p.value.get("output_index"))
                return
        if p is not None:
            detail = "not a message item and part: the text is sent without them"
            self.dropped.add(where, _items.MESSAGE_PART, UNREPLAYABLE, detail)
        self.add({"type": "message", "role": "assistant", "content": _portable_text(block)})

    def tool_call(self, block: ToolCallBlock, native: bool) -> None:
        raw = find_payload(block.payloads, self.provider, _items.ITEM) if native else None
        if raw is not None and isinstance(raw.value, dict):
            item = dict(raw.value)
            self.call_types[block.id] = str(item.get("type"))
            checks = item.get("pending_safety_checks")
            if isinstance(checks, list) and checks:
                self.safety_checks[block.id] = checks
            self.add(item)
            return
        self.call_types[block.id] = "function_call"
        self.add(
            {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": block.arguments or "{}",
            }
        )

    def hosted(self, activity: HostedActivity, message: Message, where: str) -> None:
        payload = activity.payload
        if payload is not None and payload.provider == self.provider:
            if payload.format == _items.ITEM and isinstance(payload.value, dict):
                self.add(restore_generated(dict(payload.value), self._generated))
            else:
                # Not an output item: nothing to send back, and said so.
                detail = f"{activity.name} {activity.id}: a {payload.format} payload, not an item"
                self.dropped.add(where, "hosted", UNREPLAYABLE, detail)
            return
        if activity.state == "started":
            # Its terminal transition (with the raw item) follows, or it never ended.
            if not _has_terminal(message, activity):
                self.dropped.add(
                    where, "hosted", UNREPLAYABLE, f"{activity.name} {activity.id} never finished"
                )
            return
        self.add(
            {"type": "message", "role": "assistant", "content": hosted_activity_line(activity)}
        )

    def unknown(self, block: UnknownBlock, where: str) -> None:
        kind = block.type
        if stream_event(block):
            self.dropped.items.append(stream_event_drop(where, block))
            return
        if kind == "error" or kind.startswith("response."):
            self.dropped.add(where, kind, UNREPLAYABLE, "a stream event, not an input item")
            return
        raw = dict(block.raw)
        if kind == "message" and isinstance(raw.get("content"), list):
            parts = raw["content"]
            shell = {k: ([] if k == "content" else v) for k, v in raw.items()}
            if parts:
                for part in parts:
                    self._native_part(shell, part)
                return
        self.add(raw)


def _has_terminal(message: Message, activity: HostedActivity) -> bool:
    return any(
        isinstance(p, HostedActivity) and p.id == activity.id and p.terminal
        for p in message.content
    )


def _web_search(tool: WebSearch, site: HostedSite) -> None:
    if _items.is_xai(site.provider):
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
    builder = _Input(provider, stored=request.options.extra.get("store") is True)
    builder.revise(request.response_payloads)
    state, lost = continuation(
        request.messages, request.response_payloads, provider, request.options.extra
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
    tools: list[JSONValue] = []
    for k, spec in enumerate(request.tools):
        fn: dict[str, JSONValue] = {"type": "function", "name": spec.name}
        if spec.description:
            fn["description"] = spec.description
        fn["parameters"] = spec.parameters
        # Native fields (``strict``, ``defer_loading``...) sit on the tool object.
        dropped.extend(spec.merge_native(SHAPE_NAME, fn, TOOL_FIELDS), under=f"tools[{k}]")
        tools.append(fn)
    HOSTED_TOOLS.spell(request.hosted_tools, HostedSite(str(provider), body, tools, dropped))
    if tools:
        body["tools"] = tools
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
    merge_extra(body, options.extra)
    return EncodedRequest(
        path=RESPONSES_PATH, body=body, stream=stream, dropped=tuple(dropped.items)
    )


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
    builder = _Input(provider, stored=stored)
    builder.assistant(0, message)
    return builder.items, [
        msgspec.structs.replace(d, where=d.where.removeprefix("messages[0]."))
        for d in builder.dropped.items
    ]
