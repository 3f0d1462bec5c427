"""How an assistant message is spelled in Chat Completions: native replay
of a message a Chat Completions server produced (its payloads give back
refusals, reasoning fields, reasoning details, tool call extras, the
deprecated ``function_call``, audio ids and the fields nobody modelled), and
the portable encoding of one from anywhere else, with a drop record for
what cannot be said.  :mod:`~elelem.shapes.openai_chat.encoder` builds the
request around it.
"""

from __future__ import annotations

from elelem.shapes.block_tables import (
    BlockTable,
    Spelt,
    left_out,
    spell_kept,
    spell_native,
)
from elelem.shapes.common import (
    Dropped,
    find_payload,
    hosted_lines_and_text,
    own_block,
    part_type,
    stream_event,
    stream_event_drop,
)
from elelem.shapes.openai_chat.blocks import (
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
from elelem.shapes.openai_chat.dialects import Dialect, dialect_for
from elelem.vocabulary import (
    AudioBlock,
    Drop,
    HostedActivity,
    Message,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import (
    UNREPLAYABLE,
    UNSUPPORTED,
)
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.portable import Accepts, portable_message


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


def legacy_call(call: ToolCallBlock, provider: str) -> bool:
    """Whether ``call`` came as the deprecated ``function_call`` of ``provider``."""
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
    spelt = spell_native(NATIVE_BLOCKS, message, _Assistant(provider, Dropped()))
    dropped = spelt.dropped
    texts, refusals, reasonings, calls = spelt.texts, spelt.refusals, spelt.reasonings, spelt.calls
    reasoning_at, unknown_at, fields, parts = (
        spelt.reasoning_at,
        spelt.unknown_at,
        spelt.fields,
        spelt.out,
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
    details: list[JSONValue] = []
    for r in reasonings:
        found = find_payload(r.payloads, provider, REASONING_DETAILS_FORMAT)
        if found is not None and isinstance(found.value, list):
            details.extend(found.value)
    if reasonings and mode == "reasoning_details":
        if details:
            wire["reasoning_details"] = details
        elif reasoning:
            wire["reasoning"] = reasoning
    elif reasonings and mode == "think-tags" and reasoning:
        wire["content"] = _think_tags(reasoning, text)
    elif reasonings and mode in ("reasoning_content", "reasoning") and (reasoning or details):
        if reasoning:
            wire[mode] = reasoning
        if details:
            # A gateway that took reasoning_details (an encrypted entry, such
            # as a relayed Gemini thought signature that Google checks on
            # function-call turns) gets them back beside the text field.
            wire["reasoning_details"] = details
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
    legacy = [c for c in calls if legacy_call(c, provider)]
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


class _Assistant(Spelt):
    # One assistant message: ``out`` its Mistral-style ordered content parts,
    # beside what each field of the wire message is built from.
    def __init__(self, provider: str, dropped: Dropped) -> None:
        super().__init__(provider, dropped)
        self.texts: list[str] = []
        self.refusals: list[str] = []
        self.reasonings: list[ReasoningBlock] = []
        self.reasoning_at: list[int] = []
        self.unknown_at: dict[int, str] = {}  # position -> type of each unknown part
        self.calls: list[ToolCallBlock] = []
        self.fields: dict[str, JSONValue] = {}


def _text_row(part: TextBlock, spelt: _Assistant) -> None:
    if _is_refusal(part, spelt.provider):
        spelt.refusals.append(part.text)
    else:
        spelt.texts.append(part.text)
        spelt.out.append({"type": "text", "text": part.text})


def _reasoning_row(part: ReasoningBlock, spelt: _Assistant) -> None:
    spelt.reasonings.append(part)
    spelt.reasoning_at.append(spelt.index)
    spelt.out.append({"type": "thinking", "thinking": [{"type": "text", "text": part.text}]})


def _call_row(part: ToolCallBlock, spelt: _Assistant) -> None:
    spelt.calls.append(part)


def _unknown_row(part: UnknownBlock, spelt: _Assistant) -> None:
    kind = part.raw.get("type")
    if kind in _SERVER_SAID:
        # What the server said about its response or its choice (like
        # finish_reason): a message has no place for it, so it is left
        # out, and said so, as every shape says so of its stream events.
        name = str(part.raw.get("field"))
        spelt.dropped.add(spelt.at, name, UNREPLAYABLE, _SERVER_SAID[str(kind)])
    elif kind == UNKNOWN_FIELD_TYPE:
        spelt.fields[str(part.raw.get("field"))] = part.raw.get("value")
    elif stream_event(part):
        spelt.dropped.items.append(stream_event_drop(spelt.at, part))
    else:
        spelt.out.append(part.raw)
        spelt.unknown_at[spelt.index] = part.type


def _hosted_row(part: HostedActivity, spelt: _Assistant) -> None:
    detail = f"{part.name}: no Chat Completions form"
    spelt.dropped.add(spelt.at, "hosted", UNSUPPORTED, detail)


def _audio_row(part: AudioBlock, spelt: _Assistant) -> None:
    audio = _audio_id(part, ProviderId(spelt.provider))
    if audio is not None:
        # Generated audio goes back by its id, as the API asks of a
        # multi-turn audio conversation (the bytes are never resent).
        spelt.fields["audio"] = {"id": audio}
    else:
        _own_row(part, spelt)


def _own_row(part: object, spelt: _Assistant) -> None:
    own = own_block(part, ACCEPTS.shape, spelt.provider)
    if own is not None:
        # A plugin's type for a part this server sent: back as it came.
        spelt.out.append(own)
        spelt.unknown_at[spelt.index] = part_type(part)
    else:
        _no_form(part, spelt)


_no_form = left_out("no Chat Completions form in an assistant message")


NATIVE_BLOCKS: BlockTable[_Assistant] = BlockTable(
    "Chat Completions (its own assistant message)",
    {
        TextBlock: _text_row,
        ReasoningBlock: _reasoning_row,
        ToolCallBlock: _call_row,
        UnknownBlock: _unknown_row,
        HostedActivity: _hosted_row,
        AudioBlock: _audio_row,
    },
    _own_row,
)
"""How a block of an assistant message the provider produced is replayed."""


def _portable_call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    spelt.out.append(part)


def _in_content(part: object, spelt: Spelt) -> None:
    """Text and hosted-activity lines: the message's ``content``, joined."""


PORTABLE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Chat Completions (another provider's assistant message)",
    {ToolCallBlock: _portable_call_row, TextBlock: _in_content, HostedActivity: _in_content},
    _no_form,
)
"""How a block of another provider's (or model family's) assistant message is
spelt (what the portable projection kept): its calls here, its text and
hosted lines joined as the content."""


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
    spelt = spell_kept(PORTABLE_BLOCKS, portable, Spelt("", Dropped()))
    calls: list[ToolCallBlock] = spelt.out
    text = hosted_lines_and_text(portable.message.content)
    wire: dict[str, JSONValue] = {"role": "assistant", "content": text or None}
    if calls:
        wire["tool_calls"] = [_tool_call(c, n, None, Dialect()) for n, c in enumerate(calls)]
    return wire, spelt.dropped.items


def _audio_id(block: AudioBlock, provider: ProviderId) -> str | None:
    """The id of ``provider``'s generated audio ``block``, if it has one."""
    payload = find_payload(block.payloads, provider, AUDIO_FORMAT)
    value = payload.value if payload is not None else None
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


__all__ = [
    "ACCEPTS",
    "NATIVE_BLOCKS",
    "PORTABLE_BLOCKS",
    "assistant_wire",
    "legacy_call",
    "native_assistant",
    "portable_assistant",
    "same_family",
]
