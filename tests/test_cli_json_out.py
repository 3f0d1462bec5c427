"""``--json`` output written as it is encoded (issue #41: ``transcribe
--json`` of a 225 MB transcript took 548 MB, ``batch results`` of one
200 MB answer 867 MB).

The bytes are those ``json.dumps(value, ensure_ascii=True)`` gives (DEL
escaped too); the memory is counted with ``tracemalloc``: what printing
costs beside the value it prints is a piece, not the encoded text.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import base_env
from elelem.cli import main
from elelem.cli.json_out import MAX_DEPTH, PIECE, json_pieces, write_json_line
from elelem.testing.servers import LoopbackServer, status

# Characters whose escapes differ in length, placed across the slices'
# boundaries: a slice must escape alone to what the whole would.
_MIXED = 'a\x1b\x7fé😀\udcff"\\\n'


def _long(n: int) -> str:
    return (_MIXED * (n // len(_MIXED) + 1))[:n]


VALUES: list[Any] = [
    None,
    True,
    0,
    1.5,
    "",
    _long(PIECE + 7),
    {},
    [],
    {"text": _long(3 * PIECE + 1), "usage": {"input_tokens": 1}, "raw": [1, "x", None]},
    {1: "a", None: "b", False: "c", 2.5: "d"},
    [[[_long(PIECE * 2)]]],
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_line_is_what_json_dumps_gives(value: Any) -> None:
    written: list[str] = []
    write_json_line(value, written.append)
    expected = json.dumps(value, ensure_ascii=True).replace("\x7f", "\\u007f") + "\n"
    assert "".join(written) == expected
    assert "".join(written).isascii() and "\x1b" not in "".join(written)


def test_a_value_deeper_than_the_walk_is_encoded_whole() -> None:
    deep: Any = "x" * (PIECE + 1)
    for _ in range(MAX_DEPTH + 3):
        deep = [deep]
    pieces = list(json_pieces(deep))
    # The walk opens MAX_DEPTH arrays, then the rest is one piece.
    assert len(pieces) == 2 * MAX_DEPTH + 1
    assert "".join(pieces) == json.dumps(deep)


class _Counting(io.RawIOBase):
    """A stdout that keeps nothing: it counts what it is given."""

    def __init__(self) -> None:
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.size += len(data)
        return len(data)


@contextlib.contextmanager
def _stdout_counted() -> Iterator[_Counting]:
    sink = _Counting()
    text = io.TextIOWrapper(sink, encoding="ascii", write_through=True)  # type: ignore[type-var]
    with text, contextlib.redirect_stdout(text):
        yield sink


def _peak(run: Any) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_writing_costs_a_piece_not_the_encoded_text() -> None:
    text = "word " * (16 * 1024 * 1024 // 5)
    value = {"text": text, "raw": {"text": text}}
    sink = _Counting()
    peak = _peak(lambda: write_json_line(value, lambda piece: sink.write(piece.encode())))
    assert sink.size == 2 * len(text) + len('{"text": "", "raw": {"text": ""}}\n')
    # json.dumps held the 32 MiB line, then its bytes: 64 MiB and more.
    assert peak < 4 * PIECE, peak


def _transcribe_peak(tmp_path: Path, size: int) -> tuple[int, int, int]:
    """Peak traced memory of ``transcribe --no-stream --json`` of a
    transcript of ``size`` characters; the body's size; stdout's size."""
    usage = {"type": "tokens", "input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    body = json.dumps({"text": "word " * (size // 5), "usage": usage}).encode()
    wav = tmp_path / "a.wav"
    wav.write_bytes(b"RIFF" + bytes(64))
    with LoopbackServer([status(200, body)]) as server:
        env = base_env(tmp_path, OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY="sk-t")
        argv = ["transcribe", str(wav), "-m", "openai:whisper-1", "--no-stream", "--json"]
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        try:
            with _stdout_counted() as sink:
                peak = _peak(lambda: main.main(argv, standalone_mode=False))
        finally:
            os.environ.clear()
            os.environ.update(saved)
    return peak, len(body), sink.size


def test_transcribe_json_holds_the_answer_not_its_encoding(tmp_path: Path) -> None:
    size = 8 * 1024 * 1024
    # Counted in a fresh interpreter, as a command runs: in a test process
    # that has run thousands of tests, tracing 8 MiB of allocations costs
    # the collector's walks of everything those tests left (30 s, not 1).
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from pathlib import Path\n"
        "from test_cli_json_out import _transcribe_peak\n"
        f"print(json.dumps(_transcribe_peak(Path({str(tmp_path)!r}), {size})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    peak, body, out = json.loads(done.stdout.splitlines()[-1])
    assert 2 * size < out < 2 * size + 1024  # the text, and the raw answer holding it
    # The body is read once (test_whole_body_memory.py) and decoded while
    # it is held (2x); the line printed (the text twice, then its bytes) no
    # longer adds 4x.  Measured: 2.1x now, 7.1x before.
    assert peak < 3 * body, (peak, body)
