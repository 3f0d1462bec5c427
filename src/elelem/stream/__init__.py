"""The chunk protocol and the one assembler (chunks -> committed content)."""

from elelem.errors import ProtocolViolation
from elelem.stream.assembled import AssembledResponse
from elelem.stream.assembler import Assembler, assemble
from elelem.stream.chunks import (
    BlockEnd,
    BlockKey,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    Payload,
    ReasoningDelta,
    ResponseStart,
    Retry,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)

__all__ = [
    "AssembledResponse",
    "Assembler",
    "BlockEnd",
    "BlockKey",
    "BlockStart",
    "Chunk",
    "Citation",
    "Finish",
    "Hosted",
    "Payload",
    "ProtocolViolation",
    "ReasoningDelta",
    "ResponseStart",
    "Retry",
    "TextDelta",
    "ToolCallDelta",
    "UsageUpdate",
    "assemble",
]
