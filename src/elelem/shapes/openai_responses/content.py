"""How a message's parts are spelled in the Responses ``input`` list:
native replay of the items Responses itself produced (their payloads give
back the exact items, in their original order: reasoning with its
``encrypted_content``, calls with their item ids, hosted items, messages
regrouped from their text parts), and the portable encoding of parts from
anywhere else, with a drop record for what cannot be said.
:mod:`~elelem.shapes.openai_responses.encoder` builds the request around
them (as Anthropic's ``content.py`` is the encoding side of its wire).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from elelem.shapes.block_tables import BlockTable, left_out
from elelem.shapes.common import (
    Dropped,
    context_text,
    find_payload,
    hosted_activity_line,
    malformed_drops,
    own_block,
    registered_part,
    stream_event,
    stream_event_drop,
)
from elelem.shapes.media import generated_by, register_media
from elelem.shapes.openai_responses import _items
from elelem.shapes.openai_responses.client_tools import computer_output
from elelem.shapes.openai_responses.media import encode_media, restore_generated
from elelem.vocabulary import (
    APPROVAL_RESPONSE,
    BytesSource,
    DocumentBlock,
    HostedActivity,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED, BlockSite
from elelem.vocabulary.portable import Accepts, portable_message

SHAPE_NAME = "openai_responses"
"""The key of this shape's entry in :attr:`ToolSpec.native` and block mappings."""


def portable_text(block: TextBlock) -> str:
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


# The built-in media blocks arrive through the registry, as a plugin's do.
register_media(SHAPE_NAME, image=encode_media, document=encode_media)


class InputItems:
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
        # What the block tables' rows read of the part being spelt: where it
        # stands, its message, and a user message's open parts.
        self.at = ""
        self.replaying: Message | None = None
        self.source = "user"
        self.parts: list[dict[str, Any]] = []
        self.close: Callable[[], None] = self.flush

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
        self.source, self.parts, self.close = message.source, parts, close
        table = USER_BLOCKS
        for j, part in portable.parts():
            self.at = f"messages[{index}].content[{j}]"
            table[type(part)](part, self)
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
        self.replaying = message
        table = NATIVE_BLOCKS
        for j, part in enumerate(message.content):
            self.at = f"messages[{index}].content[{j}]"
            table[type(part)](part, self)

    def reasoning(self, part: ReasoningBlock, where: str) -> None:
        """A reasoning item the provider produced: back as it came, when the
        provider can read it (stored, or its content encrypted)."""
        raw = find_payload(part.payloads, self.provider, _items.ITEM)
        kept = find_payload(part.payloads, self.provider, _items.STORED) is not None
        self.conversation_stored |= kept
        if raw is None or not isinstance(raw.value, dict):
            self.dropped.add(where, "reasoning", UNREPLAYABLE, f"no {self.provider} reasoning item")
        elif self.stored or kept or raw.value.get("encrypted_content"):
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

    def portable(self, index: int, message: Message) -> None:
        """Spell what an assistant message of another provider keeps."""
        portable = portable_message(message, ACCEPTS, self.provider)
        self.dropped.extend(portable.dropped, under=f"messages[{index}]")
        table = PORTABLE_BLOCKS
        for j, part in portable.parts():
            self.at = f"messages[{index}].content[{j}]"
            table[type(part)](part, self)

    def text(self, block: TextBlock, native: bool, where: str = "") -> None:
        p = find_payload(block.payloads, self.provider, _items.MESSAGE_PART) if native else None
        if p is not None and isinstance(p.value, dict):
            shell, part = p.value.get("item"), p.value.get("part")
            if isinstance(shell, dict) and isinstance(part, dict):
                # The provider's own final part replays, even where the stream's
                # deltas contradicted it (the block then holds what was shown).
                whole = _items.with_text(part, block.text)  # its text kept once, in the block
                self._native_part(shell, whole, p.value.get("output_index"))
                return
        if p is not None:
            detail = "not a message item and part: the text is sent without them"
            self.dropped.add(where, _items.MESSAGE_PART, UNREPLAYABLE, detail)
        self.add({"type": "message", "role": "assistant", "content": portable_text(block)})

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
            if not has_terminal(message, activity):
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


# -- the block tables -------------------------------------------------------------------


def _user_text(part: TextBlock, items: InputItems) -> None:
    items.parts.append({"type": "input_text", "text": context_text(items.source, part.text)})


def _user_result(part: ToolResultBlock, items: InputItems) -> None:
    items.close()
    items.add(items.tool_result(part, items.at))


def _user_unknown(part: UnknownBlock, items: InputItems) -> None:
    if part.type == APPROVAL_RESPONSE:
        # The caller's answer to an mcp_approval_request: an input item as it is.
        items.close()
        items.add(dict(part.raw))
    else:
        _user_media(part, items)


def _user_media(part: object, items: InputItems) -> None:
    wire = items.media(part, items.at)
    if wire is not None:
        items.parts.append(wire)  # an image, document or plugin block's input part


USER_BLOCKS: BlockTable[InputItems] = BlockTable(
    "OpenAI Responses (a user, system or tool message)",
    {TextBlock: _user_text, ToolResultBlock: _user_result, UnknownBlock: _user_unknown},
    _user_media,
)
"""How a block of a user, system or tool message is spelt (what the
portable projection kept)."""


def _native_text(part: TextBlock, items: InputItems) -> None:
    items.text(part, True, items.at)


def _native_reasoning(part: ReasoningBlock, items: InputItems) -> None:
    items.reasoning(part, items.at)


def _native_call(part: ToolCallBlock, items: InputItems) -> None:
    items.tool_call(part, True)


def _native_hosted(part: HostedActivity, items: InputItems) -> None:
    assert items.replaying is not None  # set by InputItems.assistant
    items.hosted(part, items.replaying, items.at)


def _native_unknown(part: UnknownBlock, items: InputItems) -> None:
    items.unknown(part, items.at)


def _any_result(part: ToolResultBlock, items: InputItems) -> None:
    items.add(items.tool_result(part, items.at))


def _native_image(part: ImageBlock, items: InputItems) -> None:
    if not generated_by(part, items.provider):
        _no_media(part, items)
    # else: its image_generation_call item carries it


_no_media = left_out("Responses takes none in an assistant message")


_no_form = left_out("no Responses form")


def _native_own(part: object, items: InputItems) -> None:
    own = own_block(part, ACCEPTS.shape, items.provider)
    if own is not None:
        items.add(own)  # a plugin's type for an item the provider sent
    else:
        _no_form(part, items)


NATIVE_BLOCKS: BlockTable[InputItems] = BlockTable(
    "OpenAI Responses (its own assistant message)",
    {
        TextBlock: _native_text,
        ReasoningBlock: _native_reasoning,
        ToolCallBlock: _native_call,
        HostedActivity: _native_hosted,
        UnknownBlock: _native_unknown,
        ToolResultBlock: _any_result,
        ImageBlock: _native_image,
        DocumentBlock: _no_media,
    },
    _native_own,
)
"""How a block of an assistant message Responses produced is replayed."""


def _portable_text(part: TextBlock, items: InputItems) -> None:
    items.text(part, False)


def _portable_call(part: ToolCallBlock, items: InputItems) -> None:
    items.tool_call(part, False)


def _portable_hosted(part: HostedActivity, items: InputItems) -> None:
    line = hosted_activity_line(part)
    items.add({"type": "message", "role": "assistant", "content": line})


PORTABLE_BLOCKS: BlockTable[InputItems] = BlockTable(
    "OpenAI Responses (another provider's assistant message)",
    {
        TextBlock: _portable_text,
        ToolCallBlock: _portable_call,
        HostedActivity: _portable_hosted,
        ToolResultBlock: _any_result,
    },
    _no_form,
)
"""How a block of another provider's assistant message is spelt (what the
portable projection kept)."""

BLOCK_TABLES = {"user": USER_BLOCKS, "native": NATIVE_BLOCKS, "portable": PORTABLE_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


def has_terminal(message: Message, activity: HostedActivity) -> bool:
    return any(
        isinstance(p, HostedActivity) and p.id == activity.id and p.terminal
        for p in message.content
    )


__all__ = [
    "ACCEPTS",
    "BLOCK_TABLES",
    "NATIVE_BLOCKS",
    "PORTABLE_BLOCKS",
    "SHAPE_NAME",
    "USER_BLOCKS",
    "InputItems",
    "has_terminal",
    "portable_text",
]
