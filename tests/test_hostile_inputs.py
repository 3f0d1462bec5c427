"""Local inputs read with a bound: a size checked before reading, FIFOs and
devices refused, a stream refused as soon as it passes its limit (issue #33)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from elelem.reading import ReadRefused, read_file, read_stream

GiB = 1024 * 1024 * 1024


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as file:
        file.truncate(size)  # no byte written: a hole the reader would have to read
    return path


def test_a_fifo_is_refused_without_waiting_for_a_writer(fifo: Path) -> None:
    with pytest.raises(ReadRefused, match=r"^not a regular file \(a FIFO\)$"):
        read_file(fifo, 100)


def test_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(ReadRefused, match=r"^not a regular file \(a character device\)$"):
        read_file("/dev/zero", 100)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReadRefused, match=r"^not a regular file \(a directory\)$"):
        read_file(tmp_path, 100)


def test_a_file_is_refused_by_its_size(tmp_path: Path) -> None:
    big = sparse(tmp_path / "big", 1001)
    with pytest.raises(ReadRefused, match=r"^larger than the read limit of 1000 bytes$"):
        read_file(big, 1000)
    assert read_file(sparse(tmp_path / "fits", 1000), 1000) == bytes(1000)


def test_a_stream_is_read_no_further_than_one_byte_past_its_limit() -> None:
    stream = io.BytesIO(b"x" * 5000)
    with pytest.raises(ReadRefused, match=r"^larger than the read limit of 1000 bytes$"):
        read_stream(stream, 1000)
    assert stream.tell() == 1001
    assert read_stream(io.BytesIO(b"y" * 1000), 1000) == b"y" * 1000


# -- the CLI's inputs ------------------------------------------------------------------


def test_import_refuses_a_device_and_a_fifo(tmp_path: Path, fifo: Path) -> None:
    env = base_env(tmp_path)
    zero = run(env, "import", "/dev/zero")
    assert (zero.returncode, zero.stderr) == (
        2,
        "elelem: /dev/zero: not a regular file (a character device)\n",
    )
    piped = run(env, "import", str(fifo))
    assert (piped.returncode, piped.stderr) == (
        2,
        f"elelem: {fifo}: not a regular file (a FIFO)\n",
    )


def test_import_refuses_a_file_past_its_limit_before_reading(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    huge = sparse(tmp_path / "huge.jsonl", 8 * GiB)
    result = run(env, "import", str(huge))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {huge}: larger than the read limit of 268435456 bytes (--max-bytes)\n",
    )
    small = run(env, "import", "--max-bytes", "10", str(sparse(tmp_path / "s.jsonl", 11)))
    assert small.stderr.endswith(": larger than the read limit of 10 bytes (--max-bytes)\n")


def test_import_of_endless_stdin_stops_at_its_limit(tmp_path: Path) -> None:
    result = run(base_env(tmp_path), "import", "--max-bytes", "4096", "-", stdin="{}\n" * 4096)
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: stdin: larger than the read limit of 4096 bytes (--max-bytes)\n",
    )


def test_an_attachment_device_fifo_or_oversize_file_is_refused(tmp_path: Path, fifo: Path) -> None:
    env = base_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test-0123456789")
    huge = sparse(tmp_path / "huge.png", 600 * 1024 * 1024)
    for path, problem in [
        ("/dev/zero", "not a regular file (a character device)"),
        (str(fifo), "not a regular file (a FIFO)"),
        (str(huge), "larger than the read limit of 536870912 bytes"),
    ]:
        result = run(env, "ask", "-a", path, "hi")
        assert (result.returncode, result.stderr) == (
            2,
            f"elelem: cannot read attachment {path}: {problem}\n",
        )


def test_inspect_refuses_a_fifo(tmp_path: Path, fifo: Path) -> None:
    result = run(base_env(tmp_path), "inspect", str(fifo))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {fifo}: cannot read: not a regular file (a FIFO)\n",
    )


def test_a_deeply_nested_schema_is_one_line_not_exit_70(tmp_path: Path, fifo: Path) -> None:
    env = base_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test-0123456789")
    deep = '{"a":' + "[" * 50_000 + "]" * 50_000 + "}"
    inline = run(env, "ask", "--schema", deep, "hi")
    assert (inline.returncode, inline.stderr) == (
        2,
        "elelem: --schema: nested too deeply to read\n",
    )
    file = tmp_path / "deep.json"
    file.write_text(deep, encoding="utf-8")
    stored = run(env, "ask", "--schema", str(file), "hi")
    assert (stored.returncode, stored.stderr) == (
        2,
        f"elelem: {file}: nested too deeply to read\n",
    )
    piped = run(env, "ask", "--schema", str(tmp_path / "x.json"), "hi")
    assert piped.returncode == 2
    os.rename(fifo, tmp_path / "x.json")
    piped = run(env, "ask", "--schema", str(tmp_path / "x.json"), "hi")
    assert (piped.returncode, piped.stderr) == (
        2,
        f"elelem: --schema {tmp_path / 'x.json'}: not a regular file (a FIFO)\n",
    )
