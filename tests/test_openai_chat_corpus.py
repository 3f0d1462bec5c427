"""Every Chat Completions corpus recording: parses, loses nothing, replays natively.

The expected counts come from :func:`wire_counts`, which reads the recorded
JSON with the standard library and shares no code with the shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from conftest import corpus_root
from elelem.cli.inspect import inspect_recording
from elelem.errors import InvalidRequestError, StreamError
from elelem.recordings.cassettes import Interaction, load, sse_frames
from elelem.shapes.openai_chat import SHAPE, assistant_wire
from elelem.shapes.openai_chat.blocks import CHOICE_FIELD_TYPE, RESPONSE_FIELD_TYPE
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    CallId,
    Message,
    ProviderId,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE
from elelem.wire import ModelRequest

# INDEX.tsv says "other" for these; the file names say who served them.
_NAMED = {
    "xai-tool-call": "xai",
    "groq": "groq",
    "moonshotai": "moonshot",
    "alibaba": "alibaba",
    "mistral": "mistral",
    "perplexity": "perplexity",
}


def chat_rows() -> list[tuple[str, str]]:
    root = corpus_root()
    rows = [ln.split("\t") for ln in (root / "INDEX.tsv").read_text().splitlines()[1:]]
    out = []
    for row in rows:
        if row[5] != "chat_completions":
            continue
        provider = row[4]
        if provider == "other":
            provider = next(v for k, v in _NAMED.items() if k in row[0])
        out.append((row[0], provider))
    return out


ROWS = chat_rows()
PROVIDERS = dict(ROWS)
MULTI = [
    name
    for name, _ in ROWS
    if sum(1 for i in load(corpus_root() / name).interactions if i.request is not None) > 1
]


def chunks_of(interaction: Interaction, provider: ProviderId) -> list[Chunk]:
    response = interaction.response
    if not response.streamed:
        return SHAPE.parse_response(response.body, provider)
    parser = SHAPE.new_parser(provider)
    chunks = list(parser.open(response.status, response.headers))
    for frame in sse_frames(response.body):
        chunks.extend(parser.message(frame.event, frame.data))
    chunks.extend(parser.eof())
    return chunks


def parse(interaction: Interaction, provider: ProviderId) -> AssembledResponse:
    assembler = Assembler(provider)
    assembler.feed_all(chunks_of(interaction, provider))
    return assembler.result()


# --------------------------------------------------------------------------
# the independent raw-wire counter
# --------------------------------------------------------------------------


@dataclass
class Counts:
    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    citations: int = 0
    signatures: str = ""
    encrypted: int = 0
    unknown_fields: list[str] = field(default_factory=list)
    choice_fields: list[str] = field(default_factory=list)
    finish: str | None = None
    usage: Any = None
    errors: int = 0


_KNOWN = {
    "role",
    "content",
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    "tool_calls",
    "refusal",
    "annotations",
    "channel",
}


def wire_objects(interaction: Interaction) -> list[tuple[str, Any]]:
    """(event name, decoded JSON) of every frame but ``[DONE]``, or the one body."""
    response = interaction.response
    if not response.streamed:
        return [("", json.loads(response.body))]
    out = []
    for frame in sse_frames(response.body):
        if frame.data.strip() != "[DONE]":
            out.append((frame.event, json.loads(frame.data)))
    return out


def wire_counts(interaction: Interaction) -> Counts:
    counts = Counts()
    calls: dict[int, list[str]] = {}
    citations: set[str] = set()
    results: list[str] = []
    for event, obj in wire_objects(interaction):
        if event == "error" or ("error" in obj and not obj.get("choices")):
            counts.errors += 1
            continue
        for choice in obj.get("choices") or []:
            counts.choice_fields += [
                k
                for k, v in choice.items()
                if k not in {"index", "delta", "message", "finish_reason"}
                and v not in (None, "", [], {})
                and k not in counts.choice_fields
            ]
            delta = choice.get("delta") or choice.get("message") or {}
            content = delta.get("content")
            if isinstance(content, str):
                counts.text += content
            elif isinstance(content, list):
                for part in content:
                    if part["type"] == "text":
                        counts.text += part["text"]
                    else:
                        counts.reasoning += "".join(t["text"] for t in part["thinking"])
            plain = (delta.get("reasoning_content") or "") + (delta.get("reasoning") or "")
            counts.reasoning += plain
            for detail in delta.get("reasoning_details") or []:
                if not plain:
                    counts.reasoning += detail.get("text") or detail.get("summary") or ""
                counts.signatures += detail.get("signature") or ""
                counts.encrypted += detail.get("type") == "reasoning.encrypted"
            counts.refusal += delta.get("refusal") or ""
            counts.citations += len(delta.get("annotations") or [])
            for position, call in enumerate(delta.get("tool_calls") or []):
                slot = calls.setdefault(call.get("index", position), ["", "", ""])
                slot[0] = slot[0] or call.get("id") or ""
                slot[1] = slot[1] or call["function"].get("name") or ""
                slot[2] += call["function"].get("arguments") or ""
            counts.unknown_fields += [
                k for k, v in delta.items() if k not in _KNOWN and v not in (None, "", [], {})
            ]
            if choice.get("finish_reason"):
                counts.finish = choice["finish_reason"]
        citations.update(obj.get("citations") or [])
        results = [r["url"] for r in obj.get("search_results") or []] or results
        if obj.get("usage"):
            counts.usage = obj["usage"]
    counts.tool_calls = [tuple(v) for _, v in sorted(calls.items())]  # type: ignore[misc]
    counts.citations += len(citations | set(results))
    return counts


def output_counts(result: AssembledResponse) -> Counts:
    counts = Counts()
    for part in result.content:
        if isinstance(part, TextBlock):
            refusal = any(p.format == "refusal" for p in part.payloads)
            if refusal:
                counts.refusal += part.text
            else:
                counts.text += part.text
            counts.citations += len(part.attributions)
        elif isinstance(part, ReasoningBlock):
            counts.reasoning += part.text
            for payload in part.payloads:
                if payload.format == "reasoning_details":
                    counts.signatures += "".join(d.get("signature") or "" for d in payload.value)
                    counts.encrypted += sum(
                        d.get("type") == "reasoning.encrypted" for d in payload.value
                    )
        elif isinstance(part, ToolCallBlock):
            counts.tool_calls.append((part.id, part.name, part.arguments))
        elif isinstance(part, UnknownBlock) and part.raw.get("type") == CHOICE_FIELD_TYPE:
            counts.choice_fields.append(str(part.raw.get("field")))
        elif isinstance(part, UnknownBlock):
            counts.unknown_fields.append(str(part.raw.get("field")))
    assert result.finish is not None
    counts.finish = result.finish.raw
    counts.usage = result.usage.raw if result.usage is not None else None
    return counts


@pytest.mark.parametrize(("name", "provider"), ROWS)
def test_parses_and_loses_nothing(corpus: Path, name: str, provider: str) -> None:
    for interaction in load(corpus / name).interactions:
        wire = wire_counts(interaction)
        if wire.errors:
            with pytest.raises(StreamError):
                parse(interaction, ProviderId(provider))
            continue
        ours = output_counts(parse(interaction, ProviderId(provider)))
        assert ours == wire, f"{name} interaction {interaction.index}"


def test_the_corpus_exercises_every_variant(corpus: Path) -> None:
    """The loss check above ran over each artifact kind at least this often."""
    totals = Counts()
    responses = errors = 0
    for name, _ in ROWS:
        for interaction in load(corpus / name).interactions:
            wire = wire_counts(interaction)
            responses += 1
            errors += wire.errors
            totals.citations += wire.citations
            totals.encrypted += wire.encrypted
            totals.tool_calls += wire.tool_calls
            totals.signatures += wire.signatures
            totals.refusal += wire.refusal
    assert (len(ROWS), responses, errors) == (36, 48, 1)
    assert (totals.citations, totals.encrypted, len(totals.tool_calls)) == (19, 10, 11)
    assert len(totals.signatures) > 0 and len(totals.refusal) == 89


def test_the_recorded_mid_stream_error_is_typed(corpus: Path) -> None:
    name = next(n for n, _ in ROWS if "tool_use_failed_error_streaming" in n)
    first = load(corpus / name).interactions[0]
    with pytest.raises(InvalidRequestError) as err:
        parse(first, ProviderId("groq"))
    # The code is the specific type, the one the error names.
    assert (err.value.status, err.value.provider_type) == (400, "tool_use_failed")


# --------------------------------------------------------------------------
# native replay against the recorded follow-up requests
# --------------------------------------------------------------------------

# What our native replay sends that a recording's client chose not to: jp
# drops OpenRouter's reasoning_details, which OpenRouter asks callers to send
# back, so its recordings lack them.
ALLOWED_EXTRA = {"reasoning_details"}


def normalized(message: dict[str, Any]) -> dict[str, Any]:
    """A recorded message with text-only content parts joined into one string:
    the Chat Completions spec makes the two forms equivalent."""
    content = message.get("content")
    if isinstance(content, list) and all(p.get("type") == "text" for p in content):
        return {**message, "content": "".join(p["text"] for p in content)}
    return message


def replay_pairs(corpus: Path, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(ours, recorded) assistant messages for every response a later request replays."""
    provider = ProviderId(PROVIDERS[name])
    interactions = load(corpus / name).interactions
    pairs = []
    for this, following in pairwise(interactions):
        assert this.request is not None and following.request is not None
        try:
            result = parse(this, provider)
        except StreamError:
            continue  # an error response has no assistant message to replay
        message = result.to_message()
        wire, dropped = assistant_wire(message, provider)
        # Left out, and said so: only what the server said about its response
        # or its choice (OpenRouter's native_finish_reason, logprobs).
        said = {
            (f"content[{i}]", part.raw["field"])
            for i, part in enumerate(message.content)
            if isinstance(part, UnknownBlock)
            and part.raw.get("type") in (CHOICE_FIELD_TYPE, RESPONSE_FIELD_TYPE)
        }
        assert {(d.where, d.what) for d in dropped} == said
        assert {d.why for d in dropped} <= {UNREPLAYABLE}
        recorded = following.request.json["messages"][len(this.request.json["messages"])]
        pairs.append((wire, normalized(recorded)))
    return pairs


@pytest.mark.parametrize("name", MULTI)
def test_native_replay_rebuilds_the_recorded_follow_up(corpus: Path, name: str) -> None:
    pairs = replay_pairs(corpus, name)
    assert pairs
    for ours, recorded in pairs:
        for key, value in recorded.items():
            assert ours.get(key) == value, f"{name}: field {key!r}"
        assert set(ours) - set(recorded) <= ALLOWED_EXTRA


def test_replay_counts(corpus: Path) -> None:
    pairs = [p for name in MULTI for p in replay_pairs(corpus, name)]
    exact = sum(1 for ours, recorded in pairs if ours == recorded)
    carried = sum(1 for ours, _ in pairs if "reasoning_details" in ours)
    assert (len(MULTI), len(pairs), exact, carried) == (8, 11, 6, 5)


@pytest.mark.parametrize("name", [n for n, _ in ROWS])
def test_inspect_reads_every_chat_recording(corpus: Path, name: str) -> None:
    lines = inspect_recording(str(corpus / name), wire_replay=True)
    kinds = {line["kind"] for line in lines}
    assert {"response", "finish"} <= kinds or "error" in kinds


# --------------------------------------------------------------------------
# whole follow-up requests rebuilt from the conversation
# --------------------------------------------------------------------------


def neutral(wire: dict[str, Any]) -> Message:
    """A recorded non-native message as the neutral message a caller would hold."""
    role = wire["role"]
    content = wire.get("content")
    texts = (
        [content]
        if isinstance(content, str)
        else [p["text"] for p in content or [] if p.get("type") == "text"]
    )
    if role == "tool":
        result = ToolResultBlock(CallId(wire["tool_call_id"]), content or "")
        return Message(role="user", content=(result,), source="tool")
    parts: list[Any] = [TextBlock(t) for t in texts]
    for call in wire.get("tool_calls") or []:
        function = call["function"]
        parts.append(ToolCallBlock(CallId(call["id"]), function["name"], function["arguments"]))
    return Message(role=role, content=tuple(parts), source=role)


def rebuilt_requests(corpus: Path, name: str) -> list[tuple[list[Any], list[Any]]]:
    """(ours, recorded) message lists of every follow-up request in ``name``."""
    provider = ProviderId(PROVIDERS[name])
    interactions = load(corpus / name).interactions
    first = interactions[0].request
    assert first is not None
    conversation = [neutral(m) for m in first.json["messages"]]
    out = []
    for this, following in pairwise(interactions):
        assert this.request is not None and following.request is not None
        before = this.request.json["messages"]
        after = following.request.json["messages"]
        assert [normalized(m) for m in after[: len(before)]] == [normalized(m) for m in before]
        try:
            answer = parse(this, provider).to_message()
        except StreamError:
            # The client wrote this turn itself (from the error): take it as given.
            answer = neutral(after[len(before)])
        conversation += [answer, *(neutral(m) for m in after[len(before) + 1 :])]
        request = ModelRequest(model=following.request.json["model"], messages=tuple(conversation))
        encoded = SHAPE.encode_request(request, provider=provider)
        out.append((encoded.body["messages"], [normalized(m) for m in after]))
    return out


@pytest.mark.parametrize("name", MULTI)
def test_whole_follow_up_requests_are_rebuilt(corpus: Path, name: str) -> None:
    for ours, recorded in rebuilt_requests(corpus, name):
        assert len(ours) == len(recorded)
        for mine, theirs in zip(ours, recorded, strict=True):
            assert {k: mine.get(k) for k in theirs} == theirs
            assert set(mine) - set(theirs) <= ALLOWED_EXTRA


def test_rebuilt_request_counts(corpus: Path) -> None:
    pairs = [
        (mine, theirs)
        for name in MULTI
        for ours, recorded in rebuilt_requests(corpus, name)
        for mine, theirs in zip(ours, recorded, strict=True)
    ]
    exact = sum(1 for mine, theirs in pairs if mine == theirs)
    assert (len(pairs), exact) == (52, 41)
