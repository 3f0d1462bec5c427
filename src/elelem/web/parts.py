"""The UI message stream chunks of tool results, approvals, citations,
provider items and the run's end, for the protocol version a page reads.

The AI SDK's UI message stream grew between ``ai`` 6 and ``ai`` 7; a chunk
an older reader does not know fails its schema and ends the page's stream,
so :class:`~elelem.web.ui_chunks.UIMessageEncoder` takes ``ai_version`` (7 by
default, 6 for a page on ``ai`` 6) and these builders give each version
only what its ``uiMessageChunkSchema`` accepts:

=============================  ============================  ==========================
elelem                         ``ai`` 7                      ``ai`` 6
=============================  ============================  ==========================
a call waiting for approval    ``tool-approval-request``     the same
(``approve="defer"``)          (``approvalId`` = call id)
a hosted tool's approval       a provider-executed           the same
request (``mcp``)              ``dynamic-tool`` part, then
                               ``tool-approval-request``
a call the user refused        ``tool-output-denied``        the same
a block no neutral part holds  ``custom``, ``kind``          ``data-block`` naming it
                               ``{provider}.{type}``
citations of a text block      ``text-end``'s ``citations``  (``providerMetadata`` only)
a run stopped (``aborted``)    ``abort``, then ``finish``    ``abort``, then ``finish``
                               (``interrupted``)             (``other``)
a stream cut before its end    ``finish`` (``interrupted``)  ``error``, ``finish``
                                                             (``error``)
=============================  ============================  ==========================

A refused call is recognised by its result, the one every refusal path of
the tool loop writes (:data:`elelem.turns.pending.REFUSED`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import msgspec

from elelem.turns.pending import REFUSED
from elelem.vocabulary import HostedActivity, ToolCallBlock, ToolResultBlock
from elelem.vocabulary.json import JSONValue, decode_json

AIVersion = Literal[6, 7]
"""The major version of the ``ai`` package whose UI message stream is sent."""

AI_VERSIONS: tuple[AIVersion, ...] = (6, 7)

FINISH_REASONS: Mapping[str, str] = {
    "stop": "stop",
    "max-tokens": "length",
    "content-filter": "content-filter",
    "tool-calls": "tool-calls",
    "error": "error",
}
"""elelem finish reason -> the AI SDK's; ``aborted`` is ``interrupted`` for
``ai`` 7; any other (``paused``, ``refused``, ``unknown``, a plugin's, and
``aborted`` for ``ai`` 6) is ``other``, with elelem's own reason kept in the
message metadata."""

INTERRUPTED = "interrupted"
"""elelem's finish reason (in the message metadata) of a stream that ended
before the provider said it was complete."""


def check_version(version: object) -> AIVersion:
    """``version`` when it is a supported ``ai`` major version, else ValueError."""
    if version not in AI_VERSIONS:
        raise ValueError(f"ai_version must be 6 or 7, not {version!r}")
    return version


def finish_reason(reason: str, version: AIVersion) -> str:
    """The AI SDK finish reason of elelem's ``reason``."""
    if version >= 7 and reason in ("aborted", INTERRUPTED):
        return "interrupted"
    return FINISH_REASONS.get(reason, "other")


def tool_result(result: ToolResultBlock) -> dict[str, Any]:
    """The chunk of a client tool call's result: its output, its error, or
    ``tool-output-denied`` for a call the user refused."""
    if result.is_error and result.content == REFUSED:
        return {"type": "tool-output-denied", "toolCallId": result.call_id}
    if result.is_error:
        return {
            "type": "tool-output-error",
            "toolCallId": result.call_id,
            "errorText": result.content,
        }
    return {"type": "tool-output-available", "toolCallId": result.call_id, "output": result.content}


def approval_requests(
    calls: Iterable[ToolCallBlock], hosted: Iterable[HostedActivity] = ()
) -> list[dict[str, Any]]:
    """A ``tool-approval-request`` for each call waiting for approval.  The
    approval id is the call id: the answer the page sends back
    (:func:`elelem.web.messages.approvals_from_ui`) is then the
    ``approvals`` mapping :func:`elelem.resume` takes.

    A provider's request to run one of its hosted tools (an OpenAI
    ``mcp_approval_request``, ``hosted``) has no tool part yet: it gets a
    provider-executed dynamic one (``tool-input-available``, the MCP tool's
    name and arguments), whose call id is the request's id, then its
    approval request."""
    out: list[dict[str, Any]] = [
        {"type": "tool-approval-request", "approvalId": call.id, "toolCallId": call.id}
        for call in calls
    ]
    for activity in hosted:
        given = activity.input if isinstance(activity.input, dict) else {}
        name = given.get("name")
        arguments = given.get("arguments")
        try:
            parsed = decode_json(arguments) if isinstance(arguments, str) else arguments
        except msgspec.DecodeError:
            parsed = arguments  # shown as the text the provider sent
        out.append(
            {
                "type": "tool-input-available",
                "toolCallId": activity.id,
                "toolName": name if isinstance(name, str) and name else activity.name,
                "input": parsed if parsed is not None else {},
                "providerExecuted": True,
                "dynamic": True,
            }
        )
        out.append(
            {"type": "tool-approval-request", "approvalId": activity.id, "toolCallId": activity.id}
        )
    return out


def custom_or_block(
    tag: str, provider: str | None, version: AIVersion, data: dict[str, JSONValue] | None = None
) -> dict[str, Any]:
    """A block of type ``tag`` no neutral part holds: ``ai`` 7's ``custom``
    part (kind ``{provider}.{tag}``), else a ``data-block`` naming it; its
    JSON is never sent (it may hold the provider's payloads)."""
    if version >= 7:
        return {
            "type": "custom",
            "kind": f"{provider or 'elelem'}.{tag}",
            "providerMetadata": {"elelem": {"type": tag, **(data or {})}},
        }
    return {"type": "data-block", "data": {"type": tag, **(data or {})}}


def citation(
    source: dict[str, Any], text_range: tuple[int, int] | None, excerpt: str | None
) -> dict[str, JSONValue]:
    """One of ``ai`` 7's ``text-end`` citations: the source (as its
    ``source-url`` / ``source-document`` chunk was sent), the cited range of
    the text part and the cited text."""
    if source["type"] == "source-url":
        cited: dict[str, JSONValue] = {
            "type": "source",
            "sourceType": "url",
            "id": source["sourceId"],
            "url": source["url"],
        }
        if "title" in source:
            cited["title"] = source["title"]
    else:
        cited = {
            "type": "source",
            "sourceType": "document",
            "id": source["sourceId"],
            "mediaType": source["mediaType"],
            "title": source["title"],
        }
    out: dict[str, JSONValue] = {"source": cited}
    if text_range is not None and 0 <= text_range[0] <= text_range[1]:
        out["startIndex"], out["endIndex"] = text_range
    if excerpt:
        out["citedText"] = excerpt
    return out


__all__ = [
    "AI_VERSIONS",
    "FINISH_REASONS",
    "INTERRUPTED",
    "AIVersion",
    "approval_requests",
    "check_version",
    "citation",
    "custom_or_block",
    "finish_reason",
    "tool_result",
]
