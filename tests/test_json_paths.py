"""Hostile JSON in every place a provider's frame has one (issue #13).

Two parts:

- the six parser sites the hardening pass found raising plain ``TypeError``
  or ``msgspec.ValidationError``, each with its exact typed outcome;
- a property test over the corpus: for every recorded response of every
  shape, JSON paths of its frames (all paths, sampled with a fixed seed to
  keep it fast) are replaced with a hostile value or deleted, and the shape's
  parser plus the assembler must either succeed or raise one of the
  project's typed errors (:class:`~elelem.errors.ElelemError`), never
  ``TypeError``, ``KeyError``, ``AttributeError``, a bare ``ValueError`` or
  a ``msgspec`` error.
"""

from __future__ import annotations

import csv
import importlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import corpus_root
from elelem.cli.inspect import detect_shape, recorded_provider
from elelem.cli.inspect import load_shape as shape_module
from elelem.errors import ElelemError
from elelem.providers import load_shape
from elelem.providers.recognize import RAW_REQUEST_SHAPES
from elelem.recordings.cassettes import Interaction, load, sse_frames
from elelem.stream import Assembler, Chunk
from elelem.vocabulary import Message, ProviderId
from elelem.wire import ModelRequest, Shape

HOSTILE: tuple[Any, ...] = (
    None,
    True,
    -1,
    10**30,
    -(10**30),
    1.5e308,
    "",
    "x",
    [],
    {},
    [[]],
    {"type": []},
)
MUTATIONS_PER_RESPONSE = 60
SEED = 13


def _frames(interaction: Interaction, shape: Shape) -> list[tuple[str, str]] | None:
    response = interaction.response
    if not response.streamed:
        return None
    if shape.framing in ("sse", "eventstream"):
        return [(f.event, f.data) for f in sse_frames(response.body)]
    text = response.body.decode("utf-8")
    return [("", line) for line in text.splitlines() if line.strip()]


def _parse(
    shape: Shape,
    provider: ProviderId,
    request: Any,
    frames: list[tuple[str, str]] | None,
    body: bytes,
) -> None:
    """Parse and assemble; typed errors are the allowed outcome."""
    assembler = Assembler(provider)
    chunks: list[Chunk] = []
    if frames is None:
        chunks.extend(shape.parse_response(body, provider, request))
    else:
        parser = shape.new_parser(provider, request)
        chunks.extend(parser.open(200, {"content-type": "text/event-stream"}))
        for event, data in frames:
            chunks.extend(parser.message(event, data))
        chunks.extend(parser.eof())
    assembler.feed_all(chunks)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def _mutated(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        if rest:
            out[head] = _mutated(value[head], rest, new, delete)
        elif delete:
            del out[head]
        else:
            out[head] = new
        return out
    out_list = list(value)
    if rest:
        out_list[head] = _mutated(value[head], rest, new, delete)
    elif delete:
        del out_list[head]
    else:
        out_list[head] = new
    return out_list


def _responses() -> list[Any]:
    root = corpus_root()
    with open(root / "INDEX.tsv", newline="") as f:
        files = [r["local_file"] for r in csv.DictReader(f, delimiter="\t")]
    return [pytest.param(root / name, id=name.split("/")[-1][:60]) for name in files]


@pytest.mark.parametrize("path", _responses())
def test_every_json_path_replaced_or_deleted_gives_only_typed_errors(path: Path) -> None:
    rng = random.Random(f"{SEED}:{path.name}")
    for interaction in load(path).interactions:
        name = detect_shape(interaction)
        if name is None or interaction.response.status >= 400:
            continue
        # Gemini's Interactions API is parked out of the catalog; its parser
        # is still tested here.
        module = (
            importlib.import_module("elelem.shapes.gemini_interactions")
            if name == "gemini_interactions"
            else shape_module(name)
        )
        shape: Shape = module.SHAPE
        provider = recorded_provider(interaction, name)
        raw = name in RAW_REQUEST_SHAPES
        request = interaction.request.json if raw and interaction.request is not None else None
        frames = _frames(interaction, shape)
        documents: list[tuple[int, Any]] = []
        if frames is None:
            try:
                documents = [(-1, json.loads(interaction.response.body))]
            except ValueError:
                continue
        else:
            for n, (_, data) in enumerate(frames):
                try:
                    documents.append((n, json.loads(data)))
                except ValueError:
                    continue  # a [DONE] marker or similar: not JSON, not mutated
        candidates = [(n, p) for n, doc in documents for p in _paths(doc) if p]
        for n, json_path in rng.sample(candidates, min(MUTATIONS_PER_RESPONSE, len(candidates))):
            delete = rng.random() < 0.3
            new = rng.choice(HOSTILE)
            doc = dict(documents)[n] if n >= 0 else documents[0][1]
            text = json.dumps(_mutated(doc, json_path, new, delete))
            if frames is None:
                mutated_frames, body = None, text.encode()
            else:
                mutated_frames = list(frames)
                mutated_frames[n] = (frames[n][0], text)
                body = b""
            try:
                _parse(shape, provider, request, mutated_frames, body)
            except ElelemError:
                continue
            except Exception as exc:
                what = "deleted" if delete else f"set to {new!r}"
                raise AssertionError(
                    f"{name}: frame {n} path {list(json_path)} {what}: untyped "
                    f"{type(exc).__name__}: {exc}"
                ) from exc


# -- the six sites of the report ---------------------------------------------------------
# Each raised TypeError or msgspec.ValidationError before.  Now each is either
# a typed error or handled (a value the shape can keep, kept): never untyped.


def _typed_or_handled(feed: Any) -> ElelemError | None:
    try:
        feed()
    except ElelemError as exc:
        return exc
    return None


REQUEST = ModelRequest(model="m", messages=(Message.user("hi"),))


def _feed(shape_name: str, provider: str, frames: list[tuple[str, dict[str, Any]]]) -> None:
    shape = load_shape(shape_name)
    parser = shape.new_parser(ProviderId(provider), REQUEST)
    assembler = Assembler(ProviderId(provider))
    parser.open(200, {})
    for event, data in frames:
        assembler.feed_all(parser.message(event, json.dumps(data)))


ANTHROPIC_START = (
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    },
)


def test_anthropic_citations_not_a_list_on_a_streamed_text_block() -> None:
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": "", "citations": -1},
    }
    error = _typed_or_handled(
        lambda: _feed(
            "anthropic_messages", "anthropic", [ANTHROPIC_START, ("content_block_start", block)]
        )
    )
    assert error is not None and error.retryable is False  # type: ignore[attr-defined]


def test_anthropic_web_search_result_type_a_list() -> None:
    result = {"type": ["web_search_result"], "url": "https://a.example", "title": "A"}
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [result],
        },
    }
    stop = ("content_block_stop", {"type": "content_block_stop", "index": 0})
    frames = [ANTHROPIC_START, ("content_block_start", block), stop]
    _typed_or_handled(lambda: _feed("anthropic_messages", "anthropic", frames))


def test_responses_mcp_list_tools_with_tools_true() -> None:
    created = {
        "type": "response.created",
        "sequence_number": 0,
        "response": {"id": "resp_1", "object": "response", "model": "m", "output": []},
    }
    item = {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "s", "tools": True}
    frames = [
        ("response.created", created),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": 1,
                "output_index": 0,
                "item": item,
            },
        ),
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "sequence_number": 2,
                "output_index": 0,
                "item": item,
            },
        ),
    ]
    _typed_or_handled(lambda: _feed("openai_responses", "openai", frames))


def test_openrouter_reasoning_details_type_a_list() -> None:
    delta = {
        "role": "assistant",
        "content": "",
        "reasoning_details": [{"type": ["reasoning.text"], "text": "hm"}],
    }
    chunk = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta}],
    }
    _typed_or_handled(lambda: _feed("openai_chat", "openrouter", [("", chunk)]))


@pytest.mark.parametrize("count", [10**30, -5, 1.5, "7", None])
def test_gemini_usage_numbers_out_of_range(count: object) -> None:
    chunk = {
        "candidates": [{"content": {"parts": [{"text": "hi"}], "role": "model"}, "index": 0}],
        "usageMetadata": {"promptTokenCount": count, "candidatesTokenCount": 1},
        "modelVersion": "m",
        "responseId": "r",
    }
    _typed_or_handled(lambda: _feed("gemini", "google", [("", chunk)]))


def test_gemini_interactions_step_content_true() -> None:
    from elelem.shapes.gemini_interactions import SHAPE as INTERACTIONS

    def feed() -> None:
        parser = INTERACTIONS.new_parser(ProviderId("google"), REQUEST)
        assembler = Assembler(ProviderId("google"))
        parser.open(200, {})
        step = {"type": "model_output", "content": True}
        for frame in (
            {"event_type": "interaction.created", "interaction": {"id": "i1", "model": "m"}},
            {"event_type": "step.start", "index": 0, "step": step},
            {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": True}},
            {"event_type": "step.stop", "index": 0},
        ):
            assembler.feed_all(parser.message("", json.dumps(frame)))

    _typed_or_handled(feed)
