"""Neutral request -> Ollama ``/api/chat`` request body.

Assistant messages Ollama produced are replayed *natively*: one message with
the text as ``content``, the reasoning as ``thinking`` and the tool calls as
``tool_calls`` whose ``arguments`` are JSON objects, with each call's id and
the fields the server sent beside them (``function.index``) put back, and
``message`` fields nobody modelled restored.  Every other message is encoded
*portably*: text, tool calls, tool results, hosted-activity summaries as
text; never another provider's reasoning or payloads; each thing left out is
reported in ``dropped``.

Generation options go into Ollama's ``options`` object (``num_predict``,
``temperature``, ``top_p``, ``stop``); :class:`ReasoningOptions` become the
top-level ``think`` (an effort of ``low``/``medium``/``high`` as that
string, ``none`` as ``false``, anything else ``true``).
"""

from __future__ import annotations

from typing import Any

from elelem.shapes.block_tables import (
    BlockTable,
    Spelt,
    left_out,
    spell_kept,
    spell_native,
)
from elelem.shapes.common import (
    FUNCTION_FIELDS,
    Dropped,
    arguments_object,
    context_text,
    find_payload,
    finished_request,
    function_tool,
    hosted_lines_and_text,
    part_type,
    registered_part,
    stream_event,
    stream_event_drop,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.hosted_tools import HostedSite, HostedTools
from elelem.shapes.media import line_report
from elelem.shapes.ollama_native.media import encode_media
from elelem.shapes.ollama_native.parser import (
    SYNTHESIZED_ID_FORMAT,
    TOOL_EXTRA_FORMAT,
    UNKNOWN_FIELD_TYPE,
)
from elelem.shapes.options import NotTaken, check_table, sampling_options, tool_choice
from elelem.shapes.prompt_cache import unsupported
from elelem.shapes.structured_output import unlabelled
from elelem.vocabulary import (
    DocumentBlock,
    Drop,
    HostedActivity,
    ImageBlock,
    JsonSchemaOutput,
    Message,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import UNSUPPORTED, BlockSite
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.vocabulary.registry import register_block_mapping
from elelem.vocabulary.request import ReasoningOptions
from elelem.wire import EncodedRequest, ModelRequest

PATH = "/api/chat"
"""The endpoint, relative to the server's base URL (``http://127.0.0.1:11434``)."""

THINK_LEVELS = frozenset({"low", "medium", "high"})
"""Efforts Ollama's ``think`` takes as a string (gpt-oss); others become a boolean."""


def _native_call(
    call: ToolCallBlock, provider: str, where: str, dropped: Dropped
) -> dict[str, JSONValue]:
    extra = find_payload(call.payloads, provider, TOOL_EXTRA_FORMAT)
    fields: dict[str, Any] = (
        extra.value if extra is not None and isinstance(extra.value, dict) else {}
    )
    function: dict[str, JSONValue] = dict(fields.get("function") or {})
    function["name"] = call.name
    if fields.get("arguments_text"):
        function["arguments"] = call.arguments
    else:
        function["arguments"] = arguments_object(call.arguments, call.id, where, dropped)
    wire: dict[str, JSONValue] = {}
    if find_payload(call.payloads, provider, SYNTHESIZED_ID_FORMAT) is None:
        wire["id"] = call.id
    wire.update(fields.get("call") or {})
    wire["function"] = function
    return wire


def native_assistant(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """The assistant message object that replays ``message`` to the Ollama that produced it."""
    spelt = spell_native(NATIVE_BLOCKS, message, _Assistant(provider, Dropped()))
    wire: dict[str, JSONValue] = {"role": "assistant", "content": "".join(spelt.texts)}
    if spelt.thinking:
        wire["thinking"] = "".join(spelt.thinking)
    if spelt.out:
        wire["tool_calls"] = spelt.out
    for name, value in spelt.fields.items():
        wire.setdefault(name, value)
    return wire, spelt.dropped.items


class _Assistant(Spelt):
    # One assistant message: ``out`` its tool calls, beside its text, its
    # thinking and the fields of the message nobody modelled.
    def __init__(self, provider: str, dropped: Dropped) -> None:
        super().__init__(provider, dropped)
        self.texts: list[str] = []
        self.thinking: list[str] = []
        self.fields: dict[str, JSONValue] = {}


def _text_row(part: TextBlock, spelt: _Assistant) -> None:
    spelt.texts.append(part.text)


def _thinking_row(part: ReasoningBlock, spelt: _Assistant) -> None:
    spelt.thinking.append(part.text)


def _native_call_row(part: ToolCallBlock, spelt: _Assistant) -> None:
    spelt.out.append(_native_call(part, spelt.provider, spelt.at, spelt.dropped))


def _unknown_row(part: UnknownBlock, spelt: _Assistant) -> None:
    if part.raw.get("type") == UNKNOWN_FIELD_TYPE:
        spelt.fields[str(part.raw.get("field"))] = part.raw.get("value")
    elif stream_event(part):
        spelt.dropped.items.append(stream_event_drop(spelt.at, part))
    else:
        spelt.dropped.add(spelt.at, part.type, UNSUPPORTED, "no Ollama form")


def _native_hosted_row(part: HostedActivity, spelt: _Assistant) -> None:
    spelt.dropped.add(spelt.at, "hosted", UNSUPPORTED, f"{part.name}: no Ollama form")


_no_form = left_out("no Ollama form in an assistant message")


NATIVE_BLOCKS: BlockTable[_Assistant] = BlockTable(
    "Ollama (its own assistant message)",
    {
        TextBlock: _text_row,
        ReasoningBlock: _thinking_row,
        ToolCallBlock: _native_call_row,
        UnknownBlock: _unknown_row,
        HostedActivity: _native_hosted_row,
    },
    _no_form,
)
"""How a block of an assistant message Ollama produced is replayed."""


ACCEPTS = Accepts("Ollama", shape="ollama_native").with_blocks("image", "document")
"""What Ollama carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): no citations."""


def portable_assistant(message: Message) -> tuple[dict[str, JSONValue], list[Drop]]:
    """Spell what an assistant message of another provider keeps: its
    hosted-activity lines and text as the content, its tool calls."""
    portable = portable_message(message, ACCEPTS)
    spelt = spell_kept(PORTABLE_BLOCKS, portable, Spelt("", Dropped()))
    wire: dict[str, JSONValue] = {
        "role": "assistant",
        "content": hosted_lines_and_text(portable.message.content),
    }
    if spelt.out:
        wire["tool_calls"] = spelt.out
    return wire, spelt.dropped.items


def _call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    function: dict[str, JSONValue] = {
        "name": part.name,
        "arguments": arguments_object(part.arguments, part.id, spelt.at, spelt.dropped),
    }
    spelt.out.append({"id": part.id, "function": function})


def _in_content(part: object, spelt: Spelt) -> None:
    """Text and hosted-activity lines: the message's ``content``, joined."""


PORTABLE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Ollama (another provider's assistant message)",
    {ToolCallBlock: _call_row, TextBlock: _in_content, HostedActivity: _in_content},
    _no_form,
)
"""How a block of another provider's assistant message is spelt (what the
portable projection kept): its calls here, its text and hosted lines joined
as the content."""


def assistant_wire(
    message: Message, provider: ProviderId
) -> tuple[dict[str, JSONValue], list[Drop]]:
    """The assistant message a request to ``provider`` carries for ``message``
    (native if ``provider`` produced it, else portable) and what was dropped."""
    if message.provider == provider:
        return native_assistant(message, provider)
    return portable_assistant(message)


SHAPE_NAME = "ollama_native"
"""The key of this shape's entry in :attr:`ToolSpec.native`."""


def _media(block: ImageBlock | DocumentBlock, site: str) -> dict[str, JSONValue] | None:
    # The built-in image and document blocks' mapping (registered below): a
    # fragment of the message, its ``images`` or a text document's ``content``.
    if not isinstance(site, BlockSite):
        return None
    image, as_text = encode_media(block, site.where, line_report(site.dropped, site.where))
    if as_text is not None:
        return {"content": as_text}
    return None if image is None else {"images": [image]}


# The built-in media blocks arrive through the registry, as a plugin's do.
register_block_mapping("image", encoders={SHAPE_NAME: _media})
register_block_mapping("document", encoders={SHAPE_NAME: _media})


def _other_messages(
    message: Message, provider: ProviderId, names: dict[str, str]
) -> tuple[list[dict[str, JSONValue]], list[Drop]]:
    """A user/system/tool message: one wire message per text block (Ollama's
    ``content`` is one string; separate blocks stay separate) and one ``tool``
    message per result."""
    out: list[dict[str, JSONValue]] = []
    dropped = Dropped()
    spelt = _Other(provider, dropped, out)
    spelt.source, spelt.extra = message.source, names
    spelt.role = "system" if message.role == "system" else "user"
    spell_kept(USER_BLOCKS, portable_message(message, ACCEPTS, provider), spelt)
    role, images = spelt.role, spelt.images
    if images:
        # Ollama takes a message's images beside its text: on the last user
        # message of this one (a message of its own when it has no text).
        last = next((m for m in reversed(out) if m["role"] == role), None)
        if last is None:
            last = {"role": role, "content": ""}
            out.append(last)
        last["images"] = list(images)
    return out, dropped.items


class _Other(Spelt):
    # A user, system or tool message: ``out`` its wire messages, ``images``
    # what goes on the last of its own role, ``extra`` the call names by id.
    role = "user"

    def __init__(self, provider: str, dropped: Dropped, out: list[Any]) -> None:
        super().__init__(provider, dropped, out)
        self.images: list[JSONValue] = []


def _result_row(part: ToolResultBlock, spelt: _Other) -> None:
    result: dict[str, JSONValue] = {"role": "tool", "content": part.content}
    name = part.name or spelt.extra.get(part.call_id)
    if name:
        result["tool_name"] = name
    result["tool_call_id"] = part.call_id
    spelt.out.append(result)
    if part.is_error:
        spelt.dropped.add(spelt.at, "is_error", UNSUPPORTED, f"tool result {part.call_id}")
    for k, attachment in enumerate(part.attachments or ()):
        # A tool message takes text only: what the tool returned beside it is reported.
        detail = f"tool result {part.call_id}: Ollama's tool message takes text only"
        at = f"{spelt.at}.attachments[{k}]"
        spelt.dropped.add(at, part_type(attachment), UNSUPPORTED, detail)


def _user_text_row(part: TextBlock, spelt: _Other) -> None:
    spelt.out.append({"role": spelt.role, "content": context_text(spelt.source, part.text)})


def _fragment_row(part: object, spelt: _Other) -> None:
    # An image, document or plugin block: a fragment of the message.
    site = BlockSite(spelt.provider, spelt.at, spelt.dropped.items)
    fragment = registered_part(part, SHAPE_NAME, site, "Ollama")
    if fragment is None:
        return
    images = fragment.get("images")
    if isinstance(images, list):
        spelt.images.extend(images)
    else:
        spelt.out.append({"role": spelt.role, "content": fragment.get("content", "")})


USER_BLOCKS: BlockTable[_Other] = BlockTable(
    "Ollama (a user, system or tool message)",
    {ToolResultBlock: _result_row, TextBlock: _user_text_row},
    _fragment_row,
)
"""How a block of a user, system or tool message is spelt (what the portable
projection kept)."""

BLOCK_TABLES = {"user": USER_BLOCKS, "native": NATIVE_BLOCKS, "portable": PORTABLE_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


TOOL_FIELDS = FUNCTION_FIELDS
"""The ``function``-object fields elelem writes; ``ToolSpec.native`` may not set them."""


def think_value(reasoning: ReasoningOptions, dropped: Dropped) -> JSONValue:
    """Ollama's ``think`` for ``reasoning``: ``low``/``medium``/``high`` as
    that string, ``none`` as false, anything else true (a token budget
    cannot be given, and is reported dropped)."""
    if reasoning.budget_tokens is not None:
        dropped.add(
            "options.reasoning.budget_tokens",
            "budget_tokens",
            UNSUPPORTED,
            "Ollama takes no thinking budget",
        )
    effort = reasoning.effort
    if effort in THINK_LEVELS:
        return effort
    return effort != "none"


OPTION_KEYS = check_table(
    "Ollama",
    {
        "max_tokens": ("options", "num_predict"),
        "temperature": ("options", "temperature"),
        "top_p": ("options", "top_p"),
        "stop": ("options", "stop"),
        "seed": ("options", "seed"),
    },
)
"""Where ``/api/chat`` takes each sampling option (its ``options`` object)."""

TOOL_CHOICE = NotTaken("Ollama takes none")
"""``/api/chat`` has no ``tool_choice``: any mode but ``auto`` is reported."""


HOSTED_TOOLS = HostedTools("Ollama's /api/chat")
"""Ollama runs no hosted tool: every one is reported dropped
(:mod:`elelem.shapes.hosted_tools`)."""


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The ``/api/chat`` request for ``request`` sent to ``provider``.

    Ollama's chat endpoint runs no hosted tool: each is reported dropped
    (:data:`HOSTED_TOOLS`).
    """
    dropped = Dropped()
    HOSTED_TOOLS.spell(request.hosted_tools, HostedSite(str(provider), {}, [], dropped))
    messages: list[JSONValue] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    names: dict[str, str] = {}
    for n, message in enumerate(request.messages):
        if message.role == "assistant":
            wire, lost = assistant_wire(message, provider)
            names.update((p.id, p.name) for p in message.content if isinstance(p, ToolCallBlock))
            messages.append(wire)
        else:
            wires, lost = _other_messages(message, provider, names)
            messages.extend(wires)
        dropped.extend(lost, under=f"messages[{n}]")
    body: dict[str, JSONValue] = {"model": request.model, "messages": messages, "stream": stream}
    if request.tools:
        body["tools"] = [function_tool(t, SHAPE_NAME) for t in request.tools]
    opts = request.options
    sampling_options(opts, OPTION_KEYS, body, dropped)
    not_taken(opts.context_editing, "Ollama", dropped)
    if opts.reasoning is not None:
        body["think"] = think_value(opts.reasoning, dropped)
    tool_choice(opts, TOOL_CHOICE, body, dropped)
    if opts.cache is not None:
        unsupported("Ollama", dropped.items)
    if isinstance(opts.output, JsonSchemaOutput):
        body["format"] = opts.output.schema
        unlabelled(opts.output, "Ollama", dropped.items)
    elif opts.output is not None:
        body["format"] = "json"
    return finished_request(PATH, body, opts, dropped, stream)


__all__ = [
    "PATH",
    "SHAPE_NAME",
    "THINK_LEVELS",
    "TOOL_FIELDS",
    "assistant_wire",
    "encode_request",
    "native_assistant",
    "portable_assistant",
    "think_value",
]
