"""The OpenAI Responses shape over every Responses recording in the corpus.

Each file must parse; each response must keep every artifact the wire holds
(counted here from the raw JSON by an independent helper, not by the shape's
own tables); and for every conversation, the items native replay rebuilds
from response N must carry every field the recording sent back in request N+1.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from conftest import corpus_root
from elelem.errors import StreamError
from elelem.recordings import cassettes
from elelem.shapes.openai_responses import SHAPE
from elelem.shapes.openai_responses.encoder import native_items
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    neutral_activity_name,
)


def _rows() -> list[dict[str, str]]:
    root = corpus_root()
    with open(root / "INDEX.tsv", newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r["api_shape"] == "responses"]


ROWS = _rows()
FILES = [r["local_file"] for r in ROWS]
PARAMS = FILES


def _provider(name: str) -> ProviderId:
    return ProviderId("xai" if "__xai__" in name else "openai")


def _interactions(path: Path) -> list[cassettes.Interaction]:
    recording = cassettes.load(path)
    return [
        i
        for i in recording.interactions
        if i.request is None or i.request.path.rstrip("/").endswith("/responses")
    ]


def _chunks(interaction: cassettes.Interaction, provider: ProviderId) -> list[Chunk]:
    response = interaction.response
    if not response.streamed:
        return SHAPE.parse_response(response.body, provider)
    parser = SHAPE.new_parser(provider)
    chunks = list(parser.open(200, {}))
    for frame in cassettes.sse_frames(response.body):
        chunks += parser.message(frame.event, frame.data)
    chunks += parser.eof()
    return chunks


def _assemble(interaction: cassettes.Interaction, provider: ProviderId) -> AssembledResponse:
    assembler = Assembler(provider)
    assembler.feed_all(_chunks(interaction, provider))
    return assembler.result()


# -- the independent wire counter ------------------------------------------------------


def _events(interaction: cassettes.Interaction) -> list[dict[str, Any]] | None:
    import json

    if not interaction.response.streamed:
        return None
    return [json.loads(f.data) for f in cassettes.sse_frames(interaction.response.body)]


def _wire_items(interaction: cassettes.Interaction) -> list[dict[str, Any]]:
    """The response's final output items, straight from the raw JSON."""
    events = _events(interaction)
    if events is None:
        body = interaction.response.json()
        assert isinstance(body, dict)
        return list(body.get("output") or [])
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for event in events:
        if event.get("type") == "response.output_item.done":
            items.append(event["item"])
            seen.add(event["item"].get("id"))
    for event in events:
        if event.get("type") in ("response.completed", "response.incomplete"):
            for item in event["response"].get("output") or []:
                if item.get("id") not in seen:
                    items.append(item)
    return items


_SERVER_RUN = {
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "shell_call_output",
}
_CLIENT_RUN = {"function_call", "local_shell_call", "apply_patch_call"}
_KNOWN = {"message", "reasoning"}


def _wire_role(item: dict[str, Any], xai: bool) -> str:
    kind = item["type"]
    if kind in _KNOWN:
        return kind
    if kind in _SERVER_RUN:
        return "hosted"
    if kind == "shell_call":
        env = item.get("environment") or {}
        return "hosted" if env.get("type", "local") != "local" else "call"
    if kind in ("tool_search_call", "tool_search_output"):
        return "hosted" if item.get("execution") == "server" else "call"
    if kind == "custom_tool_call":
        return "hosted" if xai else "call"
    if kind in _CLIENT_RUN:
        return "call"
    return "unknown"


def _wire_activity_name(item: dict[str, Any]) -> str:
    """The neutral name of a hosted item: the tool its type names (xAI names its
    function in ``name``), through the documented table of neutral names."""
    if item["type"] == "custom_tool_call":
        return neutral_activity_name(item["name"])
    tool = item["type"]
    for suffix in ("_call_output", "_call", "_output"):
        if tool.endswith(suffix):
            tool = tool.removesuffix(suffix)
            break
    return neutral_activity_name(tool)


def _wire_counts(items: list[dict[str, Any]], xai: bool) -> dict[str, Any]:
    hosted: list[tuple[str, str]] = []
    calls: list[str] = []
    url_citations = annotations = encrypted = reasoning = text_parts = unknown = 0
    for item in items:
        role = _wire_role(item, xai)
        if role == "hosted":
            hosted.append((item["id"], _wire_activity_name(item)))
        elif role == "call":
            calls.append(item.get("call_id") or item["id"])
        elif role == "reasoning":
            reasoning += 1
            encrypted += bool(item.get("encrypted_content"))
        elif role == "message":
            if not item["content"]:
                unknown += 1
            for part in item["content"]:
                if part["type"] in ("output_text", "refusal"):
                    text_parts += 1
                else:
                    unknown += 1
                for a in part.get("annotations") or []:
                    annotations += 1
                    url_citations += a.get("type") == "url_citation"
        else:
            unknown += 1
    return {
        "hosted": sorted(hosted),
        "calls": sorted(calls),
        "url_citations": url_citations,
        "annotations": annotations,
        "reasoning": reasoning,
        "encrypted": encrypted,
        "text_parts": text_parts,
        "unknown": unknown,
    }


def _our_counts(result: AssembledResponse) -> dict[str, Any]:
    started = [(a.id, a.name) for a in result.activities if a.state == "started"]
    terminal = [(a.id, a.name) for a in result.activities if a.terminal]
    assert sorted(started) == sorted(terminal), "every started activity must end, same name"
    attributions = [a for b in result.blocks if isinstance(b, TextBlock) for a in b.attributions]
    reasoning = [b for b in result.blocks if isinstance(b, ReasoningBlock)]
    return {
        "hosted": sorted(terminal),
        "calls": sorted(b.id for b in result.blocks if isinstance(b, ToolCallBlock)),
        "url_citations": sum(
            1
            for a in attributions
            if a.replay is not None
            and isinstance(a.replay.value, dict)
            and a.replay.value.get("type") == "url_citation"
        ),
        "annotations": len(attributions),
        "reasoning": len(reasoning),
        "encrypted": sum(
            1
            for b in reasoning
            for p in b.payloads
            if isinstance(p.value, dict) and p.value.get("encrypted_content")
        ),
        "text_parts": sum(1 for b in result.blocks if isinstance(b, TextBlock)),
        "unknown": sum(1 for b in result.blocks if isinstance(b, UnknownBlock)),
    }


def _wire_error(interaction: cassettes.Interaction) -> str | None:
    """The provider's error code, where the stream carries an error."""
    for event in _events(interaction) or []:
        if event.get("type") == "error":
            inner = event.get("error") or event
            return str(inner.get("code") or inner.get("type"))
        if event.get("type") == "response.failed":
            return str((event["response"].get("error") or {}).get("code"))
    return None


# -- tests -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", PARAMS)
def test_every_responses_recording_parses_and_loses_nothing(name: str, corpus: Path) -> None:
    provider = _provider(name)
    interactions = _interactions(corpus / name)
    assert interactions, f"{name}: no Responses interaction"
    for interaction in interactions:
        response = interaction.response
        if response.status >= 400:
            error = SHAPE.classify_error(response.status, response.headers, response.body)
            body = response.json()
            assert isinstance(body, dict)
            assert error.status == response.status
            assert error.provider_type == body["error"]["code"]
            assert error.provider_message == body["error"]["message"]
            continue
        code = _wire_error(interaction)
        if code is not None:
            with pytest.raises(StreamError) as info:
                _assemble(interaction, provider)
            assert info.value.provider_type == code
            continue
        result = _assemble(interaction, provider)
        assert result.finish is not None
        wire = _wire_counts(_wire_items(interaction), provider == "xai")
        assert _our_counts(result) == wire
        # Every kept range slices to what the annotation points at.
        for block in result.blocks:
            if isinstance(block, TextBlock):
                for a in block.attributions:
                    if a.range is not None:
                        start, end = a.range
                        assert a.source.url is None or a.source.url in block.text[start:end]


def test_corpus_url_citation_ranges_are_kept(corpus: Path) -> None:
    name = next(f for f in FILES if f.endswith("openai-web-search-tool.1.json"))
    result = _assemble(_interactions(corpus / name)[0], ProviderId("openai"))
    ranges = [a.range for b in result.blocks if isinstance(b, TextBlock) for a in b.attributions]
    assert len(ranges) == 10
    assert all(r is not None for r in ranges)
    assert ranges[0] == (426, 517)


def _subset(recorded: Any, ours: Any, path: str = "$") -> list[str]:
    """Where ``ours`` lacks or differs from a field ``recorded`` holds (nulls aside)."""
    if isinstance(recorded, dict):
        if not isinstance(ours, dict):
            return [f"{path}: not an object"]
        out: list[str] = []
        for key, value in recorded.items():
            if value is None:
                continue
            if key not in ours:
                out.append(f"{path}.{key}: missing")
            else:
                out += _subset(value, ours[key], f"{path}.{key}")
        return out
    if isinstance(recorded, list):
        if not isinstance(ours, list) or len(ours) != len(recorded):
            return [f"{path}: list of {len(recorded)} recorded"]
        return [
            e
            for i, (a, b) in enumerate(zip(recorded, ours, strict=True))
            for e in _subset(a, b, f"{path}[{i}]")
        ]
    return [] if recorded == ours else [f"{path}: {recorded!r:.60} != {ours!r:.60}"]


def _conversations() -> list[str]:
    out = []
    root = corpus_root()
    for name in FILES:
        if not name.endswith((".yaml", ".yml")):
            continue
        interactions = _interactions(root / name)
        if len(interactions) > 1 and all(i.request is not None for i in interactions):
            out.append(name)
    return out


CONVERSATIONS = _conversations()


@pytest.mark.parametrize("name", CONVERSATIONS)
def test_native_replay_rebuilds_recorded_follow_up_items(name: str, corpus: Path) -> None:
    provider = _provider(name)
    interactions = _interactions(corpus / name)
    checked = 0
    for n in range(len(interactions) - 1):
        before = interactions[n].request
        after = interactions[n + 1].request
        assert before is not None and after is not None
        assert isinstance(before.json, dict) and isinstance(after.json, dict)
        sent = before.json["input"]
        sent = sent if isinstance(sent, list) else [sent]
        follow = after.json["input"]
        assert isinstance(follow, list)
        # What the client sent back for response N: the items after request N's
        # input, less the new user turn and the tool results it added.
        replayed = [
            item
            for item in follow[len(sent) :]
            if item.get("role") != "user" and not str(item.get("type", "")).endswith("_output")
        ]
        result = _assemble(interactions[n], provider)
        stored = after.json.get("store") is not False
        ours = native_items(result.to_message(), provider, stored=stored)
        assert [i.get("type", "message") for i in replayed] == [i["type"] for i in ours]
        for recorded, rebuilt in zip(replayed, ours, strict=True):
            assert _subset(recorded, rebuilt) == []
            checked += 1
    assert checked > 0
