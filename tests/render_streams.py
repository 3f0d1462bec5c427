"""Recorded streams for the renderer's byte-identity tests: the shipped demo
recording (an Anthropic turn with thinking, a web search and citations)
parsed by its real shape through the transport's SSE decoder, as
``(chunk, committed)`` pairs from the one assembler, exactly as the driver
hands them to an observer."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console

from elelem.cli.demo import sample_recording
from elelem.providers import load_shape
from elelem.recordings.cassettes import load
from elelem.stream import Assembler, Chunk, ResponseStart, TextDelta
from elelem.transport.framing import SSEDecoder
from elelem.vocabulary import Part, ProviderId

Pairs = list[tuple[Chunk, tuple[Part, ...]]]


def demo_chunks() -> list[Chunk]:
    """Every chunk of the demo recording's response, in order."""
    response = load(sample_recording()).interactions[0].response
    parser = load_shape("anthropic_messages").new_parser(ProviderId("anthropic"))
    decoder = SSEDecoder()
    chunks = list(parser.open(200, response.headers))
    for event in [*decoder.feed(response.body), *decoder.close()]:
        chunks.extend(parser.message(event[0], event[1]))
    chunks.extend(parser.eof())
    return chunks


def pairs(chunks: list[Chunk]) -> Pairs:
    """Each chunk with what the assembler committed for it."""
    assembler = Assembler(ProviderId("anthropic"))
    return [(c, assembler.feed(c)) for c in chunks]


def cut_at_text(chunks: list[Chunk], deltas: int) -> list[Chunk]:
    """The chunks up to and including the ``deltas``-th text delta."""
    seen = 0
    for i, chunk in enumerate(chunks):
        if isinstance(chunk, TextDelta):
            seen += 1
            if seen == deltas:
                return chunks[: i + 1]
    raise AssertionError("the stream has fewer text deltas")


MODES: dict[str, Callable[[io.StringIO], Console]] = {
    "plain": lambda out: Console(file=out, width=80),
    "terminal": lambda out: Console(
        file=out, width=80, force_terminal=True, force_interactive=False, color_system="truecolor"
    ),
}

CASES = ("whole", "whole-full", "twice", "interrupted")
"""The demo answer whole (reasoning summary, short citations), whole with
reasoning and citations in full, two responses in one answer, and cut off
after the 5th text delta then interrupted."""


def scenario(case: str) -> Iterator[tuple[str, Any]]:
    """The renderer calls of ``case``: ``("pairs", Pairs)``, ``("interrupt", None)``,
    ``("end", None)``."""
    chunks = demo_chunks()
    if case in ("whole", "whole-full"):
        yield "pairs", pairs(chunks)
        yield "end", None
    elif case == "twice":
        yield "pairs", pairs(chunks)
        yield "pairs", pairs(chunks)
        yield "end", None
    elif case == "interrupted":
        yield "pairs", pairs(cut_at_text(chunks, 5))
        yield "interrupt", None
    else:
        raise ValueError(case)


def options_for(case: str) -> dict[str, str]:
    return {"reasoning": "full", "citations": "full"} if case == "whole-full" else {}


def drive_renderer(renderer: Any, chunks: Any) -> Assembler:
    """Feed ``chunks`` to ``renderer`` as a driver does: each chunk with what
    the one assembler committed for it (a new assembler per response), the
    renderer following the blocks in progress.  Returns the last assembler."""
    assembler = Assembler(ProviderId("anthropic"))
    renderer.follow(lambda: assembler.open_parts())
    fed = 0
    for chunk in chunks:
        if assembler.finished or (isinstance(chunk, ResponseStart) and fed):
            assembler, fed = Assembler(ProviderId("anthropic")), 0
        renderer.feed(chunk, assembler.feed(chunk))
        fed += 1
    return assembler
