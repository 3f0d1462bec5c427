"""Every Anthropic corpus recording: parses, loses nothing, and replays natively.

The counts are taken from the raw wire by :func:`wire_counts`, which reads
the recorded JSON itself and shares no code with the shape.  Hosted activity
names are read from the wire too (``server_tool_use.name``, else the result
type) and then put through the documented table of neutral names.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import corpus_root
from elelem.recordings.cassettes import Interaction, load, sse_frames
from elelem.shapes.anthropic_messages import SHAPE, assistant_wire
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    HostedActivity,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    neutral_activity_name,
)

ANTHROPIC = ProviderId("anthropic")


def anthropic_files() -> list[str]:
    root = corpus_root()
    rows = [ln.split("\t") for ln in (root / "INDEX.tsv").read_text().splitlines()[1:]]
    return [row[0] for row in rows if row[4] == "anthropic"]


FILES = anthropic_files()
MULTI = [
    name
    for name in FILES
    if sum(1 for i in load(corpus_root() / name).interactions if i.request is not None) > 1
]


def parse(interaction: Interaction) -> AssembledResponse:
    """Parse one recorded response through SHAPE and the one assembler."""
    request = interaction.request.json if interaction.request is not None else None
    assembler = Assembler(ANTHROPIC)
    chunks: list[Chunk] = []
    if interaction.response.streamed:
        parser = SHAPE.new_parser(ANTHROPIC, request)
        chunks.extend(parser.open(interaction.response.status, interaction.response.headers))
        for frame in sse_frames(interaction.response.body):
            chunks.extend(parser.message(frame.event, frame.data))
        chunks.extend(parser.eof())
    else:
        chunks = SHAPE.parse_response(interaction.response.body, ANTHROPIC, request)
    assembler.feed_all(chunks)
    return assembler.result()


# --------------------------------------------------------------------------
# the independent raw-wire counter
# --------------------------------------------------------------------------

MODELED = {"text", "thinking", "redacted_thinking", "tool_use", "server_tool_use"}


@dataclass
class Counts:
    server_tool_ids: list[str] = field(default_factory=list)
    result_ids: list[str] = field(default_factory=list)
    # (id, neutral name) of every hosted transition, started and terminal.
    activity_names: list[tuple[str, str]] = field(default_factory=list)
    # Anthropic's own server tool names, as the wire spelled them (not compared).
    wire_names: list[str] = field(default_factory=list, compare=False)
    citations: int = 0
    signed_thinking: int = 0
    redacted_thinking: int = 0
    tool_uses: int = 0
    text_blocks: int = 0
    unknown_types: list[str] = field(default_factory=list)
    # mcp_tool_use blocks on the wire (compared through the lists above).
    mcp_calls: int = field(default=0, compare=False)


def _count_block(
    counts: Counts,
    block: dict[str, Any],
    signature: str,
    citations: int,
    names: dict[str, str],
) -> None:
    """Count one finished wire block; ``names`` maps server tool ids to their
    wire names (from this response and the request history)."""
    kind = block["type"]
    if kind == "text":
        counts.text_blocks += 1
        counts.citations += citations
    elif kind == "thinking":
        counts.signed_thinking += 1 if signature else 0
    elif kind == "redacted_thinking":
        counts.redacted_thinking += 1
    elif kind == "tool_use":
        counts.tool_uses += 1
    elif kind == "server_tool_use":
        counts.server_tool_ids.append(block["id"])
        names[block["id"]] = block["name"]
        counts.wire_names.append(block["name"])
        counts.activity_names.append((block["id"], neutral_activity_name(block["name"])))
    elif kind == "mcp_tool_use":
        # The MCP connector's calls are hosted activity named ``mcp``.
        counts.server_tool_ids.append(block["id"])
        names[block["id"]] = "mcp"
        counts.activity_names.append((block["id"], "mcp"))
        counts.mcp_calls += 1
    elif kind.endswith("_tool_result"):
        aid = block["tool_use_id"]
        counts.result_ids.append(aid)
        wire_name = names.get(aid, kind.removesuffix("_tool_result"))
        counts.activity_names.append((aid, neutral_activity_name(wire_name)))
    else:
        counts.unknown_types.append(kind)


def _history_names(interaction: Interaction) -> dict[str, str]:
    """Server tool id -> wire name, from the recorded request's messages."""
    names: dict[str, str] = {}
    request = interaction.request.json if interaction.request is not None else None
    for message in request.get("messages") or [] if isinstance(request, dict) else []:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "server_tool_use":
                    names[block["id"]] = block["name"]
    return names


def wire_counts(interaction: Interaction) -> Counts:
    """Count artifacts straight from the recorded JSON."""
    counts = Counts()
    names = _history_names(interaction)
    response = interaction.response
    if not response.streamed:
        for block in json.loads(response.body)["content"]:
            _count_block(
                counts, block, block.get("signature", ""), len(block.get("citations") or []), names
            )
        return counts
    open_blocks: dict[int, tuple[dict[str, Any], str, int]] = {}
    for frame in sse_frames(response.body):
        event = json.loads(frame.data)
        kind = event["type"]
        if kind == "message_start":
            for block in event["message"].get("content") or []:
                _count_block(
                    counts,
                    block,
                    block.get("signature", ""),
                    len(block.get("citations") or []),
                    names,
                )
        elif kind == "content_block_start":
            block = event["content_block"]
            open_blocks[event["index"]] = (
                block,
                block.get("signature", ""),
                len(block.get("citations") or []),
            )
        elif kind == "content_block_delta":
            block, signature, citations = open_blocks[event["index"]]
            delta = event["delta"]
            if delta["type"] == "signature_delta":
                signature = delta["signature"]
            elif delta["type"] == "citations_delta":
                citations += 1
            open_blocks[event["index"]] = (block, signature, citations)
        elif kind == "content_block_stop":
            _count_block(counts, *open_blocks.pop(event["index"]), names)
    return counts


def wire_final(interaction: Interaction) -> tuple[str, dict[str, Any]]:
    """The stop reason and the final usage object, straight from the recording
    (message_delta usage is cumulative: later fields replace earlier ones)."""
    response = interaction.response
    if not response.streamed:
        message = json.loads(response.body)
        return message["stop_reason"], message["usage"]
    stop_reason, usage = "", {}
    for frame in sse_frames(response.body):
        event = json.loads(frame.data)
        if event["type"] == "message_start":
            stop_reason = event["message"].get("stop_reason") or ""
            usage = dict(event["message"].get("usage") or {})
        elif event["type"] == "message_delta":
            stop_reason = event["delta"].get("stop_reason") or stop_reason
            usage.update(event.get("usage") or {})
    return stop_reason, usage


def output_counts(result: AssembledResponse) -> Counts:
    counts = Counts()
    for part in result.content:
        if isinstance(part, HostedActivity):
            if part.state == "started":
                counts.server_tool_ids.append(part.id)
            else:
                counts.result_ids.append(part.id)
            counts.activity_names.append((part.id, part.name))
        elif isinstance(part, TextBlock):
            counts.text_blocks += 1
            counts.citations += len(part.attributions)
        elif isinstance(part, ReasoningBlock):
            formats = {p.format for p in part.payloads}
            counts.signed_thinking += "signature" in formats
            counts.redacted_thinking += "redacted_thinking" in formats
        elif isinstance(part, ToolCallBlock):
            counts.tool_uses += 1
        elif isinstance(part, UnknownBlock):
            counts.unknown_types.append(part.type)
    return counts


@pytest.mark.parametrize("name", FILES)
def test_parses_and_loses_nothing(corpus: Path, name: str) -> None:
    rec = load(corpus / name)
    parsed = 0
    for interaction in rec.interactions:
        if interaction.response.status >= 400:
            continue
        result = parse(interaction)
        parsed += 1
        assert result.finish is not None
        assert result.response_id is not None and result.response_id.startswith("msg_")
        assert result.provider == "anthropic"
        assert output_counts(result) == wire_counts(interaction), interaction.index
        stop_reason, usage = wire_final(interaction)
        assert result.finish.raw == stop_reason
        assert result.usage is not None
        assert result.usage.raw == usage
        thinking = (usage.get("output_tokens_details") or {}).get("thinking_tokens", 0)
        assert (result.usage.input, result.usage.output, result.usage.reasoning) == (
            usage["input_tokens"],
            usage["output_tokens"] - thinking,
            thinking,
        )
        assert result.usage.cache_read == (usage.get("cache_read_input_tokens") or 0)
        assert result.usage.hosted == {
            neutral_activity_name(key.removesuffix("_requests")): value
            for key, value in (usage.get("server_tool_use") or {}).items()
        }
    assert parsed == sum(1 for i in rec.interactions if i.response.status < 400)


def test_corpus_covers_every_artifact(corpus: Path) -> None:
    """The counts above are not vacuous: the corpus holds each artifact kind."""
    total = Counts()
    stops: Counter[str] = Counter()
    for name in FILES:
        for interaction in load(corpus / name).interactions:
            if interaction.response.status >= 400:
                continue
            c = wire_counts(interaction)
            total.server_tool_ids += c.server_tool_ids
            total.result_ids += c.result_ids
            total.citations += c.citations
            total.signed_thinking += c.signed_thinking
            total.redacted_thinking += c.redacted_thinking
            total.tool_uses += c.tool_uses
            total.text_blocks += c.text_blocks
            total.unknown_types += c.unknown_types
            total.mcp_calls += c.mcp_calls
            total.activity_names += c.activity_names
            total.wire_names += c.wire_names
            finish = parse(interaction).finish
            assert finish is not None
            stops[finish.reason] += 1
    assert len(total.server_tool_ids) > 30
    assert len(total.result_ids) > 30
    assert total.citations > 50
    assert total.signed_thinking > 10
    assert total.redacted_thinking >= 1
    assert total.tool_uses > 10
    assert sorted(set(total.unknown_types)) == ["compaction"]
    # Both MCP connector recordings (vercel/ai, pydantic-ai) are hosted activity.
    assert total.mcp_calls == 2
    # Anthropic's own names on the wire, and the neutral names they become.
    assert sorted(set(total.wire_names)) == [
        "advisor",
        "bash_code_execution",
        "code_execution",
        "text_editor_code_execution",
        "tool_search_tool_bm25",
        "tool_search_tool_regex",
        "web_fetch",
        "web_search",
    ]
    assert sorted({name for _, name in total.activity_names}) == [
        "advisor",
        "code_execution",
        "mcp",
        "tool_search",
        "web_fetch",
        "web_search",
    ]
    assert set(stops) == {"stop", "tool-calls", "max-tokens", "paused"}


# --------------------------------------------------------------------------
# native replay against the recorded follow-up requests
# --------------------------------------------------------------------------

# pydantic-ai's cassette writer folds typographic punctuation to ASCII in the
# request bodies it stores (the responses keep it), so the recorded request
# says "-" where the client really sent back "\u2013".  Fold both sides alike.
_RECORDER_FOLD = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2018": "'", "\u2019": "'"})


def _fold(value: Any) -> Any:
    if isinstance(value, str):
        return value.translate(_RECORDER_FOLD)
    if isinstance(value, list):
        return [_fold(v) for v in value]
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    return value


def missing_fields(ours: Any, recorded: Any, path: str = "$") -> list[str]:
    """Where ``recorded`` has a value ``ours`` lacks or differs on.

    A field sent as null counts as absent (the API reads them alike, and
    clients serialize optional fields either way); lists must match in
    length and order.
    """
    if isinstance(recorded, dict):
        if not isinstance(ours, dict):
            return [f"{path}: expected an object"]
        out: list[str] = []
        for key, value in recorded.items():
            if value is None and ours.get(key) is None:
                continue
            if key not in ours:
                out.append(f"{path}.{key}: missing")
            else:
                out.extend(missing_fields(ours[key], value, f"{path}.{key}"))
        return out
    if isinstance(recorded, list):
        if not isinstance(ours, list) or len(ours) != len(recorded):
            size = len(ours) if isinstance(ours, list) else "not a list"
            return [f"{path}: {size} items, recorded {len(recorded)}"]
        out = []
        for i, (mine, theirs) in enumerate(zip(ours, recorded, strict=True)):
            out.extend(missing_fields(mine, theirs, f"{path}[{i}]"))
        return out
    return [] if ours == recorded else [f"{path}: {ours!r} != {recorded!r}"]


@pytest.mark.parametrize("name", MULTI)
def test_native_replay_rebuilds_the_recorded_follow_up(corpus: Path, name: str) -> None:
    interactions = load(corpus / name).interactions
    checked = 0
    for current, follow_up in itertools.pairwise(interactions):
        assert follow_up.request is not None
        result = parse(current)
        wire, dropped = assistant_wire(result.to_message(), ANTHROPIC)
        assert dropped == ()
        sent = [m for m in follow_up.request.json["messages"] if m["role"] == "assistant"][-1]
        content = sent["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        assert wire["role"] == "assistant"
        assert len(wire["content"]) == len(content)
        assert [b["type"] for b in wire["content"]] == [b["type"] for b in content]
        assert missing_fields(_fold(wire["content"]), _fold(content)) == []
        checked += 1
    assert checked == len(interactions) - 1


def test_replay_covers_server_tools_citations_and_signatures(corpus: Path) -> None:
    """The replayed follow-ups include the hard artifacts, so the test above bites."""
    kinds: Counter[str] = Counter()
    for name in MULTI:
        for interaction in load(corpus / name).interactions[1:]:
            assert interaction.request is not None
            for message in interaction.request.json["messages"]:
                if message["role"] != "assistant" or isinstance(message["content"], str):
                    continue
                for block in message["content"]:
                    kinds[block["type"]] += 1
                    kinds["citations"] += len(block.get("citations") or [])
                    kinds["signature"] += bool(block.get("signature"))
                    kinds["encrypted_content"] += "encrypted_content" in json.dumps(block)
    assert kinds["server_tool_use"] >= 10
    assert kinds["web_search_tool_result"] >= 10
    assert kinds["web_fetch_tool_result"] >= 1
    # pydantic-ai drops citations when it replays (a loss elelem does not
    # share); exact citation replay is checked against the responses below.
    assert kinds["signature"] >= 5
    assert kinds["redacted_thinking"] + kinds["thinking"] >= 5
    assert kinds["tool_use"] >= 1
    assert kinds["encrypted_content"] >= 10


# --------------------------------------------------------------------------
# native replay against the responses themselves
# --------------------------------------------------------------------------


def wire_blocks(interaction: Interaction) -> list[dict[str, Any]]:
    """The final content blocks of a recorded response, rebuilt from the raw
    events by applying each delta (independently of the shape)."""
    response = interaction.response
    if not response.streamed:
        return list(json.loads(response.body)["content"])
    done: list[dict[str, Any]] = []
    building: dict[int, tuple[dict[str, Any], list[str]]] = {}
    for frame in sse_frames(response.body):
        event = json.loads(frame.data)
        if event["type"] == "message_start":
            done.extend(event["message"].get("content") or [])
        elif event["type"] == "content_block_start":
            building[event["index"]] = (dict(event["content_block"]), [])
        elif event["type"] == "content_block_delta":
            block, partial_json = building[event["index"]]
            delta = event["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "citations_delta":
                block["citations"] = [*block["citations"], delta["citation"]]
            elif delta["type"] == "input_json_delta":
                partial_json.append(delta["partial_json"])
            elif delta["type"] == "compaction_delta":
                block["content"] = (block["content"] or "") + delta["content"]
            else:
                raise AssertionError(f"the corpus holds a {delta['type']} the test does not know")
        elif event["type"] == "content_block_stop":
            block, partial_json = building.pop(event["index"])
            if "".join(partial_json).strip():
                block["input"] = json.loads("".join(partial_json))
            if block["type"] == "text" and block.get("citations") == []:
                # An empty list at block start only announces that citations may follow.
                del block["citations"]
            done.append(block)
    return done


@pytest.mark.parametrize("name", FILES)
def test_native_replay_equals_the_response_blocks(corpus: Path, name: str) -> None:
    """Every block of every response comes back exactly: citations with
    encrypted_index, signatures, redacted thinking, server tool blocks with
    encrypted_content, tool uses with their caller, unknown blocks."""
    for interaction in load(corpus / name).interactions:
        if interaction.response.status >= 400:
            continue
        wire, dropped = assistant_wire(parse(interaction).to_message(), ANTHROPIC)
        assert dropped == ()
        assert wire["content"] == wire_blocks(interaction)


def test_paused_turn_results_know_their_search(corpus: Path) -> None:
    name = "pydantic__pydantic-ai/tests__models__cassettes__test_anthropic__test_pause_turn_web_search_streaming_vcr.yaml"
    first, second = load(corpus / name).interactions
    paused, resumed = parse(first), parse(second)
    assert paused.finish_reason == "paused"
    open_ids = {a.id for a in paused.activities if a.state == "started"} - {
        a.id for a in paused.activities if a.terminal
    }
    finished_later = [a for a in resumed.activities if a.id in open_ids]
    assert len(open_ids) == 1 and len(finished_later) == 1
    (late,) = finished_later
    assert late.state == "completed"
    assert late.name == "web_search"
    assert isinstance(late.input, dict) and isinstance(late.input["query"], str)
    assert late.payload is not None and late.payload.version == "web_search_20250305"
