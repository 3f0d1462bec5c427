"""The Vercel AI SDK UI message stream, from any elelem stream (sans-IO).

:class:`UIMessageEncoder` turns what a response stream delivers — each chunk
with the parts the one assembler committed for it — into the chunks of the
AI SDK's UI message stream protocol (``x-vercel-ai-ui-message-stream: v1``),
the stream ``useChat`` reads:

=========================  ==============================================
elelem                     UI message stream
=========================  ==============================================
response start             ``start`` (once), ``start-step``
text block                 ``text-start``, ``text-delta``…, ``text-end``;
                           the text part's ``providerMetadata.elelem``
                           holds its citations (source id, range, excerpt)
citation sources           ``source-url`` (http(s) URLs only) or
                           ``source-document`` (a title, no URL), one per
                           distinct source, after the first block citing it
reasoning block            ``reasoning-start``, ``reasoning-delta``…,
                           ``reasoning-end``
client tool call           ``tool-input-start``, ``tool-input-delta``…,
                           ``tool-input-available`` (``tool-input-error``
                           for arguments that are not JSON or were cut off)
tool result                ``tool-output-available`` / ``tool-output-error``
                           (``tool-output-denied`` for a refused call);
                           its images and documents, a transient
                           ``data-tool-media`` (:func:`~elelem.web.images.tool_media`)
calls waiting for approval ``tool-approval-request`` each (:meth:`~UIMessageEncoder.awaiting`)
a visible retry            ``data-retry``, transient (not kept in the message)
hosted activity            ``data-hosted-activity`` with the activity id as
                           part id: each transition replaces the part's data
                           (its status line, the label of its input)
image, document             ``file`` (bytes as a ``data:`` URL, or an http(s)
                           URL), else ``data-block`` naming it
any other block            ``custom`` (``ai`` 7) or ``data-block`` naming
                           its type (never its JSON)
response finish            ``finish-step``
end of the run             ``finish`` (AI SDK finish reason, and elelem's
                           own reason and summed usage as message metadata)
a stopped run (aborted)    ``abort``, then ``finish``
stream error               ``error``, then ``finish`` (reason ``error``;
                           ``interrupted`` for a stream cut short, ``ai`` 7)
=========================  ==============================================

What differs between ``ai`` 6 and ``ai`` 7 (``ai_version``) is
:mod:`elelem.web.parts`'s.

Only the portable projection travels: no :class:`~elelem.vocabulary.ProviderPayload`
value (signatures, encrypted reasoning, ``encrypted_content``, encrypted
citation indexes, raw provider blocks, raw usage) is ever put in a chunk.
Every chunk is built field by field from neutral values; nothing is
serialized wholesale.  Text is carried exactly (the page escapes it when it
shows it); a source URL whose scheme is not http(s) is never sent as a URL.

The one exception is a display obligation: Google requires the search
suggestions of a grounded answer (``searchEntryPoint.renderedContent``, HTML
it composed) to be shown with it, so by default the hosted-activity data of
such a search carries that HTML under ``searchEntryPoint`` (for the page to
show in a sandboxed frame that runs no script) and the suggestions as
``searchSuggestions`` (``[{terms, url}]``, http(s) URLs only).  A page that
cannot honour it turns it off with ``search_entry_point=False``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from elelem.errors import BlobMissingError, ElelemError, IncompleteStreamError, error_line
from elelem.render.lines import activity_label, activity_line, add_usage
from elelem.render.obligations import display_obligations
from elelem.render.sanitize import safe_url, sanitize_line
from elelem.stream.chunks import (
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    ReasoningDelta,
    ResponseStart,
    Retry,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.turns.limits import USAGE_LIMIT_END, UsageLimitExceeded
from elelem.vocabulary import (
    Attribution,
    AudioBlock,
    BytesSource,
    DocumentBlock,
    HostedActivity,
    ImageBlock,
    Part,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    URLSource,
    Usage,
)
from elelem.vocabulary.json import JSONValue
from elelem.web.images import tool_media
from elelem.web.parts import (
    FINISH_REASONS,
    INTERRUPTED,
    AIVersion,
    approval_requests,
    check_version,
    citation,
    custom_or_block,
    finish_reason,
    tool_result,
)
from elelem.web.sources import DOCUMENT_MEDIA_TYPE, document_location
from elelem.web.sources import Sources as _Sources

UIChunk = dict[str, Any]
"""One chunk of the UI message stream, as the JSON object sent."""

UI_MESSAGE_STREAM_HEADERS: Mapping[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The response headers of a UI message stream (the AI SDK's own set)."""

ERROR_TEXT_LIMIT = 2000


def search_entry_point(activity: HostedActivity) -> str | None:
    """Google's search suggestions HTML (``searchEntryPoint.renderedContent``)
    kept in a grounded search's payload, or None.

    Google requires it to be displayed with the grounded answer.  It is
    provider-composed HTML: show it only in a sandboxed frame that runs no
    script (the viewer does).
    """
    for obligation in display_obligations(activity):
        if obligation.html is not None:
            return obligation.html
    return None


def usage_data(usage: Usage) -> dict[str, JSONValue]:
    """The neutral counters of ``usage`` (never the provider's raw object)."""
    return {
        "input": usage.input,
        "output": usage.output,
        "reasoning": usage.reasoning,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "hosted": dict(usage.hosted),
    }


def error_text(exc: BaseException) -> str:
    """What an ``error`` chunk says about ``exc``: the line the CLI prints
    (a stream error's kind and message; another error's message), on one
    line."""
    text = sanitize_line(error_line(exc))
    return text if len(text) <= ERROR_TEXT_LIMIT else text[: ERROR_TEXT_LIMIT - 1] + "…"


INLINE_MEDIA_LIMIT = 8 * 1024 * 1024
"""Attachments up to this size travel inline (a ``data:`` URL); larger ones,
and ones whose bytes are not at hand, are named in a ``data-block`` part."""


_KINDS = {ImageBlock: "image", DocumentBlock: "document", AudioBlock: "audio"}


def media_url(
    block: ImageBlock | DocumentBlock | AudioBlock, fetch: Callable[[str], bytes] | None = None
) -> str | None:
    """A URL a page may load ``block`` from: its bytes as a ``data:`` URL
    (held, or got from ``fetch`` by their SHA-256; at most
    :data:`INLINE_MEDIA_LIMIT`), or its http(s) URL; else None."""
    source = block.source
    if isinstance(source, BytesSource) and block.media_type:
        blob = source.blob
        if blob.size > INLINE_MEDIA_LIMIT:
            return None
        try:
            data = blob.data
        except BlobMissingError:
            if fetch is None:
                return None
            data = fetch(blob.sha256)
        return f"data:{block.media_type};base64," + base64.b64encode(data).decode("ascii")
    if isinstance(source, URLSource):
        return safe_url(source.url)
    return None


class UIMessageEncoder:
    """Encodes one assistant message's run — one response, or the several
    responses of a tool loop or a continued turn — as UI message stream chunks.

    Feed it every ``(chunk, committed)`` pair a response stream yields
    (:meth:`feed`), the tool results a loop appends between responses
    (:meth:`tool_results`), an error that ended the run (:meth:`error`), and
    call :meth:`close` once at the end; each returns the chunks to send, in
    order.  ``message_id`` becomes the ``start`` chunk's ``messageId`` when
    given.  ``dynamic_tools`` marks client tool calls ``dynamic`` (tools the
    page does not declare; they become ``dynamic-tool`` parts).
    ``search_entry_point`` (on by default) sends Google's search suggestions,
    which must be shown with a grounded answer (see the module docs).
    ``ai_version`` is the major version of the ``ai`` package the page reads
    with: 7 (the default) or 6, which lacks some chunks
    (:mod:`elelem.web.parts`).
    """

    def __init__(
        self,
        *,
        message_id: str | None = None,
        dynamic_tools: bool = False,
        search_entry_point: bool = True,
        ai_version: AIVersion = 7,
    ) -> None:
        self._version = check_version(ai_version)
        self._message_id = message_id
        self._dynamic = dynamic_tools
        self._entry_point = search_entry_point
        self._started = False
        self._closed = False
        self._in_step = False
        self._count = 0
        self._open: dict[object, tuple[str, str]] = {}  # block key -> (kind, part id)
        self._calls: dict[str, str] = {}  # call id -> tool name, until input is known
        self._ending: tuple[str, str] | None = None  # the block a block-end closed
        self._sources = _Sources()
        self._activities: dict[str, HostedActivity] = {}
        self._usage: Usage | None = None
        self._step_usage: Usage | None = None
        self._finish: Finish | None = None
        self._metadata: dict[str, JSONValue] = {}
        self._cut: str | None = None  # the error line of a stream cut short (ai 7)

    # -- public ------------------------------------------------------------

    def start(self) -> list[UIChunk]:
        """The ``start`` chunk (sent once, before anything else; the other
        methods send it first when it was not sent yet)."""
        if self._started:
            return []
        self._started = True
        chunk: UIChunk = {"type": "start"}
        if self._message_id is not None:
            chunk["messageId"] = self._message_id
        return [chunk]

    def feed(self, chunk: Chunk | None, committed: Sequence[Part] = ()) -> list[UIChunk]:
        """The UI chunks for one stream chunk and the parts it committed
        (``chunk`` None: parts committed between responses, such as a tool
        loop's results)."""
        out = self.start()
        if isinstance(chunk, TextDelta | ReasoningDelta):
            opened = self._open.get(chunk.index)
            if opened is not None and chunk.text:
                out.append({"type": f"{opened[0]}-delta", "id": opened[1], "delta": chunk.text})
        elif isinstance(chunk, ToolCallDelta):
            opened = self._open.get(chunk.index)
            if opened is not None and chunk.arguments:
                out.append(
                    {
                        "type": "tool-input-delta",
                        "toolCallId": opened[1],
                        "inputTextDelta": chunk.arguments,
                    }
                )
        elif isinstance(chunk, BlockStart):
            self._block_start(chunk, out)
        elif isinstance(chunk, BlockEnd):
            self._block_end(chunk, out)
        elif isinstance(chunk, ResponseStart):
            self._response_start(chunk, out)
        elif isinstance(chunk, UsageUpdate):
            self._step_usage = chunk.usage
        elif isinstance(chunk, Retry):
            # Transient: the page is told (useChat's onData), the message keeps no part.
            retry: dict[str, JSONValue] = {
                "attempt": chunk.attempt,
                "delay": chunk.delay,
                "reason": chunk.reason,
                "kind": chunk.kind,
            }
            if chunk.status is not None:
                retry["status"] = chunk.status
            if chunk.fallback is not None:
                retry["fallback"] = chunk.fallback
            out.append({"type": "data-retry", "data": retry, "transient": True})
        # Parts committed by any chunk (a block end, a hosted transition, a
        # held tool call flushed by a later commit or by the finish).
        for part in committed:
            self._committed(part, out)
        if isinstance(chunk, Finish):
            self._on_finish(chunk, out)
        return out

    def tool_results(self, results: Iterable[ToolResultBlock]) -> list[UIChunk]:
        """The chunks for the results of client tool calls (a tool loop)."""
        out = self.start()
        for result in results:
            out.append(tool_result(result))
            out.extend(tool_media(result))
        return out

    def awaiting(
        self, calls: Iterable[ToolCallBlock], hosted: Iterable[HostedActivity] = ()
    ) -> list[UIChunk]:
        """A ``tool-approval-request`` for each of ``calls`` and each hosted
        tool's approval request (``hosted``), which wait for the page's
        approval (a run with ``approve="defer"`` stopped
        ``awaiting-approval``; :func:`elelem.web.asgi.with_approvals`)."""
        return self.start() + approval_requests(calls, hosted)

    def error(self, exc: BaseException) -> list[UIChunk]:
        """The ``error`` chunk for what ended the run (the step is closed).
        With ``ai`` 7, a stream cut before the provider's end is no error
        but the ``interrupted`` finish (what arrived is kept), the error's
        line in the message metadata."""
        out = self.start()
        cut = self._version >= 7 and isinstance(exc, IncompleteStreamError)
        if not cut:
            out.append({"type": "error", "errorText": error_text(exc)})
        else:
            self._cut = error_text(exc)
        self._open.clear()
        self._calls.clear()
        if isinstance(exc, UsageLimitExceeded):
            # The limit ended the run, even after a response that finished:
            # ``other`` to the AI SDK, ``usage-limit`` in the metadata.
            self._finish = Finish(USAGE_LIMIT_END, failure=str(exc))
        elif self._finish is None or self._in_step:
            self._finish = Finish(INTERRUPTED if cut else "error", failure=str(exc))
        if self._in_step:
            self._end_step(out)
        return out

    def close(self) -> list[UIChunk]:
        """The final ``finish`` chunk (once)."""
        if self._closed:
            return []
        out = self.start()
        self._closed = True
        if self._in_step:
            self._end_step(out)
        chunk: UIChunk = {"type": "finish"}
        metadata: dict[str, JSONValue] = {}
        if self._finish is not None:
            if self._finish.reason == "aborted":
                # Stopped (by the user, a deadline, a cancelled task): the
                # AI SDK's own abort, then the finish.
                abort: UIChunk = {"type": "abort", "reason": self._finish.failure or "aborted"}
                out.append(abort)
            chunk["finishReason"] = finish_reason(self._finish.reason, self._version)
            metadata["finishReason"] = self._finish.reason
        if self._cut is not None:
            metadata["error"] = self._cut
        if self._usage is not None:
            metadata["usage"] = usage_data(self._usage)
        if metadata:
            chunk["messageMetadata"] = metadata
        out.append(chunk)
        return out

    # -- internals ---------------------------------------------------------

    def _step(self, out: list[UIChunk]) -> None:
        if self._in_step:
            self._end_step(out)
        self._in_step = True
        self._step_usage = None
        out.append({"type": "start-step"})

    def _end_step(self, out: list[UIChunk]) -> None:
        self._in_step = False
        self._usage = add_usage(self._usage, self._step_usage)
        self._step_usage = None
        out.append({"type": "finish-step"})

    def _next_id(self, kind: str) -> str:
        self._count += 1
        return f"{kind}-{self._count}"

    def _response_start(self, chunk: ResponseStart, out: list[UIChunk]) -> None:
        self._step(out)
        metadata: dict[str, JSONValue] = {}
        if chunk.provider is not None:
            metadata["provider"] = chunk.provider
        if chunk.model is not None:
            metadata["model"] = chunk.model
        if any(self._metadata.get(k) != v for k, v in metadata.items()):
            self._metadata.update(metadata)
            out.append({"type": "message-metadata", "messageMetadata": metadata})

    def _block_start(self, chunk: BlockStart, out: list[UIChunk]) -> None:
        if not self._in_step:
            self._step(out)
        if chunk.block in ("text", "reasoning"):
            part_id = self._next_id(chunk.block)
            self._open[chunk.index] = (chunk.block, part_id)
            out.append({"type": f"{chunk.block}-start", "id": part_id})
        elif chunk.block == "tool-call" and chunk.id:
            self._open[chunk.index] = ("tool-call", chunk.id)
            self._calls[chunk.id] = chunk.name or ""
            start: UIChunk = {
                "type": "tool-input-start",
                "toolCallId": chunk.id,
                "toolName": chunk.name or "",
            }
            if self._dynamic:
                start["dynamic"] = True
            out.append(start)

    def _block_end(self, chunk: BlockEnd, out: list[UIChunk]) -> None:
        opened = self._open.pop(chunk.index, None)
        if opened is not None and opened[0] in ("text", "reasoning"):
            # The end is sent with the block this chunk commits, which holds
            # the citations.
            self._ending = opened

    def _committed(self, part: Part, out: list[UIChunk]) -> None:
        if isinstance(part, TextBlock):
            kind_id = self._take_ending("text")
            sources: list[UIChunk] = []
            end: UIChunk = {"type": "text-end", "id": kind_id or self._next_id("text")}
            if kind_id is None:
                # A text block that arrived whole: announce it.
                out.append({"type": "text-start", "id": end["id"]})
                if part.text:
                    out.append({"type": "text-delta", "id": end["id"], "delta": part.text})
            if part.attributions:
                cited = [self._citation(a, sources) for a in part.attributions]
                end["providerMetadata"] = {"elelem": {"citations": cited}}
                if self._version >= 7:
                    end["citations"] = [
                        citation(
                            self._sources.chunks[str(c["sourceId"])],
                            a.range,
                            a.excerpt,
                        )
                        for c, a in zip(cited, part.attributions, strict=True)
                    ]
            out.append(end)
            out.extend(sources)
        elif isinstance(part, ReasoningBlock):
            kind_id = self._take_ending("reasoning")
            end = {"type": "reasoning-end", "id": kind_id or self._next_id("reasoning")}
            if kind_id is None:
                out.append({"type": "reasoning-start", "id": end["id"]})
                if part.text:
                    out.append({"type": "reasoning-delta", "id": end["id"], "delta": part.text})
            if not part.text and part.payloads:
                end["providerMetadata"] = {"elelem": {"redacted": True}}
            out.append(end)
        elif isinstance(part, ToolCallBlock):
            self._tool_call(part, out)
        elif isinstance(part, HostedActivity):
            self._hosted(part, out)
        elif isinstance(part, ToolResultBlock):
            out.append(tool_result(part))
            out.extend(tool_media(part))
        elif isinstance(part, ImageBlock | DocumentBlock | AudioBlock):
            url = media_url(part)
            if url is not None:
                media = part.media_type or DOCUMENT_MEDIA_TYPE
                out.append({"type": "file", "mediaType": media, "url": url})
            else:
                data: dict[str, JSONValue] = {"type": _KINDS[type(part)]}
                if part.name:
                    data["name"] = part.name
                out.append({"type": "data-block", "data": data})
        else:
            # The default arm: a block nobody maps here is named, never
            # sent as its JSON.
            tag = part.type if isinstance(part, UnknownBlock) else str(getattr(part, "type", "?"))
            provider = self._metadata.get("provider")
            out.append(
                custom_or_block(tag, provider if isinstance(provider, str) else None, self._version)
            )

    def _take_ending(self, kind: str) -> str | None:
        ending = self._ending
        if ending is not None and ending[0] == kind:
            self._ending = None
            return ending[1]
        return None

    def _citation(self, attribution: Attribution, sources: list[UIChunk]) -> dict[str, JSONValue]:
        cite: dict[str, JSONValue] = {"sourceId": self._sources.cite(attribution, sources)}
        document = document_location(attribution)
        if document is not None:
            cite["location"] = document.label
        if attribution.range is not None:
            cite["range"] = list(attribution.range)
        if attribution.excerpt:
            cite["excerpt"] = attribution.excerpt
        return cite

    def _tool_call(self, call: ToolCallBlock, out: list[UIChunk]) -> None:
        name = self._calls.pop(call.id, None)
        if name is None:
            # A call that arrived whole (a non-streamed response).
            start: UIChunk = {
                "type": "tool-input-start",
                "toolCallId": call.id,
                "toolName": call.name,
            }
            if self._dynamic:
                start["dynamic"] = True
            out.append(start)
        chunk: UIChunk
        try:
            chunk = {
                "type": "tool-input-available",
                "toolCallId": call.id,
                "toolName": call.name,
                "input": call.input,
            }
        except ElelemError as exc:
            chunk = {
                "type": "tool-input-error",
                "toolCallId": call.id,
                "toolName": call.name,
                "input": call.arguments,
                "errorText": str(exc),
            }
        if self._dynamic:
            chunk["dynamic"] = True
        out.append(chunk)

    def _hosted(self, transition: HostedActivity, out: list[UIChunk]) -> None:
        started = self._activities.get(transition.id)
        if started is None:
            self._activities[transition.id] = transition
        data: dict[str, JSONValue] = {
            "id": transition.id,
            "name": transition.name,
            "state": transition.state,
            "input": transition.input
            if transition.input is not None
            else (started.input if started else None),
            "summary": transition.summary,
            "status": activity_line(transition, started),
            "label": activity_label(transition.name),
        }
        if self._entry_point:
            for obligation in display_obligations(transition):
                if obligation.html is not None:
                    data["searchEntryPoint"] = obligation.html
                data["searchSuggestions"] = [
                    {"terms": s.terms, "url": s.url} for s in obligation.suggestions
                ]
        out.append({"type": "data-hosted-activity", "id": transition.id, "data": data})

    def _on_finish(self, finish: Finish, out: list[UIChunk]) -> None:
        self._finish = finish
        # Tool calls whose arguments never completed (max-tokens cut them off):
        # the assembler dropped them; the page is told, not left waiting.
        for call_id, name in self._calls.items():
            out.append(
                {
                    "type": "tool-input-error",
                    "toolCallId": call_id,
                    "toolName": name,
                    "input": None,
                    "errorText": f"the arguments were cut off ({finish.reason})",
                }
            )
        self._calls.clear()
        if finish.reason == "error":
            out.append(
                {
                    "type": "error",
                    "errorText": f"error: {finish.failure or 'the provider reported an error'}",
                }
            )
        self._end_step(out)


__all__ = [
    "DOCUMENT_MEDIA_TYPE",
    "FINISH_REASONS",
    "UI_MESSAGE_STREAM_HEADERS",
    "UIChunk",
    "UIMessageEncoder",
    "document_location",
    "error_text",
    "media_url",
    "search_entry_point",
    "usage_data",
]
