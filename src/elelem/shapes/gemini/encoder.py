"""The Gemini request encoder: a neutral request -> ``generateContent`` JSON.

Messages Google produced are replayed *natively*: every part is rebuilt from
the stored blocks and payloads, with each ``thoughtSignature`` on the part it
arrived on (text, thought or function call; a signature that came on its own
empty part is sent on its own empty part again), code execution parts
verbatim, unknown parts verbatim.  Everything else is encoded *portably*:
text, tool calls and results, hosted activity as a text summary; foreign
payloads and reasoning are never sent, and each dropped item is reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from elelem.errors import PayloadError
from elelem.shapes.block_tables import BlockTable, Spelt, spell_kept, spell_native
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    context_text,
    find_payload,
    finished_request,
    hosted_activity_line,
    registered_part,
    system_text,
    tool_definition,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.gemini.computer import (
    computer_calls,
    computer_response,
    computer_row,
    wire_args,
    wire_call,
)
from elelem.shapes.gemini.media import LIMITS, encode_audio, encode_media
from elelem.shapes.hosted_tools import HostedSite, HostedTools, hosted_tool_tag, no_skills
from elelem.shapes.media import check_request, register_media
from elelem.shapes.options import (
    ToolChoiceSpelling,
    check_table,
    sampling_options,
    tool_choice,
)
from elelem.shapes.prompt_cache import automatic
from elelem.shapes.structured_output import unlabelled
from elelem.vocabulary import (
    BytesSource,
    CodeExecution,
    Drop,
    FileSearch,
    GenerationOptions,
    HostedActivity,
    ImageBlock,
    JsonSchemaOutput,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.drop import (
    EMPTY,
    UNREPLAYABLE,
    UNSUPPORTED,
    BlockSite,
)
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.wire import EncodedRequest, ModelRequest

API_VERSION = "v1beta"

SHAPE_NAME = "gemini"
"""The key of this shape's entry in :attr:`ToolSpec.native`."""

TOOL_FIELDS = frozenset({"name", "description", "parameters", "parametersJsonSchema"})
"""The function-declaration fields elelem writes; ``ToolSpec.native`` may not set
them (``parameters`` too: Gemini rejects it next to ``parametersJsonSchema``)."""

PORTABLE_SIGNATURE = "skip_thought_signature_validator"
"""The value Google documents for a function call Gemini did not generate
(transferred from another model): Gemini 3 rejects an unsigned call in the
current turn, and accepts this placeholder in place of a real signature."""

HOSTED_TOOL_KEYS: dict[str, str] = {
    "web_search": "google_search",
    "web_fetch": "url_context",
    "code_execution": "code_execution",
}
"""Neutral hosted tool -> the Gemini ``tools[]`` entry key."""


def request_path(model: str, *, stream: bool) -> str:
    """``/v1beta/models/{model}:streamGenerateContent?alt=sse`` (or ``:generateContent``)."""
    name = quote(model.removeprefix("models/"), safe="-._~")
    if stream:
        return f"/{API_VERSION}/models/{name}:streamGenerateContent?alt=sse"
    return f"/{API_VERSION}/models/{name}:generateContent"


def _value(
    payloads: Iterable[ProviderPayload], provider: str, fmt: str, kind: type, at: str
) -> Any:
    payload = find_payload(payloads, provider, fmt)
    if payload is None:
        return None
    if not isinstance(payload.value, kind):
        # A present but undecodable payload is an error, never a silent downgrade.
        raise PayloadError(f"{at}: {provider} {fmt} payload is not a {kind.__name__}", "$.value")
    return payload.value


def _signed(
    part: dict[str, Any], payloads: tuple[ProviderPayload, ...], provider: str, at: str
) -> dict[str, Any]:
    fields = _value(payloads, provider, "part_fields", dict, at)
    if fields:
        part.update(fields)
    sig = _value(payloads, provider, "thought_signature", str, at)
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def _native_text(
    block: TextBlock | ReasoningBlock, provider: str, at: str, *, thought: bool
) -> list[dict[str, Any]]:
    part: dict[str, Any] = {"text": block.text}
    if thought:
        part["thought"] = True
    layout = _value(block.payloads, provider, "signature_layout", str, at)
    if layout == "own-part":
        # The signature arrived on an empty part after the text: send it there.
        fields = _value(block.payloads, provider, "part_fields", dict, at)
        if fields:
            part.update(fields)
        tail: dict[str, Any] = {"text": ""}
        if thought:
            tail["thought"] = True
        tail["thoughtSignature"] = _value(block.payloads, provider, "thought_signature", str, at)
        return [part, tail]
    return [_signed(part, block.payloads, provider, at)]


def _native_call(block: ToolCallBlock, provider: str, dropped: Dropped, at: str) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if find_payload(block.payloads, provider, "synthesized_id") is None:
        call["id"] = block.id
    computer = wire_call(block, provider)
    call["name"] = block.name if computer is None else computer[0]
    if computer is not None:
        # A computer-use action goes back under its predefined name, its args as they came.
        if computer[1]:
            call["args"] = wire_args(arguments_object(block.arguments, block.id, at, dropped))
    elif block.arguments.strip():
        call["args"] = arguments_object(block.arguments, block.id, at, dropped)
    extra = _value(block.payloads, provider, "call_fields", dict, at)
    if extra:
        call.update(extra)
    return _signed({"functionCall": call}, block.payloads, provider, at)


def _native_text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.extend(_native_text(part, spelt.provider, spelt.at, thought=False))


def _native_thought_row(part: ReasoningBlock, spelt: Spelt) -> None:
    spelt.out.extend(_native_text(part, spelt.provider, spelt.at, thought=True))


def _native_call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    spelt.out.append(_native_call(part, spelt.provider, spelt.dropped, spelt.at))


def _native_hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    payload, provider = part.payload, spelt.provider
    if payload is not None and payload.provider == provider and payload.format == "part":
        if not isinstance(payload.value, dict):
            raise PayloadError(f"{spelt.at}: {provider} part payload is not an object", "$.value")
        spelt.out.append(dict(payload.value))
    else:
        # Grounding (search, URL context) is response metadata, never a part:
        # the request has no room for it, and the record says so.
        detail = f"{part.name} {part.state}: grounding metadata, no request part"
        spelt.dropped.add(spelt.at, "hosted", UNREPLAYABLE, detail)


def _native_unknown_row(part: UnknownBlock, spelt: Spelt) -> None:
    raw = part.raw.get("part")
    if isinstance(raw, dict):
        spelt.out.append(dict(raw))
    else:
        spelt.dropped.add(spelt.at, part.type, UNREPLAYABLE, "not a Gemini part")


def _result_row(part: ToolResultBlock, spelt: Spelt) -> None:
    spelt.out.extend(_function_response(part, spelt.extra, spelt.provider, spelt.dropped, spelt.at))


def _native_image_row(part: ImageBlock, spelt: Spelt) -> None:
    if isinstance(part.source, BytesSource):
        # An image the model generated: its bytes and signature back as they came.
        inline = {"mimeType": part.media_type, "data": part.source.blob.base64()}
        spelt.out.append(_signed({"inlineData": inline}, part.payloads, spelt.provider, spelt.at))
    else:
        _native_registered_row(part, spelt)


def _native_registered_row(part: object, spelt: Spelt) -> None:
    # An image, document, audio or plugin block: its mapping, or as it came.
    spelt.out.extend(_registered(part, spelt.provider, spelt.dropped, spelt.at, own=True))


NATIVE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Gemini (its own model content)",
    {
        TextBlock: _native_text_row,
        ReasoningBlock: _native_thought_row,
        ToolCallBlock: _native_call_row,
        HostedActivity: _native_hosted_row,
        UnknownBlock: _native_unknown_row,
        ToolResultBlock: _result_row,
        ImageBlock: _native_image_row,
    },
    _native_registered_row,
)
"""How a part of model content Gemini produced is replayed (``extra`` the
request's :class:`CallIndex`)."""


# The built-in media blocks arrive through the registry, as a plugin's do.
register_media(SHAPE_NAME, image=encode_media, document=encode_media, audio=encode_audio)


def _registered(
    part: object, provider: str, dropped: Dropped, at: str, *, own: bool = False
) -> list[dict[str, Any]]:
    site = BlockSite(provider, at, dropped.items)
    wire = registered_part(part, SHAPE_NAME, site, "Gemini", own=own)
    return [] if wire is None else [wire]


# --------------------------------------------------------------------------
# portable encoding
# --------------------------------------------------------------------------


ACCEPTS = Accepts("Gemini", shape="gemini").with_blocks("image", "document", "audio")
"""What Gemini carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): no citations (grounding
is response metadata, never request input)."""


class _Portable(Spelt):
    # Gemini 3 wants the first call of a turn signed; a foreign call has no
    # signature: the first call of an assistant message gets the portable one.
    unsigned = False


def _hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    spelt.out.append({"text": hosted_activity_line(part)})


def _text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.append({"text": context_text(spelt.source, part.text)})


def _call_row(part: ToolCallBlock, spelt: _Portable) -> None:
    given = arguments_object(part.arguments, part.id, spelt.at, spelt.dropped)
    call: dict[str, Any] = {"functionCall": {"id": part.id, "name": part.name, "args": given}}
    if spelt.unsigned:
        call["thoughtSignature"] = PORTABLE_SIGNATURE
        spelt.unsigned = False
    spelt.out.append(call)


def _registered_row(part: object, spelt: Spelt) -> None:
    # An image, document, audio or plugin block: through its mapping.
    spelt.out.extend(_registered(part, spelt.provider, spelt.dropped, spelt.at))


PORTABLE_BLOCKS: BlockTable[_Portable] = BlockTable(
    "Gemini",
    {
        HostedActivity: _hosted_row,
        TextBlock: _text_row,
        ToolCallBlock: _call_row,
        ToolResultBlock: _result_row,
    },
    _registered_row,
)
"""How a part of any other message is spelt (what the portable projection
kept; ``extra`` the request's :class:`CallIndex`)."""

BLOCK_TABLES = {"native": NATIVE_BLOCKS, "portable": PORTABLE_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


def _function_response(
    part: ToolResultBlock,
    calls: CallIndex,
    provider: str,
    dropped: Dropped,
    at: str,
) -> list[dict[str, Any]]:
    """The ``functionResponse`` part, then the images and documents the tool
    returned as parts of the same content."""
    name, real_id = calls.get(part.call_id, (part.name or "", True))
    response: dict[str, Any] = {}
    if real_id:
        response["id"] = part.call_id
    attachments = list(enumerate(part.attachments or ()))
    computer = calls.computer.get(part.call_id)
    if computer is not None:
        # A computer action's answer: the screenshot inside the functionResponse.
        shot = next(((k, a) for k, a in attachments if isinstance(a, ImageBlock)), None)

        def screenshot() -> dict[str, Any] | None:
            if shot is None:
                return None
            wire = _registered(shot[1], provider, dropped, f"{at}.attachments[{shot[0]}]")
            return wire[0] if wire else None

        response.update(computer_response(part, *computer, screenshot))
        attachments = [(k, a) for k, a in attachments if shot is None or k != shot[0]]
    else:
        response["name"] = part.name or name
        response["response"] = (
            {"error": part.content} if part.is_error else {"content": part.content}
        )
    out = [{"functionResponse": response}]
    for k, attachment in attachments:
        out.extend(_registered(attachment, provider, dropped, f"{at}.attachments[{k}]"))
    return out


# --------------------------------------------------------------------------
# the request
# --------------------------------------------------------------------------


def _wire_message(
    message: Message,
    provider: str,
    dropped: Dropped,
    where: str,
    calls: CallIndex,
) -> dict[str, Any]:
    """One message as a Gemini ``Content``: replayed natively when
    ``provider`` produced it, else what it keeps for Gemini (from another
    provider, or a user's)."""
    if message.role == "assistant" and message.provider == provider:
        native = Spelt(provider, dropped)
        native.extra = calls
        parts = spell_native(NATIVE_BLOCKS, message, native, where).out
    else:
        spelt = _Portable(provider, dropped)
        spelt.source, spelt.extra = message.source, calls
        spelt.unsigned = message.role == "assistant"
        portable = portable_message(message, ACCEPTS, provider)
        parts = spell_kept(PORTABLE_BLOCKS, portable, spelt, where.rstrip(".")).out
    return {"role": "model" if message.role == "assistant" else "user", "parts": parts}


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, Any], tuple[Drop, ...]]:
    """The wire ``Content`` for one assistant message, and what was dropped
    (``where`` relative to the message: ``content[2]``).

    Native replay when ``message.provider == provider``, portable otherwise.
    """
    dropped = Dropped()
    calls = _call_index([message], provider)
    return _wire_message(message, provider, dropped, "", calls), tuple(dropped.items)


class CallIndex(dict[str, tuple[str, bool]]):
    """Every tool call's id -> (its wire name, whether the provider gave that
    id); ``computer``: each computer-use call's id -> (its predefined
    function name, whether it carried a safety decision)."""

    def __init__(self, computer: dict[str, tuple[str, bool]]) -> None:
        super().__init__()
        self.computer = computer


def _call_index(messages: Iterable[Message], provider: str) -> CallIndex:
    """Every tool call's id -> (name, whether the provider gave that id)."""
    messages = list(messages)
    found = CallIndex(computer_calls(messages, provider))
    for message in messages:
        for part in message.content:
            if isinstance(part, ToolCallBlock):
                synthesized = message.provider == provider and any(
                    p.provider == provider and p.format == "synthesized_id" for p in part.payloads
                )
                found[part.id] = (part.name, not synthesized)
    return found


def hosted_tool_definition(
    tool: WebSearch | WebFetch | CodeExecution,
    dropped: Dropped | None = None,
    where: str = "hosted_tools",
) -> dict[str, Any]:
    """The Gemini ``tools[]`` entry of a neutral hosted tool (options it has no
    room for reported in ``dropped``, under ``where``)."""
    key = HOSTED_TOOL_KEYS[hosted_tool_tag(tool)]
    if dropped is not None and isinstance(tool, (WebSearch, WebFetch)):
        for option in ("max_uses", "allowed_domains", "blocked_domains", "user_location"):
            if getattr(tool, option, None):
                dropped.add(f"{where}.{option}", option, UNSUPPORTED, f"{key} has no such option")
    return {key: {}}


def file_search_definition(
    tool: FileSearch, dropped: Dropped, where: str = "hosted_tools"
) -> dict[str, Any]:
    """The Gemini ``fileSearch`` tool: store names, ``topK``, and a
    ``metadataFilter`` expression (Gemini takes a string filter only; other
    filters are reported in ``dropped``, under ``where``)."""
    spec: dict[str, Any] = {"fileSearchStoreNames": list(tool.stores)}
    if tool.max_results is not None:
        spec["topK"] = tool.max_results
    if isinstance(tool.filters, str):
        spec["metadataFilter"] = tool.filters
    elif tool.filters is not None:
        dropped.add(
            f"{where}.filters", "filters", UNSUPPORTED, "fileSearch takes a metadataFilter string"
        )
    return {"fileSearch": spec}


def _hosted(tool: WebSearch | WebFetch | CodeExecution, site: HostedSite) -> None:
    no_skills(tool, site, "Gemini")
    site.tools.append(hosted_tool_definition(tool, site.dropped, site.where))


HOSTED_TOOLS = HostedTools(
    "Gemini",
    {
        "web_search": _hosted,
        "web_fetch": _hosted,
        "code_execution": _hosted,
        "file_search": lambda tool, site: site.tools.append(
            file_search_definition(tool, site.dropped, site.where)
        ),
        "computer_use": computer_row,
    },
)
"""The hosted tools generateContent spells; every other (image generation,
hosted MCP) is reported dropped (:mod:`elelem.shapes.hosted_tools`)."""


OPTION_KEYS = check_table(
    "Gemini",
    {
        "max_tokens": ("generationConfig", "maxOutputTokens"),
        "temperature": ("generationConfig", "temperature"),
        "top_p": ("generationConfig", "topP"),
        "stop": ("generationConfig", "stopSequences"),
        "seed": ("generationConfig", "seed"),
    },
)
"""Where ``generateContent`` takes each sampling option."""

TOOL_CHOICE = ToolChoiceSpelling(
    ("toolConfig", "functionCallingConfig"),
    {
        "auto": {"mode": "AUTO"},
        "none": {"mode": "NONE"},
        "any": {"mode": "ANY"},
        "required": {"mode": "ANY"},
    },
    lambda name: {"mode": "ANY", "allowedFunctionNames": [name]},
)
"""How ``generateContent`` spells ``tool_choice``."""


def _reasoning_and_output(opts: GenerationOptions, body: dict[str, Any], dropped: Dropped) -> None:
    """Spell ``opts.reasoning`` (``thinkingConfig``) and ``opts.output``
    (``responseJsonSchema``) inside ``generationConfig``."""
    if opts.reasoning is not None or opts.output is not None:
        generation: dict[str, Any] = body.setdefault("generationConfig", {})
        if opts.reasoning is not None:
            thinking: dict[str, Any] = {"includeThoughts": True}
            if opts.reasoning.budget_tokens is not None:
                thinking["thinkingBudget"] = opts.reasoning.budget_tokens
            if opts.reasoning.effort is not None:
                thinking["thinkingLevel"] = opts.reasoning.effort
            generation["thinkingConfig"] = thinking
        if opts.output is not None:
            generation["responseMimeType"] = "application/json"
            if isinstance(opts.output, JsonSchemaOutput):
                # responseJsonSchema takes JSON Schema itself; responseSchema takes
                # an OpenAPI subset that rejects e.g. type arrays and additionalProperties.
                generation["responseJsonSchema"] = opts.output.schema
                unlabelled(opts.output, "Gemini", dropped.items)


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The ``generateContent`` request for ``request``, to ``provider``."""
    check_request(request.messages, LIMITS)
    dropped = Dropped()
    system = [request.system] if request.system else []
    calls = _call_index(request.messages, provider)
    contents: list[dict[str, Any]] = []
    for i, message in enumerate(request.messages):
        if message.role == "system":
            system.append("".join(p.text for p in system_text(message, f"messages[{i}].", dropped)))
            continue
        wire = _wire_message(message, provider, dropped, f"messages[{i}].", calls)
        if not wire["parts"]:
            dropped.add(f"messages[{i}]", "message", EMPTY, "nothing left to send")
            continue
        contents.append(wire)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    tools: list[dict[str, Any]] = []
    if request.tools:
        declarations = [
            tool_definition(t, SHAPE_NAME, TOOL_FIELDS, schema="parametersJsonSchema")
            for t in request.tools
        ]
        tools.append({"functionDeclarations": declarations})
    HOSTED_TOOLS.spell_tools(request.hosted_tools, HostedSite(str(provider), body, tools, dropped))
    opts = request.options
    tool_choice(opts, TOOL_CHOICE, body, dropped)
    sampling_options(opts, OPTION_KEYS, body, dropped)
    not_taken(opts.context_editing, "Gemini", dropped)
    _reasoning_and_output(opts, body, dropped)
    if opts.cache is not None:
        # Implicit caching is on by itself; explicit caches are a separate
        # resource (cachedContents) this request-level option cannot create.
        automatic(opts.cache, "Gemini", dropped.items)
    return finished_request(request_path(request.model, stream=stream), body, opts, dropped, stream)


__all__ = [
    "API_VERSION",
    "BLOCK_TABLES",
    "HOSTED_TOOL_KEYS",
    "PORTABLE_SIGNATURE",
    "SHAPE_NAME",
    "TOOL_FIELDS",
    "assistant_wire",
    "encode_request",
    "hosted_tool_definition",
    "request_path",
]
