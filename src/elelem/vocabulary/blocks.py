"""Content blocks: the tagged union keyed by ``type``.

The core set is the blocks every shipping path honors: ``text``,
``reasoning``, ``tool-call`` and ``tool-result``.  Other tags arrive through
the registry; a tag nobody registered decodes to :class:`UnknownBlock`, which
keeps the raw JSON object and is never dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from elelem.errors import AttributionRangeError, DecodeError
from elelem.vocabulary.attribution import Attribution
from elelem.vocabulary.audio import AudioBlock
from elelem.vocabulary.ids import CallId
from elelem.vocabulary.json import JSONValue, check_json, decode_json
from elelem.vocabulary.media import DocumentBlock, ImageBlock
from elelem.vocabulary.payload import ProviderPayload
from elelem.vocabulary.tags import PartStruct, is_reserved_tag


# Every vocabulary struct is gc=False: values are frozen and their JSON parts
# are checked to be plain JSON, so none can be part of a reference cycle, and
# a loaded 100,000-event log then costs the cycle collector nothing.
class TextBlock(PartStruct, frozen=True, tag="text"):
    """Assistant or user text, with the citations attached to it.

    ``complete`` is False when the block was committed from an interrupted
    stream.  ``payloads`` hold native data (item ids, …) for exact replay.
    Every attribution range must lie inside ``text`` (in code points).
    """

    text: str
    attributions: tuple[Attribution, ...] = ()
    payloads: tuple[ProviderPayload, ...] = ()
    complete: bool = True

    def __post_init__(self) -> None:
        if not self.attributions:
            # Runs for every decoded text block: the common case returns first.
            return
        n = len(self.text)
        for i, attribution in enumerate(self.attributions):
            span = attribution.range
            if span is not None and not (0 <= span[0] <= span[1] <= n):
                raise AttributionRangeError(
                    f"attribution {i} range {span[0]}..{span[1]} falls outside text of length {n}",
                    f"$.attributions[{i}].range",
                )


class ReasoningBlock(PartStruct, frozen=True, tag="reasoning"):
    """Model reasoning (thinking).  Signatures and encrypted or redacted
    reasoning live in ``payloads``; a redacted block has empty ``text``."""

    text: str
    payloads: tuple[ProviderPayload, ...] = ()
    complete: bool = True


class ToolCallBlock(PartStruct, frozen=True, tag="tool-call"):
    """A call of a client tool the caller must execute.

    ``arguments`` is the JSON text of the arguments exactly as the provider
    streamed it; :attr:`input` parses it.
    """

    id: CallId
    name: str
    arguments: str
    payloads: tuple[ProviderPayload, ...] = ()

    @property
    def input(self) -> JSONValue:
        """The parsed arguments (``{}`` for empty arguments)."""
        if not self.arguments.strip():
            return {}
        try:
            return decode_json(self.arguments)
        except msgspec.DecodeError as exc:
            raise DecodeError(f"tool call {self.id} arguments are not JSON: {exc}") from exc


class ToolResultBlock(PartStruct, frozen=True, tag="tool-result"):
    """The result of a client tool call, sent back in a user/tool message.

    ``attachments`` are images and documents the tool returned beside its
    text (a screenshot, a fetched PDF); shapes that take them inside the
    result send them there, others report what they leave out.  Unset (not
    encoded at all) when there are none, so a plain result's canonical bytes
    are what they always were; read it as ``block.attachments or ()``.
    """

    call_id: CallId
    content: str
    is_error: bool = False
    name: str | None = None
    payloads: tuple[ProviderPayload, ...] = ()
    attachments: tuple[ImageBlock | DocumentBlock, ...] | msgspec.UnsetType = msgspec.UNSET

    def __post_init__(self) -> None:
        attachments = self.attachments
        if attachments is not msgspec.UNSET and type(attachments) is not tuple:
            attachments = tuple(attachments)
            msgspec.structs.force_setattr(self, "attachments", attachments)
        if attachments == ():
            # No attachments is one value, however it was spelled.
            msgspec.structs.force_setattr(self, "attachments", msgspec.UNSET)


class UnknownBlock:
    """A block whose tag no one registered, kept as its raw JSON object.

    It round-trips through the codec and storage byte-for-byte and is replayed
    verbatim to the provider that produced it.  It is deliberately not a
    msgspec struct: the codec encodes it as ``raw`` itself.

    ``position`` is the block's index in the content sequence that holds it
    (set by :class:`~elelem.vocabulary.Message` and the assembler; None for a
    free-standing block).  It is where the block sits, not part of its value:
    it is never encoded and does not take part in equality.
    """

    __slots__ = ("position", "raw")
    raw: dict[str, JSONValue]
    position: int | None
    tag: ClassVar[str] = "unknown"

    def __init__(self, raw: dict[str, JSONValue], position: int | None = None) -> None:
        if not isinstance(raw, dict):
            raise DecodeError("an unknown block must be a JSON object")
        bad = check_json(raw)
        if bad is not None:
            raise DecodeError("unknown block holds a non-JSON value", bad)
        tag = raw.get("type")
        if not isinstance(tag, str):
            raise DecodeError("an unknown block needs a string 'type'", "$.type")
        if is_reserved_tag(tag):
            # Re-decoding would turn it into (or fail as) the registered type,
            # so it could not round-trip: refuse it up front.
            raise DecodeError(
                f"block tag {tag!r} is registered; it cannot be kept as an unknown block",
                "$.type",
            )
        if position is not None and (type(position) is not int or position < 0):
            raise DecodeError("an unknown block's position must be a non-negative int")
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "position", position)

    def at(self, position: int) -> UnknownBlock:
        """The same block placed at ``position`` (``self`` when already there)."""
        if position == self.position:
            return self
        # raw was validated when self was built: skip the walk.
        block = object.__new__(UnknownBlock)
        object.__setattr__(block, "raw", self.raw)
        object.__setattr__(block, "position", position)
        return block

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("UnknownBlock is immutable")

    def __reduce__(self) -> tuple[type[UnknownBlock], tuple[dict[str, JSONValue], int | None]]:
        # pickle and copy rebuild through __init__, since setattr is refused.
        return (UnknownBlock, (self.raw, self.position))

    def __delattr__(self, name: str) -> None:
        raise AttributeError("UnknownBlock is immutable")

    @property
    def type(self) -> str:
        """The block's tag as it arrived."""
        return str(self.raw["type"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UnknownBlock):
            return NotImplemented
        return self.raw is other.raw or _canon(self.raw) == _canon(other.raw)

    def __hash__(self) -> int:
        return hash(_canon(self.raw))

    def __repr__(self) -> str:
        # The raw JSON is untrusted provider output: show its shape, not its values.
        return (
            f"UnknownBlock(type={self.type!r}, keys={sorted(self.raw)!r}, "
            f"position={self.position!r})"
        )


def place_unknowns(content: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``content`` with every UnknownBlock's ``position`` set to its index there,
    or None when every one is already in place (the common case: no copy)."""
    placed = None
    for i, part in enumerate(content):
        if type(part) is UnknownBlock and part.position != i:
            if placed is None:
                placed = list(content)
            placed[i] = part.at(i)
    return None if placed is None else tuple(placed)


def _canon(raw: dict[str, JSONValue]) -> bytes:
    # Equality is by value of the JSON, order of keys included: a replayed
    # block must be the same bytes, so two orders are two values.
    return msgspec.json.encode(raw)


if TYPE_CHECKING:
    Block = (
        TextBlock
        | ReasoningBlock
        | ToolCallBlock
        | ToolResultBlock
        | ImageBlock
        | DocumentBlock
        | AudioBlock
        | UnknownBlock
    )
else:

    class _BlockMarker(type):
        # msgspec checks that a dec_hook's result is an instance of the field's
        # type; any struct tagged on ``type`` or an UnknownBlock qualifies.
        def __instancecheck__(cls, obj: object) -> bool:
            return isinstance(obj, UnknownBlock) or (
                isinstance(obj, msgspec.Struct)
                and obj.__struct_config__.tag_field == "type"
                and obj.__struct_config__.tag != "hosted"
            )

    class Block(metaclass=_BlockMarker):
        """Any content block: the union of registered block types and
        :class:`UnknownBlock`.  At run time this marker class routes decoding
        through the registry (the codec's ``dec_hook``)."""


CORE_BLOCK_TYPES: tuple[type[msgspec.Struct], ...] = (
    TextBlock,
    ReasoningBlock,
    ToolCallBlock,
    ToolResultBlock,
)

__all__ = [
    "CORE_BLOCK_TYPES",
    "Block",
    "ReasoningBlock",
    "TextBlock",
    "ToolCallBlock",
    "ToolResultBlock",
    "UnknownBlock",
    "place_unknowns",
]
