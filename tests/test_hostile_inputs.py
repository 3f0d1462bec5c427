"""Local inputs read with a bound: a size checked before reading, FIFOs and
devices refused, a stream refused as soon as it passes its limit (issue #33)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import base_env, run
from elelem.cli import main
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


# -- the lines of embed -i and batch submit, and speak's stdin ---------------------------


def cli(env: dict[str, str], *args: str, stdin: str = "") -> tuple[int, str]:
    """``elelem ARGS`` run in-process (the exit status, stderr): a subprocess
    each would cost a second of the suite's time apiece."""
    result = CliRunner().invoke(main, list(args), env=env, input=stdin)
    return result.exit_code, result.stderr


LINE_READERS = [
    ("embed", "-m", "openai:text-embedding-3-small", "-i"),
    ("batch", "submit", "-m", "anthropic:claude-sonnet-4-5"),
]


@pytest.mark.parametrize("command", LINE_READERS, ids=["embed -i", "batch submit"])
def test_a_file_of_lines_is_read_bounded(
    tmp_path: Path, fifo: Path, command: tuple[str, ...]
) -> None:
    env = base_env(tmp_path, OPENAI_API_KEY="sk-x", ANTHROPIC_API_KEY="sk-ant-x")
    huge = sparse(tmp_path / "huge.txt", 8 * GiB)
    for path, problem in [
        ("/dev/zero", "not a regular file (a character device)"),
        (str(fifo), "not a regular file (a FIFO)"),
        (str(tmp_path), "not a regular file (a directory)"),
        (str(huge), "larger than the read limit of 268435456 bytes (--max-bytes)"),
    ]:
        assert cli(env, *command, path) == (2, f"elelem: {path}: {problem}\n")
    endless = cli(env, *command, "-", "--max-bytes", "4096", stdin="line\n" * 4096)
    assert endless == (
        2,
        "elelem: stdin: larger than the read limit of 4096 bytes (--max-bytes)\n",
    )


@pytest.mark.parametrize("command", LINE_READERS, ids=["embed -i", "batch submit"])
def test_a_deep_jsonl_row_is_one_line_not_exit_70(tmp_path: Path, command: tuple[str, ...]) -> None:
    env = base_env(tmp_path, OPENAI_API_KEY="sk-x", ANTHROPIC_API_KEY="sk-ant-x")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        '{"content": "x", "prompt": "x"}\n{"metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    )
    result = run(env, *command, str(rows), "--jsonl")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: line 2 is JSON nested too deeply to decode\n",
    )
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"one\ntw\xffo\n")
    result = run(env, *command, str(binary))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {binary} line 2 is not UTF-8 text (byte 0xff at offset 2)\n",
    )


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ('{"prompt": "x", "system": 5}', "system is not a string"),
        ('{"prompt": "x", "custom_id": {"a": 1}}', "custom_id is not a string"),
        ('{"prompt": "x", "max_tokens": true}', "max_tokens is not a positive integer"),
        ('{"prompt": "x", "max_tokens": 0}', "max_tokens is not a positive integer"),
    ],
)
def test_a_batch_row_of_the_wrong_type_is_a_usage_error(
    tmp_path: Path, row: str, problem: str
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(row + "\n")
    env = base_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-x")
    result = cli(env, "batch", "submit", "-m", "anthropic:claude-sonnet-4-5", "--jsonl", str(rows))
    assert result == (2, f"elelem: line 1: {problem}\n")


def test_speak_reads_no_more_of_stdin_than_its_limit(tmp_path: Path) -> None:
    env = base_env(tmp_path, OPENAI_API_KEY="sk-x")
    args = ("speak", "-m", "openai:gpt-4o-mini-tts", "-o", str(tmp_path / "a.mp3"))
    result = run(env, *args, stdin="y\n" * (512 * 1024 + 1))
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: stdin: larger than the read limit of 1048576 bytes\n",
    )
    nan = run(env, *args, "--speed", "nan", "hi")
    assert (nan.returncode, nan.stderr) == (
        2,
        "elelem: Invalid value for '--speed': 'nan' is not a finite number"
        " (see: elelem speak --help)\n",
    )


def test_transcribe_reads_an_audio_path_bounded(tmp_path: Path, fifo: Path) -> None:
    # A FIFO hung and /dev/zero was read without end (Path.read_bytes).
    from elelem import SyncClient

    with SyncClient(env={"ELELEM_CONFIG": "/nonexistent", "OPENAI_API_KEY": "sk-x"}) as client:
        for path, problem in [
            ("/dev/zero", "not a regular file (a character device)"),
            (str(fifo), "not a regular file (a FIFO)"),
            (str(sparse(tmp_path / "huge.wav", 600 * 1024 * 1024)),
             "larger than the read limit of 536870912 bytes"),
        ]:  # fmt: skip
            with pytest.raises(ReadRefused) as caught:
                client.transcribe("openai:gpt-4o-transcribe", path)
            assert str(caught.value) == f"{path}: {problem}"


def test_a_closed_stdout_is_one_line_not_exit_70(tmp_path: Path) -> None:
    # `elelem models anthropic >&-`: the first write was an AttributeError on None (exit 70).
    import subprocess

    from cli_helpers import ELELEM

    result = subprocess.run(
        ["sh", "-c", f'"{ELELEM}" models anthropic >&-'],
        env=base_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (2, "elelem: [Errno 9] stdout is closed\n")


def test_a_batch_of_more_requests_than_a_provider_takes_is_refused_as_read(
    tmp_path: Path,
) -> None:
    # 300,000 one-letter lines (600 kB) took 13 s and 650 MB before any request:
    # a 256 MiB file of them would have held hundreds of gigabytes.
    from elelem import SyncClient
    from elelem.batches.core import MAX_REQUESTS
    from elelem.errors import ConfigError

    lines = tmp_path / "many.txt"
    lines.write_text("x\n" * (MAX_REQUESTS + 1))
    env = base_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-x")
    result = cli(env, "batch", "submit", "-m", "anthropic:claude-sonnet-4-5", str(lines))
    assert result == (
        2,
        "elelem: line 100001: a batch holds at most 100000 requests: split the file\n",
    )
    client = SyncClient(env={"ANTHROPIC_API_KEY": "sk-ant-x"})
    with client, pytest.raises(ConfigError) as caught:
        client.batch("anthropic:claude-sonnet-4-5", ["x"] * (MAX_REQUESTS + 1))
    assert str(caught.value) == "a batch holds at most 100000 requests, not 100001: split it"
