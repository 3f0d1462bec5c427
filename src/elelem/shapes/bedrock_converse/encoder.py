"""Neutral request -> Bedrock Converse request body (``/model/{id}/converse[-stream]``).

Assistant messages Bedrock produced are replayed *natively*: content blocks
in order, reasoning as ``reasoningContent.reasoningText`` with its signature
(or ``redactedContent``), tool calls as ``toolUse`` with their JSON input,
text that came with citations as ``citationsContent`` (its attributions' raw
citations).
Every other message is encoded *portably* (text, tool calls, hosted
summaries as text), each thing left out reported in ``dropped``.  Converse
wants user and assistant turns to alternate, so consecutive user-side
messages (text, tool results) are merged into one.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from elelem.errors import PayloadError
from elelem.shapes.bedrock_converse.media import encode_audio, encode_media
from elelem.shapes.bedrock_converse.parser import (
    DELTAS_FORMAT,
    REDACTED_FORMAT,
    SIGNATURE_FORMAT,
)
from elelem.shapes.block_tables import BlockTable, Spelt, spell_kept, spell_native
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    context_text,
    find_payload,
    finished_request,
    hosted_activity_line,
    registered_part,
    stream_event,
    stream_event_drop,
    system_text,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.hosted_tools import HostedSite, HostedTools
from elelem.shapes.media import line_report, register_media
from elelem.shapes.options import (
    NotTaken,
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.shapes.prompt_cache import breakpoint_ttl, key_not_sent
from elelem.shapes.structured_output import no_json_mode, schema_string
from elelem.vocabulary import (
    DocumentBlock,
    Drop,
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
    WebSearch,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED, BlockSite
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.vocabulary.registry import register_block_mapping
from elelem.wire import EncodedRequest, ModelRequest


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


ACCEPTS = Accepts("Bedrock Converse", shape="bedrock_converse").with_blocks(
    "image", "document", "audio"
)
"""What Converse carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): no citations (a
Converse citation points into a document of the request)."""


def _deltas(
    part: TextBlock | ReasoningBlock | ToolCallBlock, provider: str, where: str
) -> list[dict[str, JSONValue]]:
    """The deltas nobody modelled that the parser kept on ``part``."""
    payload = find_payload(part.payloads, provider, DELTAS_FORMAT)
    if payload is None:
        return []
    value = payload.value
    if not isinstance(value, list) or not all(isinstance(d, dict) and len(d) == 1 for d in value):
        # A present but undecodable payload is an error, never a silent downgrade.
        raise PayloadError(f"{where}: {provider} {DELTAS_FORMAT} payload is not a list of deltas")
    return value


def _native_text(part: TextBlock, provider: str, where: str, dropped: Dropped) -> JSONValue:
    """A text block Bedrock produced: ``text``, or ``citationsContent`` when it
    came with citations (its attributions' raw citations, in order, or a whole
    response's block)."""
    kept: list[JSONValue] = []  # citation deltas as an older parser kept them
    whole: JSONValue = None
    for delta in _deltas(part, provider, where):
        ((key, value),) = delta.items()
        if key == "citation":
            kept.append(value)
        elif key == "citationsContent":
            whole = value
        else:
            dropped.add(where, key, UNREPLAYABLE, "a Converse delta with no request form")
    citations: list[JSONValue] = []
    for j, attribution in enumerate(part.attributions):
        replay = attribution.replay
        if replay is None or replay.provider != provider or replay.format != "citation":
            at = f"{where}.attributions[{j}]"
            dropped.add(at, "citation", UNREPLAYABLE, f"no {provider} citation payload")
        else:
            citations.append(replay.value)
    if whole is not None:
        return {"citationsContent": whole}
    if kept or citations:
        content: JSONValue = [{"text": part.text}]
        return {"citationsContent": {"content": content, "citations": kept or citations}}
    return {"text": part.text}


def _native_tool_use(
    part: ToolCallBlock, provider: str, where: str, dropped: Dropped
) -> dict[str, JSONValue]:
    """A tool call Bedrock produced: its ``toolUse`` with the fields the
    parser kept beside the call's identity and input, as they came."""
    wire = _tool_use(part, where, dropped)
    for delta in _deltas(part, provider, where):
        ((key, value),) = delta.items()
        if key == "toolUse" and isinstance(value, dict):
            fields = {k: v for k, v in value.items() if k not in ("toolUseId", "name", "input")}
            wire["toolUse"] = {**fields, **wire["toolUse"]}
        else:
            dropped.add(where, key, UNREPLAYABLE, "a Converse delta with no request form")
    return wire


def _native_reasoning(
    part: ReasoningBlock, provider: str, where: str, dropped: Dropped
) -> JSONValue | None:
    for delta in _deltas(part, provider, where):
        for key in delta:
            dropped.add(where, key, UNREPLAYABLE, "a Converse delta with no request form")
    redacted = find_payload(part.payloads, provider, REDACTED_FORMAT)
    if redacted is not None and isinstance(redacted.value, str):
        return {"reasoningContent": {"redactedContent": redacted.value}}
    if redacted is not None:
        dropped.add(where, REDACTED_FORMAT, UNREPLAYABLE, "not base64 text: not sent")
        return None
    text: dict[str, JSONValue] = {"text": part.text}
    signature = find_payload(part.payloads, provider, SIGNATURE_FORMAT)
    if signature is not None and isinstance(signature.value, str):
        text["signature"] = signature.value
    elif signature is not None:
        # A signature that is no string would be refused by the API: the
        # reasoning goes unsigned, and the record says why.
        dropped.add(where, SIGNATURE_FORMAT, UNREPLAYABLE, "not a string: not sent")
    return {"reasoningContent": {"reasoningText": text}}


def _server_block(value: JSONValue) -> bool:
    """Whether ``value`` is a Converse server tool's own block as it came:
    ``{"toolUse": {…}}`` or ``{"toolResult": {…, "content": [objects]}}``."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((kind, body),) = value.items()
    if kind not in ("toolUse", "toolResult") or not isinstance(body, dict):
        return False
    content = body.get("content", [])
    return kind == "toolUse" or (
        isinstance(content, list) and all(isinstance(c, dict) for c in content)
    )


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """The Converse assistant message for ``message``: native if ``provider``
    produced it, else portable; and what had to be dropped."""
    if message.provider != provider:
        return _portable_assistant(message, provider)
    spelt = spell_native(NATIVE_BLOCKS, message, Spelt(provider, Dropped()))
    return {"role": "assistant", "content": spelt.out}, spelt.dropped.items


def _portable_assistant(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """Spell what an assistant message of another provider keeps."""
    portable = portable_message(message, ACCEPTS)
    spelt = spell_kept(PORTABLE_BLOCKS, portable, Spelt(provider, Dropped()))
    return {"role": "assistant", "content": spelt.out}, spelt.dropped.items


SHAPE_NAME = "bedrock_converse"
"""The key of this shape's entry in :attr:`ToolSpec.native` and block mappings."""


def _media(block: ImageBlock | DocumentBlock, site: str) -> dict[str, Any] | None:
    # The built-in image and document blocks' mapping (registered below); the
    # site's context is the block's position, which names a document.
    if not isinstance(site, BlockSite):
        return None
    report = line_report(site.dropped, site.where)
    return encode_media(block, site, site.where, report, site.context or 0)


# The built-in media blocks arrive through the registry, as a plugin's do.
register_block_mapping("image", encoders={SHAPE_NAME: _media})
register_block_mapping("document", encoders={SHAPE_NAME: _media})
register_media(SHAPE_NAME, audio=encode_audio)


def _registered(
    part: object, provider: str, dropped: Dropped, at: str, index: int, *, own: bool = False
) -> dict[str, Any] | None:
    site = BlockSite(provider, at, dropped.items, index)
    return registered_part(part, SHAPE_NAME, site, "Bedrock Converse", own=own)


def _user_content(message: Message, provider: ProviderId, dropped: Dropped) -> list[JSONValue]:
    spelt = Spelt(provider, dropped)
    spelt.source = message.source
    spell_kept(USER_BLOCKS, portable_message(message, ACCEPTS, provider), spelt)
    return spelt.out


# -- the block tables ---------------------------------------------------------------


def _native_text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.append(_native_text(part, spelt.provider, spelt.at, spelt.dropped))


def _native_call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    spelt.out.append(_native_tool_use(part, spelt.provider, spelt.at, spelt.dropped))


def _native_reasoning_row(part: ReasoningBlock, spelt: Spelt) -> None:
    reasoning = _native_reasoning(part, spelt.provider, spelt.at, spelt.dropped)
    if reasoning is not None:
        spelt.out.append(reasoning)


def _native_hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    payload, provider = part.payload, spelt.provider
    if payload is not None and payload.provider == provider and _server_block(payload.value):
        # The server tool's own toolUse/toolResult block, as it came.
        spelt.out.append(payload.value)
        return
    if payload is not None and payload.provider == provider:
        detail = f"{part.name} {part.id}: not a toolUse or toolResult block; sent as text"
        spelt.dropped.add(spelt.at, "hosted", UNREPLAYABLE, detail)
    spelt.out.append({"text": hosted_activity_line(part)})


def _native_unknown_row(part: UnknownBlock, spelt: Spelt) -> None:
    if stream_event(part):
        spelt.dropped.items.append(stream_event_drop(spelt.at, part))
    else:
        _native_registered_row(part, spelt)


def _native_registered_row(part: object, spelt: Spelt) -> None:
    wire = _registered(part, spelt.provider, spelt.dropped, spelt.at, spelt.index, own=True)
    if wire is not None:
        spelt.out.append(wire)  # an image, document, or a plugin's type for a block Bedrock sent


NATIVE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Bedrock Converse (its own assistant message)",
    {
        TextBlock: _native_text_row,
        ToolCallBlock: _native_call_row,
        ReasoningBlock: _native_reasoning_row,
        HostedActivity: _native_hosted_row,
        UnknownBlock: _native_unknown_row,
    },
    _native_registered_row,
)
"""How a block of an assistant message Bedrock produced is replayed."""


def _text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.append({"text": part.text})


def _call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    spelt.out.append(_tool_use(part, spelt.at, spelt.dropped))


def _hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    spelt.out.append({"text": hosted_activity_line(part)})


def _registered_row(part: object, spelt: Spelt) -> None:
    wire = _registered(part, spelt.provider, spelt.dropped, spelt.at, spelt.index)
    if wire is not None:
        spelt.out.append(wire)  # an image, document, audio or plugin block


PORTABLE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Bedrock Converse (another provider's assistant message)",
    {TextBlock: _text_row, ToolCallBlock: _call_row, HostedActivity: _hosted_row},
    _registered_row,
)
"""How a block of another provider's assistant message is spelt (what the
portable projection kept)."""


def _user_text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.append({"text": context_text(spelt.source, part.text)})


def _user_result_row(part: ToolResultBlock, spelt: Spelt) -> None:
    inner: list[JSONValue] = [{"text": part.content}]
    for k, attachment in enumerate(part.attachments or ()):
        at = f"{spelt.at}.attachments[{k}]"
        wire = _registered(attachment, spelt.provider, spelt.dropped, at, k)
        if wire is not None:
            inner.append(wire)
    result: dict[str, JSONValue] = {
        "toolUseId": part.call_id,
        "content": inner,
        "status": "error" if part.is_error else "success",
    }
    spelt.out.append({"toolResult": result})


USER_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Bedrock Converse (a user, system or tool message)",
    {TextBlock: _user_text_row, ToolResultBlock: _user_result_row},
    _registered_row,
)
"""How a block of a user, system or tool message is spelt."""

BLOCK_TABLES = {"user": USER_BLOCKS, "native": NATIVE_BLOCKS, "portable": PORTABLE_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


TOOL_FIELDS = frozenset({"name", "description", "inputSchema"})
"""The ``toolSpec`` fields elelem writes; ``ToolSpec.native`` may not set them."""


def _tool_spec(spec: ToolSpec) -> dict[str, JSONValue]:
    """The ``toolSpec`` object for ``spec``, its native fields merged at that level."""
    tool: dict[str, JSONValue] = {
        "name": spec.name,
        # Converse requires a description; the name stands in for a missing one.
        "description": spec.description or spec.name,
        "inputSchema": {"json": spec.parameters},
    }
    spec.merge_native(SHAPE_NAME, tool, TOOL_FIELDS)
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


OPTION_KEYS = check_table(
    "Bedrock Converse",
    {
        "max_tokens": ("inferenceConfig", "maxTokens"),
        "temperature": ("inferenceConfig", "temperature"),
        "top_p": ("inferenceConfig", "topP"),
        "stop": ("inferenceConfig", "stopSequences"),
        "seed": NotTaken("Converse takes no sampling seed"),
    },
)
"""Where Converse takes each sampling option."""

TOOL_CHOICE = ToolChoiceSpelling(
    ("toolConfig", "toolChoice"),
    {
        "auto": {"auto": {}},
        "none": NotTaken("Converse has no 'none'"),
        "any": {"any": {}},
        "required": {"any": {}},
    },
    lambda name: {"tool": {"name": name}},
)
"""How Converse spells ``tool_choice`` (inside ``toolConfig``, so only with tools)."""


def _reasoning_and_output(
    opts: GenerationOptions, body: dict[str, JSONValue], dropped: Dropped
) -> None:
    """Spell ``opts.reasoning`` (a budget only) and ``opts.output`` (a schema only)."""
    reasoning = opts.reasoning
    if reasoning is not None:
        if reasoning.budget_tokens is not None:
            # The Anthropic models' field; Converse passes it to the model as is.
            body["additionalModelRequestFields"] = {
                "thinking": {"type": "enabled", "budget_tokens": reasoning.budget_tokens}
            }
        if reasoning.effort is not None:
            dropped.add(
                "options.reasoning.effort",
                "effort",
                UNSUPPORTED,
                "Converse takes a model-specific budget",
            )
        elif reasoning.budget_tokens is None:
            dropped.add(
                "options.reasoning",
                "reasoning",
                UNSUPPORTED,
                "Converse enables reasoning only with a budget_tokens",
            )
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


def _nova_grounding(search: WebSearch, site: HostedSite) -> None:
    """Web search as Nova web grounding, a ``systemTool`` of ``toolConfig``
    (https://docs.aws.amazon.com/nova/latest/userguide/grounding.html), on
    Amazon Nova models only; it takes none of the search's fields."""
    model = str(site.context)
    if "amazon.nova" not in model:
        site.drop("web_search", f"{model!r}: Converse grounds only Amazon Nova models on the web")
        return
    for name in ("max_uses", "allowed_domains", "blocked_domains", "user_location"):
        if getattr(search, name):
            site.drop(name, "Nova web grounding takes none", field=name)
    site.tools.append({"systemTool": {"name": "nova_grounding"}})


HOSTED_TOOLS = HostedTools("Bedrock Converse", {"web_search": _nova_grounding})
"""The hosted tools Converse spells (web search as Nova web grounding); every
other is reported dropped (:mod:`elelem.shapes.hosted_tools`)."""


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The Converse request for ``request``; its hosted tools through
    :data:`HOSTED_TOOLS` (system tools beside the client tools)."""
    dropped = Dropped()
    system_tools: list[Any] = []
    site = HostedSite(str(provider), {}, system_tools, dropped, request.model)
    HOSTED_TOOLS.spell(request.hosted_tools, site)
    system: list[JSONValue] = [{"text": request.system}] if request.system else []
    messages: list[dict[str, JSONValue]] = []
    for n, message in enumerate(request.messages):
        if message.role == "system":
            system.extend(
                {"text": p.text} for p in system_text(message, f"messages[{n}].", dropped)
            )
            continue
        if message.role == "assistant":
            wire, lost = assistant_wire(message, provider)
            dropped.extend(lost, under=f"messages[{n}]")
            messages.append(wire)
            continue
        lost_here = Dropped()
        content = _user_content(message, provider, lost_here)
        dropped.extend(lost_here.items, under=f"messages[{n}]")
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
    sampling_options(opts, OPTION_KEYS, body, dropped)
    not_taken(opts.context_editing, "Bedrock Converse", dropped)
    if request.tools or system_tools:
        tools: list[JSONValue] = [{"toolSpec": _tool_spec(t)} for t in request.tools]
        body["toolConfig"] = {"tools": [*tools, *system_tools]}
    if request.tools:
        tool_choice(opts, TOOL_CHOICE, body, dropped)
    elif opts.tool_choice not in (None, "auto"):
        # Converse refuses a toolChoice without tools to choose from.
        detail = f"{opts.tool_choice!r}: the request has no tools"
        dropped.add("options.tool_choice", "tool_choice", UNSUPPORTED, detail)
    _reasoning_and_output(opts, body, dropped)
    return finished_request(request_path(request.model, stream=stream), body, opts, dropped, stream)


__all__ = [
    "BLOCK_TABLES",
    "SHAPE_NAME",
    "TOOL_FIELDS",
    "assistant_wire",
    "encode_request",
    "request_path",
]
