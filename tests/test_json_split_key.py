"""``--json`` writes each text delta as its own line: a key a provider
echoes split across two deltas (so across two lines) is still redacted,
and no text is lost or reordered (issue #33)."""

from __future__ import annotations

import io
import json
import sys

import pytest

from elelem.cli.turns import json_observer
from elelem.redaction import REDACTED, Redactor
from elelem.stream import BlockEnd, BlockStart, Finish, TextDelta

KEY = "sk-ant-api03-Zq7RkTnW4sXyP2mLvB9cHdJfG"


def _lines(deltas: list[str], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    observe = json_observer(Redactor([KEY]))
    observe(BlockStart(0, "text"), ())
    for text in deltas:
        observe(TextDelta(0, text), ())
    observe(BlockEnd(0), ())
    observe(Finish("stop"), ())
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("cut", [3, 10, 19, 30])
def test_a_key_split_across_deltas_is_redacted(cut: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"Your key {KEY} is not valid."
    at = len("Your key ") + cut
    lines = _lines([text[:at], text[at:]], monkeypatch)
    printed = "".join(str(line["text"]) for line in lines if line["type"] == "text-delta")
    assert printed == f"Your key {REDACTED} is not valid."
    assert KEY[:8] not in json.dumps(lines)
    assert [line["type"] for line in lines][-2:] == ["block-end", "finish"]


def test_text_without_a_key_is_printed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    deltas = ["Hello", ", wörld", " ✓"] * 50
    lines = _lines(deltas, monkeypatch)
    assert "".join(str(x["text"]) for x in lines if x["type"] == "text-delta") == "".join(deltas)


def test_spans_name_every_echo() -> None:
    text = f"a {KEY} b {KEY[:20]} c"
    spans = Redactor([KEY]).spans(text)
    assert [text[s:e] for s, e in spans] == [KEY, KEY[:20]]


def test_ask_json_prints_no_key_split_across_deltas(tmp_path: object) -> None:
    from pathlib import Path

    from cli_helpers import base_env, run, text_frames
    from elelem.testing.servers import LoopbackServer, replay, sse_body

    frames = text_frames(f"Your key {KEY[:15]}", "msg_split", finished=False)
    delta = {"type": "content_block_delta", "index": 0}
    rest = {**delta, "delta": {"type": "text_delta", "text": f"{KEY[15:]} is wrong."}}
    ends = text_frames("", "msg_split")[3:]
    body = sse_body([*frames, ("content_block_delta", json.dumps(rest)), *ends])
    with LoopbackServer([replay(body)]) as server:
        env = base_env(Path(str(tmp_path)), ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = run(env, "ask", "-m", "anthropic:claude-sonnet-4-5", "--json", "hi")
    assert result.returncode == 0, result.stderr
    assert KEY[:8] not in result.stdout and KEY[-8:] not in result.stdout
    texts = [json.loads(x) for x in result.stdout.splitlines()]
    shown = "".join(str(x.get("text", "")) for x in texts if x.get("type") == "text-delta")
    assert shown == f"Your key {REDACTED} is wrong."
