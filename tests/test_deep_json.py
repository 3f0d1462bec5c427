"""JSON nested past the interpreter's recursion limit is a typed error at
every decode: a frame of each shape, an in-stream error, an error body, a
whole body, tool arguments and ``-o``/``--schema`` values (issue #33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from elelem.errors import InvalidRequestError, MalformedStreamError
from elelem.providers import load_shape
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId
from test_contract_stream import REQUEST, SAMPLES

DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH


def deepened(data: str) -> str:
    """``data`` (a JSON object) with one more member nested ``DEPTH`` deep."""
    value = json.loads(data)
    value["deep"] = "@@"
    return json.dumps(value).replace('"@@"', DEEP)


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
@pytest.mark.parametrize("which", ["first frame", "error frame", "bare array"])
def test_a_deep_frame_is_a_typed_error(shape_name: str, which: str) -> None:
    sample = SAMPLES[shape_name]()
    shape = load_shape(shape_name)
    parser = shape.new_parser(ProviderId(sample.provider), REQUEST)
    event, data = sample.frames[0] if which == "first frame" else sample.error_frame
    hostile = DEEP if which == "bare array" else deepened(data)
    chunks: list[Chunk] = []
    with pytest.raises(MalformedStreamError) as caught:
        chunks.extend(parser.message(event or "", hostile))
        chunks.extend(parser.eof())
    assert caught.value.message.endswith(" data is not JSON: JSON nested too deeply to decode")


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
def test_a_deep_error_body_is_classified(shape_name: str) -> None:
    shape = load_shape(shape_name)
    error = shape.classify_error(400, {}, DEEP.encode())
    assert isinstance(error, InvalidRequestError)
    assert (error.status, error.retryable) == (400, False)


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
def test_a_deep_whole_body_is_malformed(shape_name: str) -> None:
    sample = SAMPLES[shape_name]()
    shape = load_shape(shape_name)
    with pytest.raises(MalformedStreamError) as caught:
        shape.parse_response(('{"a":' + DEEP + "}").encode(), ProviderId(sample.provider), REQUEST)
    assert "nested too deeply" in caught.value.message


def test_a_deep_extra_option_is_one_line(tmp_path: Path) -> None:
    env = base_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test-0123456789")
    deep = "[" * 50_000 + "]" * 50_000  # an argument holds at most 128 KiB
    result = run(env, "ask", "-o", "extra.x", deep, "hi")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: -o extra.x: the value is JSON nested too deeply to decode\n",
    )
