"""Neutral request -> Chat Completions request body.

Assistant messages the target provider produced are replayed *natively*:
text, refusal, the model's reasoning in the form the provider's
:class:`~elelem.shapes.openai_chat.dialects.Dialect` names (DeepSeek-style
``reasoning_content``, ``reasoning``, OpenRouter ``reasoning_details``
verbatim, ``<think>`` tags, Mistral ``thinking`` parts), tool calls with their
exact ids and argument text, and delta fields nobody modelled, put back as
they came.  Every other message is encoded *portably*: text, tool calls and
results, hosted-activity summaries as text; never another provider's
payloads or reasoning; each thing left out is reported in ``dropped``.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from elelem.errors import UnsupportedError
from elelem.shapes.common import (
    Dropped,
    context_text,
    find_payload,
    hosted_lines_and_text,
    mapped_part,
    merge_extra,
    own_block,
    part_type,
    stream_event,
    stream_event_drop,
    without_remote_mcp,
)
from elelem.shapes.media import line_report
from elelem.shapes.openai_chat.dialects import Dialect, dialect_for
from elelem.shapes.openai_chat.media import encode_audio, encode_media
from elelem.shapes.openai_chat.parser import (
    AUDIO_FORMAT,
    CHOICE_FIELD_TYPE,
    FUNCTION_CALL_FORMAT,
    REASONING_DETAILS_FORMAT,
    REASONING_FIELD_FORMAT,
    REFUSAL_FORMAT,
    RESPONSE_FIELD_TYPE,
    TOOL_EXTRA_FORMAT,
    UNKNOWN_FIELD_TYPE,
)
from elelem.shapes.options import (
    Key,
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.shapes.prompt_cache import (
    automatic,
    conversation_header,
    openai_cache_fields,
    top_level_marker,
    unsupported,
)
from elelem.shapes.structured_output import (
    chat_response_format,
    json_mode_only,
    no_json_mode,
)
from elelem.vocabulary import (
    AudioBlock,
    DocumentBlock,
    Drop,
    HostedActivity,
    ImageBlock,
    JsonObjectOutput,
    JsonSchemaOutput,
    Message,
    OutputFormat,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    WebSearch,
)
from elelem.vocabulary.drop import (
    UNREPLAYABLE,
    UNSUPPORTED,
)
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.vocabulary.request import HostedTool, ToolSpec, UserLocation
from elelem.wire import EncodedRequest, ModelRequest

PATH = "/chat/completions"


"""The endpoint, relative to a provider's base URL (``…/v1``)."""


def _is_refusal(block: TextBlock, provider: str) -> bool:
    return find_payload(block.payloads, provider, REFUSAL_FORMAT) is not None


def _tool_call(
    call: ToolCallBlock, position: int, provider: str | None, dialect: Dialect
) -> dict[str, JSONValue]:
    wire: dict[str, JSONValue] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }
    if provider is not None:
        if dialect.tool_call_index:
            wire = {
                "id": call.id,
                "index": position,
                "type": "function",
                "function": wire["function"],
            }
        extra = find_payload(call.payloads, provider, TOOL_EXTRA_FORMAT)
        if extra is not None and isinstance(extra.value, dict):
            wire.update(extra.value)
            if extra.value.get("type") == "custom":
                # A custom tool's input is free text: the arguments hold it as a JSON string.
                custom = call.input
                del wire["function"]
                wire["custom"] = {
                    "name": call.name,
                    "input": custom if isinstance(custom, str) else call.arguments,
                }
    return wire


def _legacy(call: ToolCallBlock, provider: str) -> bool:
    return find_payload(call.payloads, provider, FUNCTION_CALL_FORMAT) is not None


def _think_tags(reasoning: str, text: str) -> str:
    head = f"<think>\n{reasoning}\n</think>"
    return f"{head}\n\n{text}" if text else head


_SERVER_SAID = {
    RESPONSE_FIELD_TYPE: "a response field, not part of the message",
    CHOICE_FIELD_TYPE: "a choice field, not part of the message",
}


def native_assistant(
    message: Message, provider: ProviderId, dialect: Dialect
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """The assistant message object that replays ``message`` to the provider that produced it."""
    dropped = Dropped()
    texts: list[str] = []
    refusals: list[str] = []
    reasonings: list[ReasoningBlock] = []
    reasoning_at: list[int] = []
    unknown_at: dict[int, str] = {}  # position -> type of each unknown part
    calls: list[ToolCallBlock] = []
    fields: dict[str, JSONValue] = {}
    parts: list[dict[str, JSONValue]] = []  # Mistral-style ordered content parts
    for i, part in enumerate(message.content):
        if isinstance(part, TextBlock):
            if _is_refusal(part, provider):
                refusals.append(part.text)
            else:
                texts.append(part.text)
                parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ReasoningBlock):
            reasonings.append(part)
            reasoning_at.append(i)
            parts.append({"type": "thinking", "thinking": [{"type": "text", "text": part.text}]})
        elif isinstance(part, ToolCallBlock):
            calls.append(part)
        elif isinstance(part, UnknownBlock) and part.raw.get("type") in _SERVER_SAID:
            # What the server said about its response or its choice (like
            # finish_reason): a message has no place for it, so it is left
            # out, and said so, as every shape says so of its stream events.
            dropped.add(
                f"content[{i}]",
                str(part.raw.get("field")),
                UNREPLAYABLE,
                _SERVER_SAID[str(part.raw.get("type"))],
            )
        elif isinstance(part, UnknownBlock) and part.raw.get("type") == UNKNOWN_FIELD_TYPE:
            fields[str(part.raw.get("field"))] = part.raw.get("value")
        elif isinstance(part, UnknownBlock) and stream_event(part):
            dropped.items.append(stream_event_drop(f"content[{i}]", part))
        elif isinstance(part, UnknownBlock):
            parts.append(part.raw)
            unknown_at[i] = part.type
        elif isinstance(part, HostedActivity):
            dropped.add(
                f"content[{i}]", "hosted", UNSUPPORTED, f"{part.name}: no Chat Completions form"
            )
        elif isinstance(part, AudioBlock) and (audio := _audio_id(part, provider)) is not None:
            # Generated audio goes back by its id, as the API asks of a
            # multi-turn audio conversation (the bytes are never resent).
            fields["audio"] = {"id": audio}
        elif (own := own_block(part, ACCEPTS.shape, provider)) is not None:
            # A plugin's type for a part this server sent: back as it came.
            parts.append(own)
            unknown_at[i] = part_type(part)
        else:
            dropped.add(
                f"content[{i}]",
                part_type(part),
                UNSUPPORTED,
                "no Chat Completions form in an assistant message",
            )
    text = "".join(texts)
    wire: dict[str, JSONValue] = {"role": "assistant", "content": text or None}
    if not text and not dialect.null_content:
        del wire["content"]
    mode: str = dialect.reasoning_replay
    if mode == "shown":
        # A field seen is a field replayed: a server that showed reasoning in
        # a field of its answer (an unknown host taken for OpenAI) takes it
        # back there, as its own clients send it; else it keeps it.
        shown = reasonings and find_payload(
            reasonings[0].payloads, provider, REASONING_FIELD_FORMAT
        )
        mode = "echo" if shown and isinstance(shown.value, str) else "omit"
    if mode == "echo" and reasonings:
        field = find_payload(reasonings[0].payloads, provider, REASONING_FIELD_FORMAT)
        mode = (
            field.value
            if field is not None and isinstance(field.value, str)
            else "reasoning_content"
        )
    reasoning = "".join(r.text for r in reasonings)
    unknown = bool(unknown_at)
    if mode == "thinking" or (unknown and mode != "think-tags"):
        # Mistral's form: the content is the ordered list of parts (thinking
        # parts only where that is how this provider takes reasoning back).
        wire["content"] = [
            p
            for p in parts
            if (p.get("type") == "text" and p.get("text"))
            or (p.get("type") == "thinking" and mode == "thinking")
            or p.get("type") not in ("text", "thinking")
        ]
        unknown = False
    if reasonings and mode == "reasoning_details":
        details: list[JSONValue] = []
        for r in reasonings:
            found = find_payload(r.payloads, provider, REASONING_DETAILS_FORMAT)
            if found is not None and isinstance(found.value, list):
                details.extend(found.value)
        if details:
            wire["reasoning_details"] = details
        elif reasoning:
            wire["reasoning"] = reasoning
    elif reasonings and mode == "think-tags" and reasoning:
        wire["content"] = _think_tags(reasoning, text)
    elif reasonings and mode in ("reasoning_content", "reasoning") and reasoning:
        wire[mode] = reasoning
    elif reasonings and mode == "omit":
        for i in reasoning_at:
            dropped.add(
                f"content[{i}]",
                "reasoning",
                UNREPLAYABLE,
                f"{provider} keeps reasoning server-side",
            )
    if refusals:
        wire["refusal"] = "".join(refusals)
    legacy = [c for c in calls if _legacy(c, provider)]
    if legacy:
        # The deprecated functions API: the call as the model sent it.
        call = legacy[0]
        wire["function_call"] = {"name": call.name, "arguments": call.arguments}
        calls = [c for c in calls if c is not call]
    if calls:
        wire["tool_calls"] = [_tool_call(c, n, provider, dialect) for n, c in enumerate(calls)]
    for name, value in fields.items():
        wire.setdefault(name, value)
    if wire.get("content") is None and not calls and not legacy:
        wire["content"] = ""  # without tool calls the spec requires content
    if unknown:
        for i, kind in unknown_at.items():
            dropped.add(f"content[{i}]", kind, UNSUPPORTED, "no room beside <think> tags")
    return wire, dropped.items


def same_family(produced_by: str | None, target: str) -> bool:
    """Whether native payloads from a message ``produced_by`` one model may go to
    ``target``.  Routers name models ``vendor/model``: a signature or encrypted
    reasoning from one vendor means nothing to another, so a different vendor
    prefix gets the portable encoding.  Without prefixes, one provider is one family.
    """
    if produced_by is None or "/" not in produced_by or "/" not in target:
        return True
    return produced_by.split("/", 1)[0] == target.split("/", 1)[0]


ACCEPTS = Accepts("Chat Completions", shape="openai_chat").with_blocks("image", "document", "audio")
"""What Chat Completions carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): no citations."""


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """The assistant message object a request to ``provider`` carries for
    ``message`` (native replay if ``provider`` produced it, else portable),
    and what had to be dropped."""
    if message.provider == provider:
        return native_assistant(message, provider, dialect_for(provider, message.model))
    return portable_assistant(message)


def portable_assistant(message: Message) -> tuple[dict[str, JSONValue], list[Drop]]:
    """Spell what an assistant message of another provider (or model family)
    keeps: its hosted-activity lines and text as the content, its tool calls."""
    portable = portable_message(message, ACCEPTS)
    dropped = Dropped()
    dropped.extend(portable.dropped)
    calls: list[ToolCallBlock] = []
    for i, part in portable.parts():
        if isinstance(part, ToolCallBlock):
            calls.append(part)
        elif not isinstance(part, (TextBlock, HostedActivity)):
            dropped.add(
                f"content[{i}]",
                part_type(part),
                UNSUPPORTED,
                "no Chat Completions form in an assistant message",
            )
    text = hosted_lines_and_text(portable.message.content)
    wire: dict[str, JSONValue] = {"role": "assistant", "content": text or None}
    if calls:
        wire["tool_calls"] = [_tool_call(c, n, None, Dialect()) for n, c in enumerate(calls)]
    return wire, dropped.items


def _audio_id(block: AudioBlock, provider: ProviderId) -> str | None:
    """The id of ``provider``'s generated audio ``block``, if it has one."""
    payload = find_payload(block.payloads, provider, AUDIO_FORMAT)
    value = payload.value if payload is not None else None
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _media(
    block: ImageBlock | DocumentBlock,
    provider: ProviderId,
    dialect: Dialect,
    at: str,
    dropped: list[Drop],
) -> dict[str, JSONValue] | None:
    return encode_media(
        block,
        provider,
        at,
        line_report(dropped, at),
        images=dialect.images,
        files=dialect.files,
        dialect=str(provider),
    )


def _user_messages(
    message: Message, provider: ProviderId, dialect: Dialect, functions: Mapping[str, str]
) -> tuple[list[dict[str, JSONValue]], list[Drop]]:
    out: list[dict[str, JSONValue]] = []
    portable = portable_message(message, ACCEPTS, provider)
    dropped = Dropped()
    dropped.extend(portable.dropped)
    parts: list[dict[str, JSONValue]] = []
    texts: list[str] = []
    for i, part in portable.parts():
        at = f"content[{i}]"
        if isinstance(part, ToolResultBlock):
            function = functions.get(part.call_id)
            if function is not None:
                # The answer to a deprecated function_call names the function.
                out.append({"role": "function", "name": function, "content": part.content})
            else:
                out.append({"role": "tool", "tool_call_id": part.call_id, "content": part.content})
            if part.is_error:
                dropped.add(at, "is_error", UNSUPPORTED, f"tool result {part.call_id}")
            if part.attachments:
                # A tool message takes text only: what the tool returned beside
                # its text follows in the user message, named after its call.
                parts.append(
                    {"type": "text", "text": f"[attachments of tool result {part.call_id}]"}
                )
                for k, attachment in enumerate(part.attachments):
                    where = f"{at}.attachments[{k}]"
                    wire = _media(attachment, provider, dialect, where, dropped.items)
                    if wire is not None:
                        parts.append(wire)
        elif isinstance(part, TextBlock):
            texts.append(part.text)
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, (ImageBlock, DocumentBlock)):
            wire = _media(part, provider, dialect, at, dropped.items)
            if wire is not None:
                parts.append(wire)
        elif isinstance(part, AudioBlock):
            report = line_report(dropped.items, at)
            wire = encode_audio(part, provider, at, report, audio=dialect.audio,
                                dialect=str(provider))  # fmt: skip
            if wire is not None:
                parts.append(wire)
        elif (mapped := mapped_part(part, ACCEPTS.shape, provider)) is not None:
            parts.append(mapped)  # a plugin block type's own content part
        else:
            dropped.add(
                at,
                part_type(part),
                UNSUPPORTED,
                f"no Chat Completions form in a {message.role} message",
            )
    if parts:
        content: JSONValue
        if message.source.startswith("context"):
            content = context_text(message.source, "".join(texts))
        elif len(parts) == 1 and len(texts) == 1:
            content = texts[0]
        else:
            # Separate blocks stay separate: content parts, not one joined string.
            content = list(parts)
        out.append({"role": "system" if message.role == "system" else "user", "content": content})
    return out, dropped.items


def _location(loc: UserLocation) -> dict[str, JSONValue]:
    approx = {k: v for k, v in msgspec.structs.asdict(loc).items() if v is not None}
    return {"type": "approximate", "approximate": approx}


def _hosted(
    tool: HostedTool,
    provider: str,
    dialect: Dialect,
    body: dict[str, JSONValue],
    tools: list[JSONValue],
    where: str,
    dropped: Dropped,
) -> None:
    if not isinstance(tool, WebSearch):
        raise UnsupportedError(
            f"{provider}: Chat Completions has no hosted {tool.__struct_config__.tag}"
        )
    search: WebSearch = tool
    style = dialect.web_search
    if style == "none":
        raise UnsupportedError(f"{provider}: no hosted web search on Chat Completions")
    if style == "openrouter":
        params: dict[str, JSONValue] = {}
        if search.max_uses is not None:
            params["max_uses"] = search.max_uses
        if search.allowed_domains:
            params["allowed_domains"] = list(search.allowed_domains)
        if search.blocked_domains:
            params["excluded_domains"] = list(search.blocked_domains)
        if search.user_location is not None:
            dropped.add(
                f"{where}.user_location", "user_location", UNSUPPORTED, "OpenRouter takes none"
            )
        tools.append({"type": "openrouter:web_search", "parameters": params})
        return
    options: dict[str, JSONValue] = {}
    if search.user_location is not None:
        options["user_location"] = _location(search.user_location)
    if style == "builtin":
        domains = [*search.allowed_domains, *(f"-{d}" for d in search.blocked_domains)]
        if domains:
            body["search_domain_filter"] = domains
    else:
        for name, value in (
            ("allowed_domains", search.allowed_domains),
            ("blocked_domains", search.blocked_domains),
        ):
            if value:
                dropped.add(f"{where}.{name}", name, UNSUPPORTED, f"{provider} takes none")
    if search.max_uses is not None:
        dropped.add(f"{where}.max_uses", "max_uses", UNSUPPORTED, f"{provider} takes none")
    body["web_search_options"] = options


SHAPE_NAME = "openai_chat"
"""The key of this shape's entry in :attr:`ToolSpec.native`."""

TOOL_FIELDS = frozenset({"name", "description", "parameters"})
"""The ``function``-object fields elelem writes; ``ToolSpec.native`` may not set them."""


def _tool(spec: ToolSpec, where: str, dropped: Dropped) -> dict[str, JSONValue]:
    """``{"type": "function", "function": {...}}`` for ``spec``, its native fields
    merged into the ``function`` object, where Chat Completions takes ``strict``."""
    function: dict[str, JSONValue] = {"name": spec.name}
    if spec.description:
        function["description"] = spec.description
    function["parameters"] = spec.parameters
    dropped.extend(spec.merge_native(SHAPE_NAME, function, TOOL_FIELDS), under=where)
    return {"type": "function", "function": function}


def encode_request(
    request: ModelRequest,
    *,
    provider: ProviderId,
    stream: bool = True,
    dialect: Dialect | str | None = None,
) -> EncodedRequest:
    """The Chat Completions request for ``request`` sent to ``provider``, in
    ``dialect``: a :class:`Dialect`, the name of one (looked up with the
    request's model), or None for the dialect of the provider's own name."""
    if not isinstance(dialect, Dialect):
        dialect = dialect_for(dialect or provider, request.model)
    dropped = Dropped()
    messages: list[JSONValue] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    functions: dict[str, str] = {}  # id -> name of each deprecated function_call replayed
    for n, message in enumerate(request.messages):
        if message.role == "assistant":
            if message.provider == provider and same_family(message.model, request.model):
                wire, lost = native_assistant(message, provider, dialect)
                functions.update(
                    (c.id, c.name)
                    for c in message.content
                    if isinstance(c, ToolCallBlock) and _legacy(c, provider)
                )
            else:
                wire, lost = portable_assistant(message)
            messages.append(wire)
        else:
            wires, lost = _user_messages(message, provider, dialect, functions)
            messages.extend(wires)
        dropped.extend(lost, under=f"messages[{n}]")
    body: dict[str, JSONValue] = {"model": request.model, "messages": messages, "stream": stream}
    if stream and dialect.stream_usage:
        body["stream_options"] = {"include_usage": True}
    tools: list[JSONValue] = [_tool(t, f"tools[{k}]", dropped) for k, t in enumerate(request.tools)]
    for k, hosted in without_remote_mcp(request.hosted_tools, "Chat Completions", dropped.items):
        _hosted(hosted, provider, dialect, body, tools, f"hosted_tools[{k}]", dropped)
    if tools:
        body["tools"] = tools
    headers = _options(request, provider, dialect, body, dropped)
    return EncodedRequest(
        path=PATH, body=body, headers=headers, stream=stream, dropped=tuple(dropped.items)
    )


def option_keys(dialect: Dialect) -> Mapping[str, Key]:
    """Where Chat Completions takes each sampling option, for ``dialect``
    (which names the max-tokens field: ``max_tokens`` or ``max_completion_tokens``)."""
    return check_table(
        "Chat Completions",
        {
            "max_tokens": (dialect.max_tokens_field,),
            "temperature": ("temperature",),
            "top_p": ("top_p",),
            "stop": ("stop",),
            "seed": ("seed",),
        },
    )


TOOL_CHOICE = ToolChoiceSpelling(
    ("tool_choice",),
    {"auto": "auto", "none": "none", "any": "required", "required": "required"},
    lambda name: {"type": "function", "function": {"name": name}},
)
"""How Chat Completions spells ``tool_choice``."""


def _options(
    request: ModelRequest,
    provider: ProviderId,
    dialect: Dialect,
    body: dict[str, JSONValue],
    dropped: Dropped,
) -> dict[str, str]:
    """Write the generation options into ``body``; return the headers they need."""
    opts = request.options
    headers: dict[str, str] = {}
    sampling_options(opts, option_keys(dialect), body, dropped)
    tool_choice(opts, TOOL_CHOICE, body, dropped)
    reasoning = opts.reasoning
    if reasoning is not None:
        if dialect.effort == "openrouter":
            spec: dict[str, JSONValue] = {}
            if reasoning.effort is not None:
                spec["effort"] = reasoning.effort
            if reasoning.budget_tokens is not None:
                spec["max_tokens"] = reasoning.budget_tokens
            body["reasoning"] = spec
        elif dialect.effort == "reasoning_effort":
            if reasoning.effort is not None:
                body["reasoning_effort"] = reasoning.effort
            if reasoning.budget_tokens is not None:
                dropped.add(
                    "options.reasoning.budget_tokens",
                    "budget_tokens",
                    UNSUPPORTED,
                    f"{provider} takes an effort level",
                )
        else:
            dropped.add(
                "options.reasoning",
                "reasoning",
                UNSUPPORTED,
                f"{provider} takes none on Chat Completions",
            )
    cache = opts.cache
    if cache is not None:
        if dialect.cache == "openai":
            openai_cache_fields(cache, body)
        elif dialect.cache == "cache_control":
            top_level_marker(cache, opts.extra, provider, body, dropped.items)
        elif dialect.cache == "conversation_header":
            headers.update(conversation_header(cache, provider, dropped.items))
        elif dialect.cache == "automatic":
            automatic(cache, provider, dropped.items)
        else:
            unsupported(provider, dropped.items)
    if opts.output is not None:
        _response_format(opts.output, provider, dialect, body, dropped.items)
    merge_extra(body, opts.extra)
    return headers


def _response_format(
    output: OutputFormat,
    provider: ProviderId,
    dialect: Dialect,
    body: dict[str, JSONValue],
    dropped: list[Drop],
) -> None:
    if isinstance(output, JsonSchemaOutput) and dialect.output == "json_object_only":
        body["response_format"] = {"type": "json_object"}
        json_mode_only(output, provider, dropped)
    elif isinstance(output, JsonObjectOutput) and dialect.output == "json_schema_only":
        no_json_mode(provider, dropped)
    else:
        body["response_format"] = chat_response_format(output)


__all__ = [
    "PATH",
    "SHAPE_NAME",
    "TOOL_FIELDS",
    "assistant_wire",
    "encode_request",
    "native_assistant",
    "portable_assistant",
    "same_family",
]
