"""Every Anthropic corpus recording parses through the Anthropic Messages shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import corpus_root
from elelem.shapes.anthropic_messages import SHAPE
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.testing.cassettes import Interaction, load, sse_frames
from elelem.vocabulary import ProviderId

ANTHROPIC = ProviderId("anthropic")


def anthropic_files() -> list[str]:
    root = corpus_root()
    if root is None:
        return []
    rows = [ln.split("\t") for ln in (root / "INDEX.tsv").read_text().splitlines()[1:]]
    return [row[0] for row in rows if row[4] == "anthropic"]


FILES = anthropic_files()


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


@pytest.mark.parametrize("name", FILES)
def test_parses(corpus: Path, name: str) -> None:
    rec = load(corpus / name)
    for interaction in rec.interactions:
        if interaction.response.status >= 400:
            continue
        result = parse(interaction)
        assert result.finish is not None
        assert result.response_id is not None and result.response_id.startswith("msg_")
