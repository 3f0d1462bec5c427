"""Hostile recordings: YAML aliases whose expansion would exhaust memory, and
recursive ones, are refused while loading, before any body is re-encoded
(issue #33)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import base_env, run
from elelem.recordings.cassettes import RecordingError, load

HEAD = (
    "interactions:\n"
    "- request: {method: POST, uri: 'https://api.anthropic.com/v1/messages', body: null}\n"
    "  response:\n"
    "    status: {code: 200}\n"
    "    headers: {content-type: [application/json]}\n"
)


def alias_tree(levels: int, fan: int = 10) -> str:
    """A ``parsed_body`` whose level ``n`` lists level ``n - 1`` ``fan`` times:
    under a kilobyte of YAML, ``fan ** levels`` strings once expanded."""
    rows = ['a0: &a0 ["' + "x" * 50 + '"]']
    rows += [f"a{n}: &a{n} [" + ",".join([f"*a{n - 1}"] * fan) + "]" for n in range(1, levels)]
    return HEAD + "    parsed_body: {" + ", ".join(rows) + "}\n"


def test_an_alias_tree_is_refused_by_its_expanded_size(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_tree(9), encoding="utf-8")
    assert path.stat().st_size < 1024
    with pytest.raises(RecordingError) as caught:
        load(path)
    assert caught.value.problem == (
        "the YAML, its aliases expanded, is larger than the read limit of "
        "67108864 bytes (--max-bytes)"
    )


def test_the_alias_budget_is_the_read_limit(tmp_path: Path) -> None:
    # 1,000 strings of 50 characters expand to about 52 kB: within a
    # 64 kB limit, past a 32 kB one.
    path = tmp_path / "aliases.yaml"
    path.write_text(alias_tree(4), encoding="utf-8")
    body = load(path, max_bytes=64_000).interactions[0].response.body
    assert body.count(b"x" * 50) == 1000 + 100 + 10 + 1
    with pytest.raises(RecordingError) as caught:
        load(path, max_bytes=32_000)
    assert caught.value.problem == (
        "the YAML, its aliases expanded, is larger than the read limit of 32000 bytes (--max-bytes)"
    )


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text(HEAD + "    parsed_body: &loop {self: [*loop]}\n", encoding="utf-8")
    with pytest.raises(RecordingError) as caught:
        load(path)
    assert caught.value.problem == "a YAML alias refers to a node that holds it (a loop)"


@pytest.mark.parametrize("command", [("inspect",), ("demo", "--pace", "0", "--cassette")])
def test_the_cli_refuses_an_alias_bomb_in_one_line(tmp_path: Path, command: tuple[str]) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_tree(9), encoding="utf-8")
    result = run(base_env(tmp_path), *command, str(path))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {path}: the YAML, its aliases expanded, is larger than the read limit "
        "of 67108864 bytes (--max-bytes)\n",
    )


def test_a_recording_of_too_many_interactions_is_refused(tmp_path: Path) -> None:
    # 200,000 aliases of one interaction: a few hundred kilobytes, and each
    # one would go through the driver.
    one = (
        "- &one\n  request: {method: POST, uri: 'https://api.anthropic.com/v1/messages'}\n"
        "  response: {status: {code: 200}, headers: {}, body: {string: '{}'}}\n"
    )
    path = tmp_path / "many.yaml"
    path.write_text("interactions:\n" + one + "- *one\n" * 199_999, encoding="utf-8")
    with pytest.raises(RecordingError) as caught:
        load(path)
    assert caught.value.problem == "more than 10000 interactions in this recording"


@pytest.mark.parametrize(
    "status", ["\u00b200 OK", "9" * 5000 + " OK"], ids=["superscript", "5000 digits"]
)
def test_a_status_that_is_no_number_is_a_recording_error(tmp_path: Path, status: str) -> None:
    # '²00' passed str.isdigit and 5,000 digits int's limit: ValueError, exit 70.
    path = tmp_path / "status.yaml"
    path.write_text(
        "interactions:\n"
        "- request: {method: POST, uri: 'https://api.anthropic.com/v1/messages', body: null}\n"
        "  response:\n"
        f"    status: '{status}'\n"
        "    headers: {content-type: [application/json]}\n"
        "    body: {string: '{}'}\n",
        encoding="utf-8",
    )
    result = run(base_env(tmp_path), "inspect", str(path))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {path}: interaction 0: interaction 0 response has no status code\n",
    )
