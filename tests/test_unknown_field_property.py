"""A field nobody knows, added to every chunk of a recorded stream, changes nothing parsed.

Providers add metadata fields to their chunks all the time (OpenRouter's
``native_finish_reason``, a new ``service_tier``).  For every streamed model
response of the corpus, of every shape, the same frames with one unknown
scalar field added to each JSON object must give the same assembled
response, once the field itself is taken out of where it was kept (an
envelope payload, a response-field unknown block): no text, reasoning, tool
call, citation, hosted activity, usage or finish may change, and no error
may appear or go.  Read in place from the corpus; skipped where it is absent.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.cli.inspect import detect_shape, recorded_provider
from elelem.codec import to_builtins
from elelem.errors import ElelemError
from elelem.providers import load_shape
from elelem.providers.recognize import SHAPE_PROVIDERS
from elelem.recordings.cassettes import load, sse_frames
from elelem.stream import Assembler
from elelem.vocabulary import ProviderId

Frames = tuple[tuple[str, str], ...]
Stream = tuple[str, str, str, Frames]  # shape, provider, label, frames


@cache
def corpus_streams() -> tuple[Stream, ...]:
    """Every streamed 2xx model response of the corpus, as its frames."""
    from conftest import corpus_root

    root = corpus_root()
    with open(root / "INDEX.tsv", encoding="utf-8") as f:
        files = [row["local_file"] for row in csv.DictReader(f, delimiter="\t")]
    streams: list[Stream] = []
    for local_file in files:
        for interaction in load(Path(root) / local_file).interactions:
            name = detect_shape(interaction)
            response = interaction.response
            if name not in SHAPE_PROVIDERS or name == "gemini_interactions":
                continue
            if not response.streamed or response.status >= 400:
                continue
            provider = recorded_provider(interaction, name)
            if load_shape(name).framing == "ndjson":
                lines = response.body.decode("utf-8").splitlines()
                frames = tuple(("", line) for line in lines if line.strip())
            else:
                frames = tuple((f.event, f.data) for f in sse_frames(response.body))
            label = f"{local_file.split('/')[-1]}#{interaction.index}"
            streams.append((name, provider, label, frames))
    return tuple(streams)


def with_field(frames: Frames, shape: str, field: str, value: object) -> Frames:
    """The frames with ``field: value`` added to each JSON object (for Bedrock's
    one-key event union, to the event's own object)."""
    out = []
    for event, data in frames:
        try:
            obj = msgspec.json.decode(data)
        except msgspec.DecodeError:
            out.append((event, data))
            continue
        if isinstance(obj, dict):
            target = obj
            if shape == "bedrock_converse" and not event and len(obj) == 1:
                (inner,) = obj.values()
                target = inner if isinstance(inner, dict) else obj
            target[field] = value
            data = msgspec.json.encode(obj).decode()
        out.append((event, data))
    return tuple(out)


def outcome(shape_name: str, provider: str, frames: Frames) -> Any:
    """The assembled response (or partial and error) as plain JSON values."""
    parser = load_shape(shape_name).new_parser(ProviderId(provider))
    assembler = Assembler(ProviderId(provider))
    error = None
    try:
        for event, data in frames:
            for chunk in parser.message(event, data):
                assembler.feed(chunk)
        for chunk in parser.eof():
            assembler.feed(chunk)
    except ElelemError as exc:
        error = [type(exc).__name__, str(exc)]
    result = assembler.result() if error is None and assembler.finished else assembler.partial()
    return {"result": msgspec.json.decode(msgspec.json.encode(to_builtins(result))), "error": error}


def without(value: Any, field: str) -> Any:
    """``value`` with ``field`` taken out of every object, and every kept
    record of that field (``{"field": field, …}``) taken out of every list."""
    if isinstance(value, dict):
        return {k: without(v, field) for k, v in value.items() if k != field}
    if isinstance(value, (list, tuple)):
        return [without(v, field) for v in value if not _keeps(v, field)]
    return value


def _keeps(value: Any, field: str) -> bool:
    return isinstance(value, dict) and value.get("field") == field


def _ids() -> list[Any]:
    return [pytest.param(i, id=s[2]) for i, s in enumerate(corpus_streams())]


PROBE = "x_elelem_probe"


@pytest.mark.parametrize("index", _ids())
def test_one_unknown_field_on_every_chunk_changes_nothing(corpus: Path, index: int) -> None:
    shape, provider, _, frames = corpus_streams()[index]
    before = outcome(shape, provider, frames)
    after = outcome(shape, provider, with_field(frames, shape, PROBE, "native value"))
    assert without(after, PROBE) == before


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
NAMES = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10).map(lambda s: f"x_{s}")


@settings(max_examples=40, deadline=None)
@given(data=st.data(), name=NAMES, value=SCALARS)
def test_any_unknown_scalar_field_changes_nothing(
    corpus: Path, data: st.DataObject, name: str, value: object
) -> None:
    streams = corpus_streams()
    shape, provider, _, frames = streams[data.draw(st.integers(0, len(streams) - 1))]
    before = outcome(shape, provider, frames)
    after = outcome(shape, provider, with_field(frames, shape, name, value))
    assert without(after, name) == before


_CHAT_DELTAS: list[dict[str, Any]] = [
    {"role": "assistant", "content": "a"},
    {"reasoning_content": "r"},
    {"tool_calls": [{"index": 0, "id": "f1", "type": "function", "function": {"name": "f"}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]},
    {"tool_calls": [{"index": 1, "id": "k1", "type": "custom", "custom": {"name": "g"}}]},
    {"tool_calls": [{"index": 1, "custom": {"input": "line\n"}}]},
    {"content": "b"},
]


def _chat_frames(steps: list[tuple[int, int]], finish_at: int) -> Frames:
    frames = []
    for n, (which, number) in enumerate(steps):
        choice: dict[str, Any] = {"index": number, "delta": _CHAT_DELTAS[which]}
        if n >= finish_at:
            choice["finish_reason"] = "tool_calls"
        obj = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
        frames.append(("", msgspec.json.encode(obj).decode()))
    frames.append(
        (
            "",
            msgspec.json.encode(
                {"id": "c1", "choices": [], "usage": {"prompt_tokens": 3}}
            ).decode(),
        )
    )
    frames.append(("", "[DONE]"))
    return tuple(frames)


def _in_choices(frames: Frames, field: str, value: object) -> Frames:
    out = []
    for event, data in frames:
        obj = msgspec.json.decode(data) if data != "[DONE]" else None
        if isinstance(obj, dict):
            for choice in obj.get("choices") or []:
                choice[field] = value
            data = msgspec.json.encode(obj).decode()
        out.append((event, data))
    return tuple(out)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, len(_CHAT_DELTAS) - 1), st.sampled_from([0, 0, 1, 2])),
        min_size=1,
        max_size=14,
    ),
    finish_at=st.integers(0, 14),
    name=NAMES,
    value=SCALARS,
)
def test_an_unknown_field_changes_nothing_in_n_choices_and_custom_calls(
    steps: list[tuple[int, int]], finish_at: int, name: str, value: object
) -> None:
    # Generated n>1 streams with function and custom tool calls: an unknown
    # field on every chunk, or on every choice, is kept apart and changes
    # nothing else (the alternatives on the finish included).
    frames = _chat_frames(steps, finish_at)
    before = outcome("openai_chat", "openai", frames)  # an error, if any, must stay the same
    for changed in (
        with_field(frames, "openai_chat", name, value),
        _in_choices(frames, name, value),
    ):
        assert without(outcome("openai_chat", "openai", changed), name) == before
