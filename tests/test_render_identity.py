"""The renderer shows what the driver committed, byte for byte as before.

``tests/data/render/demo-*.txt`` were written by the renderer as it was
before it stopped assembling (commit 55a7cb5, which fed it bare chunks and
let it run an assembler of its own), from the shipped demo recording; fed
``(chunk, committed)`` pairs now, it must print exactly those bytes, in
plain and in terminal (styled, not live) mode.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from elelem.render import Renderer, RenderOptions
from elelem.stream import Assembler
from render_streams import CASES, MODES, drive_renderer, options_for, scenario

DATA = Path(__file__).parent / "data" / "render"


def render(case: str, mode: str) -> str:
    out = io.StringIO()
    renderer = Renderer(MODES[mode](out), RenderOptions(**options_for(case)))  # type: ignore[arg-type]
    for what, value in scenario(case):
        if what == "pairs":
            # The driver's assembler: the pairs were committed by it, and the
            # renderer reads the blocks in progress from it.
            chunks = [chunk for chunk, _ in value]
            drive_renderer(renderer, chunks)
        elif what == "interrupt":
            renderer.interrupt()
        else:
            renderer.end_answer()
    return out.getvalue()


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", CASES)
def test_renderer_output_for_a_recorded_stream_is_unchanged(case: str, mode: str) -> None:
    expected = (DATA / f"demo-{case}.{mode}.txt").read_text(encoding="utf-8")
    assert render(case, mode) == expected


def test_the_renderer_keeps_no_assembler_and_no_text_of_its_own() -> None:
    renderer = Renderer(MODES["plain"](io.StringIO()))
    last = drive_renderer(renderer, [c for c, _ in dict(scenario("interrupted"))["pairs"]])
    held = [v for v in vars(renderer).values() if isinstance(v, (Assembler, str, dict))]
    assert [v for v in held if isinstance(v, Assembler)] == []
    assert all(not isinstance(v, dict) or not v for v in held)  # no per-block buffers
    # What is in progress is the driver's assembler's, read through follow().
    (open_text,) = last.open_parts()
    assert (open_text.text, open_text.complete) == (
        "The tower is 330 metres (1,083 ft) tall, ",
        False,
    )
