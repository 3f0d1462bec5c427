"""The public names import from the modules the issues name."""

from __future__ import annotations


def test_public_names_import() -> None:
    from elelem.codec import dumps, loads
    from elelem.stream import Assembler, ProtocolViolation
    from elelem.vocabulary import (
        ActivityId,
        Attribution,
        CallId,
        ConversationId,
        EventId,
        HostedActivity,
        ProviderId,
        ProviderPayload,
        ReasoningBlock,
        ResponseId,
        TextBlock,
        ToolCallBlock,
        ToolResultBlock,
        UnknownBlock,
        Usage,
    )

    names = [
        dumps,
        loads,
        Assembler,
        ProtocolViolation,
        ActivityId,
        Attribution,
        CallId,
        ConversationId,
        EventId,
        HostedActivity,
        ProviderId,
        ProviderPayload,
        ReasoningBlock,
        ResponseId,
        TextBlock,
        ToolCallBlock,
        ToolResultBlock,
        UnknownBlock,
        Usage,
    ]
    assert all(n is not None for n in names)
