"""The frame fuzzer over every shape (issue #41): each frame of each shape's
contract sample, every value in it (at any depth) replaced by a hostile one
or removed, read sans-IO by the shape's parser and the one assembler.  A
hostile value is kept, or refused as a typed error (an ``ElelemError``):
never a ``TypeError``, ``KeyError``, ``AttributeError``, ``RecursionError``
or any other exception of the parser's own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from elelem.errors import ElelemError
from elelem.providers import load_shape
from elelem.stream import Assembler
from elelem.vocabulary import ProviderId
from test_contract_stream import REQUEST, SAMPLES

REMOVED = object()
"""Stands for the key taken out of its object."""

HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    2**70,
    1e308,
    "",
    "x\u202e\x1b[2J",
    [],
    {},
    [None],
    {"type": 5},
    REMOVED,
]
"""What each value of a frame becomes, one at a time."""

SLOW_HOSTILE: list[Any] = [
    -(2**63),
    0.5,
    "0",
    "\ud800",
    [[[[[[[[[[1]]]]]]]]]],
    {"": None},
    "a" * 100_000,
]


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (its own root excluded)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*at, key)
            yield from paths(inner, (*at, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*at, index)
            yield from paths(inner, (*at, index))


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with what ``path`` names replaced by ``new`` (or removed)."""
    copy = json.loads(json.dumps(value))
    holder = copy
    for step in path[:-1]:
        holder = holder[step]
    if new is REMOVED:
        del holder[path[-1]]
    else:
        holder[path[-1]] = new
    return copy


def read(shape_name: str, provider: str, frames: list[tuple[str | None, str]]) -> None:
    """The frames through the shape's parser and the assembler, as the
    driver feeds them (sans-IO)."""
    parser = load_shape(shape_name).new_parser(ProviderId(provider), REQUEST)
    assembler = Assembler(ProviderId(provider))
    for chunk in parser.open(200, {}):
        assembler.feed(chunk)
    for event, data in frames:
        for chunk in parser.message(event or "", data):
            assembler.feed(chunk)
    for chunk in parser.eof():
        assembler.feed(chunk)
    assembler.result()


def mutants(shape_name: str, values: list[Any]) -> Iterator[list[tuple[str | None, str]]]:
    frames = SAMPLES[shape_name]().frames
    for position, (event, data) in enumerate(frames):
        try:
            parsed = json.loads(data)
        except ValueError:
            continue  # not JSON (Chat Completions' [DONE]): nothing inside to change
        for path in paths(parsed):
            for value in values:
                text = json.dumps(replaced(parsed, path, value))
                yield [*frames[:position], (event, text), *frames[position + 1 :]]


def untyped_of(
    shape_name: str, provider: str, streams: Iterator[list[tuple[str | None, str]]], name: str
) -> tuple[int, list[str]]:
    """How many ``streams`` were read, and what each that failed with an
    exception that is no ``ElelemError`` raised (with its last frame)."""
    runs, untyped = 0, []
    for frames in streams:
        runs += 1
        try:
            read(shape_name, provider, frames)
        except ElelemError:
            pass
        except Exception as exc:  # noqa: BLE001 - what the walk reports
            untyped.append(f"{name}: {type(exc).__name__}: {exc} <- {frames[-1]}"[:600])
    return runs, untyped


def walk(shape_name: str, values: list[Any]) -> tuple[int, list[str]]:
    provider = SAMPLES[shape_name]().provider
    return untyped_of(shape_name, provider, mutants(shape_name, values), shape_name)


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
def test_every_value_of_every_frame_made_hostile_is_kept_or_typed(shape_name: str) -> None:
    runs, untyped = walk(shape_name, HOSTILE)
    assert runs > 100
    assert untyped == []


@pytest.mark.slow
@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
def test_more_hostile_values_of_every_frame(shape_name: str) -> None:
    runs, untyped = walk(shape_name, SLOW_HOSTILE)
    assert runs > 50
    assert untyped == []


def test_a_frame_nested_past_the_parsers_depth_is_typed() -> None:
    """Each shape given a frame nested 100,000 deep where its first frame goes."""
    deep = "[" * 100_000 + "]" * 100_000
    for shape_name in sorted(SAMPLES):
        sample = SAMPLES[shape_name]()
        event = sample.frames[0][0]
        with pytest.raises(ElelemError):
            read(shape_name, sample.provider, [(event, deep), *sample.frames[1:]])


def corpus_streams() -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """``(file, shape, provider, frames)`` of each streamed corpus recording
    whose shape can be told, the first interaction of each."""
    from conftest import corpus_root
    from elelem.cli.inspect import detect_shape, recorded_frames, recorded_provider
    from elelem.recordings.cassettes import load

    root = corpus_root()
    rows = (root / "INDEX.tsv").read_text(encoding="utf-8").splitlines()[1:]
    found = []
    for row in rows:
        name, *_, streaming, _artifacts, _notes = row.split("\t")
        if streaming != "yes":
            continue
        try:
            interaction = load(root / name).interactions[0]
            shape = detect_shape(interaction)
            if shape is None or not interaction.response.streamed:
                continue
            framing = load_shape(shape).framing
            frames = recorded_frames(interaction.response, framing)
            provider = str(recorded_provider(interaction, shape))
        except ElelemError:
            continue
        found.append((name, shape, provider, frames))
    return found


def corpus_mutants(
    frames: list[tuple[str, str]], values: list[Any]
) -> Iterator[list[tuple[str | None, str]]]:
    """The first frame of each kind (its event, else its ``type``) made
    hostile at every path, the stream cut after it (what follows a broken
    frame adds nothing to how that frame is taken)."""
    seen: set[str] = set()
    for position, (event, data) in enumerate(frames):
        try:
            parsed = json.loads(data)
        except ValueError:
            continue
        kind = event or (str(parsed.get("type")) if isinstance(parsed, dict) else "")
        kind += "|" + ",".join(sorted(parsed)) if isinstance(parsed, dict) else ""
        if kind in seen:
            continue
        seen.add(kind)
        for path in paths(parsed):
            for value in values:
                text = json.dumps(replaced(parsed, path, value))
                yield [*frames[:position], (event, text)]


def corpus_walk(per_shape: int, values: list[Any]) -> tuple[int, list[str]]:
    """The walk over the ``per_shape`` shortest streams of each shape."""
    runs, untyped = 0, []
    taken: dict[str, int] = {}
    for name, shape, provider, frames in sorted(corpus_streams(), key=lambda s: len(s[3])):
        taken[shape] = taken.get(shape, 0) + 1
        if taken[shape] > per_shape:
            continue
        done, failed = untyped_of(shape, provider, corpus_mutants(frames, values), name)
        runs += done
        untyped += failed
    return runs, untyped


@pytest.mark.parametrize(
    ("per_shape", "least"),
    [(1, 300), pytest.param(6, 5_000, marks=pytest.mark.slow)],
    ids=["a-stream-a-shape", "six-streams-a-shape"],
)
def test_every_kind_of_frame_of_the_corpus_made_hostile_is_kept_or_typed(
    per_shape: int, least: int
) -> None:
    """The corpus' streams (tool calls, reasoning, citations, hosted tools,
    usage) made hostile, each kind of frame at every path."""
    runs, untyped = corpus_walk(per_shape, HOSTILE)
    assert runs > least
    assert untyped == []
