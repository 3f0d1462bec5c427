"""elelem.web's UI message stream, read by the AI SDK's own client code.

A real uvicorn server relays elelem streams as UIMessageStreamResponse; Node
runs the pinned `ai` package's DefaultChatTransport (what useChat uses) and
readUIMessageStream over them, and the resulting UIMessage parts are compared
exactly.  Every corpus recording goes through it, and no provider payload
value reaches the stream.
"""

from __future__ import annotations

import base64
import csv
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from elelem.codec import to_builtins
from elelem.errors import IncompleteStreamError, ServerError
from elelem.render.lines import activity_label
from elelem.render.obligations import display_obligations
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.stream.chunks import (
    BlockEnd,
    BlockStart,
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
from elelem.testing.asgi import ASGIServer
from elelem.turns.limits import UsageLimitExceeded
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    DocumentLocation,
    HostedActivity,
    ImageBlock,
    Part,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from elelem.web import DONE, UIMessageEncoder, UIMessageStreamResponse, sse_event
from elelem.web.asgi import ui_message_chunks
from web_helpers import (
    ai7_reader_ready,
    ai_reader_ready,
    demo_interaction,
    png,
    read_with_ai,
    recorded_pairs,
    replaying,
)

Pairs = list[tuple[Chunk, tuple[Part, ...]]]
P = ProviderId("anthropic")


def feed(chunks: list[Chunk]) -> Pairs:
    assembler = Assembler(P)
    return [(chunk, assembler.feed(chunk)) for chunk in chunks]


async def _yield(
    pairs: Pairs, error: Exception | None = None
) -> AsyncIterator[tuple[Chunk, tuple[Part, ...]]]:
    for pair in pairs:
        yield pair
    if error is not None:
        raise error


def encode_all(
    pairs: Pairs, error: Exception | None = None, **options: Any
) -> list[dict[str, Any]]:
    encoder = UIMessageEncoder(**{"ai_version": 6, **options})
    out: list[dict[str, Any]] = []
    for chunk, committed in pairs:
        out += encoder.feed(chunk, committed)
    if error is not None:
        out += encoder.error(error)
    return out + encoder.close()


# --------------------------------------------------------------------------
# A synthetic run: every mapping of the table, chunk by chunk
# --------------------------------------------------------------------------

SIG = ProviderPayload(P, "signature", None, "SIGNATURE-never-in-the-browser-0001")
REPLAY = ProviderPayload(P, "citation", None, {"encrypted_index": "ENCRYPTED-INDEX-never-0002"})
HOSTED_RAW = ProviderPayload(
    P, "server_tool_block", None, {"encrypted_content": "ENCRYPTED-CONTENT-0003"}
)

SYNTHETIC: list[Chunk] = [
    ResponseStart("msg_1", "claude-x", P),
    BlockStart(0, "reasoning"),
    ReasoningDelta(0, "think"),
    Payload(0, SIG),
    BlockEnd(0),
    BlockStart(1, "reasoning"),  # redacted: a payload, no text
    Payload(1, SIG),
    BlockEnd(1),
    Hosted(HostedActivity(ActivityId("srv_1"), "web_search", "started", {"query": "q"})),
    Hosted(
        HostedActivity(
            ActivityId("srv_1"), "web_search", "completed", None, "2 results", HOSTED_RAW
        )
    ),
    BlockStart(2, "text"),
    TextDelta(2, "Cited"),
    TextDelta(2, " text"),
    Citation(2, Attribution(Source("https://a.example/x", "A <b>"), "ex", (0, 5), REPLAY)),
    Citation(2, Attribution(Source("javascript:alert(1)", "Evil"), None, None, REPLAY)),
    Citation(2, Attribution(Source(None, "Doc title"))),
    Citation(2, Attribution(Source("https://a.example/x", "A <b>"), "again")),
    BlockEnd(2),
    BlockStart(3, "tool-call", id="call_1", name="get_weather"),
    ToolCallDelta(3, '{"city":'),
    ToolCallDelta(3, '"Paris"}'),
    BlockEnd(3),
    BlockStart(4, "unknown", raw={"type": "mystery_block", "secret": "RAW-BLOCK-0004"}),
    BlockEnd(4),
    BlockStart(5, "tool-call", id="call_2", name="lookup"),
    ToolCallDelta(5, '{"cut'),
    BlockEnd(5),
    UsageUpdate(Usage(input=10, output=5, raw={"raw_secret": "RAW-USAGE-0005"})),
    Finish(
        "max-tokens",
        "max_tokens",
        payloads=(ProviderPayload(P, "envelope", None, "ENVELOPE-0006"),),
    ),
]

SYNTHETIC_UI = [
    {"type": "start", "messageId": "m-1"},
    {"type": "start-step"},
    {"type": "message-metadata", "messageMetadata": {"provider": "anthropic", "model": "claude-x"}},
    {"type": "reasoning-start", "id": "reasoning-1"},
    {"type": "reasoning-delta", "id": "reasoning-1", "delta": "think"},
    {"type": "reasoning-end", "id": "reasoning-1"},
    {"type": "reasoning-start", "id": "reasoning-2"},
    {
        "type": "reasoning-end",
        "id": "reasoning-2",
        "providerMetadata": {"elelem": {"redacted": True}},
    },
    {
        "type": "data-hosted-activity",
        "id": "srv_1",
        "data": {
            "id": "srv_1",
            "name": "web_search",
            "state": "started",
            "input": {"query": "q"},
            "summary": "",
            "status": 'searching "q"',
            "label": "web search",
        },
    },
    {
        "type": "data-hosted-activity",
        "id": "srv_1",
        "data": {
            "id": "srv_1",
            "name": "web_search",
            "state": "completed",
            "input": {"query": "q"},
            "summary": "2 results",
            "status": 'searched "q" → 2 results',
            "label": "web search",
        },
    },
    {"type": "text-start", "id": "text-3"},
    {"type": "text-delta", "id": "text-3", "delta": "Cited"},
    {"type": "text-delta", "id": "text-3", "delta": " text"},
    {
        "type": "text-end",
        "id": "text-3",
        "providerMetadata": {
            "elelem": {
                "citations": [
                    {"sourceId": "source-1", "range": [0, 5], "excerpt": "ex"},
                    {"sourceId": "source-2"},
                    {"sourceId": "source-3"},
                    {"sourceId": "source-1", "excerpt": "again"},
                ]
            }
        },
    },
    {"type": "source-url", "sourceId": "source-1", "url": "https://a.example/x", "title": "A <b>"},
    {
        "type": "source-document",
        "sourceId": "source-2",
        "mediaType": "application/octet-stream",
        "title": "Evil",
    },
    {
        "type": "source-document",
        "sourceId": "source-3",
        "mediaType": "application/octet-stream",
        "title": "Doc title",
    },
    {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "get_weather"},
    {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '{"city":'},
    {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '"Paris"}'},
    {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "get_weather",
        "input": {"city": "Paris"},
    },
    {"type": "data-block", "data": {"type": "mystery_block"}},
    {"type": "tool-input-start", "toolCallId": "call_2", "toolName": "lookup"},
    {"type": "tool-input-delta", "toolCallId": "call_2", "inputTextDelta": '{"cut'},
    {
        "type": "tool-input-error",
        "toolCallId": "call_2",
        "toolName": "lookup",
        "input": None,
        "errorText": "the arguments were cut off (max-tokens)",
    },
    {"type": "finish-step"},
    {
        "type": "finish",
        "finishReason": "length",
        "messageMetadata": {
            "finishReason": "max-tokens",
            "usage": {
                "input": 10,
                "output": 5,
                "reasoning": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "hosted": {},
            },
        },
    },
]

# What the AI SDK's reader makes of it (the message it hands useChat).
SYNTHETIC_PARTS = [
    {"type": "step-start"},
    {"type": "reasoning", "id": "reasoning-1", "text": "think", "state": "done"},
    {
        "type": "reasoning",
        "id": "reasoning-2",
        "text": "",
        "providerMetadata": {"elelem": {"redacted": True}},
        "state": "done",
    },
    {"type": "data-hosted-activity", "id": "srv_1", "data": SYNTHETIC_UI[9]["data"]},
    {
        "type": "text",
        "text": "Cited text",
        "providerMetadata": SYNTHETIC_UI[13]["providerMetadata"],
        "state": "done",
    },
    {"type": "source-url", "sourceId": "source-1", "url": "https://a.example/x", "title": "A <b>"},
    {
        "type": "source-document",
        "sourceId": "source-2",
        "mediaType": "application/octet-stream",
        "title": "Evil",
    },
    {
        "type": "source-document",
        "sourceId": "source-3",
        "mediaType": "application/octet-stream",
        "title": "Doc title",
    },
    {
        "type": "tool-get_weather",
        "toolCallId": "call_1",
        "state": "input-available",
        "input": {"city": "Paris"},
    },
    {"type": "data-block", "data": {"type": "mystery_block"}},
    {
        "type": "tool-lookup",
        "toolCallId": "call_2",
        "state": "output-error",
        "rawInput": None,
        "errorText": "the arguments were cut off (max-tokens)",
    },
]


RED = png()
RED_URL = "data:image/png;base64," + base64.b64encode(RED).decode()
DOC = Source(None, "Q3 report", DocumentLocation(0, "page", 3, 5, message=0, block=1))
MEDIA: Pairs = [
    *feed(
        [
            Retry(1, 0.5, "rate limit", "rate-limit", 429),
            ResponseStart("r", "m", P),
            BlockStart(0, "text"),
            TextDelta(0, "Revenue grew."),
            Citation(0, Attribution(DOC, "grew 12%")),
            Citation(0, Attribution(Source(None, "Q3 report", DocumentLocation(0, "page", 7, 8)))),
            BlockEnd(0),
        ]
    ),
    (None, (ImageBlock.from_bytes(RED), ImageBlock.from_url("ftp://a.example/x.png", "image/png"))),
    (Finish("stop"), ()),
]
MEDIA_PARTS = [
    {"type": "step-start"},
    {
        "type": "text",
        "text": "Revenue grew.",
        "providerMetadata": {
            "elelem": {
                "citations": [
                    {"sourceId": "source-1", "location": "pp. 3–4", "excerpt": "grew 12%"},
                    {"sourceId": "source-1", "location": "p. 7"},
                ]
            }
        },
        "state": "done",
    },
    {
        "type": "source-document",
        "sourceId": "source-1",
        "mediaType": "application/octet-stream",
        "title": "Q3 report",
    },
    {"type": "file", "mediaType": "image/png", "url": RED_URL},
    {"type": "data-block", "data": {"type": "image", "name": "ftp://a.example/x.png"}},
]


def test_a_visible_retry_is_a_transient_data_part() -> None:
    out = encode_all(MEDIA)
    assert out[:3] == [
        {"type": "start"},
        {
            "type": "data-retry",
            "data": {
                "attempt": 1,
                "delay": 0.5,
                "reason": "rate limit",
                "kind": "rate-limit",
                "status": 429,
            },
            "transient": True,
        },
        {"type": "start-step"},
    ]


def test_the_encoder_maps_every_kind_of_part() -> None:
    assert encode_all(feed(SYNTHETIC), message_id="m-1") == SYNTHETIC_UI


def test_no_payload_value_of_the_synthetic_run_is_sent() -> None:
    body = b"".join(sse_event(c) for c in encode_all(feed(SYNTHETIC)))
    for secret in (
        b"SIGNATURE",
        b"ENCRYPTED",
        b"RAW-BLOCK",
        b"RAW-USAGE",
        b"ENVELOPE",
        b"javascript",
    ):
        assert secret not in body


def test_dynamic_tools_and_tool_results() -> None:
    chunks: list[Chunk] = [
        ResponseStart("r", "m", P),
        BlockStart(0, "tool-call", id="c1", name="f"),
        ToolCallDelta(0, "not json"),
        BlockEnd(0),
        Finish("tool-calls"),
    ]
    encoder = UIMessageEncoder(dynamic_tools=True)
    out: list[dict[str, Any]] = []
    for chunk, committed in feed(chunks):
        out += encoder.feed(chunk, committed)
    out += encoder.tool_results([ToolResultBlock(CallId("c1"), "bad input", is_error=True)])
    out += encoder.close()
    tools = [c for c in out if c["type"].startswith("tool-")]
    assert tools[0] == {
        "type": "tool-input-start",
        "toolCallId": "c1",
        "toolName": "f",
        "dynamic": True,
    }
    assert tools[2]["type"] == "tool-input-error"
    assert tools[2]["input"] == "not json"
    assert tools[2]["dynamic"] is True
    assert tools[2]["errorText"].startswith("tool call c1 arguments are not JSON")
    assert tools[3] == {"type": "tool-output-error", "toolCallId": "c1", "errorText": "bad input"}
    assert out[-1]["finishReason"] == "tool-calls"


def test_a_whole_response_and_a_tool_loop_are_steps_of_one_message() -> None:
    """A non-streamed response commits whole blocks: each is announced; a
    second response is a second step; results between them are outputs."""
    first = feed(
        [
            ResponseStart("r1", "m", P),
            BlockStart(0, "tool-call", id="c1", name="f"),
            ToolCallDelta(0, "{}"),
            BlockEnd(0),
            Finish("tool-calls"),
        ]
    )
    whole = (
        TextBlock("done", (Attribution(Source("https://b.example", None)),)),
        ReasoningBlock("r"),
    )
    second: Pairs = [(ResponseStart("r2", "m", P), ()), (Finish("stop"), whole)]
    encoder = UIMessageEncoder()
    out: list[dict[str, Any]] = []
    for chunk, committed in first:
        out += encoder.feed(chunk, committed)
    out += encoder.tool_results([ToolResultBlock(CallId("c1"), "42")])
    for chunk, committed in second:
        out += encoder.feed(chunk, committed)
    out += encoder.close()
    kinds = [c["type"] for c in out]
    assert kinds == [
        "start",
        "start-step",
        "message-metadata",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "finish-step",
        "tool-output-available",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "source-url",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "finish-step",
        "finish",
    ]
    assert out[7] == {"type": "tool-output-available", "toolCallId": "c1", "output": "42"}
    assert out[12] == {"type": "source-url", "sourceId": "source-1", "url": "https://b.example"}


def test_an_error_ends_the_run_with_error_and_finish() -> None:
    pairs = feed([ResponseStart("r", "m", P), BlockStart(0, "text"), TextDelta(0, "par")])
    out = encode_all(pairs, ServerError("upstream said 500", status=500))
    assert out[-3:] == [
        {"type": "error", "errorText": "server: upstream said 500"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "error", "messageMetadata": {"finishReason": "error"}},
    ]


@pytest.mark.parametrize("version", [6, 7])
def test_a_usage_limit_ends_the_run_with_finish_other(version: int) -> None:
    """Before any request (no response finished) and after a response that
    finished ``stop``: the limit ended the run either way, ``other`` to the
    AI SDK and ``usage-limit`` in the metadata, the limit's line the error."""
    before = UsageLimitExceeded("requests", 0, 1, "before-request")
    after = UsageLimitExceeded("output_tokens", 2, 3, "after-response")
    answered = feed([ResponseStart("r", "m", P), BlockStart(0, "text"), TextDelta(0, "ok"),
                     BlockEnd(0), Finish("stop")])  # fmt: skip
    for pairs, exc in (([], before), (answered, after)):
        out = encode_all(pairs, exc, ai_version=version)
        assert out[-2:] == [
            {"type": "error", "errorText": str(exc)},
            {"type": "finish", "finishReason": "other",
             "messageMetadata": {"finishReason": "usage-limit"}},
        ]  # fmt: skip


def test_a_provider_error_finish_is_reported() -> None:
    out = encode_all(feed([ResponseStart("r", "m", P), Finish("error", failure="quota")]))
    assert {"type": "error", "errorText": "error: quota"} in out
    assert out[-1]["finishReason"] == "error"


async def _sse(pairs: Pairs) -> bytes:
    body = b""
    response = UIMessageStreamResponse(_yield(pairs), ai_version=6)
    async for part in response.body_iterator:
        body += part if isinstance(part, bytes) else part.encode()
    return body


def test_the_response_is_sse_with_the_protocol_headers() -> None:
    import asyncio

    response = UIMessageStreamResponse(_yield([]))
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    body = asyncio.run(_sse(feed([ResponseStart("r", "m", P), Finish("stop")])))
    assert body.startswith(b'data: {"type":"start"}\n\ndata: {"type":"start-step"}\n\n')
    assert body.endswith(
        b'data: {"type":"finish","finishReason":"stop","messageMetadata":{"finishReason":"stop"}}\n\n'
        + DONE
    )


# --------------------------------------------------------------------------
# The AI SDK's reader over a real server
# --------------------------------------------------------------------------


def corpus_cases(root: Path) -> list[tuple[str, Pairs, AssembledResponse, Exception | None]]:
    from elelem.cli.inspect import detect_shape
    from elelem.recordings.cassettes import load

    with open(root / "INDEX.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    cases = []
    for row in rows:
        for interaction in load(root / row["local_file"]).interactions:
            if detect_shape(interaction) is None or interaction.response.status >= 400:
                continue
            pairs, result, error = recorded_pairs(interaction)
            cases.append((f"{row['local_file']}#{interaction.index}", pairs, result, error))
    return cases


def expected_parts(pairs: Pairs, version: int = 6) -> list[dict[str, Any]]:
    """The UIMessage parts the protocol promises for a recorded stream: each
    committed block in the slot its block opened (text, reasoning and tool
    parts appear when they start), its sources when it is committed, each
    hosted activity once, updated in place.  ``ai`` 7 (``version``) adds a
    text part's ``citations`` and reads a block no neutral part holds as a
    ``custom`` part."""
    parts: list[dict[str, Any]] = []
    source_parts: dict[str, dict[str, Any]] = {}
    provider = "elelem"
    slots: dict[object, dict[str, Any]] = {}  # open block key, or call id -> its part
    sources: dict[tuple[str, str], str] = {}
    hosted: dict[str, dict[str, Any]] = {}
    count = 0
    for chunk, committed in pairs:
        if isinstance(chunk, ResponseStart):
            parts.append({"type": "step-start"})
            provider = chunk.provider or provider
        elif isinstance(chunk, BlockStart) and chunk.block in ("text", "reasoning", "tool-call"):
            slot: dict[str, Any] = {}
            parts.append(slot)
            if chunk.block == "tool-call":
                slots[chunk.id] = slot
            else:
                count += 1
                slots[chunk.index] = slot
                slot.update(type=chunk.block, id=f"reasoning-{count}", text="", state="streaming")
                if chunk.block == "text":
                    del slot["id"]
        elif isinstance(chunk, TextDelta | ReasoningDelta):
            slots[chunk.index]["text"] += chunk.text
        key = chunk.index if isinstance(chunk, BlockEnd) else None
        for part in committed:
            if isinstance(part, TextBlock | ReasoningBlock):
                slot = slots.pop(key)
                slot["text"] = part.text
                slot.pop("state")
            if isinstance(part, TextBlock):
                new: list[dict[str, Any]] = []
                if part.attributions:
                    cites = []
                    for a in part.attributions:
                        url = a.source.url or ""
                        source_key = (url, "" if url else a.source.title or "")
                        if source_key not in sources:
                            sources[source_key] = f"source-{len(sources) + 1}"
                            source: dict[str, Any] = {"sourceId": sources[source_key]}
                            if url.startswith(("https://", "http://")):
                                source = {"type": "source-url", **source, "url": url}
                                if a.source.title:
                                    source["title"] = a.source.title
                            else:
                                source = {"type": "source-document", **source}
                                source["mediaType"] = "application/octet-stream"
                                source["title"] = a.source.title or "(untitled)"
                            new.append(source)
                            source_parts[source["sourceId"]] = source
                        cite: dict[str, Any] = {"sourceId": sources[source_key]}
                        if a.range is not None:
                            cite["range"] = list(a.range)
                        if a.excerpt:
                            cite["excerpt"] = a.excerpt
                        cites.append(cite)
                    slot["providerMetadata"] = {"elelem": {"citations": cites}}
                    if version >= 7:
                        slot["citations"] = [
                            ai7_citation(source_parts[c["sourceId"]], a)
                            for c, a in zip(cites, part.attributions, strict=True)
                        ]
                slot["state"] = "done"
                parts.extend(new)
            elif isinstance(part, ReasoningBlock):
                if not part.text and part.payloads:
                    slot["providerMetadata"] = {"elelem": {"redacted": True}}
                slot["state"] = "done"
            elif isinstance(part, ToolCallBlock):
                slots.pop(part.id).update(
                    type=f"tool-{part.name}",
                    toolCallId=part.id,
                    state="input-available",
                    input=part.input,
                )
            elif isinstance(part, HostedActivity):
                if part.id not in hosted:
                    hosted[part.id] = {"type": "data-hosted-activity", "id": part.id, "data": {}}
                    parts.append(hosted[part.id])
                before = hosted[part.id]["data"]
                data = {
                    "id": part.id,
                    "name": part.name,
                    "state": part.state,
                    "input": part.input if part.input is not None else before.get("input"),
                    "summary": part.summary,
                    "label": activity_label(part.name),
                }
                for obligation in display_obligations(part):
                    data["searchEntryPoint"] = obligation.html
                    data["searchSuggestions"] = [
                        {"terms": s.terms, "url": s.url} for s in obligation.suggestions
                    ]
                hosted[part.id]["data"] = data
            elif version >= 7:
                kind = f"{provider}.{part.type}"  # type: ignore[union-attr]
                meta = {"elelem": {"type": part.type}}  # type: ignore[union-attr]
                parts.append({"type": "custom", "kind": kind, "providerMetadata": meta})
            else:
                parts.append({"type": "data-block", "data": {"type": part.type}})  # type: ignore[union-attr]
    return parts


def read_by(parts: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """``parts`` as ai 7 reads the same ai 6 stream: a failed tool input's
    arguments are its ``input`` (ai 6: ``rawInput``)."""
    if version < 7:
        return parts
    return [
        {("input" if k == "rawInput" else k): v for k, v in part.items()}
        if part.get("state") == "output-error"
        else part
        for part in parts
    ]


def ai7_citation(source: dict[str, Any], a: Attribution) -> dict[str, Any]:
    """One of ai 7's text-part citations, as the AI SDK's Citation type has it."""
    if source["type"] == "source-url":
        cited = {"type": "source", "sourceType": "url", "id": source["sourceId"]}
        cited["url"] = source["url"]
        if "title" in source:
            cited["title"] = source["title"]
    else:
        cited = {"type": "source", "sourceType": "document", "id": source["sourceId"]}
        cited.update(mediaType=source["mediaType"], title=source["title"])
    out: dict[str, Any] = {"source": cited}
    if a.range is not None:
        out["startIndex"], out["endIndex"] = a.range
    if a.excerpt:
        out["citedText"] = a.excerpt
    return out


def _strip_status(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The status line is the terminal renderer's words (tested there).
    for part in parts:
        if part["type"] == "data-hosted-activity":
            assert isinstance(part["data"].pop("status"), str)
    return parts


def _payload_strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        if len(value) >= 12:
            out.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            _payload_strings(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _payload_strings(item, out)


def _split(value: Any, portable: list[str], payloads: set[str]) -> None:
    """Strings of the portable fields into ``portable``; of payload fields into ``payloads``."""
    if isinstance(value, str):
        portable.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _split(item, portable, payloads)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in ("payload", "payloads", "replay", "raw"):
                _payload_strings(item, payloads)
            else:
                _split(item, portable, payloads)


@pytest.fixture(scope="module")
def cases(corpus: Path) -> list[tuple[str, Pairs, AssembledResponse, Exception | None]]:
    """Every recorded response of the corpus, read once for the module."""
    return corpus_cases(corpus)


def test_no_payload_value_of_any_recording_reaches_the_stream(
    cases: list[tuple[str, Pairs, AssembledResponse, Exception | None]],
) -> None:
    """Signatures, encrypted content, encrypted indexes, raw blocks and raw
    usage of every recorded response: none is in the bytes sent."""
    checked = 0
    for name, pairs, result, error in cases:
        body = b"".join(sse_event(c) for c in encode_all(pairs, error))
        portable: list[str] = []
        payloads: set[str] = set()
        _split(to_builtins(result), portable, payloads)
        for part in result.content:
            if isinstance(part, ToolCallBlock):  # its arguments are sent parsed
                _split(to_builtins(part.input), portable, payloads)
        for finish_payload in result.finish.payloads if result.finish else ():
            _payload_strings(to_builtins(finish_payload), payloads)
        # The one payload value sent by design: what Google requires shown.
        for part in result.content:
            if isinstance(part, HostedActivity):
                payloads -= {o.html for o in display_obligations(part) if o.html}
        joined = "\x00".join(portable)
        for secret in payloads:
            if secret in joined:
                continue  # the same string is a portable value too (an id, a URL)
            assert msgspec.json.encode(secret)[1:-1] not in body, (
                f"{name}: a payload value was sent"
            )
            checked += 1
    assert checked > 500


@pytest.mark.parametrize("package", ["ai", pytest.param("ai7", marks=pytest.mark.slow)])
def test_the_ai_package_reads_every_stream_to_the_exact_parts(
    cases: list[tuple[str, Pairs, AssembledResponse, Exception | None]], package: str
) -> None:
    """Every recording, read by ai 6 (``ai``) and by ai 7 (``ai7``, under
    Node 22; the slow run) from a stream made for it (``ai_version``);
    tests/test_web_usechat.py reads the new parts with both in the default run."""
    version = 7 if package == "ai7" else 6
    node = ai7_reader_ready() if version == 7 else ai_reader_ready()
    by_name = {name: (pairs, error) for name, pairs, _, error in cases}
    names = list(by_name)

    async def replay(request: Request) -> UIMessageStreamResponse:
        pairs, error = by_name[names[int(request.path_params["n"])]]
        return UIMessageStreamResponse(_yield(pairs, error), ai_version=version)

    async def synthetic(request: Request) -> UIMessageStreamResponse:
        return UIMessageStreamResponse(_yield(feed(SYNTHETIC)), message_id="m-1", ai_version=6)

    async def media(request: Request) -> UIMessageStreamResponse:
        return UIMessageStreamResponse(_yield(MEDIA), ai_version=6)

    routes = [
        Route("/media", media, methods=["POST"]),
        Route("/replay/{n:int}", replay, methods=["POST"]),
        Route("/synthetic", synthetic, methods=["POST"]),
    ]
    with ASGIServer(Starlette(routes=routes)) as server:
        requests = [{"url": f"{server.url}/replay/{i}", "body": {}} for i in range(len(names))]
        requests.append({"url": f"{server.url}/synthetic", "body": {}})
        requests.append({"url": f"{server.url}/media", "body": {}})
        read = read_with_ai(node, requests, package)

    media_read = read.pop()
    synthetic_read = read.pop()
    assert media_read["errors"] == []
    assert media_read["message"]["parts"] == MEDIA_PARTS
    assert synthetic_read["errors"] == []
    assert synthetic_read["message"]["id"] == "m-1"
    assert synthetic_read["message"]["parts"] == read_by(SYNTHETIC_PARTS, version)

    for (name, _pairs, result, error), got in zip(cases, read, strict=True):
        assert got["status"] == {"code": 200, "header": "v1", "contentType": "text/event-stream"}, (
            name
        )
        cut = version >= 7 and isinstance(error, IncompleteStreamError)
        expected_errors = [] if error is None or cut else [f"{getattr(error, 'kind', '')}: {error}"]
        if result.finish is not None and result.finish.reason == "error":
            expected_errors.append(
                f"error: {result.finish.failure or 'the provider reported an error'}"
            )
        assert got["errors"] == expected_errors, name
        message = got["message"]
        assert got["invalid"] is None, name
        assert _strip_status(message["parts"]) == expected_parts(_pairs, version), name
        reason = "interrupted" if cut else "error" if error is not None else result.finish_reason
        assert message["metadata"]["finishReason"] == reason, name
    assert len(cases) > 100


def test_a_live_relay_of_the_demo_through_a_starlette_endpoint() -> None:
    """The shipped demo through the real client and driver from a loopback
    provider, relayed by an endpoint as a useChat backend would."""
    node = ai_reader_ready()
    with replaying(demo_interaction()) as open_stream:

        async def chat(request: Request) -> UIMessageStreamResponse:
            body = await request.json()
            assert body["messages"][0]["parts"] == [{"type": "text", "text": "hi"}]
            return UIMessageStreamResponse(open_stream(), message_id="answer-1")

        with ASGIServer(Starlette(routes=[Route("/api/chat", chat, methods=["POST"])])) as server:
            (got,) = read_with_ai(node, [{"url": server.url + "/api/chat", "body": {}}])
    assert got["errors"] == []
    message = got["message"]
    assert message["id"] == "answer-1"
    assert message["metadata"] == {
        "provider": "anthropic",
        "model": "claude-sonnet-4-5-20250929",
        "finishReason": "stop",
        "usage": {
            "input": 9873,
            "output": 418,
            "reasoning": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "hosted": {"web_search": 1},
        },
    }
    parts = message["parts"]
    assert [p["type"] for p in parts] == [
        "step-start",
        "reasoning",
        "text",
        "data-hosted-activity",
        "text",
        "text",
        "source-url",
        "source-url",
        "text",
        "text",
        "source-url",
        "text",
        "text",
        "source-url",
        "text",
        "text",
        "text",
    ]
    assert parts[1]["text"].startswith("The user wants the current height of the Eiffel Tower")
    assert parts[3] == {
        "type": "data-hosted-activity",
        "id": "srvtoolu_01Kq7WvT3mXnB8cRpYd2LfHs",
        "data": {
            "id": "srvtoolu_01Kq7WvT3mXnB8cRpYd2LfHs",
            "name": "web_search",
            "state": "completed",
            "input": {"query": "Eiffel Tower height and completion date"},
            "summary": "5 results",
            "status": 'searched "Eiffel Tower height and completion date" → 5 results',
            "label": "web search",
        },
    }
    assert parts[5] == {
        "type": "text",
        "text": "The tower is 330 metres (1,083 ft) tall, including the antennas at its top",
        "providerMetadata": {
            "elelem": {
                "citations": [
                    {
                        "sourceId": "source-1",
                        "excerpt": "The tower is 330 metres (1,083 ft) tall, about the same height as an 81-storey building, and the tallest structure in Paris.",
                    },
                    {"sourceId": "source-2", "excerpt": "Height: 330 metres (with antennas)"},
                ]
            }
        },
        "state": "done",
    }
    assert [(p["sourceId"], p["url"], p["title"]) for p in parts if p["type"] == "source-url"] == [
        ("source-1", "https://en.wikipedia.org/wiki/Eiffel_Tower", "Eiffel Tower - Wikipedia"),
        (
            "source-2",
            "https://www.toureiffel.paris/en/the-monument/key-figures",
            "The Eiffel Tower in figures | Official website",
        ),
        (
            "source-3",
            "https://www.toureiffel.paris/en/the-monument/history",
            "History of the Eiffel Tower | Official website",
        ),
        (
            "source-4",
            "https://www.britannica.com/topic/Eiffel-Tower-Paris-France",
            "Eiffel Tower | History, Height, & Facts | Britannica",
        ),
    ]
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    assert text.startswith(
        "I'll look up the current figures.\n\n**Height.** The tower is 330 metres"
    )
    assert text.endswith("until the Chrysler Building in New York was finished in 1930.")


def test_the_stream_is_closed_when_the_iteration_stops() -> None:
    import asyncio

    closed: list[bool] = []

    class Source:
        def __init__(self) -> None:
            self.pairs = iter(
                feed([ResponseStart("r", "m", P), BlockStart(0, "text"), TextDelta(0, "x")])
            )

        def __aiter__(self) -> Source:
            return self

        async def __anext__(self) -> tuple[Chunk, tuple[Part, ...]]:
            try:
                return next(self.pairs)
            except StopIteration:
                await asyncio.sleep(10)
                raise StopAsyncIteration from None

        async def aclose(self) -> None:
            closed.append(True)

    async def main() -> list[str]:
        seen: list[str] = []
        gen = ui_message_chunks(Source())
        async for chunk in gen:
            seen.append(chunk["type"])
            if chunk["type"] == "text-delta":
                break
        await gen.aclose()
        return seen

    assert asyncio.run(main())[-1] == "text-delta"
    assert closed == [True]
