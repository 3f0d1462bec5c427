"""One decoded-bytes budget per recording (hardening round four): each body
of a recording was bounded on its own at 64 MiB, so a HAR of ten small gzip
bodies decoded to 640 MiB and one of fifty passed a gigabyte.  Every body of
a recording (and the recording itself, when gzipped) now draws on one
budget; these tests rebuild the finding at small scale and count the decoded
bytes (``DecodeBudget.spent``), never the time."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from elelem.recordings.bodies import MAX_DECODED_BYTES, DecodeBudget
from elelem.recordings.cassettes import RecordingError, load

MIB = 1024 * 1024


def gzip_zeros(size: int) -> bytes:
    """A gzip body of ``size`` zeros (a thousandth of its size, or less)."""
    return gzip.compress(b"0" * size, compresslevel=9)


def har(bodies: list[bytes]) -> dict[str, object]:
    """A HAR of one entry per gzip body, each base64 as a proxy exports it."""
    entries = [
        {
            "request": {"method": "POST", "url": "https://api.openai.com/v1/embeddings",
                        "headers": []},
            "response": {
                "status": 200,
                "headers": [{"name": "content-encoding", "value": "gzip"}],
                "content": {"mimeType": "application/json", "encoding": "base64",
                            "text": base64.b64encode(body).decode()},
            },
        }
        for body in bodies
    ]  # fmt: skip
    return {"log": {"version": "1.2", "entries": entries}}


def ruby_vcr(bodies: list[bytes]) -> str:
    """A Ruby VCR cassette of one interaction per gzip body (``!binary``)."""
    rows = ["---", "http_interactions:"]
    for body in bodies:
        rows += [
            "- request: {method: post, uri: 'https://api.openai.com/v1/embeddings'}",
            "  response:",
            "    status: {code: 200, message: OK}",
            "    headers: {Content-Encoding: [gzip]}",
            "    body:",
            "      encoding: ASCII-8BIT",
            f"      string: !binary |-\n        {base64.b64encode(body).decode()}",
        ]
    return "\n".join(rows) + "\n"


def write(tmp_path: Path, kind: str, bodies: list[bytes]) -> Path:
    if kind == "har":
        path = tmp_path / "bomb.har"
        path.write_text(json.dumps(har(bodies)), encoding="utf-8")
    else:
        path = tmp_path / "bomb.yml"
        path.write_text(ruby_vcr(bodies), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["har", "ruby-vcr"])
def test_ten_bodies_each_within_the_budget_pass_it_together(tmp_path: Path, kind: str) -> None:
    # Ten bodies of 1 MiB each, a budget of 4 MiB: each alone fits, the
    # recording does not, and decoding stops at the budget, not at 10 MiB.
    path = write(tmp_path, kind, [gzip_zeros(MIB)] * 10)
    budget = DecodeBudget(4 * MIB)
    with pytest.raises(RecordingError) as caught:
        load(path, budget=budget)
    assert caught.value.path == str(path)
    assert caught.value.problem == (
        "interaction 4: its bodies decode to more than 4194304 bytes in all, "
        "the decoding budget of one recording (at a gzip body)"
    )
    assert budget.spent == 4 * MIB + 1


@pytest.mark.parametrize("kind", ["har", "ruby-vcr"])
def test_a_recording_within_its_budget_is_read_whole(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, kind, [gzip_zeros(MIB)] * 4)
    budget = DecodeBudget(4 * MIB)
    recording = load(path, budget=budget)
    assert [i.response.body for i in recording.interactions] == [b"0" * MIB] * 4
    assert [i.response.encoding for i in recording.interactions] == ["gzip"] * 4
    assert budget.spent == 4 * MIB


def test_a_gzipped_recording_draws_on_the_same_budget(tmp_path: Path) -> None:
    # The file's own decoding counts: 2 bodies of 1 MiB inside a gzipped HAR
    # of about 3 KB of JSON pass a budget of 2 MiB.
    document = json.dumps(har([gzip_zeros(MIB)] * 2)).encode()
    path = tmp_path / "session.har.gz"
    path.write_bytes(gzip.compress(document))
    budget = DecodeBudget(2 * MIB)
    with pytest.raises(RecordingError) as caught:
        load(path, budget=budget)
    assert caught.value.problem.startswith("interaction 1: its bodies decode to more than 2097152")
    assert budget.spent == 2 * MIB + 1
    assert load(path, budget=DecodeBudget(2 * MIB + len(document))).format == "har"


def test_the_default_budget_is_one_per_recording(tmp_path: Path) -> None:
    # The finding, a tenth of its scale: ten bodies of 8 MiB each are 80 MiB
    # decoded, each one far under the old per-body bound of 64 MiB.
    path = write(tmp_path, "har", [gzip_zeros(8 * MIB)] * 10)
    assert path.stat().st_size < 200_000
    budget = DecodeBudget()
    assert budget.limit == MAX_DECODED_BYTES == 64 * MIB
    with pytest.raises(RecordingError) as caught:
        load(path, budget=budget)
    assert caught.value.problem.startswith("interaction 8: its bodies decode to more than 67108864")
    assert budget.spent == MAX_DECODED_BYTES + 1


@pytest.mark.parametrize(
    "command",
    [("inspect",), pytest.param(("demo", "--pace", "0", "--cassette"), marks=pytest.mark.slow)],
)
def test_the_cli_names_the_recording_and_the_budget(tmp_path: Path, command: tuple[str]) -> None:
    path = write(tmp_path, "har", [gzip_zeros(8 * MIB)] * 10)
    result = run(base_env(tmp_path), *command, str(path))
    assert (result.returncode, result.stdout, result.stderr) == (
        2,
        "",
        f"elelem: {path}: interaction 8: its bodies decode to more than 67108864 bytes "
        "in all, the decoding budget of one recording (at a gzip body)\n",
    )


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "count"), [("har", 10), ("ruby-vcr", 50)])
def test_the_findings_at_full_scale(tmp_path: Path, kind: str, count: int) -> None:
    # The round's findings as found: a HAR of 10 and a Ruby VCR cassette of
    # 50 gzip bodies, each just under the old per-body bound of 64 MiB (an
    # 870 KB and a 4.4 MB file that decoded to 640 MiB and 3.2 GiB).
    path = write(tmp_path, kind, [gzip_zeros(MAX_DECODED_BYTES - 1)] * count)
    budget = DecodeBudget()
    with pytest.raises(RecordingError) as caught:
        load(path, budget=budget)
    assert caught.value.problem.startswith("interaction 1: its bodies decode to more than")
    assert budget.spent == MAX_DECODED_BYTES + 1
