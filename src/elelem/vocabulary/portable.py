"""The one rule for what a message keeps when it goes to a provider that did
not produce it (docs/architecture.md §2.5, the *portable* projection).

Every shape's encoder replays its own provider's assistant messages natively
and hands every other message to :func:`portable_message` with the target's
:class:`Accepts`; it then only spells what the message kept, in its own wire
format.  The conversation log's portable history
(:func:`elelem.conversation.projections.portable_history`) is the same rule
with :data:`ANYWHERE`.

A message keeps:

- text, with its citations where the target carries them
  (:attr:`Accepts.citations`; each citation loses its replay payload), else
  without them;
- tool calls and tool results;
- hosted activity (name, state, input, summary; never its payload), one
  transition per activity: the last the message holds, where it stands;
- blocks of registered types the target spells (:attr:`Accepts.blocks`,
  ``image``/``document``), when the target takes their media type
  (:attr:`Accepts.media_types`).

It never keeps another provider's opaque payloads (a block's, a hosted
transition's, a citation's replay), never reasoning (another provider's
thinking is not sent disguised as the target's own thinking format, and not
passed off as something the assistant said), and never another provider's
unknown block (it replays only to the provider that produced it).  Each thing left out is one
:class:`~elelem.vocabulary.Drop` whose ``where`` is the part's position in
the original message (``content[3]``, ``content[3].attributions[0]``).
Payloads elelem itself wrote (:data:`~elelem.vocabulary.payload.NEUTRAL`)
are no provider's and stay.

A non-assistant message (user input, tool results, context) was produced by
no provider; payloads the target's own parser attached to it (a Responses
tool output item) are its own and stay, and so do its unknown blocks (the
caller's, such as an answer to an approval request): the encoder spells
those it knows and reports the rest.  An assistant message another provider
produced keeps no payload and no unknown block.
"""

from __future__ import annotations

import msgspec

from elelem.vocabulary.activity import HostedActivity
from elelem.vocabulary.attribution import Attribution
from elelem.vocabulary.blocks import (
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import (
    FOREIGN_BLOCK,
    FOREIGN_PAYLOAD,
    FOREIGN_REASONING,
    UNSUPPORTED,
    Drop,
)
from elelem.vocabulary.message import Message, Part
from elelem.vocabulary.payload import NEUTRAL, ProviderPayload
from elelem.vocabulary.registry import block_mapping


class Accepts(msgspec.Struct, frozen=True):
    """What a target wire can carry of a message it did not produce.

    ``label`` names the wire in drop details (``"Anthropic"``);
    ``citations``: the encoder spells foreign citations (OpenAI Responses
    lists them as sources after the text); ``blocks``: the registered block
    types beyond text, reasoning, tool calls and results that its encoder
    maps (``image``, ``document``); ``media_types``: the media types it takes
    for such blocks (``image/png``, ``application/pdf``), None for any;
    ``shape``: the wire shape's name, under which a plugin block type may
    register an encoder (:func:`~elelem.vocabulary.register_block_mapping`):
    a block of such a type is kept for this wire too.
    """

    label: str
    citations: bool = False
    blocks: frozenset[str] = frozenset()
    media_types: frozenset[str] | None = None
    shape: str = ""

    def with_blocks(self, *tags: str, media_types: frozenset[str] | None = None) -> Accepts:
        """These capabilities plus block types ``tags`` (and, if given, only
        ``media_types`` for them)."""
        return msgspec.structs.replace(
            self,
            blocks=self.blocks | frozenset(tags),
            media_types=media_types if media_types is not None else self.media_types,
        )


class PortableMessage(msgspec.Struct, frozen=True):
    """What one message keeps on its way to another provider.

    ``message`` holds the kept parts (role, source, provider and model as
    they were); ``positions[k]`` is the index in the original message of
    kept part ``k``, so an encoder reports its own drops where the caller
    knows them; ``dropped`` is what was left out, ``where`` relative to the
    message (``content[2]``).
    """

    message: Message
    positions: tuple[int, ...]
    dropped: tuple[Drop, ...] = ()

    def parts(self) -> list[tuple[int, Part]]:
        """The kept parts with their original positions."""
        return list(zip(self.positions, self.message.content, strict=True))


CORE_TYPES = frozenset({"text", "reasoning", "tool-call", "tool-result", "hosted"})
"""The part types every wire has a portable form for (reasoning: the form
being its drop)."""


def _who(message: Message) -> str:
    return message.provider or "another provider"


def _strip(
    payloads: tuple[ProviderPayload, ...], own: str | None, at: str, dropped: list[Drop]
) -> tuple[ProviderPayload, ...]:
    kept = tuple(p for p in payloads if p.provider in (own, NEUTRAL))
    if len(kept) != len(payloads):
        for p in payloads:
            if p.provider not in (own, NEUTRAL):
                dropped.append(Drop(at, "payload", FOREIGN_PAYLOAD, f"{p.provider} {p.format}"))
    return kept


def _text(
    part: TextBlock, accepts: Accepts, own: str | None, at: str, dropped: list[Drop]
) -> TextBlock:
    payloads = _strip(part.payloads, own, at, dropped)
    attributions: tuple[Attribution, ...] = ()
    if part.attributions and not accepts.citations:
        n = len(part.attributions)
        detail = f"{n}: {accepts.label} has no input form for another provider's citations"
        dropped.append(Drop(at, "citation", UNSUPPORTED, detail))
    elif part.attributions:
        kept = []
        for j, a in enumerate(part.attributions):
            replay = a.replay
            if replay is not None and replay.provider != own:
                where = f"{at}.attributions[{j}]"
                detail = f"{replay.provider} {replay.format}"
                dropped.append(Drop(where, "payload", FOREIGN_PAYLOAD, detail))
                a = msgspec.structs.replace(a, replay=None)
            kept.append(a)
        attributions = tuple(kept)
    if payloads == part.payloads and attributions == part.attributions:
        return part
    return TextBlock(part.text, attributions, payloads, part.complete)


def _hosted(part: HostedActivity, own: str | None, at: str, dropped: list[Drop]) -> HostedActivity:
    payload = part.payload
    if payload is None or (own is not None and payload.provider == own):
        return part
    detail = f"{payload.provider} {payload.format} of hosted {part.name}"
    dropped.append(Drop(at, "payload", FOREIGN_PAYLOAD, detail))
    return msgspec.structs.replace(part, payload=None)


def _other(
    part: Part, tag: str, accepts: Accepts, own: str | None, at: str, dropped: list[Drop]
) -> Part | None:
    """A block of a registered type beyond the core: kept if the target spells
    it, itself or through the block type's registered mapping."""
    mapping = block_mapping(tag) if tag not in accepts.blocks and accepts.shape else None
    if mapping is not None and accepts.shape in mapping.encoders:
        return part
    if tag not in accepts.blocks:
        dropped.append(Drop(at, tag, UNSUPPORTED, f"{accepts.label} has no form for it"))
        return None
    media_type = getattr(part, "media_type", None)
    if (
        accepts.media_types is not None
        and isinstance(media_type, str)
        and media_type not in accepts.media_types
    ):
        dropped.append(Drop(at, tag, UNSUPPORTED, f"{media_type}: {accepts.label} takes none"))
        return None
    payloads = getattr(part, "payloads", None)
    if isinstance(payloads, tuple) and payloads:
        kept = _strip(payloads, own, at, dropped)
        if kept != payloads:
            return msgspec.structs.replace(part, payloads=kept)  # type: ignore[type-var]
    return part


def _tool_result(
    part: ToolResultBlock, accepts: Accepts, own: str | None, at: str, dropped: list[Drop]
) -> ToolResultBlock:
    """A tool result with its payloads, and its attachments (images and
    documents the tool returned) under the rule of the message's own blocks."""
    payloads = _strip(part.payloads, own, at, dropped)
    attachments = part.attachments or ()
    kept: list[Part] = []
    for k, attachment in enumerate(attachments):
        tag = str(attachment.__struct_config__.tag)
        where = f"{at}.attachments[{k}]"
        out = _other(attachment, tag, accepts, own, where, dropped)
        if out is not None:
            kept.append(out)
    if payloads == part.payloads and tuple(kept) == attachments:
        return part
    return msgspec.structs.replace(
        part,
        payloads=payloads,
        attachments=tuple(kept),
    )


def portable_message(message: Message, accepts: Accepts, own: str | None = None) -> PortableMessage:
    """What ``message`` keeps when sent to a provider that did not produce it.

    ``accepts`` is what the target wire can carry; ``own`` the target
    provider, whose payloads on a non-assistant message are its own and kept
    (an assistant message is another provider's: it keeps no payload).
    """
    content = message.content
    for part in content:
        if type(part) is not TextBlock or part.payloads or part.attributions:
            break
    else:
        # Plain text, the commonest message (every user question): every
        # wire carries it as it is, with nothing to strip or report.
        return PortableMessage(message, tuple(range(len(content))))
    own = None if message.role == "assistant" else own
    dropped: list[Drop] = []
    # Each hosted activity travels as the last transition the message holds.
    last: dict[str, int] = {}
    for i, part in enumerate(content):
        if isinstance(part, HostedActivity):
            last[part.id] = i
    kept: list[Part] = []
    positions: list[int] = []
    for i, part in enumerate(content):
        at = f"content[{i}]"
        out: Part | None
        if isinstance(part, TextBlock):
            out = _text(part, accepts, own, at, dropped)
        elif isinstance(part, HostedActivity):
            out = _hosted(part, own, at, dropped)
            if last[part.id] != i:
                out = None  # superseded by a later transition of the same activity
        elif isinstance(part, ReasoningBlock):
            dropped.append(Drop(at, "reasoning", FOREIGN_REASONING, f"from {_who(message)}"))
            out = None
        elif isinstance(part, ToolCallBlock):
            payloads = _strip(part.payloads, own, at, dropped)
            out = (
                part
                if payloads == part.payloads
                else msgspec.structs.replace(part, payloads=payloads)
            )
        elif isinstance(part, ToolResultBlock):
            out = _tool_result(part, accepts, own, at, dropped)
        elif isinstance(part, UnknownBlock) and message.role != "assistant":
            out = part  # the caller's own (an approval answer): the encoder decides
        elif isinstance(part, UnknownBlock):
            dropped.append(Drop(at, part.type, FOREIGN_BLOCK, f"from {_who(message)}"))
            out = None
        else:
            tag = part.__struct_config__.tag
            out = _other(part, str(tag), accepts, own, at, dropped)
        if out is not None:
            kept.append(out)
            positions.append(i)
    if len(kept) == len(content) and all(a is b for a, b in zip(kept, content, strict=True)):
        return PortableMessage(message, tuple(positions), tuple(dropped))
    return PortableMessage(
        msgspec.structs.replace(message, content=tuple(kept)), tuple(positions), tuple(dropped)
    )


ANYWHERE = Accepts("any provider", citations=True)
"""What the conversation's provider-neutral portable history keeps: citations
(without replay payloads) and, beside the core, the block types named when it
is built (:func:`elelem.conversation.projections.portable_history` adds every
registered one)."""


__all__ = ["ANYWHERE", "CORE_TYPES", "Accepts", "PortableMessage", "portable_message"]
