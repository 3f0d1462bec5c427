"""docs/cli.md against the code: the documented `--json` events are exactly
the chunk types plus the command's own lines, each example decodes as the
event it documents, and the documented `-o` keys are the ones accepted."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import msgspec

from elelem.cli.options import OPTION_KEYS
from elelem.cli.turns import COMMAND_EVENTS
from elelem.stream import Chunk

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _documented_events() -> dict[str, str]:
    section = _section("`--json` events")
    found = re.findall(r"\n### `([a-z-]+)`\n(.*?)```json\n(.*?)\n```", section, re.S)
    return {name: example for name, _prose, example in found}


def chunk_types() -> set[str]:
    return {cls.__struct_config__.tag for cls in typing.get_args(Chunk)}  # type: ignore[misc]


def test_documented_events_are_the_chunk_types_and_the_command_lines() -> None:
    documented = _documented_events()
    assert set(documented) == chunk_types() | set(COMMAND_EVENTS)


def test_every_example_decodes_as_its_event() -> None:
    for name, example in _documented_events().items():
        line = json.loads(example)
        assert line["type"] == name
        if name in chunk_types():
            chunk = msgspec.json.decode(example.encode(), type=Chunk)
            assert chunk.__struct_config__.tag == name  # type: ignore[attr-defined]


def test_documented_options_are_the_accepted_ones() -> None:
    section = _section("Generation options")
    documented = set(re.findall(r"`-o ([a-z-]+)[ `]", section))
    accepted = {key.replace("_", "-") for key in OPTION_KEYS}
    assert documented - {"extra"} == accepted
