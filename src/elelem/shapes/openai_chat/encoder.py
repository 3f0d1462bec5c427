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

from elelem.shapes.block_tables import BlockTable, Spelt, spell_kept
from elelem.shapes.common import (
    FUNCTION_FIELDS,
    Dropped,
    context_text,
    function_tool,
    merge_extra,
    registered_part,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.hosted_tools import HostedSite, HostedTools, domain_lists
from elelem.shapes.media import line_report
from elelem.shapes.openai_chat.assistant import (
    ACCEPTS,
    NATIVE_BLOCKS,
    PORTABLE_BLOCKS,
    assistant_wire,
    legacy_call,
    native_assistant,
    portable_assistant,
    same_family,
)
from elelem.shapes.openai_chat.dialects import Dialect, dialect_for
from elelem.shapes.openai_chat.media import encode_audio, encode_media
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
    ImageBlock,
    JsonObjectOutput,
    JsonSchemaOutput,
    Message,
    OutputFormat,
    ProviderId,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    WebSearch,
)
from elelem.vocabulary.drop import (
    UNSUPPORTED,
    BlockSite,
)
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.portable import portable_message
from elelem.vocabulary.registry import register_block_mapping
from elelem.vocabulary.request import UserLocation
from elelem.wire import EncodedRequest, ModelRequest

PATH = "/chat/completions"


"""The endpoint, relative to a provider's base URL (``…/v1``)."""


def _media(block: ImageBlock | DocumentBlock, site: str) -> dict[str, JSONValue] | None:
    # The built-in image and document blocks' mapping (registered below).
    if not isinstance(site, BlockSite):
        return None
    dialect: Dialect = site.context
    provider = ProviderId(str(site))
    return encode_media(
        block,
        provider,
        site.where,
        line_report(site.dropped, site.where),
        images=dialect.images,
        files=dialect.files,
        dialect=str(provider),
    )


def _audio(block: AudioBlock, site: str) -> dict[str, JSONValue] | None:
    # The built-in audio block's mapping (registered below).
    if not isinstance(site, BlockSite):
        return None
    dialect: Dialect = site.context
    report = line_report(site.dropped, site.where)
    return encode_audio(
        block, ProviderId(str(site)), site.where, report, audio=dialect.audio, dialect=str(site)
    )


WIRE = "Chat Completions"
SHAPE_NAME = "openai_chat"
"""The key of this shape's entry in :attr:`ToolSpec.native` and block mappings."""

# The built-in media blocks arrive through the registry, as a plugin's do.
register_block_mapping("image", encoders={SHAPE_NAME: _media})
register_block_mapping("document", encoders={SHAPE_NAME: _media})
register_block_mapping("audio", encoders={SHAPE_NAME: _audio})


def _user_messages(
    message: Message, provider: ProviderId, dialect: Dialect, functions: Mapping[str, str]
) -> tuple[list[dict[str, JSONValue]], list[Drop]]:
    out: list[dict[str, JSONValue]] = []
    dropped = Dropped()
    site = BlockSite(provider, dropped=dropped.items, context=dialect)
    spelt = _User(provider, dropped, out, site)
    spelt.extra = functions
    spell_kept(USER_BLOCKS, portable_message(message, ACCEPTS, provider), spelt)
    parts, texts = spelt.parts, spelt.texts
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


class _User(Spelt):
    # A user, system or tool message: ``out`` the wire messages before it
    # (one per tool result), ``parts`` and ``texts`` its own content,
    # ``site`` where a registered block is spelt (the dialect its context),
    # ``extra`` the deprecated function calls' names by id.
    def __init__(
        self, provider: str, dropped: Dropped, out: list[dict[str, JSONValue]], site: BlockSite
    ) -> None:
        super().__init__(provider, dropped, out)
        self.site = site
        self.parts: list[dict[str, JSONValue]] = []
        self.texts: list[str] = []


def _result_row(part: ToolResultBlock, spelt: _User) -> None:
    function = spelt.extra.get(part.call_id)
    if function is not None:
        # The answer to a deprecated function_call names the function.
        spelt.out.append({"role": "function", "name": function, "content": part.content})
    else:
        spelt.out.append({"role": "tool", "tool_call_id": part.call_id, "content": part.content})
    if part.is_error:
        spelt.dropped.add(spelt.at, "is_error", UNSUPPORTED, f"tool result {part.call_id}")
    if part.attachments:
        # A tool message takes text only: what the tool returned beside
        # its text follows in the user message, named after its call.
        spelt.parts.append({"type": "text", "text": f"[attachments of tool result {part.call_id}]"})
        for k, attachment in enumerate(part.attachments):
            site = spelt.site.at(f"{spelt.at}.attachments[{k}]")
            wire = registered_part(attachment, SHAPE_NAME, site, WIRE)
            if wire is not None:
                spelt.parts.append(wire)


def _text_row(part: TextBlock, spelt: _User) -> None:
    spelt.texts.append(part.text)
    spelt.parts.append({"type": "text", "text": part.text})


def _registered_row(part: object, spelt: _User) -> None:
    wire = registered_part(part, SHAPE_NAME, spelt.site.at(spelt.at), WIRE)
    if wire is not None:
        spelt.parts.append(wire)  # an image, document, audio or plugin block's content part


USER_BLOCKS: BlockTable[_User] = BlockTable(
    "Chat Completions (a user, system or tool message)",
    {ToolResultBlock: _result_row, TextBlock: _text_row},
    _registered_row,
)
"""How a block of a user, system or tool message is spelt (what the portable
projection kept)."""

BLOCK_TABLES = {"user": USER_BLOCKS, "native": NATIVE_BLOCKS, "portable": PORTABLE_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


def _location(loc: UserLocation) -> dict[str, JSONValue]:
    approx = {k: v for k, v in msgspec.structs.asdict(loc).items() if v is not None}
    return {"type": "approximate", "approximate": approx}


def _web_search(search: WebSearch, site: HostedSite) -> None:
    provider, body = site.provider, site.body
    dialect: Dialect = site.context
    style = dialect.web_search
    if style == "none":
        elsewhere = f" ({dialect.search_elsewhere})" if dialect.search_elsewhere else ""
        site.drop(
            "web_search", f"{provider} has no hosted web search on Chat Completions{elsewhere}"
        )
        return
    if style == "openrouter":
        params: dict[str, JSONValue] = {}
        if search.max_uses is not None:
            params["max_uses"] = search.max_uses
        domain_lists(params, search, "excluded_domains")
        if search.user_location is not None:
            site.drop("user_location", "OpenRouter takes none", field="user_location")
        site.tools.append({"type": "openrouter:web_search", "parameters": params})
        return
    if style == "browser_search":
        # Groq's built-in browser search (console.groq.com/docs/browser-search):
        # a tool with no fields, so every field of the search is reported.
        for name in ("max_uses", "allowed_domains", "blocked_domains", "user_location"):
            if getattr(search, name):
                site.drop(name, f"{provider}'s browser_search takes none", field=name)
        site.tools.append({"type": "browser_search"})
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
                site.drop(name, f"{provider} takes none", field=name)
    if search.max_uses is not None:
        site.drop("max_uses", f"{provider} takes none", field="max_uses")
    body["web_search_options"] = options


HOSTED_TOOLS = HostedTools("Chat Completions", {"web_search": _web_search})
"""The hosted tools Chat Completions spells (web search, as the dialect asks
for it); every other is reported dropped (:mod:`elelem.shapes.hosted_tools`)."""


TOOL_FIELDS = FUNCTION_FIELDS
"""The ``function``-object fields elelem writes; ``ToolSpec.native`` may not set them."""


def encode_request(
    request: ModelRequest,
    *,
    provider: ProviderId,
    stream: bool = True,
    dialect: Dialect | str | None = None,
) -> EncodedRequest:
    """The Chat Completions request for ``request`` sent to ``provider``, in
    ``dialect``: a :class:`Dialect`, the name of one (looked up with the
    request's model), or None for the conventions of the provider's own record."""
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
                    if isinstance(c, ToolCallBlock) and legacy_call(c, provider)
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
    tools: list[JSONValue] = [function_tool(t, SHAPE_NAME) for t in request.tools]
    HOSTED_TOOLS.spell_tools(
        request.hosted_tools, HostedSite(provider, body, tools, dropped, dialect)
    )
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
    not_taken(opts.context_editing, "Chat Completions", dropped)
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
    "ACCEPTS",
    "PATH",
    "SHAPE_NAME",
    "TOOL_FIELDS",
    "assistant_wire",
    "encode_request",
    "native_assistant",
    "portable_assistant",
    "same_family",
]
