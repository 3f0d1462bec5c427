"""How a message's parts are spelled in Anthropic Messages: native replay
of the parts Anthropic itself produced (their payloads give back the exact
blocks: signatures, citations, server tool blocks, fields nobody modelled),
and the portable encoding of parts from anywhere else, with a drop record
for what cannot be said.  :mod:`~elelem.shapes.anthropic_messages.encoder`
builds the request around them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from elelem.errors import PayloadError
from elelem.shapes.anthropic_messages.media import encode_media
from elelem.shapes.block_tables import BlockTable, Spelt, left_out, spell_kept
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    context_text,
    find_payload,
    hosted_activity_line,
    own_block,
    part_type,
    registered_part,
    stream_event,
    stream_event_drop,
)
from elelem.shapes.media import register_media
from elelem.vocabulary import (
    DocumentBlock,
    HostedActivity,
    ImageBlock,
    Message,
    Part,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import (
    UNREPLAYABLE,
    UNSUPPORTED,
    BlockSite,
)
from elelem.vocabulary.portable import Accepts, portable_message

UNKNOWN_DELTAS = "unknown_deltas"
"""Payload format on a text, reasoning or tool-call block: every delta of a
type nobody modelled that arrived for it, whole (its ``type`` included), in
arrival order.  Native replay leaves them out and says so."""


def _checked(payload: ProviderPayload, kind: type, at: str) -> Any:
    # A present but undecodable payload is an error, never a silent downgrade.
    value = payload.value
    if not isinstance(value, kind) or (
        isinstance(value, dict) and payload.format != "block_fields" and "type" not in value
    ):
        raise PayloadError(
            f"{at}: {payload.provider} {payload.format} payload is not a "
            f"{'block object' if kind is dict else kind.__name__}",
            "$.value",
        )
    return value


def _fields(payloads: Iterable[ProviderPayload], provider: str, at: str) -> dict[str, Any]:
    extra = find_payload(payloads, provider, "block_fields")
    return dict(_checked(extra, dict, at)) if extra is not None else {}


# --------------------------------------------------------------------------
# native replay
# --------------------------------------------------------------------------


def native_content(
    content: Iterable[Part], provider: str, dropped: Dropped, where: str
) -> list[dict[str, Any]]:
    """Rebuild the wire content blocks of an assistant message ``provider`` produced."""
    spelt = Spelt(provider, dropped)
    table = NATIVE_BLOCKS
    for i, part in enumerate(content):
        spelt.at = at = f"{where}content[{i}]"
        kept = find_payload(getattr(part, "payloads", ()), provider, UNKNOWN_DELTAS)
        if kept is not None:
            # What a delta of an unknown type did to its block is not known:
            # the block replays as its known deltas built it, and says so.
            count = len(kept.value) if isinstance(kept.value, list) else 1
            detail = f"{count} delta(s) of a type nobody modelled"
            dropped.add(at, UNKNOWN_DELTAS, UNREPLAYABLE, detail)
        table[type(part)](part, spelt)
    return spelt.out


def _hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    block = _native_hosted(part, spelt.provider, spelt.at)
    if block is not None:
        spelt.out.append(block)
        return
    spelt.out.append(_portable_hosted(part))
    detail = f"{part.name} {part.state} has no {spelt.provider} payload; sent as text"
    spelt.dropped.add(spelt.at, "hosted", UNREPLAYABLE, detail)


def _text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.append(_native_text(part, spelt.provider, spelt.dropped, spelt.at))


def _reasoning_row(part: ReasoningBlock, spelt: Spelt) -> None:
    block = _native_reasoning(part, spelt.provider, spelt.at)
    if block is None:
        detail = "unsigned: no thinking block without its signature"
        spelt.dropped.add(spelt.at, "reasoning", UNREPLAYABLE, detail)
    else:
        spelt.out.append(block)


def _call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    spelt.out.append(_native_tool_call(part, spelt.provider, spelt.dropped, spelt.at))


def _result_row(part: ToolResultBlock, spelt: Spelt) -> None:
    spelt.out.append(_tool_result(part, spelt.provider, spelt.dropped, spelt.at))


_no_media_row = left_out("an assistant message takes none")


def _unknown_row(part: UnknownBlock, spelt: Spelt) -> None:
    if stream_event(part):
        spelt.dropped.items.append(stream_event_drop(spelt.at, part))
    else:
        spelt.out.append(dict(part.raw))


def _own_row(part: object, spelt: Spelt) -> None:
    wire = own_block(part, ACCEPTS.shape, spelt.provider)
    if wire is not None:
        spelt.out.append(wire)  # a plugin block type's own Anthropic form, or the block as it came
    else:  # a registered block type this shape has no mapping for
        spelt.dropped.add(spelt.at, part_type(part), UNSUPPORTED, "no Anthropic mapping")


def _native_hosted(part: HostedActivity, provider: str, at: str) -> dict[str, Any] | None:
    payload = part.payload
    if payload is None or payload.provider != provider:
        return None
    return dict(_checked(payload, dict, at))


def _native_text(part: TextBlock, provider: str, dropped: Dropped, at: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": part.text}
    citations = []
    for j, attribution in enumerate(part.attributions):
        replay = attribution.replay
        if replay is not None and replay.provider == provider and replay.format == "citation":
            citations.append(_checked(replay, dict, at))
        else:
            dropped.add(
                f"{at}.attributions[{j}]",
                "citation",
                UNREPLAYABLE,
                f"no {provider} citation payload",
            )
    if citations:
        block["citations"] = citations
    block.update(_fields(part.payloads, provider, at))
    return block


def _native_reasoning(part: ReasoningBlock, provider: str, at: str) -> dict[str, Any] | None:
    redacted = find_payload(part.payloads, provider, "redacted_thinking")
    if redacted is not None:
        block: dict[str, Any] = {"type": "redacted_thinking", "data": _checked(redacted, str, at)}
    else:
        signature = find_payload(part.payloads, provider, "signature")
        if signature is None:
            return None
        block = {
            "type": "thinking",
            "thinking": part.text,
            "signature": _checked(signature, str, at),
        }
    block.update(_fields(part.payloads, provider, at))
    return block


def _native_tool_call(
    part: ToolCallBlock, provider: str, dropped: Dropped, at: str
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_use",
        "id": part.id,
        "name": part.name,
        "input": arguments_object(part.arguments, part.id, at, dropped),
    }
    block.update(_fields(part.payloads, provider, at))
    return block


SHAPE_NAME = "anthropic_messages"
# The built-in media blocks arrive through the registry, as a plugin's do.
register_media(SHAPE_NAME, image=encode_media, document=encode_media)


def _registered(part: object, provider: str, dropped: Dropped, at: str) -> Any:
    return registered_part(part, SHAPE_NAME, BlockSite(provider, at, dropped.items), "Anthropic")


FILES_BETA = "files-api-2025-04-14"
"""The beta an image or document given by Files API id needs."""


def names_file(block: dict[str, Any]) -> bool:
    """True when a wire content block (or a tool result's content) names a file id."""
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "file":
        return True
    inner = block.get("content")
    return isinstance(inner, list) and any(isinstance(b, dict) and names_file(b) for b in inner)


def _tool_result(part: ToolResultBlock, provider: str, dropped: Dropped, at: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id}
    block["content"] = part.content
    if part.attachments:
        # Images and documents a tool returned go inside its result.
        # The API refuses an empty text block: a screenshot alone is sent alone.
        content: list[dict[str, Any]] = (
            [{"type": "text", "text": part.content}] if part.content else []
        )
        for k, attachment in enumerate(part.attachments):
            wire = _registered(attachment, provider, dropped, f"{at}.attachments[{k}]")
            if wire is not None:
                content.append(wire)
        block["content"] = content
    if part.is_error:
        block["is_error"] = True
    return block


# --------------------------------------------------------------------------
# portable encoding
# --------------------------------------------------------------------------


def _portable_hosted(part: HostedActivity) -> dict[str, Any]:
    return {"type": "text", "text": hosted_activity_line(part)}


ACCEPTS = Accepts("Anthropic", shape="anthropic_messages").with_blocks("image", "document")
"""What Anthropic carries of a message it did not produce (see
:func:`~elelem.vocabulary.portable.portable_message`): no foreign citations,
since a citation must point at a block of Anthropic's own."""


def portable_content(
    message: Message, provider: str, dropped: Dropped, where: str
) -> list[dict[str, Any]]:
    """Spell for Anthropic what a message from another provider (or a user) keeps."""
    spelt = Spelt(provider, dropped)
    spelt.source = message.source
    portable = portable_message(message, ACCEPTS, provider)
    spell_kept(PORTABLE_BLOCKS, portable, spelt, where.rstrip("."))
    return spelt.out


def _portable_hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    spelt.out.append(_portable_hosted(part))


def _portable_text_row(part: TextBlock, spelt: Spelt) -> None:
    spelt.out.append({"type": "text", "text": context_text(spelt.source, part.text)})


def _portable_call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    given = arguments_object(part.arguments, part.id, spelt.at, spelt.dropped)
    spelt.out.append({"type": "tool_use", "id": part.id, "name": part.name, "input": given})


def _registered_row(part: object, spelt: Spelt) -> None:
    wire = _registered(part, spelt.provider, spelt.dropped, spelt.at)
    if wire is not None:
        spelt.out.append(wire)  # an image, document or plugin block's content block


NATIVE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Anthropic (its own assistant message)",
    {
        HostedActivity: _hosted_row,
        TextBlock: _text_row,
        ReasoningBlock: _reasoning_row,
        ToolCallBlock: _call_row,
        ToolResultBlock: _result_row,
        ImageBlock: _no_media_row,
        DocumentBlock: _no_media_row,
        UnknownBlock: _unknown_row,
    },
    _own_row,
)
"""How a block of an assistant message Anthropic produced is replayed."""

PORTABLE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Anthropic",
    {
        HostedActivity: _portable_hosted_row,
        TextBlock: _portable_text_row,
        ToolCallBlock: _portable_call_row,
        ToolResultBlock: _result_row,
    },
    _registered_row,
)
"""How a block of any other message is spelt (what the portable projection kept)."""

BLOCK_TABLES = {"native": NATIVE_BLOCKS, "portable": PORTABLE_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


__all__ = [
    "ACCEPTS",
    "BLOCK_TABLES",
    "FILES_BETA",
    "NATIVE_BLOCKS",
    "PORTABLE_BLOCKS",
    "UNKNOWN_DELTAS",
    "names_file",
    "native_content",
    "portable_content",
]
