"""The Gemini shape over every Gemini recording in the corpus.

Each file must parse; each response must keep every artifact the wire holds,
counted here from the raw JSON by an independent helper (text, thoughts,
signatures, function calls, code execution parts, grounding supports and
chunks, finish reason, usage); and for every conversation, the ``Content``
native replay rebuilds from response N must equal, field for field, the one
the recording sent back in request N+1.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import corpus_root
from elelem.cli import main
from elelem.recordings import cassettes
from elelem.shapes.gemini import SHAPE, assistant_wire
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    HostedActivity,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)

GOOGLE = ProviderId("google")


def _rows(shape: str) -> list[dict[str, str]]:
    root = corpus_root()
    with open(root / "INDEX.tsv", newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r["api_shape"] == shape]


FILES = [r["local_file"] for r in _rows("gemini")]
PARAMS = FILES
INTERACTIONS_FILES = [r["local_file"] for r in _rows("other") if r["provider"] == "google"]


def _is_model_call(interaction: cassettes.Interaction) -> bool:
    request = interaction.request
    return request is None or request.path.endswith(("generateContent", "GenerateContent"))


def _model_calls(path: Path) -> list[cassettes.Interaction]:
    return [i for i in cassettes.load(path).interactions if _is_model_call(i)]


def _chunks(interaction: cassettes.Interaction) -> list[Chunk]:
    response = interaction.response
    if not response.streamed:
        return SHAPE.parse_response(response.body, GOOGLE)
    parser = SHAPE.new_parser(GOOGLE)
    chunks = list(parser.open(200, {}))
    for frame in cassettes.sse_frames(response.body):
        chunks += parser.message(frame.event, frame.data)
    chunks += parser.eof()
    return chunks


def _assemble(interaction: cassettes.Interaction) -> AssembledResponse:
    assembler = Assembler(GOOGLE)
    assembler.feed_all(_chunks(interaction))
    return assembler.result()


# -- the independent wire counter ------------------------------------------------------


def _wire_chunks(interaction: cassettes.Interaction) -> list[dict[str, Any]]:
    response = interaction.response
    if response.streamed:
        return [json.loads(f.data) for f in cassettes.sse_frames(response.body)]
    body = response.json()
    return body if isinstance(body, list) else [body]  # type: ignore[return-value]


class Wire:
    """What one response holds, read straight from the raw chunks."""

    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self.text = ""
        self.thought = ""
        self.signatures: list[str] = []
        self.calls: list[str] = []
        self.call_ids: list[str | None] = []
        self.code: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []
        self.finish: str | None = None
        self.block_reason: str | None = None
        self.usage: Any = None
        self.grounding: dict[str, Any] = {}
        for chunk in chunks:
            if chunk.get("usageMetadata") is not None:
                self.usage = chunk["usageMetadata"]
            feedback = chunk.get("promptFeedback") or {}
            self.block_reason = feedback.get("blockReason", self.block_reason)
            for candidate in chunk.get("candidates") or []:
                self.finish = candidate.get("finishReason", self.finish)
                if candidate.get("groundingMetadata"):
                    self.grounding = candidate["groundingMetadata"]
                for part in (candidate.get("content") or {}).get("parts") or []:
                    self._part(part)

    def _part(self, part: dict[str, Any]) -> None:
        if "thoughtSignature" in part:
            self.signatures.append(part["thoughtSignature"])
        if "functionCall" in part:
            call = part["functionCall"]
            if call.get("name"):
                self.calls.append(call["name"])
                self.call_ids.append(call.get("id"))
        elif "executableCode" in part:
            self.code.append(part)
        elif "codeExecutionResult" in part:
            self.results.append(part)
        elif part.get("thought"):
            self.thought += part.get("text", "")
        elif "text" in part:
            self.text += part["text"]

    def expected_citations(self) -> list[tuple[tuple[int, int], str | None, str | None]]:
        """(code-point range over the whole text, url, title) of every cited chunk,
        for every support whose byte segment slices to its own text."""
        whole = self.text.encode("utf-8")
        chunks = self.grounding.get("groundingChunks") or []
        out = []
        for support in self.grounding.get("groundingSupports") or []:
            segment = support["segment"]
            start, end = segment.get("startIndex", 0), segment["endIndex"]
            try:
                head, inside = whole[:start].decode(), whole[start:end].decode()
            except UnicodeDecodeError:
                continue
            if inside != segment.get("text", inside):
                continue
            span = (len(head), len(head) + len(inside))
            for n in support["groundingChunkIndices"]:
                body = next(iter(chunks[n].values()))
                title = body.get("title") or body.get("fileSearchStore")
                out.append((span, body.get("uri"), title))
        return out


def _citations(result: AssembledResponse) -> list[tuple[tuple[int, int], str | None, str | None]]:
    out = []
    offset = 0
    for block in result.blocks:
        if isinstance(block, TextBlock):
            for a in block.attributions:
                assert a.range is not None
                span = (a.range[0] + offset, a.range[1] + offset)
                out.append((span, a.source.url, a.source.title))
            offset += len(block.text)
    return out


def _signatures(result: AssembledResponse) -> list[str]:
    found: list[str] = []
    for part in result.content:
        payloads = part.payloads if not isinstance(part, HostedActivity) else ()
        found += [str(p.value) for p in payloads if p.format == "thought_signature"]
        if isinstance(part, HostedActivity) and part.payload and part.payload.format == "part":
            value = part.payload.value
            if isinstance(value, dict) and "thoughtSignature" in value:
                found.append(str(value["thoughtSignature"]))
    return found


@pytest.mark.parametrize("name", PARAMS)
def test_every_response_parses_and_loses_nothing(name: str, corpus: Path) -> None:
    calls = _model_calls(corpus / name)
    assert calls, f"{name}: no model call found"
    for interaction in calls:
        result = _assemble(interaction)
        wire = Wire(_wire_chunks(interaction))
        texts = [b for b in result.blocks if isinstance(b, TextBlock)]
        thoughts = [b for b in result.blocks if isinstance(b, ReasoningBlock)]
        tools = [b for b in result.blocks if isinstance(b, ToolCallBlock)]
        code = [a for a in result.activities if a.name == "code_execution"]
        assert "".join(b.text for b in texts) == wire.text
        assert "".join(b.text for b in thoughts) == wire.thought
        assert Counter(_signatures(result)) == Counter(wire.signatures)
        assert [b.name for b in tools] == wire.calls
        for block, given in zip(tools, wire.call_ids, strict=True):
            assert given is None or block.id == given
            block.input  # noqa: B018 - arguments must be whole JSON
        assert [a.payload.value for a in code if a.state == "started" and a.payload] == wire.code
        assert [a.payload.value for a in code if a.terminal and a.payload] == wire.results
        assert sorted(_citations(result)) == sorted(wire.expected_citations())
        searches = [a for a in result.activities if a.name == "web_search"]
        queries = wire.grounding.get("webSearchQueries")
        if queries:
            n = len(wire.grounding.get("groundingChunks") or [])
            assert [(a.state, a.input) for a in searches] == [
                ("started", {"queries": queries}),
                ("completed", {"queries": queries}),
            ]
            assert searches[1].summary == f"{n} source{'' if n == 1 else 's'}"
            assert searches[1].payload is not None
            assert searches[1].payload.value == wire.grounding
        else:
            assert searches == []
        assert result.finish is not None
        assert result.finish.raw == (wire.finish or wire.block_reason)
        if wire.block_reason and not wire.finish:
            assert result.finish.reason == "refused"
        assert result.usage is not None and result.usage.raw == wire.usage


def _with_ids_removed(content: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """``content`` without the function-call ids the client made up (the
    response gave none, so native replay sends none)."""
    parts = []
    for part in content["parts"]:
        call = part.get("functionCall")
        if call is not None and call.get("id") in ids:
            part = {**part, "functionCall": {k: v for k, v in call.items() if k != "id"}}
        parts.append(part)
    return {**content, "parts": parts}


def _conversations() -> list[str]:
    root = corpus_root()
    return [
        name
        for name in FILES
        if sum(1 for i in _model_calls(root / name) if i.request is not None) > 1
    ]


REPLAYS = _conversations()


def test_the_corpus_holds_gemini_conversations() -> None:
    assert len(REPLAYS) == 3


@pytest.mark.parametrize("name", REPLAYS)
def test_native_replay_rebuilds_the_recorded_follow_up(name: str, corpus: Path) -> None:
    calls = _model_calls(corpus / name)
    pairs = [(a, b) for a, b in pairwise(calls) if a.request and b.request]
    assert pairs
    for first, second in pairs:
        assert isinstance(first.request.json, dict) and isinstance(second.request.json, dict)  # type: ignore[union-attr]
        sent = second.request.json["contents"]  # type: ignore[union-attr, index]
        before = first.request.json["contents"]  # type: ignore[union-attr, index]
        recorded = sent[len(before)]
        assert recorded["role"] == "model"
        result = _assemble(first)
        message = result.to_message()
        wire, dropped = assistant_wire(message, GOOGLE)
        # Grounding (a search's activity) is response metadata: no request
        # part carries it, and each transition is reported left out.
        grounding = [
            (f"content[{i}]", "hosted", "unreplayable")
            for i, part in enumerate(message.content)
            if isinstance(part, HostedActivity)
            and (part.payload is None or part.payload.format != "part")
        ]
        assert [(d.where, d.what, d.why) for d in dropped] == grounding
        made_up = {
            b.id
            for b in result.blocks
            if isinstance(b, ToolCallBlock)
            and any(p.format == "synthesized_id" for p in b.payloads)
        }
        client_ids = {
            p["functionCall"]["id"]
            for p in recorded["parts"]
            if "functionCall" in p and "id" in p["functionCall"]
        }
        expected = _with_ids_removed(recorded, client_ids if made_up else set())
        assert wire == expected


@pytest.mark.parametrize("name", PARAMS)
def test_inspect_prints_every_gemini_recording(name: str, corpus: Path) -> None:
    result = CliRunner().invoke(main, ["inspect", "--json", "--wire-replay", str(corpus / name)])
    assert result.exit_code == 0, result.output
    kinds = [json.loads(line)["kind"] for line in result.stdout.splitlines()]
    assert kinds.count("response") == len(_model_calls(corpus / name))
    assert kinds.count("finish") == kinds.count("response") == kinds.count("replay")
